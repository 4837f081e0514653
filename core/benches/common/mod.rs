//! The hot-path operations measured by both the criterion bench and the instruction counter.
//!
//! Each operation is an `#[inline(never)]` function over an engine prepared in the state the
//! kernel sees most often, so criterion times it and callgrind attributes instructions to it.

use std::hint::black_box;
use superpass_core::{Engine, LockKind, NoObserver, Role};

pub const L1: u64 = 0xffff_8880_1234_5000;
pub const CRIT: i32 = 1000;
pub const OTHER: i32 = 1500;
pub const BLOCKER: i32 = 2000;
pub const HOG: i32 = 3000;

/// An engine with one critical thread and a blocker boosted and queued on CPU 1.
pub fn boosted_engine() -> Engine<NoObserver> {
    let mut e = Engine::new(8, NoObserver);
    e.set_enabled(0, true);
    e.add_critical(0, CRIT, Role::Ui).unwrap();
    e.add_critical(0, CRIT + 1, Role::Render).unwrap();
    e.wait_start(1, CRIT, L1, LockKind::Mutex, Some(BLOCKER));
    e.enqueue(1, 1, BLOCKER);
    e
}

/// An engine with critical threads registered but nothing boosted.
pub fn quiet_engine() -> Engine<NoObserver> {
    let mut e = Engine::new(8, NoObserver);
    e.set_enabled(0, true);
    e.add_critical(0, CRIT, Role::Ui).unwrap();
    e.add_critical(0, CRIT + 1, Role::Render).unwrap();
    e
}

/// A critical thread starts waiting on a mutex (names and boosts the owner).
#[inline(never)]
pub fn wait_start_critical(e: &mut Engine<NoObserver>, now: u64) {
    black_box(
        e.wait_start(now, CRIT, L1, LockKind::Mutex, Some(BLOCKER))
            .as_slice()
            .len(),
    );
}

/// The critical thread gets the lock (records the blocking time, revokes the grant).
#[inline(never)]
pub fn wait_finish_critical(e: &mut Engine<NoObserver>, now: u64) {
    e.wait_finish(now, CRIT, L1);
}

/// A non-critical thread waits: the common case, turned away by the filter.
#[inline(never)]
pub fn wait_start_noncritical(e: &mut Engine<NoObserver>, now: u64) {
    black_box(
        e.wait_start(now, OTHER, L1, LockKind::Mutex, Some(BLOCKER))
            .as_slice()
            .len(),
    );
}

/// A non-boosted task is enqueued: the common case.
#[inline(never)]
pub fn enqueue_other(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.enqueue(now, 0, HOG));
}

/// The boosted blocker is enqueued on CPU 1 (where it already is).
#[inline(never)]
pub fn enqueue_boosted(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.enqueue(now, 1, BLOCKER));
}

/// CPU 1 picks: the boosted blocker replaces the fair choice.
#[inline(never)]
pub fn pick_boosted(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.pick(now, 1, HOG));
}

/// CPU 0 picks with no boosted task queued: the common case.
#[inline(never)]
pub fn pick_idle(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.pick(now, 0, HOG));
}

/// A tick on CPU 1 while the boosted blocker runs.
#[inline(never)]
pub fn tick_boosted(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.tick(now, 1, BLOCKER));
}

/// A tick on a CPU with no fast-track work: the common case.
#[inline(never)]
pub fn tick_idle(e: &mut Engine<NoObserver>, now: u64) {
    black_box(e.tick(now, 0, HOG));
}

/// One measured operation: its name, how to build its engine, and the call.
pub struct HotPath {
    pub name: &'static str,
    pub setup: fn() -> Engine<NoObserver>,
    pub op: fn(&mut Engine<NoObserver>, u64),
    /// Called after each `op` to restore the state (not measured), if the op changes it.
    pub undo: Option<fn(&mut Engine<NoObserver>, u64)>,
}

pub const HOT_PATHS: &[HotPath] = &[
    HotPath {
        name: "wait_start_critical",
        setup: quiet_engine,
        op: wait_start_critical,
        undo: Some(wait_finish_critical),
    },
    HotPath {
        name: "wait_finish_critical",
        setup: boosted_engine,
        op: wait_finish_critical,
        undo: Some(wait_start_critical),
    },
    HotPath {
        name: "wait_start_noncritical",
        setup: boosted_engine,
        op: wait_start_noncritical,
        undo: None,
    },
    HotPath {
        name: "enqueue_other",
        setup: boosted_engine,
        op: enqueue_other,
        undo: None,
    },
    HotPath {
        name: "enqueue_boosted",
        setup: boosted_engine,
        op: enqueue_boosted,
        undo: None,
    },
    HotPath {
        name: "pick_boosted",
        setup: boosted_engine,
        op: pick_boosted,
        undo: None,
    },
    HotPath {
        name: "pick_idle",
        setup: boosted_engine,
        op: pick_idle,
        undo: None,
    },
    HotPath {
        name: "tick_boosted",
        setup: boosted_engine,
        op: tick_boosted,
        undo: None,
    },
    HotPath {
        name: "tick_idle",
        setup: boosted_engine,
        op: tick_idle,
        undo: None,
    },
];
