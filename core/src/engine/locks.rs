//! Lock events: waits starting and ending, holders changing, wakes, exits.

use super::super::event::Answer;
use super::*;

impl<O: Observer> Engine<O> {
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
    pub(super) fn wait_start_owner(
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
    pub(super) fn wait_start_owned(
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
    pub(super) fn wait_start_any(
        &mut self,
        now: Nanos,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Option<Tid>,
        out: &mut Boosted,
    ) {
        // A wait on another lock whose finish the platform missed (a binder call that failed
        // after its caller was woken) is over: the turn its waiter had for it ends with it.
        if self
            .detector
            .wait_of(waiter)
            .is_some_and(|old| old.lock != lock)
        {
            self.ft
                .end_turn(now, waiter, RevokeReason::WaiterDone, cx!(self));
        }
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
    pub(super) fn grant_blockers(
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
            if fresh {
                self.stats.bump(if depth == 0 {
                    Counter::NoBlockerKnown
                } else {
                    Counter::ChainNoBlocker
                });
            }
            out.0 = Named::Nothing;
            return;
        }
        // What is left of the blockers is the newly boosted ones.
        let mut back_to_root = false;
        blockers.retain(|b| {
            self.stats.bump(Counter::BlockersFound);
            self.obs.block(now, waiter, b, lock, kind);
            if depth + 1 > self.tun.max_depth {
                self.stats.bump(Counter::MissedDepth);
                return false;
            }
            if b == root {
                // The chain came back to the critical thread itself: it is no blocker to
                // boost, but it may have been handed the lock (below).
                back_to_root = true;
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
        if back_to_root && root != waiter {
            // The lock names the critical thread while it still waits on that very lock: a
            // release handed it the lock without a wake any hook reports (a PI futex's), and
            // it takes it only when it runs. It gets the turn a reported wake would give it.
            let mut turn = Boosted::default();
            self.critical_woken(now, lock, root, &mut turn);
            if let Named::One(t) = turn.0 {
                blockers.push(t);
            }
        }
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
            self.critical.set_wait_done(waiter, now, lock);
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
    pub(super) fn end_forgotten_wait(&mut self, waiter: Tid) {
        self.detector.wait_finish(waiter);
    }

    /// The binder call `lock` from `caller` is freed: its wait ends, unless a reply woke the
    /// caller, whose receipt of the reply ends it (see [`Event::CallFreed`](super::super::Event::CallFreed)).
    pub(crate) fn call_freed(&mut self, now: Nanos, lock: LockId, caller: Tid) {
        // Only a wait on this very call ends here: binder frees many transactions a thread
        // made (a reply it sent, once its caller has read it), and the free of one says
        // nothing about the wait the thread is in now, which may be a lock wait in a chain.
        // A woken caller was woken by the reply only if the call has no holder left: the reply
        // releases it first. A failed call (its server thread died, or binder gave up on it)
        // wakes the caller with its server thread, or the pool's busy threads, still named.
        let held = self
            .detector
            .holders(lock)
            .is_some_and(|(owner, readers, _)| owner != 0 || !readers.is_empty());
        let unreplied = self
            .detector
            .wait_of(caller)
            .is_some_and(|w| w.lock == lock && (!w.woken || held));
        if unreplied {
            self.wait_finish(now, caller, lock);
        }
    }

    /// Whether `lock` is a binder call whose server replied: the reply releases the call, so
    /// no thread holds it any more. A caller woken while a server or the pool's busy threads
    /// still hold its call (binder wakes a caller for other work of its own too) sleeps on in
    /// the same call.
    fn replied_to(&self, lock: LockId) -> bool {
        is_binder_txn_lock(lock)
            && !self
                .detector
                .holders(lock)
                .is_some_and(|(owner, readers, _)| owner != 0 || !readers.is_empty())
    }

    /// Server thread `server` replied to the innermost binder call it holds (see
    /// [`Event::ServerReplied`](super::super::Event::ServerReplied)): its hold ends, and the
    /// reply wakes the caller as a release wakes a lock's waiter. A critical caller gets its
    /// wake turn, and its wait ends when it next sleeps ([`Engine::waiter_slept`]): no hook
    /// reports its receipt of the reply. A caller down a chain ends its wait at once: it goes
    /// on with the call it serves, whose own waiter keeps it granted. Returns the task this
    /// boosted, if any.
    pub(crate) fn server_replied(&mut self, now: Nanos, server: Tid) -> Boosted {
        let mut last: Option<Wait> = None;
        for j in 0..self.detector.wait_end() {
            let Some(w) = self.detector.wait_at(j) else {
                continue;
            };
            let held = is_binder_txn_lock(w.lock)
                && self
                    .detector
                    .holders(w.lock)
                    .is_some_and(|(owner, _, _)| owner == server);
            if held && !last.is_some_and(|l| w.start < l.start) {
                last = Some(w);
            }
        }
        let Some(w) = last else {
            return Boosted::default();
        };
        self.owner_released(now, w.lock, server);
        if w.depth == 0 && self.is_critical(w.waiter) {
            return self.waiter_woken(now, w.lock, w.waiter, server);
        }
        self.wait_finish(now, w.waiter, w.lock);
        Boosted::default()
    }

    /// Ends the grants a woken waiter got for `lock` once its wait is over, unless it holds the
    /// lock by now: an acquire reported after the wait (the mutex order) grants it again.
    #[cold]
    pub(super) fn end_handoff(&mut self, now: Nanos, waiter: Tid, lock: LockId) {
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
    pub(super) fn follow_owner(
        &mut self,
        now: Nanos,
        lock: LockId,
        tid: Tid,
        old: Tid,
        out: &mut Boosted,
    ) {
        self.departed(now, lock, tid, old);
        // An owner replaces the readers: a binder call's pool threads stop blocking it once a
        // server thread takes it.
        let (readers, n) = self.detector.drop_readers(lock);
        for &r in readers.iter().take(n) {
            if r != tid && self.ft.is_boosted(r) {
                self.ft.revoke_held(now, r, lock, cx!(self));
            }
        }
        self.follow(now, lock, tid, Counter::FollowGrants, |_| true, out);
    }

    /// `lock`'s owner is `tid` where it was `old`: taken over without a release the engine
    /// saw, so `old` no longer blocks anyone here.
    fn departed(&mut self, now: Nanos, lock: LockId, tid: Tid, old: Tid) {
        if old > 0 && old != tid && self.ft.is_boosted(old) {
            self.ft.revoke_held(now, old, lock, cx!(self));
        }
    }

    /// Grants `blocker`, which now holds (or is about to take) `lock`, to every tracked wait on
    /// `lock` that `blocks` accepts, within the usual bounds. Sets `out` if it boosted `blocker`.
    pub(super) fn follow(
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
    /// granted. A critical thread waiting on `lock` that takes it here was granted it by a
    /// release (`rwsem_mark_wake`, whose record hook names the readers it grants): it holds the
    /// lock from now on but takes it only when it runs, so it gets the wake turn a woken mutex or
    /// rwsem-writer waiter gets ([`Engine::waiter_woken`]). Returns the task this boosted, if any.
    #[inline]
    pub fn reader_acquired(&mut self, now: Nanos, lock: LockId, tid: Tid) -> Boosted {
        let mut out = Boosted::default();
        if !self.enabled {
            return out;
        }
        if self
            .detector
            .reader_acquired(now, lock, tid, &self.tun, &mut self.stats)
        {
            self.follow_reader(now, lock, tid, &mut out);
        }
        if self.is_critical(tid) {
            self.critical_woken(now, lock, tid, &mut out);
        }
        out
    }

    #[cold]
    #[inline(never)]
    pub(super) fn follow_reader(&mut self, now: Nanos, lock: LockId, tid: Tid, out: &mut Boosted) {
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
    /// runqueue, or after `wake_slice_ns` (see [`wakes`](super::super::wakes)). If tracked waits are
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
                self.chain_woken(lock, tid);
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
    pub(super) fn critical_woken(&mut self, now: Nanos, lock: LockId, tid: Tid, out: &mut Boosted) {
        if self.detector.set_woken(tid, lock) {
            self.grant_turn(now, lock, tid, Counter::WakeGrants, out);
        }
    }

    /// A release woke `tid`, a link of a chain waiting on `lock` (a mutex, rwsem or futex).
    ///
    /// Its retry can lose the lock to a task that takes it first, where no event may report
    /// it (an uncontended fast path while the owner probes are detached). Marked woken, its
    /// next sleep is reported and resumes its wait with the owner the lock names then
    /// ([`Engine::waiter_slept`]); until then no holder is granted on its behalf, as for a
    /// woken critical waiter. It needs no wake turn: its own boost runs it.
    #[cold]
    #[inline(never)]
    fn chain_woken(&mut self, lock: LockId, tid: Tid) {
        let link = self.ft.chain_of(tid).is_some()
            && !is_binder_txn_lock(lock)
            && self
                .detector
                .wait_of(tid)
                .is_some_and(|w| w.lock == lock && w.depth > 0);
        if link {
            self.detector.set_woken(tid, lock);
        }
    }

    /// Critical thread `tid` was preempted on CPU `cpu` and stays queued there, inside a
    /// tracked wait it has not slept in yet or on its way back from one; `handle` is the
    /// platform's name for it.
    ///
    /// Inside the wait, a boosted blocker queued on that CPU would otherwise run ahead of it
    /// there for as long as its budget lasts, taking the lock again and again before the
    /// waiter gets to sleep and be woken by a release (or, on an owner-hinted futex, before it
    /// gets to see the lock free). The waiter is treated as woken: it gets a wait turn at the
    /// head of that CPU's queue, runs at the next pick, and its sleep or retry ends the turn as
    /// a woken waiter's does. After the wait, until it sleeps, it is on its way back from the
    /// lock call, and a wait for a CPU there is blocking too: it gets the same turn once, which
    /// ends when it sleeps or leaves the CPU, or after `wake_slice_ns`. Once is not bounded by
    /// time: the turns it ran on during the wait put it behind in the fair class's virtual
    /// time, so a fair task of its weight can run ahead of it for about as long as they lasted
    /// whenever the first preemption comes.
    #[cold]
    #[inline(never)]
    pub(crate) fn waiter_preempted(&mut self, now: Nanos, cpu: Cpu, tid: Tid, handle: u64) {
        if !self.enabled || handle == 0 || self.tun.wake_slice_ns == 0 || !self.is_critical(tid) {
            return;
        }
        let mut out = Boosted::default();
        let turned = match self.detector.wait_of(tid) {
            Some(w) if w.depth == 0 && !w.woken => {
                self.detector.set_woken(tid, w.lock)
                    && self.grant_turn(now, w.lock, tid, Counter::WaitTurns, &mut out)
            }
            Some(_) => false,
            None => self
                .critical
                .take_wait_done(tid)
                .is_some_and(|d| self.grant_turn(now, d.lock, tid, Counter::WaitTurns, &mut out)),
        };
        if turned {
            self.enqueue_task(now, cpu, tid, handle, 0);
        }
    }

    /// Critical thread `tid` joins a runqueue inside a tracked wait that no reported release
    /// woke: a PI futex's release hands the lock over and wakes the new owner where no hook
    /// names it (the rt_mutex is unlocked in `rt_mutex_futex_unlock()`, past every wait probe),
    /// or it was preempted before it slept and a balance moved it. It is as good as woken: it
    /// gets a wake turn; true if it did (it is boosted now).
    #[cold]
    #[inline(never)]
    pub(super) fn woken_unseen(&mut self, now: Nanos, tid: Tid) -> bool {
        if !self.enabled || self.tun.wake_slice_ns == 0 || !self.critical.contains(tid) {
            return false;
        }
        let Some(w) = self
            .detector
            .wait_of(tid)
            .filter(|w| w.depth == 0 && !w.woken)
        else {
            return false;
        };
        let mut out = Boosted::default();
        self.detector.set_woken(tid, w.lock)
            && self.grant_turn(now, w.lock, tid, Counter::WakeGrants, &mut out)
    }

    /// Gives critical thread `tid` a turn (a grant of depth 0 on its own behalf) for `lock`,
    /// counted in `counter`; false if it got none.
    fn grant_turn(
        &mut self,
        now: Nanos,
        lock: LockId,
        tid: Tid,
        counter: Counter,
        out: &mut Boosted,
    ) -> bool {
        if self.tun.wake_slice_ns == 0 {
            return false;
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
                self.stats.bump(counter);
                out.0 = Named::One(tid);
                true
            }
            GrantOutcome::Added => {
                self.stats.bump(counter);
                true
            }
            GrantOutcome::Exists | GrantOutcome::Missed => false,
        }
    }

    /// `tid` left its runqueue to sleep. If it is a woken waiter (critical, or a link still in a
    /// chain), it retried and lost the lock: the lock's holders block it again and are granted,
    /// on behalf of the critical thread it matters for now.
    ///
    /// `owner` is who `lock` names as its owner now (0: none or unknown), as the platform read
    /// it from the lock `tid` waits on by its own record; it counts only if that is the lock of
    /// the woken wait. A platform reports this only for tasks in [`Engine::woken_lanes`].
    /// Returns the tasks this boosted, if any.
    pub fn waiter_slept(&mut self, now: Nanos, tid: Tid, lock: LockId, owner: Tid) -> Boosted {
        let mut out = Boosted::default();
        if !self.enabled || !lanes_may_contain(self.detector.woken_lanes(), tid) {
            return out;
        }
        if let Some(w) = self.detector.take_woken(tid) {
            // Its retry is over: so is its wake turn.
            self.ft
                .end_turn(now, tid, RevokeReason::WaiterDone, cx!(self));
            if self.replied_to(w.lock) {
                // The reply woke it: it has nothing to retry, and a sleep after the reply is
                // past the call (Rust Binder reports no receipt of the reply).
                self.wait_finish(now, tid, w.lock);
            } else if self.is_critical(tid) {
                self.stats.bump(Counter::ResumedWaits);
                self.resume_wait(now, w, lock, owner, &mut out);
            } else if let Some((depth, root)) = self.ft.chain_of(tid) {
                self.stats.bump(Counter::ResumedWaits);
                let w = Wait { depth, root, ..w };
                self.resume_wait(now, w, lock, owner, &mut out);
            }
        }
        out
    }

    /// Grants the blockers of woken waiter `w.waiter`, whose retry goes on as a wait
    /// again; `owner` is the owner the platform read from `lock` (the lock its record names)
    /// just now, which the engine takes as `w.lock`'s owner if the two locks agree, since it
    /// may have taken the lock where no event reported it.
    pub(super) fn resume_wait(
        &mut self,
        now: Nanos,
        w: Wait,
        lock: LockId,
        owner: Tid,
        out: &mut Boosted,
    ) {
        let named = (lock == w.lock && owner > 0 && owner != w.waiter).then_some(owner);
        if let Some(o) = named {
            if let Some(old) = self.detector.owner_acquired(now, lock, o) {
                self.departed(now, lock, o, old);
            }
        }
        self.grant_blockers(now, w, named, false, out);
    }

    /// One bit per woken waiter (critical, or a chain's link), bit `tid % 64`: whose sleeps a
    /// platform reports as
    /// [`Event::WaiterSlept`](super::super::event::Event::WaiterSlept).
    #[inline]
    pub fn woken_lanes(&self) -> u64 {
        self.detector.woken_lanes()
    }

    /// Whether `tid` might be critical or boosted, i.e. whether its waits could matter.
    ///
    /// A platform asks before doing costly work for a wait (such as checking a futex owner
    /// hint); false positives are possible, false negatives are not.
    #[inline]
    pub(crate) fn may_track(&self, tid: Tid) -> bool {
        self.enabled && self.interesting(tid)
    }

    /// Whether `waiter`, about to join a futex's queue, goes ahead of the waiters of its
    /// priority: a critical thread, or a boosted one (a link of a critical thread's chain).
    /// The kernel wakes a futex's waiters first come, first woken among equal priorities, so
    /// a critical thread that queues behind background threads waits out each of their
    /// critical sections after the holder's, every one of them a blocker the fast track must
    /// run first; queued ahead, it takes the lock at the holder's release.
    pub(crate) fn queue_first(&mut self, waiter: Tid) -> bool {
        if self.tun.queue_first == 0
            || !self.may_track(waiter)
            || !(self.is_critical(waiter) || self.ft.is_boosted(waiter))
        {
            return false;
        }
        self.stats.bump(Counter::QueuedFirst);
        true
    }

    /// `waiter` starts an owner-hinted futex wait naming `owner` (checked by the platform:
    /// `valid`). Only a tracked thread's hint counts: a critical waiter's or a chain link's.
    pub(crate) fn futex_wait(
        &mut self,
        now: Nanos,
        waiter: Tid,
        owner: Tid,
        valid: bool,
    ) -> Boosted {
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

    /// Ends the wakes in flight that `done` accepts: their releasers' grants for the lock end.
    #[cold]
    pub(super) fn settle_wakes(&mut self, now: Nanos, done: impl Fn(&Wake) -> bool) {
        while let Some(w) = self.wakes.take(&done) {
            if self.ft.is_boosted(w.waker) {
                self.ft.revoke_held(now, w.waker, w.lock, cx!(self));
            }
        }
    }

    /// Ends the wakes in flight for longer than `wake_slice_ns` whose woken waiter is not
    /// boosted: such a waiter joins a runqueue unseen. A boosted one's enqueue is always
    /// reported, and until it comes the releaser may not have woken it yet (preempted between
    /// picking the waiter and `wake_up_q()`), so its grant lasts, bounded by its budget.
    pub(crate) fn settle_stale_wakes(&mut self, now: Nanos) {
        if self.wakes.is_empty() {
            return;
        }
        let slice = self.tun.wake_slice_ns;
        let mut stale = [Wake::default(); WAKES_IN_FLIGHT];
        let mut n = 0;
        for w in self.wakes.iter() {
            let unseen = !self.ft.is_boosted(w.woken);
            if unseen && now.saturating_sub(w.since) >= slice {
                if let Some(s) = stale.get_mut(n) {
                    *s = *w;
                    n += 1;
                }
            }
        }
        if let Some(stale) = stale.get(..n) {
            if !stale.is_empty() {
                self.settle_wakes(now, |w| stale.contains(w));
            }
        }
    }

    /// The platform's own view of who holds `lock` (`owner`, 0 for none, and `readers`, oldest
    /// first), given right before a wait on it starts, by a platform that forwards the lock's
    /// acquire and release events only while tracked waits are on it (those whose bit is set in
    /// [`Engine::lock_lanes`]). Ignored while such waits exist: the engine's record is current.
    pub(crate) fn lock_seen(&mut self, now: Nanos, lock: LockId, owner: Tid, readers: &[Tid]) {
        if !self.enabled {
            return;
        }
        // A queued binder call's readers are the server pool's busy threads, a bounded few.
        let readers = if is_binder_txn_lock(lock) {
            let n = readers.len().min(self.tun.max_pool_candidates as usize);
            readers.get(..n).unwrap_or(&[])
        } else {
            readers
        };
        self.detector
            .lock_seen(now, lock, owner, readers, &mut self.stats);
    }

    /// `waiter`, just boosted while asleep, has been waiting on `lock` since before it mattered,
    /// so no wait start was reported: the platform found the wait in its own record (a mutex or
    /// rwsem wait, with the owner the lock named when it began and, for an rwsem without one,
    /// the readers it records) and hands it over now, so that the chain goes on through it.
    ///
    /// The record may be stale by the time it is read, and the engine's view wins: a waiter
    /// whose wait the engine already tracks (a critical thread's, or one its probe reported)
    /// keeps that record; and on a lock tracked waits are on, the engine follows the holders
    /// itself: a waiter it records as a holder (an rwsem release granted it the lock, a mutex
    /// was handed to it) is no longer waiting, and the recorded owner and readers are not used.
    pub(crate) fn asleep_wait(
        &mut self,
        now: Nanos,
        waiter: Tid,
        lock: LockId,
        kind: LockKind,
        owner: Tid,
        readers: &[Tid],
    ) -> Answer {
        // The table's holders of a lock no tracked wait is on may be stale (its events are not
        // followed then): only a tracked lock's record says the waiter holds it now.
        let tracked = self.detector.waits().any(|w| w.lock == lock);
        if !self.enabled
            || !self.ft.is_boosted(waiter)
            || self.detector.wait_of(waiter).is_some()
            || (tracked && self.detector.holds(lock, waiter))
        {
            return Answer::None;
        }
        let owner = (owner > 0 && !tracked).then_some(owner);
        if !tracked && kind != LockKind::Mutex {
            self.lock_seen(now, lock, owner.unwrap_or(0), readers);
        }
        Answer::boosted(self.wait_start(now, waiter, lock, kind, owner))
    }

    /// A 64-bit summary of the locks tracked waits are on: bit [`lock_lane`]`(lock)` clear
    /// proves no tracked wait is on `lock`, so its acquire and release events cannot change a
    /// decision (given [`Event::LockSeen`](super::super::Event::LockSeen) before each new
    /// wait). O(live waits).
    pub fn lock_lanes(&self) -> u64 {
        self.detector
            .waits()
            .fold(0, |m, w| m | 1u64 << lock_lane(w.lock))
    }
}
