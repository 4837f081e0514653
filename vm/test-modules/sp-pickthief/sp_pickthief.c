// SPDX-License-Identifier: GPL-2.0
/*
 * sp_pickthief: takes the restricted hook android_rvh_replace_next_task_fair
 * with a probe that changes nothing, as a vendor scheduler would, so that
 * superpass.ko loaded afterwards gets -EBUSY for it and must run without its
 * pick mechanism (guest test sp-busy). Cannot be unloaded once loaded.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <trace/hooks/sched.h>

static void sp_pickthief_probe(void *data, struct rq *rq, struct task_struct **p,
			       struct task_struct *prev)
{
}

static int __init sp_pickthief_init(void)
{
	return register_trace_android_rvh_replace_next_task_fair(sp_pickthief_probe, NULL);
}
module_init(sp_pickthief_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Owns android_rvh_replace_next_task_fair (SuperPass -EBUSY test)");
