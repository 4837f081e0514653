//! The published snapshot: what a platform's hooks read, lock-free, to skip the engine.

use super::super::gates;
use super::control::probes_for_wait;
use super::*;

/// One snapshot of the engine's state for lock-free readers, taken after each engine call.
///
/// A platform stores it where its hooks can read it without the engine lock, and each hook
/// tests it before calling in: a clear gate or lane bit proves the event cannot change
/// anything. Everything here is decided by the engine; the platform only stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// The [`gates`] bits: which hook events may reach the engine at all.
    pub gates: u32,
    /// Bit `tid % 64` clear proves the task is not critical, not boosted and has no tracked
    /// wait, so none of its lock events can matter.
    pub interest_lanes: u64,
    /// Bit `tid % 64` clear proves the task is not boosted, so its scheduler events cannot
    /// matter.
    pub boosted_lanes: u64,
    /// Bit [`lock_lane`] clear proves no tracked wait is on the lock ([`Engine::lock_lanes`]).
    pub lock_lanes: u64,
    /// Bit `tid % 64` clear proves the task is not a waiter a release woke (critical, or a link
    /// of a chain)
    /// ([`Engine::woken_lanes`]).
    pub woken_lanes: u64,
    /// Bit `tid % 64` clear proves the task is not a critical thread in a tracked wait that no
    /// release has woken, nor one whose tracked wait ended within `wake_slice_ns` (as of the
    /// snapshot), so its preemption cannot matter
    /// ([`Event::Preempted`](super::super::Event::Preempted)).
    pub waiting_lanes: u64,
    /// The probe groups ([`probes`] bits) to keep attached ([`Engine::probes_wanted`]).
    pub probes: u32,
    /// How soon to take a snapshot again while any probe group stays attached (0 when none
    /// is wanted): the groups fall with time alone, once their `probe_linger_ns` has passed.
    pub probe_recheck_ns: Nanos,
    /// Bit `c` clear says CPU `c`'s picks and ticks have nothing to do: no boosted task is
    /// queued or runs there, no wake is in flight (a tick elsewhere cannot settle one), and
    /// no boosted task with an unknown runqueue names it as its home
    /// ([`Event::Named`](super::super::Event::Named)) or names none; after `locate_window_ns`
    /// such a task is taken to be asleep (its next enqueue is reported). A CPU without
    /// fast-track work then never touches the engine while others have some.
    pub work_cpus: u64,
}

/// `gate` if `set`, else no bit.
#[inline(always)]
const fn gate_if(set: bool, gate: u32) -> u32 {
    if set {
        gate
    } else {
        0
    }
}

