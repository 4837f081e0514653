//! The per-CPU arbiter: charging boosted tasks, the bounds (slice, budget, throttle), and the
//! scheduler's questions (enqueue, dequeue, pick, preempt, tick); where a waking blocker goes is
//! in `placement.rs`.

use super::super::observer::{Observer, RevokeReason};
use super::super::stats::{Counter, Stats};
use super::super::tunables::Tunables;
use super::super::{Cpu, Nanos, Tid};
use super::{Cx, FastTrack, Seen};

impl FastTrack {
    /// Charges the CPU's running boosted task up to `now`, rolls the window, applies the bounds.
    #[inline(always)]
    fn charge<O: Observer>(&mut self, now: Nanos, cpu: usize, cx: &mut Cx<'_, O>) {
        let Some(pc) = self.cpus.get_mut(cpu) else {
            return;
        };
        let mut over_budget = None;
        let mut turn_over = None;
        if let Some(bi) = pc.running {
            let dt = now.saturating_sub(pc.run_since);
            pc.run_since = now;
            pc.window_used += dt;
            cx.st.add(Counter::FastTrackNs, dt);
            if let Some(b) = self.boosts.get_mut(bi as usize).and_then(Option::as_mut) {
                b.used += dt;
                if b.used >= cx.t.budget_ns {
                    over_budget = Some(bi);
                } else if b.depth == 0 && b.used >= cx.t.wake_slice_ns {
                    turn_over = Some(bi);
                }
            }
        }
        if now.saturating_sub(pc.window_start) >= cx.t.throttle_window_ns
            || (!pc.throttled && pc.window_used >= self.cap_ns)
        {
            self.roll_or_throttle(now, cpu, cx.st, cx.obs);
        }
        if let Some(bi) = over_budget {
            // The context goes in parts, so that the common path never builds it in memory.
            self.revoke_budget(now, bi, cx.t, cx.st, cx.obs);
        } else if let Some(bi) = turn_over {
            self.end_turn_slots(now, bi, RevokeReason::TurnOver, cx.t, cx.st, cx.obs);
        }
    }

    /// Ends `tid`'s wake turn (its grant of depth 0), if it has one; its other grants stay.
    pub fn end_turn<O: Observer>(
        &mut self,
        now: Nanos,
        tid: Tid,
        reason: RevokeReason,
        cx: &mut Cx<'_, O>,
    ) {
        if let Some(bi) = self.boost_of(tid) {
            self.end_turn_slots(now, bi, reason, cx.t, cx.st, cx.obs);
        }
    }

    #[cold]
    fn end_turn_slots<O: Observer>(
        &mut self,
        now: Nanos,
        bi: u8,
        reason: RevokeReason,
        t: &Tunables,
        st: &mut Stats,
        obs: &mut O,
    ) {
        let mut ended = 0;
        for gi in super::bits(self.grants_of(bi)) {
            if self.grant_at(gi).is_some_and(|g| g.depth == 0) {
                ended |= 1 << gi;
            }
        }
        if reason == RevokeReason::TurnOver && ended != 0 {
            if let Some(b) = self.boost_at(bi as usize) {
                // Its retry did not end within the turn, and may not end in a sleep the
                // platform reports: the engine's next tick grants the lock's holders again.
                self.cool_until(now, b.tid);
            }
        }
        self.revoke_slots(now, reason, ended, &mut Cx { t, st, obs });
    }

