//! Misfit blockers: a boosted task on a CPU slower than the fastest should move to a faster
//! idle CPU rather than be held on its slow one.
//!
//! The arbiter gives a boosted task its CPU first, which also keeps it there: a waking task that
//! would have preempted it (after which an idle faster CPU could pull it) no longer does. A
//! blocker that was running on a little core when the critical thread started waiting would run
//! its whole critical section at that core's speed while a big core sat idle. [`select_cpu`]
//! already sends a *waking* boosted task to an idle fast CPU; this is the same decision for one
//! that is already running or queued. The platform applies it the way the kernel moves a task
//! that does not fit its CPU (EAS's misfit migration): `update_misfit_status` marks it
//! (`android_rvh_update_misfit_status`), and an idle CPU of higher capacity pulls it at its next
//! balance, by active balance if it is running (kernel/sched/fair.c, `group_misfit_task`,
//! `need_active_balance`). Load balancing asks `can_migrate_task` before every move
//! (`android_rvh_can_migrate_task`), which keeps a running misfit blocker off the CPUs the
//! critical threads wait on.
//!
//! [`select_cpu`]: FastTrack::select_cpu

use super::super::{Cpu, Tid};
use super::FastTrack;

impl FastTrack {
    /// Whether task `tid`, on CPU `cpu`, is a boosted task that should move to a faster CPU:
    /// it holds the fast track as a blocker and `cpu` is not one of the fast CPUs
    /// ([`FastTrack::set_fast_cpus`]). Never true when no fast CPUs were named (every CPU is
    /// then fast), for a CPU the fast track does not cover, or for a critical thread's own
    /// turn: it is placed when it wakes (`select_cpu`), and moving it while it runs would cost
    /// a migration in the middle of its own work.
    #[inline]
    pub fn misfit(&self, tid: Tid, cpu: Cpu) -> bool {
        (cpu as usize) < self.nr_cpus
            && (cpu as usize) < 64
            && self.fast_mask & (1 << cpu) == 0
            && self.chain_of(tid).is_some_and(|(depth, _)| depth > 0)
    }

    /// Whether load balancing may take task `tid`, running, off CPU `src` and move it to CPU
    /// `dst`: not if `tid` is [`misfit`](Self::misfit) on `src` and `dst` is one of `keep_off`,
    /// the CPUs the critical threads' live lock waits started on (the platform's
    /// `Engine::wait_cpu` reports). A queued blocker cannot run where it is, so the platform
    /// lets it go anywhere (an idle CPU a critical thread waits on included).
    ///
    /// A critical thread waiting for this blocker has just left that CPU idle; it resumes there
    /// the moment the blocker releases, while the blocker keeps the CPU it was moved to for the
    /// rest of its work, so taking it moves the cost from the wait to the critical thread's own
    /// run. Measured in the simulator (AOSP placement, 30 s x 10 seeds): with every idle
    /// faster CPU allowed, janky frames rose 11% on scroll-120; with these CPUs kept off they
    /// did not rise beyond noise, and the p99.9 wait was cut nearly as much (-50% against -55%).
    /// Keeping the fast CPUs off as well (an earlier rule) cut it by only -39%. Keeping a
    /// *queued* blocker off them too stranded it behind a critical thread or an RT task on a
    /// little core while the waiter's CPU sat idle (paper-scroll-120: p99.9 +11% instead of
    /// -40% at 30 s x 20 seeds).
    #[inline]
    pub fn may_migrate(&self, tid: Tid, src: Cpu, dst: Cpu, keep_off: u64) -> bool {
        !(dst < 64 && keep_off & (1 << dst) != 0 && self.misfit(tid, src))
    }

    /// Of `faster` (the idle CPUs of higher capacity than `cpu` that `tid` may run on; the
    /// platform knows capacities and idleness), those that should pull misfit task `tid`: all
    /// but `keep_off` (see [`may_migrate`](Self::may_migrate)); none if `tid` is not
    /// [`misfit`](Self::misfit) on `cpu`.
    #[inline]
    pub fn misfit_targets(&self, tid: Tid, cpu: Cpu, faster: u64, keep_off: u64) -> u64 {
        if !self.misfit(tid, cpu) {
            return 0;
        }
        let valid = if self.nr_cpus >= 64 {
            u64::MAX
        } else {
            (1u64 << self.nr_cpus) - 1
        };
        faster & valid & !keep_off
    }

