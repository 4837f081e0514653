// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_attach.c: attaching superpass.ko's probes to the vendor hooks.
 *
 * Every hook is attached at load, each on its own (a hook another module owns
 * is skipped, not fatal), and the mechanisms whose hooks all attached are
 * reported to the engine. The restricted scheduler hooks then stay attached
 * for good (ACK never detaches them).
 *
 * The probes of every lock operation (superpass_core::probes: the mutex-owner
 * and rwsem-writer hooks, and the rwsem-reader hooks, which run on every
 * mutex_lock, down_read and page fault) are then attached only while the
 * engine wants them: while a tracked wait or a boost needs them, and
 * probe_linger_ns after. Registration sleeps, and the engine's wish is
 * published under its lock from any context (runqueue locks included), so it
 * reaches a work item through an irq_work, as schedutil defers its frequency
 * changes. While a group is attached the work item asks the engine again
 * every half linger, so a group lapses at most 1.5 lingers after its need.
 */
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/futex.h>
#include <trace/hooks/rwsem.h>
#include <trace/hooks/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

enum sp_hook_id {
	SPH_MUTEX_WAIT_START, SPH_MUTEX_WAIT_FINISH,
	SPH_RWSEM_READ_WAIT_START, SPH_RWSEM_READ_WAIT_FINISH,
	SPH_RWSEM_WRITE_WAIT_START, SPH_RWSEM_WRITE_WAIT_FINISH,
	SPH_READER_OWNED, SPH_READER_CLEARED,
	SPH_WRITER_OWNED, SPH_WRITER_CLEARED, SPH_RWSEM_WAKE_FINISH,
	SPH_MUTEX_UNLOCK_SLOWPATH, SPH_MUTEX_STARTTIME,
	SPH_RTMUTEX_WAIT_START, SPH_RTMUTEX_WAIT_FINISH,
	SPH_DO_FUTEX, SPH_FUTEX_WAIT_START, SPH_FUTEX_WAIT_END,
	SPH_FUTEX_WAKE_TRAVERSE, SPH_FUTEX_WAKE_THIS, SPH_FUTEX_WAKE_FINISH,
	SPH_FREE_TASK,
	/* Restricted hooks from here on. */
	SPH_ENQUEUE, SPH_DEQUEUE, SPH_PICK, SPH_PREEMPT, SPH_SELECT, SPH_TICK,
	SPH_UCLAMP, SPH_MISFIT, SPH_CAN_MIGRATE,
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
	{ SP_MECH_RWSEM_WRITER, BIT(SPH_WRITER_OWNED) | BIT(SPH_WRITER_CLEARED) |
				BIT(SPH_RWSEM_WAKE_FINISH) },
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
	{ SP_MECH_UCLAMP, BIT(SPH_UCLAMP) },
	{ SP_MECH_MISFIT, BIT(SPH_MISFIT) | BIT(SPH_CAN_MIGRATE) },
};

/* ---- the per-lock-operation probes, attached on demand ---- */

/* Hooks attached at load: a group only ever re-attaches these. */
static unsigned long sp_avail;
/* Serializes group changes and module exit. */
static DEFINE_MUTEX(sp_probes_mutex);
/* The groups attached (SP_PROBES_*; sp_probes_mutex), and a copy for sp_probes_want(). */
static u32 sp_probes_attached;
static atomic_t sp_probes_mirror = ATOMIC_INIT(0);
static bool sp_probes_stopping;

static void sp_probes_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(sp_probes_work, sp_probes_fn);

/*
 * The CPU to run the group changes on: the next online CPU after this one.
 * A change patches kernel text, which takes milliseconds on some machines
 * (and in an emulator), and it is asked for by a critical thread's wait on
 * this CPU: its highpri kworker must not take the CPU the critical thread
 * is about to need.
 */
static int sp_probes_cpu(void)
{
	int self = raw_smp_processor_id(), c;

	for_each_online_cpu(c)
		if (c > self)
			return c;
	for_each_online_cpu(c)
		if (c != self)
			return c;
	return self;
}

static void sp_probes_queue(unsigned long delay)
{
	mod_delayed_work_on(sp_probes_cpu(), system_highpri_wq, &sp_probes_work, delay);
}

static void sp_probes_kick(struct irq_work *w)
{
	sp_probes_queue(0);
}

static DEFINE_IRQ_WORK(sp_probes_irq, sp_probes_kick);

void sp_probes_want(u32 probes)
{
	/*
	 * A rise, or a lapse some engine call noticed first (the engine was
	 * disabled, its tunables changed, a linger ran out); the worker's own
	 * rechecks notice a lapse while nothing calls the engine.
	 */
	if (probes != (u32)atomic_read(&sp_probes_mirror))
		irq_work_queue(&sp_probes_irq);
}