    /// Starts a new throttle window, or throttles the CPU for the rest of this one.
    #[cold]
    fn roll_or_throttle<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: usize,
        st: &mut Stats,
        obs: &mut O,
    ) {
        let Some(pc) = self.cpus.get_mut(cpu) else {
            return;
        };
        if now.saturating_sub(pc.window_start) >= self.window_ns {
            pc.window_start = now;
            pc.window_used = 0;
            if pc.throttled {
                pc.throttled = false;
                obs.unthrottled(now, cpu as Cpu);
            }
        }
        if !pc.throttled && pc.window_used >= self.cap_ns {
            pc.throttled = true;
            st.bump(Counter::Throttles);
            obs.throttled(
                now,
                cpu as Cpu,
                pc.window_start.saturating_add(self.window_ns),
            );
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
        if let Some(b) = self.boost_at(bi as usize) {
            self.cool(now, b.tid);
        }
        self.revoke_slots(now, RevokeReason::Budget, ended, &mut Cx { t, st, obs });
    }

    /// `tid` is now on CPU `cpu`'s runqueue; returns true if that CPU should reschedule now.
    ///
    /// Never to preempt a `protected` running task (a critical thread). A critical waiter
    /// reports its wait before it sleeps, and its blocker is often queued on its CPU:
    /// preempted there, it would stay runnable behind that blocker, which can free and
    /// retake the lock many times over before the waiter runs to see it free.
    #[inline]
    pub fn enqueue<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        tid: Tid,
        protected: bool,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        let Some(bi) = self.boost_of(tid) else {
            return false;
        };
        let cpu = cpu as usize;
        if cpu >= self.nr_cpus {
            return false;
        }
        let Some(b) = self.boosts.get_mut(bi as usize).and_then(Option::as_mut) else {
            return false;
        };
        b.seen = Seen::Located;
        match b.cpu {
            Some(c) if c as usize == cpu => {}
            old => {
                if let Some(pc) = old.and_then(|c| self.cpus.get_mut(c as usize)) {
                    pc.remove(bi);
                    if pc.running == Some(bi) {
                        pc.running = None;
                    }
                }
                let Some(pc) = self.cpus.get_mut(cpu) else {
                    return false;
                };
                let n = pc.len as usize;
                // `queue_cap` is at most the queue's size; the slot check holds even if not.
                let (Some(slots), true) = (pc.queue.get_mut(..=n), (n as u32) < cx.t.queue_cap)
                else {
                    b.cpu = None;
                    cx.st.bump(Counter::MissedQueue);
                    return false;
                };
                if b.depth == 0 {
                    // A wake turn goes first: its critical thread retries in a moment, and no
                    // blocker on this CPU can help it more than that.
                    slots.rotate_right(1);
                    if let Some(first) = slots.first_mut() {
                        *first = bi;
                    }
                } else if let Some(last) = slots.last_mut() {
                    *last = bi;
                }
                pc.len += 1;
                b.cpu = Some(cpu as u16);
            }
        }
        self.charge(now, cpu, cx);
        // Charging may have ended the boost, or the wake turn within it. A wake turn is at the
        // head (above): it runs ahead of a boost running there.
        let run_now = !protected
            && self.boost_at(bi as usize).is_some_and(|b| {
                let wake_turn = b.depth == 0;
                self.cpus.get(cpu).is_some_and(|pc| {
                    (!pc.throttled || wake_turn)
                        && pc.running.map_or(true, |r| wake_turn && r != bi)
                })
            });
        cx.obs.queued(now, cpu as Cpu, tid, run_now);
        run_now
    }

    /// `tid` left CPU `cpu`'s runqueue (it blocked, or is migrating).
    #[inline]
    pub fn dequeue<O: Observer>(&mut self, now: Nanos, cpu: Cpu, tid: Tid, cx: &mut Cx<'_, O>) {
        let Some(bi) = self.boost_of(tid) else { return };
        let cpu = cpu as usize;
        if cpu >= self.nr_cpus {
            return;
        }
        if self.cpus.get(cpu).is_some_and(|pc| pc.running == Some(bi)) {
            self.charge(now, cpu, cx);
            if let Some(pc) = self.cpus.get_mut(cpu) {
                pc.running = None;
            }
        }
        let Some(b) = self.boosts.get_mut(bi as usize).and_then(Option::as_mut) else {
            return;
        };
        // Its next enqueue will be reported too: a sleeping task is not lost.
        b.seen = Seen::Located;
        if b.cpu == Some(cpu as u16) {
            b.cpu = None;
            if let Some(pc) = self.cpus.get_mut(cpu) {
                pc.remove(bi);
            }
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
        // A throttled CPU still runs a turn at its head: the throttle bounds what blockers take
        // from fair tasks, and a turn is the critical thread itself, bounded by
        // `wake_slice_ns` and counted in the share.
        let turn_first = self.turn_at_head(cpu);
        let pc = self.cpus.get_mut(cpu)?;
        if (pc.throttled && !turn_first) || pc.len == 0 {
            pc.running = None;
            return None;
        }
        if protected() {
            // The stock choice is a critical thread: let it run. If it is itself boosted (it
            // blocks another critical thread), its time counts against its budget.
            let bi = self.boost_of(fair_next).filter(|&bi| {
                self.boost_at(bi as usize)
                    .is_some_and(|b| b.cpu == Some(cpu as u16))
            });
            if let Some(pc) = self.cpus.get_mut(cpu) {
                pc.running = bi;
                pc.run_since = now;
            }
            return None;
        }
        let queued = pc.queue.get_mut(..pc.len as usize)?;
        let mut head = *queued.first()?;
        if pc.running != Some(head) {
            pc.slice_start = now;
        } else if queued.len() > 1 && !pc.throttled && now.saturating_sub(pc.slice_start) >= slice {
            // Round-robin among boosted tasks once the head's slice is spent; the new head is
            // another task (a boost is queued once), so its slice starts now.
            queued.rotate_left(1);
            cx.st.bump(Counter::Rotations);
            head = *queued.first()?;
            pc.slice_start = now;
        }
        pc.running = Some(head);
        pc.run_since = now;
        // A queued boost is live (an invariant); were it not, the stock choice stands.
        let tid = self.boost_at(head as usize)?.tid;
        if tid == fair_next {
            return None;
        }
        cx.st.bump(Counter::Picks);
        cx.obs.pick(now, cpu as Cpu, tid);
        Some(tid)
    }

    /// Whether the head of CPU `cpu`'s queue is a turn: a critical thread on the fast track on
    /// its own behalf (a boost of depth 0).
    fn turn_at_head(&self, cpu: usize) -> bool {
        self.cpus
            .get(cpu)
            .and_then(|pc| pc.queue.get(..pc.len as usize))
            .and_then(<[u8]>::first)
            .and_then(|&bi| self.boost_at(bi as usize))
            .is_some_and(|b| b.depth == 0)
    }

    /// When CPU `cpu` should next be asked to pick, if a boosted task runs there: the moment
    /// its budget or the CPU's throttle share runs out, or its slice ends while others queue.
    ///
    /// A platform that can arm a timer for this moment ends a grant on its budget rather than
    /// at the next tick, which may come a whole tick period later.
    pub fn deadline(&self, cpu: Cpu, t: &Tunables) -> Option<Nanos> {
        let pc = self.cpus.get(cpu as usize)?;
        let bi = pc.running?;
        let b = self.boost_at(bi as usize)?;
        let left = if b.depth == 0 {
            // A turn is not stopped by the CPU's share (see `pick_busy`).
            t.wake_slice_ns.saturating_sub(b.used)
        } else {
            t.budget_ns
                .saturating_sub(b.used)
                .min(self.cap_ns.saturating_sub(pc.window_used))
        };
        let mut at = pc.run_since.saturating_add(left);
        if pc.len > 1 {
            at = at.min(pc.slice_start.saturating_add(t.slice_ns));
        }
        Some(at)
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
        if self.throttled(cpu) || self.is_boosted(curr) {
            return false;
        }
        cx.st.bump(Counter::Preempts);
        true
    }

    /// The scheduler tick on CPU `cpu` running `curr`; returns true if the CPU should reschedule.
    #[inline(always)]
    ///
    /// A `protected` current task (a critical thread) is not asked to give way to a boosted
    /// task that waits in this CPU's queue.
    pub fn tick<O: Observer>(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        curr: Tid,
        protected: impl FnOnce() -> bool,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        if !self.has_work(cpu) {
            return false;
        }
        self.tick_busy(now, cpu as usize, curr, protected, cx)
    }

    /// [`FastTrack::tick`] on a CPU with fast-track work.
    #[inline(always)]
    pub(crate) fn tick_busy<O: Observer>(
        &mut self,
        now: Nanos,
        c: usize,
        curr: Tid,
        protected: impl FnOnce() -> bool,
        cx: &mut Cx<'_, O>,
    ) -> bool {
        let Some(pc) = self.cpus.get(c) else {
            return false;
        };
        let was_throttled = pc.throttled;
        let was_running = pc.running;
        self.charge(now, c, cx);
        let slice = cx.t.slice_ns;
        let boosts = &self.boosts;
        let Some(pc) = self.cpus.get_mut(c) else {
            return false;
        };
        if let Some(bi) = pc.running {
            if boosts
                .get(bi as usize)
                .copied()
                .flatten()
                .map_or(true, |b| b.tid != curr)
            {
                // Something else (an RT task, say) runs now: stop charging the boost.
                pc.running = None;
            }
        }
        let budget_ended = was_running.is_some() && pc.running.is_none();
        let turn_first = pc
            .queue
            .get(..pc.len as usize)
            .and_then(<[u8]>::first)
            .and_then(|&bi| boosts.get(bi as usize).copied().flatten())
            .is_some_and(|b| b.depth == 0);
        let slice_over =
            pc.running.is_some() && pc.len > 1 && now.saturating_sub(pc.slice_start) >= slice;
        // A boosted task waits in this CPU's queue while another task runs: the kick that
        // should have made this CPU pick was lost or came before the task was queued here.
        // Picking again now bounds that to a tick, not to the running task's whole slice.
        let stranded = pc.running.is_none()
            && (!pc.throttled || turn_first)
            && pc
                .queue
                .get(..pc.len as usize)
                .and_then(<[u8]>::first)
                .and_then(|&bi| boosts.get(bi as usize).copied().flatten())
                .is_some_and(|b| b.tid != curr)
            && !protected();
        if stranded {
            cx.st.bump(Counter::StrandedPicks);
        }
        (pc.throttled && !was_throttled) || slice_over || budget_ended || stranded
    }
}
