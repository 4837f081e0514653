//! The engine: the one object a platform drives, composing every policy piece.
//!
//! The kernel module calls these methods from its hook callbacks (under one spinlock), the
//! simulator from its event loop, and the service's in-memory device from its ioctl path. Each
//! method does bounded work and allocates nothing. Non-critical traffic, by far the most common,
//! is turned away by [`TidFilter`] checks before any table is touched.

use super::abi::{self, AbiError, Message, Request};
use super::critical::CriticalSet;
use super::detector::{Blockers, Detector, Wait};
use super::fasttrack::{Cx, FastTrack, GrantOutcome, Link, MAX_COOLING};
use super::filter::{lanes_may_contain, TidFilter};
use super::probes::{self, ProbeDemand};
use super::stats::{Counter, Stats, HIST_BUCKETS, NUM_COUNTERS};
use super::tunables::{Tunables, MAX_CRITICAL, NUM_TUNABLES};
use super::wakes::{Wake, WakesInFlight};
use super::{futex_wait_lock, lock_lane, Cpu, LockId, LockKind, Nanos, Role, Tid};

/// Why a grant ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RevokeReason {
    /// The blocker released the lock.
    Released = 0,
    /// The waiter stopped waiting (it got the lock, or gave up).
    WaiterDone = 1,
    /// The boosted task spent its budget.
    Budget = 2,
    /// The blocker or the waiter exited.
    Exit = 3,
    /// SuperPass was disabled.
    Disabled = 4,
    /// The critical thread was unregistered.
    Unregistered = 5,
    /// The tunables changed.
    Reconfigured = 6,
    /// The chain link the grant hung from ended.
    Chain = 7,
    /// A woken critical thread's wake turn ran its whole `wake_slice_ns`.
    TurnOver = 8,
}

impl RevokeReason {
    /// Every reason, by encoding (`ALL[i] as u32 == i`), for generated tables.
    pub const ALL: [Self; 9] = [
        Self::Released,
        Self::WaiterDone,
        Self::Budget,
        Self::Exit,
        Self::Disabled,
        Self::Unregistered,
        Self::Reconfigured,
        Self::Chain,
        Self::TurnOver,
    ];

    /// The name used in traces (`superpass:revoke reason=...`) and docs.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Released => "released",
            Self::WaiterDone => "waiter_done",
            Self::Budget => "budget",
            Self::Exit => "exit",
            Self::Disabled => "disabled",
            Self::Unregistered => "unregistered",
            Self::Reconfigured => "reconfigured",
            Self::Chain => "chain",
            Self::TurnOver => "turn_over",
        }
    }

    pub(crate) const fn counter(self) -> Counter {
        match self {
            Self::Released => Counter::RevokeReleased,
            Self::WaiterDone => Counter::RevokeWaiterDone,
            Self::Budget => Counter::RevokeBudget,
            Self::Exit => Counter::RevokeExit,
            Self::Disabled => Counter::RevokeDisabled,
            Self::Unregistered => Counter::RevokeUnregistered,
            Self::Reconfigured => Counter::RevokeReconfigured,
            Self::Chain => Counter::RevokeChain,
            Self::TurnOver => Counter::RevokeTurnOver,
        }
    }
}

/// Receives the engine's decisions as they happen: the module turns them into tracepoints,
/// the simulator into trace slices. Every method defaults to doing nothing.
#[expect(unused_variables, reason = "default methods ignore their arguments")]
pub trait Observer {
    /// `waiter` (critical, or a chain link) waits on `lock`, held by `blocker`.
    fn block(&mut self, now: Nanos, waiter: Tid, blocker: Tid, lock: LockId, kind: LockKind) {}
    /// `blocker` was granted the fast track on behalf of `via` (and critical thread `root`).
    fn grant(&mut self, now: Nanos, blocker: Tid, via: Tid, root: Tid, lock: LockId, depth: u32) {}
    /// A grant of `blocker` ended.
    fn revoke(&mut self, now: Nanos, blocker: Tid, reason: RevokeReason) {}
    /// `tid` became boosted (its first grant).
    fn boosted(&mut self, now: Nanos, tid: Tid) {}
    /// `tid` stopped being boosted (its last grant ended for `reason`).
    fn unboosted(&mut self, now: Nanos, tid: Tid, reason: RevokeReason) {}
    /// CPU `cpu` was told to run boosted task `tid` instead of the stock choice.
    fn pick(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {}
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}

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

    /// Records which hooks/mechanisms the platform attached (`abi::mech` bits).
    pub fn set_active(&mut self, mask: u64) {
        self.active_mask = mask;
    }

    /// Turns the fast track on or off; off revokes every grant and forgets every wait.
    pub fn set_enabled(&mut self, now: Nanos, on: bool) {
        if self.enabled && !on {
            self.ft
                .revoke(now, RevokeReason::Disabled, |_| true, cx!(self));
            self.ft.clear_cooling();
            self.detector.reset(&self.tun);
            self.probes.clear();
            self.wakes.clear();
        }
        self.enabled = on;
    }

    /// The groups of per-lock-operation probes ([`probes`] bits) the platform should keep
    /// attached at `now`: those a tracked wait or a boost needs now, and those needed within
    /// the last `probe_linger_ns`. A platform asks after each call it makes (the answer rises
    /// only then) and again at least every `probe_linger_ns / 2` while any group is attached
    /// (it falls with time alone). O(live waits).
    pub fn probes_wanted(&mut self, now: Nanos) -> u32 {
        if !self.enabled {
            return 0;
        }
        let mut needed = if self.ft.boosted_count() > 0 {
            probes::OWNERS
        } else {
            0
        };
        if self.tun.readers_while_critical != 0 && !self.critical.is_empty() {
            needed |= probes::READERS;
        }
        for w in self.detector.waits() {
            needed |= match w.kind {
                LockKind::Mutex => probes::OWNERS,
                LockKind::RwsemRead | LockKind::RwsemWrite => probes::ALL,
                LockKind::Futex | LockKind::PiFutex => 0,
            };
        }
        self.probes.update(now, needed, &self.tun)
    }

