// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_pcpu.c: percpu rw-semaphores, such as cgroup_threadgroup_rwsem,
 * which every fork and exit takes for reading and every cgroup migration for
 * writing.
 *
 * A percpu_rw_semaphore keeps no owner, so the writer is recorded here when
 * it has taken the lock (android_vh_record_pcpu_rwsem_starttime with a start
 * time while sem->block is set and no writer waits in sem->writer for the
 * readers to leave) and forgotten when it releases it (android_vh_percpu_rwsem_up_write, the
 * writer still holding it). The release is not reported while tracked waits
 * are on the semaphore: it wakes them only if the writer does not take the
 * semaphore again first (percpu_rwsem_wake_function()'s trylock can be
 * stolen), which a cgroup mover does at once, and then the waiters sleep on
 * until its next release. So the writer stays their blocker until each of
 * them takes the semaphore (its record ends the wait, and with it the grant)
 * or it exits or runs out of budget. A thread
 * that queues on the semaphore (android_vh_percpu_rwsem_wq_add) waits on that
 * writer, or, before it has recorded itself, on the writer waiting for the
 * readers to leave (sem->writer). To the engine these are rwsem waits: a
 * reader's on the writer, a writer's behind another. They are kept out of
 * the wait record (superpass_waits.c), whose rwsem entries are struct
 * rw_semaphore. A reader taking the lock ends its wait.
 *
 * A writer that is still waiting for the readers inside to leave is asleep in
 * its own wait, on readers the semaphore does not name. When a tracked wait
 * names it, it is noted as draining, and the engine learns its wait (on the
 * semaphore's readers, lock id sem | 1) when it is boosted: a chain wait with
 * no blocker, which the engine counts (chain_no_blocker). Boosted, it runs the
 * moment the last reader leaves.
 *
 * The record probe fires at every read acquire and release in the system (a
 * file write takes its superblock's freeze lock for reading), so it is in the
 * readers' probe group: attached while a critical thread is registered (or,
 * with readers_while_critical off, while tracked rwsem waits are on), and
 * detached otherwise, which forgets the record.
 *
 * The record is best effort and lock-free: SP_PCPU_SLOTS semaphores, each
 * slot claimed by address with cmpxchg; only the writer holding a semaphore
 * writes its slot's TID. A semaphore that finds no slot names no writer.
 * A slot's address is compared, never dereferenced: the semaphore may be gone.
 */
#include <linux/atomic.h>
#include <linux/percpu-rwsem.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <trace/hooks/dtask.h>

#include "superpass.h"
#include "superpass_internal.h"

/* Semaphores whose writer is recorded: the system has a handful. */
#define SP_PCPU_SLOTS 4

struct sp_pcpu_slot {
	struct percpu_rw_semaphore *sem;
	/* The writer holding sem. */
	s32 writer;
	/* A writer a tracked wait named while it waited for the readers to leave. */
	s32 draining;
};

static struct sp_pcpu_slot sp_pcpu[SP_PCPU_SLOTS];

/* @sem's slot, claimed if @claim and none is yet; NULL if there is none. */
static struct sp_pcpu_slot *sp_pcpu_slot(struct percpu_rw_semaphore *sem, bool claim)
{
	int i;

	for (i = 0; i < SP_PCPU_SLOTS; i++) {
		struct percpu_rw_semaphore *s = READ_ONCE(sp_pcpu[i].sem);

		if (!s && claim)
			s = cmpxchg(&sp_pcpu[i].sem, NULL, sem) ?: sem;
		if (s == sem)
			return &sp_pcpu[i];
	}
	return NULL;
}

/* The lock id of the readers of @sem, which a draining writer waits for. */
static u64 sp_pcpu_readers_id(const struct percpu_rw_semaphore *sem)
{
	return (u64)(unsigned long)sem | 1;
}

/*
 * The writer holding @sem as recorded, or else the writer waiting for its
 * readers to leave (it has set sem->block, so new readers queue behind it),
 * which is then noted as draining.
 */
static s32 sp_pcpu_writer(struct percpu_rw_semaphore *sem)
{
	struct sp_pcpu_slot *slot = sp_pcpu_slot(sem, false);
	struct task_struct *t;
	s32 tid = slot ? READ_ONCE(slot->writer) : 0;

	if (tid)
		return tid;
	rcu_read_lock();
	t = rcu_dereference(sem->writer.task);
	if (t) {
		tid = READ_ONCE(t->pid);
		slot = slot ?: sp_pcpu_slot(sem, true);
		if (slot) {
			WRITE_ONCE(slot->draining, tid);
			/*
			 * Pairs with the writer's record: either it sees the note and
			 * clears it, or this sees that it stopped waiting.
			 */
			smp_mb();
			if (rcu_access_pointer(sem->writer.task) != t)
				cmpxchg(&slot->draining, tid, 0);
		}
	}
	rcu_read_unlock();
	return tid;
}

/*
 * The wait of @tid on a percpu semaphore's readers, if a tracked wait named
 * it as the writer draining them: fills @lock and @kind.
 */
bool sp_pcpu_drain_of(s32 tid, u64 *lock, u32 *kind)
{
	int i;

	for (i = 0; i < SP_PCPU_SLOTS; i++) {
		struct percpu_rw_semaphore *sem = READ_ONCE(sp_pcpu[i].sem);

		if (sem && READ_ONCE(sp_pcpu[i].draining) == tid) {
			*lock = sp_pcpu_readers_id(sem);
			*kind = SP_KIND_RWSEM_WRITE;
			return true;
		}
	}
	return false;
}

void sp_pcpu_clear(void)
{
	int i;

	for (i = 0; i < SP_PCPU_SLOTS; i++) {
		WRITE_ONCE(sp_pcpu[i].writer, 0);
		WRITE_ONCE(sp_pcpu[i].draining, 0);
	}
}

void sp_probe_pcpu_wq_add(void *d, struct percpu_rw_semaphore *sem, bool reader)
{
	SP_COUNT(pcpu_wq_add);
	if (!sp_waits_matter() || !sp_may_matter(current->pid))
		return;
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)sem,
			   reader ? SP_KIND_RWSEM_READ : SP_KIND_RWSEM_WRITE,
			   sp_pcpu_writer(sem));
}

