// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_sched.c: the scheduler side of superpass.ko's C companion.
 *
 * The task and runqueue internals Rust asks about (kernel/sched/sched.h from
 * the build tree), CPU kicks, and the scheduler probes. The probes return at
 * once when nothing is boosted (enqueue also for tasks outside the fair
 * class); free_task when nothing is critical or boosted.
 */
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/smp.h>
#include <linux/hrtimer.h>
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
/* kernel/sched/sched.h needs task_cpu_possible() from here. */
#include <linux/mmu_context.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/sched.h>

#include <kernel/sched/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

/* Runqueues seen by the probes, by CPU (for the idle mask); never freed. */
static struct rq *sp_rqs[NR_CPUS];
/* The fair class, learned from CFS's own picks (fair_sched_class is not exported). */
static const struct sched_class *sp_fair_class;

/* One kick (reschedule IPI) in flight per target CPU. */
static call_single_data_t sp_kick_csd[NR_CPUS];
static atomic_t sp_kick_pending[NR_CPUS];

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

/*
 * True if @p is a delayed-dequeue sleeper (6.12's EEVDF keeps a sleeping
 * task queued until its lag is spent). 6.6 has no delayed dequeue and no
 * se.sched_delayed: a queued task there is runnable.
 */
static inline bool sp_se_delayed(struct task_struct *p)
{
#ifdef SP_ACK_6_6
	return false;
#else
	return READ_ONCE(p->se.sched_delayed);
#endif
}

/* The CPU whose runqueue holds @task, or -1 (a racy hint: only used to kick). */
s32 sp_task_queued_cpu(void *task)
{
	struct task_struct *p = task;

	if (READ_ONCE(p->on_rq) != TASK_ON_RQ_QUEUED || sp_se_delayed(p))
		return -1;
	return task_cpu(p);
}

/*
 * The CPU @task's record names: where it runs or is queued, else the one it
 * last ran on, or the one whose runqueue it is joining (try_to_wake_up() and
 * a migration set it before the enqueue). A racy hint.
 */
u32 sp_task_cpu(void *task)
{
	return task_cpu((struct task_struct *)task);
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
	       !sp_se_delayed(p);
}

/*
 * True if @p sits in a CFS bandwidth-throttled group (or below one): it stays
 * queued in its own cfs_rq while the hierarchy is off the runqueue, and
 * running it would spend the quota the group's owner set (a cgroup cpu.max).
 */
static inline bool sp_throttled(struct task_struct *p)
{
#ifdef CONFIG_CFS_BANDWIDTH
	return READ_ONCE(p->se.cfs_rq->throttle_count) != 0;
#else
	return false;
#endif
}

/*
 * True if @p is a proxy-execution donor: blocked on a mutex but left on the
 * runqueue so that the scheduler runs the owner in its place (6.17+). Run
 * directly, it would only go back to sleep on the mutex.
 */
static inline bool sp_proxy_donor(struct task_struct *p)
{
#ifdef CONFIG_SCHED_PROXY_EXEC
	return task_is_blocked(p);
#else
	return false;
#endif
}

/*
 * True if @task may replace CFS's pick on @rq (rq lock held): queued on this
 * runqueue, not migrating, a fair task, not a delayed-dequeue sleeper, not in
 * a throttled group, not a proxy-execution donor.
 */
bool sp_task_pickable(void *rqv, void *task)
{
	struct rq *rq = rqv;
	struct task_struct *p = task;
	const struct sched_class *fair = READ_ONCE(sp_fair_class);

	return fair && p != rq->idle && task_cpu(p) == cpu_of(rq) &&
	       task_on_rq_queued(p) && p->sched_class == fair &&
	       !sp_se_delayed(p) && !sp_throttled(p) && !sp_proxy_donor(p);
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
		sp_trace_kick(cpu, SP_KICK_LOCAL);
		return;
	}
	if (atomic_xchg(&sp_kick_pending[cpu], 1)) {
		sp_trace_kick(cpu, SP_KICK_PENDING);
		return;
	}
	if (smp_call_function_single_async(cpu, &sp_kick_csd[cpu])) {
		atomic_set(&sp_kick_pending[cpu], 0);
		sp_trace_kick(cpu, SP_KICK_BUSY);
		return;
	}
	sp_trace_kick(cpu, SP_KICK_IPI);
}

