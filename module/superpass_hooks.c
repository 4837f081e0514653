// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_hooks.c: the C companion of superpass.ko.
 *
 * What Rust cannot (or should not) express in 6.12 lives here: the misc
 * device /dev/superpass and its file operations, the vendor-hook probes
 * (register_trace_android_* are static inlines), reads of lock owners and of
 * task/runqueue internals (kernel/sched/sched.h from the build tree), CPU
 * kicks, the engine's raw spinlock and the superpass:* tracepoints.
 *
 * The probes hold no policy: each one extracts plain values (time, TIDs, CPU,
 * lock address, owner) and forwards them to a Rust sp_hook_*() entry point,
 * which drives superpass-core's Engine under the engine lock and answers.
 *
 * Locking: the engine lock (sp_lock) is a raw spinlock taken with IRQs saved
 * and is always the innermost lock: probes run under rq locks, lock
 * wait_locks or p->pi_lock, and nothing is taken while sp_lock is held.
 * Nothing here allocates or sleeps in a probe.
 *
 * Lock-free fast paths: sp_enabled, sp_nr_boosted and sp_nr_critical mirror
 * the engine (published under sp_lock after every engine call), so probes
 * return at once when there is nothing to do: the scheduler probes when
 * nothing is boosted, the mutex-owner probes when nothing is boosted and no
 * tracked thread waits, the wait, reader and writer probes when SuperPass is
 * off or has no critical thread.
 */
#define CREATE_TRACE_POINTS
#include "superpass_trace.h"
#undef CREATE_TRACE_POINTS

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/capability.h>
#include <linux/timekeeping.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/tracepoint.h>
#include <linux/mmu_context.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/rwsem.h>
#include <trace/hooks/sched.h>
/* Scheduler internals (struct rq, cpu_of(), task_on_rq_queued()). */
#include <kernel/sched/sched.h>

#include "superpass.h"

#define SP_MECH_MUTEX_WAIT	(1ULL << 0)
#define SP_MECH_RWSEM_READ_WAIT	(1ULL << 1)
#define SP_MECH_RWSEM_WRITE_WAIT (1ULL << 2)
#define SP_MECH_RWSEM_READERS	(1ULL << 3)
#define SP_MECH_RWSEM_WRITER	(1ULL << 4)
#define SP_MECH_MUTEX_UNLOCK	(1ULL << 5)
#define SP_MECH_ENQUEUE		(1ULL << 6)
#define SP_MECH_DEQUEUE		(1ULL << 7)
#define SP_MECH_PICK		(1ULL << 8)
#define SP_MECH_PREEMPT		(1ULL << 9)
#define SP_MECH_SELECT_CPU	(1ULL << 10)
#define SP_MECH_TICK		(1ULL << 11)
#define SP_MECH_TASK_EXIT	(1ULL << 12)

/* Mirrors of kernel/locking/{mutex,rwsem}.c private constants. */
#define SP_MUTEX_FLAGS		0x07UL
#define SP_RWSEM_READER_OWNED	(1UL << 0)
#define SP_RWSEM_OWNER_FLAGS	0x07UL

/*
 * The head of kernel/locking/rwsem.c's private struct rwsem_waiter: the
 * record_rwsem_reader_owned hook passes the list of readers being granted.
 */
struct sp_rwsem_waiter {
	struct list_head list;
	struct task_struct *task;
};

static DEFINE_RAW_SPINLOCK(sp_lock);
static atomic_t sp_enabled = ATOMIC_INIT(0);
static atomic_t sp_nr_boosted = ATOMIC_INIT(0);
static atomic_t sp_nr_critical = ATOMIC_INIT(0);
/* Waits the engine tracks (critical threads and chain links waiting now). */
static atomic_t sp_nr_waits = ATOMIC_INIT(0);

/* Runqueues seen by the probes, by CPU (for the idle mask); never freed. */
static struct rq *sp_rqs[NR_CPUS];
/* The fair class, learned from CFS's own picks (fair_sched_class is not exported). */
static const struct sched_class *sp_fair_class;

