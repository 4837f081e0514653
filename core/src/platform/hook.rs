//! A platform hook's call into the glue, as one value.
//!
//! Each variant names one glue entry point with its arguments, so that a hook call can be
//! recorded and made again: the simulator's tests replay every call it makes through a second
//! engine and check that the glue asks the platform the same things in the same order.

use super::super::engine::Engine;
use super::super::event::{Answer, Event};
use super::super::observer::Observer;
use super::super::{Cpu, LockId, Nanos, Tid};
use super::{Handle, Picked, Platform};

/// A hook's call into the glue: one of its entry points, with that entry point's arguments
/// after the engine, the platform and the time, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook<'a> {
    /// [`super::lock_event`]`(ev)`.
    LockEvent(Event<'a>),
    /// [`super::lock_events`]`(evs)`.
    LockEvents(&'a [Event<'a>]),
    /// [`super::wait_start_seen`]`(ev, lock, writer, readers)`.
    WaitStartSeen(Event<'a>, LockId, Tid, &'a [Tid]),
    /// [`super::enqueue`]`(cpu, tid, task, curr)`.
    Enqueue(Cpu, Tid, Handle, Tid),
    /// [`super::dequeue`]`(cpu, tid)`.
    Dequeue(Cpu, Tid),
    /// [`super::pick`]`(cpu, fair_next, preempted)`.
    Pick(Cpu, Tid, Option<(Tid, Handle)>),
    /// [`super::should_preempt`]`(cpu, curr, waking)`.
    ShouldPreempt(Cpu, Tid, Tid),
    /// [`super::select_cpu`]`(tid, prev_cpu, idle_mask, allowed_mask)`.
    SelectCpu(Tid, Cpu, u64, u64),
    /// [`super::tick`]`(cpu, curr)`.
    Tick(Cpu, Tid),
    /// [`super::ask`]`(ev)`.
    Ask(Event<'a>),
}

/// What a [`Hook`] returned: its entry point's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ran {
    /// An entry point that returns nothing.
    Done,
    /// `enqueue`, `should_preempt` or `tick`: whether the CPU should reschedule.
    Resched(bool),
    /// `pick`'s decision.
    Picked(Picked),
    /// `select_cpu`'s CPU, if the engine has an opinion.
    Place(Option<Cpu>),
    /// `ask`'s answer.
    Answer(Answer),
}

impl Hook<'_> {
    /// Makes the call: the entry point's result, from the engine and the platform given.
    pub fn run<O: Observer, P: Platform>(self, e: &mut Engine<O>, p: &mut P, now: Nanos) -> Ran {
        match self {
            Hook::LockEvent(ev) => {
                super::lock_event(e, p, now, ev);
                Ran::Done
            }
            Hook::LockEvents(evs) => {
                super::lock_events(e, p, now, evs.iter().copied());
                Ran::Done
            }
            Hook::WaitStartSeen(ev, lock, writer, readers) => {
                super::wait_start_seen(e, p, now, ev, lock, writer, readers);
                Ran::Done
            }
            Hook::Enqueue(cpu, tid, task, curr) => {
                Ran::Resched(super::enqueue(e, p, now, cpu, tid, task, curr))
            }
            Hook::Dequeue(cpu, tid) => {
                super::dequeue(e, p, now, cpu, tid);
                Ran::Done
            }
            Hook::Pick(cpu, fair_next, preempted) => {
                Ran::Picked(super::pick(e, p, now, cpu, fair_next, preempted))
            }
            Hook::ShouldPreempt(cpu, curr, waking) => {
                Ran::Resched(super::should_preempt(e, p, now, cpu, curr, waking))
            }
            Hook::SelectCpu(tid, prev, idle, allowed) => {
                Ran::Place(super::select_cpu(e, p, now, tid, prev, idle, allowed))
            }
            Hook::Tick(cpu, curr) => Ran::Resched(super::tick(e, p, now, cpu, curr)),
            Hook::Ask(ev) => Ran::Answer(super::ask(e, p, now, ev)),
        }
    }
}

impl Ran {
    /// Whether the CPU should reschedule (false for an entry point that does not say).
    pub fn resched(self) -> bool {
        matches!(self, Ran::Resched(true))
    }

    /// The pick's decision (none for another entry point).
    pub fn picked(self) -> Picked {
        match self {
            Ran::Picked(p) => p,
            _ => Picked::default(),
        }
    }

    /// `select_cpu`'s CPU (none for another entry point).
    pub fn place(self) -> Option<Cpu> {
        match self {
            Ran::Place(c) => c,
            _ => None,
        }
    }

    /// `ask`'s answer (`None` for another entry point).
    pub fn answer(self) -> Answer {
        match self {
            Ran::Answer(a) => a,
            _ => Answer::None,
        }
    }
}
