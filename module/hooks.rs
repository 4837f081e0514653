// SPDX-License-Identifier: GPL-2.0

//! The vendor-hook callbacks: each one hands its event to the glue under the engine lock.
//!
//! The C probes have already done the lock-free filtering (nothing boosted, SuperPass off, no
//! critical thread) and extracted plain values; the entry points in the crate root turned them
//! into [`Event`]s. Here the engine lock is taken and the glue in `superpass_core::platform`,
//! the code the simulator drives, makes the engine's calls and applies its answers through the
//! [`Kernel`] platform. The kicks it asks for are sent once the lock is dropped.

use crate::kernel_platform::{Kernel, Kicks};
use crate::state::{self, TraceObserver};
use crate::superpass_core::platform;
use crate::superpass_core::{Answer, Cpu, Engine, Event, LockId, Nanos, Tid};
use crate::{ffi, RqRef, TaskRef};

/// Runs `f` on the engine and the kernel for a hook holding `rq` locked (if any), under the
/// engine lock, then sends the kicks `f` asked for; `None` while the engine is not installed.
fn with_engine<R>(
    rq: Option<RqRef>,
    f: impl FnOnce(&mut Engine<TraceObserver>, &mut Kernel<'_>) -> R,
) -> Option<R> {
    let mut kicks = Kicks::new();
    let r = {
        let mut g = state::lock()?;
        let (engine, mut kernel) = g.split(rq, &mut kicks);
        f(engine, &mut kernel)
    };
    kicks.send();
    Some(r)
}

/// A lock or task event.
pub(crate) fn lock_event(now: Nanos, ev: Event<'_>) {
    with_engine(None, |e, k| platform::lock_event(e, k, now, ev));
}

/// Lock events that one hook reports together, in order, under one hold of the engine lock.
pub(crate) fn lock_events(now: Nanos, evs: &[Event<'_>]) {
    with_engine(None, |e, k| {
        platform::lock_events(e, k, now, evs.iter().copied())
    });
}

/// A wait on an rwsem (or a binder call) starts: the engine first takes the module's view of
/// the lock's holders (its events reach the engine only while tracked waits are on it), then
/// the wait.
pub(crate) fn rwsem_wait_start(
    now: Nanos,
    ev: Event<'_>,
    lock: LockId,
    writer: Tid,
    readers: &[Tid],
) {
    with_engine(None, |e, k| {
        platform::wait_start_seen(e, k, now, ev, lock, writer, readers)
    });
}

/// `waiter` starts a futex wait naming `owner` as the holder. The probe calls only for a
/// thread whose interest lane is set (`Published::interest_lanes`), so the hint is checked
/// against the task list only for a thread the engine might track; the engine decides what it
/// means.
pub(crate) fn futex_wait(now: Nanos, waiter: Tid, owner: Tid) {
    with_engine(None, |e, k| {
        // The hint is the waiter's process's own name for the owner; the engine's is the
        // kernel's.
        let hinted = ffi::futex_hint_owner(owner);
        let ev = Event::FutexWait {
            waiter,
            owner: hinted.unwrap_or(owner),
            valid: hinted.is_some(),
            cpu: ffi::this_cpu(),
        };
        platform::lock_event(e, k, now, ev);
    });
}

/// `waker`'s futex wake woke `woken` while `queued` waited on the same futex: `woken` is the
/// next blocker of any other of them the engine tracks, `waker` no longer holds it, and if
/// `woken` is queued itself, its own tracked wait was woken.
pub(crate) fn futex_woken(now: Nanos, woken: Tid, waker: Tid, queued: &[Tid]) {
    with_engine(None, |e, k| {
        let evs = queued
            .iter()
            .map(|&q| Event::from_hook_futex_woken(q, woken, waker));
        platform::lock_events(e, k, now, evs);
    });
}

/// Task `task` joins CPU `cpu`'s runqueue, where `curr` runs; returns true if that CPU should
/// reschedule.
pub(crate) fn enqueue(now: Nanos, cpu: Cpu, tid: Tid, task: TaskRef, curr: Tid) -> bool {
    with_engine(None, |e, k| {
        platform::enqueue(e, k, now, cpu, tid, task.handle(), curr)
    })
    .unwrap_or(false)
}

/// `tid` leaves CPU `cpu`'s runqueue.
pub(crate) fn dequeue(now: Nanos, cpu: Cpu, tid: Tid) {
    with_engine(None, |e, k| platform::dequeue(e, k, now, cpu, tid));
}

/// What a pick decided: the task to run instead of CFS's choice, and when to ask again.
#[derive(Default)]
pub(crate) struct Picked {
    /// The boosted task to run, validated under the rq lock, if CFS's choice is to be replaced.
    pub(crate) task: Option<TaskRef>,
    /// When a boosted task running on this CPU reaches its budget, throttle share or slice.
    pub(crate) deadline: Option<Nanos>,
}

/// The task CPU `cpu` should run instead of CFS's choice, validated against `rq`; `preempted`
/// ran until now and stays queued here, and may be a critical thread inside a tracked wait.
pub(crate) fn pick(
    now: Nanos,
    rq: RqRef,
    cpu: Cpu,
    fair_next: Tid,
    preempted: Option<(TaskRef, Tid)>,
) -> Picked {
    with_engine(Some(rq), |e, k| {
        let preempted = preempted.map(|(task, tid)| (tid, task.handle()));
        let p = platform::pick(e, k, now, cpu, fair_next, preempted);
        Picked {
            task: p.task.and_then(|(_, handle)| k.task(handle)),
            deadline: p.deadline,
        }
    })
    .unwrap_or_default()
}

/// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
pub(crate) fn should_preempt(now: Nanos, cpu: Cpu, curr: Tid, waking: Tid) -> bool {
    with_engine(None, |e, k| {
        platform::should_preempt(e, k, now, cpu, curr, waking)
    })
    .unwrap_or(false)
}

/// Where waking task `tid` should run, if the engine has an opinion.
pub(crate) fn select_cpu(now: Nanos, tid: Tid, prev: Cpu, idle: u64, allowed: u64) -> Option<Cpu> {
    with_engine(None, |e, k| {
        platform::select_cpu(e, k, now, tid, prev, idle, allowed)
    })
    .flatten()
}

/// The tick on CPU `cpu`; returns true if it should reschedule.
pub(crate) fn tick(now: Nanos, rq: RqRef, cpu: Cpu, curr: Tid) -> bool {
    with_engine(Some(rq), |e, k| platform::tick(e, k, now, cpu, curr)).unwrap_or(false)
}

/// CPU `cpu`'s bound timer, armed after a pick, fired at `now`: the engine's answer to
/// `Event::Bound` (`Resched`, `Arm` or `None`).
pub(crate) fn bound_timer(now: Nanos, cpu: Cpu) -> Answer {
    with_engine(None, |e, k| platform::ask(e, k, now, Event::Bound { cpu })).unwrap_or(Answer::None)
}

/// Task `tid` is being freed: the engine forgets it, and no pointer to it survives.
pub(crate) fn task_free(now: Nanos, tid: Tid, task: Option<TaskRef>) {
    let handle = task.map_or(0, TaskRef::handle);
    with_engine(None, |e, k| {
        platform::ask(e, k, now, Event::TaskExit { tid, handle })
    });
}

/// The probe groups the engine wants attached at `now`, and how soon to ask again; none while
/// the engine is not installed. Releasing the lock publishes the same snapshot
/// ([`state::Guard`]).
pub(crate) fn probes_wanted(now: Nanos) -> (u32, u64) {
    let Some(mut g) = state::lock() else {
        return (0, 0);
    };
    let p = g.engine.published(now);
    (p.probes, p.probe_recheck_ns)
}

/// A balancing or clamp hook's question (`Event::UpdateMisfit`, `CanMigrate`, `UclampEff`):
/// the engine's answer, or `Answer::None` while the engine is not installed. Their probes ask
/// only for a task that may be boosted, so reading the clock here costs nothing elsewhere.
pub(crate) fn ask(ev: Event<'_>) -> Answer {
    with_engine(None, |e, k| platform::ask(e, k, ffi::now(), ev)).unwrap_or(Answer::None)
}
