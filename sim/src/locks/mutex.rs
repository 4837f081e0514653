//! Kernel `struct mutex`: one owner and FIFO waiters; a release wakes the first waiter, which
//! retries when it runs, and a running task may take the mutex before it does.
//!
//! As in kernel/locking/mutex.c: `__mutex_unlock_slowpath` clears the owner and wakes the first
//! waiter, unless that waiter has asked for a handoff, in which case the mutex passes to it
//! directly (`__mutex_handoff`). A woken waiter that finds the mutex taken again sets
//! `MUTEX_FLAG_HANDOFF` (`__mutex_trylock_or_handoff`, first waiter only) and sleeps again;
//! while that flag is set nobody else may take the mutex. Optimistic spinning is not modelled.

use super::TaskIdx;
use std::collections::VecDeque;

/// A mutex.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    /// Current owner.
    pub owner: Option<TaskIdx>,
    /// Waiters in arrival order; a woken waiter stays queued until it takes the mutex.
    pub waiters: VecDeque<TaskIdx>,
    /// The first waiter lost a retry and asked for the mutex to be handed to it.
    pub handoff: bool,
}

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// Nobody waits.
    Free,
    /// The mutex is free and this first waiter was woken to retry.
    Woken(TaskIdx),
    /// The mutex passed to this first waiter (it had asked for a handoff).
    HandedTo(TaskIdx),
}

impl Mutex {
    /// Takes the mutex if it is free and no handoff is pending (even if others wait: a woken
    /// waiter may not have run yet); otherwise queues `t` and returns false.
    pub fn lock(&mut self, t: TaskIdx) -> bool {
        if self.owner.is_none() && !self.handoff {
            self.owner = Some(t);
            true
        } else {
            self.waiters.push_back(t);
            false
        }
    }

    /// Woken waiter `t` retries: takes the mutex if it is free (leaving the queue); otherwise,
    /// if it is the first waiter, asks for a handoff, and returns false (it sleeps again).
    pub fn retry(&mut self, t: TaskIdx) -> bool {
        if self.owner.is_none() {
            self.owner = Some(t);
            self.waiters.retain(|&w| w != t);
            self.handoff = false;
            return true;
        }
        if self.waiters.front() == Some(&t) {
            self.handoff = true;
        }
        false
    }

    /// Releases the mutex held by `t`.
    pub fn unlock(&mut self, t: TaskIdx) -> Release {
        assert_eq!(self.owner, Some(t), "mutex released by a non-owner");
        if self.handoff {
            self.handoff = false;
            self.owner = self.waiters.pop_front();
            return self.owner.map_or(Release::Free, Release::HandedTo);
        }
        self.owner = None;
        self.waiters
            .front()
            .copied()
            .map_or(Release::Free, Release::Woken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_task_takes_the_mutex_before_the_woken_waiter_which_then_gets_a_handoff() {
        let mut m = Mutex::default();
        assert!(m.lock(1));
        assert!(!m.lock(2));
        assert_eq!(m.unlock(1), Release::Woken(2));
        // 1 takes it again before 2 runs.
        assert!(m.lock(1));
        // 2 retries, loses, and asks for a handoff; a third task may not barge in now.
        assert!(!m.retry(2));
        assert!(m.handoff);
        assert_eq!(m.unlock(1), Release::HandedTo(2));
        assert_eq!(m.owner, Some(2));
        assert!(m.waiters.is_empty() && !m.handoff);
    }

    #[test]
    fn a_woken_waiter_that_finds_the_mutex_free_takes_it() {
        let mut m = Mutex::default();
        m.lock(1);
        m.lock(2);
        m.lock(3);
        assert_eq!(m.unlock(1), Release::Woken(2));
        assert!(m.retry(2));
        assert_eq!(m.waiters, [3]);
        assert_eq!(m.unlock(2), Release::Woken(3));
    }
}
