//! The fast track: grants to blockers, and the per-CPU arbiter that gives them the CPU.
//!
//! A *grant* says "task B blocks waiter W (on behalf of critical thread R) on lock L". A task with
//! at least one grant is *boosted*. Each CPU keeps a short queue of the boosted tasks on its
//! runqueue; the scheduler asks the arbiter which task to run next, whether a waking task should
//! preempt, where a waking boosted task should go, and charges it on every tick and switch.
//!
//! Three bounds keep this safe: a boosted task runs at most `slice_ns` before the next boosted
//! task on its CPU gets a turn; it gets at most `budget_ns` of fast-tracked CPU before its grants
//! are revoked, and is granted again no sooner than a `throttle_window_ns` later; and a CPU spends at most `throttle_max_pct` of each `throttle_window_ns` on
//! the fast track, after which it falls back to the stock scheduler until the window ends.
//! Every answer is computed in time bounded by the table sizes in [`super::tunables`].

use super::filter::{lane_bit, TidFilter};
use super::observer::Observer;
use super::stats::Stats;
use super::tunables::{Tunables, MAX_GRANTS, MAX_QUEUE};
use super::{Cpu, LockId, Nanos, Tid, MAX_CPUS};

mod arbiter;
mod check;
mod grants;
mod misfit;
mod placement;
mod regrant;

use regrant::Cooling;
pub use regrant::MAX_COOLING;

// Each table's live slots are one `u64` mask.
const _: () = assert!(MAX_GRANTS <= 64);

/// The set bits of `m`, lowest first: the slots a table mask marks.
#[inline(always)]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(i)
    })
}

/// The grant slots `t` lets a direct grant occupy: those below `max_grants` if `max_depth`
/// allows a direct grant at all.
const fn direct_room(t: &Tunables) -> u64 {
    let n = t.max_grants as usize;
    if t.max_depth < 1 {
        0
    } else if n >= MAX_GRANTS {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// Why a blocker holds the fast track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The boosted task.
    pub blocker: Tid,
    /// The task it blocks (a critical thread, or a boosted task further up the chain).
    pub via: Tid,
    /// The critical thread at the top of the chain.
    pub root: Tid,
    /// The lock `via` waits for and `blocker` holds.
    pub lock: LockId,
    /// 1 for a direct blocker of a critical thread, n for n links down.
    pub depth: u32,
    boost: u8,
}

/// What the platform has said of a boosted task's runqueue since its boost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    /// Nothing: it may be queued where no event said (boosted while queued), or asleep.
    Nothing,
    /// Named on no runqueue, its record naming this CPU: the one whose runqueue it was joining
    /// if its boost raced with its enqueue; else it sleeps, and its enqueue will be reported.
    Home(u16),
    /// It joined or left a runqueue since: from then on each move is reported, so no pick needs
    /// to look for it.
    Located,
}

/// A boosted task's fast-track account.
#[derive(Clone, Copy, Debug)]
struct Boost {
    tid: Tid,
    /// Fast-tracked CPU time charged since the boost began.
    used: Nanos,
    /// The slots of the live grants naming this task (bit `i`: `grants[i]`), so that its grants
    /// are found without scanning the table.
    grants: u64,
    /// The CPU whose queue holds it, if any.
    cpu: Option<u16>,
    /// The shallowest depth among its grants, and that grant's root.
    depth: u32,
    root: Tid,
    /// The platform's handle for the task (the module's `task_struct` address), 0 if unknown.
    handle: u64,
    /// What the platform has said of its runqueue since its boost.
    seen: Seen,
    /// When the boost began.
    since: Nanos,
}

/// One CPU's arbiter state; in the kernel it is only touched under that CPU's runqueue lock.
#[derive(Clone, Copy, Debug)]
struct PerCpu {
    /// Boost indices of the boosted tasks on this runqueue, head first.
    queue: [u8; MAX_QUEUE],
    len: u8,
    /// The boost this CPU is running on the fast track, and since when it was last charged.
    running: Option<u8>,
    run_since: Nanos,
    /// When the head's current slice began.
    slice_start: Nanos,
    window_start: Nanos,
    window_used: Nanos,
    throttled: bool,
}

const IDLE_CPU: PerCpu = PerCpu {
    queue: [0; MAX_QUEUE],
    len: 0,
    running: None,
    run_since: 0,
    slice_start: 0,
    window_start: 0,
    window_used: 0,
    throttled: false,
};

