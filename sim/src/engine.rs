//! The discrete-event core: a min-heap of events ordered by (time, seq).
//!
//! `seq` increases with every push, so events at the same time run in the order they were
//! scheduled. Nothing random decides ties here; randomness lives in `crate::rng`.
//! Completions (`Ev::Done`) wait in per-CPU slots beside the heap (see [`EventQueue`]);
//! the order is the same.

mod heap;

use heap::Heap;

/// An event kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ev {
    /// The running task on a CPU finished its compute (stale unless `gen` matches).
    Done(u32, u32),
    /// A task's sleep timer (stale unless the generation matches).
    Timer(u32, u32),
    /// Scheduler tick on a CPU.
    Tick(u32),
    /// Display vsync.
    Vsync,
    /// End of warmup: counters are snapshotted.
    Warmup,
    /// End of the run.
    End,
}

/// No event: an empty slot.
const NONE: u128 = u128::MAX;

/// One pending event per index (per CPU), with the earliest found without a heap.
#[derive(Debug, Default)]
struct Slots {
    /// Per index: the event's key (`NONE` if none) and its payload.
    keys: Vec<(u128, u32)>,
    /// Index of the earliest slot (meaningless while `keys` is empty, or while `stale`).
    min: usize,
    /// Whether `min` must be found again before the next `peek`: the earliest slot was
    /// taken or moved later. An event takes one completion and may re-arm its CPU and
    /// others, so one scan before the next pop replaces a scan at each of those.
    stale: bool,
}

impl Slots {
    /// Sets slot `i` to `key`, replacing what it held. Inline (every arm sets a slot); the
    /// scan is not.
    #[inline(always)]
    fn set(&mut self, i: usize, key: u128, data: u32) {
        if i >= self.keys.len() {
            self.grow(i + 1);
        }
        if self.stale {
            self.keys[i] = (key, data);
            return;
        }
        let min_key = self.keys[self.min].0;
        self.keys[i] = (key, data);
        if key < min_key {
            self.min = i;
        } else if i == self.min {
            // The earliest slot moved later: another may be earlier now.
            self.stale = true;
        }
    }

    /// Makes room for `n` slots (once per CPU, at its first completion).
    #[cold]
    fn grow(&mut self, n: usize) {
        self.keys.resize(n, (NONE, 0));
    }

    #[inline(never)]
    fn rescan(&mut self) {
        // Compares the times first and the sequence numbers only on a tie (rare): a 64-bit
        // compare per slot instead of a 128-bit one.
        let mut best = 0;
        let (mut best_t, mut best_s) = (u64::MAX, u64::MAX);
        for (i, d) in self.keys.iter().enumerate() {
            let (t, s) = ((d.0 >> 64) as u64, d.0 as u64);
            if t < best_t || (t == best_t && s < best_s) {
                best = i;
                best_t = t;
                best_s = s;
            }
        }
        self.min = best;
    }

    /// The earliest key (`NONE` if all are empty).
    #[inline(always)]
    fn peek(&mut self) -> u128 {
        if self.stale {
            self.stale = false;
            self.rescan();
        }
        self.keys.get(self.min).map_or(NONE, |d| d.0)
    }

    /// Empties the earliest slot (just peeked): (index, key, payload).
    #[inline(always)]
    fn take_min(&mut self) -> (usize, u128, u32) {
        let i = self.min;
        let (key, data) = self.keys[i];
        self.keys[i].0 = NONE;
        self.stale = true;
        (i, key, data)
    }

    fn len(&self) -> usize {
        self.keys.iter().filter(|d| d.0 != NONE).count()
    }
}

