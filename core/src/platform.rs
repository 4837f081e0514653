//! The glue between the engine and a platform, written once for the module and the simulator.
//!
//! A hook hands its event to one function here, which calls [`Engine::handle`] and applies the
//! answer through the [`Platform`] trait: it finds a newly boosted blocker, offers it a push,
//! reports where it is queued, kicks the CPU that should run it, follows a wait it was already
//! asleep in, validates a pick, and sends a pushed task back once its boost ends. The kernel
//! module implements the trait over `task_struct`s and runqueues, the simulator over its
//! world; neither repeats the sequence of calls, so the two cannot drift apart.
//!
//! Every function takes the engine (its lock held, on the module) and the platform for one
//! hook call. A platform that defers side effects (the module's kicks, sent after the engine
//! lock is dropped) does so inside its implementation.

use super::engine::{Engine, Published};
use super::event::{Answer, Event, Running};
use super::observer::Observer;
use super::tunables::{MAX_DEPTH, READER_TABLE_WAYS};
use super::{Cpu, LockId, LockKind, Nanos, Tid, MAX_CPUS};

mod hook;
pub use hook::{Hook, Ran};

/// How many stale engine picks one pick skips before leaving the fair class's choice alone.
pub const PICK_RETRIES: usize = 3;

/// A task as the platform names it to the engine: nonzero, and valid while the engine records
/// it ([`Event::Named`]) or the hook call that produced it runs.
pub type Handle = u64;

/// What a platform reads of the task it would push: the idle CPUs the task may use, how many
/// fair tasks it wrote into the caller's list of others, and whether the task runs now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PushView {
    /// The idle CPUs the task may use, one bit each.
    pub idle_mask: u64,
    /// How many entries of the list of others were written.
    pub n: usize,
    /// True if the task runs on its CPU now.
    pub running: bool,
}

/// A lock wait the platform recorded for a task: one that may have begun before the task
/// mattered, so that no probe reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitRecord {
    /// The lock waited on.
    pub lock: LockId,
    /// What kind of wait.
    pub kind: LockKind,
    /// The owner the lock names (0: none).
    pub owner: Tid,
    /// How many readers were written into the caller's list (an rwsem without a writer).
    pub readers: usize,
}

/// What the task that ran until now on the hook's CPU was waiting for, as its wait record
/// names it ([`Event::Regrant`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CurrentWait {
    /// The task (0: none).
    pub tid: Tid,
    /// The lock its record names if it may be a woken critical waiter, else 0.
    pub lock: LockId,
    /// The owner that lock names now, or 0.
    pub owner: Tid,
}

/// What only the platform can do for the engine, for one hook call.
///
/// Reads may be racy: the engine treats a queued CPU or a running task as a hint, and a pick
/// validates what it runs ([`Platform::pickable`]).
pub trait Platform {
    /// The handle of live task `tid`, or `None` if there is no such task.
    fn lookup(&mut self, tid: Tid) -> Option<Handle>;
    /// The CPU whose runqueue holds the task, if it is queued or running.
    fn queued_cpu(&mut self, task: Handle) -> Option<Cpu>;
    /// The CPU of a task that is not queued, as its task record says: the one it last ran on,
    /// or the one whose runqueue it is joining (a wake-up sets it before the enqueue).
    fn home_cpu(&mut self, task: Handle) -> Option<Cpu>;
    /// The task running on CPU `cpu` (0: none or unknown).
    fn curr(&mut self, cpu: Cpu) -> Tid;
    /// Where a push of the task off CPU `src` may go: fills `others` with the fair tasks running
    /// on the other CPUs it may use.
    fn push_view(&mut self, task: Handle, src: Cpu, others: &mut [Running; MAX_CPUS]) -> PushView;
    /// Requests that the task move to CPU `dst` if it is still on CPU `expect`; false if the
    /// request could not be made.
    fn move_to(&mut self, task: Handle, dst: Cpu, expect: Cpu) -> bool;
    /// Makes CPU `cpu` reschedule, so that its next pick asks the engine.
    fn kick(&mut self, cpu: Cpu);
    /// The lock wait recorded for `tid`, writing the readers it names into `readers`.
    fn wait_record(
        &mut self,
        tid: Tid,
        readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord>;
    /// Stores a published snapshot where the probes read it.
    fn publish(&mut self, published: Published);
    /// True if the task is queued on the runqueue of the hook's CPU `cpu`.
    fn queued_on(&mut self, task: Handle, cpu: Cpu) -> bool;
    /// True if the task may run instead of the fair class's choice on CPU `cpu` now: queued
    /// there, fair and not delayed.
    fn pickable(&mut self, task: Handle, cpu: Cpu) -> bool;
    /// What the task that ran until now on the hook's CPU waits for.
    fn current_wait(&mut self) -> CurrentWait;
    /// Sees each event the glue hands the engine, with the engine's answer.
    fn observe(&mut self, _now: Nanos, _ev: &Event<'_>, _answer: Answer) {}
}

/// What a pick decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Picked {
    /// The boosted task to run instead of the fair class's choice, validated by the platform.
    pub task: Option<(Tid, Handle)>,
    /// When a boosted task running on the CPU reaches its budget, throttle share or slice.
    pub deadline: Option<Nanos>,
}

/// Hands `ev` to the engine and shows it to the platform.
#[inline]
fn call<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    ev: Event<'_>,
) -> Answer {
    let a = e.handle(now, ev);
    p.observe(now, &ev, a);
    a
}

