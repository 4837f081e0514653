//! An unfair futex-style lock: unlock frees the word and wakes one waiter, and any thread
//! that arrives before that waiter runs may take it (barging).
//!
//! This is the seed post's case: the woken waiter is runnable but starved of CPU while an
//! arriving thread grabs the lock, so the waiter sleeps again.

use super::TaskIdx;
use std::collections::VecDeque;

/// A futex lock.
#[derive(Clone, Debug, Default)]
pub struct Futex {
    /// Current owner.
    pub owner: Option<TaskIdx>,
    /// Sleeping waiters in wake order, with their SCHED_FIFO priorities (0: the fair class).
    pub waiters: VecDeque<(TaskIdx, u8)>,
    /// The waiter the last release woke, until someone takes the lock: what a critical
    /// waiter still queued waits for meanwhile (the trace analysis names it).
    pub woken: Option<TaskIdx>,
}

impl Futex {
    /// Takes the lock if free (even if others wait); otherwise queues `t`, of SCHED_FIFO
    /// priority `rt_prio` (0: fair), as the kernel's futex hash-bucket chain does (a plist:
    /// `futex_q` priority `min(normal_prio, MAX_RT_PRIO)`, so RT waiters by priority and the
    /// fair class as one priority, each in arrival order): behind every waiter at least as
    /// urgent, or with `first` ahead of the waiters of its own priority, as a probe on
    /// `android_vh_alter_futex_plist_add` queues it (SuperPass's `queue_first`).
    pub fn lock(&mut self, t: TaskIdx, rt_prio: u8, first: bool) -> bool {
        if self.owner.is_none() {
            self.owner = Some(t);
            self.woken = None;
            return true;
        }
        let at = self
            .waiters
            .iter()
            .position(|&(_, p)| if first { p <= rt_prio } else { p < rt_prio })
            .unwrap_or(self.waiters.len());
        self.waiters.insert(at, (t, rt_prio));
        false
    }

    /// Whether `t` would wait if it tried to take the lock now.
    pub fn taken(&self) -> bool {
        self.owner.is_some()
    }

    /// Releases the lock held by `t`; returns the waiter to wake (it retries when it runs).
    pub fn unlock(&mut self, t: TaskIdx) -> Option<TaskIdx> {
        assert_eq!(self.owner, Some(t), "futex released by a non-owner");
        self.owner = None;
        self.woken = self.waiters.pop_front().map(|(w, _)| w);
        self.woken
    }
}
