// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_lock.c: the lock probes of superpass.ko.
 *
 * Each probe extracts plain values (time, TIDs, lock address, the owner the
 * lock word names, the waiter an unlock wakes) and forwards them to a Rust
 * sp_hook_*() entry point. The gates in superpass_internal.h decide,
 * lock-free, which events cannot change anything: the wait probes run when
 * SuperPass is on and something is critical or boosted; the mutex-owner
 * probes when it is on and something is boosted or a tracked thread waits.
 * rwsem readers are recorded lock-free (superpass_readers.c) while something
 * is critical, and rwsem acquire and release events reach the engine only
 * for a lock whose lane says tracked waits may be on it.
 */
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/rwsem.h>

#include "superpass.h"
#include "superpass_internal.h"

/* Mirrors of kernel/locking/{mutex,rwsem}.c private constants. */
#define SP_MUTEX_FLAGS		0x07UL
#define SP_RWSEM_READER_OWNED	(1UL << 0)
#define SP_RWSEM_OWNER_FLAGS	0x07UL

/*
 * The head of kernel/locking/rwsem.c's private struct rwsem_waiter: the
 * record_rwsem_reader_owned hook passes the list of readers being granted,
 * and rwsem_wake_finish's writer at the head of wait_list was woken.
 */
struct sp_rwsem_waiter {
	struct list_head list;
	struct task_struct *task;
	int type;
};

/* kernel/locking/rwsem.c's RWSEM_WAITING_FOR_WRITE, RWSEM_WRITER_LOCKED, RWSEM_READER_MASK. */
#define SP_RWSEM_WAITING_FOR_WRITE	0
#define SP_RWSEM_HELD			(1UL | ~((1UL << 8) - 1))

/* The head of kernel/locking/mutex.h's struct mutex_waiter. */
struct sp_mutex_waiter {
	struct list_head list;
	struct task_struct *task;
};

/* The owner's TID from an owner word holding a task pointer plus flag bits. */
s32 sp_owner_tid(unsigned long word, unsigned long flags_mask)
{
	struct task_struct *owner = (struct task_struct *)(word & ~flags_mask);
	s32 tid = 0;

	if (!owner)
		return 0;
	/* As mutex_spin_on_owner(): the owner's task_struct is RCU-freed. */
	rcu_read_lock();
	tid = READ_ONCE(owner->pid);
	rcu_read_unlock();
	return tid;
}

void sp_probe_mutex_wait_start(void *d, struct mutex *lock)
{
	s32 owner;

	SP_COUNT(mutex_wait_start);
	if (!sp_waits_matter())
		return;
	owner = sp_owner_tid(atomic_long_read(&lock->owner), SP_MUTEX_FLAGS);
	sp_wait_note(lock, SP_KIND_MUTEX, owner);
	if (!sp_may_matter(current->pid))
		return;
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)lock,
			   SP_KIND_MUTEX, owner);
}

/*
 * A waiter that leaves its wait owning the lock is its new owner: reported
 * here as well as by the owner probes, which may not be attached yet when a
 * contention episode starts (the lock changes hands before they are).
 */
void sp_report_wait_end(const void *lock, bool owns)
{
	bool waited, owner;
	u64 now;

	if (!sp_waits_matter())
		return;
	/* The percpu record probe ends here at every read acquire: no clock read for those. */
	waited = sp_may_matter(current->pid);
	owner = owns && sp_lock_may_matter(lock);
	if (!waited && !owner)
		return;
	now = sp_now();
	if (waited)
		sp_hook_wait_finish(now, current->pid, (u64)(unsigned long)lock);
	if (owner)
		sp_hook_owner(now, (u64)(unsigned long)lock, current->pid, true);
}

static void sp_wait_finish(const void *lock, bool owns)
{
	sp_wait_clear(current->pid);
	sp_report_wait_end(lock, owns);
}

void sp_probe_mutex_wait_finish(void *d, struct mutex *lock)
{
	SP_COUNT(mutex_wait_finish);
	sp_wait_finish(lock, (atomic_long_read(&lock->owner) & ~SP_MUTEX_FLAGS) ==
			     (unsigned long)current);
}