/// A lock or task event: the engine decides, and the blockers it newly boosts are placed.
pub fn lock_event<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    ev: Event<'_>,
) {
    let a = call(e, p, now, ev);
    place(e, p, now, a, 0);
    send_back(e, p, now);
}

/// Lock events one hook reports together, in order.
pub fn lock_events<'a, O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    evs: impl IntoIterator<Item = Event<'a>>,
) {
    for ev in evs {
        let a = call(e, p, now, ev);
        place(e, p, now, a, 0);
    }
    send_back(e, p, now);
}

/// A wait on an rwsem (or a binder call) starts, with the holders the platform sees: the engine
/// first takes them ([`Event::LockSeen`]), then the wait.
pub fn wait_start_seen<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    ev: Event<'_>,
    lock: LockId,
    writer: Tid,
    readers: &[Tid],
) {
    let seen = Event::LockSeen {
        lock,
        owner: writer,
        readers,
    };
    call(e, p, now, seen);
    lock_event(e, p, now, ev);
}

/// Task `tid` (the platform's `task`, 0: none) joins CPU `cpu`'s runqueue, where `curr` runs;
/// true if that CPU should reschedule.
pub fn enqueue<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    tid: Tid,
    task: Handle,
    curr: Tid,
) -> bool {
    let ev = Event::Enqueue {
        cpu,
        tid,
        handle: task,
        curr,
    };
    let resched = call(e, p, now, ev) == Answer::Resched;
    send_back(e, p, now);
    resched
}

/// `tid` leaves CPU `cpu`'s runqueue.
pub fn dequeue<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    tid: Tid,
) {
    call(e, p, now, Event::Dequeue { cpu, tid });
    send_back(e, p, now);
}

/// The task CPU `cpu` should run instead of the fair class's `fair_next`; `preempted` ran until
/// now, stays queued there and may be a critical thread inside a tracked wait.
pub fn pick<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    fair_next: Tid,
    preempted: Option<(Tid, Handle)>,
) -> Picked {
    if let Some((tid, handle)) = preempted {
        call(e, p, now, Event::Preempted { cpu, tid, handle });
    }
    locate(e, p, now, cpu);
    let mut task = pick_valid(e, p, now, cpu, fair_next);
    // The pick charged the task that ran until now: a turn that ran out there hands the
    // lock's holders their grants now. One of them queued here is picked now, as a kick of
    // this CPU would be lost: the kernel clears the running task's resched flag after a pick.
    if regrant(e, p, now) {
        task = pick_valid(e, p, now, cpu, fair_next);
    }
    send_back(e, p, now);
    let deadline = match call(e, p, now, Event::Bound { cpu }) {
        Answer::Arm(at) => Some(at),
        Answer::Resched => Some(now),
        _ => None,
    };
    Picked { task, deadline }
}

/// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
pub fn should_preempt<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    curr: Tid,
    waking: Tid,
) -> bool {
    let r = call(e, p, now, Event::Wakeup { cpu, curr, waking }) == Answer::Resched;
    send_back(e, p, now);
    r
}

/// Where waking task `tid`, last on `prev_cpu`, should run, if the engine has an opinion.
pub fn select_cpu<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    tid: Tid,
    prev_cpu: Cpu,
    idle_mask: u64,
    allowed_mask: u64,
) -> Option<Cpu> {
    let ev = Event::SelectCpu {
        tid,
        prev_cpu,
        idle_mask,
        allowed_mask,
    };
    let r = match call(e, p, now, ev) {
        Answer::Place(cpu) => Some(cpu),
        _ => None,
    };
    send_back(e, p, now);
    r
}

/// The tick on CPU `cpu`, where `curr` runs; true if it should reschedule. A task the engine
/// grants again here is placed, as after a lock event.
pub fn tick<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    curr: Tid,
) -> bool {
    locate(e, p, now, cpu);
    let resched = call(e, p, now, Event::Tick { cpu, curr }) == Answer::Resched;
    regrant(e, p, now);
    send_back(e, p, now);
    resched
}

/// A question whose answer changes nothing the platform must apply: a balancing or clamp hook's
/// (`UpdateMisfit`, `CanMigrate`, `UclampEff`), a bound timer's (`Bound`), a task's exit
/// (`TaskExit`).
pub fn ask<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    ev: Event<'_>,
) -> Answer {
    call(e, p, now, ev)
}

/// Makes the grants due after a tick or a pick (`Event::Regrant`) and places those tasks; true
/// if there were any.
fn regrant<O: Observer, P: Platform>(e: &mut Engine<O>, p: &mut P, now: Nanos) -> bool {
    let CurrentWait { tid, lock, owner } = p.current_wait();
    let a = call(
        e,
        p,
        now,
        Event::Regrant {
            curr: tid,
            lock,
            owner,
        },
    );
    let any = !a.newly_boosted().is_empty();
    place(e, p, now, a, 0);
    any
}

/// The engine's pick for CPU `cpu`, validated by the platform; a stale one is dropped from the
/// engine's queue, or moved to where the task is queued now.
fn pick_valid<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    cpu: Cpu,
    fair_next: Tid,
) -> Option<(Tid, Handle)> {
    for _ in 0..PICK_RETRIES {
        let Answer::Run { tid, handle } = call(e, p, now, Event::Pick { cpu, fair_next }) else {
            return None;
        };
        if handle != 0 && p.pickable(handle, cpu) {
            return Some((tid, handle));
        }
        call(e, p, now, Event::Dequeue { cpu, tid });
        // Moved, not asleep: a load balance took it before the lanes that report its enqueue
        // there were published. Placed there, it is run at that CPU's next pick or tick; left
        // as if asleep, no pick would find it until it slept and woke.
        let moved = if handle == 0 {
            None
        } else {
            p.queued_cpu(handle).filter(|&c| c != cpu)
        };
        if let Some(c) = moved {
            let ev = Event::Enqueue {
                cpu: c,
                tid,
                handle,
                curr: 0,
            };
            call(e, p, now, ev);
        }
    }
    None
}

/// Tells the engine about boosted tasks queued on CPU `cpu` that it has not placed yet (boosted
/// while already runnable, so that no enqueue announced them).
fn locate<O: Observer, P: Platform>(e: &mut Engine<O>, p: &mut P, now: Nanos, cpu: Cpu) {
    let mut from = 0;
    // Each answer names a later boost slot than the last, so this ends within MAX_GRANTS.
    while let Answer::Unlocated { tid, handle, next } = call(e, p, now, Event::Unlocated { from }) {
        from = next;
        if p.queued_on(handle, cpu) {
            // The answer is moot: this CPU is picking now.
            let ev = Event::Enqueue {
                cpu,
                tid,
                handle: 0,
                curr: 0,
            };
            call(e, p, now, ev);
        }
    }
}