    /// Replaces the tunables; the lock table, grants and probe lingers start afresh under the
    /// new bounds.
    pub fn set_tunables(&mut self, now: Nanos, t: Tunables) -> Result<(), AbiError> {
        t.validate()?;
        self.ft
            .revoke(now, RevokeReason::Reconfigured, |_| true, cx!(self));
        self.tun = t;
        self.ft.configure(&self.tun);
        self.ft.clear_cooling();
        self.detector.reset(&self.tun);
        // Lingers restart under the new probe_linger_ns.
        self.probes.clear();
        // A smaller critical capacity drops the newest registrations.
        while self.critical.len() > t.max_critical as usize {
            let Some((tid, _)) = self.critical.iter().last() else {
                break;
            };
            self.remove_critical(now, tid)?;
        }
        Ok(())
    }

    /// Replaces the critical set with `entries` (all or nothing).
    pub fn set_critical(&mut self, now: Nanos, entries: &[(Tid, Role)]) -> Result<(), AbiError> {
        if entries.len() > self.tun.max_critical as usize {
            return Err(if entries.len() > MAX_CRITICAL {
                AbiError::TooMany
            } else {
                AbiError::NoSpace
            });
        }
        for (i, &(tid, _)) in entries.iter().enumerate() {
            if tid <= 0 || entries.iter().take(i).any(|&(t, _)| t == tid) {
                return Err(AbiError::BadTid);
            }
        }
        let mut old = [0 as Tid; MAX_CRITICAL];
        let mut n = 0;
        for (slot, (tid, _)) in old.iter_mut().zip(self.critical.iter()) {
            *slot = tid;
            n += 1;
        }
        for &tid in old.iter().take(n) {
            if !entries.iter().any(|&(t, _)| t == tid) {
                self.remove_critical(now, tid)?;
            }
        }
        for &(tid, role) in entries {
            self.add_critical(now, tid, role)?;
        }
        Ok(())
    }

    /// Registers `tid` as critical with `role` (or changes its role).
    pub fn add_critical(&mut self, _now: Nanos, tid: Tid, role: Role) -> Result<(), AbiError> {
        let new = !self.critical.contains(tid);
        self.critical
            .add(tid, role, self.tun.max_critical as usize)?;
        if new {
            self.critical_filter.insert(tid);
        }
        Ok(())
    }

    /// Unregisters `tid`, ending every grant made on its behalf.
    pub fn remove_critical(&mut self, now: Nanos, tid: Tid) -> Result<(), AbiError> {
        self.critical.remove(tid)?;
        self.critical_filter.remove(tid);
        if let Some(w) = self.detector.wait_of(tid) {
            if w.depth == 0 {
                self.detector.wait_finish(tid);
            }
        }
        self.ft.revoke(
            now,
            RevokeReason::Unregistered,
            |g| g.root == tid,
            cx!(self),
        );
        Ok(())
    }

    /// True if `tid` might be critical or boosted: the cheap first test of every lock hook.
    #[inline(always)]
    fn interesting(&self, tid: Tid) -> bool {
        self.critical_filter.may_contain(tid) || self.ft.is_boosted(tid)
    }

    /// `waiter` starts waiting for `lock`; names its blockers and boosts them.
    ///
    /// `owner` is the owner the platform can see directly (mutex owner, rwsem writer), if any.
    /// Returns the tasks that became boosted, which the platform should locate with
    /// [`Engine::enqueue`] if they already sit on a runqueue.
    #[inline]
    pub fn wait_start(
        &mut self,
        now: Nanos,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Option<Tid>,
    ) -> Boosted {
        let mut out = Boosted::default();
        if self.enabled && (self.critical_filter.may_contain(waiter) || self.ft.is_boosted(waiter))
        {
            match owner {
                // A mutex or futex whose one owner the platform named: the common case.
                Some(o) if o > 0 && o != waiter && kind.exclusive() => {
                    // The common answer comes back in a register, not through memory.
                    let one = self.wait_start_owner(now, &mut out, waiter, lock, kind, o);
                    if one > 0 {
                        return Boosted(Named::One(one));
                    }
                }
                _ => self.wait_start_any(now, waiter, lock, kind, owner, &mut out),
            }
        }
        out
    }

    /// [`Engine::wait_start`] on a mutex or futex owned by `owner` (not the waiter).
    ///
    /// Returns `owner` if it is the one task the wait boosted (the common case), else 0 with
    /// the answer in `out`.
    ///
    /// `out` comes before the wait's own arguments: in this order the fast path keeps them all
    /// in registers but `owner`, the seventh, which it reads from the stack once (with `out`
    /// last, the lock id was spilled and reloaded).
    #[inline(never)]
    fn wait_start_owner(
        &mut self,
        now: Nanos,
        out: &mut Boosted,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Tid,
    ) -> Tid {
        // The common case: a critical waiter and an owner not boosted yet. Every way that can
        // go otherwise is ruled out before anything changes, so each one leaves the whole wait
        // to the general path, and what is left cannot fail (`fresh_slots` rules out a
        // `max_depth` that allows no grant).
        if self.critical.contains(waiter) {
            if let Some(j) = self.detector.free_wait_slot(waiter) {
                if let Some(slots) = self.ft.fresh_slots(owner) {
                    self.wait_start_owned(now, waiter, lock, kind, owner, j, slots);
                    return owner;
                }
            }
        }
        self.wait_start_any(now, waiter, lock, kind, Some(owner), out);
        0
    }

