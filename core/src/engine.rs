//! The engine: the one object a platform drives, composing every policy piece.
//!
//! The kernel module calls these methods from its hook callbacks (under one spinlock), the
//! simulator from its event loop, and the service's in-memory device from its ioctl path. Each
//! method does bounded work and allocates nothing. Non-critical traffic, by far the most common,
//! is turned away by [`TidFilter`] checks before any table is touched.

use super::abi::{self, AbiError, Message, Request, SameSpace, TidSpace};
use super::critical::CriticalSet;
use super::detector::{Blockers, Detector, Wait};
use super::event::Running;
use super::fasttrack::{Cx, FastTrack, GrantOutcome, Link, MAX_COOLING};
use super::filter::{lanes_may_contain, TidFilter};
pub use super::observer::{NoObserver, Observer, RevokeReason};
use super::probes::{self, ProbeDemand};
use super::pushes::{Pushed, Pushes};
use super::stats::{Counter, Stats, HIST_BUCKETS, NUM_COUNTERS};
use super::tunables::{Tunables, MAX_CRITICAL, NUM_TUNABLES};
use super::wakes::{Wake, WakesInFlight, WAKES_IN_FLIGHT};
use super::{
    futex_wait_lock, is_binder_txn_lock, lock_lane, Cpu, LockId, LockKind, Nanos, Role, Tid,
};

/// The tasks a lock wait boosted, which the platform must locate with [`Engine::enqueue`] if
/// they are already on a runqueue (their enqueue happened before they were boosted).
///
/// The common answers cost one or two stores: "nothing", and the one owner of a mutex. Any
/// other answer is the wait's list of blockers, filtered in place, so naming them costs no
/// second list. Two answers are equal when they name the same tasks in the same order.
///
/// # Invariants
///
/// An answer [`Engine::wait_start`] returns never holds an empty list: no tasks is `Nothing`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Boosted(Named);

/// What a [`Boosted`] holds.
#[derive(Clone, Copy, Debug, Default)]
enum Named {
    #[default]
    Nothing,
    One(Tid),
    List(Blockers),
}

impl PartialEq for Boosted {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Boosted {}

impl Boosted {
    /// The newly boosted tasks.
    #[inline]
    pub fn as_slice(&self) -> &[Tid] {
        match &self.0 {
            Named::Nothing => &[],
            Named::One(t) => core::slice::from_ref(t),
            Named::List(l) => l.as_slice(),
        }
    }
}

/// SuperPass's whole state for one machine.
///
/// # Invariants
///
/// `critical_filter` holds one membership per member of `critical`; `tun` is valid; while
/// `enabled` is false there are no grants.
pub struct Engine<O: Observer = NoObserver> {
    tun: Tunables,
    enabled: bool,
    active_mask: u64,
    critical: CriticalSet,
    critical_filter: TidFilter,
    detector: Detector,
    ft: FastTrack,
    probes: ProbeDemand,
    wakes: WakesInFlight,
    pushes: Pushes,
    stats: Stats,
    obs: O,
}

macro_rules! cx {
    ($s:ident) => {
        &mut Cx {
            t: &$s.tun,
            st: &mut $s.stats,
            obs: &mut $s.obs,
        }
    };
}

mod control;
mod invariants;
mod locks;
mod published;
mod sched;

pub use published::Published;

impl<O: Observer> Engine<O> {
    /// A disabled engine with default tunables for `nr_cpus` CPUs.
    ///
    /// `const` so that the kernel module can build it at compile time in static memory: the
    /// engine is tens of KiB and a kernel stack is 16 KiB.
    pub const fn new(nr_cpus: u32, observer: O) -> Self {
        let tun = Tunables::DEFAULT;
        Self {
            tun,
            enabled: false,
            active_mask: 0,
            critical: CriticalSet::new(),
            critical_filter: TidFilter::new(),
            detector: Detector::new(&tun),
            ft: FastTrack::new(nr_cpus),
            probes: ProbeDemand::new(),
            wakes: WakesInFlight::new(),
            pushes: Pushes::new(),
            stats: Stats::new(),
            obs: observer,
        }
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.obs
    }

    /// The observer, mutably.
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.obs
    }

    /// The tunables in force.
    pub fn tunables(&self) -> &Tunables {
        &self.tun
    }

    /// The counters and histogram.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The critical set.
    pub fn critical(&self) -> &CriticalSet {
        &self.critical
    }

    /// The detector, for introspection and tests.
    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    /// The fast track, for introspection and tests.
    pub fn fast_track(&self) -> &FastTrack {
        &self.ft
    }

    /// True if the fast track is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// True if `tid` might be critical or boosted: the cheap first test of every lock hook.
    #[inline(always)]
    fn interesting(&self, tid: Tid) -> bool {
        self.critical_filter.may_contain(tid) || self.ft.is_boosted(tid)
    }

    /// True if `tid` is registered as critical (cheap when it is not).
    #[inline]
    fn is_critical(&self, tid: Tid) -> bool {
        self.critical_filter.may_contain(tid) && self.critical.contains(tid)
    }

    /// Lock-free summaries for platforms to publish after each call (see
    /// [`filter::lanes_may_contain`](super::filter::lanes_may_contain)): `(interest, boosted)`.
    /// A task whose bit is clear in `interest` is not critical, not boosted, not a
    /// budget-revoked holder waiting for its next window, and has no tracked wait, so none of
    /// its lock waits or releases can matter; one whose bit is clear in `boosted` is not
    /// boosted, so its scheduler events cannot matter.
    pub(crate) fn lanes(&self) -> (u64, u64) {
        let boosted = self.ft.boosted_lanes();
        let interest = boosted
            | self.ft.cooling_lanes()
            | self.critical_filter.lanes()
            | self.detector.waiting_lanes();
        (interest, boosted)
    }

    /// True if `tid` holds the fast track.
    #[inline]
    pub fn is_boosted(&self, tid: Tid) -> bool {
        self.ft.is_boosted(tid)
    }

    /// Records the platform's handle for boosted task `tid` (the module's `task_struct`), so
    /// that the scheduler hooks can find it; does nothing if `tid` is not boosted.
    ///
    /// The handle is dropped when the task stops being boosted, or when an
    /// [`Event::TaskExit`](super::Event::TaskExit) names it; the engine never interprets it.
    pub(crate) fn set_handle(&mut self, tid: Tid, handle: u64, home: Option<Cpu>) {
        self.ft.set_handle(tid, handle, home);
    }

    /// The handle recorded for boosted task `tid`.
    pub(crate) fn handle_of(&self, tid: Tid) -> Option<u64> {
        self.ft.handle(tid)
    }

    /// Forgets `handle` everywhere: what it names is about to be freed.
    pub(crate) fn forget_handle(&mut self, handle: u64) {
        self.ft.forget_handle(handle);
        self.pushes.forget_handle(handle);
    }

    /// The first boosted task (with its handle) in boost slot `from` or later whose runqueue
    /// the platform has not reported with [`Engine::enqueue`] since it was boosted or last
    /// dequeued, with the slot to ask from next.
    pub(crate) fn unlocated_from(&self, from: usize) -> Option<(Tid, u64, usize)> {
        self.ft.unlocated_from(from)
    }
}
