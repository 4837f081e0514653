//! A binary min-heap of events keyed by unique `u128` keys.

use super::{Ev, NONE};

/// A binary min-heap of `(key, event)`, keys unique.
///
/// In place of `BinaryHeap<Reverse<Entry>>`: it holds about ten events, and the standard
/// heap's pop (sift to the bottom, then back up) through `Ord` on the wrapper cost twice the
/// plain sift-down here. Keys are unique, so the pop order is the key order whatever the
/// layout.
#[derive(Debug, Default)]
pub(super) struct Heap {
    items: Vec<(u128, Ev)>,
}

impl Heap {
    /// An empty heap with room for `n` events.
    pub(super) fn with_capacity(n: usize) -> Self {
        Heap {
            items: Vec::with_capacity(n),
        }
    }

    /// The smallest key (`NONE` if empty).
    #[inline(always)]
    pub(super) fn first(&self) -> u128 {
        self.items.first().map_or(NONE, |e| e.0)
    }

    /// Adds `ev` with `key`.
    #[inline(always)]
    pub(super) fn push(&mut self, key: u128, ev: Ev) {
        let items = &mut self.items;
        let mut i = items.len();
        items.push((key, ev));
        // Move the hole up while the parent's key is larger.
        while i > 0 {
            let p = (i - 1) / 2;
            if items[p].0 < key {
                break;
            }
            items[i] = items[p];
            i = p;
        }
        items[i] = (key, ev);
    }

    /// Takes the entry with the smallest key.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<(u128, Ev)> {
        let last = self.items.pop()?;
        let items = &mut self.items[..];
        let Some(&top) = items.first() else {
            return Some(last);
        };
        // Move the hole at the root down while a child's key is smaller than `last`'s.
        let n = items.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && items[l + 1].0 < items[l].0 {
                l + 1
            } else {
                l
            };
            if last.0 < items[c].0 {
                break;
            }
            items[i] = items[c];
            i = c;
        }
        items[i] = last;
        Some(top)
    }

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_as_the_standard_heap_does() {
        let mut h = Heap::default();
        let mut std_heap = std::collections::BinaryHeap::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for seq in 0..20_000u128 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(3) {
                let want = std_heap.pop().map(|std::cmp::Reverse(k)| k);
                assert_eq!(h.pop().map(|e| e.0), want);
            } else {
                // Few distinct times, so sequence numbers often decide.
                let key = ((x % 64) as u128) << 64 | seq;
                h.push(key, Ev::Tick(seq as u32));
                std_heap.push(std::cmp::Reverse(key));
            }
            assert_eq!(h.len(), std_heap.len());
            assert_eq!(h.first(), std_heap.peek().map_or(NONE, |r| r.0));
        }
    }
}
