// SPDX-License-Identifier: GPL-2.0

//! The C companion's helpers, each behind one safe wrapper: the only place the crate calls C.
//!
//! The `extern "C"` block below is the one declaration of the helpers; `cargo xtask
//! gen-headers` spells their C prototypes (`superpass_ffi.h`) from it. The rest of the crate
//! calls the safe functions and the task and runqueue types here, so its only `unsafe` is the
//! entry points' raw arguments, the engine's static state and a task handle's lifetime.

use core::ffi::{c_int, c_ulong, c_void};
use core::ptr::NonNull;

use crate::superpass_core::engine::RevokeReason;
use crate::superpass_core::platform::{CurrentWait, WaitRecord};
use crate::superpass_core::tunables::READER_TABLE_WAYS;
use crate::superpass_core::{Cpu, LockId, LockKind, Nanos, Published, Running, Tid, MAX_CPUS};

/// The C companion's side of the interface (`superpass.h`).
mod raw {
    use super::*;

    extern "C" {
        pub(crate) fn sp_engine_lock() -> c_ulong;
        pub(crate) fn sp_engine_unlock(flags: c_ulong);
        pub(crate) fn sp_publish(
            gates: u32,
            interest_lanes: u64,
            boosted_lanes: u64,
            lock_lanes: u64,
            woken_lanes: u64,
            waiting_lanes: u64,
            probes: u32,
            work_cpus: u64,
        );
        pub(crate) fn sp_now() -> u64;
        pub(crate) fn sp_capable_sys_nice() -> bool;
        pub(crate) fn sp_tid_to_engine(tid: i32) -> i32;
        pub(crate) fn sp_tid_to_caller(tid: i32) -> i32;
        pub(crate) fn sp_futex_hint_owner(tid: i32) -> i32;
        pub(crate) fn sp_task_lookup(tid: i32) -> *mut c_void;
        pub(crate) fn sp_task_queued_cpu(task: *mut c_void) -> i32;
        pub(crate) fn sp_task_cpu(task: *mut c_void) -> u32;
        pub(crate) fn sp_task_queued_on(rq: *mut c_void, task: *mut c_void) -> bool;
        pub(crate) fn sp_task_pickable(rq: *mut c_void, task: *mut c_void) -> bool;
        pub(crate) fn sp_kick_cpu(cpu: u32);
        pub(crate) fn sp_move_task(task: *mut c_void, dst: u32, expect: i32) -> bool;
        pub(crate) fn sp_push_view(
            task: *mut c_void,
            src: u32,
            idle: *mut u64,
            cpus: *mut u8,
            tids: *mut i32,
            prios: *mut u8,
            max: u32,
        ) -> u32;
        pub(crate) fn sp_task_running(task: *mut c_void) -> bool;
        pub(crate) fn sp_cpu_curr(cpu: u32) -> i32;
        pub(crate) fn sp_probes_sync();
        pub(crate) fn sp_trace_block(waiter: i32, blocker: i32, lock: u64, kind: u32);
        pub(crate) fn sp_trace_grant(blocker: i32, waiter: i32, root: i32, lock: u64, depth: u32);
        pub(crate) fn sp_trace_revoke(blocker: i32, reason: u32);
        pub(crate) fn sp_trace_pick(cpu: u32, tid: i32);
        pub(crate) fn sp_trace_queue(cpu: u32, tid: i32, run_now: bool);
        pub(crate) fn sp_trace_throttle(cpu: u32, for_ns: u64);
        pub(crate) fn sp_c_init(active_mask: *mut u64, busy_mask: *mut u64) -> c_int;
        pub(crate) fn sp_cpu_capacity(cpu: u32) -> u32;
        pub(crate) fn sp_this_cpu() -> u32;
        pub(crate) fn sp_c_exit();
        pub(crate) fn sp_current_wait(tid: *mut i32, lock: *mut u64) -> i32;
        pub(crate) fn sp_wait_of(
            tid: i32,
            lock: *mut u64,
            kind: *mut u32,
            owner: *mut i32,
            readers: *mut i32,
        ) -> u32;
    }
}

/// Takes the engine's raw spinlock with IRQs saved; returns the saved flags.
pub(crate) fn engine_lock() -> c_ulong {
    // SAFETY: plain call; the lock is a static raw spinlock in the C companion.
    unsafe { raw::sp_engine_lock() }
}

