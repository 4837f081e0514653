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
#include <trace/hooks/binder.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/futex.h>
#include <trace/hooks/rwsem.h>
#include <trace/hooks/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

#ifdef SP_ACK_6_6
/* 6.6 has no _fair suffix on the wakeup-preemption hook. */
#define SP_PREEMPT_HOOK android_rvh_check_preempt_wakeup
#else
#define SP_PREEMPT_HOOK android_rvh_check_preempt_wakeup_fair
#endif
#ifdef CONFIG_UCLAMP_TASK
#define SP_IF_UCLAMP(x) x
#else
#define SP_IF_UCLAMP(x)
#endif
#ifdef SP_HAVE_RUST_BINDER
#include <drivers/android/binder/rust_binder.h>
#include <trace/hooks/rust_binder.h>
#define SP_IF_RUST_BINDER(x) x
#else
#define SP_IF_RUST_BINDER(x)
#endif

/*
 * Every hook this module attaches, once: X(id, hook, probe, mechanism,
 * group). A mechanism (SP_MECH_*) is active when every hook that names it is
 * attached. A hook of a probe group (SP_PROBES_*) runs on every lock
 * operation, so it is attached only while the engine wants its group. The
 * normal hooks come first: they are shared with other modules, and detached
 * at exit.
 */
