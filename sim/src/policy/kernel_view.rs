//! The lock events a kernel-side policy can see: the simulator reports every lock event as it
//! happens, and this filter keeps only those a kernel hook would report for the lock, given
//! what the kernel can see of it (`crate::locks::visibility`).
//!
//! - Kernel mutex and rwsem: every event (the ACK lock hooks).
//! - PI futex: wait start with the owner (`android_vh_rtmutex_wait_start`, owner =
//!   `rt_mutex_owner`) and wait finish (`android_vh_rtmutex_wait_finish`); no owner or wake
//!   events exist for it.
//! - Owner-hinted futex, when user space passes hints: each sleep's start with the owner
//!   hinted at that moment, its end (every wakeup ends the kernel wait), and the waiter a
//!   release wakes when that waiter is not critical but a critical thread is still queued
//!   (`futex_wake_this`). User space takes and releases the word, so no owner events.
//! - A plain futex without hints (and a hinted one on a device without patched user space):
//!   nothing.

use super::LockEvent;
use crate::locks::visibility::Visibility;
use crate::sched::World;
use crate::workload::ThreadRole;

/// Which user-space locks the device reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// Patched ART and bionic pass owner hints: PI and hinted futexes are visible.
    Hinting,
    /// A stock device: only PI futexes (and kernel locks) are visible.
    Stock,
}

fn critical(w: &World, t: u32) -> bool {
    matches!(w.task(t).role, ThreadRole::Ui | ThreadRole::Render)
}

/// Whether a kernel hook reports `ev`, an event on `lock`, on `dev`. Inline: it runs on
/// every lock event.
#[inline]
pub fn visible(w: &World, dev: Device, ev: LockEvent, lock: u32) -> bool {
    let vis = match (w.lock_vis[lock as usize], dev) {
        (Visibility::Hinted, Device::Stock) => Visibility::Hidden,
        (v, _) => v,
    };
    match vis {
        Visibility::Kernel => true,
        Visibility::Hidden => false,
        Visibility::PiFutex => matches!(
            ev,
            LockEvent::WaitStart { .. } | LockEvent::WaitFinish { .. }
        ),
        Visibility::Hinted => match ev {
            LockEvent::WaitStart { .. } | LockEvent::WaitFinish { .. } => true,
            LockEvent::Woken { tid, .. } => {
                !critical(w, tid) && w.locks[lock as usize].waiters().any(|q| critical(w, q))
            }
            _ => false,
        },
    }
}