/* The writer, just in, drained @sem's readers: its wait on them ends if noted. */
static void sp_pcpu_drained(struct percpu_rw_semaphore *sem, struct sp_pcpu_slot *slot)
{
	/* Pairs with sp_pcpu_writer(): sem->writer.task was cleared before this. */
	smp_mb();
	if (READ_ONCE(slot->draining) != current->pid ||
	    cmpxchg(&slot->draining, current->pid, 0) != current->pid)
		return;
	if (sp_waits_matter() && sp_may_matter(current->pid))
		sp_hook_wait_finish(sp_now(), current->pid, sp_pcpu_readers_id(sem));
}

/* @sem was taken, while readers are blocked or by a thread whose wait may matter. */
static noinline void sp_pcpu_taken(struct percpu_rw_semaphore *sem)
{
	struct sp_pcpu_slot *slot;
	bool writer;

	/*
	 * Taken: by the writer if it blocks readers and no writer waits for them
	 * to leave, else by a reader. A reader that got in before a new writer set
	 * sem->block records while that writer drains the readers: naming it would
	 * lose the writer, the waiters' real blocker, as soon as it leaves.
	 */
	writer = atomic_read(&sem->block) && !rcu_access_pointer(sem->writer.task);
	if (writer) {
		slot = sp_pcpu_slot(sem, true);
		if (slot) {
			sp_pcpu_drained(sem, slot);
			WRITE_ONCE(slot->writer, current->pid);
		}
	}
	sp_report_wait_end(sem, writer);
}

void sp_probe_pcpu_record(void *d, struct percpu_rw_semaphore *sem,
			  unsigned long settime)
{
	SP_COUNT(pcpu_record);
	/* A release: up_write reports the writer's; a reader's changes nothing. */
	if (!settime)
		return;
	/*
	 * Every percpu_down_read() in the system lands here: a reader with no
	 * writer about and no tracked wait of its own changes nothing.
	 */
	if (atomic_read(&sem->block) || (sp_waits_matter() && sp_may_matter(current->pid)))
		sp_pcpu_taken(sem);
}

void sp_probe_pcpu_up_write(void *d, struct percpu_rw_semaphore *sem)
{
	SP_COUNT(pcpu_up_write);
	struct sp_pcpu_slot *slot = sp_pcpu_slot(sem, false);

	if (slot)
		WRITE_ONCE(slot->writer, 0);
	/* With tracked waits on it the writer stays their blocker (see the top). */
	if (!sp_ownership_matters() || sp_lock_may_matter(sem))
		return;
	sp_hook_owner(sp_now(), (u64)(unsigned long)sem, current->pid, false);
}
