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
/// zero count proves absence. `lane_slots[l]` is the number of non-zero `counts[s]` among the
/// slots `s` of lane `l` (`s % 64 == l`), and bit `l` of `lanes` is set iff it is non-zero.
#[derive(Clone, Debug)]
pub struct TidFilter {
    counts: [u8; SLOTS],
    lane_slots: [u8; 64],
    lanes: u64,
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
        Self {
            counts: [0; SLOTS],
            lane_slots: [0; 64],
            lanes: 0,
        }
    }

    /// A 64-bit summary a platform can publish for lock-free readers: bit `tid % 64` clear
    /// proves `tid` is not a member (see [`lanes_may_contain`]).
    #[inline(always)]
    pub const fn lanes(&self) -> u64 {
        self.lanes
    }

    /// False means `tid` is certainly not a member; true means it may be.
    #[inline(always)]
    pub fn may_contain(&self, tid: Tid) -> bool {
        self.counts[slot(tid)] != 0
    }

    /// Adds one membership of `tid`.
    pub fn insert(&mut self, tid: Tid) {
        let s = slot(tid);
        let c = &mut self.counts[s];
        // The lane changes only when a slot becomes live: one test on the common path.
        if *c == 0 {
            *c = 1;
            self.lane_slots[s % 64] += 1;
            self.lanes |= 1 << (s % 64);
        } else {
            // Members are bounded (critical set + boosted table) far below 255, so this never
            // saturates; saturating keeps the "zero proves absence" invariant even if it did.
            *c = c.saturating_add(1);
        }
    }

    /// Removes one membership of `tid` (which must have been inserted).
    pub fn remove(&mut self, tid: Tid) {
        let s = slot(tid);
        let c = &mut self.counts[s];
        if *c != u8::MAX && *c != 0 {
            *c -= 1;
            if *c == 0 {
                let l = &mut self.lane_slots[s % 64];
                *l -= 1;
                if *l == 0 {
                    self.lanes &= !(1 << (s % 64));
                }
            }
        }
    }

    /// Forgets every member.
    pub fn clear(&mut self) {
        self.counts = [0; SLOTS];
        self.lane_slots = [0; 64];
        self.lanes = 0;
    }
}

/// Whether `tid` may be a member of a filter whose [`TidFilter::lanes`] are `lanes`.
#[inline(always)]
pub const fn lanes_may_contain(lanes: u64, tid: Tid) -> bool {
    lanes & (1 << (tid as u32 % 64)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_summarise_memberships() {
        let mut f = TidFilter::new();
        assert_eq!(f.lanes(), 0);
        f.insert(70);
        f.insert(70 + 64);
        assert!(lanes_may_contain(f.lanes(), 6));
        assert!(!lanes_may_contain(f.lanes(), 7));
        f.remove(70);
        assert!(
            lanes_may_contain(f.lanes(), 70),
            "another member shares the lane"
        );
        f.remove(70 + 64);
        assert_eq!(f.lanes(), 0);
        f.insert(3);
        f.clear();
        assert_eq!(f.lanes(), 0);
    }

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
