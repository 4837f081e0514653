//! The invariants every engine state keeps, checked by tests and fuzzing.

use super::*;

impl<O: Observer> Engine<O> {
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
            if g.depth == 0 && g.blocker == g.root && g.via == g.root {
                // A turn outlives its wait until its critical thread sleeps or its slice ends.
                continue;
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