u32 sp_probes_attached_mask(void)
{
	return atomic_read(&sp_probes_mirror);
}

/* Each group's hooks, as X(id, hook, probe) entries. */
#define SP_OWNER_HOOKS(X)							\
	{									\
		X(SPH_MUTEX_STARTTIME, android_vh_record_mutex_lock_starttime,	\
		  sp_probe_mutex_starttime)					\
		X(SPH_WRITER_OWNED, android_vh_record_rwsem_writer_owned,	\
		  sp_probe_writer_owned)					\
		X(SPH_WRITER_CLEARED, android_vh_clear_rwsem_writer_owned,	\
		  sp_probe_writer_cleared)					\
	}
#define SP_READER_HOOKS(X)							\
	{									\
		X(SPH_READER_OWNED, android_vh_record_rwsem_reader_owned,	\
		  sp_probe_reader_owned)					\
		X(SPH_READER_CLEARED, android_vh_clear_rwsem_reader_owned,	\
		  sp_probe_reader_cleared)					\
	}
#define SP_GROUP_ATTACH(id, hook, probe)				\
	if (test_bit(id, &sp_avail))					\
		SP_ATTACH(id, hook, probe);
#define SP_GROUP_DETACH(id, hook, probe)				\
	SP_DETACH(id, hook, probe);					\
	__clear_bit(id, &sp_attached);

/* Attaches and detaches groups to match @want (sp_probes_mutex held). */
static void sp_probes_set(u32 want)
{
	u32 add = want & ~sp_probes_attached, drop = sp_probes_attached & ~want;

	if (add & SP_PROBES_OWNERS)
		SP_OWNER_HOOKS(SP_GROUP_ATTACH)
	if (add & SP_PROBES_READERS)
		SP_READER_HOOKS(SP_GROUP_ATTACH)
	if (drop & SP_PROBES_OWNERS)
		SP_OWNER_HOOKS(SP_GROUP_DETACH)
	if (drop & SP_PROBES_READERS)
		SP_READER_HOOKS(SP_GROUP_DETACH)
	sp_probes_attached = want;
	atomic_set(&sp_probes_mirror, want);
	if (add | drop)
		sp_trace_probes(want);
	if (!drop)
		return;
	/* No probe of a dropped group runs past this point. */
	tracepoint_synchronize_unregister();
	/* Readers that leave from now on are not seen: their entries would go stale. */
	if (drop & SP_PROBES_READERS)
		sp_readers_clear();
}

static void sp_probes_fn(struct work_struct *work)
{
	u64 recheck = 0;
	u32 want = sp_probes_poll(sp_now(), &recheck) & (SP_PROBES_OWNERS | SP_PROBES_READERS);

	mutex_lock(&sp_probes_mutex);
	if (!sp_probes_stopping) {
		sp_probes_set(want);
		if (sp_probes_attached)
			sp_probes_queue(nsecs_to_jiffies(recheck) + 1);
	}
	mutex_unlock(&sp_probes_mutex);
}

/*
 * From process context: brings the groups up to the engine's wish before
 * returning, so that a thread registered as critical has its rwsem readers
 * recorded from the moment its registration returns.
 */
void sp_probes_sync(void)
{
	sp_probes_queue(0);
	flush_delayed_work(&sp_probes_work);
}

/* Everything was attached at load: let the engine (disabled so far) say what to keep. */
static void sp_probes_start(void)
{
	sp_avail = sp_attached;
	sp_probes_attached = SP_PROBES_OWNERS | SP_PROBES_READERS;
	atomic_set(&sp_probes_mirror, sp_probes_attached);
	sp_probes_queue(0);
}

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
	SP_ATTACH(SPH_RWSEM_WAKE_FINISH, android_vh_rwsem_wake_finish, sp_probe_rwsem_wake_finish);
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
#ifdef CONFIG_UCLAMP_TASK
	SP_ATTACH(SPH_UCLAMP, android_rvh_uclamp_eff_get, sp_probe_uclamp_eff_get);
#endif
	SP_ATTACH(SPH_MISFIT, android_rvh_update_misfit_status, sp_probe_update_misfit_status);
	SP_ATTACH(SPH_CAN_MIGRATE, android_rvh_can_migrate_task, sp_probe_can_migrate_task);
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
	sp_probes_start();
}

void sp_detach_normal(void)
{
	mutex_lock(&sp_probes_mutex);
	sp_probes_stopping = true;
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
	SP_DETACH(SPH_RWSEM_WAKE_FINISH, android_vh_rwsem_wake_finish, sp_probe_rwsem_wake_finish);
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
	mutex_unlock(&sp_probes_mutex);
	/* No probe runs, and so nothing publishes, past this point. */
	tracepoint_synchronize_unregister();
	irq_work_sync(&sp_probes_irq);
	cancel_delayed_work_sync(&sp_probes_work);
}