/* One kick (reschedule IPI) in flight per target CPU. */
static call_single_data_t sp_kick_csd[NR_CPUS];
static atomic_t sp_kick_pending[NR_CPUS];

/* ---------------- helpers for Rust ---------------- */

unsigned long sp_engine_lock(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&sp_lock, flags);
	return flags;
}

void sp_engine_unlock(unsigned long flags)
{
	raw_spin_unlock_irqrestore(&sp_lock, flags);
}

void sp_publish(u32 nr_boosted, u32 nr_critical, u32 nr_waits, bool enabled)
{
	atomic_set(&sp_nr_boosted, nr_boosted);
	atomic_set(&sp_nr_critical, nr_critical);
	atomic_set(&sp_nr_waits, nr_waits);
	atomic_set(&sp_enabled, enabled);
}

u64 sp_now(void)
{
	return ktime_get_mono_fast_ns();
}

bool sp_capable_sys_nice(void)
{
	return capable(CAP_SYS_NICE);
}

bool sp_tid_exists(s32 tid)
{
	bool ok;

	if (tid <= 0)
		return false;
	rcu_read_lock();
	ok = pid_task(find_vpid(tid), PIDTYPE_PID) != NULL;
	rcu_read_unlock();
	return ok;
}

/*
 * Called under sp_lock only. The task found stays valid after the RCU
 * section because freeing it runs the free_task probe, which takes sp_lock
 * and drops every pointer to it before the memory goes away.
 */
void *sp_task_lookup(s32 tid)
{
	struct task_struct *p;

	if (tid <= 0)
		return NULL;
	rcu_read_lock();
	p = pid_task(find_pid_ns(tid, &init_pid_ns), PIDTYPE_PID);
	rcu_read_unlock();
	return p;
}

/* The CPU whose runqueue holds @task, or -1 (a racy hint: only used to kick). */
s32 sp_task_queued_cpu(void *task)
{
	struct task_struct *p = task;

	if (READ_ONCE(p->on_rq) != TASK_ON_RQ_QUEUED || READ_ONCE(p->se.sched_delayed))
		return -1;
	return task_cpu(p);
}

/*
 * True if @task is queued (and runnable: not a delayed-dequeue sleeper) on
 * @rq; exact because the caller holds @rq's lock.
 */
bool sp_task_queued_on(void *rqv, void *task)
{
	struct rq *rq = rqv;
	struct task_struct *p = task;

	return task_cpu(p) == cpu_of(rq) && task_on_rq_queued(p) &&
	       !p->se.sched_delayed;
}

/*
 * True if @task may replace CFS's pick on @rq (rq lock held): queued on this
 * runqueue, not migrating, a fair task, not a delayed-dequeue sleeper.
 */
bool sp_task_pickable(void *rqv, void *task)
{
	struct rq *rq = rqv;
	struct task_struct *p = task;
	const struct sched_class *fair = READ_ONCE(sp_fair_class);

	return fair && p != rq->idle && task_cpu(p) == cpu_of(rq) &&
	       task_on_rq_queued(p) && p->sched_class == fair &&
	       !p->se.sched_delayed;
}

/* Runs on the kicked CPU, in hardirq: what resched_curr() does locally. */
static void sp_kick_fn(void *info)
{
	atomic_set(&sp_kick_pending[smp_processor_id()], 0);
	set_tsk_need_resched(current);
	set_preempt_need_resched();
}

/* Makes @cpu reschedule soon, so that its next pick sees the fast track. */
void sp_kick_cpu(u32 cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return;
	if (cpu == raw_smp_processor_id()) {
		set_tsk_need_resched(current);
		set_preempt_need_resched();
		return;
	}
	if (atomic_xchg(&sp_kick_pending[cpu], 1))
		return;
	if (smp_call_function_single_async(cpu, &sp_kick_csd[cpu]))
		atomic_set(&sp_kick_pending[cpu], 0);
}

