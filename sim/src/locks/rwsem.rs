//! Kernel `struct rw_semaphore`: many readers or one writer, FIFO waiters, grant on wake.
//!
//! Readers steal the lock past queued waiters unless a writer owns it or the first waiter
//! has waited [`WAIT_TIMEOUT_NS`] and set the handoff flag (reader optimistic lock stealing,
//! kernel/locking/rwsem.c since 5.11). On release the front waiter is granted: a writer alone,
//! or every queued reader (as `rwsem_mark_wake` does).

use super::TaskIdx;
use std::collections::VecDeque;

/// How long the first waiter waits before it sets the handoff flag (`RWSEM_WAIT_TIMEOUT`,
/// one jiffy at HZ=250).
pub const WAIT_TIMEOUT_NS: u64 = 4_000_000;

/// An rwsem.
#[derive(Clone, Debug, Default)]
pub struct Rwsem {
    /// Writer owning the lock.
    pub writer: Option<TaskIdx>,
    /// Readers holding the lock.
    pub readers: Vec<TaskIdx>,
    /// Waiters and whether each wants to read.
    pub waiters: VecDeque<(TaskIdx, bool)>,
    /// When the current first waiter started waiting.
    pub head_since: u64,
}

impl Rwsem {
    /// Whether the first waiter has waited long enough to forbid stealing.
    pub fn handoff(&self, now: u64) -> bool {
        !self.waiters.is_empty() && now.saturating_sub(self.head_since) >= WAIT_TIMEOUT_NS
    }

    /// Takes the lock for reading or writing at time `now`; otherwise queues `t`.
    pub fn lock(&mut self, t: TaskIdx, read: bool, now: u64) -> bool {
        let free_for = if read {
            self.writer.is_none() && !self.handoff(now)
        } else {
            self.writer.is_none() && self.readers.is_empty()
        };
        if free_for {
            if read {
                self.readers.push(t);
            } else {
                self.writer = Some(t);
            }
            true
        } else {
            if self.waiters.is_empty() {
                self.head_since = now;
            }
            self.waiters.push_back((t, read));
            false
        }
    }

    /// Releases `t`'s hold at `now`; pushes onto `granted` the waiters now owning the lock.
    pub fn unlock(&mut self, t: TaskIdx, granted: &mut Vec<TaskIdx>, now: u64) {
        if self.writer == Some(t) {
            self.writer = None;
        } else {
            let i = self
                .readers
                .iter()
                .position(|&r| r == t)
                .expect("rwsem released by a non-holder");
            self.readers.swap_remove(i);
        }
        let before = self.waiters.len();
        self.grant(granted);
        if self.waiters.len() != before {
            self.head_since = now;
        }
    }

    fn grant(&mut self, granted: &mut Vec<TaskIdx>) {
        if self.writer.is_some() {
            return;
        }
        match self.waiters.front() {
            Some(&(w, false)) if self.readers.is_empty() => {
                self.waiters.pop_front();
                self.writer = Some(w);
                granted.push(w);
            }
            Some(&(_, true)) => {
                self.waiters.retain(|&(r, read)| {
                    if read {
                        granted.push(r);
                    }
                    !read
                });
                self.readers.extend_from_slice(granted);
            }
            _ => {}
        }
    }
}