#define SP_NORMAL_HOOKS(X)									\
	X(MUTEX_WAIT_START, android_vh_mutex_wait_start, sp_probe_mutex_wait_start,		\
	  SP_MECH_MUTEX_WAIT, 0)								\
	X(MUTEX_WAIT_FINISH, android_vh_mutex_wait_finish, sp_probe_mutex_wait_finish,		\
	  SP_MECH_MUTEX_WAIT, 0)								\
	X(RWSEM_READ_WAIT_START, android_vh_rwsem_read_wait_start,				\
	  sp_probe_rwsem_read_wait_start, SP_MECH_RWSEM_READ_WAIT, 0)				\
	X(RWSEM_READ_WAIT_FINISH, android_vh_rwsem_read_wait_finish,				\
	  sp_probe_rwsem_wait_finish, SP_MECH_RWSEM_READ_WAIT, 0)				\
	X(RWSEM_WRITE_WAIT_START, android_vh_rwsem_write_wait_start,				\
	  sp_probe_rwsem_write_wait_start, SP_MECH_RWSEM_WRITE_WAIT, 0)				\
	X(RWSEM_WRITE_WAIT_FINISH, android_vh_rwsem_write_wait_finish,				\
	  sp_probe_rwsem_wait_finish, SP_MECH_RWSEM_WRITE_WAIT, 0)				\
	X(READER_OWNED, android_vh_record_rwsem_reader_owned, sp_probe_reader_owned,		\
	  SP_MECH_RWSEM_READERS, SP_PROBES_READERS)						\
	X(READER_CLEARED, android_vh_clear_rwsem_reader_owned,					\
	  sp_probe_reader_cleared, SP_MECH_RWSEM_READERS, SP_PROBES_READERS)			\
	X(WRITER_OWNED, android_vh_record_rwsem_writer_owned, sp_probe_writer_owned,		\
	  SP_MECH_RWSEM_WRITER, SP_PROBES_OWNERS)						\
	X(WRITER_CLEARED, android_vh_clear_rwsem_writer_owned,					\
	  sp_probe_writer_cleared, SP_MECH_RWSEM_WRITER, SP_PROBES_OWNERS)			\
	X(RWSEM_WAKE_FINISH, android_vh_rwsem_wake_finish, sp_probe_rwsem_wake_finish,		\
	  SP_MECH_RWSEM_WRITER, 0)								\
	X(MUTEX_UNLOCK_SLOWPATH, android_vh_mutex_unlock_slowpath,				\
	  sp_probe_mutex_unlock_slowpath, SP_MECH_MUTEX_UNLOCK, 0)				\
	X(MUTEX_STARTTIME, android_vh_record_mutex_lock_starttime,				\
	  sp_probe_mutex_starttime, SP_MECH_MUTEX_UNLOCK, SP_PROBES_OWNERS)			\
	X(RTMUTEX_WAIT_START, android_vh_rtmutex_wait_start,					\
	  sp_probe_rtmutex_wait_start, SP_MECH_PI_FUTEX, 0)					\
	X(RTMUTEX_WAIT_FINISH, android_vh_rtmutex_wait_finish,					\
	  sp_probe_rtmutex_wait_finish, SP_MECH_PI_FUTEX, 0)					\
	X(DO_FUTEX, android_vh_do_futex, sp_probe_do_futex, SP_MECH_FUTEX_HINT, 0)		\
	X(FUTEX_WAIT_START, android_vh_futex_wait_start, sp_probe_futex_wait_start,		\
	  SP_MECH_FUTEX_HINT, 0)								\
	X(FUTEX_WAIT_END, android_vh_futex_wait_end, sp_probe_futex_wait_end,			\
	  SP_MECH_FUTEX_HINT, 0)								\
	X(FUTEX_WAKE_TRAVERSE, android_vh_futex_wake_traverse_plist,				\
	  sp_probe_futex_wake_traverse, SP_MECH_FUTEX_WOKEN, 0)					\
	X(FUTEX_WAKE_THIS, android_vh_futex_wake_this, sp_probe_futex_wake_this,		\
	  SP_MECH_FUTEX_WOKEN, 0)								\
	X(FUTEX_WAKE_FINISH, android_vh_futex_wake_up_q_finish,					\
	  sp_probe_futex_wake_up_q_finish, SP_MECH_FUTEX_WOKEN, 0)				\
	X(FUTEX_QUEUE, android_vh_alter_futex_plist_add, sp_probe_alter_futex_plist_add,	\
	  SP_MECH_FUTEX_QUEUE, 0)								\
	X(FREE_TASK, android_vh_free_task, sp_probe_free_task, SP_MECH_TASK_EXIT, 0)		\
	X(BINDER_TXN_FINISH, android_vh_binder_proc_transaction_finish,				\
	  sp_probe_binder_txn_finish, SP_MECH_BINDER, 0)					\
	X(BINDER_RESTORE_PRIORITY, android_vh_binder_restore_priority,				\
	  sp_probe_binder_restore_priority, SP_MECH_BINDER, 0)					\
	X(BINDER_RECEIVED, android_vh_binder_transaction_received,				\
	  sp_probe_binder_received, SP_MECH_BINDER, 0)						\
	X(BINDER_FREE, android_vh_free_oem_binder_struct, sp_probe_binder_free,		\
	  SP_MECH_BINDER, 0)									\
	SP_IF_RUST_BINDER(X(RUST_BINDER_SET_PRIORITY, android_vh_rust_binder_set_priority,	\
			    sp_probe_rust_binder_set_priority, SP_MECH_RUST_BINDER, 0)		\
			  X(RUST_BINDER_RESTORE_PRIORITY,					\
			    android_vh_rust_binder_restore_priority,				\
			    sp_probe_rust_binder_restore_priority, SP_MECH_RUST_BINDER, 0))	\
	X(PCPU_WQ_ADD, android_vh_percpu_rwsem_wq_add, sp_probe_pcpu_wq_add,			\
	  SP_MECH_PCPU_RWSEM, 0)								\
	X(PCPU_RECORD, android_vh_record_pcpu_rwsem_starttime, sp_probe_pcpu_record,		\
	  SP_MECH_PCPU_RWSEM, SP_PROBES_READERS)						\
	X(PCPU_UP_WRITE, android_vh_percpu_rwsem_up_write, sp_probe_pcpu_up_write,		\
	  SP_MECH_PCPU_RWSEM, 0)
/* The scheduler hooks: restricted, at most two probes each, never detached. */
#define SP_RESTRICTED_HOOKS(X)									\
	X(ENQUEUE, android_rvh_enqueue_task, sp_probe_enqueue, SP_MECH_ENQUEUE, 0)		\
	X(DEQUEUE, android_rvh_dequeue_task, sp_probe_dequeue, SP_MECH_DEQUEUE, 0)		\
	X(PICK, android_rvh_replace_next_task_fair, sp_probe_replace_next,			\
	  SP_MECH_PICK, 0)									\
	X(PREEMPT, SP_PREEMPT_HOOK, sp_probe_preempt, SP_MECH_PREEMPT, 0)			\
	X(SELECT, android_rvh_select_task_rq_fair, sp_probe_select, SP_MECH_SELECT_CPU, 0)	\
	X(TICK, android_rvh_tick_entry, sp_probe_tick, SP_MECH_TICK, 0)				\
	SP_IF_UCLAMP(X(UCLAMP, android_rvh_uclamp_eff_get, sp_probe_uclamp_eff_get,		\
		       SP_MECH_UCLAMP, 0))							\
	X(MISFIT, android_rvh_update_misfit_status, sp_probe_update_misfit_status,		\
	  SP_MECH_MISFIT, 0)									\
	X(CAN_MIGRATE, android_rvh_can_migrate_task, sp_probe_can_migrate_task,			\
	  SP_MECH_MISFIT, 0)

