//! Scheduler hooks: enqueue and dequeue, picks, preemption, placement, ticks and regrants.

use super::*;

impl<O: Observer> Engine<O> {
    /// `tid` joined CPU `cpu`'s runqueue; returns true if that CPU should reschedule now.
    #[inline]
    pub fn enqueue(&mut self, now: Nanos, cpu: Cpu, tid: Tid) -> bool {
        self.enqueue_task(now, cpu, tid, 0, 0)
    }

    /// [`Engine::enqueue`], recording the platform's `handle` for a boosted `tid` (0: none);
    /// `curr` runs on `cpu` (0: unknown).
    #[inline]
    pub(crate) fn enqueue_task(
        &mut self,
        now: Nanos,
        cpu: Cpu,
        tid: Tid,
        handle: u64,
        curr: Tid,
    ) -> bool {
        // The filter turns away almost every task; `FastTrack::enqueue` looks up the rest.
        let matters = self.ft.may_be_boosted(tid)
            || (self.critical_filter.may_contain(tid) && self.woken_unseen(now, tid));
        if !matters {
            return false;
        }
        if handle != 0 {
            self.ft.set_handle(tid, handle, None);
        }
        self.enqueue_slow(now, cpu, tid, curr)
    }

    #[inline(never)]
    pub(super) fn enqueue_slow(&mut self, now: Nanos, cpu: Cpu, tid: Tid, curr: Tid) -> bool {
        if !self.wakes.is_empty() {
            self.settle_wakes(now, |w| w.woken == tid);
        }
        let protected = curr != 0 && self.is_critical(curr);
        self.ft.enqueue(now, cpu, tid, protected, cx!(self))
    }