void sp_probe_mutex_unlock_slowpath(void *d, struct mutex *lock)
{
	SP_COUNT(mutex_unlock_slowpath);
	struct sp_mutex_waiter *w;
	struct task_struct *t;
	u64 now;

	if (!sp_ownership_matters())
		return;
	now = sp_now();
	sp_hook_owner(now, (u64)(unsigned long)lock, current->pid, false);
	/*
	 * wait_lock is held: the first waiter is the one this unlock wakes (or
	 * hands the lock to). It takes the lock only when it runs, so it is the
	 * next blocker of whoever waits behind it.
	 */
	w = list_first_entry_or_null(&lock->wait_list, struct sp_mutex_waiter,
				     list);
	t = w ? READ_ONCE(w->task) : NULL;
	if (t)
		sp_hook_woken(now, (u64)(unsigned long)lock, t->pid, current->pid);
}

/*
 * The current task took (@owns) or released @lock, one tracked waits may be
 * on. Out of line: the owner probes fire at every acquire and release in the
 * system, and what they test inline is all an unrelated lock pays.
 */
static noinline void sp_owner_changed(const void *lock, bool owns)
{
	sp_hook_owner(sp_now(), (u64)(unsigned long)lock, current->pid, owns);
}

void sp_probe_mutex_starttime(void *d, struct mutex *lock,
				     unsigned long settime)
{
	SP_COUNT(mutex_starttime);
	/*
	 * Every mutex_lock() and mutex_unlock() in the system fires this while
	 * the owner group is attached: only a lock tracked waits are on can
	 * change a decision, so any other stays off the engine lock.
	 */
	if (sp_ownership_matters() && sp_lock_may_matter(lock))
		sp_owner_changed(lock, settime != 0);
}

/* The writer of @sem, if the owner word names one (not reader-owned). */
static s32 sp_rwsem_writer(struct rw_semaphore *sem)
{
	unsigned long word = atomic_long_read(&sem->owner);

	if (word & SP_RWSEM_READER_OWNED)
		return 0;
	return sp_owner_tid(word, SP_RWSEM_OWNER_FLAGS);
}

/*
 * For the current task, inside a wait it was woken from (about to sleep again,
 * or spinning through its turn when a tick or pick charges it): the lock its
 * wait record names (0: none) in @lock, and the owner that lock
 * names now (a mutex's owner, an rwsem's writer; 0: none). The task that beat
 * it to the lock may have taken it where no probe reports.
 */
s32 sp_wait_owner_now(u64 *lock)
{
	u32 kind = 0;

	*lock = sp_wait_current(&kind);
	if (!*lock)
		return 0;
	if (kind == SP_KIND_MUTEX)
		return sp_owner_tid(atomic_long_read(&((struct mutex *)(unsigned long)*lock)->owner),
				    SP_MUTEX_FLAGS);
	if (kind == SP_KIND_RWSEM_READ || kind == SP_KIND_RWSEM_WRITE)
		return sp_rwsem_writer((struct rw_semaphore *)(unsigned long)*lock);
	/* A binder call's id is no address: nothing to read. */
	return 0;
}

/*
 * For a tick or pick, about to hand out the grants due: the current task
 * (the one they charged) in @tid, and if it may be a woken critical waiter
 * spinning through its turn, the lock and owner as sp_wait_owner_now() reads
 * them; else 0 in @lock and 0 returned.
 */
s32 sp_current_wait(s32 *tid, u64 *lock)
{
	*tid = current->pid;
	*lock = 0;
	if (!sp_may_be_woken(current->pid))
		return 0;
	return sp_wait_owner_now(lock);
}

/*
 * A wait on @sem starts: the engine learns the lock's holders as the module
 * sees them (the writer from the owner word, else the recorded readers), then
 * the wait. The lock's lane is published first, with a full barrier, so that
 * a reader entering or leaving from now on also sends its event, and one
 * that entered before is in the record: none falls between the two.
 */
