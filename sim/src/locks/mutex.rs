//! Kernel `struct mutex`: one owner, FIFO waiters, and handoff to the first waiter on unlock.
//!
//! Handoff means ownership passes at unlock time: the woken waiter owns the mutex while it
//! still waits for a CPU (so a runnable-but-starved owner is exactly what a waiter sees).

use super::TaskIdx;
use std::collections::VecDeque;

/// A mutex.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    /// Current owner.
    pub owner: Option<TaskIdx>,
    /// Waiters in arrival order.
    pub waiters: VecDeque<TaskIdx>,
}

impl Mutex {
    /// Takes the mutex if free; otherwise queues `t` and returns false.
    pub fn lock(&mut self, t: TaskIdx) -> bool {
        if self.owner.is_none() {
            self.owner = Some(t);
            true
        } else {
            self.waiters.push_back(t);
            false
        }
    }

    /// Releases the mutex held by `t`; returns the waiter it was handed to.
    pub fn unlock(&mut self, t: TaskIdx) -> Option<TaskIdx> {
        assert_eq!(self.owner, Some(t), "mutex released by a non-owner");
        self.owner = self.waiters.pop_front();
        self.owner
    }
}