    /// `tid` left CPU `cpu`'s runqueue.
    #[inline]
    pub fn dequeue(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {
        // As in `enqueue`: `FastTrack::dequeue` looks up what the filter lets through.
        if self.ft.may_be_boosted(tid) {
            self.dequeue_slow(now, cpu, tid);
        }
        if self.critical_filter.may_contain(tid) {
            // A critical thread that sleeps (or leaves the CPU) is back from its last wait.
            self.critical.take_wait_done(tid);
        }
    }

    #[inline(never)]
    pub(super) fn dequeue_slow(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {
        self.ft.dequeue(now, cpu, tid, cx!(self));
        // A turn ends when its critical thread sleeps (or leaves the CPU), unless a release
        // woke it out of a wait it still retries: its sleep then comes as `WaiterSlept`.
        if !self.detector.wait_of(tid).is_some_and(|w| w.woken) {
            self.ft
                .end_turn(now, tid, RevokeReason::WaiterDone, cx!(self));
        }
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
    pub(super) fn pick_busy(&mut self, now: Nanos, cpu: Cpu, fair_next: Tid) -> Option<Tid> {
        // Only asked when the CPU could take the fast track, so the common pick stays cheap.
        let (filter, critical) = (&self.critical_filter, &self.critical);
        let protected = || filter.may_contain(fair_next) && critical.contains(fair_next);
        self.ft
            .pick_busy(now, cpu as usize, fair_next, protected, cx!(self))
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
    /// boosted task, the CPU its critical thread's wait started on (the wait events' `cpu`), else
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
    /// it goes to first when it wakes: each wait-start event carries it. Nothing happens unless
    /// `waiter` is critical.
    #[inline]
    pub(crate) fn wait_cpu(&mut self, waiter: Tid, cpu: Cpu) {
        self.critical.set_cpu(waiter, cpu);
    }

    /// The uclamp.min task `tid` should have now, if SuperPass raises it: `boost_uclamp_min`
    /// while it is boosted (none when that is 0); the answer to
    /// [`Event::UclampEff`](super::super::Event::UclampEff), which a platform with uclamp sends
    /// whenever the kernel computes the task's effective clamp.
    #[inline]
    pub(crate) fn uclamp_min(&mut self, tid: Tid) -> Option<u32> {
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
    pub(crate) fn misfit(&mut self, tid: Tid, cpu: Cpu) -> bool {
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
    pub(crate) fn may_migrate(&mut self, tid: Tid, src: Cpu, dst: Cpu, running: bool) -> bool {
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
    /// load balancing would move misfit task `tid` to: the answers to
    /// [`Event::UpdateMisfit`](super::super::Event::UpdateMisfit) and
    /// [`Event::CanMigrate`](super::super::Event::CanMigrate) together, for a platform that
    /// balances in one step; `running` as for the latter.
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

    /// Where boosted task `tid`, on CPU `cpu` (running there if `running`, else queued),
    /// should be moved right now, if anywhere (`FastTrack::push_target`): `idle` is the idle
    /// CPUs it may use, `others` the fair tasks running on the other CPUs it may use. A
    /// running one may displace a task of static priority `push_min_prio` or lower that is
    /// neither critical nor boosted; a running blocker is kept off the CPUs the critical
    /// threads' waits started on, as load balancing keeps it (`may_migrate`).
    #[expect(clippy::too_many_arguments, reason = "Event::Push's fields")]
    pub(crate) fn push_target(
        &mut self,
        now: Nanos,
        tid: Tid,
        handle: u64,
        cpu: Cpu,
        running: bool,
        idle: u64,
        others: &[Running],
    ) -> Option<Cpu> {
        if !self.enabled || !self.ft.misfit(tid, cpu) {
            return None;
        }
        let min = self.tun.push_min_prio;
        let displaceable = others
            .iter()
            .filter(|r| r.cpu < 64 && r.prio >= min)
            .filter(|r| !self.is_critical(r.tid) && !self.ft.is_boosted(r.tid))
            .fold(0u64, |m, r| m | 1 << r.cpu);
        let keep_off = if running {
            self.critical_wait_cpus()
        } else {
            0
        };
        let to = self
            .ft
            .push_target(tid, cpu, idle, displaceable, keep_off)?;
        let p = Pushed {
            tid,
            handle,
            from: cpu,
            to,
            at: now,
        };
        if !self.pushes.record(p, self.tun.throttle_window_ns) {
            return None;
        }
        self.stats.bump(Counter::Pushes);
        Some(to)
    }

    /// A pushed task whose boost has ended, to be sent back to the CPU it was pushed from
    /// (`pushes.rs`); `None` when there is none. The platform asks after each call that may
    /// end a boost, until `None` ([`Event::PushBack`](super::super::Event::PushBack)).
    #[inline]
    pub(crate) fn take_push_back(&mut self, now: Nanos) -> Option<Pushed> {
        if self.pushes.is_empty() {
            return None;
        }
        let ft = &self.ft;
        let p = self
            .pushes
            .take_ended(now, self.tun.throttle_window_ns, |t| ft.is_boosted(t))?;
        self.stats.bump(Counter::PushBacks);
        Some(p)
    }

    /// The CPUs the critical threads' live lock waits started on (the wait events' `cpu`): one
    /// pass over the live waits, made only when a misfit blocker may move.
    pub(super) fn critical_wait_cpus(&self) -> u64 {
        (0..self.detector.wait_end())
            .filter_map(|j| self.detector.wait_at(j))
            .filter(|w| w.depth == 0)
            .filter_map(|w| self.critical.cpu(w.waiter))
            .filter(|&c| c < 64)
            .fold(0, |m, c| m | 1 << c)
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
    pub(super) fn tick_busy(&mut self, now: Nanos, cpu: Cpu, curr: Tid) -> bool {
        let (filter, critical) = (&self.critical_filter, &self.critical);
        let protected = || filter.may_contain(curr) && critical.contains(curr);
        self.ft
            .tick_busy(now, cpu as usize, curr, protected, cx!(self))
    }

    /// Whether a budget-revoked task's window has passed at `now` ([`Engine::regrant`] is due):
    /// one compare, made at every tick.
    #[inline(always)]
    pub(crate) fn regrant_due(&self, now: Nanos) -> bool {
        self.ft.regrant_due(now)
    }

    /// Grants again each budget-revoked task whose window has passed, if it still holds a lock
    /// (as its owner or a tracked reader) that a tracked wait is on; for a woken critical waiter
    /// whose wake turn ran out, grants the holders of the lock it still waits for, as if it
    /// had slept again: among them `owner`, read from `lock` just now, if the waiter is `curr`
    /// (the task the tick or pick charged) and its record names that lock. Returns the tasks
    /// this boosted.
    #[cold]
    #[inline(never)]
    pub(crate) fn regrant(&mut self, now: Nanos, curr: Tid, lock: LockId, owner: Tid) -> Boosted {
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
                    let (lock, owner) = if tid == curr { (lock, owner) } else { (0, 0) };
                    self.resume_wait(now, w, lock, owner, &mut one);
                    if one.as_slice().is_empty() {
                        // No holder to grant: the lock may have changed hands unseen. The
                        // waiter's sleep stays reported, with the owner the lock names then.
                        self.detector.set_woken(tid, w.lock);
                    } else {
                        self.stats.bump(Counter::ResumedWaits);
                    }
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

    /// When CPU `cpu` should next be asked to pick, if a boosted task runs there (see
    /// [`FastTrack::deadline`]); a platform arms a timer for it after each pick.
    pub fn deadline(&self, cpu: Cpu) -> Option<Nanos> {
        self.ft.deadline(cpu, &self.tun)
    }
}
