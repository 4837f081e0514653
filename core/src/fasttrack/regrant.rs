//! Budgets per window: a task whose grants ended on its budget may be granted again a throttle
//! window later, if it still holds a lock a tracked wait is on.
//!
//! Revoking a blocker for good when it spends `budget_ns` bounds what one blocker takes, but
//! leaves the critical thread behind it to the stock scheduler for as long as the blocker keeps
//! the lock: measured on the real kernel (sp-chain, sp-owner-change, sp-reader-storm), every
//! budget revoke was followed by a critical wait of 0.1 to 1.7 s. So the budget is per
//! `throttle_window_ns`, like the CPU's own share: the fast track remembers up to
//! [`MAX_COOLING`] revoked tasks, and the engine grants each again once its window has passed.

use super::super::{Nanos, Tid};
use super::FastTrack;

/// How many budget-revoked tasks wait for their next window at once; a further revoke takes the
/// place of the one due soonest (which is then never granted again by this path).
pub const MAX_COOLING: usize = 4;

/// A budget-revoked task and when it may be granted again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cooling {
    pub(crate) tid: Tid,
    pub(crate) until: Nanos,
}

impl FastTrack {
    /// Remembers that `tid`'s grants ended on its budget at `now`.
    #[cold]
    pub(crate) fn cool(&mut self, now: Nanos, tid: Tid) {
        self.cool_until(now.saturating_add(self.window_ns), tid);
    }

    /// Remembers `tid` for the engine's next [`regrant`](super::super::Engine::regrant) at or
    /// after `until`.
    #[cold]
    pub(crate) fn cool_until(&mut self, until: Nanos, tid: Tid) {
        let slot = match self.cooling.iter().position(|c| c.is_none()) {
            Some(i) => i,
            None => {
                let mut soonest = 0;
                for (i, c) in self.cooling.iter().enumerate() {
                    let s = self.cooling.get(soonest).copied().flatten();
                    if c.is_some_and(|c| Some(c.until) < s.map(|s| s.until)) {
                        soonest = i;
                    }
                }
                soonest
            }
        };
        if let Some(c) = self.cooling.get_mut(slot) {
            *c = Some(Cooling { tid, until });
        }
        self.next_regrant = self.next_regrant.min(until);
    }

    /// Whether a budget-revoked task's window has passed at `now`: one compare, for the tick.
    #[inline(always)]
    pub fn regrant_due(&self, now: Nanos) -> bool {
        now >= self.next_regrant
    }

    /// True if budget-revoked tasks wait for their next window (the tick must reach the engine).
    #[inline]
    pub fn cooling(&self) -> bool {
        self.next_regrant != Nanos::MAX
    }

    /// Takes the tasks whose window has passed at `now` into `out`; returns how many.
    #[cold]
    pub(crate) fn take_due(&mut self, now: Nanos, out: &mut [Tid; MAX_COOLING]) -> usize {
        let mut n = 0;
        let mut next = Nanos::MAX;
        for c in self.cooling.iter_mut() {
            match *c {
                Some(x) if x.until <= now => {
                    // `out` is as long as the table, so it has room.
                    if let Some(o) = out.get_mut(n) {
                        *o = x.tid;
                    }
                    n += 1;
                    *c = None;
                }
                Some(x) => next = next.min(x.until),
                None => {}
            }
        }
        self.next_regrant = next;
        n
    }

    /// Forgets every budget-revoked task (SuperPass switched off, tunables replaced).
    pub(crate) fn clear_cooling(&mut self) {
        self.cooling = [None; MAX_COOLING];
        self.next_regrant = Nanos::MAX;
    }
}
