// SPDX-License-Identifier: GPL-2.0
/*
 * sp_pickthief: fills both probe slots of the restricted hook
 * android_rvh_replace_next_task_fair with probes that change nothing, as a
 * SoC vendor's scheduler and one more vendor module would, so that
 * superpass.ko loaded afterwards gets -EBUSY for it and must run without its
 * pick mechanism (guest test sp-busy). Its probes are never detached, so it
 * pins itself.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <trace/hooks/sched.h>

static void sp_pickthief_vendor(void *data, struct rq *rq, struct task_struct **p,
				struct task_struct *prev)
{
}

static void sp_pickthief_other(void *data, struct rq *rq, struct task_struct **p,
			       struct task_struct *prev)
{
}

static int __init sp_pickthief_init(void)
{
	int ret = register_trace_android_rvh_replace_next_task_fair(sp_pickthief_vendor, NULL);

	if (!ret) {
		__module_get(THIS_MODULE);
		ret = register_trace_android_rvh_replace_next_task_fair(sp_pickthief_other, NULL);
	}
	return ret;
}
module_init(sp_pickthief_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Fills android_rvh_replace_next_task_fair's two probes (SuperPass -EBUSY test)");
