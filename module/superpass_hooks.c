// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_hooks.c: the C companion of superpass.ko, its common part.
 *
 * What Rust cannot (or should not) express in 6.12 lives in C: the vendor-hook
 * probes and their registration (register_trace_android_* are static
 * inlines), reads of lock owners and of task/runqueue internals, CPU kicks,
 * the engine's raw spinlock, the superpass:* tracepoints and the misc
 * device. This file holds the engine lock and its lock-free mirrors, the
 * helpers Rust calls that belong to no subsystem and the tracepoints; the
 * probes are in superpass_lock.c and superpass_sched.c, their registration
 * in superpass_attach.c, the device in superpass_dev.c.
 *
 * The probes make no scheduling decision: each one extracts plain values
 * (time, TIDs, CPU, lock address, owner) and forwards them to a Rust
 * sp_hook_*() entry point, which drives superpass-core's Engine under the
 * engine lock and answers. What they do decide, lock-free, is which events
 * cannot change anything and need not reach the engine.
 *
 * Locking: the engine lock (sp_lock) is a raw spinlock taken with IRQs saved
 * and is always the innermost lock: probes run under rq locks, lock
 * wait_locks or p->pi_lock, and nothing is taken while sp_lock is held.
 * Nothing here allocates or sleeps in a probe.
 */
#define CREATE_TRACE_POINTS
#include "superpass_trace.h"
#undef CREATE_TRACE_POINTS

#include <linux/module.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/siphash.h>
#include <linux/capability.h>
#include <linux/timekeeping.h>

#include "superpass.h"
#include "superpass_internal.h"

static DEFINE_RAW_SPINLOCK(sp_lock);
atomic_t sp_gates = ATOMIC_INIT(0);
atomic64_t sp_interest_lanes = ATOMIC64_INIT(0);
atomic64_t sp_boosted_lanes = ATOMIC64_INIT(0);
atomic64_t sp_lock_lanes = ATOMIC64_INIT(0);
atomic64_t sp_woken_lanes = ATOMIC64_INIT(0);
atomic64_t sp_work_cpus = ATOMIC64_INIT(0);
atomic64_t sp_waiting_lanes = ATOMIC64_INIT(0);

unsigned long sp_engine_lock(void)
{
	unsigned long flags;

	sp_count(SPP_engine_lock);
	raw_spin_lock_irqsave(&sp_lock, flags);
	return flags;
}

void sp_engine_unlock(unsigned long flags)
{
	raw_spin_unlock_irqrestore(&sp_lock, flags);
}

/*
 * Stores the engine's snapshot (Engine::published(), which decides every
 * bit) for the probes; called with the engine lock held.
 */
void sp_publish(u32 gates, u64 interest_lanes, u64 boosted_lanes, u64 lock_lanes,
		u64 woken_lanes, u64 waiting_lanes, u32 probes, u64 work_cpus)
{
	/* The reader record is kept only while readers are recorded (sp_owners_matter()). */
	if (sp_owners_matter() && !(gates & SP_GATE_OWNERS))
		sp_readers_clear();
	/* Waits are recorded only while the wait probes run (sp_waits_matter()). */
	if (sp_waits_matter() && !(gates & SP_GATE_WAITS))
		sp_waits_clear();
	atomic64_set(&sp_interest_lanes, interest_lanes);
	atomic64_set(&sp_boosted_lanes, boosted_lanes);
	atomic64_set(&sp_lock_lanes, lock_lanes);
	atomic64_set(&sp_woken_lanes, woken_lanes);
	/* Read by every pick and tick on every CPU: stored only when it changes. */
	if (atomic64_read(&sp_work_cpus) != work_cpus)
		atomic64_set(&sp_work_cpus, work_cpus);
	if (atomic64_read(&sp_waiting_lanes) != waiting_lanes)
		atomic64_set(&sp_waiting_lanes, waiting_lanes);
	atomic_set(&sp_gates, gates);
	sp_probes_want(probes);
}

u64 sp_now(void)
{
	return ktime_get_mono_fast_ns();
}

bool sp_capable_sys_nice(void)
{
	return capable(CAP_SYS_NICE);
}

/*
 * The kernel's own TID (init namespace, as the hooks report it) of the thread
 * that the caller's PID namespace calls @tid; 0 if the caller sees no such
 * thread.
 */
s32 sp_tid_to_engine(s32 tid)
{
	struct task_struct *t;
	s32 global;

	rcu_read_lock();
	t = sp_task_named(tid, true);
	global = t ? t->pid : 0;
	rcu_read_unlock();
	return global;
}

/*
 * The TID the caller's PID namespace gives the kernel's thread @tid; 0 if the
 * caller cannot see it. Takes no lock but RCU: called under the engine lock.
 */
s32 sp_tid_to_caller(s32 tid)
{
	struct task_struct *t;
	s32 local;

	rcu_read_lock();
	t = sp_task_named(tid, false);
	local = t ? task_pid_vnr(t) : 0;
	rcu_read_unlock();
	return local;
}

/*
 * Tracepoints name a lock by a keyed hash of its address, stable for the
 * boot: trace readers can still match events on one lock, but the trace does
 * not hand kernel addresses (a KASLR leak) to whoever may read it. A binder
 * call's id is no address (its tag and debug_id, which binder's own
 * tracepoints print), so it is shown as it is: a trace joins it with the
 * binder events.
 */
static siphash_key_t sp_lock_key;

void sp_trace_init(void)
{
	get_random_bytes(&sp_lock_key, sizeof(sp_lock_key));
}

static u64 sp_lock_id(u64 lock)
{
	if ((lock & ~0xffffffffULL) == SP_BINDER_TXN_LOCK_TAG)
		return lock;
	return lock ? siphash_1u64(lock, &sp_lock_key) : 0;
}

void sp_trace_block(s32 waiter, s32 blocker, u64 lock, u32 kind)
{
	trace_superpass_block(waiter, blocker, sp_lock_id(lock), kind);
}

void sp_trace_grant(s32 blocker, s32 waiter, s32 root, u64 lock, u32 depth)
{
	trace_superpass_grant(blocker, waiter, root, sp_lock_id(lock), depth);
}

void sp_trace_revoke(s32 blocker, u32 reason)
{
	trace_superpass_revoke(blocker, reason);
}

void sp_trace_pick(u32 cpu, s32 tid)
{
	trace_superpass_pick(cpu, tid);
}

void sp_trace_queue(u32 cpu, s32 tid, bool run_now)
{
	trace_superpass_queue(cpu, tid, run_now);
}

void sp_trace_throttle(u32 cpu, u64 for_ns)
{
	trace_superpass_throttle(cpu, div_u64(for_ns, NSEC_PER_USEC));
}

void sp_trace_probes(u32 groups)
{
	trace_superpass_probes(groups);
}

void sp_trace_kick(u32 cpu, u32 how)
{
	trace_superpass_kick(cpu, how);
}
