// SPDX-License-Identifier: GPL-2.0

//! The vendor-hook callbacks: each one forwards to the engine and applies its answer.
//!
//! The C probes have already done the lock-free filtering (nothing boosted, SuperPass off, no
//! critical thread) and extracted plain values. Here the engine lock is taken, the engine
//! decides, and the few things only the platform can do are done: finding a newly boosted
//! blocker's `task_struct` and runqueue, validating the engine's pick against the real
//! runqueue, and kicking the CPU that should run a blocker now.

use crate::ffi;
use crate::state::{self, Guard};
use crate::superpass_core::detector::MAX_BLOCKERS;
use crate::superpass_core::{Cpu, LockId, LockKind, Nanos, Tid};
use crate::{RqRef, TaskRef};

/// How many stale engine picks one pick hook skips before leaving CFS's choice alone.
const PICK_RETRIES: usize = 3;

/// `waiter` starts waiting for `lock`; boosts its blockers and kicks the CPUs they sit on.
pub(crate) fn wait_start(now: Nanos, waiter: Tid, lock: LockId, kind: u32, owner: Tid) {
    let Some(kind) = LockKind::from_u32(kind) else {
        return;
    };
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        let boosted = g
            .engine
            .wait_start(now, waiter, lock, kind, (owner > 0).then_some(owner));
        place(&mut g, boosted.as_slice(), &mut kicks);
    }
    kicks.send();
}

/// CPUs to kick once the engine lock is dropped.
struct Kicks {
    cpus: [Cpu; MAX_BLOCKERS],
    n: usize,
}

impl Kicks {
    fn new() -> Self {
        Self {
            cpus: [0; MAX_BLOCKERS],
            n: 0,
        }
    }

    fn add(&mut self, cpu: Cpu) {
        if self.n < self.cpus.len() && !self.cpus[..self.n].contains(&cpu) {
            self.cpus[self.n] = cpu;
            self.n += 1;
        }
    }

    /// Sends the kicks; call without the engine lock. The kicked CPU's next pick locates
    /// and runs the blocker.
    fn send(&self) {
        for &cpu in &self.cpus[..self.n] {
            // SAFETY: plain call; `sp_kick_cpu` ignores offline or out-of-range CPUs.
            unsafe { ffi::sp_kick_cpu(cpu) };
        }
    }
}

/// Finds the `task_struct` of each newly boosted task and notes the CPU to kick.
fn place(g: &mut Guard, boosted: &[Tid], kicks: &mut Kicks) {
    for &tid in boosted {
        // The engine names a blocker by TID; the scheduler hooks need its task_struct.
        let Some(task) = TaskRef::lookup(tid) else {
            continue;
        };
        g.engine.observer_mut().tasks.set(tid, task, false);
        if let Some(cpu) = task.queued_cpu() {
            kicks.add(cpu);
        }
    }
}

/// `waiter` stopped waiting for `lock`.
pub(crate) fn wait_finish(now: Nanos, waiter: Tid, lock: LockId) {
    if let Some(mut g) = state::lock() {
        g.engine.wait_finish(now, waiter, lock, true);
    }
}

/// Most waits re-announced when one lock changes owner.
const MAX_REANNOUNCE: usize = 8;

/// `tid` acquired or released `lock` as its owner.
///
/// A new owner may have taken the lock from under tracked waiters: a mutex or rwsem waiter
/// that was woken by the release but had not run yet goes back to sleep inside the same
/// wait, with no new wait-start hook. Those waits are announced again with the new owner,
/// so the engine names (and boosts) the task that blocks them now.
pub(crate) fn owner(now: Nanos, lock: LockId, tid: Tid, acquired: bool) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        if !acquired {
            g.engine.owner_released(now, lock, tid);
            return;
        }
        g.engine.owner_acquired(now, lock, tid);
        let mut again = [(0 as Tid, LockKind::Mutex); MAX_REANNOUNCE];
        let mut n = 0;
        for w in g.engine.detector().waits() {
            if w.lock == lock && w.waiter != tid && n < again.len() {
                again[n] = (w.waiter, w.kind);
                n += 1;
            }
        }
        for &(waiter, kind) in &again[..n] {
            let boosted = g.engine.wait_start(now, waiter, lock, kind, Some(tid));
            place(&mut g, boosted.as_slice(), &mut kicks);
        }
    }
    kicks.send();
}