    /// What [`Engine::wait_start_any`] does, in the same order, when critical `waiter` waits on
    /// `lock` (the wait to go in wait slot `j.0`, making `hi` `j.1`) held by `owner`, who is not
    /// boosted and gets grant and boost slots `slots`.
    #[inline(always)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the fast path's precomputed slots"
    )]
    fn wait_start_owned(
        &mut self,
        now: Nanos,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Tid,
        j: (usize, usize),
        slots: (usize, usize),
    ) {
        // Counted together, ahead of the records: `BlockersFound` sits next to `Grants`, and
        // bumped in the same block the two are merged into a vector add of more instructions.
        self.stats.bump(Counter::CriticalWaits);
        self.stats.bump(Counter::BlockersFound);
        let w = Wait {
            waiter,
            lock,
            kind,
            start: now,
            root: waiter,
            depth: 0,
            woken: false,
        };
        self.detector
            .wait_start_owned(now, j, w, owner, &mut self.stats);
        self.obs.block(now, waiter, owner, lock, kind);
        let link = Link {
            blocker: owner,
            via: waiter,
            root: waiter,
            lock,
            depth: 1,
        };
        self.ft.grant_fresh(now, slots, link, cx!(self));
    }

    /// [`Engine::wait_start`] for any waiter, lock kind and owner.
    #[cold]
    #[inline(never)]
    fn wait_start_any(
        &mut self,
        now: Nanos,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Option<Tid>,
        out: &mut Boosted,
    ) {
        let (root, depth) = if self.critical.contains(waiter) {
            self.stats.bump(Counter::CriticalWaits);
            (waiter, 0)
        } else if let Some((d, r)) = self.ft.chain_of(waiter) {
            self.stats.bump(Counter::ChainWaits);
            (r, d)
        } else {
            return;
        };
        let w = Wait {
            waiter,
            lock,
            kind,
            start: now,
            root,
            depth,
            woken: false,
        };
        self.grant_blockers(now, w, owner, true, out);
    }

    /// Records wait `w` (replacing its waiter's old record) and grants the blockers the lock
    /// table and `owner` name for it; `fresh` for a new wait, false for one that resumes.
    fn grant_blockers(
        &mut self,
        now: Nanos,
        w: Wait,
        owner: Option<Tid>,
        fresh: bool,
        out: &mut Boosted,
    ) {
        let Wait {
            waiter,
            lock,
            kind,
            root,
            depth,
            ..
        } = w;
        out.0 = Named::List(Blockers::default());
        let Named::List(blockers) = &mut out.0 else {
            return;
        };
        self.detector
            .wait_start_into(now, w, owner, &mut self.stats, blockers);
        if blockers.as_slice().is_empty() {
            if depth == 0 && fresh {
                self.stats.bump(Counter::NoBlockerKnown);
            }
            out.0 = Named::Nothing;
            return;
        }
        // What is left of the blockers is the newly boosted ones.
        blockers.retain(|b| {
            self.stats.bump(Counter::BlockersFound);
            self.obs.block(now, waiter, b, lock, kind);
            if depth + 1 > self.tun.max_depth {
                self.stats.bump(Counter::MissedDepth);
                return false;
            }
            if b == root {
                // The chain came back to the critical thread itself: boosting it is pointless.
                return false;
            }
            let link = Link {
                blocker: b,
                via: waiter,
                root,
                lock,
                depth: depth + 1,
            };
            self.ft.grant(now, link, cx!(self)) == GrantOutcome::Boosted
        });
        if blockers.as_slice().is_empty() {
            out.0 = Named::Nothing;
        }
    }

    /// `waiter` stopped waiting for `lock`, with it or without it: either way it no longer
    /// waits, and what follows (an acquire) is reported on its own.
    #[inline]
    pub fn wait_finish(&mut self, now: Nanos, waiter: Tid, lock: LockId) {
        if !self.enabled {
            return;
        }
        if !self.interesting(waiter) {
            // Its boost ended while it waited: the record would otherwise pin a wait slot and
            // its lock's slot until the task exits (unregistering ends a critical wait).
            if self.detector.may_wait(waiter) {
                self.end_forgotten_wait(waiter);
            }
            return;
        }
        if self.ft.may_be_boosted(waiter) {
            self.end_handoff(now, waiter, lock);
        }
        if !self.wakes.is_empty() {
            self.settle_wakes(now, |w| w.woken == waiter);
        }
        let Some(w) = self.detector.wait_finish(waiter) else {
            return;
        };
        if w.lock != lock {
            // A wait on another lock the platform never finished: that one is over too.
            self.stats.bump(Counter::StaleWaits);
        }
        if w.depth == 0 {
            self.stats.blocking.record(now.saturating_sub(w.start));
            self.stats
                .add(Counter::BlockedNs, now.saturating_sub(w.start));
            self.ft
                .revoke_root(now, waiter, RevokeReason::WaiterDone, cx!(self));
        } else {
            self.ft.revoke(
                now,
                RevokeReason::WaiterDone,
                |g| g.via == waiter && g.lock == w.lock,
                cx!(self),
            );
        }
    }

    #[cold]
    fn end_forgotten_wait(&mut self, waiter: Tid) {
        self.detector.wait_finish(waiter);
    }

    /// Ends the grants a woken waiter got for `lock` once its wait is over, unless it holds the
    /// lock by now: an acquire reported after the wait (the mutex order) grants it again.
    #[cold]
    fn end_handoff(&mut self, now: Nanos, waiter: Tid, lock: LockId) {
        // A woken critical waiter's wait is over, and with it the turn it had for its retry.
        self.ft
            .end_turn(now, waiter, RevokeReason::WaiterDone, cx!(self));
        if self.ft.is_boosted(waiter) && !self.detector.holds(lock, waiter) {
            self.ft.revoke_held(now, waiter, lock, cx!(self));
        }
    }

    /// `tid` now owns `lock` (mutex, futex, or rwsem as writer).
    ///
    /// The tracked waits on `lock` follow it: `tid` blocks them now and is granted; a previous
    /// owner's grants for `lock` end. Returns the task this boosted, if any.
    #[inline]
    pub fn owner_acquired(&mut self, now: Nanos, lock: LockId, tid: Tid) -> Boosted {
        let mut out = Boosted::default();
        if self.enabled {
            if let Some(old) = self.detector.owner_acquired(now, lock, tid) {
                self.follow_owner(now, lock, tid, old, &mut out);
            }
        }
        out
    }

    #[cold]
    #[inline(never)]
    fn follow_owner(&mut self, now: Nanos, lock: LockId, tid: Tid, old: Tid, out: &mut Boosted) {
        if old > 0 && old != tid && self.ft.is_boosted(old) {
            // Taken over without a release we saw: the old owner no longer blocks anyone here.
            self.ft.revoke_held(now, old, lock, cx!(self));
        }
        self.follow(now, lock, tid, Counter::FollowGrants, |_| true, out);
    }

    /// Grants `blocker`, which now holds (or is about to take) `lock`, to every tracked wait on
    /// `lock` that `blocks` accepts, within the usual bounds. Sets `out` if it boosted `blocker`.
    fn follow(
        &mut self,
        now: Nanos,
        lock: LockId,
        blocker: Tid,
        why: Counter,
        blocks: impl Fn(&Wait) -> bool,
        out: &mut Boosted,
    ) {
        let mut boosted = false;
        for j in 0..self.detector.wait_end() {
            let Some(w) = self.detector.wait_at(j) else {
                continue;
            };
            if w.lock != lock || w.waiter == blocker || !blocks(&w) {
                continue;
            }
            if w.woken {
                // The waiter runs next and retries; boosting a holder that took the lock
                // meanwhile would keep it off its CPU. It is granted if the waiter sleeps again.
                self.stats.bump(Counter::DeferredGrants);
                continue;
            }
            // Only a wait that still matters, on behalf of the root it matters for now: a chain
            // link's boost may since hang from another critical thread, or from none.
            let (root, depth) = if w.depth == 0 {
                if !self.is_critical(w.waiter) {
                    continue;
                }
                (w.waiter, 0)
            } else {
                match self.ft.chain_of(w.waiter) {
                    Some((d, r)) => (r, d),
                    None => continue,
                }
            };
            if root == blocker {
                continue;
            }
            self.obs.block(now, w.waiter, blocker, lock, w.kind);
            if depth + 1 > self.tun.max_depth {
                self.stats.bump(Counter::MissedDepth);
                continue;
            }
            let link = Link {
                blocker,
                via: w.waiter,
                root,
                lock,
                depth: depth + 1,
            };
            match self.ft.grant(now, link, cx!(self)) {
                GrantOutcome::Boosted => {
                    self.stats.bump(why);
                    boosted = true;
                }
                GrantOutcome::Added => self.stats.bump(why),
                GrantOutcome::Exists | GrantOutcome::Missed => {}
            }
        }
        if boosted {
            out.0 = Named::One(blocker);
        }
    }

    /// `tid` released `lock` as its owner; grants it held for that lock end.
    #[inline]
    pub fn owner_released(&mut self, now: Nanos, lock: LockId, tid: Tid) {
        if !self.enabled {
            return;
        }
        self.detector.owner_released(now, lock, tid);
        if self.ft.is_boosted(tid) {
            self.ft.revoke_held(now, tid, lock, cx!(self));
        }
    }

    /// `tid` took `lock` for reading (a writer doing so downgrades).
    ///
    /// A tracked reader of a lock that tracked waits are on, with no writer, blocks them and is
    /// granted. Returns the task this boosted, if any.
    #[inline]
    pub fn reader_acquired(&mut self, now: Nanos, lock: LockId, tid: Tid) -> Boosted {
        let mut out = Boosted::default();
        if self.enabled
            && self
                .detector
                .reader_acquired(now, lock, tid, &self.tun, &mut self.stats)
        {
            self.follow_reader(now, lock, tid, &mut out);
        }
        out
    }

    #[cold]
    #[inline(never)]
    fn follow_reader(&mut self, now: Nanos, lock: LockId, tid: Tid, out: &mut Boosted) {
        let rwsem = |w: &Wait| matches!(w.kind, LockKind::RwsemRead | LockKind::RwsemWrite);
        self.follow(now, lock, tid, Counter::FollowGrants, rwsem, out);
    }

    /// `tid` released a read hold of `lock`; grants it held for that lock end.
    ///
    /// A recorded reader that takes its tracked place is granted if it blocks tracked waits.
    /// Returns the task this boosted, if any.
    #[inline]
    pub fn reader_released(&mut self, now: Nanos, lock: LockId, tid: Tid) -> Boosted {
        let mut out = Boosted::default();
        if !self.enabled {
            return out;
        }
        let promoted = self
            .detector
            .reader_released(now, lock, tid, &mut self.stats);
        if self.ft.is_boosted(tid) {
            self.ft.revoke_held(now, tid, lock, cx!(self));
        }
        if let Some(p) = promoted {
            self.follow_reader(now, lock, p, &mut out);
        }
        out
    }

    /// A release of `lock` by `waker` is waking `tid`, a waiter that will take the lock when it
    /// runs.
    ///
    /// `waker` no longer holds `lock` (a futex release is seen only through the wake it makes),
    /// but it has yet to make `tid` runnable: grants it held for `lock` end once `tid` joins a
    /// runqueue, or after `wake_slice_ns` (see [`wakes`](super::wakes)). If tracked waits are
    /// still on `lock`, `tid` is their next blocker and is granted now, not when it finally gets
    /// the CPU to take the lock. Returns the task this boosted, if any.
    #[inline]
    pub fn waiter_woken(&mut self, now: Nanos, lock: LockId, tid: Tid, waker: Tid) -> Boosted {
        let mut out = Boosted::default();
        if self.enabled && tid > 0 && self.detector.has_waits_on(lock) {
            if waker > 0 && self.ft.is_boosted(waker) {
                let wake = Wake {
                    woken: tid,
                    waker,
                    lock,
                    since: now,
                };
                if self.tun.wake_slice_ns == 0 || !self.wakes.defer(wake) {
                    self.ft.revoke_held(now, waker, lock, cx!(self));
                }
            }
            if !self.is_critical(tid) {
                self.follow(now, lock, tid, Counter::HandoffGrants, |_| true, &mut out);
            } else {
                self.critical_woken(now, lock, tid, &mut out);
            }
        }
        out
    }

    /// A release woke critical waiter `tid` of `lock`.
    ///
    /// Until it runs and takes the lock or sleeps again, whoever takes the lock meanwhile (a
    /// running task may, before it) is not granted on its behalf: a boosted holder runs ahead
    /// of every other task on its CPU, which may be the one the woken waiter is queued on, so
    /// granting it would keep the waiter from retrying for as long as the holder keeps taking
    /// the lock.
    ///
    /// The waiter itself gets a wake turn: a grant of depth 0, on its own behalf, so that it
    /// runs ahead of fair tasks (or on an idle CPU) and retries before a running holder can
    /// take the lock again. Waiting for a CPU here is most of what is left of a helped wait.
    /// The turn ends with the retry (the wait finishes, or the waiter sleeps again) or after
    /// `wake_slice_ns` of fast-tracked CPU.
    #[cold]
    #[inline(never)]
    fn critical_woken(&mut self, now: Nanos, lock: LockId, tid: Tid, out: &mut Boosted) {
        if !self.detector.set_woken(tid, lock) || self.tun.wake_slice_ns == 0 {
            return;
        }
        let link = Link {
            blocker: tid,
            via: tid,
            root: tid,
            lock,
            depth: 0,
        };
        match self.ft.grant(now, link, cx!(self)) {
            GrantOutcome::Boosted => {
                self.stats.bump(Counter::WakeGrants);
                out.0 = Named::One(tid);
            }
            GrantOutcome::Added => self.stats.bump(Counter::WakeGrants),
            GrantOutcome::Exists | GrantOutcome::Missed => {}
        }
    }

    /// `tid` left its runqueue to sleep. If it is a woken critical waiter, it retried and lost
    /// the lock: the lock's holders block it again and are granted.
    ///
    /// A platform reports this only for tasks in [`Engine::woken_lanes`]. Returns the tasks
    /// this boosted, if any.
    pub fn waiter_slept(&mut self, now: Nanos, tid: Tid) -> Boosted {
        let mut out = Boosted::default();
        if !self.enabled || !lanes_may_contain(self.detector.woken_lanes(), tid) {
            return out;
        }
        if let Some(w) = self.detector.take_woken(tid) {
            // Its retry is over: so is its wake turn.
            self.ft
                .end_turn(now, tid, RevokeReason::WaiterDone, cx!(self));
            if self.is_critical(tid) {
                self.stats.bump(Counter::ResumedWaits);
                self.grant_blockers(now, w, None, false, &mut out);
            }
        }
        out
    }

    /// One bit per woken critical waiter, bit `tid % 64`: whose sleeps a platform reports as
    /// [`Event::WaiterSlept`](super::event::Event::WaiterSlept).
    #[inline]
    pub fn woken_lanes(&self) -> u64 {
        self.detector.woken_lanes()
    }

    /// Whether `tid` might be critical or boosted, i.e. whether its waits could matter.
    ///
    /// A platform asks before doing costly work for a wait (such as checking a futex owner
    /// hint); false positives are possible, false negatives are not.
    #[inline]
    pub fn may_track(&self, tid: Tid) -> bool {
        self.enabled && self.interesting(tid)
    }

    /// `waiter` starts an owner-hinted futex wait naming `owner` (checked by the platform:
    /// `valid`). Only a tracked thread's hint counts: a critical waiter's or a chain link's.
    pub fn futex_wait(&mut self, now: Nanos, waiter: Tid, owner: Tid, valid: bool) -> Boosted {
        if !self.may_track(waiter) {
            return Boosted::default();
        }
        if !valid || owner <= 0 || owner == waiter {
            self.stats.bump(Counter::FutexHintsRejected);
            return Boosted::default();
        }
        self.stats.bump(Counter::FutexHints);
        let lock = futex_wait_lock(waiter);
        self.wait_start(now, waiter, lock, LockKind::Futex, Some(owner))
    }

    /// `tid` exited: forget it everywhere, so no table names a dead task.
    pub fn task_exit(&mut self, now: Nanos, tid: Tid) {
        if !self.wakes.is_empty() {
            self.settle_wakes(now, |w| w.woken == tid || w.waker == tid);
        }
        if self.critical_filter.may_contain(tid) && self.critical.contains(tid) {
            // A TID can be reused: a dead critical thread must not make its successor critical.
            let _ = self.remove_critical(now, tid);
        }
        if !self.interesting(tid) && self.detector.wait_of(tid).is_none() {
            return;
        }
        self.detector.wait_finish(tid);
        self.ft.revoke(
            now,
            RevokeReason::Exit,
            |g| g.blocker == tid || g.via == tid || g.root == tid,
            cx!(self),
        );
    }

    /// `tid` joined CPU `cpu`'s runqueue; returns true if that CPU should reschedule now.
    #[inline]
    pub fn enqueue(&mut self, now: Nanos, cpu: Cpu, tid: Tid) -> bool {
        // The filter turns away almost every task; `FastTrack::enqueue` looks up the rest.
        if !self.ft.may_be_boosted(tid) {
            return false;
        }
        self.enqueue_slow(now, cpu, tid)
    }

    #[inline(never)]
    fn enqueue_slow(&mut self, now: Nanos, cpu: Cpu, tid: Tid) -> bool {
        if !self.wakes.is_empty() {
            self.settle_wakes(now, |w| w.woken == tid);
        }
        self.ft.enqueue(now, cpu, tid, cx!(self))
    }

    /// Ends the wakes in flight that `done` accepts: their releasers' grants for the lock end.
    #[cold]
    fn settle_wakes(&mut self, now: Nanos, done: impl Fn(&Wake) -> bool) {
        while let Some(w) = self.wakes.take(&done) {
            if self.ft.is_boosted(w.waker) {
                self.ft.revoke_held(now, w.waker, w.lock, cx!(self));
            }
        }
    }

    /// Ends the wakes in flight for longer than `wake_slice_ns`: a woken waiter that is not
    /// boosted joins a runqueue unseen.
    pub fn settle_stale_wakes(&mut self, now: Nanos) {
        if !self.wakes.is_empty() {
            let slice = self.tun.wake_slice_ns;
            self.settle_wakes(now, |w| now.saturating_sub(w.since) >= slice);
        }
    }

    /// `tid` left CPU `cpu`'s runqueue.
    #[inline]
    pub fn dequeue(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {
        // As in `enqueue`: `FastTrack::dequeue` looks up what the filter lets through.
        if self.ft.may_be_boosted(tid) {
            self.dequeue_slow(now, cpu, tid);
        }
    }

    #[inline(never)]
    fn dequeue_slow(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {
        self.ft.dequeue(now, cpu, tid, cx!(self));
    }

    /// The task CPU `cpu` should run instead of the fair class's choice `fair_next`, if any.
    #[inline]
    pub fn pick(&mut self, now: Nanos, cpu: Cpu, fair_next: Tid) -> Option<Tid> {
        // Most CPUs have no fast-track work: one test and out, before any context is built.
        if !self.ft.has_work(cpu) {
            return None;
        }
        self.pick_busy(now, cpu, fair_next)
    }

    #[inline(never)]
    fn pick_busy(&mut self, now: Nanos, cpu: Cpu, fair_next: Tid) -> Option<Tid> {
        // Only asked when the CPU could take the fast track, so the common pick stays cheap.
        let (filter, critical) = (&self.critical_filter, &self.critical);
        let protected = || filter.may_contain(fair_next) && critical.contains(fair_next);
        self.ft
            .pick_busy(now, cpu as usize, fair_next, protected, cx!(self))
    }

    /// True if `tid` is registered as critical (cheap when it is not).
    #[inline]
    fn is_critical(&self, tid: Tid) -> bool {
        self.critical_filter.may_contain(tid) && self.critical.contains(tid)
    }

    /// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
    #[inline]
    pub fn should_preempt(&mut self, now: Nanos, cpu: Cpu, curr: Tid, waking: Tid) -> bool {
        let (filter, critical) = (&self.critical_filter, &self.critical);
        let protected = || filter.may_contain(curr) && critical.contains(curr);
        self.ft
            .should_preempt(now, cpu, curr, waking, protected, cx!(self))
    }

    /// Where waking task `tid` should run, if SuperPass has an opinion (an idle CPU): for a
    /// boosted task, the CPU its critical thread's wait started on ([`Engine::wait_cpu`]), else
    /// the idle CPUs of the highest capacity (`fasttrack/placement.rs`).
    #[inline]
    pub fn select_cpu(
        &mut self,
        _now: Nanos,
        tid: Tid,
        prev_cpu: Cpu,
        idle_mask: u64,
        allowed_mask: u64,
    ) -> Option<Cpu> {
        let home = self
            .ft
            .chain_of(tid)
            .and_then(|(_, root)| self.critical.cpu(root));
        self.ft
            .select_cpu(tid, prev_cpu, home, idle_mask, allowed_mask, cx!(self))
    }

    /// Notes that `waiter` starts a lock wait on CPU `cpu`, the CPU a boosted task that blocks
    /// it goes to first when it wakes; a platform reports it before the wait's own event.
    /// Nothing happens unless `waiter` is critical.
    #[inline]
    pub fn wait_cpu(&mut self, waiter: Tid, cpu: Cpu) {
        self.critical.set_cpu(waiter, cpu);
    }

    /// The uclamp.min task `tid` should have now, if SuperPass raises it: `boost_uclamp_min`
    /// while it is boosted (none when that is 0). A platform with uclamp asks whenever the
    /// kernel computes the task's effective clamp.
    #[inline]
    pub fn uclamp_min(&mut self, tid: Tid) -> Option<u32> {
        let v = self.tun.boost_uclamp_min;
        if v == 0 || !self.enabled || !self.ft.is_boosted(tid) {
            return None;
        }
        self.stats.bump(Counter::UclampBoosts);
        Some(v)
    }

    /// Whether task `tid` does not fit CPU `cpu` because it is boosted there and `cpu` is not
    /// one of the fast CPUs (`fasttrack/misfit.rs`); a platform asks where the kernel updates a
    /// running task's misfit status, so an idle CPU of higher capacity pulls it.
    #[inline]
    pub fn misfit(&mut self, tid: Tid, cpu: Cpu) -> bool {
        if !self.enabled || !self.ft.misfit(tid, cpu) {
            return false;
        }
        self.stats.bump(Counter::MisfitMarks);
        true
    }

    /// Whether load balancing may move task `tid` from CPU `src` to CPU `dst`; `running`: it
    /// is taking the task off the CPU it was running on (an active balance). Not a running
    /// misfit blocker onto a CPU a critical thread's lock wait started on
    /// (`fasttrack/misfit.rs`); a queued one, which cannot run where it is, may go anywhere.
    #[inline]
    pub fn may_migrate(&mut self, tid: Tid, src: Cpu, dst: Cpu, running: bool) -> bool {
        if !self.enabled
            || !running
            || self
                .ft
                .may_migrate(tid, src, dst, self.critical_wait_cpus())
        {
            return true;
        }
        self.stats.bump(Counter::MigrateVetoes);
        false
    }

    /// Of `faster` (the idle CPUs of higher capacity than `cpu` that `tid` may run on), those
    /// load balancing would move misfit task `tid` to: [`Engine::misfit`] and
    /// [`Engine::may_migrate`] together, for a platform that balances in one step; `running`
    /// as for [`Engine::may_migrate`].
    #[inline]
    pub fn misfit_targets(&self, tid: Tid, cpu: Cpu, faster: u64, running: bool) -> u64 {
        if !self.enabled {
            return 0;
        }
        let keep_off = if running {
            self.critical_wait_cpus()
        } else {
            0
        };
        self.ft.misfit_targets(tid, cpu, faster, keep_off)
    }

    /// The CPUs the critical threads' live lock waits started on ([`Engine::wait_cpu`]): one
    /// pass over the live waits, made only when a misfit blocker may move.
    fn critical_wait_cpus(&self) -> u64 {
        (0..self.detector.wait_end())
            .filter_map(|j| self.detector.wait_at(j))
            .filter(|w| w.depth == 0)
            .filter_map(|w| self.critical.cpu(w.waiter))
            .filter(|&c| c < 64)
            .fold(0, |m, c| m | 1 << c)
    }

    /// Takes each CPU's capacity (`capacity[cpu]`; the platform's `arch_scale_cpu_capacity`):
    /// waking blockers go to idle CPUs of the highest capacity, and those are the fast CPUs
    /// ([`Engine::set_fast_cpus`]).
    pub fn set_cpu_capacities(&mut self, capacity: &[u32]) {
        self.ft.set_capacities(capacity);
    }

    /// The tick on CPU `cpu` running `curr`; returns true if the CPU should reschedule.
    #[inline]
    pub fn tick(&mut self, now: Nanos, cpu: Cpu, curr: Tid) -> bool {
        if !self.ft.has_work(cpu) {
            return false;
        }
        self.tick_busy(now, cpu, curr)
    }

    #[inline(never)]
    fn tick_busy(&mut self, now: Nanos, cpu: Cpu, curr: Tid) -> bool {
        self.ft.tick_busy(now, cpu as usize, curr, cx!(self))
    }

    /// Whether a budget-revoked task's window has passed at `now` ([`Engine::regrant`] is due):
    /// one compare, made at every tick.
    #[inline(always)]
    pub fn regrant_due(&self, now: Nanos) -> bool {
        self.ft.regrant_due(now)
    }

    /// Grants again each budget-revoked task whose window has passed, if it still holds a lock
    /// (as its owner or a tracked reader) that a tracked wait is on; for a woken critical waiter
    /// whose wake turn ran out, grants the holders of the lock it still waits for, as if it
    /// had slept again. Returns the tasks this boosted.
    #[cold]
    #[inline(never)]
    pub fn regrant(&mut self, now: Nanos) -> Boosted {
        let mut due = [0 as Tid; MAX_COOLING];
        let n = self.ft.take_due(now, &mut due);
        let mut list = Blockers::default();
        if !self.enabled {
            return Boosted::default();
        }
        for &tid in due.iter().take(n) {
            let mut one = Boosted::default();
            if self.is_critical(tid) {
                if let Some(w) = self.detector.take_woken(tid) {
                    self.stats.bump(Counter::ResumedWaits);
                    self.grant_blockers(now, w, None, false, &mut one);
                    for &b in one.as_slice() {
                        list.push(b);
                    }
                }
                continue;
            }
            for j in 0..self.detector.wait_end() {
                let Some(w) = self.detector.wait_at(j) else {
                    continue;
                };
                if self.detector.blocks_as_holder(w.lock, tid) {
                    self.follow(
                        now,
                        w.lock,
                        tid,
                        Counter::BudgetRegrants,
                        |_| true,
                        &mut one,
                    );
                }
            }
            if !one.as_slice().is_empty() {
                list.push(tid);
            }
        }
        Boosted(if list.as_slice().is_empty() {
            Named::Nothing
        } else {
            Named::List(list)
        })
    }

    /// True if budget-revoked tasks wait for their next window: a platform that filters ticks
    /// lets them through to the engine while this holds.
    #[inline]
    pub fn regrants_pending(&self) -> bool {
        self.ft.cooling()
    }

    /// The platform's own view of who holds `lock` (`owner`, 0 for none, and `readers`, oldest
    /// first), given right before a wait on it starts, by a platform that forwards the lock's
    /// acquire and release events only while tracked waits are on it (those whose bit is set in
    /// [`Engine::lock_lanes`]). Ignored while such waits exist: the engine's record is current.
    pub fn lock_seen(&mut self, now: Nanos, lock: LockId, owner: Tid, readers: &[Tid]) {
        if self.enabled {
            self.detector
                .lock_seen(now, lock, owner, readers, &mut self.stats);
        }
    }

    /// A 64-bit summary of the locks tracked waits are on: bit [`lock_lane`]`(lock)` clear
    /// proves no tracked wait is on `lock`, so its acquire and release events cannot change a
    /// decision (given [`Engine::lock_seen`] before each new wait). O(live waits).
    pub fn lock_lanes(&self) -> u64 {
        self.detector
            .waits()
            .fold(0, |m, w| m | 1u64 << lock_lane(w.lock))
    }

    /// When CPU `cpu` should next be asked to pick, if a boosted task runs there (see
    /// [`FastTrack::deadline`]); a platform arms a timer for it after each pick.
    pub fn deadline(&self, cpu: Cpu) -> Option<Nanos> {
        self.ft.deadline(cpu, &self.tun)
    }

    /// Names the platform's fast CPUs (its biggest cores): waking blockers go to an idle one
    /// first. An empty mask, the default, treats every CPU as fast.
    pub fn set_fast_cpus(&mut self, mask: u64) {
        self.ft.set_fast_cpus(mask);
    }

    /// Lock-free summaries for platforms to publish after each call (see
    /// [`filter::lanes_may_contain`](super::filter::lanes_may_contain)): `(interest, boosted)`.
    /// A task whose bit is clear in `interest` is not critical, not boosted and has no tracked
    /// wait, so none of its lock waits can matter; one whose bit is clear in `boosted` is not
    /// boosted, so its scheduler events cannot matter.
    pub fn lanes(&self) -> (u64, u64) {
        let boosted = self.ft.boosted_lanes();
        let interest = boosted | self.critical_filter.lanes() | self.detector.waiting_lanes();
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
    /// The handle is dropped when the task stops being boosted, or by
    /// [`Engine::forget_handle`]; the engine never interprets it.
    pub fn set_handle(&mut self, tid: Tid, handle: u64) {
        self.ft.set_handle(tid, handle);
    }

    /// The handle recorded for boosted task `tid`.
    pub fn handle_of(&self, tid: Tid) -> Option<u64> {
        self.ft.handle(tid)
    }

    /// Forgets `handle` everywhere: what it names is about to be freed.
    pub fn forget_handle(&mut self, handle: u64) {
        self.ft.forget_handle(handle);
    }

    /// Boosted tasks (with their handles) whose runqueue the platform has not reported with
    /// [`Engine::enqueue`] since they were boosted or last dequeued.
    pub fn unlocated(&self) -> impl Iterator<Item = (Tid, u64)> + '_ {
        self.ft.unlocated()
    }

    /// Zeroes counters and the histogram.
    pub fn reset_stats(&mut self) {
        // In place: a `Stats` temporary would take ~13 KiB of (kernel) stack.
        self.stats.counters = [0; NUM_COUNTERS];
        self.stats.blocking.clear();
    }

    /// Applies a decoded request and encodes the reply into `out`, returning its length.
    ///
    /// The platform decides what only it can (privilege, whether TIDs exist) before calling.
    pub fn apply(&mut self, now: Nanos, req: &Request, out: &mut [u8]) -> Result<usize, AbiError> {
        match req {
            Request::GetVersion => {
                let v = abi::VersionInfo {
                    hdr: abi::Header::for_size(abi::VersionInfo::SIZE),
                    max_critical: MAX_CRITICAL as u32,
                    num_tunables: NUM_TUNABLES as u32,
                    num_counters: NUM_COUNTERS as u32,
                    hist_buckets: HIST_BUCKETS as u32,
                    active_mask: self.active_mask,
                };
                v.encode(out)?;
                Ok(abi::VersionInfo::SIZE)
            }
            Request::SetCritical(l) => {
                let mut e = [(0 as Tid, Role::Other); MAX_CRITICAL];
                let n = l.entries().len();
                for (slot, x) in e.iter_mut().zip(l.entries()) {
                    *slot = (x.tid, x.role()?);
                }
                self.set_critical(now, e.get(..n).ok_or(AbiError::TooMany)?)?;
                Ok(0)
            }
            Request::AddCritical(x) => {
                self.add_critical(now, x.tid, x.role()?)?;
                Ok(0)
            }
            Request::RemoveCritical(tid) => {
                self.remove_critical(now, *tid)?;
                Ok(0)
            }
            Request::SetEnabled(on) => {
                self.set_enabled(now, *on);
                Ok(0)
            }
            Request::GetTunables => {
                abi::TunablesMsg::new(&self.tun).encode(out)?;
                Ok(abi::TunablesMsg::SIZE)
            }
            Request::SetTunables(t) => {
                self.set_tunables(now, *t)?;
                Ok(0)
            }
            Request::GetStats => {
                // Encoded from the engine's own arrays: a `StatsMsg` is ~13 KiB, too big for a
                // kernel stack.
                let h = &self.stats.blocking;
                abi::StatsMsg::encode_parts(
                    out,
                    &abi::StatsHead {
                        enabled: self.enabled as u32,
                        ncritical: self.critical.len() as u32,
                        active_mask: self.active_mask,
                        generation: self.critical.generation(),
                        boosted: self.ft.boosted_count() as u64,
                        hist_min: h.min(),
                        hist_max: h.max(),
                    },
                    &self.stats.counters,
                    h.buckets(),
                )?;
                Ok(abi::StatsMsg::SIZE)
            }
            Request::ResetStats => {
                self.reset_stats();
                Ok(0)
            }
            Request::GetCritical => {
                let mut e = [(0 as Tid, Role::Other); MAX_CRITICAL];
                let mut n = 0;
                for (slot, x) in e.iter_mut().zip(self.critical.iter()) {
                    *slot = x;
                    n += 1;
                }
                let mut l = abi::CriticalList::new(e.get(..n).ok_or(AbiError::TooMany)?)?;
                l.generation = self.critical.generation();
                l.encode(out)?;
                Ok(abi::CriticalList::SIZE)
            }
        }
    }

    /// Decodes ioctl `cmd`'s argument from `buf`, applies it, and writes the reply into `buf`.
    ///
    /// This is the whole ioctl path minus what only the platform knows (privilege, TID
    /// existence), shared by the kernel module and the service's in-memory device.
    pub fn ioctl(&mut self, now: Nanos, cmd: u32, buf: &mut [u8]) -> Result<usize, AbiError> {
        let req = Request::decode(cmd, buf)?;
        self.apply(now, &req, buf)
    }

    /// Checks every structural invariant and bound; used by tests.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.tun.validate().map_err(|_| "invalid tunables")?;
        if self.critical.len() > self.tun.max_critical as usize {
            return Err("critical set over max_critical");
        }
        let (interest, boosted) = self.lanes();
        for (tid, _) in self.critical.iter() {
            if !self.critical_filter.may_contain(tid) {
                return Err("critical thread missing from filter");
            }
            if !lanes_may_contain(interest, tid) {
                return Err("critical thread missing from the interest lanes");
            }
        }
        for w in self.detector.waits() {
            if !lanes_may_contain(interest, w.waiter) {
                return Err("waiting thread missing from the interest lanes");
            }
        }
        self.wakes.check()?;
        if !self.enabled && self.ft.grants().next().is_some() {
            return Err("grants while disabled");
        }
        for g in self.ft.grants() {
            if !lanes_may_contain(boosted, g.blocker) {
                return Err("boosted thread missing from the boosted lanes");
            }
            if g.depth > self.tun.max_depth {
                return Err("grant deeper than max_depth");
            }
            let Some(w) = self.detector.wait_of(g.via) else {
                return Err("grant outlived its waiter's wait");
            };
            if w.lock != g.lock {
                return Err("grant for a lock its waiter no longer waits on");
            }
            if self.detector.wait_of(g.root).map_or(true, |r| r.depth != 0) {
                return Err("grant outlived its critical thread's wait");
            }
        }
        self.detector.check(&self.tun)?;
        self.ft.check(&self.tun)
    }
}