/// Releases the engine lock.
///
/// # Safety
///
/// The caller holds the lock, taken by [`engine_lock`], which returned `flags`.
pub(crate) unsafe fn engine_unlock(flags: c_ulong) {
    // SAFETY: the caller holds the lock and passes its saved flags.
    unsafe { raw::sp_engine_unlock(flags) }
}

/// Stores a published snapshot in the C mirrors the probes read. Called with the engine lock
/// held, so that the mirrors never go backwards.
pub(crate) fn publish(p: &Published) {
    // SAFETY: plain call; it stores plain values in the mirrors.
    unsafe {
        raw::sp_publish(
            p.gates,
            p.interest_lanes,
            p.boosted_lanes,
            p.lock_lanes,
            p.woken_lanes,
            p.waiting_lanes,
            p.probes,
            p.work_cpus,
        )
    }
}

/// The scheduler clock, in nanoseconds.
pub(crate) fn now() -> Nanos {
    // SAFETY: plain call; it reads the scheduler clock.
    unsafe { raw::sp_now() }
}

/// The number of the CPU this code runs on.
pub(crate) fn this_cpu() -> Cpu {
    // SAFETY: plain call; it reads the current CPU's number.
    unsafe { raw::sp_this_cpu() }
}

/// Whether the calling task has `CAP_SYS_NICE`.
pub(crate) fn capable_sys_nice() -> bool {
    // SAFETY: plain call; it checks the current task's credentials.
    unsafe { raw::sp_capable_sys_nice() }
}

/// The kernel's TID for `tid` in the caller's PID namespace, if it names a task.
pub(crate) fn tid_to_engine(tid: Tid) -> Option<Tid> {
    // SAFETY: plain call; any TID value is accepted, looked up under RCU.
    let global = unsafe { raw::sp_tid_to_engine(tid) };
    (global > 0).then_some(global)
}

/// The caller's PID namespace's TID for kernel TID `tid`, if the task is visible there. Looks
/// up under RCU only, so it may run under the engine lock.
pub(crate) fn tid_to_caller(tid: Tid) -> Option<Tid> {
    // SAFETY: plain call; any TID value is accepted, looked up under RCU.
    let local = unsafe { raw::sp_tid_to_caller(tid) };
    (local > 0).then_some(local)
}

/// The kernel's TID of the thread an owner hint names, if it is a thread of the caller's own
/// thread group.
pub(crate) fn futex_hint_owner(hint: Tid) -> Option<Tid> {
    // SAFETY: plain call; it looks the TID up under RCU and compares thread groups.
    let tid = unsafe { raw::sp_futex_hint_owner(hint) };
    (tid > 0).then_some(tid)
}

/// Makes CPU `cpu` reschedule; ignores an offline or out-of-range CPU.
pub(crate) fn kick_cpu(cpu: Cpu) {
    // SAFETY: plain call; `sp_kick_cpu` ignores offline or out-of-range CPUs.
    unsafe { raw::sp_kick_cpu(cpu) }
}

/// The TID of the task running on CPU `cpu` (0: unknown), a racy read.
pub(crate) fn cpu_curr(cpu: Cpu) -> Tid {
    // SAFETY: plain call; it reads the runqueue's current task under RCU.
    unsafe { raw::sp_cpu_curr(cpu) }
}

/// Waits until the probe groups the engine wants are attached or detached; may sleep.
pub(crate) fn probes_sync() {
    // SAFETY: plain call from process context; it may sleep.
    unsafe { raw::sp_probes_sync() }
}

/// The C side's initialisation: the mechanisms attached, and those another module holds the
/// hooks of; a negative errno on failure.
pub(crate) fn c_init() -> Result<(u64, u64), c_int> {
    let (mut active, mut busy) = (0u64, 0u64);
    // SAFETY: both pointers are valid for writes for the duration of the call.
    let r = unsafe { raw::sp_c_init(&mut active, &mut busy) };
    if r != 0 {
        return Err(r);
    }
    Ok((active, busy))
}

/// Detaches the normal hooks and waits for running probes.
pub(crate) fn c_exit() {
    // SAFETY: plain call; it detaches what `sp_c_init` attached and waits for the probes.
    unsafe { raw::sp_c_exit() }
}

/// CPU `cpu`'s capacity (0 for a CPU that cannot exist).
pub(crate) fn cpu_capacity(cpu: Cpu) -> u32 {
    // SAFETY: plain call; it reads one CPU's capacity.
    unsafe { raw::sp_cpu_capacity(cpu) }
}

