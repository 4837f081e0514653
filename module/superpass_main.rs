// SPDX-License-Identifier: GPL-2.0

//! SuperPass: finds the threads that block critical threads on kernel locks and fast-tracks them.
//!
//! This is the crate root of `superpass.ko`. It holds the `module!` declaration, the C/Rust
//! interface and every `extern "C"` entry point. Each entry point turns its raw arguments into
//! safe types at once ([`TaskRef`], [`RqRef`]) and calls safe code: [`hooks`] for the vendor-hook
//! callbacks and [`ioctl`] for `/dev/superpass`. The policy itself is `superpass-core`, included
//! by path as [`superpass_core`]; this crate only turns hooks into events for the glue that
//! core shares with the simulator (`superpass_core::platform`) and answers the glue's questions
//! through [`kernel_platform::Kernel`].
//!
//! The C companion (`superpass_hooks.c`, `superpass_lock.c`, `superpass_sched.c`,
//! `superpass_dev.c`) registers the misc device and the vendor hooks, reads
//! lock owners and scheduler internals, kicks CPUs, owns the engine's raw spinlock and defines
//! the `superpass:*` tracepoints. The guest tests' lock device is a module of its own
//! (vm/test-modules/sp-testdev).

use core::ffi::{c_long, c_uint, c_ulong, c_void};
use core::ptr::NonNull;
use kernel::prelude::*;

// The policy, shared with the simulator and the service (no_std, no unsafe, no deps).
#[expect(unused_attributes)]
#[path = "../core/src/lib.rs"]
pub mod superpass_core;

mod ffi;
mod hooks;
mod ioctl;
mod kernel_platform;
mod state;

use ffi::{RqRef, TaskRef};

use superpass_core::{abi, Answer, Event, MAX_CPUS};

module! {
    type: SuperPassModule,
    name: "superpass",
    author: "SuperPass",
    description: "Fast track for the threads that block critical threads on kernel locks",
    license: "GPL",
}

/// The module's lifetime: the engine exists from `init` until `drop`.
struct SuperPassModule;

impl kernel::Module for SuperPassModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        state::install();
        let (active, busy) = match ffi::c_init() {
            Ok(masks) => masks,
            Err(r) => {
                state::uninstall();
                return Err(Error::from_errno(r));
            }
        };
        let mut capacity = [0u32; MAX_CPUS];
        for (cpu, c) in (0u32..).zip(capacity.iter_mut()) {
            *c = ffi::cpu_capacity(cpu);
        }
        if let Some(mut g) = state::lock() {
            let now = ffi::now();
            g.engine.handle(now, Event::Attached { active });
            g.engine.handle(
                now,
                Event::Capacities {
                    capacity: &capacity,
                },
            );
        }
        log_mechanisms(active, busy);
        Ok(SuperPassModule)
    }
}

impl Drop for SuperPassModule {
    fn drop(&mut self) {
        // Only reachable if no restricted hook was attached (they pin the module).
        ffi::c_exit();
        state::uninstall();
        pr_info!("unloaded\n");
    }
}

/// Writes the active (and blocked) mechanisms to the kernel log.
fn log_mechanisms(active: u64, busy: u64) {
    pr_info!("active mechanisms: mask=0x{:x}\n", active);
    for (bit, name) in abi::MECH_NAMES.iter().enumerate() {
        let m = 1u64 << bit;
        if active & m != 0 {
            pr_info!("  {}: active\n", name);
        } else if busy & m != 0 {
            pr_warn!("  {}: unavailable (hook owned by another module)\n", name);
        } else {
            pr_warn!("  {}: unavailable\n", name);
        }
    }
}

// ---------------- entry points called by the C companion ----------------

/// `waiter` starts waiting for `lock` (a `LockKind`), whose visible owner is `owner` (0: none).
#[no_mangle]
pub extern "C" fn sp_hook_wait_start(now: u64, waiter: i32, lock: u64, kind: u32, owner: i32) {
    if let Some(ev) = Event::from_hook_wait_start(waiter, lock, kind, owner, ffi::this_cpu()) {
        hooks::lock_event(now, ev);
    }
}