/*
 * The TID of the task running on @cpu, or 0 if unknown: a racy read, for the
 * engine's choice of whether to kick that CPU. Task structs are freed after an
 * RCU grace period, so the one read stays valid until the pid is read.
 */
s32 sp_cpu_curr(u32 cpu)
{
	struct rq *rq;
	struct task_struct *p;
	s32 pid = 0;

	if (cpu == raw_smp_processor_id())
		return current->pid;
	rq = cpu < NR_CPUS ? READ_ONCE(sp_rqs[cpu]) : NULL;
	if (!rq)
		return 0;
	rcu_read_lock();
	p = READ_ONCE(rq->curr);
	if (p)
		pid = READ_ONCE(p->pid);
	rcu_read_unlock();
	return pid;
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

/*
 * capacity=: CPU capacities the engine takes instead of the kernel's, in CPU
 * order (CPUs past the list keep theirs). It lets the placement and misfit
 * decisions be tested on a symmetric machine; the kernel's own view of its
 * CPUs does not change.
 */
static unsigned int sp_capacity_param[64];
static int sp_nr_capacity_param;
module_param_array_named(capacity, sp_capacity_param, uint, &sp_nr_capacity_param, 0444);
MODULE_PARM_DESC(capacity, "CPU capacities for the engine, CPU order (testing; default: the kernel's)");

/* CPU @cpu's capacity (arch_scale_cpu_capacity(), or capacity=), or 0 if it cannot exist. */
u32 sp_cpu_capacity(u32 cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return 0;
	if (cpu < sp_nr_capacity_param && sp_capacity_param[cpu])
		return sp_capacity_param[cpu];
	return arch_scale_cpu_capacity(cpu);
}

/* The CPU the caller runs on; a lock probe's caller is the waiting thread. */
u32 sp_this_cpu(void)
{
	return raw_smp_processor_id();
}

/*
 * The bound timer: a fast-tracked task's budget, its CPU's throttle share
 * and its slice end between ticks (a tick is 4 ms at HZ=250, half a default
 * budget), so each pick that leaves a boosted task running arms this CPU's
 * timer for the engine's deadline. Firing asks the engine whether that
 * deadline still stands, and if so only asks the CPU to reschedule: the pick
 * that follows charges the task and ends what ran out.
 */
static DEFINE_PER_CPU(struct hrtimer, sp_bound_timer);

static enum hrtimer_restart sp_bound_fire(struct hrtimer *t)
{
	u64 next = 0;

	/*
	 * The deadline it was armed for may have moved, or gone with the grant
	 * (the task that runs now may be the critical thread it was for).
	 */
	if (sp_hook_bound_timer(sp_now(), smp_processor_id(), &next)) {
		set_tsk_need_resched(current);
		set_preempt_need_resched();
		return HRTIMER_NORESTART;
	}
	if (!next)
		return HRTIMER_NORESTART;
	hrtimer_set_expires(t, ns_to_ktime(next));
	return HRTIMER_RESTART;
}

/* Called with this CPU's rq locked, from its pick: the timer is this CPU's. */
static void sp_arm_bound_timer(u64 deadline)
{
	hrtimer_start(this_cpu_ptr(&sp_bound_timer), ns_to_ktime(deadline),
		      HRTIMER_MODE_ABS_PINNED_HARD);
}

void sp_sched_init(void)
{
	int i;

	for (i = 0; i < NR_CPUS; i++)
		INIT_CSD(&sp_kick_csd[i], sp_kick_fn, NULL);
	for_each_possible_cpu(i) {
		struct hrtimer *t = per_cpu_ptr(&sp_bound_timer, i);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED_HARD);
		t->function = sp_bound_fire;
	}
}

/* Waits (bounded) for in-flight kicks: their csd lives in this module. */
void sp_sched_exit(void)
{
	int i;

	for (i = 0; i < NR_CPUS; i++) {
		int spins = 1000000;

		while (atomic_read(&sp_kick_pending[i]) && --spins)
			cpu_relax();
	}
	for_each_possible_cpu(i)
		hrtimer_cancel(per_cpu_ptr(&sp_bound_timer, i));
}

