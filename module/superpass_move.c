// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_move.c: moving a task to another CPU now, for the engine's pushes.
 *
 * The engine pushes a blocker it has just boosted from a slow CPU to a faster
 * one, and sends it back when its boost ends (superpass-core: pushes.rs,
 * fasttrack/misfit.rs). The Rust side decides under the engine lock, where no
 * runqueue may be taken and where a runqueue lock may already be held (a
 * dequeue or tick probe); so a move is only requested there. An irq_work then
 * moves a queued task at once, under the two runqueue locks in turn, and
 * hands a running one to the CPU stopper of its CPU, which preempts it and
 * moves it the same way, as mainline's migration_cpu_stop() and vendor
 * schedulers' active migration do.
 *
 * At most SP_MAX_MOVES moves are in flight; a request beyond them is dropped
 * (the task stays where it is). Each holds a reference to its task until the
 * stopper has run.
 */
#include <linux/irq_work.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/smp.h>
#include <linux/stop_machine.h>
#include <linux/cpumask.h>
/* kernel/sched/sched.h needs task_cpu_possible() from here. */
#include <linux/mmu_context.h>

#include <kernel/sched/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

/* The same bound as superpass-core's MAX_PUSHED: pushes and push-backs away at once. */
#define SP_MAX_MOVES 8

/* A slot is filled (FILLING), waits for the irq_work (PENDING), then for the stopper. */
enum sp_move_state { SP_MOVE_FREE, SP_MOVE_FILLING, SP_MOVE_PENDING, SP_MOVE_QUEUED };

/*
 * A requested move of @p to @dst, valid only while @p is still on @expect
 * (any CPU if negative).
 */
struct sp_move {
	struct cpu_stop_work work;
	struct task_struct *p;
	int dst;
	int expect;
	atomic_t state;
};

static struct sp_move sp_moves[SP_MAX_MOVES];
static void sp_moves_queue(struct irq_work *w);
static DEFINE_IRQ_WORK(sp_moves_irq, sp_moves_queue);

enum sp_move_result { SP_MOVED, SP_MOVE_STALE, SP_MOVE_RUNNING };

/*
 * Moves @m's task to its CPU now if it is queued, not running, where the
 * request expects it and still allowed there; SP_MOVE_RUNNING if it runs (only
 * its CPU's stopper can take it off). Takes p->pi_lock, then each runqueue's
 * lock in turn, as migration_cpu_stop() does; no runqueue lock may be held.
 */
static enum sp_move_result sp_move_now(struct sp_move *m)
{
	struct task_struct *p = m->p;
	struct rq *src_rq, *dst_rq = sp_rq(m->dst);
	enum sp_move_result r = SP_MOVE_STALE;
	unsigned long flags;
	struct rq_flags rf;
	int src;

	raw_spin_lock_irqsave(&p->pi_lock, flags);
	src = task_cpu(p);
	src_rq = sp_rq(src);
	if (!src_rq || !dst_rq)
		goto out;
	rq_lock(src_rq, &rf);
	if (src == m->dst || (m->expect >= 0 && m->expect != src) ||
	    !task_on_rq_queued(p) || is_migration_disabled(p) || !sp_task_fair(p) ||
	    sp_task_delayed(p) || !cpu_active(m->dst) || !cpumask_test_cpu(m->dst, p->cpus_ptr)) {
		rq_unlock(src_rq, &rf);
		goto out;
	}
	if (task_on_cpu(src_rq, p)) {
		rq_unlock(src_rq, &rf);
		r = SP_MOVE_RUNNING;
		goto out;
	}
	update_rq_clock(src_rq);
	deactivate_task(src_rq, p, DEQUEUE_NOCLOCK);
	set_task_cpu(p, m->dst);
	rq_unlock(src_rq, &rf);
	rq_lock(dst_rq, &rf);
	activate_task(dst_rq, p, 0);
#ifdef SP_ACK_6_6
	check_preempt_curr(dst_rq, p, 0);
#else
	wakeup_preempt(dst_rq, p, 0);
#endif
	rq_unlock(dst_rq, &rf);
	r = SP_MOVED;
out:
	raw_spin_unlock_irqrestore(&p->pi_lock, flags);
	return r;
}