/// Events that arrive in key order, first in first out, with the first key at hand (the
/// queue compares it at every pop). A ring whose length is a power of two: it holds about
/// one tick per CPU, and `VecDeque`'s general indexing cost more than the rest of a tick.
#[derive(Debug)]
struct Fifo {
    /// The ring (empty, or a power-of-two length).
    buf: Vec<(u128, u32)>,
    /// Position of the first item.
    head: usize,
    /// Items held.
    len: usize,
    /// Key of the first item (`NONE` if empty).
    first: u128,
    /// Key of the last item (meaningless if empty).
    last: u128,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            buf: Vec::new(),
            head: 0,
            len: 0,
            first: NONE,
            last: 0,
        }
    }
}

impl Fifo {
    /// Whether an item with `key` keeps the items in key order.
    #[inline(always)]
    fn accepts(&self, key: u128) -> bool {
        self.len == 0 || self.last < key
    }

    /// Appends an item ([`Self::accepts`] must hold).
    #[inline(always)]
    fn push(&mut self, key: u128, data: u32) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = (key, data);
        if self.len == 0 {
            self.first = key;
        }
        self.len += 1;
        self.last = key;
    }

    /// Doubles the ring, keeping the items in order from position 0.
    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len).map(|i| self.buf[(self.head + i) & (self.buf.len() - 1)]));
        buf.resize(cap, (NONE, 0));
        self.buf = buf;
        self.head = 0;
    }

    /// Takes the first item (there must be one).
    #[inline(always)]
    fn pop(&mut self) -> (u128, u32) {
        debug_assert!(self.len > 0, "pop from an empty FIFO");
        let mask = self.buf.len() - 1;
        let item = self.buf[self.head];
        self.head = (self.head + 1) & mask;
        self.len -= 1;
        self.first = if self.len == 0 {
            NONE
        } else {
            self.buf[self.head].0
        };
        item
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The event queue.
///
/// Completion events (`Ev::Done`) are not kept in the heap: each CPU has at most one live
/// completion (a re-arm supersedes the previous one, which the loop would skip), so they
/// sit in one slot per CPU and a re-arm overwrites the slot instead of pushing. Ticks, each
/// pushed one period after the tick being handled, arrive in key order and wait in a FIFO
/// beside the heap (a tick that would break the FIFO's order goes to the heap). `pop` takes
/// the earliest of the heap's top, the earliest slot and the FIFO's front; keys are unique
/// (`seq`), so the order is the same `(time, seq)` order as with every event in the heap.
/// (Ticks measured slower in per-CPU slots than in the heap.)
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Heap,
    seq: u64,
    /// Per CPU: the live completion (payload: its generation).
    done: Slots,
    /// Ticks in key order (payload: the CPU).
    ticks: Fifo,
}

