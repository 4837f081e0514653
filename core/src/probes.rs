//! Which groups of per-lock-operation probes a platform keeps attached.
//!
//! Most lock hooks fire only on a slow path (a wait starts or ends, an unlock wakes a waiter).
//! Four families fire on *every* acquire and release in the system: the mutex owner hook
//! (`android_vh_record_mutex_lock_starttime`, every `mutex_lock` and `mutex_unlock`), the rwsem
//! writer hooks (`android_vh_record_rwsem_writer_owned`, `..._clear_rwsem_writer_owned`),
//! the rwsem reader hooks (`android_vh_record_rwsem_reader_owned`,
//! `..._clear_rwsem_reader_owned`, twice per page fault through the per-VMA lock), and the
//! percpu rw-semaphore record hook (`android_vh_record_pcpu_rwsem_starttime`, twice per file
//! write through the superblock's freeze lock). Even a probe that returns at once costs the
//! hook's dispatch on those paths, so a platform attaches them only while they can matter and
//! a while after ([`Tunables::probe_linger_ns`]), and detaches them otherwise: a phone pays
//! for them while its critical threads contend, not all day.
//!
//! What each group is for:
//! - [`OWNERS`] (mutex owners and rwsem writers): following a lock a tracked wait is on as it
//!   changes hands, and ending a departed holder's grant. Needed while a tracked thread waits
//!   on a kernel mutex or rwsem: the probes report only the locks such waits are on, so a
//!   boost from a futex or binder wait leaves them detached.
//! - [`READERS`] (rwsem readers, and percpu rw-semaphore writers): the readers a critical writer
//!   waits behind, and the writer a critical reader of a percpu rw-semaphore (the cgroup
//!   threadgroup lock at every fork and exit) waits behind. An rwsem names only its last
//!   reader and a percpu rw-semaphore no writer, so they must be recorded as they enter,
//!   *before* the wait: by default ([`Tunables::readers_while_critical`]) while any critical
//!   thread is registered. With that off they are recorded only while a tracked rwsem wait is
//!   on or lingers, and the first wait of a contention episode sees only the holders that
//!   entered within the linger of the previous one.
//!
//! Attaching takes process context (the kernel's tracepoint registration sleeps), so a platform
//! attaches a group some time after [`Engine::probes_wanted`](super::Engine::probes_wanted)
//! first names it (at once where the change comes from process context: a registration). An
//! owner change in that gap is seen where the new owner leaves a wait owning the lock, which
//! the always-attached wait hooks report, and where a woken waiter (critical, or a chain's link)
//! loses its retry to it: the platform reads the owner the lock names as the waiter sleeps again
//! ([`Event::WaiterSlept`](super::Event::WaiterSlept)). Otherwise a holder that left keeps its
//! grant until the wait ends or the budget revokes it, as any unseen change.

use super::tunables::Tunables;
use super::Nanos;

/// The mutex-owner and rwsem-writer probes.
pub const OWNERS: u32 = 1 << 0;
/// The rwsem-reader probes.
pub const READERS: u32 = 1 << 1;
/// Every group.
pub const ALL: u32 = OWNERS | READERS;

/// Until when each group stays wanted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeDemand {
    owners_until: Nanos,
    readers_until: Nanos,
    /// The groups needed at the previous update: a need that just ended lingers from now.
    needed: u32,
}

impl ProbeDemand {
    /// No group wanted.
    pub const fn new() -> Self {
        Self {
            owners_until: 0,
            readers_until: 0,
            needed: 0,
        }
    }

    /// Notes the groups `needed` at `now` and returns those wanted: needed now, or needed
    /// within the last `probe_linger_ns`. A need counts until the first update that finds it
    /// gone, so the caller updates after every change that may end one.
    pub fn update(&mut self, now: Nanos, needed: u32, t: &Tunables) -> u32 {
        let until = now.saturating_add(t.probe_linger_ns);
        let needed = needed | core::mem::replace(&mut self.needed, needed);
        if needed & OWNERS != 0 {
            self.owners_until = until;
        }
        if needed & READERS != 0 {
            self.readers_until = until;
        }
        let mut wanted = 0;
        if now < self.owners_until {
            wanted |= OWNERS;
        }
        if now < self.readers_until {
            wanted |= READERS;
        }
        wanted
    }

    /// Forgets every demand (the engine was disabled).
    pub fn clear(&mut self) {
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lingers_then_lapses() {
        let t = Tunables {
            probe_linger_ns: 100,
            ..Tunables::default()
        };
        let mut d = ProbeDemand::new();
        assert_eq!(d.update(0, 0, &t), 0);
        assert_eq!(d.update(10, OWNERS, &t), OWNERS);
        assert_eq!(d.update(50, READERS, &t), ALL);
        // The owners' need ended at 50, the readers' at 60: each lingers from its end.
        assert_eq!(d.update(60, 0, &t), ALL);
        assert_eq!(d.update(149, 0, &t), ALL);
        assert_eq!(d.update(150, 0, &t), READERS);
        assert_eq!(d.update(159, 0, &t), READERS);
        assert_eq!(d.update(160, 0, &t), 0);
        assert_eq!(d.update(170, OWNERS, &t), OWNERS);
        assert_eq!(d.update(171, READERS, &t), ALL);
        assert_eq!(d.update(172, 0, &t), ALL);
        assert_eq!(d.update(271, 0, &t), READERS, "owners ended at 171");
        assert_eq!(d.update(272, 0, &t), 0);
        assert_eq!(
            d.update(u64::MAX, ALL, &t),
            0,
            "saturates: never wanted past the clock's end"
        );
        d.clear();
        assert_eq!(d.update(300, 0, &t), 0);
    }
}
