// SPDX-License-Identifier: GPL-2.0
/*
 * sp_hookpeer: loaded after sp_hooktest, tries to attach a third probe to
 * the restricted hooks on which sp_hooktest already has two (each must fail
 * with -EBUSY) and shares a normal hook with it (must succeed). Results in /proc/sp_hookpeer. It owns
 * no restricted hook, so it can be unloaded.
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/sched.h>

static void q_enqueue(void *d, struct rq *rq, struct task_struct *p, int flags) { }
static void q_dequeue(void *d, struct rq *rq, struct task_struct *p, int flags) { }
static void q_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct task_struct *prev) { }
static void q_check_preempt(void *d, struct rq *rq, struct task_struct *p,
			    bool *preempt, bool *nopreempt, int wake_flags,
			    struct sched_entity *se, struct sched_entity *pse) { }
static void q_select_rq(void *d, struct task_struct *p, int prev_cpu, int sd_flag,
			int wake_flags, int *new_cpu) { }
static void q_tick_entry(void *d, struct rq *rq) { }
static void q_flush_task(void *d, struct task_struct *p) { }

static atomic_long_t shared_hits;
static void q_record_mutex(void *d, struct mutex *l, unsigned long t)
{
	atomic_long_inc(&shared_hits);
}

static int rc[7];
static int rc_shared;
static const char *const names[7] = {
	"android_rvh_enqueue_task", "android_rvh_dequeue_task",
	"android_rvh_replace_next_task_fair", "android_rvh_check_preempt_wakeup_fair",
	"android_rvh_select_task_rq_fair", "android_rvh_tick_entry",
	"android_rvh_flush_task",
};

static int peer_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < 7; i++)
		seq_printf(m, "third_attach.%s %d\n", names[i], rc[i]);
	seq_printf(m, "shared_attach.android_vh_record_mutex_lock_starttime %d\n", rc_shared);
	seq_printf(m, "shared_hits %ld\n", atomic_long_read(&shared_hits));
	return 0;
}

static int __init sp_hookpeer_init(void)
{
	rc[0] = register_trace_android_rvh_enqueue_task(q_enqueue, NULL);
	rc[1] = register_trace_android_rvh_dequeue_task(q_dequeue, NULL);
	rc[2] = register_trace_android_rvh_replace_next_task_fair(q_replace_next, NULL);
	rc[3] = register_trace_android_rvh_check_preempt_wakeup_fair(q_check_preempt, NULL);
	rc[4] = register_trace_android_rvh_select_task_rq_fair(q_select_rq, NULL);
	rc[5] = register_trace_android_rvh_tick_entry(q_tick_entry, NULL);
	rc[6] = register_trace_android_rvh_flush_task(q_flush_task, NULL);
	rc_shared = register_trace_android_vh_record_mutex_lock_starttime(q_record_mutex, NULL);
	if (!proc_create_single("sp_hookpeer", 0444, NULL, peer_show)) {
		if (!rc_shared) {
			unregister_trace_android_vh_record_mutex_lock_starttime(q_record_mutex, NULL);
			tracepoint_synchronize_unregister();
		}
		return -ENOMEM;
	}
	return 0;
}
module_init(sp_hookpeer_init);

static void __exit sp_hookpeer_exit(void)
{
	remove_proc_entry("sp_hookpeer", NULL);
	if (!rc_shared)
		unregister_trace_android_vh_record_mutex_lock_starttime(q_record_mutex, NULL);
	tracepoint_synchronize_unregister();
}
module_exit(sp_hookpeer_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("SuperPass test kernel: second attachment to vendor hooks");