impl PerCpu {
    fn remove(&mut self, b: u8) -> bool {
        let n = self.len as usize;
        let Some(i) = self.queue.iter().take(n).position(|&x| x == b) else {
            return false;
        };
        // `i < n`: the tail starting at `b` is not empty, so `1..` is in it.
        if let Some(tail) = self.queue.get_mut(i..n) {
            tail.copy_within(1.., 0);
        }
        self.len -= 1;
        true
    }
}

/// One blocking relation the detector found: what a grant is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The task holding the lock.
    pub blocker: Tid,
    /// The task waiting for it.
    pub via: Tid,
    /// The critical thread at the top of the chain.
    pub root: Tid,
    /// The lock.
    pub lock: LockId,
    /// The blocker's distance from the critical thread (1 = direct).
    pub depth: u32,
}

/// What a grant request did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantOutcome {
    /// The same (blocker, via, lock) grant was already live.
    Exists,
    /// A new grant for a task that was already boosted.
    Added,
    /// A new grant that boosted the task: the platform should tell the arbiter where it is.
    Boosted,
    /// The grant table was full.
    Missed,
}

/// The borrowed context every fast-track operation reports into.
pub struct Cx<'a, O: Observer> {
    /// The bounds in force.
    pub t: &'a Tunables,
    /// The counters.
    pub st: &'a mut Stats,
    /// The platform's observer (tracepoints, simulator trace).
    pub obs: &'a mut O,
}

/// Grants, boosted tasks and per-CPU queues.
///
/// # Invariants
///
/// Every live grant's `boost` names a live boost whose `tid` is the grant's blocker; a boost's
/// `grants` is exactly the set of slots of the grants naming it, and is never empty; bit `i` of
/// `live_grants` (`live_boosts`) is set iff `grants[i]` (`boosts[i]`) is `Some`; `chain_grants`
/// is the set of live grants of depth > 1; a boost with `cpu == Some(c)` appears exactly once in
/// CPU `c`'s queue and in no other; a CPU's `running` names a live boost whose `cpu` is that CPU;
/// CPUs at or above `nr_cpus` have an empty queue and run nothing; `filter` holds one membership
/// per live boost; no live boost has `used >= budget_ns`; `direct_room` is derived from the
/// tunables last configured (those in force).
#[derive(Clone, Debug)]
pub struct FastTrack {
    grants: [Option<Grant>; MAX_GRANTS],
    boosts: [Option<Boost>; MAX_GRANTS],
    /// Bit `i` is set iff `grants[i]` is live: scans visit live slots only, lowest first.
    live_grants: u64,
    /// Bit `i` is set iff `boosts[i]` is live.
    live_boosts: u64,
    /// The live grants of depth > 1: the only ones a collapsing chain can end.
    chain_grants: u64,
    cpus: [PerCpu; MAX_CPUS],
    nr_cpus: usize,
    /// The CPUs a blocker should run on when it can: the biggest cores (all CPUs on a
    /// symmetric machine).
    fast_mask: u64,
    /// Each CPU's capacity as the platform reports it (all 0 if it never did: all equal).
    capacity: [u32; MAX_CPUS],
    /// `throttle_window_ns`, and its `throttle_max_pct` share, derived once per tunables change.
    window_ns: Nanos,
    cap_ns: Nanos,
    /// The grant slots a direct grant (depth 1) may take (bit `i`: slot `i`), derived once per
    /// tunables change: those below `max_grants`, none if `max_depth` allows no grant at all.
    direct_room: u64,
    /// Every boosted task; the lane summary is derived from `boosts` on demand instead, since
    /// boosts change on the critical-wait paths and the summary is read far more rarely.
    filter: TidFilter<false>,
    /// Budget-revoked tasks waiting for their next window (`regrant.rs`).
    cooling: [Option<Cooling>; MAX_COOLING],
    /// The soonest `until` in `cooling`; `Nanos::MAX` if it is empty.
    next_regrant: Nanos,
}

impl FastTrack {
    /// An empty fast track for `nr_cpus` CPUs (capped at [`MAX_CPUS`]).
    pub const fn new(nr_cpus: u32) -> Self {
        let n = nr_cpus as usize;
        Self {
            grants: [None; MAX_GRANTS],
            boosts: [None; MAX_GRANTS],
            live_grants: 0,
            live_boosts: 0,
            chain_grants: 0,
            cpus: [IDLE_CPU; MAX_CPUS],
            nr_cpus: if n > MAX_CPUS { MAX_CPUS } else { n },
            fast_mask: u64::MAX,
            capacity: [0; MAX_CPUS],
            window_ns: Tunables::DEFAULT.throttle_window_ns,
            cap_ns: Tunables::DEFAULT.throttle_window_ns / 100
                * Tunables::DEFAULT.throttle_max_pct as u64,
            direct_room: direct_room(&Tunables::DEFAULT),
            filter: TidFilter::new(),
            cooling: [None; MAX_COOLING],
            next_regrant: Nanos::MAX,
        }
    }

