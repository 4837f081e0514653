//! A counting filter that answers "could this thread matter to SuperPass?" in a few instructions.
//!
//! Every lock wait and every enqueue in the system passes through a hook, and almost none of them
//! involve a critical or fast-tracked thread. The filter lets those return after one load and one
//! compare; only a hit pays for a real lookup.

use super::Tid;

/// Slots in the filter: with at most ~100 members the false-positive rate stays under 10%.
const SLOTS: usize = 1024;

/// A counting filter over thread ids.
///
/// # Invariants
///
/// `counts[slot(t)]` is at least the number of live memberships of every `t` hashing there, so a
/// zero count proves absence.
#[derive(Clone, Debug)]
pub struct TidFilter {
    counts: [u8; SLOTS],
}

impl Default for TidFilter {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
const fn slot(tid: Tid) -> usize {
    // TIDs are allocated sequentially, so the low bits already spread well.
    (tid as u32 as usize) & (SLOTS - 1)
}

impl TidFilter {
    /// An empty filter.
    pub const fn new() -> Self {
        Self { counts: [0; SLOTS] }
    }

    /// False means `tid` is certainly not a member; true means it may be.
    #[inline(always)]
    pub fn may_contain(&self, tid: Tid) -> bool {
        self.counts[slot(tid)] != 0
    }

    /// Adds one membership of `tid`.
    pub fn insert(&mut self, tid: Tid) {
        let c = &mut self.counts[slot(tid)];
        // Members are bounded (critical set + boosted table) far below 255, so this never
        // saturates; saturating keeps the "zero proves absence" invariant even if it did.
        *c = c.saturating_add(1);
    }

    /// Removes one membership of `tid` (which must have been inserted).
    pub fn remove(&mut self, tid: Tid) {
        let c = &mut self.counts[slot(tid)];
        if *c != u8::MAX {
            *c = c.saturating_sub(1);
        }
    }

    /// Forgets every member.
    pub fn clear(&mut self) {
        self.counts = [0; SLOTS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_memberships() {
        let mut f = TidFilter::new();
        assert!(!f.may_contain(5));
        f.insert(5);
        f.insert(5 + SLOTS as Tid);
        assert!(f.may_contain(5));
        f.remove(5);
        assert!(f.may_contain(5), "collision keeps the slot live");
        f.remove(5 + SLOTS as Tid);
        assert!(!f.may_contain(5));
    }
}