enum sp_hook_id {
#define SP_HOOK_ID(id, hook, probe, mech, group) SPH_##id,
	SP_NORMAL_HOOKS(SP_HOOK_ID)
	SP_RESTRICTED_HOOKS(SP_HOOK_ID)
#undef SP_HOOK_ID
	SPH_NR
};

/* How many normal hooks there are: every id from here on is a restricted hook. */
enum {
#define SP_HOOK_ONE(id, hook, probe, mech, group) + 1
	SP_NR_NORMAL = 0 SP_NORMAL_HOOKS(SP_HOOK_ONE)
#undef SP_HOOK_ONE
};

/* Each hook's mechanism. */
static const u64 sp_hook_mech[SPH_NR] = {
#define SP_HOOK_MECH(id, hook, probe, mech, group) [SPH_##id] = mech,
	SP_NORMAL_HOOKS(SP_HOOK_MECH)
	SP_RESTRICTED_HOOKS(SP_HOOK_MECH)
#undef SP_HOOK_MECH
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

#define SP_ATTACH(id, hook, probe)								\
	sp_note(id, #hook, register_trace_##hook(probe, NULL))
#define SP_DETACH(id, hook, probe)								\
	do {											\
		if (test_bit(id, &sp_attached))							\
			unregister_trace_##hook(probe, NULL);					\
	} while (0)
#define SP_ATTACH_ONE(id, hook, probe, mech, group) SP_ATTACH(SPH_##id, hook, probe);
#define SP_DETACH_ONE(id, hook, probe, mech, group) SP_DETACH(SPH_##id, hook, probe);

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

/* A hook of group @group in @add is attached again, one in @drop detached. */
#define SP_GROUP_ATTACH(id, hook, probe, mech, group)						\
	if (((group) & add) && test_bit(SPH_##id, &sp_avail))					\
		SP_ATTACH(SPH_##id, hook, probe);
#define SP_GROUP_DETACH(id, hook, probe, mech, group)						\
	if ((group) & drop) {									\
		SP_DETACH(SPH_##id, hook, probe);						\
		__clear_bit(SPH_##id, &sp_attached);						\
	}

/* Attaches and detaches groups to match @want (sp_probes_mutex held). */
static void sp_probes_set(u32 want)
{
	u32 add = want & ~sp_probes_attached, drop = sp_probes_attached & ~want;

	SP_NORMAL_HOOKS(SP_GROUP_ATTACH)
	SP_NORMAL_HOOKS(SP_GROUP_DETACH)
	sp_probes_attached = want;
	atomic_set(&sp_probes_mirror, want);
	if (add | drop)
		sp_trace_probes(want);
	if (!drop)
		return;
	/* No probe of a dropped group runs past this point. */
	tracepoint_synchronize_unregister();
	/* Readers that leave from now on are not seen: their entries would go stale. */
	if (drop & SP_PROBES_READERS) {
		sp_readers_clear();
		sp_pcpu_clear();
	}
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
	u64 present = 0, missing = 0;
	int i;

	*busy_mask = 0;

	SP_NORMAL_HOOKS(SP_ATTACH_ONE)
	SP_RESTRICTED_HOOKS(SP_ATTACH_ONE)
	/*
	 * Restricted probes are never detached and ACK pins nobody: once one
	 * is attached this module's text must outlive any rmmod.
	 */
	if (sp_attached & ~(BIT(SP_NR_NORMAL) - 1))
		__module_get(THIS_MODULE);

	for (i = 0; i < SPH_NR; i++) {
		if (test_bit(i, &sp_attached))
			present |= sp_hook_mech[i];
		else
			missing |= sp_hook_mech[i];
		if (test_bit(i, &sp_taken))
			*busy_mask |= sp_hook_mech[i];
	}
	*active_mask = present & ~missing;
	sp_probes_start();
}

void sp_detach_normal(void)
{
	mutex_lock(&sp_probes_mutex);
	sp_probes_stopping = true;
	SP_NORMAL_HOOKS(SP_DETACH_ONE)
	mutex_unlock(&sp_probes_mutex);
	/* No probe runs, and so nothing publishes, past this point. */
	tracepoint_synchronize_unregister();
	irq_work_sync(&sp_probes_irq);
	cancel_delayed_work_sync(&sp_probes_work);
}