/* Reschedules @rq's CPU; @rq is locked by the caller. */
static void sp_resched_rq(struct rq *rq)
{
	if (cpu_of(rq) == smp_processor_id()) {
		set_tsk_need_resched(rq->curr);
		set_preempt_need_resched();
	} else {
		sp_kick_cpu(cpu_of(rq));
	}
}

void sp_trace_block(s32 waiter, s32 blocker, u64 lock, u32 kind)
{
	trace_superpass_block(waiter, blocker, lock, kind);
}

void sp_trace_grant(s32 blocker, s32 waiter, s32 root, u64 lock, u32 depth)
{
	trace_superpass_grant(blocker, waiter, root, lock, depth);
}

void sp_trace_revoke(s32 blocker, u32 reason)
{
	trace_superpass_revoke(blocker, reason);
}

void sp_trace_pick(u32 cpu, s32 tid)
{
	trace_superpass_pick(cpu, tid);
}

/* ---------------- lock probes (normal hooks) ---------------- */

static inline bool sp_waits_matter(void)
{
	return atomic_read(&sp_enabled) &&
	       (atomic_read(&sp_nr_critical) || atomic_read(&sp_nr_boosted));
}

/* Reader acquisitions: the detector must learn readers before a critical writer waits. */
static inline bool sp_owners_matter(void)
{
	return atomic_read(&sp_enabled) && atomic_read(&sp_nr_critical);
}

/*
 * Mutex owners: the wait probes read them from the lock itself
 * (lock->owner), so acquire/release events only matter
 * while something is boosted (a release ends the owner's grants) or a
 * tracked thread is waiting (a new owner that took the lock from under it
 * must be boosted). This keeps the engine lock off every mutex_lock() in the
 * system while a critical thread is merely registered.
 */
static inline bool sp_ownership_matters(void)
{
	return (atomic_read(&sp_nr_boosted) || atomic_read(&sp_nr_waits)) &&
	       atomic_read(&sp_enabled);
}

/* The owner's TID from an owner word holding a task pointer plus flag bits. */
static s32 sp_owner_tid(unsigned long word, unsigned long flags_mask)
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

static void sp_probe_mutex_wait_start(void *d, struct mutex *lock)
{
	if (!sp_waits_matter())
		return;
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)lock,
			   SP_KIND_MUTEX,
			   sp_owner_tid(atomic_long_read(&lock->owner),
					SP_MUTEX_FLAGS));
}

static void sp_probe_mutex_wait_finish(void *d, struct mutex *lock)
{
	if (!sp_waits_matter())
		return;
	sp_hook_wait_finish(sp_now(), current->pid, (u64)(unsigned long)lock);
}

static void sp_probe_mutex_unlock_slowpath(void *d, struct mutex *lock)
{
	if (!sp_ownership_matters())
		return;
	sp_hook_owner(sp_now(), (u64)(unsigned long)lock, current->pid, false);
}

static void sp_probe_mutex_starttime(void *d, struct mutex *lock,
				     unsigned long settime)
{
	if (!sp_ownership_matters())
		return;
	sp_hook_owner(sp_now(), (u64)(unsigned long)lock, current->pid,
		      settime != 0);
}

/* The writer of @sem, if the owner word names one (not reader-owned). */
static s32 sp_rwsem_writer(struct rw_semaphore *sem)
{
	unsigned long word = atomic_long_read(&sem->owner);

	if (word & SP_RWSEM_READER_OWNED)
		return 0;
	return sp_owner_tid(word, SP_RWSEM_OWNER_FLAGS);
}

static void sp_probe_rwsem_read_wait_start(void *d, struct rw_semaphore *sem)
{
	if (!sp_waits_matter())
		return;
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)sem,
			   SP_KIND_RWSEM_READ, sp_rwsem_writer(sem));
}

static void sp_probe_rwsem_write_wait_start(void *d, struct rw_semaphore *sem)
{
	if (!sp_waits_matter())
		return;
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)sem,
			   SP_KIND_RWSEM_WRITE, sp_rwsem_writer(sem));
}

static void sp_probe_rwsem_wait_finish(void *d, struct rw_semaphore *sem)
{
	if (!sp_waits_matter())
		return;
	sp_hook_wait_finish(sp_now(), current->pid, (u64)(unsigned long)sem);
}