/// `waiter` starts waiting for `lock` (a `LockKind`) with holders the engine may not know yet:
/// an rwsem's writer (`writer`, 0: none) and the readers the module's reader record saw enter
/// (`readers[..n]`), or a binder call's server thread and the busy threads of its pool.
///
/// # Safety
///
/// `readers` is valid for reads of `n` TIDs (or `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn sp_hook_rwsem_wait_start(
    now: u64,
    waiter: i32,
    lock: u64,
    kind: u32,
    writer: i32,
    readers: *const i32,
    n: c_uint,
) {
    let readers = if readers.is_null() || n == 0 {
        &[][..]
    } else {
        // SAFETY: the caller passes `n` readable TIDs; the record holds at most
        // `READER_TABLE_WAYS`, and the slice does not outlive this call.
        unsafe { core::slice::from_raw_parts(readers, n as usize) }
    };
    if let Some(ev) = Event::from_hook_wait_start(waiter, lock, kind, writer, ffi::this_cpu()) {
        hooks::rwsem_wait_start(now, ev, lock, writer, readers);
    }
}

/// `waiter` stopped waiting for `lock`.
#[no_mangle]
pub extern "C" fn sp_hook_wait_finish(now: u64, waiter: i32, lock: u64) {
    hooks::lock_event(now, Event::WaitFinish { waiter, lock });
}

/// Server thread `server` replied to the binder call `lock` from `caller`, and the reply woke it.
#[no_mangle]
pub extern "C" fn sp_hook_binder_reply(now: u64, lock: u64, server: i32, caller: i32) {
    hooks::lock_events(now, &Event::from_hook_binder_reply(lock, server, caller));
}

/// Server thread `server` took the synchronous binder call `lock` from `caller`, which waits
/// for it on CPU `cpu` (Rust Binder reports a call only as its server takes it).
#[no_mangle]
pub extern "C" fn sp_hook_binder_taken(now: u64, caller: i32, cpu: u32, lock: u64, server: i32) {
    hooks::lock_event(
        now,
        Event::from_hook_binder_taken(caller, lock, server, cpu),
    );
}

/// Server thread `server` replied to the call it serves (`Event::ServerReplied`).
#[no_mangle]
pub extern "C" fn sp_hook_server_replied(now: u64, server: i32) {
    hooks::lock_event(now, Event::ServerReplied { server });
}

/// The binder call `lock` from `caller` is freed (`Event::CallFreed`).
#[no_mangle]
pub extern "C" fn sp_hook_binder_freed(now: u64, lock: u64, caller: i32) {
    hooks::lock_event(now, Event::CallFreed { lock, caller });
}

/// `tid` acquired (or released) `lock` as its owner: a mutex, or an rwsem as writer.
#[no_mangle]
pub extern "C" fn sp_hook_owner(now: u64, lock: u64, tid: i32, acquired: bool) {
    hooks::lock_event(now, Event::from_hook_owner(lock, tid, acquired));
}

/// `tid` acquired (or released) `lock` as a reader.
#[no_mangle]
pub extern "C" fn sp_hook_reader(now: u64, lock: u64, tid: i32, acquired: bool) {
    hooks::lock_event(now, Event::from_hook_reader(lock, tid, acquired));
}

/// `waker`'s release of `lock` woke waiter `tid`, which takes the lock when it runs.
#[no_mangle]
pub extern "C" fn sp_hook_woken(now: u64, lock: u64, tid: i32, waker: i32) {
    hooks::lock_event(now, Event::WaiterWoken { lock, tid, waker });
}

/// `waiter` starts a futex wait naming `owner` as the holder (an owner hint).
#[no_mangle]
pub extern "C" fn sp_hook_futex_wait(now: u64, waiter: i32, owner: i32) {
    hooks::futex_wait(now, waiter, owner);
}

/// `waiter`'s futex wait ended.
#[no_mangle]
pub extern "C" fn sp_hook_futex_wait_end(now: u64, waiter: i32) {
    hooks::lock_event(now, Event::from_hook_futex_wait_end(waiter));
}

