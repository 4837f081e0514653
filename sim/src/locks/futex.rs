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
    /// Sleeping waiters in arrival order.
    pub waiters: VecDeque<TaskIdx>,
    /// The waiter the last release woke, until someone takes the lock: what a critical
    /// waiter still queued waits for meanwhile (the trace analysis names it).
    pub woken: Option<TaskIdx>,
}

impl Futex {
    /// Takes the lock if free (even if others wait); otherwise queues `t`.
    pub fn lock(&mut self, t: TaskIdx) -> bool {
        if self.owner.is_none() {
            self.owner = Some(t);
            self.woken = None;
            true
        } else {
            self.waiters.push_back(t);
            false
        }
    }

    /// Releases the lock held by `t`; returns the waiter to wake (it retries when it runs).
    pub fn unlock(&mut self, t: TaskIdx) -> Option<TaskIdx> {
        assert_eq!(self.owner, Some(t), "futex released by a non-owner");
        self.owner = None;
        self.woken = self.waiters.pop_front();
        self.woken
    }
}
