/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between superpass.ko's C companion (superpass_*.c) and its
 * Rust crate (superpass_main.rs).
 *
 * Direction C -> Rust: the sp_hook_*() and sp_ioctl() entry points, defined
 * in superpass_main.rs. They take plain values (time, TIDs, CPU numbers, lock
 * addresses) plus opaque task/runqueue pointers that Rust only stores and
 * hands back to the sp_task_*() helpers below.
 *
 * Direction Rust -> C: the engine lock, privilege and TID checks, task and
 * runqueue internals, CPU kicks and tracepoints. Rust declares the same
 * prototypes in superpass_main.rs; keep the two in sync.
 */
#ifndef SUPERPASS_H
#define SUPERPASS_H

#include <linux/types.h>

/* Lock kinds (SP_KIND_*), mechanism bits (SP_MECH_*), ...: generated from superpass-core. */
#include "superpass_consts.h"

/* ---- Rust entry points (superpass_main.rs) ---- */
void sp_hook_wait_start(u64 now, s32 waiter, u64 lock, u32 kind, s32 owner);
void sp_hook_rwsem_wait_start(u64 now, s32 waiter, u64 lock, u32 kind, s32 writer,
			      const s32 *readers, u32 n);
void sp_hook_wait_finish(u64 now, s32 waiter, u64 lock);
void sp_hook_owner(u64 now, u64 lock, s32 tid, bool acquired);
void sp_hook_reader(u64 now, u64 lock, s32 tid, bool acquired);
void sp_hook_woken(u64 now, u64 lock, s32 tid, s32 waker);
void sp_hook_futex_wait(u64 now, s32 waiter, s32 owner);
void sp_hook_futex_wait_end(u64 now, s32 waiter);
void sp_hook_futex_woken(u64 now, s32 woken, s32 waker, const s32 *queued, u32 n);
bool sp_hook_enqueue(u64 now, u32 cpu, s32 tid, void *task);
void sp_hook_dequeue(u64 now, u32 cpu, s32 tid);
void sp_hook_slept(u64 now, s32 tid);
void *sp_hook_pick(u64 now, void *rq, u32 cpu, s32 fair_next, u64 *deadline);
bool sp_hook_preempt(u64 now, u32 cpu, s32 curr, s32 waking);
s32 sp_hook_select(u64 now, s32 tid, u32 prev_cpu, u64 idle, u64 allowed);
bool sp_hook_tick(u64 now, void *rq, u32 cpu, s32 curr);
u32 sp_hook_uclamp_min(s32 tid);
bool sp_hook_misfit(s32 tid, u32 cpu);
bool sp_hook_may_migrate(s32 tid, u32 src, u32 dst, bool running);
void sp_hook_task_free(u64 now, s32 tid, void *task);
u32 sp_probes_poll(u64 now, u64 *recheck_ns);
long sp_ioctl(unsigned int cmd, unsigned long arg);

/* ---- C helpers for Rust (superpass_hooks.c, superpass_sched.c, superpass_dev.c) ---- */
unsigned long sp_engine_lock(void);
void sp_engine_unlock(unsigned long flags);
void sp_publish(u32 nr_boosted, u32 nr_critical, u32 nr_waits, u32 nr_futex_waits,
		u64 interest_lanes, u64 boosted_lanes, u64 lock_lanes, u64 woken_lanes,
		bool regrants, bool enabled, u32 probes);
u64 sp_now(void);
bool sp_capable_sys_nice(void);
bool sp_tid_exists(s32 tid);
bool sp_futex_hint_valid(s32 tid);
void *sp_task_lookup(s32 tid);
s32 sp_task_queued_cpu(void *task);
bool sp_task_queued_on(void *rq, void *task);
bool sp_task_pickable(void *rq, void *task);
void sp_kick_cpu(u32 cpu);
void sp_probes_sync(void);
void sp_trace_block(s32 waiter, s32 blocker, u64 lock, u32 kind);
void sp_trace_grant(s32 blocker, s32 waiter, s32 root, u64 lock, u32 depth);
void sp_trace_revoke(s32 blocker, u32 reason);
void sp_trace_pick(u32 cpu, s32 tid);
int sp_c_init(u64 *active_mask, u64 *busy_mask);
u32 sp_cpu_capacity(u32 cpu);
u32 sp_this_cpu(void);
void sp_c_exit(void);

#endif /* SUPERPASS_H */
