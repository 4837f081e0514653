// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around the `superpass:*` tracepoints defined in `superpass_trace.h`.

use crate::ffi;
use crate::superpass_core::engine::RevokeReason;
use crate::superpass_core::{Cpu, LockId, LockKind, Tid};

/// `superpass:superpass_block`: `waiter` waits on `lock`, held by `blocker`.
pub(crate) fn block(waiter: Tid, blocker: Tid, lock: LockId, kind: LockKind) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_block(waiter, blocker, lock, kind as u32) }
}

/// `superpass:superpass_grant`: `blocker` was granted the fast track for `via` (root `root`).
pub(crate) fn grant(blocker: Tid, via: Tid, root: Tid, lock: LockId, depth: u32) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_grant(blocker, via, root, lock, depth) }
}

/// `superpass:superpass_revoke`: a grant of `blocker` ended for `reason`.
pub(crate) fn revoke(blocker: Tid, reason: RevokeReason) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_revoke(blocker, reason as u32) }
}

/// `superpass:superpass_pick`: CPU `cpu` runs fast-tracked task `tid`.
pub(crate) fn pick(cpu: Cpu, tid: Tid) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_pick(cpu, tid) }
}

/// `superpass:superpass_queue`: boosted task `tid` joined CPU `cpu`'s runqueue; `run_now`: that
/// CPU was asked to pick again.
pub(crate) fn queue(cpu: Cpu, tid: Tid, run_now: bool) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_queue(cpu, tid, run_now) }
}

/// `superpass:superpass_throttle`: CPU `cpu` runs no boosted task ahead of CFS's choice for the
/// next `for_ns`.
pub(crate) fn throttle(cpu: Cpu, for_ns: u64) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { ffi::sp_trace_throttle(cpu, for_ns) }
}