/// `waker`'s futex wake woke `woken`; `queued[..n]` were queued on the same futex when it began.
///
/// # Safety
///
/// `queued` points to `n` readable TIDs for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_futex_woken(
    now: u64,
    woken: i32,
    waker: i32,
    queued: *const i32,
    n: u32,
) {
    let n = (n as usize).min(superpass_core::tunables::MAX_FUTEX_SCAN);
    if queued.is_null() || n == 0 {
        return;
    }
    // SAFETY: the caller guarantees `n` readable TIDs at `queued` (n is clamped to the
    // per-CPU buffer's size); they are copied out before the call returns.
    let queued = unsafe { core::slice::from_raw_parts(queued, n) };
    hooks::futex_woken(now, woken, waker, queued);
}

/// Task `task` (TID `tid`) joins CPU `cpu`'s runqueue, where `curr` runs; returns true if the
/// CPU should reschedule.
///
/// # Safety
///
/// `task` is the live task the enqueue hook was called with; the caller holds its rq lock.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_enqueue(
    now: u64,
    cpu: c_uint,
    tid: i32,
    task: *mut c_void,
    curr: i32,
) -> bool {
    let Some(task) = TaskRef::from_raw(task) else {
        return false;
    };
    hooks::enqueue(now, cpu, tid, task, curr)
}

/// `tid` leaves CPU `cpu`'s runqueue.
#[no_mangle]
pub extern "C" fn sp_hook_dequeue(now: u64, cpu: c_uint, tid: i32) {
    hooks::dequeue(now, cpu, tid);
}

/// `tid`, a woken waiter by its lane, leaves its runqueue to sleep; its wait record names
/// `lock` (0: none), which names `owner` as its owner now (0: none).
#[no_mangle]
pub extern "C" fn sp_hook_slept(now: u64, tid: i32, lock: u64, owner: i32) {
    hooks::lock_event(now, Event::WaiterSlept { tid, lock, owner });
}

/// The task CPU `cpu` should run instead of CFS's pick `fair_next` (TID, 0: none), or NULL.
///
/// `preempted` (TID `preempted_tid`), if not NULL, is the task that ran until now, preempted
/// and still queued on this CPU, which may be a critical thread inside a tracked wait.
/// Writes to `*deadline` when a boosted task running on this CPU next reaches a bound (0: no
/// boosted task runs), for the caller to arm a timer that asks again then.
///
/// # Safety
///
/// `rq` is CPU `cpu`'s runqueue and the caller (the pick hook) holds its lock; `preempted` is
/// NULL or a live task queued on `rq`; `deadline` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_pick(
    now: u64,
    rq: *mut c_void,
    cpu: c_uint,
    fair_next: i32,
    preempted: *mut c_void,
    preempted_tid: i32,
    deadline: *mut u64,
) -> *mut c_void {
    let Some(rq) = NonNull::new(rq) else {
        return core::ptr::null_mut();
    };
    // SAFETY: the caller holds `rq`'s lock for the whole call.
    let rq = unsafe { RqRef::new(rq) };
    // INVARIANT: a hook argument, live while the hook runs.
    let preempted = TaskRef::from_raw(preempted).map(|t| (t, preempted_tid));
    let picked = hooks::pick(now, rq, cpu, fair_next, preempted);
    if !deadline.is_null() {
        // SAFETY: the caller passes a pointer valid for a write.
        unsafe { deadline.write(picked.deadline.unwrap_or(0)) };
    }
    picked.task.map_or(core::ptr::null_mut(), TaskRef::as_ptr)
}

/// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
#[no_mangle]
pub extern "C" fn sp_hook_preempt(now: u64, cpu: c_uint, curr: i32, waking: i32) -> bool {
    hooks::should_preempt(now, cpu, curr, waking)
}

/// The CPU waking task `tid` should run on, or -1 for no opinion.
#[no_mangle]
pub extern "C" fn sp_hook_select(
    now: u64,
    tid: i32,
    prev_cpu: c_uint,
    idle: u64,
    allowed: u64,
) -> i32 {
    hooks::select_cpu(now, tid, prev_cpu, idle, allowed).map_or(-1, |c| c as i32)
}