static inline bool sp_is_fair(struct task_struct *p)
{
	const struct sched_class *fair = READ_ONCE(sp_fair_class);

	return fair ? p->sched_class == fair : !rt_prio(p->prio) && !dl_prio(p->prio);
}

bool sp_task_fair(struct task_struct *p)
{
	return sp_is_fair(p);
}

bool sp_task_delayed(struct task_struct *p)
{
	return sp_se_delayed(p);
}

/* @cpu's runqueue, once a probe has seen it (runqueues is not exported). */
struct rq *sp_rq(unsigned int cpu)
{
	return cpu < NR_CPUS ? READ_ONCE(sp_rqs[cpu]) : NULL;
}

/*
 * The scheduler's probes run at every enqueue, dequeue and pick in the
 * system, almost always for a task that does not matter. Each tests the lanes
 * inline and leaves the rest to a noinline function, so that test is all an
 * unrelated task pays: no register saves, no stack frame.
 */

/* Boosted tasks, and critical threads inside a tracked wait. */
static inline bool sp_task_may_matter(struct task_struct *p)
{
	return (sp_boosting() && sp_may_be_boosted(p->pid)) || sp_may_be_waiting(p->pid);
}

static noinline void sp_enqueue(struct rq *rq, struct task_struct *p)
{
	if (!sp_is_fair(p))
		return;
	if (sp_hook_enqueue(sp_now(), cpu_of(rq), p->pid, p, rq->curr->pid))
		sp_resched_rq(rq);
}

void sp_probe_enqueue(void *d, struct rq *rq, struct task_struct *p,
			     int flags)
{
	SP_COUNT(enqueue);
	WRITE_ONCE(sp_rqs[cpu_of(rq)], rq);
	/* A critical waiter that wakes with no release reported (a PI futex handed over) gets its turn. */
	if (sp_task_may_matter(p))
		sp_enqueue(rq, p);
}

static noinline void sp_dequeue(struct rq *rq, struct task_struct *p, int flags)
{
	if ((flags & DEQUEUE_SLEEP) && sp_may_be_woken(p->pid)) {
		u64 lock = 0;
		/* Only the sleeper itself may read its lock: it is inside the lock's slow path. */
		s32 owner = p == current ? sp_wait_owner_now(&lock) : 0;

		sp_hook_slept(sp_now(), p->pid, lock, owner);
	}
	if (sp_task_may_matter(p))
		sp_hook_dequeue(sp_now(), cpu_of(rq), p->pid);
}

void sp_probe_dequeue(void *d, struct rq *rq, struct task_struct *p,
			     int flags)
{
	SP_COUNT(dequeue);
	if (((flags & DEQUEUE_SLEEP) && sp_may_be_woken(p->pid)) || sp_task_may_matter(p))
		sp_dequeue(rq, p, flags);
}

/*
 * @prev, if CFS is about to run another task while @prev stays queued here (it
 * was preempted) and @prev may be a critical thread inside a tracked wait it
 * has not slept in yet, or on its way back from one (Event::Preempted); else
 * NULL.
 */
static struct task_struct *sp_preempted_waiter(struct rq *rq, struct task_struct *prev,
					       struct task_struct *next)
{
	if (!prev || prev == next || !sp_may_be_waiting(prev->pid))
		return NULL;
	return sp_is_fair(prev) && sp_task_queued_on(rq, prev) ? prev : NULL;
}

/*
 * Keeping the running task skips set_next_entity(), which protects a picked
 * task's slice (RUN_TO_PARITY: se->vlag holds its deadline until the pick
 * after). Once its slice ended, a boosted task is past its deadline and, run
 * ahead of CFS's order, not eligible: EEVDF's update_curr() then reschedules
 * it at every call (did_preempt_short()), and every reschedule picks it again
 * here, a loop measured at one pick per 20 us for a whole 16 ms budget. So a
 * pick that keeps it protects its new slice as set_next_entity() would.
 */
static inline void sp_protect_slice(struct task_struct *p)
{
	p->se.vlag = p->se.deadline;
}

static inline bool sp_boosting_here(struct rq *rq)
{
	return sp_boosting() && sp_cpu_has_work(cpu_of(rq));
}

/* The pick asks the engine about a preempted critical waiter, or this CPU's fast-track work. */
static noinline struct task_struct *sp_pick(struct rq *rq, struct task_struct *next,
					    struct task_struct *prev)
{
	struct task_struct *t, *waiter = sp_preempted_waiter(rq, prev, next);
	u64 deadline = 0;