/* Ends a request: drops its task reference and frees its slot. */
static void sp_move_finish(struct sp_move *m, enum sp_move_result r)
{
	sp_count(r == SP_MOVED ? SPP_move_done : SPP_move_stale);
	put_task_struct(m->p);
	atomic_set_release(&m->state, SP_MOVE_FREE);
}

/*
 * The stopper of the task's CPU runs this: the task is off that CPU now (the
 * stopper preempted it), so it moves as a queued task does.
 */
static int sp_move_stop(void *arg)
{
	struct sp_move *m = arg;
	enum sp_move_result r = sp_move_now(m);

	sp_move_finish(m, r == SP_MOVED ? SP_MOVED : SP_MOVE_STALE);
	return 0;
}

/*
 * In hardirq, with no runqueue lock held: moves each pending task that is
 * queued at once, and hands one that runs to its CPU's stopper, so that a
 * queued task's move preempts nothing.
 */
static void sp_moves_queue(struct irq_work *w)
{
	int i;

	for (i = 0; i < SP_MAX_MOVES; i++) {
		struct sp_move *m = &sp_moves[i];
		enum sp_move_result r;

		if (atomic_read_acquire(&m->state) != SP_MOVE_PENDING)
			continue;
		atomic_set(&m->state, SP_MOVE_QUEUED);
		r = sp_move_now(m);
		if (r != SP_MOVE_RUNNING) {
			sp_move_finish(m, r);
			continue;
		}
		sp_count(SPP_move_stopper);
		if (!stop_one_cpu_nowait(task_cpu(m->p), sp_move_stop, m, &m->work))
			sp_move_finish(m, SP_MOVE_STALE);
	}
}

/*
 * Requests that @task move to @dst if it is still on CPU @expect (any if
 * negative). Safe in any context, runqueue locks held or not; false if every
 * slot is busy or @dst is out of range.
 */
bool sp_move_task(void *task, u32 dst, s32 expect)
{
	struct task_struct *p = task;
	int i;

	if (dst >= nr_cpu_ids)
		return false;
	for (i = 0; i < SP_MAX_MOVES; i++) {
		struct sp_move *m = &sp_moves[i];

		if (atomic_cmpxchg(&m->state, SP_MOVE_FREE, SP_MOVE_FILLING) != SP_MOVE_FREE)
			continue;
		get_task_struct(p);
		m->p = p;
		m->dst = dst;
		m->expect = expect;
		atomic_set_release(&m->state, SP_MOVE_PENDING);
		sp_count(SPP_move_request);
		irq_work_queue(&sp_moves_irq);
		return true;
	}
	return false;
}

/*
 * What a push may choose from, read racily without runqueue locks: the idle
 * CPUs @task may use (*@idle) and, for the other busy ones, the fair task
 * running there (@cpus, @tids, @prios: its static priority), at most @max of
 * them. Skips @src. Returns how many.
 */
u32 sp_push_view(void *task, u32 src, u64 *idle, u8 *cpus, s32 *tids, u8 *prios, u32 max)
{
	struct task_struct *p = task;
	u32 n = 0;
	int c;

	*idle = 0;
	rcu_read_lock();
	for_each_cpu_and(c, p->cpus_ptr, cpu_active_mask) {
		struct rq *rq = sp_rq(c);
		struct task_struct *curr;

		if (c >= 64 || n >= max)
			break;
		if (c == src || !rq)
			continue;
		curr = READ_ONCE(rq->curr);
		if (curr == rq->idle) {
			if (!READ_ONCE(rq->nr_running) && !READ_ONCE(rq->ttwu_pending))
				*idle |= 1ULL << c;
			continue;
		}
		if (!sp_task_fair(curr))
			continue;
		cpus[n] = c;
		tids[n] = READ_ONCE(curr->pid);
		prios[n] = READ_ONCE(curr->static_prio);
		n++;
	}
	rcu_read_unlock();
	return n;
}

/* True if @task is running on a CPU now (a racy read). */
bool sp_task_running(void *task)
{
	return READ_ONCE(((struct task_struct *)task)->on_cpu);
}

/* Waits for the moves in flight (module exit, hooks detached). */
void sp_moves_exit(void)
{
	int i;

	irq_work_sync(&sp_moves_irq);
	for (i = 0; i < SP_MAX_MOVES; i++) {
		int spins = 1000000;

		while (atomic_read(&sp_moves[i].state) != SP_MOVE_FREE && --spins)
			cpu_relax();
	}
}
