//! The fast track: grants to blockers, and the per-CPU arbiter that gives them the CPU.
//!
//! A *grant* says "task B blocks waiter W (on behalf of critical thread R) on lock L". A task with
//! at least one grant is *boosted*. Each CPU keeps a short queue of the boosted tasks on its
//! runqueue; the scheduler asks the arbiter which task to run next, whether a waking task should
//! preempt, where a waking boosted task should go, and charges it on every tick and switch.
//!
//! Three bounds keep this safe: a boosted task runs at most `slice_ns` before the next boosted
//! task on its CPU gets a turn; it gets at most `budget_ns` of fast-tracked CPU in all before its
//! grants are revoked; and a CPU spends at most `throttle_max_pct` of each `throttle_window_ns` on
//! the fast track, after which it falls back to the stock scheduler until the window ends.
//! Every answer is computed in time bounded by the table sizes in [`super::tunables`].

use super::engine::{Observer, RevokeReason};
use super::filter::TidFilter;
use super::stats::{Counter, Stats};
use super::tunables::{Tunables, MAX_GRANTS, MAX_QUEUE};
use super::{Cpu, LockId, Nanos, Tid, MAX_CPUS};

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
    /// True once the platform said which runqueue the task is on (enqueue), until it leaves it.
    located: bool,
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
        let Some(i) = self.queue[..n].iter().position(|&x| x == b) else {
            return false;
        };
        self.queue.copy_within(i + 1..n, i);
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
/// per live boost; no live boost has `used >= budget_ns`.
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
    /// `throttle_window_ns`, and its `throttle_max_pct` share, derived once per tunables change.
    window_ns: Nanos,
    cap_ns: Nanos,
    filter: TidFilter,
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
            window_ns: Tunables::DEFAULT.throttle_window_ns,
            cap_ns: Tunables::DEFAULT.throttle_window_ns / 100
                * Tunables::DEFAULT.throttle_max_pct as u64,
            filter: TidFilter::new(),
        }
    }

    /// Adopts new tunables; call with no grants live (the engine revokes them first).
    pub fn configure(&mut self, t: &Tunables) {
        self.window_ns = t.throttle_window_ns;
        self.cap_ns = t.throttle_window_ns / 100 * t.throttle_max_pct as u64;
    }

    /// The number of CPUs covered.
    pub const fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// The boost index of `tid`, if it is boosted; near-free when it is not.
    #[inline]
    fn boost_of(&self, tid: Tid) -> Option<u8> {
        if !self.filter.may_contain(tid) {
            return None;
        }
        bits(self.live_boosts)
            .find(|&i| self.boosts[i].is_some_and(|b| b.tid == tid))
            .map(|i| i as u8)
    }

    /// The slots of the live grants held by boost `bi` (none if it is not live).
    #[inline]
    fn grants_of(&self, bi: u8) -> u64 {
        self.boosts[bi as usize].map_or(0, |b| b.grants)
    }

    /// False if `tid` certainly holds no fast track (one load and compare); true if it may.
    #[inline(always)]
    pub fn may_be_boosted(&self, tid: Tid) -> bool {
        self.filter.may_contain(tid)
    }

    /// True if `tid` holds the fast track.
    #[inline]
    pub fn is_boosted(&self, tid: Tid) -> bool {
        self.boost_of(tid).is_some()
    }

    /// The depth and root a wait by boosted task `tid` inherits.
    pub fn chain_of(&self, tid: Tid) -> Option<(u32, Tid)> {
        let b = self.boosts[self.boost_of(tid)? as usize]?;
        Some((b.depth, b.root))
    }

    /// Every live grant.
    pub fn grants(&self) -> impl Iterator<Item = &Grant> + '_ {
        bits(self.live_grants).filter_map(|i| self.grants[i].as_ref())
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

    /// Records the platform's handle for boosted task `tid`; does nothing if it is not boosted.
    pub fn set_handle(&mut self, tid: Tid, handle: u64) {
        if let Some(bi) = self.boost_of(tid) {
            if let Some(b) = self.boosts[bi as usize].as_mut() {
                b.handle = handle;
            }
        }
    }

    /// The platform's handle for boosted task `tid`, if it gave one.
    pub fn handle(&self, tid: Tid) -> Option<u64> {
        let b = self.boosts[self.boost_of(tid)? as usize]?;
        (b.handle != 0).then_some(b.handle)
    }

    /// Drops `handle` wherever it is recorded: the platform is about to free what it names.
    pub fn forget_handle(&mut self, handle: u64) {
        for i in bits(self.live_boosts) {
            if let Some(b) = self.boosts[i].as_mut().filter(|b| b.handle == handle) {
                b.handle = 0;
            }
        }
    }

    /// Boosted tasks with a handle whose runqueue the platform has not reported: boosted while
    /// already queued, so no enqueue announced them.
    pub fn unlocated(&self) -> impl Iterator<Item = (Tid, u64)> + '_ {
        bits(self.live_boosts)
            .filter_map(|i| self.boosts[i])
            .filter(|b| !b.located && b.handle != 0)
            .map(|b| (b.tid, b.handle))
    }

    /// Fast-tracked CPU time `tid` has used in its current boost.
    pub fn used_ns(&self, tid: Tid) -> Option<Nanos> {
        Some(self.boosts[self.boost_of(tid)? as usize]?.used)
    }

    /// True if CPU `cpu` is throttled for the rest of its window.
    pub fn throttled(&self, cpu: Cpu) -> bool {
        self.cpus.get(cpu as usize).is_some_and(|c| c.throttled)
    }

    /// Grants `link.blocker` the fast track because it blocks `link.via` on `link.lock`.
    #[inline]
    pub fn grant<O: Observer>(
        &mut self,
        now: Nanos,
        link: Link,
        cx: &mut Cx<'_, O>,
    ) -> GrantOutcome {
        let Link {
            blocker,
            via,
            root,
            lock,
            depth,
        } = link;
        let existing = self.boost_of(blocker);
        if let Some(bi) = existing {
            // Every grant naming `blocker` is indexed by its boost: no table scan.
            let same = |gi: usize| self.grants[gi].is_some_and(|g| g.via == via && g.lock == lock);
            if bits(self.grants_of(bi)).any(same) {
                return GrantOutcome::Exists;
            }
        }
        // The lowest free slot, if it is below the current limit: a hole left by a larger limit
        // must not let the live count exceed a smaller one.
        let gi = (!self.live_grants).trailing_zeros() as usize;
        if gi >= (cx.t.max_grants as usize).min(MAX_GRANTS) {
            cx.st.bump(Counter::MissedGrants);
            return GrantOutcome::Missed;
        }
        let (bi, outcome) = match existing {
            Some(bi) => {
                let b = self.boosts[bi as usize].as_mut().expect("live boost");
                b.grants |= 1u64 << gi;
                if depth < b.depth {
                    b.depth = depth;
                    b.root = root;
                }
                (bi as usize, GrantOutcome::Added)
            }
            None => {
                // There is always a free boost slot: boosts never outnumber grants.
                let bi = (!self.live_boosts).trailing_zeros() as usize;
                if bi >= MAX_GRANTS {
                    // Unreachable while boosts never outnumber grants; counted, not trusted.
                    cx.st.bump(Counter::MissedGrants);
                    return GrantOutcome::Missed;
                }
                self.boost(now, bi, gi, &link, cx);
                (bi, GrantOutcome::Boosted)
            }
        };
        self.put_grant(now, gi, bi, &link, cx);
        outcome
    }

    /// The grant and boost slots [`FastTrack::grant`] would give `blocker` if it is certainly not
    /// boosted (the filter says so) and both tables have room under `t`; `None` otherwise.
    ///
    /// With these slots, [`FastTrack::grant_fresh`] does what `grant` does, with every failure
    /// ruled out first: the engine's fast path. Changes nothing.
    #[inline(always)]
    pub(crate) fn fresh_slots(&self, blocker: Tid, t: &Tunables) -> Option<(usize, usize)> {
        if self.filter.may_contain(blocker) {
            return None;
        }
        let gi = (!self.live_grants).trailing_zeros() as usize;
        let bi = (!self.live_boosts).trailing_zeros() as usize;
        if gi >= (t.max_grants as usize).min(MAX_GRANTS) || bi >= MAX_GRANTS {
            return None;
        }
        Some((gi, bi))
    }

    /// [`FastTrack::grant`] of `link` to a task that is not boosted, in grant slot `gi` and boost
    /// slot `bi` from [`FastTrack::fresh_slots`]; always boosts it.
    #[inline(always)]
    pub(crate) fn grant_fresh<O: Observer>(
        &mut self,
        now: Nanos,
        (gi, bi): (usize, usize),
        link: Link,
        cx: &mut Cx<'_, O>,
    ) {
        self.boost(now, bi, gi, &link, cx);
        self.put_grant(now, gi, bi, &link, cx);
    }

    /// Boosts `link.blocker` in free boost slot `bi`, with grant slot `gi` as its first grant.
    #[inline(always)]
    fn boost<O: Observer>(
        &mut self,
        now: Nanos,
        bi: usize,
        gi: usize,
        link: &Link,
        cx: &mut Cx<'_, O>,
    ) {
        // Its first grant is this one, so this link is its shallowest.
        self.boosts[bi % MAX_GRANTS] = Some(Boost {
            tid: link.blocker,
            used: 0,
            grants: 1u64 << gi,
            cpu: None,
            depth: link.depth,
            root: link.root,
            handle: 0,
            located: false,
        });
        self.live_boosts |= 1 << bi;
        self.filter.insert(link.blocker);
        cx.obs.boosted(now, link.blocker);
    }

    /// Stores grant `link` in free grant slot `gi`, held by boost `bi` (which counts it already).
    #[inline(always)]
    fn put_grant<O: Observer>(
        &mut self,
        now: Nanos,
        gi: usize,
        bi: usize,
        link: &Link,
        cx: &mut Cx<'_, O>,
    ) {
        let bit = 1u64 << gi;
        self.grants[gi % MAX_GRANTS] = Some(Grant {
            blocker: link.blocker,
            via: link.via,
            root: link.root,
            lock: link.lock,
            depth: link.depth,
            boost: bi as u8,
        });
        self.live_grants |= bit;
        if link.depth > 1 {
            self.chain_grants |= bit;
        }
        cx.st.bump(Counter::Grants);
        cx.obs.grant(
            now,
            link.blocker,
            link.via,
            link.root,
            link.lock,
            link.depth,
        );
    }

    /// Ends every grant matching `pred`, then every grant whose chain link vanished as a result.
    #[inline]
    pub fn revoke<O: Observer>(
        &mut self,
        now: Nanos,
        reason: RevokeReason,
        pred: impl Fn(&Grant) -> bool,
        cx: &mut Cx<'_, O>,
    ) {
        let mut ended = 0;
        for gi in bits(self.live_grants) {
            if self.grants[gi].is_some_and(|g| pred(&g)) {
                ended |= 1 << gi;
            }
        }
        self.revoke_slots(now, reason, ended, cx);
    }

    /// Ends every grant made on behalf of critical thread `root` (its wait ended), then every
    /// grant whose chain link vanished as a result: [`FastTrack::revoke`] with `g.root == root`.
    ///
    /// Ending a grant changes no other grant, so each is ended as the scan meets it, in the same
    /// order as [`FastTrack::revoke`]'s, without first collecting a mask.
    #[inline(always)]
    pub(crate) fn revoke_root<O: Observer>(
        &mut self,
        now: Nanos,
        root: Tid,
        reason: RevokeReason,
        cx: &mut Cx<'_, O>,
    ) {
        let mut ended = false;
        for gi in bits(self.live_grants) {
            if self.grants[gi].is_some_and(|g| g.root == root) {
                self.drop_grant(now, gi, reason, cx);
                ended = true;
            }
        }
        // Only a grant of depth > 1 hangs from a link that can vanish.
        if ended && self.chain_grants != 0 {
            self.collapse_chains_parts(now, cx.t, cx.st, cx.obs);
        }
    }

    /// Ends the grants `tid` holds for `lock` (it released the lock).
    pub fn revoke_held<O: Observer>(
        &mut self,
        now: Nanos,
        tid: Tid,
        lock: LockId,
        cx: &mut Cx<'_, O>,
    ) {
        let Some(bi) = self.boost_of(tid) else {
            return;
        };
        let mut ended = 0;
        for gi in bits(self.grants_of(bi)) {
            if self.grants[gi].is_some_and(|g| g.lock == lock) {
                ended |= 1 << gi;
            }
        }
        self.revoke_slots(now, RevokeReason::Released, ended, cx);
    }

    /// Ends the live grants in slots `ended`, lowest first, then the chains they held up.
    #[inline(always)]
    fn revoke_slots<O: Observer>(
        &mut self,
        now: Nanos,
        reason: RevokeReason,
        ended: u64,
        cx: &mut Cx<'_, O>,
    ) {
        if ended == 0 {
            return;
        }
        for gi in bits(ended) {
            self.drop_grant(now, gi, reason, cx);
        }
        // Only a grant of depth > 1 hangs from a link that can vanish.
        if self.chain_grants != 0 {
            self.collapse_chains(now, cx);
        }
    }

    /// [`FastTrack::collapse_chains`] with the context in parts, so that a caller that only
    /// may need it never builds the context in memory.
    #[cold]
    #[inline(never)]
    fn collapse_chains_parts<O: Observer>(
        &mut self,
        now: Nanos,
        t: &Tunables,
        st: &mut Stats,
        obs: &mut O,
    ) {
        self.collapse_chains(now, &mut Cx { t, st, obs });
    }

    /// Ends grants whose `via` is a chain link (depth > 1) that is no longer boosted.
    ///
    /// Each pass can only unboost tasks one link further down, so `MAX_DEPTH` passes suffice.
    #[cold]
    #[inline(never)]
    fn collapse_chains<O: Observer>(&mut self, now: Nanos, cx: &mut Cx<'_, O>) {
        for _ in 0..super::tunables::MAX_DEPTH {
            let mut changed = false;
            for gi in bits(self.chain_grants) {
                let Some(g) = self.grants[gi] else { continue };
                if !self.is_boosted(g.via) {
                    self.drop_grant(now, gi, RevokeReason::Chain, cx);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    #[inline(always)]
    fn drop_grant<O: Observer>(
        &mut self,
        now: Nanos,
        gi: usize,
        reason: RevokeReason,
        cx: &mut Cx<'_, O>,
    ) {
        let Some(g) = self.grants[gi].take() else {
            return;
        };
        let bit = 1u64 << gi;
        self.live_grants &= !bit;
        self.chain_grants &= !bit;
        cx.st.bump(reason.counter());
        cx.obs.revoke(now, g.blocker, reason);
        // A grant's boost is a live slot, below `MAX_GRANTS`: the mask only spares a bound check.
        let bi = g.boost as usize % MAX_GRANTS;
        let Some(b) = self.boosts[bi].as_mut() else {
            return;
        };
        b.grants &= !bit;
        if b.grants != 0 {
            // Re-derive the shallowest remaining link for future chain waits.
            let (mut depth, mut root) = (u32::MAX, b.root);
            for x in bits(b.grants).filter_map(|x| self.grants[x]) {
                if x.depth < depth {
                    depth = x.depth;
                    root = x.root;
                }
            }
            b.depth = depth;
            b.root = root;
            return;
        }
        let b = self.boosts[bi].take().expect("live boost");
        self.live_boosts &= !(1 << bi);
        if let Some(c) = b.cpu {
            let pc = &mut self.cpus[c as usize];
            pc.remove(bi as u8);
            // Only the CPU whose queue holds a boost can be running it.
            if pc.running == Some(bi as u8) {
                // The last stretch it ran still counts against the CPU's window and in the stats.
                let dt = now.saturating_sub(pc.run_since);
                pc.window_used += dt;
                cx.st.add(Counter::FastTrackNs, dt);
                pc.running = None;
            }
        }
        self.filter.remove(b.tid);
        cx.obs.unboosted(now, b.tid, reason);
    }

    /// Charges the CPU's running boosted task up to `now`, rolls the window, applies the bounds.
    #[inline(always)]
    fn charge<O: Observer>(&mut self, now: Nanos, cpu: usize, cx: &mut Cx<'_, O>) {
        let pc = &mut self.cpus[cpu];
        let mut over_budget = None;
        if let Some(bi) = pc.running {
            let dt = now.saturating_sub(pc.run_since);
            pc.run_since = now;
            pc.window_used += dt;
            cx.st.add(Counter::FastTrackNs, dt);
            if let Some(b) = self.boosts[bi as usize].as_mut() {
                b.used += dt;
                if b.used >= cx.t.budget_ns {
                    over_budget = Some(bi);
                }
            }
        }
        if now.saturating_sub(pc.window_start) >= cx.t.throttle_window_ns
            || (!pc.throttled && pc.window_used >= self.cap_ns)
        {
            self.roll_or_throttle(now, cpu, cx.st);
        }
        if let Some(bi) = over_budget {
            // The context goes in parts, so that the common path never builds it in memory.
            self.revoke_budget(now, bi, cx.t, cx.st, cx.obs);
        }
    }

    /// Starts a new throttle window, or throttles the CPU for the rest of this one.
    #[cold]
    fn roll_or_throttle(&mut self, now: Nanos, cpu: usize, st: &mut Stats) {
        let pc = &mut self.cpus[cpu];
        if now.saturating_sub(pc.window_start) >= self.window_ns {
            pc.window_start = now;
            pc.window_used = 0;
            pc.throttled = false;
        }
        if !pc.throttled && pc.window_used >= self.cap_ns {
            pc.throttled = true;
            st.bump(Counter::Throttles);
        }
    }

    #[cold]
    fn revoke_budget<O: Observer>(
        &mut self,
        now: Nanos,
        bi: u8,
        t: &Tunables,
        st: &mut Stats,
        obs: &mut O,
    ) {
        let ended = self.grants_of(bi);
        self.revoke_slots(now, RevokeReason::Budget, ended, &mut Cx { t, st, obs });
    }

    /// `tid` is now on CPU `cpu`'s runqueue; returns true if that CPU should reschedule now.
    #[inline]
    pub fn enqueue<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        tid: Tid,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        let Some(bi) = self.boost_of(tid) else {
            return false;
        };
        let cpu = cpu as usize;
        if cpu >= self.nr_cpus {
            return false;
        }
        let b = self.boosts[bi as usize].as_mut().expect("live boost");
        b.located = true;
        match b.cpu {
            Some(c) if c as usize == cpu => {}
            old => {
                if let Some(c) = old {
                    let pc = &mut self.cpus[c as usize];
                    pc.remove(bi);
                    if pc.running == Some(bi) {
                        pc.running = None;
                    }
                }
                let pc = &mut self.cpus[cpu];
                if pc.len as u32 >= cx.t.queue_cap {
                    b.cpu = None;
                    cx.st.bump(Counter::MissedQueue);
                    return false;
                }
                pc.queue[pc.len as usize] = bi;
                pc.len += 1;
                b.cpu = Some(cpu as u16);
            }
        }
        self.charge(now, cpu, cx);
        let pc = &self.cpus[cpu];
        !pc.throttled && pc.running.is_none() && self.boosts[bi as usize].is_some()
    }

    /// `tid` left CPU `cpu`'s runqueue (it blocked, or is migrating).
    #[inline]
    pub fn dequeue<O: Observer>(&mut self, now: Nanos, cpu: Cpu, tid: Tid, cx: &mut Cx<'_, O>) {
        let Some(bi) = self.boost_of(tid) else { return };
        let cpu = cpu as usize;
        if cpu >= self.nr_cpus {
            return;
        }
        if self.cpus[cpu].running == Some(bi) {
            self.charge(now, cpu, cx);
            self.cpus[cpu].running = None;
        }
        let Some(b) = self.boosts[bi as usize].as_mut() else {
            return;
        };
        b.located = false;
        if b.cpu == Some(cpu as u16) {
            b.cpu = None;
            self.cpus[cpu].remove(bi);
        }
    }

    /// Which task CPU `cpu` should run instead of the stock choice `fair_next`, if any.
    ///
    /// `prev` is the task that ran until now; its fast-track time is charged first. A
    /// `protected` stock choice (a critical thread; asked only when the CPU could take the fast
    /// track) is never displaced: the fast track exists to serve critical threads, not to compete
    /// with them.
    #[inline(always)]
    pub fn pick<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        prev: Tid,
        fair_next: Tid,
        protected: impl FnOnce() -> bool,
        cx: &mut Cx<'_, O>,
    ) -> Option<Tid> {
        let _ = prev;
        if !self.has_work(cpu) {
            return None;
        }
        self.pick_busy(now, cpu as usize, fair_next, protected, cx)
    }

    /// [`FastTrack::pick`] on a CPU with fast-track work.
    #[inline(always)]
    pub(crate) fn pick_busy<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: usize,
        fair_next: Tid,
        protected: impl FnOnce() -> bool,
        cx: &mut Cx<'_, O>,
    ) -> Option<Tid> {
        self.charge(now, cpu, cx);
        let slice = cx.t.slice_ns;
        let pc = &mut self.cpus[cpu];
        if pc.throttled || pc.len == 0 {
            pc.running = None;
            return None;
        }
        if protected() {
            // The stock choice is a critical thread: let it run. If it is itself boosted (it
            // blocks another critical thread), its time counts against its budget.
            let bi = self
                .boost_of(fair_next)
                .filter(|&bi| self.boosts[bi as usize].is_some_and(|b| b.cpu == Some(cpu as u16)));
            let pc = &mut self.cpus[cpu];
            pc.running = bi;
            pc.run_since = now;
            return None;
        }
        let mut head = pc.queue[0];
        if pc.running != Some(head) {
            pc.slice_start = now;
        } else if pc.len > 1 && now.saturating_sub(pc.slice_start) >= slice {
            // Round-robin among boosted tasks once the head's slice is spent; the new head is
            // another task (a boost is queued once), so its slice starts now.
            pc.queue[..pc.len as usize].rotate_left(1);
            cx.st.bump(Counter::Rotations);
            head = pc.queue[0];
            pc.slice_start = now;
        }
        pc.running = Some(head);
        pc.run_since = now;
        let tid = self.boosts[head as usize]
            .expect("queued boost is live")
            .tid;
        if tid == fair_next {
            return None;
        }
        cx.st.bump(Counter::Picks);
        cx.obs.pick(now, cpu as Cpu, tid);
        Some(tid)
    }

    /// Whether waking task `waking` should preempt `curr` on CPU `cpu`.
    ///
    /// A `protected` current task (a critical thread; asked only for a boosted waking task) is
    /// never preempted by the fast track.
    pub fn should_preempt<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        curr: Tid,
        waking: Tid,
        protected: impl FnOnce() -> bool,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        if self.boost_of(waking).is_none() || (cpu as usize) >= self.nr_cpus || protected() {
            return false;
        }
        self.charge(now, cpu as usize, cx);
        if self.cpus[cpu as usize].throttled || self.is_boosted(curr) {
            return false;
        }
        cx.st.bump(Counter::Preempts);
        true
    }

    /// Where waking boosted task `tid` should run: `prev_cpu` if idle, else the first idle CPU.
    pub fn select_cpu<O: Observer>(
        &mut self,
        tid: Tid,
        prev_cpu: Cpu,
        idle_mask: u64,
        allowed_mask: u64,
        cx: &mut Cx<'_, O>,
    ) -> Option<Cpu> {
        self.boost_of(tid)?;
        let valid = if self.nr_cpus >= 64 {
            u64::MAX
        } else {
            (1u64 << self.nr_cpus) - 1
        };
        let cand = idle_mask & allowed_mask & valid;
        if cand == 0 {
            return None;
        }
        let cpu = if (prev_cpu as usize) < 64 && cand & (1 << prev_cpu) != 0 {
            prev_cpu
        } else {
            cand.trailing_zeros()
        };
        cx.st.bump(Counter::SelectIdle);
        Some(cpu)
    }

    /// The scheduler tick on CPU `cpu` running `curr`; returns true if the CPU should reschedule.
    #[inline(always)]
    pub fn tick<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        curr: Tid,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        if !self.has_work(cpu) {
            return false;
        }
        self.tick_busy(now, cpu as usize, curr, cx)
    }

    /// [`FastTrack::tick`] on a CPU with fast-track work.
    #[inline(always)]
    pub(crate) fn tick_busy<O: Observer>(
        &mut self,
        now: Nanos,
        c: usize,
        curr: Tid,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        let pc = &self.cpus[c];
        let was_throttled = pc.throttled;
        let was_running = pc.running;
        self.charge(now, c, cx);
        let slice = cx.t.slice_ns;
        let pc = &mut self.cpus[c];
        if let Some(bi) = pc.running {
            if self.boosts[bi as usize].is_none_or(|b| b.tid != curr) {
                // Something else (an RT task, say) runs now: stop charging the boost.
                pc.running = None;
            }
        }
        let budget_ended = was_running.is_some() && pc.running.is_none();
        let slice_over =
            pc.running.is_some() && pc.len > 1 && now.saturating_sub(pc.slice_start) >= slice;
        (pc.throttled && !was_throttled) || slice_over || budget_ended
    }

    /// Checks the structural invariants and bounds; used by tests.
    pub fn check(&self, t: &Tunables) -> Result<(), &'static str> {
        let grants = self.grants.iter().flatten().count();
        if grants > t.max_grants as usize {
            return Err("more grants than max_grants");
        }
        let mask = |live: &dyn Fn(usize) -> bool| {
            (0..MAX_GRANTS)
                .filter(|&i| live(i))
                .fold(0u64, |m, i| m | 1 << i)
        };
        if self.live_grants != mask(&|i| self.grants[i].is_some()) {
            return Err("live_grants out of sync");
        }
        if self.live_boosts != mask(&|i| self.boosts[i].is_some()) {
            return Err("live_boosts out of sync");
        }
        if self.chain_grants != mask(&|i| self.grants[i].is_some_and(|g| g.depth > 1)) {
            return Err("chain_grants out of sync");
        }
        for (bi, b) in self.boosts.iter().enumerate() {
            let Some(b) = b else { continue };
            let mine = mask(&|i| self.grants[i].is_some_and(|g| g.boost as usize == bi));
            if b.grants != mine || mine == 0 {
                return Err("boost's grant index out of sync");
            }
            if self
                .grants
                .iter()
                .flatten()
                .any(|g| g.boost as usize == bi && g.blocker != b.tid)
            {
                return Err("grant names another task than its boost");
            }
            if b.used >= t.budget_ns {
                return Err("boost over budget");
            }
            if !self.filter.may_contain(b.tid) {
                return Err("boost missing from filter");
            }
            let queued: usize = self.cpus[..self.nr_cpus]
                .iter()
                .map(|pc| {
                    pc.queue[..pc.len as usize]
                        .iter()
                        .filter(|&&x| x as usize == bi)
                        .count()
                })
                .sum();
            match b.cpu {
                Some(c)
                    if queued == 1
                        && self.cpus[c as usize].queue[..self.cpus[c as usize].len as usize]
                            .contains(&(bi as u8)) => {}
                None if queued == 0 => {}
                _ => return Err("queue membership out of sync"),
            }
        }
        for (c, pc) in self.cpus[..self.nr_cpus].iter().enumerate() {
            if pc.len as u32 > t.queue_cap {
                return Err("queue over queue_cap");
            }
            if pc.queue[..pc.len as usize]
                .iter()
                .any(|&bi| self.boosts[bi as usize].is_none())
            {
                return Err("queue holds a dead boost");
            }
            if let Some(bi) = pc.running {
                match self.boosts[bi as usize] {
                    None => return Err("running a dead boost"),
                    Some(b) if b.cpu != Some(c as u16) => {
                        return Err("running a boost queued elsewhere")
                    }
                    Some(_) => {}
                }
            }
        }
        if self.cpus[self.nr_cpus..]
            .iter()
            .any(|pc| pc.len != 0 || pc.running.is_some())
        {
            return Err("fast-track work beyond nr_cpus");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::NoObserver;
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
        assert!(!ft.enqueue(0, 7, 5, cx));
        assert_eq!(ft.pick(0, 7, 1, 1, || false, cx), None);
        assert!(!ft.tick(0, 99, 5, cx));
        ft.check(&t).unwrap();
    }
}