	if (!waiter && !sp_boosting_here(rq))
		return NULL;
	sp_count(SPP_pick_engine);
	t = sp_hook_pick(sp_now(), rq, cpu_of(rq), next ? next->pid : 0, waiter,
			 waiter ? waiter->pid : 0, &deadline);
	if (deadline)
		sp_arm_bound_timer(deadline);
	/* sp_hook_pick() validated t with sp_task_pickable() under rq's lock. */
	if (t == next)
		return NULL;
	if (t && t == rq->curr)
		sp_protect_slice(t);
	return t;
}

/* The task to run instead of CFS's choice @next (NULL: keep it); @prev ran until now. */
static __always_inline struct task_struct *sp_replace_next(struct rq *rq, struct task_struct *next,
							   struct task_struct *prev)
{
	if (next && unlikely(!READ_ONCE(sp_fair_class)))
		WRITE_ONCE(sp_fair_class, next->sched_class);
	if ((prev && prev != next && sp_may_be_waiting(prev->pid)) || sp_boosting_here(rq))
		return sp_pick(rq, next, prev);
	return NULL;
}

static noinline void sp_preempt_boosted(struct rq *rq, struct task_struct *p, bool *preempt)
{
	if (sp_hook_preempt(sp_now(), cpu_of(rq), rq->curr->pid, p->pid))
		*preempt = true;
}

static __always_inline void sp_preempt(struct rq *rq, struct task_struct *p, bool *preempt)
{
	if (sp_boosting() && sp_may_be_boosted(p->pid))
		sp_preempt_boosted(rq, p, preempt);
}

#ifdef SP_ACK_6_6
/*
 * android15-6.6 calls this hook twice in pick_next_task_fair(). Only the
 * group-scheduling call (!simple) has CFS's choice in *p and lets the
 * kernel switch entities with *se; on the simple path the probe would
 * have to call set_next_entity() itself, which GKI does not export, so
 * the fast track leaves that path alone.
 */
void sp_probe_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct sched_entity **se, bool *repick, bool simple,
			   struct task_struct *prev)
{
	SP_COUNT(replace_next);
	struct task_struct *t;

	if (simple)
		return;
	t = sp_replace_next(rq, *p, prev);
	if (t) {
		*p = t;
		*se = &t->se;
		*repick = true;
	}
}

void sp_probe_preempt(void *d, struct rq *rq, struct task_struct *p,
		      bool *preempt, bool *nopreempt, int wake_flags,
		      struct sched_entity *se, struct sched_entity *pse,
		      int next_buddy_marked)
{
	SP_COUNT(preempt);
	sp_preempt(rq, p, preempt);
}
#else
void sp_probe_replace_next(void *d, struct rq *rq,
				  struct task_struct **p,
				  struct task_struct *prev)
{
	SP_COUNT(replace_next);
	struct task_struct *t = sp_replace_next(rq, *p, prev);

	if (t)
		*p = t;
}

void sp_probe_preempt(void *d, struct rq *rq, struct task_struct *p,
			     bool *preempt, bool *nopreempt, int wake_flags,
			     struct sched_entity *se, struct sched_entity *pse)
{
	SP_COUNT(preempt);
	sp_preempt(rq, p, preempt);
}
#endif

static bool sp_rq_idle(struct rq *rq)
{
	return READ_ONCE(rq->curr) == rq->idle && !READ_ONCE(rq->nr_running) &&
	       !READ_ONCE(rq->ttwu_pending);
}

