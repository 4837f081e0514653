//! What the kernel can see of a lock, which decides what a kernel-side policy may learn.
//!
//! Kernel locks (`struct mutex`, `struct rw_semaphore`) are seen fully through the ACK vendor
//! hooks. A user-space lock is a futex word the kernel only sees while a thread sleeps on it:
//! a PI futex is an `rt_mutex` whose owner the kernel records (`android_vh_rtmutex_wait_start`
//! reports it); a plain futex shows its owner only when user space passes it with `FUTEX_WAIT`
//! (an owner hint, which needs patched ART or bionic); otherwise the kernel sees nothing at all.

use serde::{Deserialize, Serialize};

/// What the kernel can learn about a futex's owner.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FutexOwner {
    /// A PI futex (`PTHREAD_PRIO_INHERIT`): an `rt_mutex`, its owner known to the kernel.
    Pi,
    /// A plain (barging) futex whose waiters pass the holder's TID with `FUTEX_WAIT`.
    Hinted,
    /// A plain futex without hints: invisible to the kernel.
    None,
}

/// What a kernel-side observer sees of one lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// A kernel mutex or rwsem: every hook fires.
    Kernel,
    /// A PI futex: wait start (with the owner) and wait finish only.
    PiFutex,
    /// An owner-hinted futex: each sleep's start (with the hinted owner), its end, and the
    /// waiter a release wakes ahead of a queued critical thread.
    Hinted,
    /// A plain futex: nothing.
    Hidden,
}
