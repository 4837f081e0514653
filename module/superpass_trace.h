/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SuperPass tracepoints (TRACE_SYSTEM superpass). The text format is
 * key=value pairs, parsed by superpass-trace (trace/src/superpass.rs):
 *
 *   superpass_block: waiter=123 blocker=456 lock=0x5be0cd19137e2179 kind=mutex
 *   superpass_grant: blocker=456 waiter=123 root=123 lock=0x5be0cd19137e2179 depth=1
 *   superpass_revoke: blocker=456 reason=released
 *   superpass_pick: cpu=1 tid=456
 *   superpass_queue: cpu=1 tid=456 run_now=1
 *   superpass_throttle: cpu=1 for_us=42000
 *   superpass_probes: groups=owners,readers
 *   superpass_kick: cpu=1 how=ipi
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM superpass

#if !defined(_SUPERPASS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SUPERPASS_TRACE_H

#include <linux/tracepoint.h>

/* The lists of names are generated from superpass-core (LockKind, RevokeReason). */
#include "superpass_consts.h"

#define sp_show_kind(k)		__print_symbolic(k, SP_TRACE_LOCK_KINDS)
#define sp_show_reason(r)	__print_symbolic(r, SP_TRACE_REVOKE_REASONS)

/* A critical thread (or chain link) @waiter waits on @lock held by @blocker. */
TRACE_EVENT(superpass_block,
	TP_PROTO(s32 waiter, s32 blocker, u64 lock, u32 kind),
	TP_ARGS(waiter, blocker, lock, kind),
	TP_STRUCT__entry(
		__field(s32, waiter)
		__field(s32, blocker)
		__field(u64, lock)
		__field(u32, kind)
	),
	TP_fast_assign(
		__entry->waiter = waiter;
		__entry->blocker = blocker;
		__entry->lock = lock;
		__entry->kind = kind;
	),
	TP_printk("waiter=%d blocker=%d lock=0x%llx kind=%s", __entry->waiter,
		  __entry->blocker, __entry->lock, sp_show_kind(__entry->kind))
);

/* @blocker got the fast track because it blocks @waiter (chain root @root). */
TRACE_EVENT(superpass_grant,
	TP_PROTO(s32 blocker, s32 waiter, s32 root, u64 lock, u32 depth),
	TP_ARGS(blocker, waiter, root, lock, depth),
	TP_STRUCT__entry(
		__field(s32, blocker)
		__field(s32, waiter)
		__field(s32, root)
		__field(u64, lock)
		__field(u32, depth)
	),
	TP_fast_assign(
		__entry->blocker = blocker;
		__entry->waiter = waiter;
		__entry->root = root;
		__entry->lock = lock;
		__entry->depth = depth;
	),
	TP_printk("blocker=%d waiter=%d root=%d lock=0x%llx depth=%u",
		  __entry->blocker, __entry->waiter, __entry->root,
		  __entry->lock, __entry->depth)
);

/* A grant of @blocker ended. */
TRACE_EVENT(superpass_revoke,
	TP_PROTO(s32 blocker, u32 reason),
	TP_ARGS(blocker, reason),
	TP_STRUCT__entry(
		__field(s32, blocker)
		__field(u32, reason)
	),
	TP_fast_assign(
		__entry->blocker = blocker;
		__entry->reason = reason;
	),
	TP_printk("blocker=%d reason=%s", __entry->blocker,
		  sp_show_reason(__entry->reason))
);

/* CPU @cpu runs fast-tracked task @tid instead of CFS's choice. */
TRACE_EVENT(superpass_pick,
	TP_PROTO(u32 cpu, s32 tid),
	TP_ARGS(cpu, tid),
	TP_STRUCT__entry(
		__field(u32, cpu)
		__field(s32, tid)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->tid = tid;
	),
	TP_printk("cpu=%u tid=%d", __entry->cpu, __entry->tid)
);

/*
 * Boosted task @tid joined CPU @cpu's runqueue; @run_now: that CPU was asked
 * to pick again at once.
 */
TRACE_EVENT(superpass_queue,
	TP_PROTO(u32 cpu, s32 tid, bool run_now),
	TP_ARGS(cpu, tid, run_now),
	TP_STRUCT__entry(
		__field(u32, cpu)
		__field(s32, tid)
		__field(bool, run_now)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->tid = tid;
		__entry->run_now = run_now;
	),
	TP_printk("cpu=%u tid=%d run_now=%d", __entry->cpu, __entry->tid,
		  __entry->run_now)
);

/*
 * CPU @cpu used up its fast-track share of the throttle window: for the next
 * @for_us microseconds it runs no boosted task ahead of CFS's choice.
 */
TRACE_EVENT(superpass_throttle,
	TP_PROTO(u32 cpu, u64 for_us),
	TP_ARGS(cpu, for_us),
	TP_STRUCT__entry(
		__field(u32, cpu)
		__field(u64, for_us)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->for_us = for_us;
	),
	TP_printk("cpu=%u for_us=%llu", __entry->cpu, __entry->for_us)
);

/* The on-demand probe groups attached from now on (SP_PROBES_*; "none"). */
TRACE_EVENT(superpass_probes,
	TP_PROTO(u32 groups),
	TP_ARGS(groups),
	TP_STRUCT__entry(
		__field(u32, groups)
	),
	TP_fast_assign(
		__entry->groups = groups;
	),
	TP_printk("groups=%s",
		  __print_symbolic(__entry->groups & (SP_PROBES_OWNERS | SP_PROBES_READERS),
				   { 0, "none" },
				   { SP_PROBES_OWNERS, "owners" },
				   { SP_PROBES_READERS, "readers" },
				   { SP_PROBES_OWNERS | SP_PROBES_READERS, "owners,readers" }))
);

/*
 * CPU @cpu was asked to pick again (a boosted task waits there): @how is
 * local, ipi, pending (an earlier kick to it is still in flight) or busy
 * (its call slot was in use; that earlier call does the same).
 */
TRACE_EVENT(superpass_kick,
	TP_PROTO(u32 cpu, u32 how),
	TP_ARGS(cpu, how),
	TP_STRUCT__entry(
		__field(u32, cpu)
		__field(u32, how)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->how = how;
	),
	TP_printk("cpu=%u how=%s", __entry->cpu,
		  __print_symbolic(__entry->how, { 0, "local" }, { 1, "ipi" },
				   { 2, "pending" }, { 3, "busy" }))
);

#endif /* _SUPERPASS_TRACE_H */

/* This part must be outside the header guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE superpass_trace
#include <trace/define_trace.h>