impl<O: Observer> Engine<O> {
    /// The snapshot a platform publishes after each call it makes into the engine, as of `now`.
    ///
    /// It takes `&mut self` because the probe groups' linger advances with `now` (as
    /// [`Engine::probes_wanted`]). One pass over the live waits.
    pub fn published(&mut self, now: Nanos) -> Published {
        let (mut tracked, mut futex, mut lock_lanes, mut wait_probes) = (false, false, 0u64, 0);
        let mut waiting_lanes = 0u64;
        for w in self.detector.waits() {
            tracked = true;
            if w.depth == 0 && !w.woken {
                waiting_lanes |= 1u64 << (w.waiter as u32 % 64);
            }
            futex |= w.kind == LockKind::Futex;
            lock_lanes |= 1u64 << lock_lane(w.lock);
            wait_probes |= probes_for_wait(w.kind);
        }
        let probes = self.probes_given(now, wait_probes);
        let (interest_lanes, boosted_lanes) = self.lanes();
        let woken_lanes = self.detector.woken_lanes();
        // A critical thread whose wait ended is on its way back from the lock call until it
        // sleeps or has had its turn.
        for tid in self.critical.returning() {
            waiting_lanes |= 1u64 << (tid as u32 % 64);
        }
        let on = self.enabled;
        let critical = !self.critical.is_empty();
        let boosted = self.ft.boosted_count() != 0;
        let gates = gate_if(on && (critical || boosted), gates::WAITS)
            | gate_if(on && critical, gates::OWNERS)
            | gate_if(on && (boosted || tracked), gates::OWNERSHIP)
            | gate_if(on && futex, gates::FUTEX_WAITS)
            | gate_if(boosted, gates::BOOSTING)
            | gate_if(critical || boosted, gates::TASKS)
            | gate_if(on && woken_lanes != 0, gates::WOKEN)
            | gate_if(on && self.ft.cooling(), gates::REGRANT);
        let work_cpus = if !boosted {
            0
        } else if !self.wakes.is_empty() {
            u64::MAX
        } else {
            self.ft.work_cpus()
                | self
                    .ft
                    .unlocated_cpus_since(now.saturating_sub(self.tun.locate_window_ns))
        };
        Published {
            gates,
            interest_lanes,
            boosted_lanes,
            lock_lanes,
            woken_lanes,
            waiting_lanes: if on { waiting_lanes } else { 0 },
            probes,
            probe_recheck_ns: if probes != 0 {
                self.tun.probe_linger_ns / 2
            } else {
                0
            },
            work_cpus,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::Role;
    use super::*;
    use gates::*;

    const MS: Nanos = 1_000_000;
    const L1: LockId = 0xffff_8880_0000_1000;

    /// An enabled engine on two CPUs with critical thread 100.
    fn engine() -> Engine {
        let mut e = Engine::new(2, NoObserver);
        e.set_enabled(0, true);
        e.add_critical(0, 100, Role::Ui).unwrap();
        e
    }

    /// The snapshot at `now`, checked against the engine's own accessors.
    /// Critical thread 100 starts waiting on L1 at `at`, which boosts its owner 200: named by
    /// the platform, seen on no runqueue, its home CPU `home`.
    fn boost_unseen(e: &mut Engine, at: Nanos, home: Option<Cpu>) {
        e.wait_start(at, 100, L1, LockKind::Mutex, Some(200));
        e.set_handle(200, 0x1000, home);
    }

    fn snap(e: &mut Engine, now: Nanos) -> Published {
        let p = e.published(now);
        let (interest, boosted) = e.lanes();
        assert_eq!(p.interest_lanes, interest);
        assert_eq!(p.boosted_lanes, boosted);
        assert_eq!(p.lock_lanes, e.lock_lanes());
        assert_eq!(p.woken_lanes, e.woken_lanes());
        assert_eq!(
            p.probes,
            e.probes_wanted(now),
            "same answer at the same time"
        );
        p
    }

    fn lane(x: u64) -> u64 {
        1 << (x % 64)
    }

    #[test]
    fn a_new_engine_publishes_nothing() {
        let mut e: Engine = Engine::new(2, NoObserver);
        assert_eq!(snap(&mut e, 0), Published::default());
        e.set_enabled(0, true);
        assert_eq!(
            snap(&mut e, 0),
            Published::default(),
            "on, but nothing critical"
        );
    }

    #[test]
    fn a_registered_critical_thread_opens_its_waits_and_readers() {
        let mut e = engine();
        let p = snap(&mut e, MS);
        assert_eq!(p.gates, WAITS | OWNERS | TASKS);
        assert_eq!(p.interest_lanes, lane(100));
        assert_eq!(p.boosted_lanes | p.lock_lanes | p.woken_lanes, 0);
        assert_eq!(p.probes, probes::READERS);
        // Off: only the exit gate stays, since the engine still names the thread.
        e.set_enabled(2 * MS, false);
        let p = snap(&mut e, 2 * MS);
        assert_eq!(p.gates, TASKS);
        assert_eq!(p.probes, 0);
        e.remove_critical(3 * MS, 100).unwrap();
        assert_eq!(snap(&mut e, 3 * MS).gates, 0);
    }

    #[test]
    fn a_boost_opens_ownership_and_the_scheduler() {
        let mut e = engine();
        assert_eq!(
            e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200))
                .as_slice(),
            &[200]
        );
        let p = snap(&mut e, MS);
        assert_eq!(p.gates, WAITS | OWNERS | OWNERSHIP | BOOSTING | TASKS);
        assert_eq!(p.boosted_lanes, lane(200));
        assert_eq!(p.interest_lanes, lane(100) | lane(200));
        assert_eq!(p.lock_lanes, 1 << lock_lane(L1));
        assert_eq!(p.probes, probes::ALL);
        // Unregistered while its blocker is boosted: the grant ends with the critical thread.
        e.remove_critical(2 * MS, 100).unwrap();
        let p = snap(&mut e, 2 * MS);
        assert_eq!(p.gates & (OWNERS | BOOSTING), 0);
        // Off: every grant ends, and with it every gate.
        let mut e = engine();
        e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
        e.set_enabled(2 * MS, false);
        e.remove_critical(2 * MS, 100).unwrap();
        assert_eq!(snap(&mut e, 2 * MS), Published::default());
    }

