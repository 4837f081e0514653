// SPDX-License-Identifier: GPL-2.0
/*
 * sp_vendorsched: a stand-in for a SoC vendor's scheduler module, loaded
 * before superpass.ko so that SuperPass becomes the second probe of the
 * restricted scheduler hooks, as on a Pixel next to vendor_sched.
 *
 * Its decisions are recognisable: a waking task whose comm starts with
 * "spv-" is placed on the last online CPU (select_task_rq_fair), and it asks
 * that such a task never preempt (check_preempt_wakeup_fair: *nopreempt).
 * /proc/sp_vendorsched reports how often each probe ran and decided, and the
 * CPU it places tasks on. Its probes are never detached, so it pins itself.
 */
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <trace/hooks/sched.h>

static atomic_long_t select_calls, select_decided, preempt_calls, preempt_decided;
static int target_cpu;

static bool ours(struct task_struct *p)
{
	return !strncmp(p->comm, "spv-", 4);
}

static void vs_select(void *d, struct task_struct *p, int prev_cpu, int sd_flag,
		      int wake_flags, int *new_cpu)
{
	atomic_long_inc(&select_calls);
	if (ours(p) && cpumask_test_cpu(target_cpu, p->cpus_ptr)) {
		*new_cpu = target_cpu;
		atomic_long_inc(&select_decided);
	}
}

static void vs_preempt(void *d, struct rq *rq, struct task_struct *p,
		       bool *preempt, bool *nopreempt, int wake_flags,
		       struct sched_entity *se, struct sched_entity *pse)
{
	atomic_long_inc(&preempt_calls);
	if (ours(p)) {
		*nopreempt = true;
		atomic_long_inc(&preempt_decided);
	}
}

static int vs_show(struct seq_file *m, void *v)
{
	seq_printf(m, "target_cpu %d\n", target_cpu);
	seq_printf(m, "select_calls %ld\n", atomic_long_read(&select_calls));
	seq_printf(m, "select_decided %ld\n", atomic_long_read(&select_decided));
	seq_printf(m, "preempt_calls %ld\n", atomic_long_read(&preempt_calls));
	seq_printf(m, "preempt_decided %ld\n", atomic_long_read(&preempt_decided));
	return 0;
}

static int __init sp_vendorsched_init(void)
{
	int ret;

	target_cpu = cpumask_last(cpu_online_mask);
	if (!proc_create_single("sp_vendorsched", 0444, NULL, vs_show))
		return -ENOMEM;
	ret = register_trace_android_rvh_select_task_rq_fair(vs_select, NULL);
	if (ret) {
		remove_proc_entry("sp_vendorsched", NULL);
		return ret;
	}
	/* Attached for good from here on. */
	__module_get(THIS_MODULE);
	return register_trace_android_rvh_check_preempt_wakeup_fair(vs_preempt, NULL);
}
module_init(sp_vendorsched_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("A vendor scheduler stand-in holding the first probe of the rvh hooks");
