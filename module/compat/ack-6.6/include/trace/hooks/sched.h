/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mock of android15-6.6's include/trace/hooks/sched.h for the compile check
 * in module/compat/check-ack-6.6.sh: the scheduler hooks superpass.ko uses,
 * declared with 6.6's prototypes, in place of the test kernel's (6.12) ones.
 * Prototypes as declared in GrapheneOS/kernel_common-6.6 (an android15-6.6
 * mirror), include/trace/hooks/sched.h at commit
 * ebeaea55e9e6e8d7667b2c70636223dd35aae08a; the other hooks keep the forms
 * both branches share.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sched
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH trace/hooks

#if !defined(_TRACE_HOOK_SCHED_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_HOOK_SCHED_H

#include <trace/hooks/vendor_hooks.h>

struct rq;
struct sched_entity;
struct task_struct;

DECLARE_RESTRICTED_HOOK(android_rvh_enqueue_task,
	TP_PROTO(struct rq *rq, struct task_struct *p, int flags),
	TP_ARGS(rq, p, flags), 1);

DECLARE_RESTRICTED_HOOK(android_rvh_dequeue_task,
	TP_PROTO(struct rq *rq, struct task_struct *p, int flags),
	TP_ARGS(rq, p, flags), 1);

/* 6.6: six arguments, two call sites told apart by @simple. */
DECLARE_RESTRICTED_HOOK(android_rvh_replace_next_task_fair,
	TP_PROTO(struct rq *rq, struct task_struct **p, struct sched_entity **se,
		 bool *repick, bool simple, struct task_struct *prev),
	TP_ARGS(rq, p, se, repick, simple, prev), 1);

/* 6.6: no _fair suffix, and a trailing next_buddy_marked. */
DECLARE_RESTRICTED_HOOK(android_rvh_check_preempt_wakeup,
	TP_PROTO(struct rq *rq, struct task_struct *p, bool *preempt,
		 bool *nopreempt, int wake_flags, struct sched_entity *se,
		 struct sched_entity *pse, int next_buddy_marked),
	TP_ARGS(rq, p, preempt, nopreempt, wake_flags, se, pse,
		next_buddy_marked), 1);

DECLARE_RESTRICTED_HOOK(android_rvh_select_task_rq_fair,
	TP_PROTO(struct task_struct *p, int prev_cpu, int sd_flag,
		 int wake_flags, int *new_cpu),
	TP_ARGS(p, prev_cpu, sd_flag, wake_flags, new_cpu), 1);

DECLARE_RESTRICTED_HOOK(android_rvh_tick_entry,
	TP_PROTO(struct rq *rq),
	TP_ARGS(rq), 1);

DECLARE_HOOK(android_vh_scheduler_tick,
	TP_PROTO(struct rq *rq),
	TP_ARGS(rq));

DECLARE_HOOK(android_vh_free_task,
	TP_PROTO(struct task_struct *p),
	TP_ARGS(p));

struct uclamp_se;
DECLARE_RESTRICTED_HOOK(android_rvh_uclamp_eff_get,
	TP_PROTO(struct task_struct *p, enum uclamp_id clamp_id,
		 struct uclamp_se *uclamp_max, struct uclamp_se *uclamp_eff, int *ret),
	TP_ARGS(p, clamp_id, uclamp_max, uclamp_eff, ret), 1);

DECLARE_RESTRICTED_HOOK(android_rvh_update_misfit_status,
	TP_PROTO(struct task_struct *p, struct rq *rq, bool *need_update),
	TP_ARGS(p, rq, need_update), 1);

DECLARE_RESTRICTED_HOOK(android_rvh_can_migrate_task,
	TP_PROTO(struct task_struct *p, int dst_cpu, int *can_migrate),
	TP_ARGS(p, dst_cpu, can_migrate), 1);

#endif /* _TRACE_HOOK_SCHED_H */

/* This part must be outside the header guard. */
#include <trace/define_trace.h>