    /// Adopts new tunables; call with no grants live (the engine revokes them first).
    pub fn configure(&mut self, t: &Tunables) {
        self.window_ns = t.throttle_window_ns;
        self.cap_ns = t.throttle_window_ns / 100 * t.throttle_max_pct as u64;
        self.direct_room = direct_room(t);
    }

    /// Names the fast CPUs (the platform's biggest cores), where waking blockers are placed
    /// when one is idle; an empty mask means every CPU.
    pub fn set_fast_cpus(&mut self, mask: u64) {
        self.fast_mask = if mask == 0 { u64::MAX } else { mask };
    }

    /// The fast CPUs.
    pub const fn fast_cpus(&self) -> u64 {
        self.fast_mask
    }

    /// The number of CPUs covered.
    pub const fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// The live grant in slot `gi`, if any (a copy).
    #[inline(always)]
    fn grant_at(&self, gi: usize) -> Option<Grant> {
        self.grants.get(gi).copied().flatten()
    }

    /// The live boost at index `bi`, if any (a copy: a `Boost` is a few words).
    #[inline(always)]
    fn boost_at(&self, bi: usize) -> Option<Boost> {
        self.boosts.get(bi).copied().flatten()
    }

    /// The live boost at index `bi`, if any, to change.
    #[inline(always)]
    fn boost_at_mut(&mut self, bi: usize) -> Option<&mut Boost> {
        self.boosts.get_mut(bi)?.as_mut()
    }

    /// The boost index of `tid`, if it is boosted; near-free when it is not.
    #[inline]
    fn boost_of(&self, tid: Tid) -> Option<u8> {
        if !self.filter.may_contain(tid) {
            return None;
        }
        bits(self.live_boosts)
            .find(|&i| self.boost_at(i).is_some_and(|b| b.tid == tid))
            .map(|i| i as u8)
    }

    /// The slots of the live grants held by boost `bi` (none if it is not live).
    #[inline]
    fn grants_of(&self, bi: u8) -> u64 {
        self.boost_at(bi.into()).map_or(0, |b| b.grants)
    }

    /// False if `tid` certainly holds no fast track (one load and compare); true if it may.
    #[inline(always)]
    pub fn may_be_boosted(&self, tid: Tid) -> bool {
        self.filter.may_contain(tid)
    }

    /// The boosted tasks' lane summary (as [`TidFilter::lanes`]), which platforms publish for
    /// lock-free readers; a walk of the live boosts.
    pub fn boosted_lanes(&self) -> u64 {
        bits(self.live_boosts)
            .filter_map(|i| self.boost_at(i))
            .fold(0, |acc, b| acc | lane_bit(b.tid))
    }

    /// The lane summary of the budget-revoked tasks waiting for their next window: holders a
    /// tracked wait may still be on, whose events (a release, a reply) still matter.
    pub fn cooling_lanes(&self) -> u64 {
        self.cooling
            .iter()
            .flatten()
            .fold(0, |acc, c| acc | lane_bit(c.tid))
    }

    /// True if `tid` holds the fast track.
    #[inline]
    pub fn is_boosted(&self, tid: Tid) -> bool {
        self.boost_of(tid).is_some()
    }

    /// The depth and root a wait by boosted task `tid` inherits.
    pub fn chain_of(&self, tid: Tid) -> Option<(u32, Tid)> {
        let b = self.boost_at(self.boost_of(tid)?.into())?;
        Some((b.depth, b.root))
    }

