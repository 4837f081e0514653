// SPDX-License-Identifier: GPL-2.0

//! The vendor-hook callbacks: each one hands the engine an event and applies its answer.
//!
//! The C probes have already done the lock-free filtering (nothing boosted, SuperPass off, no
//! critical thread) and extracted plain values; the entry points in the crate root turned them
//! into [`Event`]s. Here the engine lock is taken, the engine decides (the same
//! `Engine::handle` the simulator drives), and the few things only the platform can do are
//! done: finding a newly boosted blocker's `task_struct`, validating the engine's pick against
//! the real runqueue, and kicking the CPU that should run a blocker now.

use crate::ffi;
use crate::state::{self, Guard};
use crate::superpass_core::detector::MAX_BLOCKERS;
use crate::superpass_core::tunables::MAX_DEPTH;
use crate::superpass_core::{Answer, Cpu, Event, LockId, Nanos, Running, Tid, MAX_CPUS};
use crate::{AsleepWait, CurrentWait, RqRef, TaskRef};

/// How many stale engine picks one pick hook skips before leaving CFS's choice alone.
const PICK_RETRIES: usize = 3;

/// The CPU this code runs on: a lock probe runs in the waiting thread, so its wait's CPU.
pub(crate) fn this_cpu() -> Cpu {
    // SAFETY: plain call; it reads the current CPU's number.
    unsafe { ffi::sp_this_cpu() }
}

/// A lock or task event: the engine decides, and newly boosted blockers are found and kicked.
pub(crate) fn lock_event(now: Nanos, ev: Event<'_>) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        let answer = g.engine.handle(now, ev);
        place(&mut g, now, answer.newly_boosted(), &mut kicks, 0);
        send_back(&mut g, now);
    }
    kicks.send();
}

/// Lock events that one hook reports together, in order, under one hold of the engine lock.
pub(crate) fn lock_events(now: Nanos, evs: &[Event<'_>]) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        for &ev in evs {
            let answer = g.engine.handle(now, ev);
            place(&mut g, now, answer.newly_boosted(), &mut kicks, 0);
        }
        send_back(&mut g, now);
    }
    kicks.send();
}

/// A wait on an rwsem starts: the engine first takes the module's view of the lock's holders
/// (its events reach the engine only while tracked waits are on it), then the wait.
pub(crate) fn rwsem_wait_start(
    now: Nanos,
    ev: Event<'_>,
    lock: LockId,
    writer: Tid,
    readers: &[Tid],
) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        let seen = Event::LockSeen {
            lock,
            owner: writer,
            readers,
        };
        g.engine.handle(now, seen);
        let answer = g.engine.handle(now, ev);
        place(&mut g, now, answer.newly_boosted(), &mut kicks, 0);
        send_back(&mut g, now);
    }
    kicks.send();
}

/// `waiter` starts a futex wait naming `owner` as the holder. The probe calls only for a
/// thread whose interest lane is set (`Published::interest_lanes`), so the hint is checked
/// against the task list only for a thread the engine might track; the engine decides what it
/// means.
pub(crate) fn futex_wait(now: Nanos, waiter: Tid, owner: Tid) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        // SAFETY: plain call; it looks the TID up under RCU and compares thread groups.
        let hinted = unsafe { ffi::sp_futex_hint_owner(owner) };
        // The hint is the waiter's process's own name for the owner; the engine's is the kernel's.
        let ev = Event::FutexWait {
            waiter,
            owner: if hinted > 0 { hinted } else { owner },
            valid: hinted > 0,
            cpu: this_cpu(),
        };
        let answer = g.engine.handle(now, ev);
        place(&mut g, now, answer.newly_boosted(), &mut kicks, 0);
        send_back(&mut g, now);
    }
    kicks.send();
}

