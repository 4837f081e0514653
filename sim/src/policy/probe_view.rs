//! Which kernel-lock events SuperPass's module sees while its per-lock-operation probes are
//! attached on demand (`superpass_core::probes`), and the rwsem readers it recorded.
//!
//! The module attaches the mutex-owner and rwsem-writer hooks (group `OWNERS`) and the
//! rwsem-reader hooks (group `READERS`) only while the engine wants them
//! (`Engine::probes_wanted`), some time after it first does ([`ATTACH_LATENCY_NS`]: a work item
//! registers them), and detaches them once the want lapses. While a group is detached its hooks
//! do not fire, so the engine does not hear of those events and no hook cost is charged. What
//! always fires: wait start and finish, and a contended mutex release (`mutex_unlock_slowpath`,
//! which names the release and the waiter it wakes); the waiter woken by any release.
//!
//! The module's lock-free reader record holds the readers that entered an rwsem while `READERS`
//! was attached and have not left; it is cleared when the group is detached. At an rwsem wait
//! start it tells the engine the lock's holders as that record and the owner word show them
//! (`Event::LockSeen`): the writer, or else the recorded readers.

use super::LockEvent;
use crate::locks::{Lock, TaskIdx};
use crate::sched::World;
use superpass_core::probes::{OWNERS, READERS};
use superpass_core::{lock_lane, Nanos};

/// How long after the engine first wants a group its hooks start firing: an irq_work queues a
/// work item on `system_highpri_wq`, whose kworker registers the group's tracepoint probes
/// (each registration takes the tracepoint mutex and patches the hook's static key). An
/// assumption, not a measurement: a kworker at nice -20 usually runs as soon as the waiting
/// thread that raised the want sleeps; 200 µs allows for a few registrations.
pub const ATTACH_LATENCY_NS: Nanos = 200_000;

/// The attached probe groups and the reader record, as the module keeps them.
#[derive(Debug)]
pub struct ProbeView {
    attached: u32,
    /// Groups being attached, and when they start firing.
    pending: Option<(Nanos, u32)>,
    /// When the module's work item asks the engine again while any group is attached.
    recheck_at: Nanos,
    /// `recheck_at` while any group is attached, else never: [`Self::recheck_due`], asked at
    /// every hook, in one compare.
    due: Nanos,
    /// (lock, reader) entries of the reader record.
    recorded: Vec<(u32, TaskIdx)>,
    /// The published lock lanes ([`superpass_core::Published::lock_lanes`]): the owner probes
    /// report an acquire or release only of a lock whose lane is set.
    lock_lanes: u64,
}

impl Default for ProbeView {
    fn default() -> Self {
        ProbeView {
            attached: 0,
            pending: None,
            recheck_at: 0,
            due: Nanos::MAX,
            recorded: Vec::new(),
            lock_lanes: 0,
        }
    }
}

impl ProbeView {
    /// Every group attached, as right after the module loads (the engine then detaches what
    /// it does not want at its first answer).
    pub fn all_attached() -> Self {
        let mut v = ProbeView {
            attached: OWNERS | READERS,
            ..Self::default()
        };
        v.set_due();
        v
    }

    /// Keeps `due` in step with `attached` and `recheck_at`.
    #[inline(always)]
    fn set_due(&mut self) {
        self.due = if self.attached != 0 {
            self.recheck_at
        } else {
            Nanos::MAX
        };
    }

    /// Whether the hook reporting kernel-lock event `ev` fires at `now`; keeps the reader
    /// record as the reader hooks do. Inline (it runs on every kernel-lock event), with the
    /// record's upkeep out of line.
    #[inline]
    pub fn sees(&mut self, w: &World, ev: LockEvent) -> bool {
        if let Some((at, g)) = self.pending {
            if w.now >= at {
                self.attached |= g;
                self.pending = None;
                self.set_due();
            }
        }
        match ev {
            LockEvent::WaitStart { .. }
            | LockEvent::WaitFinish { .. }
            | LockEvent::Woken { .. } => true,
            LockEvent::ReaderAcquired { lock, tid } => {
                let on = self.attached & READERS != 0;
                if on {
                    self.record(lock, tid);
                }
                on
            }
            LockEvent::ReaderReleased { lock, tid } => {
                let on = self.attached & READERS != 0;
                if on {
                    self.forget(lock, tid);
                }
                on
            }
            LockEvent::OwnerAcquired { lock, .. } => self.owner_probe_fires(lock),
            LockEvent::OwnerReleased { lock, .. } => {
                self.owner_probe_fires(lock) || contended_mutex_release(&w.locks[lock as usize])
            }
        }
    }