/// Sends every pushed task whose boost has ended back to the CPU it was pushed from. The move
/// is only requested: the engine's lock may be taken under a runqueue lock.
fn send_back<O: Observer, P: Platform>(e: &mut Engine<O>, p: &mut P, now: Nanos) {
    while let Answer::Return { handle, to, expect } = call(e, p, now, Event::PushBack) {
        p.move_to(handle, to, expect);
    }
}

/// Places the tasks answer `a` newly boosts: each is named, offered a push, and reported where
/// it is queued (its CPU kicked if the engine says so); a wait one of them is already in is
/// followed. `depth` counts the waits followed so far, which bounds the recursion.
fn place<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    a: Answer,
    depth: usize,
) {
    if let Answer::Boosted(b) = a {
        place_boosted(e, p, now, b.as_slice(), depth);
    }
}

#[inline(never)]
fn place_boosted<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    boosted: &[Tid],
    depth: usize,
) {
    for &tid in boosted {
        // The engine names a blocker by TID; the scheduler side needs the platform's task.
        let Some(task) = p.lookup(tid) else {
            continue;
        };
        let queued = p.queued_cpu(task);
        // Not queued, it is asleep or joining a runqueue as it is boosted, past the enqueue
        // probe's look at the lanes: then only a pick on the CPU it joins can find it.
        let home = match queued {
            Some(cpu) => Some(cpu),
            None => p.home_cpu(task),
        };
        call(
            e,
            p,
            now,
            Event::Named {
                tid,
                handle: task,
                home,
            },
        );
        if let Some(cpu) = queued {
            if !push(e, p, now, tid, task, cpu) {
                let ev = Event::Enqueue {
                    cpu,
                    tid,
                    handle: task,
                    curr: p.curr(cpu),
                };
                if call(e, p, now, ev) == Answer::Resched {
                    p.kick(cpu);
                }
            }
        }
        if depth < MAX_DEPTH {
            // The task may be starting a lock wait on another CPU right now. Its probe writes
            // the wait record, then reads the lanes; publishing the lanes first and then
            // reading the record, one of the two sees the other: the wait is reported by its
            // probe, or found here, never lost between them.
            p.publish(e.published(now));
            follow_recorded(e, p, now, tid, depth);
        }
    }
}

/// Offers the engine the places newly boosted `tid`, queued on CPU `cpu`, could be pushed to,
/// and requests the move it chooses; true if one was requested. Never inlined: its list of
/// others stays off the stack of `place_boosted`, which recurses up to `MAX_DEPTH` deep.
#[inline(never)]
fn push<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    tid: Tid,
    task: Handle,
    cpu: Cpu,
) -> bool {
    let mut others = [Running {
        cpu: 0,
        tid: 0,
        prio: 0,
    }; MAX_CPUS];
    let view = p.push_view(task, cpu, &mut others);
    let ev = Event::Push {
        tid,
        handle: task,
        cpu,
        running: view.running,
        idle_mask: view.idle_mask,
        others: others.get(..view.n).unwrap_or(&others),
    };
    match call(e, p, now, ev) {
        Answer::Place(dst) => p.move_to(task, dst, cpu),
        _ => false,
    }
}

/// `tid`, just boosted, may be in a lock wait that began before it mattered, so that no probe
/// reported it: if the platform's record holds one, the engine learns it now, and the chain goes
/// on to that lock's holders.
#[cold]
fn follow_recorded<O: Observer, P: Platform>(
    e: &mut Engine<O>,
    p: &mut P,
    now: Nanos,
    tid: Tid,
    depth: usize,
) {
    let mut readers = [0; READER_TABLE_WAYS];
    let Some(w) = p.wait_record(tid, &mut readers) else {
        return;
    };
    let ev = Event::AsleepWait {
        waiter: tid,
        lock: w.lock,
        kind: w.kind,
        owner: w.owner,
        readers: readers.get(..w.readers).unwrap_or(&readers),
    };
    let a = call(e, p, now, ev);
    place(e, p, now, a, depth + 1);
}