    /// Where misfit task `tid`, on CPU `cpu`, should be pushed now, if anywhere: of `idle`
    /// (idle CPUs it may use) the fastest, else of `displaceable` (CPUs it may use whose
    /// running task may give way to it) the fastest; only CPUs of higher capacity than `cpu`,
    /// and never one of `keep_off`, one that already has fast-track work (boosted tasks take
    /// turns there, and a second one would wait) or one throttled; among equals the lowest.
    ///
    /// A blocker granted while it runs on a little core runs its whole critical section at
    /// that core's speed: misfit marking moves it only at the next balance, and only to an
    /// idle CPU. The simulator measured what the rest costs (rwsem-storm, AOSP placement):
    /// 57% of the worst waits' time was a helped reader running on a little core while a
    /// faster CPU it may use ran another fair task.
    pub fn push_target(
        &self,
        tid: Tid,
        cpu: Cpu,
        idle: u64,
        displaceable: u64,
        keep_off: u64,
    ) -> Option<Cpu> {
        if !self.misfit(tid, cpu) {
            return None;
        }
        let here = self.capacity.get(cpu as usize).copied().unwrap_or(0);
        let faster = self
            .capacity
            .iter()
            .take(self.nr_cpus.min(64))
            .enumerate()
            .filter(|&(c, &cap)| cap > here && !self.throttled(c as Cpu))
            .fold(0u64, |m, (c, _)| m | 1 << c);
        let open = faster & !keep_off & !self.work_cpus();
        [idle, displaceable]
            .into_iter()
            .map(|m| m & open)
            .find(|&m| m != 0)
            .map(|m| self.highest_capacity(m).trailing_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::observer::RevokeReason;
    use super::super::{with_cx, Link};
    use super::*;

    fn boosted(ft: &mut FastTrack, tid: Tid) {
        let l = Link {
            blocker: tid,
            via: 1,
            root: 1,
            lock: 0x10,
            depth: 1,
        };
        with_cx(|cx| ft.grant(0, l, cx));
    }

    #[test]
    fn a_boosted_task_off_the_fast_cpus_is_misfit() {
        let mut ft = FastTrack::new(9);
        ft.set_fast_cpus(1 << 8);
        boosted(&mut ft, 5);
        assert!(ft.misfit(5, 0), "boosted, on a little core");
        assert!(!ft.misfit(5, 8), "already on the fast CPU");
        assert!(!ft.misfit(6, 0), "not boosted");
        assert!(!ft.misfit(5, 9), "beyond nr_cpus");
        with_cx(|cx| ft.revoke(1, RevokeReason::Released, |g| g.blocker == 5, cx));
        assert!(!ft.misfit(5, 0), "the grant ended");
    }

    #[test]
    fn without_named_fast_cpus_nothing_is_misfit() {
        let mut ft = FastTrack::new(4);
        boosted(&mut ft, 5);
        assert!((0..4).all(|c| !ft.misfit(5, c)));
        assert_eq!(ft.misfit_targets(5, 0, 0b1110, 0), 0);
    }

    #[test]
    fn a_misfit_task_is_pulled_to_faster_cpus_but_not_the_critical_threads_ones() {
        let mut ft = FastTrack::new(9);
        ft.set_fast_cpus(1 << 8);
        boosted(&mut ft, 5);
        let mids_and_big = 0b1_1111_0000;
        assert_eq!(ft.misfit_targets(5, 0, mids_and_big, 0), mids_and_big);
        assert_eq!(
            ft.misfit_targets(5, 0, mids_and_big, 1 << 5 | 1 << 8),
            0b0_1101_0000,
            "the critical threads' CPUs"
        );
        assert_eq!(
            ft.misfit_targets(5, 0, 1 << 8, 1 << 8),
            0,
            "only a critical thread's CPU is idle"
        );
        assert_eq!(ft.misfit_targets(6, 0, mids_and_big, 0), 0, "not boosted");
        assert_eq!(ft.misfit_targets(5, 8, 0, 0), 0, "already fast");
        assert_eq!(
            ft.misfit_targets(5, 0, 1 << 9 | 1 << 4, 0),
            1 << 4,
            "beyond nr_cpus"
        );
    }

    #[test]
    fn load_balancing_keeps_a_misfit_task_off_the_critical_threads_cpus() {
        let mut ft = FastTrack::new(9);
        ft.set_fast_cpus(1 << 8);
        boosted(&mut ft, 5);
        let keep_off = 1 << 8 | 1 << 4;
        assert!(
            !ft.may_migrate(5, 0, 8, keep_off),
            "misfit, to a critical CPU"
        );
        assert!(ft.may_migrate(5, 0, 7, keep_off), "misfit, elsewhere");
        assert!(
            ft.may_migrate(5, 8, 4, keep_off),
            "not misfit on a fast CPU"
        );
        assert!(ft.may_migrate(6, 0, 8, keep_off), "not boosted");
        assert!(ft.may_migrate(5, 0, 70, u64::MAX), "beyond the mask");
    }

    /// Four little CPUs (160), three mid (500), one big (1024); task 5 boosted.
    fn phone() -> FastTrack {
        let mut ft = FastTrack::new(8);
        ft.set_capacities(&[160, 160, 160, 160, 500, 500, 500, 1024]);
        boosted(&mut ft, 5);
        ft
    }

    #[test]
    fn a_misfit_blocker_is_pushed_to_the_fastest_idle_cpu_then_the_fastest_displaceable_one() {
        let ft = phone();
        let mids = 0b0111_0000;
        assert_eq!(ft.push_target(5, 0, mids, 1 << 7, 0), Some(4), "idle first");
        assert_eq!(
            ft.push_target(5, 0, 0, mids | 1 << 7, 0),
            Some(7),
            "the big core"
        );
        assert_eq!(
            ft.push_target(5, 0, 0b0000_0110, mids, 0),
            Some(4),
            "an idle little core is no faster"
        );
        assert_eq!(ft.push_target(5, 4, 0, mids, 0), None, "only faster ones");
        assert_eq!(ft.push_target(5, 4, 0, 1 << 7, 0), Some(7), "mid to big");
        assert_eq!(ft.push_target(5, 7, 0xff, 0xff, 0), None, "already fastest");
        assert_eq!(ft.push_target(6, 0, mids, mids, 0), None, "not boosted");
        assert_eq!(
            ft.push_target(5, 0, 1 << 7, mids, 1 << 7),
            Some(4),
            "never a critical thread's wait CPU"
        );
        assert_eq!(ft.push_target(5, 0, 1 << 8, 0, 0), None, "beyond nr_cpus");
    }

    #[test]
    fn a_push_avoids_cpus_with_fast_track_work() {
        let mut ft = phone();
        boosted(&mut ft, 6);
        with_cx(|cx| ft.enqueue(0, 7, 6, false, cx));
        assert_eq!(ft.push_target(5, 0, 0, 1 << 7 | 1 << 5, 0), Some(5));
    }
}