    /// Whether the owner group's probe reports an acquire or release of `lock`: attached, and
    /// the lock's lane set (`sp_lock_may_matter`: only a lock tracked waits are on can change
    /// a decision, so the probes keep every other off the engine lock).
    #[inline(always)]
    fn owner_probe_fires(&self, lock: u32) -> bool {
        self.attached & OWNERS != 0
            && self.lock_lanes & (1 << lock_lane(super::superpass::lock_id(lock))) != 0
    }

    /// Stores the published lock lanes, as the module's mirror does after each engine call.
    pub fn set_lock_lanes(&mut self, lanes: u64) {
        self.lock_lanes = lanes;
    }

    /// Adds reader `tid` of `lock` to the record.
    #[inline(never)]
    fn record(&mut self, lock: u32, tid: TaskIdx) {
        self.recorded.push((lock, tid));
    }

    /// Takes reader `tid` of `lock` out of the record.
    #[inline(never)]
    fn forget(&mut self, lock: u32, tid: TaskIdx) {
        self.recorded.retain(|&e| e != (lock, tid));
    }

    /// The readers of `lock` in the record, but `skip`.
    pub fn readers(&self, lock: u32, skip: TaskIdx) -> impl Iterator<Item = TaskIdx> + '_ {
        self.recorded
            .iter()
            .filter(move |&&(l, t)| l == lock && t != skip)
            .map(|&(_, t)| t)
    }

    /// Whether the module's work item would ask the engine again at `now`.
    #[inline(always)]
    pub fn recheck_due(&self, now: Nanos) -> bool {
        now >= self.due
    }

    /// Applies the engine's answer `wanted` at `now`: a rise attaches after
    /// [`ATTACH_LATENCY_NS`], a lapse detaches at once (and clears the record with the reader
    /// group); while anything is attached, the next recheck comes `recheck` later (the
    /// engine's [`Published::probe_recheck_ns`](superpass_core::Published::probe_recheck_ns)).
    pub fn update(&mut self, now: Nanos, wanted: u32, recheck: Nanos) {
        let rise = wanted & !self.attached & !self.pending.map_or(0, |p| p.1);
        if rise != 0 {
            let (at, g) = self.pending.unwrap_or((now + ATTACH_LATENCY_NS, 0));
            self.pending = Some((at, g | rise));
        }
        let drop = self.attached & !wanted;
        if drop != 0 {
            self.attached &= !drop;
            if drop & READERS != 0 {
                self.recorded.clear();
            }
        }
        if let Some((at, g)) = self.pending {
            if g & !wanted != 0 {
                self.pending = (g & wanted != 0).then_some((at, g & wanted));
            }
        }
        if self.attached != 0 && now >= self.recheck_at {
            self.recheck_at = now + recheck;
        }
        self.set_due();
    }
}

/// A mutex released with waiters: `mutex_unlock_slowpath` reports it whatever is attached.
fn contended_mutex_release(l: &Lock) -> bool {
    matches!(l, Lock::Mutex(_)) && (l.owner().is_some() || l.waiters().next().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rise_attaches_after_the_latency_and_a_lapse_detaches_at_once() {
        let mut v = ProbeView::default();
        v.update(1_000, OWNERS | READERS, 500_000);
        assert_eq!(v.attached, 0);
        assert_eq!(
            v.pending,
            Some((1_000 + ATTACH_LATENCY_NS, OWNERS | READERS))
        );
        v.update(2_000, OWNERS, 500_000);
        assert_eq!(
            v.pending,
            Some((1_000 + ATTACH_LATENCY_NS, OWNERS)),
            "readers no longer wanted"
        );
        v.attached = OWNERS | READERS;
        v.pending = None;
        v.recorded.push((3, 4));
        v.update(5_000, OWNERS, 500_000);
        assert_eq!(v.attached, OWNERS);
        assert!(
            v.recorded.is_empty(),
            "detaching the readers clears the record"
        );
        assert!(v.recheck_due(5_000 + 500_000));
        assert!(!v.recheck_due(5_000 + 499_999));
    }
}