    /// Every live grant.
    pub fn grants(&self) -> impl Iterator<Item = &Grant> + '_ {
        bits(self.live_grants).filter_map(|i| self.grants.get(i)?.as_ref())
    }

    /// The number of boosted tasks.
    pub fn boosted_count(&self) -> usize {
        self.live_boosts.count_ones() as usize
    }

    /// True if CPU `cpu` has fast-track work: a queued or running boosted task.
    ///
    /// The one test the common pick and tick make; CPUs beyond `nr_cpus` never have work.
    #[inline(always)]
    pub fn has_work(&self, cpu: Cpu) -> bool {
        self.cpus
            .get(cpu as usize)
            .is_some_and(|pc| pc.running.is_some() || pc.len != 0)
    }

    /// The CPUs with fast-track work ([`FastTrack::has_work`]), as a mask.
    pub fn work_cpus(&self) -> u64 {
        self.cpus
            .iter()
            .take(self.nr_cpus.min(64))
            .enumerate()
            .filter(|(_, pc)| pc.running.is_some() || pc.len != 0)
            .fold(0, |m, (c, _)| m | 1u64 << c)
    }

    /// The CPUs whose picks may find a task boosted at `after` or later, queued where the
    /// platform has not reported: each such task's home CPU, or every CPU for one with none.
    pub fn unlocated_cpus_since(&self, after: Nanos) -> u64 {
        bits(self.live_boosts)
            .filter_map(|i| self.boost_at(i))
            .filter(|b| b.seen != Seen::Located && b.handle != 0 && b.since >= after)
            .fold(0, |m, b| match b.seen {
                Seen::Home(c) => m | 1u64.checked_shl(c.into()).unwrap_or(u64::MAX),
                _ => u64::MAX,
            })
    }

    /// Records the platform's handle for boosted task `tid`, and the CPU it last saw the task
    /// on if it gave one; does nothing if `tid` is not boosted.
    pub fn set_handle(&mut self, tid: Tid, handle: u64, home: Option<Cpu>) {
        if let Some(bi) = self.boost_of(tid) {
            if let Some(b) = self.boost_at_mut(bi.into()) {
                b.handle = handle;
                if let (Some(c), false) = (home, b.seen == Seen::Located) {
                    b.seen = u16::try_from(c).map_or(Seen::Nothing, Seen::Home);
                }
            }
        }
    }

    /// The platform's handle for boosted task `tid`, if it gave one.
    pub fn handle(&self, tid: Tid) -> Option<u64> {
        let b = self.boost_at(self.boost_of(tid)?.into())?;
        (b.handle != 0).then_some(b.handle)
    }

    /// Drops `handle` wherever it is recorded: the platform is about to free what it names.
    pub fn forget_handle(&mut self, handle: u64) {
        for i in bits(self.live_boosts) {
            if let Some(b) = self.boost_at_mut(i).filter(|b| b.handle == handle) {
                b.handle = 0;
            }
        }
    }

    /// Boosted tasks with a handle whose runqueue the platform has not reported since their boost:
    /// boosted while already queued, so no enqueue announced them.
    pub fn unlocated(&self) -> impl Iterator<Item = (Tid, u64)> + '_ {
        bits(self.live_boosts)
            .filter_map(|i| self.boost_at(i))
            .filter(|b| b.seen != Seen::Located && b.handle != 0)
            .map(|b| (b.tid, b.handle))
    }

    /// The first boosted task of [`FastTrack::unlocated`] in boost slot `from` or later, with
    /// its handle and the slot to ask from next.
    pub fn unlocated_from(&self, from: usize) -> Option<(Tid, u64, usize)> {
        let rest = self.live_boosts & u64::MAX.checked_shl(from as u32).unwrap_or(0);
        bits(rest)
            .filter_map(|i| Some((i, self.boost_at(i)?)))
            .find(|(_, b)| b.seen != Seen::Located && b.handle != 0)
            .map(|(i, b)| (b.tid, b.handle, i + 1))
    }

    /// Fast-tracked CPU time `tid` has used in its current boost.
    pub fn used_ns(&self, tid: Tid) -> Option<Nanos> {
        Some(self.boost_at(self.boost_of(tid)?.into())?.used)
    }

    /// True if CPU `cpu` is throttled for the rest of its window.
    pub fn throttled(&self, cpu: Cpu) -> bool {
        self.cpus.get(cpu as usize).is_some_and(|c| c.throttled)
    }
}