/// The tick on CPU `cpu` (runqueue `rq`, running `curr`); returns true to reschedule.
///
/// # Safety
///
/// `rq` is CPU `cpu`'s runqueue and the caller (the tick hook) holds its lock.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_tick(now: u64, rq: *mut c_void, cpu: c_uint, curr: i32) -> bool {
    let Some(rq) = NonNull::new(rq) else {
        return false;
    };
    // SAFETY: the caller holds `rq`'s lock for the whole call.
    let rq = unsafe { RqRef::new(rq) };
    hooks::tick(now, rq, cpu, curr)
}

/// CPU `cpu`'s bound timer fired at `now`; returns true to reschedule, else writes to `next`
/// when to fire again (0: not again).
///
/// # Safety
///
/// `next` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_bound_timer(now: u64, cpu: c_uint, next: *mut u64) -> bool {
    let answer = hooks::bound_timer(now, cpu);
    if !next.is_null() {
        let at = match answer {
            Answer::Arm(at) => at,
            _ => 0,
        };
        // SAFETY: the caller passes a pointer valid for a write.
        unsafe { next.write(at) };
    }
    answer == Answer::Resched
}

/// The uclamp.min task `tid` should have while it is boosted, or 0 to leave its clamp alone.
#[no_mangle]
pub extern "C" fn sp_hook_uclamp_min(tid: i32) -> u32 {
    match hooks::ask(Event::UclampEff { tid }) {
        Answer::UclampMin(v) => v,
        _ => 0,
    }
}

/// Whether running task `tid` should count as not fitting CPU `cpu` (a boosted blocker off the
/// fast CPUs), so an idle CPU of higher capacity pulls it.
#[no_mangle]
pub extern "C" fn sp_hook_misfit(tid: i32, cpu: u32) -> bool {
    hooks::ask(Event::UpdateMisfit { tid, cpu }) == Answer::Misfit
}

/// Whether task `tid`, about to join a futex's queue of waiters, goes ahead of the waiters of
/// its priority.
#[no_mangle]
pub extern "C" fn sp_hook_futex_queue(tid: i32) -> bool {
    hooks::ask(Event::FutexQueue { waiter: tid }) == Answer::First
}

/// Whether load balancing may move task `tid` from CPU `src` to CPU `dst`, taking it off that
/// CPU if `running` (an active balance).
#[no_mangle]
pub extern "C" fn sp_hook_may_migrate(tid: i32, src: u32, dst: u32, running: bool) -> bool {
    let ev = Event::CanMigrate {
        tid,
        src,
        dst,
        running,
    };
    hooks::ask(ev) != Answer::Veto
}

/// Task `task` (TID `tid`) is being freed: forget it everywhere.
///
/// # Safety
///
/// `task` is the task the free_task hook was called with; its memory is still valid.
#[no_mangle]
pub unsafe extern "C" fn sp_hook_task_free(now: u64, tid: i32, task: *mut c_void) {
    hooks::task_free(now, tid, TaskRef::from_raw(task));
}

/// The groups of per-lock-operation probes to keep attached at `now` (`superpass_core::probes`
/// bits), and in `recheck_ns` how soon to ask again while any stays attached.
///
/// # Safety
///
/// `recheck_ns` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sp_probes_poll(now: u64, recheck_ns: *mut u64) -> u32 {
    let (wanted, recheck) = hooks::probes_wanted(now);
    if !recheck_ns.is_null() {
        // SAFETY: the caller passes a pointer valid for a write.
        unsafe { recheck_ns.write(recheck) };
    }
    wanted
}

/// The `/dev/superpass` ioctl: returns 0 or a byte count, or a negative errno.
///
/// # Safety
///
/// `arg` is the user-space address the caller passed to `ioctl(2)`; it is only accessed through
/// the kernel's user-copy routines.
#[no_mangle]
pub unsafe extern "C" fn sp_ioctl(cmd: c_uint, arg: c_ulong) -> c_long {
    match ioctl::ioctl(cmd, arg as usize) {
        Ok(()) => 0,
        Err(e) => -(e.errno() as c_long),
    }
}
