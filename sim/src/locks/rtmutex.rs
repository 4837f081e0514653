//! An `rt_mutex`, the kernel object behind a PI futex (`FUTEX_LOCK_PI`, a pthread mutex with
//! `PTHREAD_PRIO_INHERIT`): one owner, waiters ordered by priority, and the lock handed to the
//! top waiter on unlock.
//!
//! Waiters are ordered as `rt_mutex_waiter_less` orders them: RT waiters by priority, and
//! every non-RT waiter at `DEFAULT_PRIO` (`__waiter_prio` in kernel/locking/rtmutex.c, 6.12),
//! so fair-class waiters queue FIFO behind RT ones. On unlock the top waiter becomes the owner
//! before it runs: an arriving task may only steal the lock from it with a strictly higher
//! priority (`rt_mutex_steal`), which a fair-class arrival never has, so fair arrivals do not
//! barge. Stealing by a more urgent RT arrival is **not modelled** (the top waiter keeps it).

use super::TaskIdx;
use std::collections::VecDeque;

/// An rt_mutex.
#[derive(Clone, Debug, Default)]
pub struct RtMutex {
    /// Current owner.
    pub owner: Option<TaskIdx>,
    /// Waiters, top waiter first, with the RT priority each queued with (0 = not RT).
    pub waiters: VecDeque<(TaskIdx, u8)>,
}

impl RtMutex {
    /// Takes the lock if free; otherwise queues `t` behind every waiter at least as urgent.
    pub fn lock(&mut self, t: TaskIdx, rt_prio: u8) -> bool {
        if self.owner.is_none() {
            self.owner = Some(t);
            return true;
        }
        let at = self
            .waiters
            .iter()
            .position(|&(_, p)| p < rt_prio)
            .unwrap_or(self.waiters.len());
        self.waiters.insert(at, (t, rt_prio));
        false
    }

    /// Releases the lock held by `t`; returns the top waiter, which now owns it.
    pub fn unlock(&mut self, t: TaskIdx) -> Option<TaskIdx> {
        assert_eq!(self.owner, Some(t), "rt_mutex released by a non-owner");
        self.owner = self.waiters.pop_front().map(|(w, _)| w);
        self.owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_waiters_queue_fifo_behind_rt_ones() {
        let mut m = RtMutex::default();
        assert!(m.lock(1, 0));
        assert!(!m.lock(2, 0));
        assert!(!m.lock(3, 1));
        assert!(!m.lock(4, 0));
        assert_eq!(m.unlock(1), Some(3));
        assert_eq!(m.unlock(3), Some(2));
        assert_eq!(m.unlock(2), Some(4));
        // Handed over: a fair arrival finds it owned and queues.
        assert!(!m.lock(5, 0));
        assert_eq!(m.unlock(4), Some(5));
        assert_eq!(m.unlock(5), None);
    }
}