impl EventQueue {
    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Heap::with_capacity(n),
            seq: 0,
            done: Slots::default(),
            ticks: Fifo::default(),
        }
    }

    /// Schedules `ev` at time `t` (ns).
    #[inline(always)]
    pub fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        let key = (t as u128) << 64 | self.seq as u128;
        match ev {
            Ev::Done(cpu, gen) => self.done.set(cpu as usize, key, gen),
            Ev::Tick(cpu) if self.ticks.accepts(key) => self.ticks.push(key, cpu),
            _ => self.heap.push(key, ev),
        }
    }

    /// Takes the sequence number of an event pushed later with [`Self::push_reserved`]: it
    /// is ordered as if pushed now.
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Schedules `cpu`'s completion of generation `gen` at time `t`, ordered by a sequence
    /// number from [`Self::reserve`].
    #[inline(always)]
    pub fn push_reserved(&mut self, t: u64, seq: u64, cpu: u32, gen: u32) {
        let key = (t as u128) << 64 | seq as u128;
        self.done.set(cpu as usize, key, gen);
    }

    /// The earliest event, ties in push order. Always inlined: the event loop is its one hot
    /// caller, and out of line it cost a call and register saves per event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        let h = self.heap.first();
        let k = self.ticks.first;
        let d = self.done.peek();
        if d < h && d < k {
            let (c, key, gen) = self.done.take_min();
            return Some(((key >> 64) as u64, Ev::Done(c as u32, gen)));
        }
        if k < h {
            let (key, c) = self.ticks.pop();
            return Some(((key >> 64) as u64, Ev::Tick(c)));
        }
        self.heap.pop().map(|(key, ev)| ((key >> 64) as u64, ev))
    }

    /// The generation of the completion pending for `cpu`, if one is.
    pub fn done_pending(&self, cpu: u32) -> Option<u32> {
        self.done
            .keys
            .get(cpu as usize)
            .filter(|&&(k, _)| k != NONE)
            .map(|&(_, gen)| gen)
    }

    /// Pending events (superseded completions are not kept).
    pub fn len(&self) -> usize {
        self.heap.len() + self.done.len() + self.ticks.len()
    }

    /// Whether no events are pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pops everything, as (time, event).
    fn drain(q: &mut EventQueue) -> Vec<(u64, Ev)> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn pops_in_time_then_push_order_whatever_structure_holds_the_event() {
        let mut q = EventQueue::default();
        // Heap events out of time order, completions in slots (one superseded), and
        // same-time events of every kind.
        q.push(10, Ev::Tick(0));
        q.push(20, Ev::Tick(1));
        q.push(5, Ev::Tick(2));
        q.push(20, Ev::Timer(7, 0));
        q.push(20, Ev::Done(3, 1));
        q.push(15, Ev::Done(4, 1));
        q.push(15, Ev::Done(4, 2)); // supersedes the previous completion of CPU 4
        q.push(20, Ev::Tick(0));
        q.push(1, Ev::Vsync);
        assert_eq!(q.len(), 8);
        assert_eq!(
            drain(&mut q),
            vec![
                (1, Ev::Vsync),
                (5, Ev::Tick(2)),
                (10, Ev::Tick(0)),
                (15, Ev::Done(4, 2)),
                (20, Ev::Tick(1)),
                (20, Ev::Timer(7, 0)),
                (20, Ev::Done(3, 1)),
                (20, Ev::Tick(0)),
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn completion_slots_pop_as_a_heap_would() {
        // Re-arms, supersessions and pops in a pseudo-random order, against a plain list.
        let mut q = EventQueue::default();
        let mut live: Vec<Option<(u64, u64, u32)>> = vec![None; 9];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut now = 0;
        for _ in 0..20_000 {
            if rnd(3) == 0 {
                let want = live
                    .iter()
                    .enumerate()
                    .filter_map(|(c, e)| e.map(|(t, s, g)| (t, s, c, g)))
                    .min();
                match q.pop() {
                    Some((t, Ev::Done(c, g))) => {
                        let (wt, _, wc, wg) = want.expect("a completion was pending");
                        assert_eq!((t, c, g), (wt, wc as u32, wg));
                        live[c as usize] = None;
                        now = t;
                    }
                    other => assert!(want.is_none(), "popped {other:?}"),
                }
            } else {
                let c = rnd(9) as u32;
                let t = now + rnd(50);
                let g = rnd(1000) as u32;
                q.push(t, Ev::Done(c, g));
                live[c as usize] = Some((t, q.seq, g));
            }
        }
    }

    #[test]
    fn ticks_keep_their_order_across_the_ring_growing_and_wrapping() {
        let mut q = EventQueue::default();
        let mut want = Vec::new();
        let mut got = Vec::new();
        let mut t = 0;
        // Grow with 20 pending ticks, then keep 3 to 20 pending while popping (the ring
        // wraps), with a same-time timer now and then.
        for round in 0..200u64 {
            let pending = if round < 20 { 20 } else { 3 + round % 18 };
            while q.len() < pending as usize {
                t += 7;
                q.push(t, Ev::Tick(round as u32));
                want.push((t, Ev::Tick(round as u32)));
                if t % 5 == 0 {
                    q.push(t, Ev::Timer(1, 0));
                    want.push((t, Ev::Timer(1, 0)));
                }
            }
            got.push(q.pop().unwrap());
        }
        got.extend(drain(&mut q));
        assert_eq!(got, want);
    }
}
