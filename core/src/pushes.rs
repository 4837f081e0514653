//! Boosted tasks pushed to a faster CPU, until they go back.
//!
//! A push (`fasttrack/misfit.rs`, `push_target`) gives a blocker a faster CPU for as long as
//! it holds up a critical thread. Once its boost ends it has no claim on that CPU, yet nothing
//! would move it back: a background task that keeps running stays on the CPU it was pushed
//! to, one the critical threads prefer, until it next sleeps. So the platform asks after each
//! call into the engine ([`Event::PushBack`](super::Event::PushBack)) and sends a task whose
//! boost has ended back where it came from. Measured in the simulator (AOSP
//! placement, 30 s x 20 seeds): with pushes that never went back, scroll-120's janky frames
//! rose 5.7% [1.2, 10.3] against the stock scheduler, and 6.3% [2.2, 10.9] when sent back
//! only at the next tick on its CPU (up to 4 ms later); sent back the moment the boost ended,
//! 2.2% [-1.9, 6.7], as without pushes (1.6% [-2.4, 5.6]).

use super::{Cpu, Nanos, Tid};

/// How many pushed tasks may be away from their CPU at once; a push beyond them is not made.
pub const MAX_PUSHED: usize = 8;

/// One pushed task, away from the CPU it was pushed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pushed {
    /// The task.
    pub tid: Tid,
    /// The platform's handle for it, as the push named it.
    pub handle: u64,
    /// Where it was pushed from: where it goes back.
    pub from: Cpu,
    /// Where it was pushed to: where it should still be.
    pub to: Cpu,
    /// When.
    pub at: Nanos,
}

/// The tasks pushed and not yet back.
///
/// # Invariants
///
/// At most one entry per task.
#[derive(Clone, Debug)]
pub struct Pushes {
    slots: [Option<Pushed>; MAX_PUSHED],
}

impl Default for Pushes {
    fn default() -> Self {
        Self::new()
    }
}

impl Pushes {
    /// No task pushed.
    pub const fn new() -> Self {
        Self {
            slots: [None; MAX_PUSHED],
        }
    }

    /// True if no pushed task is away.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// Forgets every push.
    pub fn clear(&mut self) {
        self.slots = [None; MAX_PUSHED];
    }

    /// Records push `p`; false, and nothing recorded, if the table is full of entries younger
    /// than `expiry` ns (the push is then not made). An older entry of the same task is
    /// replaced.
    pub fn record(&mut self, p: Pushed, expiry: Nanos) -> bool {
        self.expire(p.at, expiry);
        let same = |s: &Option<Pushed>| s.is_some_and(|q| q.tid == p.tid);
        let slot = match self.slots.iter().position(same) {
            Some(i) => self.slots.get_mut(i),
            None => self.slots.iter_mut().find(|s| s.is_none()),
        };
        match slot {
            Some(s) => {
                *s = Some(p);
                true
            }
            None => false,
        }
    }

    /// Takes out the first pushed task whose boost has ended (`boosted` says which are still
    /// boosted): it goes back now. Entries older than `expiry` ns are dropped unasked: their
    /// task has slept or moved since, or keeps a boost far longer than a frame.
    pub fn take_ended(
        &mut self,
        now: Nanos,
        expiry: Nanos,
        boosted: impl Fn(Tid) -> bool,
    ) -> Option<Pushed> {
        self.expire(now, expiry);
        self.slots
            .iter_mut()
            .find(|s| s.is_some_and(|p| !boosted(p.tid)))?
            .take()
    }

    /// Drops the entry holding `handle`: the platform is about to free what it names.
    pub fn forget_handle(&mut self, handle: u64) {
        for s in &mut self.slots {
            if s.is_some_and(|p| p.handle == handle) {
                *s = None;
            }
        }
    }

    fn expire(&mut self, now: Nanos, expiry: Nanos) {
        for s in &mut self.slots {
            if s.is_some_and(|p| now.saturating_sub(p.at) > expiry) {
                *s = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn push(tid: Tid, at: Nanos) -> Pushed {
        Pushed {
            tid,
            handle: 0x1000 + tid as u64,
            from: 1,
            to: 4,
            at,
        }
    }

    #[test]
    fn a_pushed_task_goes_back_once_its_boost_ends() {
        let mut p = Pushes::new();
        assert!(p.record(push(7, 0), 100 * MS));
        assert!(p.record(push(8, 0), 100 * MS));
        assert_eq!(p.take_ended(MS, 100 * MS, |_| true), None, "both boosted");
        let back = p.take_ended(MS, 100 * MS, |t| t == 7);
        assert_eq!(back.map(|b| (b.tid, b.from, b.to)), Some((8, 1, 4)));
        assert_eq!(p.take_ended(MS, 100 * MS, |t| t == 7), None, "once");
        p.forget_handle(0x1000 + 7);
        assert!(p.is_empty(), "a freed task's entry goes");
    }

    #[test]
    fn the_table_is_bounded_and_expires() {
        let mut p = Pushes::new();
        for t in 0..MAX_PUSHED as Tid {
            assert!(p.record(push(100 + t, 0), 100 * MS));
        }
        assert!(!p.record(push(200, MS), 100 * MS), "full");
        assert!(p.record(push(100, MS), 100 * MS), "the same task again");
        assert!(
            p.record(push(200, 101 * MS), 100 * MS),
            "the old ones expired"
        );
        assert_eq!(
            p.take_ended(250 * MS, 100 * MS, |_| false),
            None,
            "all expired"
        );
    }
}