/// What the task that ran until now on this CPU waits for, as its wait record names it; read
/// from a tick or a pick.
pub(crate) fn current_wait() -> CurrentWait {
    let (mut tid, mut lock) = (0i32, 0u64);
    // SAFETY: both pointers are to locals; the helper reads only `current` and its record.
    let owner = unsafe { raw::sp_current_wait(&mut tid, &mut lock) };
    CurrentWait { tid, lock, owner }
}

/// The module's record of `tid`'s lock wait (`superpass_waits.c`), with the readers it names
/// written into `readers`.
pub(crate) fn wait_of(tid: Tid, readers: &mut [Tid; READER_TABLE_WAYS]) -> Option<WaitRecord> {
    let (mut lock, mut kind, mut owner) = (0u64, 0u32, 0i32);
    // SAFETY: every pointer is to a local, and `readers` has room for the
    // `READER_TABLE_WAYS` TIDs the reader record can name.
    let n = unsafe { raw::sp_wait_of(tid, &mut lock, &mut kind, &mut owner, readers.as_mut_ptr()) };
    // `n` is one more than the readers written, 0 for no record.
    let readers = usize::try_from(n.checked_sub(1)?)
        .ok()?
        .min(READER_TABLE_WAYS);
    Some(WaitRecord {
        lock,
        kind: LockKind::from_u32(kind)?,
        owner,
        readers,
    })
}

/// `superpass:superpass_block`: `waiter` waits on `lock`, held by `blocker`.
pub(crate) fn trace_block(waiter: Tid, blocker: Tid, lock: LockId, kind: LockKind) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_block(waiter, blocker, lock, kind as u32) }
}

/// `superpass:superpass_grant`: `blocker` was granted the fast track for `via` (root `root`).
pub(crate) fn trace_grant(blocker: Tid, via: Tid, root: Tid, lock: LockId, depth: u32) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_grant(blocker, via, root, lock, depth) }
}

/// `superpass:superpass_revoke`: a grant of `blocker` ended for `reason`.
pub(crate) fn trace_revoke(blocker: Tid, reason: RevokeReason) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_revoke(blocker, reason as u32) }
}

/// `superpass:superpass_pick`: CPU `cpu` runs fast-tracked task `tid`.
pub(crate) fn trace_pick(cpu: Cpu, tid: Tid) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_pick(cpu, tid) }
}

/// `superpass:superpass_queue`: boosted task `tid` joined CPU `cpu`'s runqueue; `run_now`: that
/// CPU was asked to pick again.
pub(crate) fn trace_queue(cpu: Cpu, tid: Tid, run_now: bool) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_queue(cpu, tid, run_now) }
}

/// `superpass:superpass_throttle`: CPU `cpu` runs no boosted task ahead of CFS's choice for the
/// next `for_ns`.
pub(crate) fn trace_throttle(cpu: Cpu, for_ns: u64) {
    // SAFETY: plain values; the tracepoint may be called in any context.
    unsafe { raw::sp_trace_throttle(cpu, for_ns) }
}

/// A task the kernel handed to a hook: a `struct task_struct *`, never dereferenced in Rust.
///
/// # Invariants
///
/// Points to a live `task_struct` while the engine lock is held and the engine records it as a
/// boosted task's handle, or while the hook that produced it runs: the `free_task` hook drops
/// every recorded handle, under the engine lock, before the memory is freed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskRef(NonNull<c_void>);

impl TaskRef {
    /// Wraps a pointer from a hook, or `None` for NULL.
    pub(crate) fn from_raw(p: *mut c_void) -> Option<Self> {
        // INVARIANT: the caller got `p` from a hook argument or from `sp_task_lookup`.
        NonNull::new(p).map(Self)
    }

    /// The task with TID `tid`; call with the engine lock held.
    pub(crate) fn lookup(tid: i32) -> Option<Self> {
        // SAFETY: `sp_task_lookup` accepts any TID and returns a live task or NULL; the
        // caller holds the engine lock, so the task stays valid until the free_task hook.
        Self::from_raw(unsafe { raw::sp_task_lookup(tid) })
    }

    /// The handle the engine records for the task: its address.
    pub(crate) fn handle(self) -> u64 {
        self.0.as_ptr() as usize as u64
    }

    /// The task a handle from [`TaskRef::handle`] names, or `None` for 0.
    ///
    /// # Safety
    ///
    /// `h` is a handle the engine records, read with the engine lock held: the task is live.
    pub(crate) unsafe fn from_handle(h: u64) -> Option<Self> {
        // INVARIANT: the caller guarantees the task behind `h` is live.
        Self::from_raw(h as usize as *mut c_void)
    }

