// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_hooks.c: the C companion of superpass.ko, its common part.
 *
 * What Rust cannot (or should not) express in 6.12 lives in C: the vendor-hook
 * probes and their registration (register_trace_android_* are static
 * inlines), reads of lock owners and of task/runqueue internals, CPU kicks,
 * the engine's raw spinlock, the superpass:* tracepoints and the misc
 * device. This file holds the engine lock and its lock-free mirrors, the
 * helpers Rust calls that belong to no subsystem, the tracepoints and the
 * hook registration; the probes are in superpass_lock.c and
 * superpass_sched.c, the device in superpass_dev.c.
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
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/siphash.h>
#include <linux/capability.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/futex.h>
#include <trace/hooks/rwsem.h>
#include <trace/hooks/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

static DEFINE_RAW_SPINLOCK(sp_lock);
atomic_t sp_gates = ATOMIC_INIT(0);
atomic64_t sp_interest_lanes = ATOMIC64_INIT(0);
atomic64_t sp_boosted_lanes = ATOMIC64_INIT(0);
atomic64_t sp_lock_lanes = ATOMIC64_INIT(0);
atomic64_t sp_woken_lanes = ATOMIC64_INIT(0);

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

void sp_publish(u32 nr_boosted, u32 nr_critical, u32 nr_waits, u32 nr_futex_waits,
		u64 interest_lanes, u64 boosted_lanes, u64 lock_lanes, u64 woken_lanes,
		bool regrants, bool enabled)
{
	u32 gates = 0;

	if (enabled && (nr_critical || nr_boosted))
		gates |= SP_GATE_WAITS;
	if (enabled && nr_critical)
		gates |= SP_GATE_OWNERS;
	if (enabled && (nr_boosted || nr_waits))
		gates |= SP_GATE_OWNERSHIP;
	if (enabled && nr_futex_waits)
		gates |= SP_GATE_FUTEX_WAITS;
	if (nr_boosted)
		gates |= SP_GATE_BOOSTING;
	if (nr_critical || nr_boosted)
		gates |= SP_GATE_TASKS;
	if (enabled && woken_lanes)
		gates |= SP_GATE_WOKEN;
	if (enabled && regrants)
		gates |= SP_GATE_REGRANT;
	/* The reader record is kept only while readers are recorded (sp_owners_matter()). */
	if (sp_owners_matter() && !(gates & SP_GATE_OWNERS))
		sp_readers_clear();
	atomic64_set(&sp_interest_lanes, interest_lanes);
	atomic64_set(&sp_boosted_lanes, boosted_lanes);
	atomic64_set(&sp_lock_lanes, lock_lanes);
	atomic64_set(&sp_woken_lanes, woken_lanes);
	atomic_set(&sp_gates, gates);
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
 * Tracepoints name a lock by a keyed hash of its address, stable for the
 * boot: trace readers can still match events on one lock, but the trace does
 * not hand kernel addresses (a KASLR leak) to whoever may read it.
 */
static siphash_key_t sp_lock_key;

void sp_trace_init(void)
{
	get_random_bytes(&sp_lock_key, sizeof(sp_lock_key));
}

static u64 sp_lock_id(u64 lock)
{
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

/* ---------------- hook registration ---------------- */

enum sp_hook_id {
	SPH_MUTEX_WAIT_START, SPH_MUTEX_WAIT_FINISH,
	SPH_RWSEM_READ_WAIT_START, SPH_RWSEM_READ_WAIT_FINISH,
	SPH_RWSEM_WRITE_WAIT_START, SPH_RWSEM_WRITE_WAIT_FINISH,
	SPH_READER_OWNED, SPH_READER_CLEARED,
	SPH_WRITER_OWNED, SPH_WRITER_CLEARED,
	SPH_MUTEX_UNLOCK_SLOWPATH, SPH_MUTEX_STARTTIME,
	SPH_RTMUTEX_WAIT_START, SPH_RTMUTEX_WAIT_FINISH,
	SPH_DO_FUTEX, SPH_FUTEX_WAIT_START, SPH_FUTEX_WAIT_END,
	SPH_FUTEX_WAKE_TRAVERSE, SPH_FUTEX_WAKE_THIS, SPH_FUTEX_WAKE_FINISH,
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
	{ SP_MECH_FUTEX_HINT, BIT(SPH_DO_FUTEX) | BIT(SPH_FUTEX_WAIT_START) | BIT(SPH_FUTEX_WAIT_END) },
	{ SP_MECH_FUTEX_WOKEN, BIT(SPH_FUTEX_WAKE_TRAVERSE) | BIT(SPH_FUTEX_WAKE_THIS) |
			       BIT(SPH_FUTEX_WAKE_FINISH) },
	{ SP_MECH_PI_FUTEX, BIT(SPH_RTMUTEX_WAIT_START) | BIT(SPH_RTMUTEX_WAIT_FINISH) },
};

/*
 * Attaches each hook on its own (a hook that is taken is skipped, not fatal)
 * and reports the active mechanisms and those another module blocked.
 */
void sp_attach_all(u64 *active_mask, u64 *busy_mask)
{
	int i;

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
	SP_ATTACH(SPH_RTMUTEX_WAIT_START, android_vh_rtmutex_wait_start, sp_probe_rtmutex_wait_start);
	SP_ATTACH(SPH_RTMUTEX_WAIT_FINISH, android_vh_rtmutex_wait_finish, sp_probe_rtmutex_wait_finish);
	SP_ATTACH(SPH_DO_FUTEX, android_vh_do_futex, sp_probe_do_futex);
	SP_ATTACH(SPH_FUTEX_WAIT_START, android_vh_futex_wait_start, sp_probe_futex_wait_start);
	SP_ATTACH(SPH_FUTEX_WAIT_END, android_vh_futex_wait_end, sp_probe_futex_wait_end);
	SP_ATTACH(SPH_FUTEX_WAKE_TRAVERSE, android_vh_futex_wake_traverse_plist, sp_probe_futex_wake_traverse);
	SP_ATTACH(SPH_FUTEX_WAKE_THIS, android_vh_futex_wake_this, sp_probe_futex_wake_this);
	SP_ATTACH(SPH_FUTEX_WAKE_FINISH, android_vh_futex_wake_up_q_finish, sp_probe_futex_wake_up_q_finish);
	SP_ATTACH(SPH_FREE_TASK, android_vh_free_task, sp_probe_free_task);

	/* Scheduler hooks: restricted, at most two probes each, never detached. */
	SP_ATTACH(SPH_ENQUEUE, android_rvh_enqueue_task, sp_probe_enqueue);
	SP_ATTACH(SPH_DEQUEUE, android_rvh_dequeue_task, sp_probe_dequeue);
	SP_ATTACH(SPH_PICK, android_rvh_replace_next_task_fair, sp_probe_replace_next);
#ifdef SP_ACK_6_6
	/* 6.6 has no _fair suffix on the wakeup-preemption hook. */
	SP_ATTACH(SPH_PREEMPT, android_rvh_check_preempt_wakeup, sp_probe_preempt);
#else
	SP_ATTACH(SPH_PREEMPT, android_rvh_check_preempt_wakeup_fair, sp_probe_preempt);
#endif
	SP_ATTACH(SPH_SELECT, android_rvh_select_task_rq_fair, sp_probe_select);
	SP_ATTACH(SPH_TICK, android_rvh_tick_entry, sp_probe_tick);
	/*
	 * Restricted probes are never detached and ACK pins nobody: once one
	 * is attached this module's text must outlive any rmmod.
	 */
	if (sp_attached & ~(BIT(SPH_ENQUEUE) - 1))
		__module_get(THIS_MODULE);

	*active_mask = 0;
	*busy_mask = 0;
	for (i = 0; i < ARRAY_SIZE(sp_mechs); i++) {
		if ((sp_attached & sp_mechs[i].hooks) == sp_mechs[i].hooks)
			*active_mask |= sp_mechs[i].mech;
		if (sp_taken & sp_mechs[i].hooks)
			*busy_mask |= sp_mechs[i].mech;
	}
}

void sp_detach_normal(void)
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
	SP_DETACH(SPH_RTMUTEX_WAIT_START, android_vh_rtmutex_wait_start, sp_probe_rtmutex_wait_start);
	SP_DETACH(SPH_RTMUTEX_WAIT_FINISH, android_vh_rtmutex_wait_finish, sp_probe_rtmutex_wait_finish);
	SP_DETACH(SPH_DO_FUTEX, android_vh_do_futex, sp_probe_do_futex);
	SP_DETACH(SPH_FUTEX_WAIT_START, android_vh_futex_wait_start, sp_probe_futex_wait_start);
	SP_DETACH(SPH_FUTEX_WAIT_END, android_vh_futex_wait_end, sp_probe_futex_wait_end);
	SP_DETACH(SPH_FUTEX_WAKE_TRAVERSE, android_vh_futex_wake_traverse_plist, sp_probe_futex_wake_traverse);
	SP_DETACH(SPH_FUTEX_WAKE_THIS, android_vh_futex_wake_this, sp_probe_futex_wake_this);
	SP_DETACH(SPH_FUTEX_WAKE_FINISH, android_vh_futex_wake_up_q_finish, sp_probe_futex_wake_up_q_finish);
	SP_DETACH(SPH_FREE_TASK, android_vh_free_task, sp_probe_free_task);
	tracepoint_synchronize_unregister();
}
