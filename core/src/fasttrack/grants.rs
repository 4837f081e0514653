//! Grants and boosts: making a grant, ending grants, and collapsing chains whose links ended.

use super::super::observer::{Observer, RevokeReason};
use super::super::stats::{Counter, Stats};
use super::super::tunables::{Tunables, MAX_GRANTS};
use super::super::{LockId, Nanos, Tid, MAX_CPUS};
use super::{bits, Boost, Cx, FastTrack, Grant, GrantOutcome, Link, Seen};

impl FastTrack {
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
            let same = |gi: usize| {
                self.grant_at(gi)
                    .is_some_and(|g| g.via == via && g.lock == lock)
            };
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
                // `boost_of` named a live boost: never the fallback.
                let Some(b) = self.boost_at_mut(bi.into()) else {
                    cx.st.bump(Counter::MissedGrants);
                    return GrantOutcome::Missed;
                };
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

    /// The grant and boost slots [`FastTrack::grant`] would give a direct grant (depth 1) to
    /// `blocker` if it is certainly not boosted (the filter says so) and the tunables last
    /// [configured](FastTrack::configure) allow the grant and leave both tables room; `None`
    /// otherwise.
    ///
    /// With these slots, [`FastTrack::grant_fresh`] does what `grant` does, with every failure
    /// ruled out first: the engine's fast path. Changes nothing.
    #[inline(always)]
    pub(crate) fn fresh_slots(&self, blocker: Tid) -> Option<(usize, usize)> {
        if self.filter.may_contain(blocker) {
            return None;
        }
        // The lowest free slot in the room is `grant`'s lowest free slot when that is below
        // the limit, and there is none when it is not (or when no grant is allowed).
        let free = !self.live_grants & self.direct_room;
        // Every boost slot, as a mask (all 64 bits while `MAX_GRANTS` is 64).
        const BOOST_SLOTS: u64 = u64::MAX >> (64 - MAX_GRANTS);
        let free_boosts = !self.live_boosts & BOOST_SLOTS;
        if free == 0 || free_boosts == 0 {
            return None;
        }
        Some((
            free.trailing_zeros() as usize,
            free_boosts.trailing_zeros() as usize,
        ))
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
        let Some(slot) = self.boosts.get_mut(bi % MAX_GRANTS) else {
            return;
        };
        *slot = Some(Boost {
            tid: link.blocker,
            used: 0,
            grants: 1u64 << gi,
            cpu: None,
            depth: link.depth,
            root: link.root,
            handle: 0,
            seen: Seen::Nothing,
            since: now,
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
        let Some(slot) = self.grants.get_mut(gi % MAX_GRANTS) else {
            return;
        };
        *slot = Some(Grant {
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
            if self.grant_at(gi).is_some_and(|g| pred(&g)) {
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
        // Only a grant of depth > 1 hangs from a link that can vanish, and ending grants adds
        // none: with no chain grants now (almost always), nothing can collapse afterwards.
        if self.chain_grants != 0 {
            self.revoke_root_chained(now, root, reason, cx.t, cx.st, cx.obs);
            return;
        }
        for gi in bits(self.live_grants) {
            if self.grant_at(gi).is_some_and(|g| g.root == root) {
                self.end_grant(now, gi, reason, false, cx);
            }
        }
    }

    /// [`FastTrack::revoke_root`] while chain grants are live, with the context in parts.
    #[cold]
    #[inline(never)]
    fn revoke_root_chained<O: Observer>(
        &mut self,
        now: Nanos,
        root: Tid,
        reason: RevokeReason,
        t: &Tunables,
        st: &mut Stats,
        obs: &mut O,
    ) {
        let cx = &mut Cx { t, st, obs };
        let mut ended = false;
        for gi in bits(self.live_grants) {
            if self.grant_at(gi).is_some_and(|g| g.root == root) {
                self.drop_grant(now, gi, reason, cx);
                ended = true;
            }
        }
        if ended && self.chain_grants != 0 {
            self.collapse_chains(now, cx);
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
            if self.grant_at(gi).is_some_and(|g| g.lock == lock) {
                ended |= 1 << gi;
            }
        }
        self.revoke_slots(now, RevokeReason::Released, ended, cx);
    }

    /// Ends the live grants in slots `ended`, lowest first, then the chains they held up.
    #[inline(always)]
    pub(super) fn revoke_slots<O: Observer>(
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

    /// Ends grants whose `via` is a chain link (depth > 1) that is no longer boosted.
    ///
    /// Each pass can only unboost tasks one link further down, so `MAX_DEPTH` passes suffice.
    #[cold]
    #[inline(never)]
    fn collapse_chains<O: Observer>(&mut self, now: Nanos, cx: &mut Cx<'_, O>) {
        for _ in 0..super::super::tunables::MAX_DEPTH {
            let mut changed = false;
            for gi in bits(self.chain_grants) {
                let Some(g) = self.grant_at(gi) else { continue };
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
        self.end_grant(now, gi, reason, true, cx);
    }

    /// [`FastTrack::drop_grant`], told whether chain grants may be live: a caller that knows
    /// there are none spares clearing the grant's bit in their (empty) mask.
    #[inline(always)]
    fn end_grant<O: Observer>(
        &mut self,
        now: Nanos,
        gi: usize,
        reason: RevokeReason,
        chains: bool,
        cx: &mut Cx<'_, O>,
    ) {
        let Some(g) = self.grants.get_mut(gi).and_then(Option::take) else {
            return;
        };
        let bit = 1u64 << gi;
        self.live_grants &= !bit;
        if chains {
            self.chain_grants &= !bit;
        }
        cx.st.bump(reason.counter());
        cx.obs.revoke(now, g.blocker, reason);
        // A grant's boost is a live slot, below `MAX_GRANTS`: the mask only spares a bound check.
        let bi = g.boost as usize % MAX_GRANTS;
        let Some(b) = self.boosts.get_mut(bi).and_then(Option::as_mut) else {
            return;
        };
        b.grants &= !bit;
        if b.grants != 0 {
            // Re-derive the shallowest remaining link for future chain waits.
            let (mut depth, mut root) = (u32::MAX, b.root);
            for x in bits(b.grants).filter_map(|x| self.grants.get(x).copied().flatten()) {
                if x.depth < depth {
                    depth = x.depth;
                    root = x.root;
                }
            }
            b.depth = depth;
            b.root = root;
            return;
        }
        // Live: it was found above.
        let Some(b) = self.boosts.get_mut(bi).and_then(Option::take) else {
            return;
        };
        self.live_boosts &= !(1 << bi);
        // A boost's CPU is below `MAX_CPUS`, a power of two: the mask changes nothing and spares
        // the bound check.
        if let Some(pc) = b.cpu.and_then(|c| self.cpus.get_mut(c as usize % MAX_CPUS)) {
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
}
