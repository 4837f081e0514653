//! Lock plug-ins: the data structures of each lock family and what a release hands to whom.
//!
//! Locks only record ownership and queues; the simulator turns the returned wake lists
//! into wakeups and reports each step to the policy at the point a kernel hook would fire.

pub mod binder;
pub mod futex;
pub mod mutex;
pub mod rtmutex;
pub mod rwsem;
pub mod visibility;

use crate::workload::{LockSpec, LockType};
use std::collections::VecDeque;
use visibility::{FutexOwner, Visibility};

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
    /// PI futex (`rt_mutex`).
    PiFutex(rtmutex::RtMutex),
}

impl Lock {
    /// A fresh, free lock as a scenario declares it.
    pub fn new(spec: &LockSpec) -> Self {
        match (spec.kind, spec.owner) {
            (LockType::Mutex, _) => Lock::Mutex(mutex::Mutex::default()),
            (LockType::Rwsem, _) => Lock::Rwsem(rwsem::Rwsem::default()),
            (LockType::Futex, Some(FutexOwner::Pi)) => Lock::PiFutex(rtmutex::RtMutex::default()),
            (LockType::Futex, _) => Lock::Futex(futex::Futex::default()),
        }
    }

    /// What the kernel can see of a lock as a scenario declares it.
    pub fn visibility(spec: &LockSpec) -> Visibility {
        match (spec.kind, spec.owner) {
            (LockType::Mutex | LockType::Rwsem, _) => Visibility::Kernel,
            (LockType::Futex, Some(FutexOwner::Pi)) => Visibility::PiFutex,
            (LockType::Futex, Some(FutexOwner::Hinted)) => Visibility::Hinted,
            (LockType::Futex, Some(FutexOwner::None) | None) => Visibility::Hidden,
        }
    }

    /// The exclusive owner (mutex/futex owner, rwsem writer), if any.
    pub fn owner(&self) -> Option<TaskIdx> {
        match self {
            Lock::Mutex(m) => m.owner,
            Lock::Rwsem(r) => r.writer,
            Lock::Futex(f) => f.owner,
            Lock::PiFutex(m) => m.owner,
        }
    }

    /// The waiter a release woke to retry a free lock, while it has not retried: a plain
    /// futex's, or a mutex's first waiter (it stays queued until it takes the mutex).
    pub fn woken(&self) -> Option<TaskIdx> {
        match self {
            Lock::Mutex(m) if m.owner.is_none() => m.waiters.front().copied(),
            Lock::Futex(f) if f.owner.is_none() => f.woken,
            _ => None,
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
            Lock::Futex(_) | Lock::PiFutex(_) => LockType::Futex,
        }
    }

    /// Whether any task is queued waiting on the lock (as `waiters().next().is_some()`, without
    /// building the chained iterator: occupancy accounting asks at every lock operation).
    #[inline]
    pub fn has_waiters(&self) -> bool {
        match self {
            Lock::Mutex(m) => !m.waiters.is_empty(),
            Lock::Futex(f) => !f.waiters.is_empty(),
            Lock::Rwsem(r) => !r.waiters.is_empty(),
            Lock::PiFutex(m) => !m.waiters.is_empty(),
        }
    }

    /// Tasks queued waiting on the lock.
    pub fn waiters(&self) -> impl Iterator<Item = TaskIdx> + '_ {
        fn by_prio(q: &VecDeque<(TaskIdx, u8)>) -> impl Iterator<Item = TaskIdx> + '_ {
            q.iter().map(|w| w.0)
        }
        let (a, b, c): (Option<_>, Option<_>, Option<_>) = match self {
            Lock::Mutex(m) => (Some(m.waiters.iter().copied()), None, None),
            Lock::Futex(f) => (None, None, Some(by_prio(&f.waiters))),
            Lock::Rwsem(r) => (None, Some(r.waiters.iter().map(|w| w.0)), None),
            Lock::PiFutex(m) => (None, None, Some(by_prio(&m.waiters))),
        };
        a.into_iter()
            .flatten()
            .chain(b.into_iter().flatten())
            .chain(c.into_iter().flatten())
    }
}
