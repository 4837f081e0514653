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
/// `LANES` says whether it also keeps a 64-bit lane summary (see [`TidFilter::lanes`]). A
/// filter whose owner can derive the summary from its own table more cheaply leaves it off and
/// saves the upkeep on every insert and remove.
///
/// # Invariants
///
/// `counts[slot(t)]` is the number of live memberships of every `t` hashing there, so a zero
/// count proves absence. With `LANES`, `lane_counts[l]` is the sum of `counts[s]` over the slots
/// `s` of lane `l` (`s % 64 == l`), and bit `l` of `lanes` is set iff it is non-zero; without,
/// both stay zero. Members number far fewer than 255 (the critical set, the boosted table and
/// the wait table each bound theirs), so no count wraps.
#[derive(Clone, Debug)]
pub struct TidFilter<const LANES: bool = true> {
    counts: [u8; SLOTS],
    lane_counts: [u8; 64],
    lanes: u64,
}

impl<const LANES: bool> Default for TidFilter<LANES> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
const fn slot(tid: Tid) -> usize {
    // TIDs are allocated sequentially, so the low bits already spread well.
    (tid as u32 as usize) & (SLOTS - 1)
}

impl TidFilter<true> {
    /// A 64-bit summary a platform can publish for lock-free readers: bit `tid % 64` clear
    /// proves `tid` is not a member (see [`lanes_may_contain`]).
    #[inline(always)]
    pub const fn lanes(&self) -> u64 {
        self.lanes
    }
}

impl<const LANES: bool> TidFilter<LANES> {
    /// An empty filter.
    pub const fn new() -> Self {
        Self {
            counts: [0; SLOTS],
            lane_counts: [0; 64],
            lanes: 0,
        }
    }

    /// False means `tid` is certainly not a member; true means it may be.
    #[inline(always)]
    pub fn may_contain(&self, tid: Tid) -> bool {
        // `slot` masks into range, so the `None` arm compiles away.
        self.counts.get(slot(tid)).is_some_and(|&c| c != 0)
    }

    /// Adds one membership of `tid`.
    pub fn insert(&mut self, tid: Tid) {
        let s = slot(tid);
        // Counting memberships per lane, rather than live slots, makes this branch-free.
        if let Some(c) = self.counts.get_mut(s) {
            *c = c.wrapping_add(1);
        }
        if LANES {
            if let Some(l) = self.lane_counts.get_mut(s % 64) {
                *l = l.wrapping_add(1);
            }
            self.lanes |= 1 << (s % 64);
        }
    }

    /// Removes one membership of `tid` (which must have been inserted; a slot with none is
    /// left alone).
    pub fn remove(&mut self, tid: Tid) {
        let s = slot(tid);
        let Some(c) = self.counts.get_mut(s) else {
            return;
        };
        if *c != 0 {
            *c -= 1;
            if !LANES {
                return;
            }
            let Some(l) = self.lane_counts.get_mut(s % 64) else {
                return;
            };
            // The slot had a membership, so its lane counts at least one.
            *l = l.wrapping_sub(1);
            if *l == 0 {
                self.lanes &= !(1 << (s % 64));
            }
        }
    }

    /// Forgets every member.
    pub fn clear(&mut self) {
        self.counts = [0; SLOTS];
        self.lane_counts = [0; 64];
        self.lanes = 0;
    }
}

/// The lane bit of `tid` in a [`TidFilter::lanes`] summary.
#[inline(always)]
pub const fn lane_bit(tid: Tid) -> u64 {
    1 << (tid as u32 % 64)
}

/// Whether `tid` may be a member of a filter whose [`TidFilter::lanes`] are `lanes`.
#[inline(always)]
pub const fn lanes_may_contain(lanes: u64, tid: Tid) -> bool {
    lanes & lane_bit(tid) != 0
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
    fn a_filter_without_lanes_still_counts() {
        let mut f = TidFilter::<false>::new();
        f.insert(9);
        f.insert(9);
        f.remove(9);
        assert!(f.may_contain(9));
        f.remove(9);
        assert!(!f.may_contain(9));
    }

    #[test]
    fn counts_memberships() {
        let mut f = TidFilter::<true>::new();
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
