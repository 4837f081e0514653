//! Where a waking boosted task runs: the CPU its critical thread just left, else the idle CPU
//! of the highest capacity.
//!
//! A blocker holds up a critical thread, so it should run where it finishes soonest. The CPU
//! the critical thread was on when it started waiting comes first: the waiter sleeps there, so
//! it is usually idle, the platform runs critical threads on its big cores, and on a phone
//! that core is warm (its frequency raised by the critical thread's own load, its caches
//! holding the lock's data). Otherwise the idle allowed CPUs of the highest capacity, as EAS
//! would place a task that does not fit a small core (kernel/sched/fair.c, `select_idle_capacity`);
//! among equals the task's previous CPU, for its cache.

use super::super::observer::Observer;
use super::super::stats::Counter;
use super::super::{Cpu, Tid, MAX_CPUS};
use super::{Cx, FastTrack};

impl FastTrack {
    /// Takes each CPU's capacity (`capacity[cpu]`, in any unit; CPUs past the slice have none)
    /// and names the fast CPUs, those of the highest capacity; all equal means every CPU is
    /// fast.
    pub fn set_capacities(&mut self, capacity: &[u32]) {
        self.capacity = [0; MAX_CPUS];
        for (c, &v) in self.capacity.iter_mut().zip(capacity) {
            *c = v;
        }
        let cpus = self.capacity.iter().copied().take(self.nr_cpus);
        let top = cpus.clone().max().unwrap_or(0);
        let mask = cpus
            .enumerate()
            .filter(|&(_, v)| v == top)
            .fold(0u64, |m, (c, _)| m | 1 << c);
        self.set_fast_cpus(mask);
    }

    /// Where waking boosted task `tid` should run, if SuperPass has an opinion: `home` (the CPU
    /// its critical thread's wait started on) if idle, else an idle fast CPU, else an idle CPU
    /// of the highest capacity; among several, `prev_cpu` if it is one, else the lowest.
    pub fn select_cpu<O: Observer>(
        &mut self,
        tid: Tid,
        prev_cpu: Cpu,
        home: Option<Cpu>,
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
        let idle = idle_mask & allowed_mask & valid;
        if idle == 0 {
            return None;
        }
        cx.st.bump(Counter::SelectIdle);
        if let Some(h) = home.filter(|&h| h < 64 && idle & (1 << h) != 0) {
            cx.st.bump(Counter::SelectHome);
            return Some(h);
        }
        let fast = idle & self.fast_mask;
        let cand = if fast != 0 {
            fast
        } else {
            self.highest_capacity(idle)
        };
        Some(if (prev_cpu as usize) < 64 && cand & (1 << prev_cpu) != 0 {
            prev_cpu
        } else {
            cand.trailing_zeros()
        })
    }

    /// The CPUs of `mask` (non-empty, all below 64) with the highest capacity.
    pub(super) fn highest_capacity(&self, mask: u64) -> u64 {
        let mut best = 0u64;
        let mut top = 0u32;
        let mut m = mask;
        while m != 0 {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            // `c < 64 == MAX_CPUS`: never the fallback.
            let cap = self.capacity.get(c).copied().unwrap_or(0);
            if best == 0 || cap > top {
                best = 1 << c;
                top = cap;
            } else if cap == top {
                best |= 1 << c;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::super::{with_cx, Link};
    use super::*;

    /// Eight CPUs: four little (capacity 160), three mid (500), one big (1024); task 7 boosted.
    fn phone() -> FastTrack {
        let mut ft = FastTrack::new(8);
        ft.set_capacities(&[160, 160, 160, 160, 500, 500, 500, 1024]);
        let link = Link {
            blocker: 7,
            via: 1,
            root: 1,
            lock: 9,
            depth: 1,
        };
        with_cx(|cx| ft.grant(0, link, cx));
        ft
    }

    fn select(ft: &mut FastTrack, prev: Cpu, home: Option<Cpu>, idle: u64) -> Option<Cpu> {
        with_cx(|cx| ft.select_cpu(7, prev, home, idle, 0xff, cx))
    }

    #[test]
    fn the_waiters_cpu_then_the_biggest_idle_core() {
        let mut ft = phone();
        assert_eq!(ft.fast_cpus(), 1 << 7);
        assert_eq!(
            select(&mut ft, 0, Some(5), 0b1010_0001),
            Some(5),
            "the waiter's CPU"
        );
        assert_eq!(
            select(&mut ft, 0, Some(6), 0b1010_0001),
            Some(7),
            "else the big core"
        );
        assert_eq!(
            select(&mut ft, 0, None, 0b0011_0001),
            Some(4),
            "else a mid core"
        );
        assert_eq!(
            select(&mut ft, 5, None, 0b0011_0001),
            Some(5),
            "its own if as big"
        );
        assert_eq!(
            select(&mut ft, 0, None, 0b0000_0110),
            Some(1),
            "else a little one"
        );
        assert_eq!(select(&mut ft, 0, Some(3), 0), None, "nothing idle");
        let not_boosted = with_cx(|cx| ft.select_cpu(8, 0, None, 0xff, 0xff, cx));
        assert_eq!(not_boosted, None, "not boosted");
    }

    #[test]
    fn without_capacities_every_cpu_is_alike() {
        let mut ft = phone();
        ft.set_capacities(&[]);
        assert_eq!(ft.fast_cpus(), 0xff);
        assert_eq!(select(&mut ft, 2, None, 0b0000_0110), Some(2));
        assert_eq!(select(&mut ft, 0, None, 0b0000_0110), Some(1));
    }
}