/// `waker`'s futex wake woke `woken` while `queued` waited on the same futex: `woken` is the
/// next blocker of any other of them the engine tracks, `waker` no longer holds it, and if
/// `woken` is queued itself, its own tracked wait was woken.
pub(crate) fn futex_woken(now: Nanos, woken: Tid, waker: Tid, queued: &[Tid]) {
    let mut kicks = Kicks::new();
    {
        let Some(mut g) = state::lock() else { return };
        for &q in queued {
            let answer = g
                .engine
                .handle(now, Event::from_hook_futex_woken(q, woken, waker));
            place(&mut g, now, answer.newly_boosted(), &mut kicks, 0);
        }
        send_back(&mut g, now);
    }
    kicks.send();
}

/// The TID of the task running on CPU `cpu` (0: unknown), a racy read.
fn cpu_curr(cpu: Cpu) -> Tid {
    // SAFETY: plain call; it reads the runqueue's current task under RCU.
    unsafe { ffi::sp_cpu_curr(cpu) }
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

/// Sends every pushed task whose boost has ended back to the CPU it was pushed from; call
/// after each engine call that may end a boost. The move is only requested here (the engine
/// lock may be taken under a runqueue lock): the stopper of the task's CPU makes it.
fn send_back(g: &mut Guard, now: Nanos) {
    while let Answer::Return { handle, to, expect } = g.engine.handle(now, Event::PushBack) {
        if let Some(task) = task_of(g, handle) {
            task.move_to(to, Some(expect));
        }
    }
}

/// Offers the engine the places newly boosted `task`, on CPU `cpu`, could be pushed to, and
/// requests the move it chooses; true if one was requested.
fn push(g: &mut Guard, now: Nanos, tid: Tid, task: TaskRef, cpu: Cpu) -> bool {
    let mut others = [Running {
        cpu: 0,
        tid: 0,
        prio: 0,
    }; MAX_CPUS];
    let (idle, n) = task.push_view(cpu, &mut others);
    let ev = Event::Push {
        tid,
        handle: task.handle(),
        cpu,
        running: task.running(),
        idle_mask: idle,
        others: &others[..n],
    };
    match g.engine.handle(now, ev) {
        Answer::Place(dst) => task.move_to(dst, Some(cpu)),
        _ => false,
    }
}

/// Records the `task_struct` of each newly boosted task in the engine and where it is queued,
/// notes the CPU to kick if the engine says so, and follows a lock wait the task is in that no
/// probe reported. `depth` counts the waits followed so far, which bounds the recursion.
fn place(g: &mut Guard, now: Nanos, boosted: &[Tid], kicks: &mut Kicks, depth: usize) {
    for &tid in boosted {
        // The engine names a blocker by TID; the scheduler hooks need its task_struct.
        let Some(task) = TaskRef::lookup(tid) else {
            continue;
        };
        g.engine.handle(
            now,
            Event::Named {
                tid,
                handle: task.handle(),
            },
        );
        if let Some(cpu) = task.queued_cpu() {
            if push(g, now, tid, task, cpu) {
                continue;
            }
            // Racy, as the queued CPU is: a pick validates what it runs under the rq lock.
            let ev = Event::Enqueue {
                cpu,
                tid,
                handle: task.handle(),
                curr: cpu_curr(cpu),
            };
            if g.engine.handle(now, ev) == Answer::Resched {
                kicks.add(cpu);
            }
        }
    }
    if depth < MAX_DEPTH && !boosted.is_empty() {
        // A newly boosted task may be starting a lock wait on another CPU right now. Its
        // probe writes the wait record, then reads the lanes; publishing the lanes first and
        // then reading the record, one of the two sees the other: the wait is reported by
        // its probe, or found here, never lost between them.
        g.publish();
        for &tid in boosted {
            follow_unreported(g, now, tid, kicks, depth);
        }
    }
}

/// `tid`, just boosted, may be in a lock wait that began before it mattered, so no probe
/// reported it: if the module's wait record holds one, the engine learns it now, and the chain
/// goes on to that lock's holders.
#[cold]
fn follow_unreported(g: &mut Guard, now: Nanos, tid: Tid, kicks: &mut Kicks, depth: usize) {
    let Some(w) = AsleepWait::of(tid) else {
        return;
    };
    let ev = Event::AsleepWait {
        waiter: tid,
        lock: w.lock,
        kind: w.kind,
        owner: w.owner,
        readers: w.readers(),
    };
    let answer = g.engine.handle(now, ev);
    place(g, now, answer.newly_boosted(), kicks, depth + 1);
}

/// Task `task` joins CPU `cpu`'s runqueue, where `curr` runs; returns true if that CPU should
/// reschedule.
pub(crate) fn enqueue(now: Nanos, cpu: Cpu, tid: Tid, task: TaskRef, curr: Tid) -> bool {
    let Some(mut g) = state::lock() else {
        return false;
    };
    let ev = Event::Enqueue {
        cpu,
        tid,
        handle: task.handle(),
        curr,
    };
    let resched = g.engine.handle(now, ev) == Answer::Resched;
    send_back(&mut g, now);
    resched
}

/// `tid` leaves CPU `cpu`'s runqueue.
pub(crate) fn dequeue(now: Nanos, cpu: Cpu, tid: Tid) {
    if let Some(mut g) = state::lock() {
        g.engine.handle(now, Event::Dequeue { cpu, tid });
        send_back(&mut g, now);
    }
}

/// The `task_struct` behind a handle the engine gave back while `_g` holds its lock.
fn task_of(_g: &Guard, handle: u64) -> Option<TaskRef> {
    // SAFETY: the engine only holds handles of live tasks: `task_free` removes a task's handle,
    // under the engine lock (which `_g` holds), before the task is freed.
    unsafe { TaskRef::from_handle(handle) }
}

/// Tells the engine about boosted tasks found queued on `rq` that it has not placed yet
/// (boosted while already runnable, so no enqueue hook announced them).
fn locate(g: &mut Guard, now: Nanos, rq: RqRef, cpu: Cpu) {
    let mut from = 0;
    // Each answer names a later boost slot than the last, so this ends within MAX_GRANTS.
    while let Answer::Unlocated { tid, handle, next } =
        g.engine.handle(now, Event::Unlocated { from })
    {
        from = next;
        if task_of(g, handle).is_some_and(|t| t.queued_on(rq)) {
            // The answer is moot: this CPU is picking now.
            let ev = Event::Enqueue {
                cpu,
                tid,
                handle: 0,
                curr: 0,
            };
            g.engine.handle(now, ev);
        }
    }
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
    let Some(mut g) = state::lock() else {
        return Picked::default();
    };
    if let Some((task, tid)) = preempted {
        let ev = Event::Preempted {
            cpu,
            tid,
            handle: task.handle(),
        };
        g.engine.handle(now, ev);
    }
    locate(&mut g, now, rq, cpu);
    let mut task = pick_locked(&mut g, now, rq, cpu, fair_next);
    // The pick charged the task that ran until now: a turn that ran out there hands the
    // lock's holders their grants now. One of them queued here is picked now, as a kick of
    // this CPU would be lost: the kernel clears the running task's resched flag after a pick.
    let mut kicks = Kicks::new();
    if regrant(&mut g, now, &mut kicks) {
        task = pick_locked(&mut g, now, rq, cpu, fair_next);
    }
    send_back(&mut g, now);
    let deadline = match g.engine.handle(now, Event::Bound { cpu }) {
        Answer::Arm(at) => Some(at),
        Answer::Resched => Some(now),
        _ => None,
    };
    drop(g);
    kicks.send();
    Picked { task, deadline }
}

/// What a pick decided: the task to run instead of CFS's choice, and when to ask again.
#[derive(Default)]
pub(crate) struct Picked {
    /// The boosted task to run, validated under the rq lock, if CFS's choice is to be replaced.
    pub(crate) task: Option<TaskRef>,
    /// When a boosted task running on this CPU reaches its budget, throttle share or slice.
    pub(crate) deadline: Option<Nanos>,
}

/// [`pick`] with the engine lock held.
fn pick_locked(g: &mut Guard, now: Nanos, rq: RqRef, cpu: Cpu, fair_next: Tid) -> Option<TaskRef> {
    for _ in 0..PICK_RETRIES {
        let Answer::Run { tid, handle } = g.engine.handle(now, Event::Pick { cpu, fair_next })
        else {
            return None;
        };
        match task_of(g, handle) {
            // Validated under the rq lock and the engine lock: queued here, fair, not delayed.
            Some(task) if task.pickable(rq) => return Some(task),
            // The engine's queue is stale (the task moved or sleeps): drop it from there.
            stale => {
                g.engine.handle(now, Event::Dequeue { cpu, tid });
                // Moved, not asleep: a load balance took it before the lanes that report its
                // enqueue there were published. Placed there, it is run at that CPU's next pick
                // or tick; left as if asleep, no pick would find it until it slept and woke.
                if let Some(c) = stale.and_then(TaskRef::queued_cpu).filter(|&c| c != cpu) {
                    let ev = Event::Enqueue {
                        cpu: c,
                        tid,
                        handle,
                        curr: 0,
                    };
                    g.engine.handle(now, ev);
                }
            }
        }
    }
    None
}

/// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
pub(crate) fn should_preempt(now: Nanos, cpu: Cpu, curr: Tid, waking: Tid) -> bool {
    let ev = Event::Wakeup { cpu, curr, waking };
    state::lock().is_some_and(|mut g| g.engine.handle(now, ev) == Answer::Resched)
}

/// Where waking task `tid` should run, if the engine has an opinion.
pub(crate) fn select_cpu(now: Nanos, tid: Tid, prev: Cpu, idle: u64, allowed: u64) -> Option<Cpu> {
    let ev = Event::SelectCpu {
        tid,
        prev_cpu: prev,
        idle_mask: idle,
        allowed_mask: allowed,
    };
    match state::lock()?.engine.handle(now, ev) {
        Answer::Place(cpu) => Some(cpu),
        _ => None,
    }
}

/// The tick on CPU `cpu`; returns true if it should reschedule. A task the engine grants
/// again here (`Event::Regrant`) is found and its CPU kicked, as after a lock event.
pub(crate) fn tick(now: Nanos, rq: RqRef, cpu: Cpu, curr: Tid) -> bool {
    let mut kicks = Kicks::new();
    let resched = {
        let Some(mut g) = state::lock() else {
            return false;
        };
        locate(&mut g, now, rq, cpu);
        let answer = g.engine.handle(now, Event::Tick { cpu, curr });
        regrant(&mut g, now, &mut kicks);
        send_back(&mut g, now);
        answer == Answer::Resched
    };
    kicks.send();
    resched
}

/// Makes the grants due after a tick or a pick (`Event::Regrant`) and places those tasks;
/// true if there were any.
fn regrant(g: &mut Guard, now: Nanos, kicks: &mut Kicks) -> bool {
    let CurrentWait { tid, lock, owner } = CurrentWait::now();
    let ev = Event::Regrant {
        curr: tid,
        lock,
        owner,
    };
    let answer = g.engine.handle(now, ev);
    place(g, now, answer.newly_boosted(), kicks, 0);
    !answer.newly_boosted().is_empty()
}

/// CPU `cpu`'s bound timer, armed after a pick, fired at `now`: the engine's answer to
/// `Event::Bound` (`Resched`, `Arm` or `None`).
pub(crate) fn bound_timer(now: Nanos, cpu: Cpu) -> Answer {
    state::lock().map_or(Answer::None, |mut g| {
        g.engine.handle(now, Event::Bound { cpu })
    })
}

/// Task `tid` is being freed: the engine forgets it, and no pointer to it survives.
pub(crate) fn task_free(now: Nanos, tid: Tid, task: Option<TaskRef>) {
    let Some(mut g) = state::lock() else { return };
    let handle = task.map_or(0, |t| t.handle());
    g.engine.handle(now, Event::TaskExit { tid, handle });
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
    let Some(mut g) = state::lock() else {
        return Answer::None;
    };
    // SAFETY: plain call; it reads the scheduler clock.
    let now = unsafe { ffi::sp_now() };
    g.engine.handle(now, ev)
}