    #[test]
    fn a_tracked_wait_without_a_boost_opens_ownership() {
        let mut e = engine();
        assert!(e
            .wait_start(MS, 100, L1, LockKind::Mutex, None)
            .as_slice()
            .is_empty());
        let p = snap(&mut e, MS);
        assert_eq!(p.gates, WAITS | OWNERS | OWNERSHIP | TASKS);
        assert_eq!(p.lock_lanes, 1 << lock_lane(L1));
        e.wait_finish(2 * MS, 100, L1);
        let p = snap(&mut e, 2 * MS);
        assert_eq!(p.gates, WAITS | OWNERS | TASKS);
        assert_eq!(p.lock_lanes, 0);
    }

    #[test]
    fn only_an_owner_hinted_futex_wait_opens_the_futex_gate() {
        let mut e = engine();
        e.wait_start(MS, 100, L1, LockKind::PiFutex, Some(200));
        assert_eq!(snap(&mut e, MS).gates & FUTEX_WAITS, 0, "a PI futex");
        e.wait_finish(2 * MS, 100, L1);
        assert_eq!(e.futex_wait(3 * MS, 100, 200, true).as_slice(), &[200]);
        let p = snap(&mut e, 3 * MS);
        assert_eq!(p.gates & FUTEX_WAITS, FUTEX_WAITS);
        e.set_enabled(4 * MS, false);
        assert_eq!(snap(&mut e, 4 * MS).gates & FUTEX_WAITS, 0, "off");
    }

    #[test]
    fn a_woken_critical_waiter_opens_the_woken_gate_until_it_runs() {
        let mut e = engine();
        e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
        assert_eq!(snap(&mut e, MS).gates & WOKEN, 0);
        e.owner_released(2 * MS, L1, 200);
        e.waiter_woken(2 * MS, L1, 100, 200);
        let p = snap(&mut e, 2 * MS);
        assert_eq!(p.gates & WOKEN, WOKEN);
        assert_eq!(p.woken_lanes, lane(100));
        e.wait_finish(3 * MS, 100, L1);
        let p = snap(&mut e, 3 * MS);
        assert_eq!(p.gates & WOKEN, 0);
        assert_eq!(p.woken_lanes, 0);
    }

    #[test]
    fn only_cpus_with_fast_track_work_are_asked_to_pick() {
        let mut e = engine();
        assert_eq!(snap(&mut e, 0).work_cpus, 0, "nothing boosted");
        boost_unseen(&mut e, MS, None);
        assert_eq!(
            snap(&mut e, MS).work_cpus,
            u64::MAX,
            "boosted where no hook saw it, no home given: any CPU's pick may find it queued"
        );
        e.enqueue(MS, 1, 200);
        assert_eq!(snap(&mut e, MS).work_cpus, 0b10);
        assert_eq!(e.pick(MS, 1, 300), Some(200));
        assert_eq!(snap(&mut e, MS).work_cpus, 0b10, "running there");
        // Asleep and still boosted: its wake-up's enqueue will be reported, no pick looks for it.
        e.dequeue(2 * MS, 1, 200);
        assert_eq!(snap(&mut e, 2 * MS).work_cpus, 0);
        e.enqueue(3 * MS, 0, 200);
        assert_eq!(snap(&mut e, 3 * MS).work_cpus, 0b01);
        e.owner_released(4 * MS, L1, 200);
        e.wait_finish(4 * MS, 100, L1);
        assert_eq!(snap(&mut e, 4 * MS).work_cpus, 0, "the grant ended");
    }

