//! Wakes in flight: a releaser keeps its grant until the waiter it woke is on a runqueue.
//!
//! A kernel release wakes its waiter in two steps: under the lock's internal spinlock it picks
//! the waiter (where the hooks report [`Event::WaiterWoken`](super::Event::WaiterWoken)), and
//! only after dropping that spinlock does it make the waiter runnable (`wake_up_q()`). Between
//! the two the releaser can be preempted: `futex_wake()` and `rwsem_wake()` run that stretch
//! preemptibly. A releaser whose grant ended at the first step is then a starved low-priority
//! task that still owes the critical thread its wakeup; on the real kernel this held a woken
//! futex waiter asleep for 67 ms. So the grant ends when the woken waiter joins a runqueue
//! (the second step is done), not when it is picked. `wake_slice_ns` ends a wake sooner only
//! when the woken waiter is off the fast track, whose enqueue the platform does not report; a
//! boosted one's always is, and a releaser preempted between the steps for longer than that
//! slice once left a critical waiter asleep for 750 ms.

use super::{LockId, Nanos, Tid};

/// How many wakes can be in flight at once; one more ends the releaser's grant at once, as if
/// its wake were already done.
pub const WAKES_IN_FLIGHT: usize = 8;

/// One release whose wake is not done yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wake {
    /// The waiter being woken.
    pub woken: Tid,
    /// The releaser, which keeps its grant for `lock` until `woken` is runnable.
    pub waker: Tid,
    /// The lock released.
    pub lock: LockId,
    /// When the release picked the waiter.
    pub since: Nanos,
}

/// The wakes in flight, in a fixed array.
///
/// # Invariants
///
/// `len <= WAKES_IN_FLIGHT`; only `slots[..len]` are live, and no two name the same waker and
/// lock.
#[derive(Clone, Copy, Debug)]
pub struct WakesInFlight {
    slots: [Wake; WAKES_IN_FLIGHT],
    len: usize,
}

impl Default for WakesInFlight {
    fn default() -> Self {
        Self::new()
    }
}

impl WakesInFlight {
    /// No wake in flight.
    pub const fn new() -> Self {
        Self {
            slots: [Wake {
                woken: 0,
                waker: 0,
                lock: 0,
                since: 0,
            }; WAKES_IN_FLIGHT],
            len: 0,
        }
    }

    /// The live wakes.
    pub fn iter(&self) -> impl Iterator<Item = &Wake> {
        self.slots.iter().take(self.len)
    }

    /// Notes that `w.waker`'s release of `w.lock` is waking `w.woken`; false if the table is full
    /// (the caller ends the grant at once).
    pub fn defer(&mut self, w: Wake) -> bool {
        if let Some(s) = self
            .slots
            .iter_mut()
            .take(self.len)
            .find(|s| s.waker == w.waker && s.lock == w.lock)
        {
            *s = w;
            return true;
        }
        let Some(s) = self.slots.get_mut(self.len) else {
            return false;
        };
        *s = w;
        self.len += 1;
        true
    }

    /// Removes and returns one wake that `matches` accepts.
    pub fn take(&mut self, matches: impl Fn(&Wake) -> bool) -> Option<Wake> {
        let i = self.slots.iter().take(self.len).position(matches)?;
        let w = *self.slots.get(i)?;
        self.len -= 1;
        self.slots.swap(i, self.len);
        Some(w)
    }

    /// Whether any wake is in flight: the cheap test before a lookup.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every wake.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Checks the invariants.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.len > WAKES_IN_FLIGHT {
            return Err("wakes in flight over their bound");
        }
        for (i, a) in self.iter().enumerate() {
            if self
                .iter()
                .skip(i + 1)
                .any(|b| b.waker == a.waker && b.lock == a.lock)
            {
                return Err("two wakes in flight for one release");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wake(woken: Tid, waker: Tid, lock: LockId) -> Wake {
        Wake {
            woken,
            waker,
            lock,
            since: 0,
        }
    }

    #[test]
    fn defers_up_to_the_bound_then_refuses() {
        let mut t = WakesInFlight::new();
        for i in 0..WAKES_IN_FLIGHT as Tid {
            assert!(t.defer(wake(100 + i, 200 + i, 1)));
        }
        assert!(!t.defer(wake(1, 2, 3)), "full");
        // The same release again replaces its entry.
        assert!(t.defer(wake(99, 200, 1)));
        t.check().unwrap();
        assert_eq!(t.take(|w| w.woken == 99), Some(wake(99, 200, 1)));
        assert_eq!(t.take(|w| w.woken == 99), None);
        assert!(t.defer(wake(1, 2, 3)), "room again");
        t.check().unwrap();
        t.clear();
        assert!(t.is_empty());
    }
}
