// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_waits.c: the lock-free record of mutex and rwsem waits and
 * synchronous binder calls in progress.
 *
 * The wait probes send a wait to the engine only if its waiter may matter
 * (critical, boosted or waiting: sp_may_matter()). A task that started
 * waiting before it mattered, say a lock holder that went to sleep on a
 * second lock before a critical thread queued on its first, would leave the
 * engine blind to what it waits for: the chain would end at a sleeping
 * blocker. So while a critical thread is registered every such wait is also
 * written here, SP_WAIT_TABLE_SLOTS entries picked by TID, and cleared as it
 * ends. When the engine boosts a task, the hooks publish the new lanes and
 * then look it up, and report its wait then (core/src/platform.rs,
 * place_boosted()): a wait that starts meanwhile is either seen by its
 * probe's lane check or found here.
 *
 * An entry is written only by the waiter whose TID it holds: the TID is
 * cleared first and set last, so a reader that finds the same TID before and
 * after reading the fields read one waiter's fields. The record is best
 * effort: a waiter whose slot another waiter took is not found. Looking up
 * another task's wait never dereferences the lock: the owner is the one the
 * lock named when the wait began, and a stale one is bounded by the grant
 * budget like any blocker. Only the waiter itself, which is inside the lock's
 * slow path until its entry goes, reads the lock again (sp_wait_current()),
 * and only a mutex or rwsem: a binder call's lock is its id, no address
 * (superpass_binder.c); its caller's entry names the call when the reply is
 * received, which names only the reply.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>

#include "superpass.h"
#include "superpass_internal.h"

struct sp_wait_entry {
	s32 tid;
	u32 kind;
	s32 owner;
	u32 pad;
	u64 lock;
};

static struct sp_wait_entry sp_waits[SP_WAIT_TABLE_SLOTS] ____cacheline_aligned;

static inline struct sp_wait_entry *sp_wait_slot(pid_t tid)
{
	return &sp_waits[(u32)tid % SP_WAIT_TABLE_SLOTS];
}

/* The current task starts waiting on @lock (of SP_KIND_* @kind) that @owner holds (0: unknown). */
void sp_wait_note(const void *lock, u32 kind, s32 owner)
{
	struct sp_wait_entry *e = sp_wait_slot(current->pid);

	WRITE_ONCE(e->tid, 0);
	smp_wmb();
	WRITE_ONCE(e->lock, (u64)(unsigned long)lock);
	WRITE_ONCE(e->kind, kind);
	WRITE_ONCE(e->owner, owner);
	smp_wmb();
	WRITE_ONCE(e->tid, current->pid);
	/* Pairs with sp_wait_of(): the caller's read of the lanes comes after the entry. */
	smp_mb();
}

/*
 * @tid's wait ends, or a release granted it the lock it waited for: its
 * entry, if it still has one, goes.
 */
void sp_wait_clear(pid_t tid)
{
	struct sp_wait_entry *e = sp_wait_slot(tid);

	if (READ_ONCE(e->tid) == tid)
		cmpxchg(&e->tid, tid, 0);
}

/*
 * The recorded wait of @tid: fills @lock, @kind and @owner, and for an rwsem
 * without a writer its recorded readers but @tid into @readers
 * (SP_READER_TABLE_WAYS entries); or else its wait for a percpu semaphore's
 * readers to leave (superpass_pcpu.c). Returns 0 if @tid has no recorded wait,
 * else 1 + the number of readers.
 */
u32 sp_wait_of(s32 tid, u64 *lock, u32 *kind, s32 *owner, s32 *readers)
{
	struct sp_wait_entry *e;

	if (tid <= 0)
		return 0;
	/*
	 * Pairs with sp_wait_note(): the lanes just published (which make @tid's
	 * next wait start report itself) are ordered before this read of its entry.
	 */
	smp_mb();
	e = sp_wait_slot(tid);
	if (READ_ONCE(e->tid) != tid) {
		*owner = 0;
		return sp_pcpu_drain_of(tid, lock, kind) ? 1 : 0;
	}
	smp_rmb();
	*lock = READ_ONCE(e->lock);
	*kind = READ_ONCE(e->kind);
	*owner = READ_ONCE(e->owner);
	smp_rmb();
	if (READ_ONCE(e->tid) != tid || !*lock)
		return 0;
	/* The reader record hashes the lock's address; it never dereferences it. */
	if (*kind != SP_KIND_MUTEX && !*owner)
		return 1 + sp_readers_of((struct rw_semaphore *)(unsigned long)*lock, tid, readers);
	return 1;
}

/*
 * The lock of the current task's recorded wait (0: none), and its kind in
 * @kind. The task is inside that lock's slow path until its entry goes, so
 * the lock is alive while it runs.
 */
u64 sp_wait_current(u32 *kind)
{
	struct sp_wait_entry *e = sp_wait_slot(current->pid);
	u64 lock;

	/* Another waiter may take the slot meanwhile: as sp_wait_of(), TID before and after. */
	if (READ_ONCE(e->tid) != current->pid)
		return 0;
	smp_rmb();
	lock = READ_ONCE(e->lock);
	*kind = READ_ONCE(e->kind);
	smp_rmb();
	return READ_ONCE(e->tid) == current->pid ? lock : 0;
}

/* Forgets every wait (recording just stopped: nothing is critical, or SuperPass is off). */
void sp_waits_clear(void)
{
	int i;

	for (i = 0; i < SP_WAIT_TABLE_SLOTS; i++)
		WRITE_ONCE(sp_waits[i].tid, 0);
}