static void sp_probe_reader_owned(void *d, struct rw_semaphore *sem,
				  struct list_head *wlist)
{
	struct sp_rwsem_waiter *w;
	u64 now;

	if (!sp_owners_matter())
		return;
	now = sp_now();
	if (!wlist) {
		sp_hook_reader(now, (u64)(unsigned long)sem, current->pid, true);
		return;
	}
	/* rwsem_mark_wake() granted the lock to these readers (wait_lock held). */
	list_for_each_entry(w, wlist, list) {
		struct task_struct *t = READ_ONCE(w->task);

		if (t)
			sp_hook_reader(now, (u64)(unsigned long)sem, t->pid, true);
	}
}

static void sp_probe_reader_cleared(void *d, struct rw_semaphore *sem)
{
	if (!sp_waits_matter())
		return;
	sp_hook_reader(sp_now(), (u64)(unsigned long)sem, current->pid, false);
}

/*
 * rwsem writers are tracked whenever a critical thread exists (unlike mutex
 * owners): a reader-owned sem->owner names no writer, so a waiting writer's
 * blockers come from the engine's table, which must not hold a stale writer.
 */
static void sp_probe_writer_owned(void *d, struct rw_semaphore *sem)
{
	if (!sp_owners_matter())
		return;
	sp_hook_owner(sp_now(), (u64)(unsigned long)sem, current->pid, true);
}

static void sp_probe_writer_cleared(void *d, struct rw_semaphore *sem)
{
	if (!sp_waits_matter())
		return;
	sp_hook_owner(sp_now(), (u64)(unsigned long)sem, current->pid, false);
}

/* ---------------- scheduler probes (restricted hooks) ---------------- */

static inline bool sp_boosting(void)
{
	return atomic_read(&sp_nr_boosted) != 0;
}

static inline bool sp_is_fair(struct task_struct *p)
{
	const struct sched_class *fair = READ_ONCE(sp_fair_class);

	return fair ? p->sched_class == fair : !rt_prio(p->prio) && !dl_prio(p->prio);
}

static void sp_probe_enqueue(void *d, struct rq *rq, struct task_struct *p,
			     int flags)
{
	WRITE_ONCE(sp_rqs[cpu_of(rq)], rq);
	if (!sp_boosting() || !sp_is_fair(p))
		return;
	if (sp_hook_enqueue(sp_now(), cpu_of(rq), p->pid, p))
		sp_resched_rq(rq);
}

static void sp_probe_dequeue(void *d, struct rq *rq, struct task_struct *p,
			     int flags)
{
	if (!sp_boosting())
		return;
	sp_hook_dequeue(sp_now(), cpu_of(rq), p->pid);
}

static void sp_probe_replace_next(void *d, struct rq *rq,
				  struct task_struct **p,
				  struct task_struct *prev)
{
	struct task_struct *next = *p, *t;

	if (next && unlikely(!READ_ONCE(sp_fair_class)))
		WRITE_ONCE(sp_fair_class, next->sched_class);
	if (!sp_boosting())
		return;
	t = sp_hook_pick(sp_now(), rq, cpu_of(rq), prev->pid,
			 next ? next->pid : 0);
	/* sp_hook_pick() validated t with sp_task_pickable() under rq's lock. */
	if (t && t != next)
		*p = t;
}

static void sp_probe_preempt(void *d, struct rq *rq, struct task_struct *p,
			     bool *preempt, bool *nopreempt, int wake_flags,
			     struct sched_entity *se, struct sched_entity *pse)
{
	if (!sp_boosting())
		return;
	if (sp_hook_preempt(sp_now(), cpu_of(rq), rq->curr->pid, p->pid))
		*preempt = true;
}

static bool sp_rq_idle(struct rq *rq)
{
	return READ_ONCE(rq->curr) == rq->idle && !READ_ONCE(rq->nr_running) &&
	       !READ_ONCE(rq->ttwu_pending);
}