    /// The raw pointer, for the C helpers.
    pub(crate) fn as_ptr(self) -> *mut c_void {
        self.0.as_ptr()
    }

    /// The CPU whose runqueue holds the task, if it is queued (a racy hint for kicks).
    pub(crate) fn queued_cpu(self) -> Option<u32> {
        // SAFETY: by the type invariant the task is live.
        let cpu = unsafe { raw::sp_task_queued_cpu(self.as_ptr()) };
        u32::try_from(cpu).ok()
    }

    /// The CPU the task's record names: where it runs or is queued, last ran, or is joining a
    /// runqueue (a racy hint).
    pub(crate) fn cpu(self) -> u32 {
        // SAFETY: by the type invariant the task is live.
        unsafe { raw::sp_task_cpu(self.as_ptr()) }
    }

    /// True if the task runs on a CPU now (a racy read).
    pub(crate) fn running(self) -> bool {
        // SAFETY: by the type invariant the task is live.
        unsafe { raw::sp_task_running(self.as_ptr()) }
    }

    /// Where a push of the task off CPU `src` may go: the idle CPUs it may use, and the fair
    /// tasks running on the other CPUs it may use (read racily, for the engine's choice).
    pub(crate) fn push_view(self, src: u32, others: &mut [Running; MAX_CPUS]) -> (u64, usize) {
        let mut cpus = [0u8; MAX_CPUS];
        let mut tids = [0i32; MAX_CPUS];
        let mut prios = [0u8; MAX_CPUS];
        let mut idle = 0u64;
        // SAFETY: the task is live (type invariant); the arrays hold `MAX_CPUS` entries each,
        // the most `sp_push_view` writes.
        let n = unsafe {
            raw::sp_push_view(
                self.as_ptr(),
                src,
                &mut idle,
                cpus.as_mut_ptr(),
                tids.as_mut_ptr(),
                prios.as_mut_ptr(),
                MAX_CPUS as u32,
            )
        };
        let n = (n as usize).min(MAX_CPUS);
        for (i, o) in others.iter_mut().enumerate().take(n) {
            *o = Running {
                cpu: u32::from(cpus[i]),
                tid: tids[i],
                prio: u32::from(prios[i]),
            };
        }
        (idle, n)
    }

    /// Asks the CPU stopper to move the task to CPU `dst` if it is still on `expect` (any CPU
    /// if `None`); false if the request could not be queued (every slot busy).
    pub(crate) fn move_to(self, dst: u32, expect: Option<u32>) -> bool {
        let expect = expect.and_then(|c| i32::try_from(c).ok()).unwrap_or(-1);
        // SAFETY: the task is live (type invariant); `sp_move_task` takes its own reference
        // before it returns, and accepts any CPU number.
        unsafe { raw::sp_move_task(self.as_ptr(), dst, expect) }
    }

    /// True if the task is queued on `rq` (whose lock the caller holds).
    pub(crate) fn queued_on(self, rq: RqRef) -> bool {
        // SAFETY: the task is live (type invariant) and `rq` is locked (RqRef invariant).
        unsafe { raw::sp_task_queued_on(rq.as_ptr(), self.as_ptr()) }
    }

    /// True if the task may replace CFS's pick on `rq` (whose lock the caller holds).
    pub(crate) fn pickable(self, rq: RqRef) -> bool {
        // SAFETY: the task is live (type invariant) and `rq` is locked (RqRef invariant).
        unsafe { raw::sp_task_pickable(rq.as_ptr(), self.as_ptr()) }
    }
}

/// A runqueue (`struct rq *`) whose lock the current hook holds.
///
/// # Invariants
///
/// Valid and locked for the duration of the hook call that created it.
#[derive(Clone, Copy)]
pub(crate) struct RqRef(NonNull<c_void>);

impl RqRef {
    /// Wraps the runqueue a hook passed.
    ///
    /// # Safety
    ///
    /// `rq` is a runqueue whose lock the calling hook holds for the whole call.
    pub(crate) unsafe fn new(rq: NonNull<c_void>) -> Self {
        // INVARIANT: the caller holds `rq`'s lock for the duration of the hook call.
        Self(rq)
    }

    fn as_ptr(self) -> *mut c_void {
        self.0.as_ptr()
    }
}
