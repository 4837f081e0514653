//! Lock plug-ins: the data structures of each lock family and what a release hands to whom.
//!
//! Locks only record ownership and queues; the simulator turns the returned wake lists
//! into wakeups and reports each step to the policy at the point a kernel hook would fire.

pub mod binder;
pub mod futex;
pub mod mutex;
pub mod rwsem;

use crate::workload::LockType;

/// A task index (position in the simulator's task table).
pub type TaskIdx = u32;

/// One lock of any family.
#[derive(Clone, Debug)]
pub enum Lock {
    /// Kernel mutex.
    Mutex(mutex::Mutex),
    /// Reader-writer semaphore.
    Rwsem(rwsem::Rwsem),
    /// Unfair futex-style lock.
    Futex(futex::Futex),
}

impl Lock {
    /// A fresh, free lock of the given family.
    pub fn new(kind: LockType) -> Self {
        match kind {
            LockType::Mutex => Lock::Mutex(mutex::Mutex::default()),
            LockType::Rwsem => Lock::Rwsem(rwsem::Rwsem::default()),
            LockType::Futex => Lock::Futex(futex::Futex::default()),
        }
    }

    /// The exclusive owner (mutex/futex owner, rwsem writer), if any.
    pub fn owner(&self) -> Option<TaskIdx> {
        match self {
            Lock::Mutex(m) => m.owner,
            Lock::Rwsem(r) => r.writer,
            Lock::Futex(f) => f.owner,
        }
    }

    /// Readers holding an rwsem (empty for other families).
    pub fn readers(&self) -> &[TaskIdx] {
        match self {
            Lock::Rwsem(r) => &r.readers,
            _ => &[],
        }
    }

    /// The lock family.
    pub fn kind(&self) -> LockType {
        match self {
            Lock::Mutex(_) => LockType::Mutex,
            Lock::Rwsem(_) => LockType::Rwsem,
            Lock::Futex(_) => LockType::Futex,
        }
    }

    /// Tasks queued waiting on the lock.
    pub fn waiters(&self) -> impl Iterator<Item = TaskIdx> + '_ {
        let (a, b): (Option<_>, Option<_>) = match self {
            Lock::Mutex(m) => (Some(m.waiters.iter().copied()), None),
            Lock::Futex(f) => (Some(f.waiters.iter().copied()), None),
            Lock::Rwsem(r) => (None, Some(r.waiters.iter().map(|w| w.0))),
        };
        a.into_iter().flatten().chain(b.into_iter().flatten())
    }
}