static void sp_probe_select(void *d, struct task_struct *p, int prev_cpu,
			    int sd_flag, int wake_flags, int *new_cpu)
{
	u64 idle = 0, allowed = 0;
	s32 cpu;
	int c;

	if (!sp_boosting() || prev_cpu < 0)
		return;
	for_each_online_cpu(c) {
		struct rq *rq = READ_ONCE(sp_rqs[c]);

		if (c >= 64)
			break;
		if (cpumask_test_cpu(c, p->cpus_ptr))
			allowed |= 1ULL << c;
		if (rq && sp_rq_idle(rq))
			idle |= 1ULL << c;
	}
	cpu = sp_hook_select(sp_now(), p->pid, prev_cpu, idle, allowed);
	if (cpu >= 0)
		*new_cpu = cpu;
}

static void sp_probe_tick(void *d, struct rq *rq)
{
	WRITE_ONCE(sp_rqs[cpu_of(rq)], rq);
	if (!sp_boosting())
		return;
	if (sp_hook_tick(sp_now(), rq, cpu_of(rq), rq->curr->pid))
		sp_resched_rq(rq);
}

static void sp_probe_free_task(void *d, struct task_struct *p)
{
	if (!atomic_read(&sp_nr_boosted) && !atomic_read(&sp_nr_critical))
		return;
	sp_hook_task_free(sp_now(), p->pid, p);
}

/* ---------------- hook registration ---------------- */

enum sp_hook_id {
	SPH_MUTEX_WAIT_START, SPH_MUTEX_WAIT_FINISH,
	SPH_RWSEM_READ_WAIT_START, SPH_RWSEM_READ_WAIT_FINISH,
	SPH_RWSEM_WRITE_WAIT_START, SPH_RWSEM_WRITE_WAIT_FINISH,
	SPH_READER_OWNED, SPH_READER_CLEARED,
	SPH_WRITER_OWNED, SPH_WRITER_CLEARED,
	SPH_MUTEX_UNLOCK_SLOWPATH, SPH_MUTEX_STARTTIME,
	SPH_FREE_TASK,
	/* Restricted hooks from here on. */
	SPH_ENQUEUE, SPH_DEQUEUE, SPH_PICK, SPH_PREEMPT, SPH_SELECT, SPH_TICK,
	SPH_NR
};

/* Hooks attached, and hooks another module already owned (-EBUSY). */
static unsigned long sp_attached, sp_taken;

static void sp_note(int id, const char *name, int r)
{
	if (!r) {
		__set_bit(id, &sp_attached);
		return;
	}
	if (r == -EBUSY)
		__set_bit(id, &sp_taken);
	pr_warn("superpass: %s not attached (%d)%s\n", name, r,
		r == -EBUSY ? ": owned by another module" : "");
}