    #[test]
    fn a_boosted_task_found_nowhere_is_looked_for_by_every_cpu_only_for_the_locate_window() {
        let mut e = engine();
        let window = e.tunables().locate_window_ns;
        boost_unseen(&mut e, MS, None);
        for (at, why) in [
            (MS, "it may be joining a runqueue"),
            (MS + window, "the window's end"),
        ] {
            assert_eq!(snap(&mut e, at).work_cpus, u64::MAX, "{why}");
        }
        assert_eq!(
            snap(&mut e, MS + window + 1).work_cpus,
            0,
            "taken to be asleep: its next enqueue is reported"
        );
        // Still findable by a pick that asks anyway, and placed by an enqueue.
        assert!(e.unlocated_from(0).is_some());
        e.enqueue(MS + window + 2, 1, 200);
        assert_eq!(snap(&mut e, MS + window + 2).work_cpus, 0b10);
        // A new boost of a sleeping holder opens a new window.
        e.owner_released(10 * MS, L1, 200);
        e.wait_finish(10 * MS, 100, L1);
        boost_unseen(&mut e, 20 * MS, None);
        assert_eq!(snap(&mut e, 20 * MS).work_cpus, u64::MAX);
        assert_eq!(snap(&mut e, 20 * MS + window + 1).work_cpus, 0);
    }

    #[test]
    fn a_boosted_task_found_nowhere_is_looked_for_only_by_its_home_cpu() {
        let mut e = engine();
        let window = e.tunables().locate_window_ns;
        boost_unseen(&mut e, MS, Some(1));
        assert_eq!(
            snap(&mut e, MS).work_cpus,
            0b10,
            "only the runqueue it may be joining"
        );
        assert_eq!(snap(&mut e, MS + window + 1).work_cpus, 0, "asleep");
        e.enqueue(MS + window + 2, 0, 200);
        assert_eq!(
            snap(&mut e, MS + window + 2).work_cpus,
            0b01,
            "placed where its enqueue said"
        );
        e.owner_released(10 * MS, L1, 200);
        e.wait_finish(10 * MS, 100, L1);
        boost_unseen(&mut e, 20 * MS, Some(1));
        e.set_handle(200, 0x1000, None);
        assert_eq!(
            snap(&mut e, 20 * MS).work_cpus,
            0b10,
            "a naming without a home keeps the one given"
        );
        // A home past the mask's 64 CPUs cannot be named in it: every CPU looks.
        e.set_handle(200, 0x1000, Some(64));
        assert_eq!(snap(&mut e, 20 * MS).work_cpus, u64::MAX);
    }

    #[test]
    fn a_budget_revoked_blocker_opens_the_regrant_gate() {
        let mut e = engine();
        let budget = e.tunables().budget_ns;
        e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
        e.enqueue(0, 0, 200);
        assert_eq!(e.pick(0, 0, 300), Some(200));
        assert_eq!(snap(&mut e, 0).gates & REGRANT, 0, "boosted, not revoked");
        assert!(e.tick(budget, 0, 200));
        let p = snap(&mut e, budget);
        assert!(!e.is_boosted(200));
        assert_eq!(p.gates & (REGRANT | BOOSTING), REGRANT);
        e.set_enabled(budget + 1, false);
        assert_eq!(snap(&mut e, budget + 1).gates & REGRANT, 0, "off");
    }
}