static void sp_rwsem_wait_start(struct rw_semaphore *sem, u32 kind)
{
	s32 readers[SP_READER_TABLE_WAYS];
	s32 writer;
	u32 n = 0;

	if (!sp_waits_matter())
		return;
	sp_wait_note(sem, kind, sp_rwsem_writer(sem));
	if (!sp_may_matter(current->pid))
		return;
	atomic64_or(1ULL << sp_lock_lane(sem), &sp_lock_lanes);
	smp_mb__after_atomic();
	writer = sp_rwsem_writer(sem);
	if (!writer)
		n = sp_readers_of(sem, current->pid, readers);
	sp_hook_rwsem_wait_start(sp_now(), current->pid, (u64)(unsigned long)sem,
				 kind, writer, readers, n);
}

void sp_probe_rwsem_read_wait_start(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(rwsem_read_wait_start);
	sp_rwsem_wait_start(sem, SP_KIND_RWSEM_READ);
}

void sp_probe_rwsem_write_wait_start(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(rwsem_write_wait_start);
	sp_rwsem_wait_start(sem, SP_KIND_RWSEM_WRITE);
}

void sp_probe_rwsem_wait_finish(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(rwsem_wait_finish);
	unsigned long word = atomic_long_read(&sem->owner);

	sp_wait_finish(sem, !(word & SP_RWSEM_READER_OWNED) &&
			    (word & ~SP_RWSEM_OWNER_FLAGS) == (unsigned long)current);
}

void sp_probe_reader_owned(void *d, struct rw_semaphore *sem,
				  struct list_head *wlist)
{
	SP_COUNT(reader_owned);
	struct sp_rwsem_waiter *w;
	u64 now;

	if (!sp_owners_matter())
		return;
	if (!wlist) {
		sp_reader_enter(sem, current->pid);
		if (sp_lock_may_matter(sem))
			sp_hook_reader(sp_now(), (u64)(unsigned long)sem, current->pid, true);
		return;
	}
	/* rwsem_mark_wake() granted the lock to these readers (wait_lock held). */
	list_for_each_entry(w, wlist, list) {
		struct task_struct *t = READ_ONCE(w->task);

		if (t) {
			sp_reader_enter(sem, t->pid);
			/* It holds the lock now, though it has not run to leave its wait. */
			sp_wait_clear(t->pid);
		}
	}
	if (!sp_lock_may_matter(sem))
		return;
	now = sp_now();
	list_for_each_entry(w, wlist, list) {
		struct task_struct *t = READ_ONCE(w->task);

		if (t)
			sp_hook_reader(now, (u64)(unsigned long)sem, t->pid, true);
	}
}

void sp_probe_reader_cleared(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(reader_cleared);
	if (!sp_owners_matter())
		return;
	sp_reader_leave(sem, current->pid);
	if (sp_lock_may_matter(sem))
		sp_hook_reader(sp_now(), (u64)(unsigned long)sem, current->pid, false);
}

/*
 * rwsem writers reach the engine only for a lock tracked waits may be on
 * (the lock follows its new writer); a wait start reads the writer from the
 * owner word itself.
 */
void sp_probe_writer_owned(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(writer_owned);
	if (sp_waits_matter() && sp_lock_may_matter(sem))
		sp_owner_changed(sem, true);
}

/*
 * rwsem_wake() marked @sem's waiters (wait_lock held): with the lock free, a
 * writer at the head of wait_list was woken to take it when it runs, so it is
 * the next blocker of whoever waits behind it, and if it is a critical
 * waiter itself, it retries. While readers hold the lock (mark_wake granted
 * it to them), a writer at the head was not woken.
 */
void sp_probe_rwsem_wake_finish(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(rwsem_wake_finish);
	struct sp_rwsem_waiter *w;
	struct task_struct *t;

	if (!sp_waits_matter() || !sp_lock_may_matter(sem))
		return;
	if (atomic_long_read(&sem->count) & SP_RWSEM_HELD)
		return;
	w = list_first_entry_or_null(&sem->wait_list, struct sp_rwsem_waiter,
				     list);
	if (!w || READ_ONCE(w->type) != SP_RWSEM_WAITING_FOR_WRITE)
		return;
	t = READ_ONCE(w->task);
	if (t)
		sp_hook_woken(sp_now(), (u64)(unsigned long)sem, t->pid, current->pid);
}

void sp_probe_writer_cleared(void *d, struct rw_semaphore *sem)
{
	SP_COUNT(writer_cleared);
	if (sp_waits_matter() && sp_lock_may_matter(sem))
		sp_owner_changed(sem, false);
}