/// Runs `f` with a context of default tunables (for the fast track's unit tests).
#[cfg(test)]
fn with_cx<R>(f: impl FnOnce(&mut Cx<'_, super::observer::NoObserver>) -> R) -> R {
    let t = Tunables::default();
    let mut st = Stats::default();
    let mut obs = super::observer::NoObserver;
    f(&mut Cx {
        t: &t,
        st: &mut st,
        obs: &mut obs,
    })
}

#[cfg(test)]
mod tests {
    use super::super::observer::{NoObserver, RevokeReason};
    use super::*;

    fn link(blocker: Tid, via: Tid) -> Link {
        Link {
            blocker,
            via,
            root: via,
            lock: 0x10,
            depth: 1,
        }
    }

    #[test]
    fn grants_share_one_boost_per_task() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut obs = NoObserver;
        let cx = &mut Cx {
            t: &t,
            st: &mut st,
            obs: &mut obs,
        };
        let mut ft = FastTrack::new(2);
        assert_eq!(ft.grant(0, link(5, 1), cx), GrantOutcome::Boosted);
        assert_eq!(ft.grant(0, link(5, 1), cx), GrantOutcome::Exists);
        assert_eq!(ft.grant(0, link(5, 2), cx), GrantOutcome::Added);
        assert_eq!(ft.boosted_count(), 1);
        ft.check(&t).unwrap();
        ft.revoke(1, RevokeReason::WaiterDone, |g| g.via == 1, cx);
        assert!(ft.is_boosted(5), "one reason left");
        ft.revoke(1, RevokeReason::WaiterDone, |g| g.via == 2, cx);
        assert!(!ft.is_boosted(5));
        assert_eq!(ft.grants().count(), 0);
        ft.check(&t).unwrap();
    }

    #[test]
    fn a_lowered_grant_limit_holds_despite_holes_left_by_the_old_one() {
        let mut t = Tunables::default();
        let mut st = Stats::default();
        let mut obs = NoObserver;
        let mut ft = FastTrack::new(2);
        {
            let cx = &mut Cx {
                t: &t,
                st: &mut st,
                obs: &mut obs,
            };
            ft.grant(0, link(5, 1), cx);
            ft.grant(0, link(6, 2), cx);
            ft.grant(0, link(7, 3), cx);
            ft.revoke(1, RevokeReason::Reconfigured, |_| true, cx);
        }
        t.max_grants = 1;
        ft.configure(&t);
        let cx = &mut Cx {
            t: &t,
            st: &mut st,
            obs: &mut obs,
        };
        assert_eq!(ft.grant(2, link(8, 1), cx), GrantOutcome::Boosted);
        assert_eq!(ft.grant(2, link(9, 2), cx), GrantOutcome::Missed);
        assert_eq!(ft.grants().count(), 1);
        ft.check(&t).unwrap();
    }

    #[test]
    fn a_release_ends_that_locks_grants_and_the_chains_below_them() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut obs = NoObserver;
        let cx = &mut Cx {
            t: &t,
            st: &mut st,
            obs: &mut obs,
        };
        let mut ft = FastTrack::new(2);
        // 5 blocks critical 1 on 0x10 and critical 2 on 0x20; 6 blocks 5 (a chain) on 0x30.
        ft.grant(0, link(5, 1), cx);
        let other = Link {
            lock: 0x20,
            ..link(5, 2)
        };
        ft.grant(0, other, cx);
        let chain = Link {
            blocker: 6,
            via: 5,
            root: 1,
            lock: 0x30,
            depth: 2,
        };
        ft.grant(0, chain, cx);
        ft.check(&t).unwrap();
        ft.revoke_held(1, 5, 0x10, cx);
        assert!(ft.is_boosted(5) && ft.is_boosted(6), "5 still blocks 2");
        assert_eq!(ft.grants().count(), 2);
        ft.revoke_held(1, 5, 0x20, cx);
        assert!(
            !ft.is_boosted(5) && !ft.is_boosted(6),
            "the chain fell with its link"
        );
        assert_eq!(ft.grants().count(), 0);
        ft.check(&t).unwrap();
    }

    #[test]
    fn queue_removal_keeps_order() {
        let mut pc = IDLE_CPU;
        pc.queue[..3].copy_from_slice(&[4, 7, 9]);
        pc.len = 3;
        assert!(pc.remove(7));
        assert_eq!(&pc.queue[..2], &[4, 9]);
        assert!(!pc.remove(7));
    }

    #[test]
    fn cpus_beyond_nr_cpus_are_ignored() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut obs = NoObserver;
        let cx = &mut Cx {
            t: &t,
            st: &mut st,
            obs: &mut obs,
        };
        let mut ft = FastTrack::new(2);
        ft.grant(0, link(5, 1), cx);
        assert!(!ft.enqueue(0, 7, 5, false, cx));
        assert_eq!(ft.pick(0, 7, 1, 1, || false, cx), None);
        assert!(!ft.tick(0, 99, 5, || false, cx));
        ft.check(&t).unwrap();
    }
}
