// SPDX-License-Identifier: GPL-2.0

//! The engine and its lock.
//!
//! One [`Engine`] serves the whole machine. It is tens of KiB, far too big for a 16 KiB kernel
//! stack, so it is built at compile time (`Engine::new` is `const`) in static memory, [`STATE`],
//! and no code path ever holds a copy of it on the stack. Every access goes through [`lock`],
//! which takes the C companion's raw spinlock with IRQs saved. That lock is always the
//! innermost lock: hooks call in with runqueue locks, lock wait_locks or `pi_lock` held, and
//! nothing is taken while it is held. Nothing allocates under it.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::ffi;
use crate::kernel_platform::{Kernel, Kicks};
use crate::superpass_core::engine::{Observer, RevokeReason};
use crate::superpass_core::{Cpu, Engine, LockId, LockKind, Nanos, Tid, MAX_CPUS};
use crate::RqRef;

/// Everything the engine lock protects.
pub(crate) struct State {
    /// The policy, covering CPUs `0..MAX_CPUS` (the kernel only ever names online CPUs).
    pub(crate) engine: Engine<TraceObserver>,
}

/// The state in static memory.
///
/// # Invariants
///
/// The inner value is only accessed through a [`Guard`], i.e. with the engine lock held.
struct StateCell(UnsafeCell<State>);

// SAFETY: every access to the inner `State` holds the engine lock (type invariant), which
// serializes all CPUs and contexts.
unsafe impl Sync for StateCell {}

static STATE: StateCell = StateCell(UnsafeCell::new(State {
    engine: Engine::new(MAX_CPUS as u32, TraceObserver::new()),
}));

/// True between module init and exit: hooks and ioctls find no engine outside that window.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Makes the engine reachable to hooks and ioctls.
pub(crate) fn install() {
    INSTALLED.store(true, Ordering::Release);
}

/// Makes the engine unreachable; call once no hook or ioctl can run any more.
pub(crate) fn uninstall() {
    INSTALLED.store(false, Ordering::Release);
}

/// The engine lock, held: derefs to the [`State`].
///
/// # Invariants
///
/// The engine lock is held (with IRQ flags `flags`) until the guard is dropped.
pub(crate) struct Guard {
    flags: core::ffi::c_ulong,
}

/// Takes the engine lock, or returns `None` if the engine is not installed.
#[inline]
pub(crate) fn lock() -> Option<Guard> {
    if !INSTALLED.load(Ordering::Acquire) {
        return None;
    }
    let flags = ffi::engine_lock();
    // INVARIANT: the lock is held.
    Some(Guard { flags })
}

impl core::ops::Deref for Guard {
    type Target = State;

    fn deref(&self) -> &State {
        // SAFETY: the engine lock is held (type invariant), so nobody writes the state.
        unsafe { &*STATE.0.get() }
    }
}

impl core::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut State {
        // SAFETY: the engine lock is held (type invariant) and `&mut self` makes this the only
        // reference derived from this guard; no other guard can exist meanwhile.
        unsafe { &mut *STATE.0.get() }
    }
}

impl Guard {
    /// Stores the engine's published snapshot in the C mirrors the probes read, under the lock:
    /// at every unlock, and earlier where a hook must make new lanes visible before it reads
    /// what the probes record.
    pub(crate) fn publish(&mut self) {
        let now = ffi::now();
        let p = self.engine.published(now);
        // The lock is held (type invariant).
        ffi::publish(&p);
    }

    /// The engine and the kernel platform for one hook call, both borrowed from this guard;
    /// the hook holds `rq` locked, if given, and `kicks` collects the CPUs to kick once the
    /// guard is dropped.
    pub(crate) fn split<'g>(
        &'g mut self,
        rq: Option<RqRef>,
        kicks: &'g mut Kicks,
    ) -> (&'g mut Engine<TraceObserver>, Kernel<'g>) {
        // SAFETY: the engine lock is held while the guard lives (type invariant), and both
        // values borrow the guard for 'g.
        let kernel = unsafe { Kernel::new(rq, kicks) };
        (&mut self.engine, kernel)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.publish();
        // SAFETY: the lock is held (type invariant) and is released exactly once.
        unsafe { ffi::engine_unlock(self.flags) };
    }
}

/// The engine's observer: emits the `superpass:*` tracepoints.
pub(crate) struct TraceObserver;

impl TraceObserver {
    const fn new() -> Self {
        Self
    }
}

impl Observer for TraceObserver {
    fn block(&mut self, _now: Nanos, waiter: Tid, blocker: Tid, lock: LockId, kind: LockKind) {
        ffi::trace_block(waiter, blocker, lock, kind);
    }

    fn grant(&mut self, _now: Nanos, blocker: Tid, via: Tid, root: Tid, lock: LockId, depth: u32) {
        ffi::trace_grant(blocker, via, root, lock, depth);
    }

    fn revoke(&mut self, _now: Nanos, blocker: Tid, reason: RevokeReason) {
        ffi::trace_revoke(blocker, reason);
    }

    fn pick(&mut self, _now: Nanos, cpu: Cpu, tid: Tid) {
        ffi::trace_pick(cpu, tid);
    }

    fn queued(&mut self, _now: Nanos, cpu: Cpu, tid: Tid, run_now: bool) {
        ffi::trace_queue(cpu, tid, run_now);
    }

    fn throttled(&mut self, now: Nanos, cpu: Cpu, until: Nanos) {
        ffi::trace_throttle(cpu, until.saturating_sub(now));
    }
}