void sp_probe_select(void *d, struct task_struct *p, int prev_cpu,
			    int sd_flag, int wake_flags, int *new_cpu)
{
	SP_COUNT(select);
	u64 idle = 0, allowed = 0;
	s32 cpu;
	int c;

	/* The idle scan below is for boosted tasks only. */
	if (!sp_boosting() || prev_cpu < 0 || !sp_may_be_boosted(p->pid))
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

void sp_probe_tick(void *d, struct rq *rq)
{
	SP_COUNT(tick);
	WRITE_ONCE(sp_rqs[cpu_of(rq)], rq);
	if (!(sp_boosting() && sp_cpu_has_work(cpu_of(rq))) && !sp_gate(SP_GATE_REGRANT))
		return;
	sp_count(SPP_tick_engine);
	if (sp_hook_tick(sp_now(), rq, cpu_of(rq), rq->curr->pid))
		sp_resched_rq(rq);
}

#ifdef CONFIG_UCLAMP_TASK
/* Mirrors of kernel/sched/core.c's private bucket arithmetic (uclamp_bucket_id()). */
#define SP_UCLAMP_BUCKET_DELTA DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)

static unsigned int sp_uclamp_bucket_id(unsigned int value)
{
	return min_t(unsigned int, value / SP_UCLAMP_BUCKET_DELTA, UCLAMP_BUCKETS - 1);
}

/*
 * uclamp_eff_get(): a boosted task's uclamp.min is raised to the engine's
 * boost_uclamp_min for as long as its grant lasts. A probe before this one
 * (a SoC vendor's) may have answered already: its value is only raised.
 * Otherwise the base is the task's own request; the cgroup restriction
 * (uclamp_tg_restrict(), static) is not applied to a boosted task. The
 * system default bound (uc_max) always is.
 */
void sp_probe_uclamp_eff_get(void *d, struct task_struct *p, enum uclamp_id clamp_id,
			     struct uclamp_se *uc_max, struct uclamp_se *uc_eff, int *ret)
{
	SP_COUNT(uclamp_eff_get);
	unsigned int v;

	if (clamp_id != UCLAMP_MIN || !sp_boosting() || !sp_may_be_boosted(p->pid))
		return;
	v = sp_hook_uclamp_min(p->pid);
	if (!v)
		return;
	if (!*ret)
		*uc_eff = p->uclamp_req[UCLAMP_MIN];
	v = min_t(unsigned int, max_t(unsigned int, uc_eff->value, v), uc_max->value);
	uc_eff->value = v;
	uc_eff->bucket_id = sp_uclamp_bucket_id(v);
	*ret = 1;
}
#endif

/*
 * update_misfit_status(): a boosted blocker off the fast CPUs does not fit its
 * CPU, whatever its utilization says, so an idle CPU of higher capacity pulls
 * it at its next balance (by active balance while it runs). Other tasks keep
 * the kernel's own test. task_h_load() is private to fair.c; the task's own
 * load is what the balancer compares, and a blocker's is never zero here.
 */
static noinline void sp_update_misfit(struct task_struct *p, struct rq *rq, bool *need_update)
{
	if (!sp_is_fair(p) || !sp_hook_misfit(p->pid, cpu_of(rq)))
		return;
	rq->misfit_task_load = max_t(unsigned long, READ_ONCE(p->se.avg.load_avg), 1);
	*need_update = false;
}

void sp_probe_update_misfit_status(void *d, struct task_struct *p, struct rq *rq,
				   bool *need_update)
{
	SP_COUNT(update_misfit_status);
	if (p && sp_boosting() && sp_may_be_boosted(p->pid))
		sp_update_misfit(p, rq, need_update);
}

/*
 * can_migrate_task(): an active balance (the stopper taking a running misfit
 * blocker off its CPU; the source runqueue's active_balance is set while it
 * runs) keeps the blocker off the CPUs the critical threads wait on: they
 * resume there the moment it releases. A queued blocker, which cannot run
 * where it is, may go anywhere.
 */
void sp_probe_can_migrate_task(void *d, struct task_struct *p, int dst_cpu, int *can_migrate)
{
	SP_COUNT(can_migrate_task);
	unsigned int src = task_cpu(p);
	struct rq *rq;

	if (!*can_migrate || dst_cpu < 0 || !sp_boosting() || !sp_may_be_boosted(p->pid))
		return;
	/* runqueues is not exported: the enqueue probe has recorded the source's. */
	rq = src < NR_CPUS ? READ_ONCE(sp_rqs[src]) : NULL;
	if (!sp_hook_may_migrate(p->pid, src, dst_cpu, rq && READ_ONCE(rq->active_balance)))
		*can_migrate = 0;
}

void sp_probe_free_task(void *d, struct task_struct *p)
{
	SP_COUNT(free_task);
	if (!sp_gate(SP_GATE_TASKS))
		return;
	sp_hook_task_free(sp_now(), p->pid, p);
}