#define SP_ATTACH(id, hook, probe) \
	sp_note(id, #hook, register_trace_##hook(probe, NULL))
#define SP_DETACH(id, hook, probe)					\
	do {								\
		if (test_bit(id, &sp_attached))				\
			unregister_trace_##hook(probe, NULL);		\
	} while (0)

/* A mechanism is active when every hook it needs is attached. */
static const struct {
	u64 mech;
	unsigned long hooks;
} sp_mechs[] = {
	{ SP_MECH_MUTEX_WAIT, BIT(SPH_MUTEX_WAIT_START) | BIT(SPH_MUTEX_WAIT_FINISH) },
	{ SP_MECH_RWSEM_READ_WAIT, BIT(SPH_RWSEM_READ_WAIT_START) | BIT(SPH_RWSEM_READ_WAIT_FINISH) },
	{ SP_MECH_RWSEM_WRITE_WAIT, BIT(SPH_RWSEM_WRITE_WAIT_START) | BIT(SPH_RWSEM_WRITE_WAIT_FINISH) },
	{ SP_MECH_RWSEM_READERS, BIT(SPH_READER_OWNED) | BIT(SPH_READER_CLEARED) },
	{ SP_MECH_RWSEM_WRITER, BIT(SPH_WRITER_OWNED) | BIT(SPH_WRITER_CLEARED) },
	{ SP_MECH_MUTEX_UNLOCK, BIT(SPH_MUTEX_UNLOCK_SLOWPATH) | BIT(SPH_MUTEX_STARTTIME) },
	{ SP_MECH_ENQUEUE, BIT(SPH_ENQUEUE) },
	{ SP_MECH_DEQUEUE, BIT(SPH_DEQUEUE) },
	{ SP_MECH_PICK, BIT(SPH_PICK) },
	{ SP_MECH_PREEMPT, BIT(SPH_PREEMPT) },
	{ SP_MECH_SELECT_CPU, BIT(SPH_SELECT) },
	{ SP_MECH_TICK, BIT(SPH_TICK) },
	{ SP_MECH_TASK_EXIT, BIT(SPH_FREE_TASK) },
};

/* Attaches each hook on its own: a hook that is taken is skipped, not fatal. */
static void sp_attach_all(void)
{
	/* Lock hooks and task exit: normal hooks, shared with other modules. */
	SP_ATTACH(SPH_MUTEX_WAIT_START, android_vh_mutex_wait_start, sp_probe_mutex_wait_start);
	SP_ATTACH(SPH_MUTEX_WAIT_FINISH, android_vh_mutex_wait_finish, sp_probe_mutex_wait_finish);
	SP_ATTACH(SPH_RWSEM_READ_WAIT_START, android_vh_rwsem_read_wait_start, sp_probe_rwsem_read_wait_start);
	SP_ATTACH(SPH_RWSEM_READ_WAIT_FINISH, android_vh_rwsem_read_wait_finish, sp_probe_rwsem_wait_finish);
	SP_ATTACH(SPH_RWSEM_WRITE_WAIT_START, android_vh_rwsem_write_wait_start, sp_probe_rwsem_write_wait_start);
	SP_ATTACH(SPH_RWSEM_WRITE_WAIT_FINISH, android_vh_rwsem_write_wait_finish, sp_probe_rwsem_wait_finish);
	SP_ATTACH(SPH_READER_OWNED, android_vh_record_rwsem_reader_owned, sp_probe_reader_owned);
	SP_ATTACH(SPH_READER_CLEARED, android_vh_clear_rwsem_reader_owned, sp_probe_reader_cleared);
	SP_ATTACH(SPH_WRITER_OWNED, android_vh_record_rwsem_writer_owned, sp_probe_writer_owned);
	SP_ATTACH(SPH_WRITER_CLEARED, android_vh_clear_rwsem_writer_owned, sp_probe_writer_cleared);
	SP_ATTACH(SPH_MUTEX_UNLOCK_SLOWPATH, android_vh_mutex_unlock_slowpath, sp_probe_mutex_unlock_slowpath);
	SP_ATTACH(SPH_MUTEX_STARTTIME, android_vh_record_mutex_lock_starttime, sp_probe_mutex_starttime);
	SP_ATTACH(SPH_FREE_TASK, android_vh_free_task, sp_probe_free_task);

	/* Scheduler hooks: restricted, one owner each, never detached. */
	SP_ATTACH(SPH_ENQUEUE, android_rvh_enqueue_task, sp_probe_enqueue);
	SP_ATTACH(SPH_DEQUEUE, android_rvh_dequeue_task, sp_probe_dequeue);
	SP_ATTACH(SPH_PICK, android_rvh_replace_next_task_fair, sp_probe_replace_next);
	SP_ATTACH(SPH_PREEMPT, android_rvh_check_preempt_wakeup_fair, sp_probe_preempt);
	SP_ATTACH(SPH_SELECT, android_rvh_select_task_rq_fair, sp_probe_select);
	SP_ATTACH(SPH_TICK, android_rvh_tick_entry, sp_probe_tick);
}

static void sp_detach_normal(void)
{
	SP_DETACH(SPH_MUTEX_WAIT_START, android_vh_mutex_wait_start, sp_probe_mutex_wait_start);
	SP_DETACH(SPH_MUTEX_WAIT_FINISH, android_vh_mutex_wait_finish, sp_probe_mutex_wait_finish);
	SP_DETACH(SPH_RWSEM_READ_WAIT_START, android_vh_rwsem_read_wait_start, sp_probe_rwsem_read_wait_start);
	SP_DETACH(SPH_RWSEM_READ_WAIT_FINISH, android_vh_rwsem_read_wait_finish, sp_probe_rwsem_wait_finish);
	SP_DETACH(SPH_RWSEM_WRITE_WAIT_START, android_vh_rwsem_write_wait_start, sp_probe_rwsem_write_wait_start);
	SP_DETACH(SPH_RWSEM_WRITE_WAIT_FINISH, android_vh_rwsem_write_wait_finish, sp_probe_rwsem_wait_finish);
	SP_DETACH(SPH_READER_OWNED, android_vh_record_rwsem_reader_owned, sp_probe_reader_owned);
	SP_DETACH(SPH_READER_CLEARED, android_vh_clear_rwsem_reader_owned, sp_probe_reader_cleared);
	SP_DETACH(SPH_WRITER_OWNED, android_vh_record_rwsem_writer_owned, sp_probe_writer_owned);
	SP_DETACH(SPH_WRITER_CLEARED, android_vh_clear_rwsem_writer_owned, sp_probe_writer_cleared);
	SP_DETACH(SPH_MUTEX_UNLOCK_SLOWPATH, android_vh_mutex_unlock_slowpath, sp_probe_mutex_unlock_slowpath);
	SP_DETACH(SPH_MUTEX_STARTTIME, android_vh_record_mutex_lock_starttime, sp_probe_mutex_starttime);
	SP_DETACH(SPH_FREE_TASK, android_vh_free_task, sp_probe_free_task);
	tracepoint_synchronize_unregister();
}

/* ---------------- /dev/superpass ---------------- */

static long sp_dev_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	return sp_ioctl(cmd, arg);
}