/// `tid` acquired or released a read hold of `lock`.
pub(crate) fn reader(now: Nanos, lock: LockId, tid: Tid, acquired: bool) {
    if let Some(mut g) = state::lock() {
        if acquired {
            g.engine.reader_acquired(now, lock, tid);
        } else {
            g.engine.reader_released(now, lock, tid);
        }
    }
}

/// Task `task` joins CPU `cpu`'s runqueue; returns true if that CPU should reschedule.
pub(crate) fn enqueue(now: Nanos, cpu: Cpu, tid: Tid, task: TaskRef) -> bool {
    let Some(mut g) = state::lock() else {
        return false;
    };
    if !g.engine.is_boosted(tid) {
        return false;
    }
    g.engine.observer_mut().tasks.set(tid, task, true);
    g.engine.enqueue(now, cpu, tid)
}

/// `tid` leaves CPU `cpu`'s runqueue.
pub(crate) fn dequeue(now: Nanos, cpu: Cpu, tid: Tid) {
    let Some(mut g) = state::lock() else { return };
    if g.engine.is_boosted(tid) {
        g.engine.dequeue(now, cpu, tid);
        g.engine.observer_mut().tasks.unlocate(tid);
    }
}

/// Tells the engine about boosted tasks found queued on `rq` that it has not placed yet
/// (boosted while already runnable, so no enqueue hook announced them).
fn locate(g: &mut Guard, now: Nanos, rq: RqRef, cpu: Cpu) {
    let mut found = [0 as Tid; MAX_BLOCKERS];
    let mut n = 0;
    for (tid, task) in g.engine.observer().tasks.unlocated() {
        if n < found.len() && task.queued_on(rq) {
            found[n] = tid;
            n += 1;
        }
    }
    for &tid in &found[..n] {
        g.engine.enqueue(now, cpu, tid);
        if let Some(task) = g.engine.observer().tasks.get(tid) {
            g.engine.observer_mut().tasks.set(tid, task, true);
        }
    }
}

/// The task CPU `cpu` should run instead of CFS's choice, validated against `rq`.
pub(crate) fn pick(now: Nanos, rq: RqRef, cpu: Cpu, prev: Tid, fair_next: Tid) -> Option<TaskRef> {
    let mut g = state::lock()?;
    locate(&mut g, now, rq, cpu);
    for _ in 0..PICK_RETRIES {
        let tid = g.engine.pick(now, cpu, prev, fair_next)?;
        match g.engine.observer().tasks.get(tid) {
            // Validated under the rq lock and the engine lock: queued here, fair, not delayed.
            Some(task) if task.pickable(rq) => return Some(task),
            _ => {
                // The engine's queue is stale (the task moved or sleeps): drop it from there.
                g.engine.dequeue(now, cpu, tid);
                g.engine.observer_mut().tasks.unlocate(tid);
            }
        }
    }
    None
}

/// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
pub(crate) fn should_preempt(now: Nanos, cpu: Cpu, curr: Tid, waking: Tid) -> bool {
    state::lock().is_some_and(|mut g| g.engine.should_preempt(now, cpu, curr, waking))
}

/// Where waking task `tid` should run, if the engine has an opinion.
pub(crate) fn select_cpu(now: Nanos, tid: Tid, prev: Cpu, idle: u64, allowed: u64) -> Option<Cpu> {
    let mut g = state::lock()?;
    g.engine.select_cpu(now, tid, prev, idle, allowed)
}

/// The tick on CPU `cpu`; returns true if it should reschedule.
pub(crate) fn tick(now: Nanos, rq: RqRef, cpu: Cpu, curr: Tid) -> bool {
    let Some(mut g) = state::lock() else {
        return false;
    };
    locate(&mut g, now, rq, cpu);
    g.engine.tick(now, cpu, curr)
}

/// Task `tid` is being freed: the engine forgets it, and no pointer to it survives.
pub(crate) fn task_free(now: Nanos, tid: Tid, task: Option<TaskRef>) {
    let Some(mut g) = state::lock() else { return };
    g.engine.task_exit(now, tid);
    if let Some(task) = task {
        g.engine.observer_mut().tasks.forget(task);
    }
}
