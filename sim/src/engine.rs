//! The discrete-event core: a min-heap of events ordered by (time, seq).
//!
//! `seq` increases with every push, so events at the same time run in the order they were
//! scheduled. Nothing random decides ties here; randomness lives in `crate::rng`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// The event queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
        }
    }

    /// Schedules `ev` at time `t` (ns).
    pub fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// The earliest event, ties in push order.
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no events are pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