static const struct file_operations sp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = sp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "superpass",
	.fops = &sp_fops,
	.mode = 0666,
};

static bool sp_misc_registered, sp_testdev_registered;

/* The Rust crate of 6.12 has no module parameters: declared here. */
static bool testdev;
module_param(testdev, bool, 0444);
MODULE_PARM_DESC(testdev, "Create /dev/superpass-test, the lock contention device for tests");

/*
 * Called by the Rust module init once the engine exists: registers the
 * device(s), then attaches the hooks. Reports the active mechanisms and the
 * mechanisms another module blocked.
 */
int sp_c_init(u64 *active_mask, u64 *busy_mask)
{
	int i, r;

	for (i = 0; i < NR_CPUS; i++)
		INIT_CSD(&sp_kick_csd[i], sp_kick_fn, NULL);

	r = misc_register(&sp_misc);
	if (r)
		return r;
	sp_misc_registered = true;
	if (testdev) {
		r = sp_testdev_init();
		if (r) {
			misc_deregister(&sp_misc);
			sp_misc_registered = false;
			return r;
		}
		sp_testdev_registered = true;
	}
	sp_attach_all();
	*active_mask = 0;
	*busy_mask = 0;
	for (i = 0; i < ARRAY_SIZE(sp_mechs); i++) {
		if ((sp_attached & sp_mechs[i].hooks) == sp_mechs[i].hooks)
			*active_mask |= sp_mechs[i].mech;
		if (sp_taken & sp_mechs[i].hooks)
			*busy_mask |= sp_mechs[i].mech;
	}
	return 0;
}

/*
 * Only reachable when no restricted hook was attached (otherwise the module
 * is pinned): detaches the normal hooks and removes the devices.
 */
void sp_c_exit(void)
{
	int i;

	sp_detach_normal();
	if (sp_testdev_registered)
		sp_testdev_exit();
	if (sp_misc_registered)
		misc_deregister(&sp_misc);
	/* Wait (bounded) for in-flight kicks: their csd lives in this module. */
	for (i = 0; i < NR_CPUS; i++) {
		int spins = 1000000;

		while (atomic_read(&sp_kick_pending[i]) && --spins)
			cpu_relax();
	}
}
