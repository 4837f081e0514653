//! Hand-built hook sequences for each rule of the policy, checked against the invariants.

use superpass_core::abi::{self, AbiError, Message};
use superpass_core::filter::lanes_may_contain;
use superpass_core::stats::Counter;
use superpass_core::tunables::Tunables;
use superpass_core::Running;
use superpass_core::{
    Answer, Engine, Event, LockId, LockKind, Nanos, NoObserver, Observer, RevokeReason, Role, Tid,
};

const MS: Nanos = 1_000_000;
const L1: u64 = 0xffff_8880_0000_1000;
const L2: u64 = 0xffff_8880_0000_2000;

#[derive(Default)]
struct Log {
    grants: Vec<(Tid, Tid, u32)>,
    revokes: Vec<(Tid, RevokeReason)>,
    picks: Vec<(u32, Tid)>,
}

impl Observer for Log {
    fn grant(&mut self, _: Nanos, blocker: Tid, via: Tid, _: Tid, _: u64, depth: u32) {
        self.grants.push((blocker, via, depth));
    }
    fn revoke(&mut self, _: Nanos, blocker: Tid, reason: RevokeReason) {
        self.revokes.push((blocker, reason));
    }
    fn pick(&mut self, _: Nanos, cpu: u32, tid: Tid) {
        self.picks.push((cpu, tid));
    }
}

fn engine() -> Engine<Log> {
    let mut e = Engine::new(2, Log::default());
    e.set_enabled(0, true);
    e.add_critical(0, 100, Role::Ui).unwrap();
    e
}

/// [`engine`] with the tunables `tune` sets.
fn engine_with(tune: impl FnOnce(&mut Tunables)) -> Engine<Log> {
    let mut e = engine();
    let mut t = *e.tunables();
    tune(&mut t);
    e.set_tunables(0, t).unwrap();
    e
}

/// [`engine`] on eight CPUs.
fn engine8() -> Engine<Log> {
    let mut e = Engine::new(8, Log::default());
    e.set_enabled(0, true);
    e.add_critical(0, 100, Role::Ui).unwrap();
    e
}

/// An 8-CPU engine with these capacities whose critical thread 100 waits on CPU `cpu`, at 1 ms,
/// for blocker 200 on mutex `L1`.
fn waiting_on(capacities: &[u32], cpu: u32) -> Engine<Log> {
    let mut e = engine8();
    e.set_cpu_capacities(capacities);
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, cpu));
    e
}

/// `tid` was preempted on CPU 1 and stays queued there (the platform's handle 9).
fn preempted(tid: Tid) -> Event<'static> {
    Event::Preempted {
        cpu: 1,
        tid,
        handle: 9,
    }
}

/// `waiter`'s wait on `lock` for `owner` starts on CPU `cpu`, as the wait hooks report it.
fn wait_on(waiter: Tid, lock: u64, kind: LockKind, owner: Tid, cpu: u32) -> Event<'static> {
    Event::WaitStart {
        waiter,
        lock,
        kind,
        owner: Some(owner),
        cpu,
    }
}

/// Critical thread 100, on CPU 0 at 1 ms, starts an owner-hinted futex wait naming 200, which
/// is boosted.
fn futex_wait_for_200(e: &mut Engine<Log>) {
    let wait = Event::FutexWait {
        waiter: 100,
        owner: 200,
        valid: true,
        cpu: 0,
    };
    assert_eq!(e.handle(MS, wait).newly_boosted(), &[200]);
}

/// The platform's view of `lock`'s holders right before a wait on it, as the rwsem wait
/// probe reports it.
fn lock_seen(e: &mut Engine<Log>, now: Nanos, lock: u64, owner: Tid, readers: &[Tid]) {
    let ev = Event::LockSeen {
        lock,
        owner,
        readers,
    };
    assert_eq!(e.handle(now, ev), Answer::None);
}

/// A just-boosted `waiter`'s wait from the platform's record of waits in progress.
fn asleep_wait(
    e: &mut Engine<Log>,
    now: Nanos,
    waiter: Tid,
    lock: u64,
    kind: LockKind,
    owner: Tid,
    readers: &[Tid],
) -> Answer {
    let ev = Event::AsleepWait {
        waiter,
        lock,
        kind,
        owner,
        readers,
    };
    e.handle(now, ev)
}

fn misfit(e: &mut Engine<Log>, tid: Tid, cpu: u32) -> bool {
    e.handle(0, Event::UpdateMisfit { tid, cpu }) == Answer::Misfit
}

fn may_migrate(e: &mut Engine<Log>, tid: Tid, src: u32, dst: u32, running: bool) -> bool {
    let ev = Event::CanMigrate {
        tid,
        src,
        dst,
        running,
    };
    e.handle(0, ev) != Answer::Veto
}

fn uclamp_min(e: &mut Engine<Log>, tid: Tid) -> Option<u32> {
    match e.handle(0, Event::UclampEff { tid }) {
        Answer::UclampMin(v) => Some(v),
        _ => None,
    }
}

/// The grants due after a tick or pick that charged `curr`, whose wait record names `lock`,
/// which names `owner` now.
fn regrant(curr: Tid, lock: u64, owner: Tid) -> Event<'static> {
    Event::Regrant { curr, lock, owner }
}

fn ok(e: &Engine<Log>) {
    e.check_invariants().unwrap();
}

#[test]
fn mutex_owner_is_fast_tracked_until_release() {
    let mut e = engine();
    let b = e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert_eq!(b.as_slice(), &[200]);
    assert!(e.is_boosted(200));
    // The blocker sits on CPU 1's runqueue behind a hog (tid 300).
    assert!(
        e.enqueue(MS, 1, 200),
        "CPU should reschedule to run the blocker"
    );
    assert_eq!(e.pick(MS + 10, 1, 300), Some(200));
    assert_eq!(e.observer().picks, vec![(1, 200)]);
    ok(&e);
    e.owner_released(2 * MS, L1, 200);
    assert!(!e.is_boosted(200));
    assert_eq!(e.observer().revokes, vec![(200, RevokeReason::Released)]);
    // The time it ran up to the release is charged, though no tick came.
    assert_eq!(e.stats().get(Counter::FastTrackNs), MS - 10);
    assert_eq!(e.pick(2 * MS, 1, 300), None);
    e.wait_finish(2 * MS + 5, 100, L1);
    let s = e.stats();
    assert_eq!(s.blocking.count(), 1);
    assert_eq!(s.get(Counter::CriticalWaits), 1);
    assert_eq!(s.get(Counter::Picks), 1);
    ok(&e);
}

#[test]
fn non_critical_waits_are_ignored() {
    let mut e = engine();
    let b = e.wait_start(MS, 101, L1, LockKind::Mutex, Some(200));
    assert!(b.as_slice().is_empty());
    assert!(!e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::CriticalWaits), 0);
    assert!(!e.enqueue(MS, 0, 200));
    assert_eq!(e.pick(MS, 0, 2), None);
}

#[test]
fn disabled_engine_does_nothing_and_disabling_revokes() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.set_enabled(2 * MS, false);
    assert!(!e.is_boosted(200));
    assert_eq!(e.observer().revokes, vec![(200, RevokeReason::Disabled)]);
    let b = e.wait_start(3 * MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(b.as_slice().is_empty());
    ok(&e);
}

#[test]
fn waiter_done_ends_grant() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.wait_finish(2 * MS, 100, L1);
    assert!(!e.is_boosted(200));
    assert_eq!(e.observer().revokes, vec![(200, RevokeReason::WaiterDone)]);
    ok(&e);
}

#[test]
fn rwsem_writer_boosts_tracked_readers_and_counts_the_rest() {
    let mut e = engine_with(|t| t.max_readers = 2);
    for r in [201, 202, 203] {
        e.reader_acquired(MS, L1, r);
    }
    let b = e.wait_start(2 * MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(b.as_slice(), &[201, 202]);
    assert_eq!(e.stats().get(Counter::MissedReaders), 1);
    e.reader_released(3 * MS, L1, 201);
    assert!(!e.is_boosted(201) && e.is_boosted(202));
    assert!(
        e.is_boosted(203),
        "the recorded reader took 201's tracked place"
    );
    e.reader_released(3 * MS, L1, 203);
    e.reader_released(3 * MS, L1, 202);
    assert!(!e.is_boosted(202));
    ok(&e);
}

#[test]
fn rwsem_reader_waits_for_writer() {
    let mut e = engine();
    let b = e.wait_start(MS, 100, L1, LockKind::RwsemRead, Some(250));
    assert_eq!(b.as_slice(), &[250]);
}

#[test]
fn a_boosted_writer_waiting_for_unnamed_readers_is_a_counted_chain_wait() {
    // Critical reader 100 queues behind writer 200 (a percpu rw-semaphore: the writer the
    // platform recorded, the semaphore names no readers). The writer is still asleep waiting
    // for the readers inside to leave, which the platform hands over as a wait with no owner
    // on the semaphore's readers (a lock id of its own).
    let mut e = engine();
    let a = e.handle(MS, wait_on(100, L1, LockKind::RwsemRead, 200, 0));
    assert_eq!(a.newly_boosted(), &[200]);
    assert_eq!(e.stats().get(Counter::ChainNoBlocker), 0);
    let drain = L1 | 1;
    let a = asleep_wait(&mut e, MS, 200, drain, LockKind::RwsemWrite, 0, &[]);
    assert_eq!(a.newly_boosted(), &[] as &[Tid]);
    assert_eq!(e.stats().get(Counter::ChainWaits), 1);
    assert_eq!(e.stats().get(Counter::ChainNoBlocker), 1);
    assert_eq!(e.stats().get(Counter::NoBlockerKnown), 0);
    // The writer stays boosted while it waits: the readers' leaving wakes it onto the fast
    // track, and its own acquire ends its wait.
    assert!(e.is_boosted(200));
    e.handle(
        2 * MS,
        Event::WaitFinish {
            waiter: 200,
            lock: drain,
        },
    );
    assert!(e.is_boosted(200));
    e.check_invariants().unwrap();
}

#[test]
fn chains_follow_blockers_up_to_max_depth() {
    let mut e = engine();
    // 100 waits on L1 held by 200; 200 waits on L2 held by 300; 300 waits on L3 held by 400...
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    let b = e.wait_start(MS + 1, 200, L2, LockKind::Mutex, Some(300));
    assert_eq!(b.as_slice(), &[300]);
    let b = e.wait_start(MS + 2, 300, 0x3000, LockKind::Mutex, Some(400));
    assert_eq!(b.as_slice(), &[400]);
    // Default max_depth is 3: the fourth link is counted, not granted.
    let b = e.wait_start(MS + 3, 400, 0x4000, LockKind::Mutex, Some(500));
    assert!(b.as_slice().is_empty());
    assert_eq!(e.stats().get(Counter::MissedDepth), 1);
    assert_eq!(
        e.observer().grants,
        vec![(200, 100, 1), (300, 200, 2), (400, 300, 3)]
    );
    ok(&e);
    // When 200's own wait ends, the grant to 300 (and the one hanging from it) end.
    e.wait_finish(2 * MS, 200, L2);
    assert!(e.is_boosted(200) && !e.is_boosted(300) && !e.is_boosted(400));
    ok(&e);
    // The critical waiter getting its lock ends everything.
    e.wait_finish(3 * MS, 100, L1);
    assert_eq!(e.fast_track().boosted_count(), 0);
    ok(&e);
}

#[test]
fn a_woken_link_that_loses_its_retry_has_the_lock_s_new_holder_granted_at_its_sleep() {
    let mut e = engine();
    // 100 waits on L1 held by 200; 200, boosted, waits on L2 held by 300.
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert_eq!(
        e.wait_start(MS + 1, 200, L2, LockKind::Mutex, Some(300))
            .as_slice(),
        &[300]
    );
    // 300 releases L2 and wakes 200, which runs on its own boost.
    e.owner_released(2 * MS, L2, 300);
    e.waiter_woken(2 * MS, L2, 200, 300);
    let enq = Event::Enqueue {
        cpu: 1,
        tid: 200,
        handle: 8,
        curr: 0,
    };
    e.handle(2 * MS, enq);
    assert!(e.is_boosted(200) && !e.is_boosted(300));
    assert_ne!(
        e.published(2 * MS).woken_lanes & (1 << (200 % 64)),
        0,
        "the woken link's sleep is to be reported"
    );
    ok(&e);
    // 300 took L2 back where no probe saw it: 200 retries, loses and sleeps. The lock names 300.
    e.handle(3 * MS, Event::Dequeue { cpu: 1, tid: 200 });
    let slept = Event::WaiterSlept {
        tid: 200,
        lock: L2,
        owner: 300,
    };
    assert_eq!(e.handle(3 * MS, slept).newly_boosted(), &[300]);
    assert_eq!(e.observer().grants.last(), Some(&(300, 200, 2)));
    assert_eq!(e.stats().get(Counter::ResumedWaits), 1);
    assert_eq!(e.published(3 * MS).woken_lanes, 0);
    ok(&e);
    // 200 gets L2 at last: 300's grant for it ends with the wait.
    e.wait_finish(4 * MS, 200, L2);
    assert!(e.is_boosted(200) && !e.is_boosted(300));
    ok(&e);
}

#[test]
fn a_wait_is_forgotten_when_it_ends_after_its_task_stopped_mattering() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.wait_start(MS + 1, 200, L2, LockKind::Mutex, Some(300));
    // 100 gets L1: 200 is no longer boosted, but still waits on L2.
    e.wait_finish(2 * MS, 100, L1);
    assert!(!e.is_boosted(200));
    assert!(e.detector().wait_of(200).is_some());
    e.wait_finish(3 * MS, 200, L2);
    assert!(
        e.detector().wait_of(200).is_none(),
        "a stale record would pin a wait slot and L2's slot until 200 exits"
    );
    ok(&e);
    // The same for a critical thread unregistered while it waits.
    e.wait_start(4 * MS, 100, L1, LockKind::Mutex, Some(200));
    e.remove_critical(5 * MS, 100).unwrap();
    e.wait_finish(6 * MS, 100, L1);
    assert!(e.detector().wait_of(100).is_none());
    assert_eq!(e.detector().waits().count(), 0);
    ok(&e);
}

#[test]
fn chain_collapses_when_a_middle_link_is_released() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.wait_start(MS + 1, 200, L2, LockKind::Mutex, Some(300));
    // 200 releases L1 while still waiting on L2 (odd, but the chain must not dangle).
    e.owner_released(2 * MS, L1, 200);
    assert!(!e.is_boosted(200));
    assert!(!e.is_boosted(300), "grant via an unboosted link must end");
    ok(&e);
}

/// Critical 100 waits on L1 held by 200, which is boosted, queued on CPU 0 and picked there.
fn blocker_running_on_cpu0(e: &mut Engine<Log>) {
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    assert_eq!(e.pick(0, 0, 300), Some(200));
}

#[test]
fn budget_bounds_fast_tracked_cpu() {
    let mut e = engine();
    let budget = e.tunables().budget_ns;
    blocker_running_on_cpu0(&mut e);
    let mut now = 0;
    let mut resched = false;
    while !resched {
        now += MS;
        resched = e.tick(now, 0, 200);
        ok(&e);
        assert!(now <= budget + MS, "budget overrun");
    }
    assert!(!e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::RevokeBudget), 1);
    assert!(e.stats().get(Counter::FastTrackNs) >= budget);
    assert_eq!(e.pick(now, 0, 300), None);
}

#[test]
fn a_blocker_revoked_on_its_budget_is_granted_again_a_window_later() {
    let mut e = engine();
    let (budget, window) = (e.tunables().budget_ns, e.tunables().throttle_window_ns);
    blocker_running_on_cpu0(&mut e);
    // A tick, then the grants due by then, as a platform sends them.
    let tick = |e: &mut Engine<Log>, now| {
        let t = e.handle(now, Event::Tick { cpu: 0, curr: 200 });
        (t, e.handle(now, regrant(200, 0, 0)))
    };
    assert_eq!(tick(&mut e, budget), (Answer::Resched, Answer::None));
    assert!(!e.is_boosted(200));
    assert!(e.regrants_pending());
    // Still holding the lock the critical thread waits on, but within the same window: nothing.
    assert_eq!(
        tick(&mut e, budget + window - 1),
        (Answer::None, Answer::None)
    );
    assert!(!e.is_boosted(200));
    ok(&e);
    // Its window has passed: granted again, with a fresh budget.
    let (_, a) = tick(&mut e, budget + window);
    assert_eq!(a.newly_boosted(), &[200]);
    assert!(e.is_boosted(200) && !e.regrants_pending());
    assert_eq!(e.fast_track().used_ns(200), Some(0));
    assert_eq!(e.stats().get(Counter::BudgetRegrants), 1);
    ok(&e);
}

#[test]
fn a_budget_revoked_holder_stays_in_the_interest_lanes_until_its_window_passes() {
    let mut e = engine();
    let (budget, window) = (e.tunables().budget_ns, e.tunables().throttle_window_ns);
    blocker_running_on_cpu0(&mut e);
    e.handle(budget, Event::Tick { cpu: 0, curr: 200 });
    assert!(!e.is_boosted(200));
    // Its release (or a binder server's reply) must still reach the engine: the lanes a
    // platform's probes test say so, though it is neither boosted nor waiting.
    let p = e.published(budget);
    assert!(lanes_may_contain(p.interest_lanes, 200));
    assert!(!lanes_may_contain(p.boosted_lanes, 200));
    e.handle(budget + window, regrant(200, 0, 0));
    assert!(e.is_boosted(200));
    ok(&e);
}

#[test]
fn a_budget_revoked_task_that_let_go_of_the_lock_is_not_granted_again() {
    let mut e = engine();
    let (budget, window) = (e.tunables().budget_ns, e.tunables().throttle_window_ns);
    blocker_running_on_cpu0(&mut e);
    e.tick(budget, 0, 200);
    e.owner_released(budget + 1, L1, 200);
    e.handle(budget + window, Event::Tick { cpu: 0, curr: 300 });
    assert_eq!(e.handle(budget + window, regrant(0, 0, 0)), Answer::None);
    assert!(!e.is_boosted(200) && !e.regrants_pending());
    assert_eq!(e.stats().get(Counter::BudgetRegrants), 0);
    ok(&e);
}

#[test]
fn lock_seen_replaces_a_stale_record_of_holders() {
    let mut e = engine();
    // Reader 200 entered while its events reached the engine, then left unseen.
    e.reader_acquired(0, L1, 200);
    lock_seen(&mut e, MS, L1, 0, &[300, 301, 300]);
    let b = e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(
        b.as_slice(),
        &[300, 301],
        "the platform's readers, once each"
    );
    assert!(!e.is_boosted(200));
    // While the wait is tracked, the engine's record is live: a late view changes nothing.
    lock_seen(&mut e, 2 * MS, L1, 0, &[400]);
    assert!(e.detector().holds(L1, 300) && !e.detector().holds(L1, 400));
    // A reader already recorded is not recorded twice.
    e.reader_acquired(2 * MS, L1, 301);
    e.reader_released(3 * MS, L1, 301);
    assert!(!e.detector().holds(L1, 301));
    ok(&e);
}

#[test]
fn lock_seen_names_the_writer_over_a_stale_one() {
    let mut e = engine();
    e.reader_acquired(0, L1, 201);
    e.owner_acquired(0, L1, 200);
    assert!(e.detector().holds(L1, 200), "the table follows the lock");
    lock_seen(&mut e, MS, L1, 0, &[]);
    let b = e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert!(
        b.as_slice().is_empty(),
        "the holders left unseen: no blocker"
    );
    ok(&e);
}

#[test]
fn lock_lanes_cover_the_locks_waited_on() {
    let mut e = engine();
    assert_eq!(e.lock_lanes(), 0);
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    let lanes = e.lock_lanes();
    assert_ne!(lanes & (1 << superpass_core::lock_lane(L1)), 0);
    assert_eq!(lanes.count_ones(), 1);
    e.wait_finish(MS, 100, L1);
    assert_eq!(e.lock_lanes(), 0);
}

#[test]
fn deadline_is_the_moment_the_budget_runs_out() {
    let mut e = engine();
    let budget = e.tunables().budget_ns;
    assert_eq!(e.deadline(0), None, "nothing boosted runs");
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    assert_eq!(e.pick(10, 0, 300), Some(200));
    assert_eq!(e.deadline(0), Some(10 + budget));
    assert_eq!(e.deadline(1), None, "CPU 1 runs no boosted task");
    // Charged part of the budget, then picked again: the rest is what is left.
    assert_eq!(e.pick(10 + 3 * MS, 0, 300), Some(200));
    assert_eq!(e.deadline(0), Some(10 + budget));
    // Asked at the deadline, the pick ends the grant, with no tick in between.
    assert_eq!(e.pick(10 + budget, 0, 300), None);
    assert!(!e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::FastTrackNs), budget);
    assert_eq!(e.deadline(0), None);
    ok(&e);
}

/// Two critical threads, each blocked by its own owner (200, 201), both boosted on CPU 0.
fn two_boosted_on_cpu0() -> Engine<Log> {
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.wait_start(0, 101, L2, LockKind::Mutex, Some(201));
    e.enqueue(0, 0, 200);
    e.enqueue(0, 0, 201);
    e
}

#[test]
fn deadline_ends_the_slice_when_others_queue() {
    let mut e = two_boosted_on_cpu0();
    assert_eq!(e.pick(0, 0, 300), Some(200));
    let slice = e.tunables().slice_ns;
    assert_eq!(e.deadline(0), Some(slice));
    assert_eq!(e.pick(slice, 0, 300), Some(201));
    assert_eq!(e.deadline(0), Some(2 * slice));
    ok(&e);
}

#[test]
fn slice_rotates_between_boosted_tasks_on_one_cpu() {
    let mut e = two_boosted_on_cpu0();
    assert_eq!(e.pick(0, 0, 300), Some(200));
    let slice = e.tunables().slice_ns;
    assert!(!e.tick(slice / 2, 0, 200));
    assert!(e.tick(slice, 0, 200), "slice over: reschedule");
    assert_eq!(e.pick(slice, 0, 300), Some(201));
    assert_eq!(e.stats().get(Counter::Rotations), 1);
    ok(&e);
}

#[test]
fn throttle_caps_cpu_share_per_window() {
    let mut e = engine_with(|t| {
        t.budget_ns = 100 * MS;
        t.slice_ns = 20 * MS;
        t.throttle_window_ns = 100 * MS;
        t.throttle_max_pct = 30;
    });
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    assert_eq!(e.pick(0, 0, 300), Some(200));
    let mut now = 0;
    while !e.fast_track().throttled(0) {
        now += MS;
        e.tick(now, 0, 200);
    }
    assert_eq!(now, 30 * MS);
    assert_eq!(
        e.pick(now, 0, 300),
        None,
        "throttled CPU falls back to stock"
    );
    assert!(!e.should_preempt(now, 0, 300, 200));
    // The next window restores the fast track.
    now = 100 * MS;
    e.tick(now, 0, 300);
    assert_eq!(e.pick(now, 0, 300), Some(200));
    ok(&e);
}

#[test]
fn critical_threads_are_never_displaced_or_preempted() {
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    assert_eq!(e.pick(1, 0, 101), None, "the RenderThread keeps its pick");
    assert!(!e.should_preempt(1, 0, 101, 200), "nor is it preempted");
    assert_eq!(
        e.pick(2, 0, 300),
        Some(200),
        "a non-critical pick is replaced"
    );
    ok(&e);
}

#[test]
fn preempt_and_select_cpu() {
    let mut e = engine();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    assert!(e.should_preempt(1, 0, 300, 200));
    assert!(!e.should_preempt(1, 0, 300, 301), "non-boosted waking task");
    assert_eq!(
        e.select_cpu(1, 200, 1, 0b10, 0b11),
        Some(1),
        "idle prev CPU first"
    );
    assert_eq!(
        e.select_cpu(1, 200, 1, 0b01, 0b11),
        Some(0),
        "else an idle CPU"
    );
    assert_eq!(
        e.select_cpu(1, 200, 1, 0b00, 0b11),
        None,
        "no idle CPU: stock placement"
    );
    assert_eq!(
        e.select_cpu(1, 200, 1, 0b01, 0b10),
        None,
        "respects affinity"
    );
    assert_eq!(e.select_cpu(1, 301, 1, 0b11, 0b11), None, "not boosted");
}

#[test]
fn exit_drops_every_reference() {
    let mut e = engine();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    e.pick(0, 0, 300);
    e.task_exit(MS, 200);
    assert!(!e.is_boosted(200));
    assert_eq!(e.pick(MS, 0, 300), None);
    ok(&e);
    // A critical thread exiting leaves the set, so a reused TID is not critical.
    e.wait_start(2 * MS, 100, L2, LockKind::Mutex, Some(201));
    e.task_exit(3 * MS, 100);
    assert!(!e.critical().contains(100));
    assert!(!e.is_boosted(201));
    ok(&e);
}

#[test]
fn unregistering_ends_grants() {
    let mut e = engine();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.remove_critical(MS, 100).unwrap();
    assert!(!e.is_boosted(200));
    assert_eq!(
        e.observer().revokes,
        vec![(200, RevokeReason::Unregistered)]
    );
    assert_eq!(e.remove_critical(MS, 100), Err(AbiError::NotFound));
    ok(&e);
}

#[test]
fn grant_table_bound_is_counted() {
    let mut e = engine_with(|t| t.max_grants = 2);
    for r in [201, 202, 203] {
        e.reader_acquired(0, L1, r);
    }
    let b = e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(b.as_slice().len(), 2);
    assert_eq!(e.stats().get(Counter::MissedGrants), 1);
    ok(&e);
}

#[test]
fn queue_cap_is_counted() {
    let mut e = engine_with(|t| t.queue_cap = 1);
    e.reader_acquired(0, L1, 201);
    e.reader_acquired(0, L1, 202);
    e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    e.enqueue(MS, 0, 201);
    e.enqueue(MS, 0, 202);
    assert_eq!(e.stats().get(Counter::MissedQueue), 1);
    ok(&e);
}

#[test]
fn migration_moves_queue_membership() {
    let mut e = engine();
    e.wait_start(0, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(0, 0, 200);
    e.enqueue(1, 1, 200); // enqueued elsewhere without a dequeue: it moved
    assert_eq!(e.pick(2, 0, 300), None);
    assert_eq!(e.pick(2, 1, 300), Some(200));
    e.dequeue(3, 1, 200);
    assert_eq!(e.pick(4, 1, 300), None);
    ok(&e);
}

#[test]
fn ioctl_path_applies_requests_and_rejects_bad_ones() {
    let mut e: Engine<NoObserver> = Engine::new(2, NoObserver);
    let mut buf = vec![0u8; 16384];
    let l = abi::CriticalList::new(&[(10, Role::Ui), (11, Role::Render)]).unwrap();
    l.encode(&mut buf).unwrap();
    assert_eq!(
        e.ioctl(0, abi::SET_CRITICAL, &mut buf[..abi::CriticalList::SIZE]),
        Ok(0)
    );
    assert_eq!(e.critical().len(), 2);

    abi::request_header(abi::GET_CRITICAL, &mut buf).unwrap();
    let n = e
        .ioctl(0, abi::GET_CRITICAL, &mut buf[..abi::CriticalList::SIZE])
        .unwrap();
    // Replies carry the generation, which a request must leave zero.
    assert_eq!(
        abi::CriticalList::decode(&buf[..n]),
        Err(AbiError::Reserved)
    );
    let got = abi::CriticalList::decode_reply(&buf[..n]).unwrap();
    assert_eq!(got.entries().len(), 2);
    assert_eq!(got.generation, e.critical().generation());

    abi::Enable::new(true).encode(&mut buf).unwrap();
    e.ioctl(0, abi::SET_ENABLED, &mut buf[..16]).unwrap();
    assert!(e.enabled());

    abi::request_header(abi::GET_TUNABLES, &mut buf).unwrap();
    let n = e
        .ioctl(0, abi::GET_TUNABLES, &mut buf[..abi::TunablesMsg::SIZE])
        .unwrap();
    let mut t = abi::TunablesMsg::decode(&buf[..n])
        .unwrap()
        .tunables()
        .unwrap();
    t.max_depth = 5;
    abi::TunablesMsg::new(&t).encode(&mut buf).unwrap();
    e.ioctl(0, abi::SET_TUNABLES, &mut buf[..abi::TunablesMsg::SIZE])
        .unwrap();
    assert_eq!(e.tunables().max_depth, 5);

    abi::CriticalOne::new(12, Role::Other)
        .encode(&mut buf)
        .unwrap();
    e.ioctl(0, abi::ADD_CRITICAL, &mut buf[..16]).unwrap();
    abi::TidMsg::new(99).encode(&mut buf).unwrap();
    assert_eq!(
        e.ioctl(0, abi::REMOVE_CRITICAL, &mut buf[..16]),
        Err(AbiError::NotFound)
    );
    assert_eq!(
        e.ioctl(0, 0xdead, &mut buf[..16]),
        Err(AbiError::UnknownCommand)
    );

    e.wait_start(0, 10, L1, LockKind::Mutex, Some(20));
    e.wait_finish(5 * MS, 10, L1);
    abi::request_header(abi::GET_STATS, &mut buf).unwrap();
    let n = e
        .ioctl(0, abi::GET_STATS, &mut buf[..abi::StatsMsg::SIZE])
        .unwrap();
    let s = abi::StatsMsg::decode(&buf[..n]).unwrap();
    assert_eq!(s.ncritical, 3);
    assert_eq!(s.enabled, 1);
    assert_eq!(s.histogram().count(), 1);
    assert_eq!(s.histogram().max(), 5 * MS);

    abi::Header::for_size(8).encode(&mut buf).unwrap();
    e.ioctl(0, abi::RESET_STATS, &mut buf[..8]).unwrap();
    assert_eq!(e.stats().blocking.count(), 0);

    let too_many = abi::CriticalList::new(&[(1, Role::Ui); 32]).unwrap();
    too_many.encode(&mut buf).unwrap();
    assert_eq!(
        e.ioctl(0, abi::SET_CRITICAL, &mut buf[..abi::CriticalList::SIZE]),
        Err(AbiError::BadTid),
        "duplicate TIDs"
    );
}

/// A caller in a child PID namespace: its TID `t` is the engine's `t + 1000`, and it sees no
/// engine TID below 1000.
struct ChildNamespace;

impl abi::TidSpace for ChildNamespace {
    fn to_engine(&self, tid: Tid) -> Option<Tid> {
        (tid < 500).then_some(tid + 1000)
    }

    fn to_caller(&self, tid: Tid) -> Option<Tid> {
        (tid >= 1000).then_some(tid - 1000)
    }
}

/// Runs `cmd` from a `ChildNamespace` caller as the module does: decode, rename, apply.
fn child_ioctl(e: &mut Engine<NoObserver>, cmd: u32, buf: &mut [u8]) -> Result<usize, AbiError> {
    let mut req = abi::Request::decode(cmd, buf)?;
    req.to_engine(&ChildNamespace)?;
    e.apply(0, &req, buf, &ChildNamespace)
}

#[test]
fn a_caller_in_a_child_pid_namespace_names_threads_by_its_own_tids() {
    let mut e: Engine<NoObserver> = Engine::new(2, NoObserver);
    let mut buf = vec![0u8; 16384];
    let size = abi::CriticalList::SIZE;
    abi::CriticalList::new(&[(10, Role::Ui), (11, Role::Render)])
        .unwrap()
        .encode(&mut buf)
        .unwrap();
    assert_eq!(
        child_ioctl(&mut e, abi::SET_CRITICAL, &mut buf[..size]),
        Ok(0)
    );
    // The engine holds the TIDs its hooks will report.
    assert!(e.critical().contains(1010) && e.critical().contains(1011));
    assert!(!e.critical().contains(10));
    // A thread the caller cannot see is no thread to it.
    abi::CriticalOne::new(600, Role::Other)
        .encode(&mut buf)
        .unwrap();
    assert_eq!(
        child_ioctl(&mut e, abi::ADD_CRITICAL, &mut buf[..16]),
        Err(AbiError::NoSuchTask)
    );
    abi::TidMsg::new(600).encode(&mut buf).unwrap();
    assert_eq!(
        child_ioctl(&mut e, abi::REMOVE_CRITICAL, &mut buf[..16]),
        Err(AbiError::NotFound)
    );
    // One registered from the initial namespace, which this caller cannot see.
    abi::CriticalOne::new(7, Role::Other)
        .encode(&mut buf)
        .unwrap();
    e.ioctl(0, abi::ADD_CRITICAL, &mut buf[..16]).unwrap();
    abi::request_header(abi::GET_CRITICAL, &mut buf).unwrap();
    let n = child_ioctl(&mut e, abi::GET_CRITICAL, &mut buf[..size]).unwrap();
    let got = abi::CriticalList::decode_reply(&buf[..n]).unwrap();
    let tids: Vec<Tid> = got.entries().iter().map(|x| x.tid).collect();
    assert_eq!(tids, [10, 11]);
    abi::TidMsg::new(11).encode(&mut buf).unwrap();
    assert_eq!(
        child_ioctl(&mut e, abi::REMOVE_CRITICAL, &mut buf[..16]),
        Ok(0)
    );
    assert!(!e.critical().contains(1011));
}

#[test]
fn a_wait_follows_its_mutex_through_every_change_of_owner() {
    let mut e = engine();
    e.owner_acquired(0, L1, 200);
    assert_eq!(
        e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200))
            .as_slice(),
        &[200]
    );
    e.owner_released(2 * MS, L1, 200);
    assert!(!e.is_boosted(200));
    // Another thread barges in while the critical thread waits: it is the blocker now.
    assert_eq!(e.owner_acquired(2 * MS, L1, 201).as_slice(), &[201]);
    assert!(e.is_boosted(201));
    // Taken over without a release the platform saw: the old owner's grant ends too.
    assert_eq!(e.owner_acquired(3 * MS, L1, 202).as_slice(), &[202]);
    assert!(!e.is_boosted(201) && e.is_boosted(202));
    assert_eq!(e.stats().get(Counter::FollowGrants), 2);
    ok(&e);
    // The critical thread itself takes it: nothing more to follow.
    e.owner_released(4 * MS, L1, 202);
    assert!(e.owner_acquired(4 * MS, L1, 100).as_slice().is_empty());
    e.wait_finish(4 * MS, 100, L1);
    assert_eq!(e.fast_track().grants().count(), 0);
    ok(&e);
}

#[test]
fn an_owner_change_on_a_lock_nobody_critical_waits_on_grants_nothing() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(e.owner_acquired(MS, L2, 300).as_slice().is_empty());
    assert!(!e.is_boosted(300));
    ok(&e);
}

#[test]
fn a_waiter_woken_ahead_of_a_critical_one_is_boosted_until_it_is_done() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    // 150 queued before the critical thread; the release wakes it, not the critical thread.
    e.owner_released(2 * MS, L1, 200);
    assert_eq!(e.waiter_woken(2 * MS, L1, 150, 200).as_slice(), &[150]);
    assert_eq!(e.stats().get(Counter::HandoffGrants), 1);
    ok(&e);
    // It runs, takes the lock (mutex order: wait finish, then the acquire) and stays boosted.
    e.wait_finish(3 * MS, 150, L1);
    assert!(
        !e.is_boosted(150),
        "its wait is over and it does not hold the lock yet"
    );
    assert_eq!(e.owner_acquired(3 * MS, L1, 150).as_slice(), &[150]);
    ok(&e);
    e.owner_released(4 * MS, L1, 150);
    assert!(!e.is_boosted(150));
    // Waking the critical thread itself boosts only the critical thread, for its retry.
    assert_eq!(e.waiter_woken(4 * MS, L1, 100, 150).as_slice(), &[100]);
    ok(&e);
}

#[test]
fn a_holder_that_takes_the_lock_before_the_woken_critical_waiter_runs_waits_for_its_retry() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(e.is_boosted(200));
    // The release wakes the critical thread; before it runs, the releaser takes the lock
    // again (a running task may: no handoff is pending yet).
    e.owner_released(2 * MS, L1, 200);
    assert_eq!(e.waiter_woken(2 * MS, L1, 100, 200).as_slice(), &[100]);
    assert!(sleep_reported(&e, 100));
    assert!(e.owner_acquired(2 * MS, L1, 200).as_slice().is_empty());
    assert!(
        !e.is_boosted(200),
        "boosted, it would keep the woken waiter off the CPU"
    );
    assert_eq!(e.stats().get(Counter::DeferredGrants), 1);
    ok(&e);
    // A sleep of a task that is not a woken waiter changes nothing.
    assert!(e.waiter_slept(2 * MS, 300, L1, 200).as_slice().is_empty());
    // The critical thread ran, lost its retry and sleeps again: the holder blocks it again,
    // and its wake turn is over.
    assert_eq!(e.waiter_slept(3 * MS, 100, L1, 200).as_slice(), &[200]);
    assert!(e.is_boosted(200));
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::ResumedWaits), 1);
    assert_eq!(e.woken_lanes(), 0);
    ok(&e);
    // The wait kept its start: the blocking time counts from the first attempt.
    e.owner_released(4 * MS, L1, 200);
    e.waiter_woken(4 * MS, L1, 100, 200);
    e.wait_finish(5 * MS, 100, L1);
    assert_eq!(e.stats().blocking.max(), 4 * MS);
    assert_eq!(e.woken_lanes(), 0);
    assert_eq!(e.fast_track().grants().count(), 0);
    ok(&e);
}

#[test]
fn a_woken_waiter_that_gives_up_loses_its_boost() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 150, 200);
    e.wait_finish(3 * MS, 150, L1);
    assert!(!e.is_boosted(150));
    ok(&e);
}

#[test]
fn a_woken_rwsem_writer_keeps_its_boost_when_the_owner_hook_came_first() {
    // rwsem order: the new writer is recorded as owner before its wait finishes.
    let mut e = engine();
    e.reader_acquired(0, L1, 201);
    e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    e.reader_released(2 * MS, L1, 201);
    e.waiter_woken(2 * MS, L1, 150, 201);
    e.owner_acquired(3 * MS, L1, 150);
    e.wait_finish(3 * MS, 150, L1);
    assert!(e.is_boosted(150));
    ok(&e);
}

#[test]
fn a_downgraded_writer_is_a_reader_and_new_readers_block_too() {
    let mut e = engine();
    e.owner_acquired(0, L1, 200);
    e.wait_start(MS, 100, L1, LockKind::RwsemWrite, Some(200));
    assert!(e.is_boosted(200));
    // downgrade_write: the writer takes a read hold and stops being the owner.
    e.reader_acquired(2 * MS, L1, 200);
    let (owner, readers, _) = e.detector().holders(L1).unwrap();
    assert_eq!((owner, readers), (0, &[200][..]));
    assert!(e.is_boosted(200), "still a holder, as a reader");
    // Readers the downgrade let in block the critical writer as well.
    assert_eq!(e.reader_acquired(2 * MS, L1, 201).as_slice(), &[201]);
    // A new wait names the readers, not the ex-writer as owner.
    e.wait_finish(3 * MS, 100, L1);
    let b = e.wait_start(3 * MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(b.as_slice(), &[200, 201]);
    ok(&e);
}

#[test]
fn a_reader_storm_above_the_bound_is_covered_as_it_drains() {
    let mut e = engine();
    let readers: Vec<Tid> = (201..=212).collect();
    for &r in &readers {
        e.reader_acquired(0, L1, r);
    }
    let b = e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(b.as_slice(), &readers[..4]);
    let mut boosted_ever: Vec<Tid> = b.as_slice().to_vec();
    for (i, &r) in readers.iter().enumerate() {
        let got = e.reader_released(MS + i as Nanos, L1, r);
        boosted_ever.extend_from_slice(got.as_slice());
        // While readers remain, min(4, remaining) of them are boosted.
        let left = &readers[i + 1..];
        let n = left.iter().filter(|&&x| e.is_boosted(x)).count();
        assert_eq!(n, left.len().min(4), "after {r} left");
        ok(&e);
    }
    assert_eq!(boosted_ever, readers);
    assert_eq!(e.stats().get(Counter::ReadersSeen), 12);
    assert_eq!(e.stats().get(Counter::ReadersTracked), 12);
}

#[test]
fn handle_dispatches_every_lock_event_like_the_methods() {
    use superpass_core::{Answer, Event};
    let mut a = engine();
    let mut b = engine();
    let script = [
        Event::OwnerAcquired { lock: L1, tid: 200 },
        Event::from_hook_wait_start(100, L1, LockKind::Mutex as u32, 200, 0).unwrap(),
        Event::from_hook_owner(L1, 200, false),
        Event::WaiterWoken {
            lock: L1,
            tid: 150,
            waker: 200,
        },
        Event::WaitFinish {
            waiter: 150,
            lock: L1,
        },
        Event::from_hook_owner(L1, 150, true),
        Event::Enqueue {
            cpu: 1,
            tid: 150,
            handle: 0,
            curr: 0,
        },
        Event::Pick {
            cpu: 1,
            fair_next: 300,
        },
    ];
    let mut answers = Vec::new();
    for (i, ev) in script.iter().enumerate() {
        answers.push(a.handle(MS + i as Nanos, *ev));
    }
    let now = |i: u64| MS + i;
    b.owner_acquired(now(0), L1, 200);
    assert_eq!(
        answers[1].newly_boosted(),
        b.wait_start(now(1), 100, L1, LockKind::Mutex, Some(200))
            .as_slice()
    );
    b.owner_released(now(2), L1, 200);
    assert_eq!(
        answers[3].newly_boosted(),
        b.waiter_woken(now(3), L1, 150, 200).as_slice()
    );
    b.wait_finish(now(4), 150, L1);
    assert_eq!(
        answers[5].newly_boosted(),
        b.owner_acquired(now(5), L1, 150).as_slice()
    );
    assert_eq!(answers[6], Answer::Resched);
    assert!(b.enqueue(now(6), 1, 150));
    assert_eq!(
        answers[7],
        Answer::Run {
            tid: 150,
            handle: 0
        }
    );
    assert_eq!(b.pick(now(7), 1, 300), Some(150));
    assert_eq!(a.observer().grants, b.observer().grants);
}

#[test]
fn an_owner_hinted_futex_wait_boosts_the_named_holder_until_the_wait_ends() {
    use superpass_core::{futex_wait_lock, Answer, Event};
    let mut e = engine();
    futex_wait_for_200(&mut e);
    assert!(e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::FutexHints), 1);
    // The holder's release (unseen: a futex is released in user space) wakes a non-critical
    // waiter queued ahead: it is the next holder, and the waker holds the lock no more.
    let woken = Event::from_hook_futex_woken(100, 300, 200);
    assert_eq!(
        woken,
        Event::WaiterWoken {
            lock: futex_wait_lock(100),
            tid: 300,
            waker: 200,
        }
    );
    assert_eq!(e.handle(2 * MS, woken).newly_boosted(), &[300]);
    assert!(
        e.is_boosted(200),
        "the waker has yet to make the woken waiter runnable"
    );
    ok(&e);
    // The woken waiter joins a runqueue: the wake is done, and a boosted waker would keep
    // the woken holder off its CPU.
    e.handle(
        2 * MS,
        Event::Enqueue {
            cpu: 0,
            tid: 300,
            handle: 0,
            curr: 0,
        },
    );
    assert!(!e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::RevokeReleased), 1);
    ok(&e);
    assert_eq!(
        e.handle(3 * MS, Event::from_hook_futex_wait_end(100)),
        Answer::None
    );
    assert!(!e.is_boosted(200) && !e.is_boosted(300));
    assert_eq!(e.stats().blocking.count(), 1);
    ok(&e);
}

#[test]
fn futex_hints_count_only_from_tracked_threads_and_only_when_valid() {
    use superpass_core::Event;
    let mut e = engine();
    let hint = |waiter, owner, valid| Event::FutexWait {
        waiter,
        owner,
        valid,
        cpu: 0,
    };
    // Not critical, not boosted: ignored, not even counted.
    assert_eq!(
        e.handle(MS, hint(101, 200, true)).newly_boosted(),
        &[] as &[Tid]
    );
    assert_eq!(e.stats().get(Counter::FutexHints), 0);
    // The platform refused the name (not a live thread of the waiter's process).
    assert!(e
        .handle(MS, hint(100, 200, false))
        .newly_boosted()
        .is_empty());
    // The waiter named itself.
    assert!(e
        .handle(MS, hint(100, 100, true))
        .newly_boosted()
        .is_empty());
    assert_eq!(e.stats().get(Counter::FutexHintsRejected), 2);
    assert!(!e.is_boosted(200));
    // A woken waiter of a futex nobody tracked waits on gets nothing.
    let woken = Event::from_hook_futex_woken(100, 300, 200);
    assert!(e.handle(MS, woken).newly_boosted().is_empty());
    ok(&e);
}

#[test]
fn critical_and_boosted_futex_waiters_queue_first_others_keep_their_place() {
    let queue = |waiter| Event::FutexQueue { waiter };
    let mut e = engine();
    // A background thread keeps the kernel's order.
    assert_eq!(e.handle(MS, queue(300)), Answer::None);
    // The critical thread goes ahead of it.
    assert_eq!(e.handle(MS, queue(100)), Answer::First);
    // So does its blocker once boosted, a link of its chain.
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 0));
    assert!(e.is_boosted(200));
    assert_eq!(e.handle(MS, queue(200)), Answer::First);
    assert_eq!(e.stats().get(Counter::QueuedFirst), 2);
    ok(&e);
    // Off: the kernel's order for everyone.
    let mut e = engine_with(|t| t.queue_first = 0);
    assert_eq!(e.handle(MS, queue(100)), Answer::None);
    // Disabled: nothing is anyone's business.
    let mut e = engine();
    e.set_enabled(0, false);
    assert_eq!(e.handle(MS, queue(100)), Answer::None);
    assert_eq!(e.stats().get(Counter::QueuedFirst), 0);
}

#[test]
fn a_pi_futex_owner_is_boosted_like_a_mutex_owner() {
    let mut e = engine();
    let b = e.wait_start(MS, 100, L2, LockKind::PiFutex, Some(200));
    assert_eq!(b.as_slice(), &[200]);
    // The owner waits on a kernel mutex: the chain goes through the PI futex.
    let b = e.wait_start(2 * MS, 200, L1, LockKind::Mutex, Some(201));
    assert_eq!(b.as_slice(), &[201]);
    ok(&e);
    e.wait_finish(3 * MS, 100, L2);
    assert!(!e.is_boosted(200) && !e.is_boosted(201));
    ok(&e);
}

#[test]
fn a_waking_blocker_goes_to_an_idle_fast_cpu_first() {
    let mut e = engine8();
    // CPUs 4-7 are the big cores.
    e.set_fast_cpus(0xf0);
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    // Idle: little CPU 1 (where it ran) and big CPU 6: the big one wins.
    assert_eq!(e.select_cpu(MS, 200, 1, 0b0100_0010, 0xff), Some(6));
    // Its previous CPU is an idle big one: it stays.
    assert_eq!(e.select_cpu(MS, 200, 5, 0b0110_0010, 0xff), Some(5));
    // No idle big CPU it may use: the idle little one, preferring where it ran.
    assert_eq!(e.select_cpu(MS, 200, 1, 0b0100_0011, 0x0f), Some(1));
    // Nothing idle: the stock choice stands.
    assert_eq!(e.select_cpu(MS, 200, 1, 0, 0xff), None);
    // Not boosted: no opinion.
    assert_eq!(e.select_cpu(MS, 300, 1, 0xff, 0xff), None);
    ok(&e);
}

#[test]
fn lock_operation_probes_are_wanted_while_waits_need_them_and_linger() {
    use superpass_core::probes::{ALL, OWNERS};
    let mut e = engine_with(|t| t.readers_while_critical = 0);
    let linger = e.tunables().probe_linger_ns;
    assert_eq!(
        e.probes_wanted(MS),
        0,
        "a registered critical thread alone needs none"
    );
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert_eq!(
        e.probes_wanted(MS),
        OWNERS,
        "a mutex wait follows owners only"
    );
    e.wait_finish(2 * MS, 100, L1);
    // The platform asks after every call: the need ends here and lingers from here.
    assert_eq!(e.probes_wanted(2 * MS), OWNERS);
    assert_eq!(e.probes_wanted(2 * MS + linger - 1), OWNERS, "lingers");
    assert_eq!(e.probes_wanted(2 * MS + linger), 0, "then lapses");
    // A futex names its owner itself: its boost wants no lock-operation probe.
    let boosted = e.wait_start(10 * linger - 2 * MS, 100, L2, LockKind::Futex, Some(200));
    assert_eq!(boosted.as_slice(), &[200]);
    assert_eq!(
        e.probes_wanted(10 * linger - 2 * MS),
        0,
        "a futex boost follows no kernel lock"
    );
    e.wait_finish(10 * linger - MS, 100, L2);
    e.wait_start(10 * linger, 100, L2, LockKind::RwsemWrite, None);
    assert_eq!(
        e.probes_wanted(10 * linger),
        ALL,
        "an rwsem wait records readers too"
    );
    e.set_enabled(10 * linger + MS, false);
    assert_eq!(e.probes_wanted(10 * linger + MS), 0, "disabled: none");
    e.set_enabled(10 * linger + 2 * MS, true);
    assert_eq!(
        e.probes_wanted(10 * linger + 2 * MS),
        0,
        "and the linger was forgotten"
    );
    ok(&e);
}

#[test]
fn a_waking_blocker_goes_where_its_critical_thread_waits_then_to_the_biggest_idle_core() {
    // Little CPUs 0-3, mid 4-6, big 7.
    let mut e = waiting_on(&[160, 160, 160, 160, 500, 500, 500, 1024], 5);
    // Not critical: ignored.
    e.handle(MS, wait_on(300, L2, LockKind::Mutex, 400, 2));
    // (idle, allowed) -> the CPU chosen.
    for (idle, allowed, want, why) in [
        (0b1010_0001, 0xff, 5, "the waiter's CPU"),
        (0b1000_0001, 0xff, 7, "the big core"),
        (0b0001_0001, 0xff, 4, "a mid core"),
        (0b1010_0001, 0xdf, 7, "5 not allowed"),
    ] {
        assert_eq!(e.select_cpu(MS, 200, 0, idle, allowed), Some(want), "{why}");
    }
    assert_eq!(e.stats().get(Counter::SelectHome), 1);
    ok(&e);
}

#[test]
fn a_boosted_task_gets_the_uclamp_min_boost_for_its_grant_only() {
    let mut e = engine();
    assert_eq!(uclamp_min(&mut e, 200), None, "not boosted");
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert_eq!(uclamp_min(&mut e, 200), Some(1024));
    assert_eq!(
        uclamp_min(&mut e, 100),
        None,
        "the critical thread itself is not boosted"
    );
    let mut t = *e.tunables();
    t.boost_uclamp_min = 0;
    e.set_tunables(2 * MS, t).unwrap();
    e.wait_start(3 * MS, 100, L2, LockKind::Mutex, Some(300));
    assert!(e.is_boosted(300));
    assert_eq!(uclamp_min(&mut e, 300), None, "0 turns it off");
    assert_eq!(e.stats().get(Counter::UclampBoosts), 1);
    ok(&e);
}

#[test]
fn a_misfit_blocker_is_kept_off_the_cpu_its_critical_thread_waits_on_while_it_waits() {
    // CPUs 0-5 little, 6-7 big (the fast CPUs).
    let mut e = waiting_on(&[256, 256, 256, 256, 256, 256, 1024, 1024], 6);
    assert!(misfit(&mut e, 200, 0), "boosted on a little CPU");
    assert!(!misfit(&mut e, 200, 7), "already on a fast CPU");
    assert!(!misfit(&mut e, 300, 0), "not boosted");
    assert!(
        !may_migrate(&mut e, 200, 0, 6, true),
        "onto the waiter's CPU"
    );
    assert!(
        may_migrate(&mut e, 200, 0, 7, true),
        "onto the other big CPU"
    );
    assert_eq!(e.misfit_targets(200, 0, 0b1100_0010, true), 0b1000_0010);
    assert!(
        may_migrate(&mut e, 200, 0, 6, false),
        "queued, it cannot run where it is"
    );
    assert_eq!(e.misfit_targets(200, 0, 0b1100_0010, false), 0b1100_0010);
    e.wait_finish(2 * MS, 100, L1);
    assert!(!misfit(&mut e, 200, 0), "the grant ended with the wait");
    assert!(may_migrate(&mut e, 200, 0, 6, true));
    // RenderThread waits on CPU 7: the UI thread's finished wait no longer reserves CPU 6.
    e.add_critical(3 * MS, 101, Role::Render).unwrap();
    e.handle(3 * MS, wait_on(101, L2, LockKind::Mutex, 200, 7));
    assert!(
        may_migrate(&mut e, 200, 0, 6, true),
        "a finished wait's CPU"
    );
    assert!(!may_migrate(&mut e, 200, 0, 7, true), "the live wait's CPU");
    e.wait_finish(4 * MS, 101, L2);
    assert_eq!(e.stats().get(Counter::MisfitMarks), 1);
    assert_eq!(e.stats().get(Counter::MigrateVetoes), 2);
    ok(&e);
}

/// Critical thread 100, woken at 2 ms out of its wait on `L1` (which started on CPU 0), has its
/// wake turn: with both CPUs busy it wakes on CPU 0, preempts the fair task 300 there and is
/// picked; its retry at 2 ms + 5 us takes the lock, which ends its wait and its turn.
fn wake_turn_runs_until_the_retry(e: &mut Engine<Log>) {
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    assert_eq!(e.observer().grants.last(), Some(&(100, 100, 0)));
    assert_eq!(e.select_cpu(2 * MS, 100, 0, 0, 0b11), None);
    assert!(e.enqueue(2 * MS, 0, 100), "its CPU reschedules at once");
    assert!(e.should_preempt(2 * MS, 0, 300, 100));
    assert_eq!(e.pick(2 * MS + 1000, 0, 300), Some(100));
    ok(e);
    e.wait_finish(2 * MS + 5000, 100, L1);
    assert!(!e.is_boosted(100));
    assert_eq!(e.woken_lanes(), 0);
    assert_eq!(
        e.observer().revokes.last(),
        Some(&(100, RevokeReason::WaiterDone))
    );
    ok(e);
}

#[test]
fn a_woken_critical_waiter_runs_ahead_of_fair_tasks_until_its_retry_takes_the_lock() {
    let mut e = engine();
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 0));
    e.owner_released(2 * MS, L1, 200);
    assert!(!e.is_boosted(200), "the releaser blocks nobody now");
    assert_eq!(e.waiter_woken(2 * MS, L1, 100, 200).as_slice(), &[100]);
    wake_turn_runs_until_the_retry(&mut e);
    assert_eq!(e.stats().blocking.max(), MS + 5000);
    assert_eq!(e.pick(2 * MS + 6000, 0, 300), None);
    ok(&e);
}

#[test]
fn a_critical_reader_that_a_release_grants_the_lock_gets_a_wake_turn() {
    let mut e = engine();
    // 100 waits to read L1, which writer 200 holds.
    e.handle(MS, wait_on(100, L1, LockKind::RwsemRead, 200, 0));
    assert!(e.is_boosted(200));
    // The writer's release grants the lock to the queued readers, 100 among them
    // (rwsem_mark_wake; record_rwsem_reader_owned names each). 100 holds it from now, but
    // takes it only when it runs: a wake turn, as for a woken mutex waiter.
    e.owner_released(2 * MS, L1, 200);
    assert!(!e.is_boosted(200));
    assert_eq!(e.reader_acquired(2 * MS, L1, 100).as_slice(), &[100]);
    wake_turn_runs_until_the_retry(&mut e);
    // A read hold taken without a wait is no wake.
    e.reader_released(3 * MS, L1, 100);
    assert!(e.reader_acquired(4 * MS, L1, 100).as_slice().is_empty());
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    ok(&e);
}

#[test]
fn a_woken_waiter_that_sleeps_again_is_granted_the_owner_the_lock_names_when_no_event_said_so() {
    // The owner probes are detached, as at the start of a contention episode: the release is
    // reported (its unlock slow path wakes the waiter), the releaser's retake is not. The
    // platform reads `named` from lock `read` as the waiter sleeps again.
    let run = |read: LockId, named: Tid| {
        let mut e = engine();
        assert_eq!(woken_by_release(&mut e), [100]);
        assert!(!e.is_boosted(200));
        let b = e.waiter_slept(3 * MS, 100, read, named).as_slice().to_vec();
        ok(&e);
        assert_eq!(e.stats().get(Counter::ResumedWaits), 1);
        (b, e.is_boosted(200))
    };
    assert_eq!(
        run(L1, 0),
        (vec![], false),
        "no owner known: nobody to grant"
    );
    assert_eq!(
        run(L1, 200),
        (vec![200], true),
        "the lock names the releaser: it blocks the waiter again"
    );
    assert_eq!(run(L2, 200), (vec![], false), "read from another lock");
    assert_eq!(run(L1, 100), (vec![], false), "names the waiter itself");
}

#[test]
fn an_owner_named_at_a_lost_retry_replaces_a_departed_one_and_ends_its_grant() {
    let mut e = engine();
    // 101 (critical too) waits on L1 with 100: its wait keeps the lock tracked.
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.wait_start(MS, 101, L1, LockKind::Mutex, Some(200));
    assert!(e.is_boosted(200));
    // 200 hands over to 300 unseen (no owner events), and 300's release wakes 100; 400 barges.
    e.waiter_woken(2 * MS, L1, 100, 300);
    assert_eq!(e.waiter_slept(3 * MS, 100, L1, 400).as_slice(), &[400]);
    assert!(e.is_boosted(400));
    assert!(!e.is_boosted(200), "the lock no longer names it");
    ok(&e);
}

#[test]
fn a_critical_waiter_handed_its_lock_unreported_gets_a_wake_turn_when_its_blocker_waits_on_it() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::PiFutex, Some(200));
    assert!(e.is_boosted(200));
    // 200's release makes 100 the PI futex's next owner; no hook reports a PI release. 200,
    // still boosted, waits on the futex again, and its word names 100.
    let b = e.wait_start(2 * MS, 200, L1, LockKind::PiFutex, Some(100));
    assert_eq!(
        b.as_slice(),
        &[100],
        "the critical thread runs next to take it"
    );
    assert!(e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    assert!(sleep_reported(&e, 100));
    ok(&e);
    // It runs and takes the lock: its turn and its wait end.
    e.wait_finish(3 * MS, 100, L1);
    assert!(!e.is_boosted(100));
    ok(&e);
}

#[test]
fn a_chain_back_to_the_critical_thread_on_another_lock_gives_it_no_turn() {
    let mut e = engine();
    // 100 waits on L1 held by 200, which waits on L2 that 100 holds: a deadlock, not a handoff.
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(e
        .wait_start(2 * MS, 200, L2, LockKind::Mutex, Some(100))
        .as_slice()
        .is_empty());
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 0);
    ok(&e);
}

#[test]
fn a_wake_turn_goes_to_an_idle_cpu_and_ahead_of_boosted_blockers() {
    let mut e = engine();
    // 201 blocks critical thread 101 and waits on CPU 1's fast-track queue.
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(MS, 101, L2, LockKind::Mutex, Some(201));
    assert!(e.enqueue(MS, 1, 201));
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 0));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 100, 200);
    // Its own CPU is busy and CPU 1 idle: CPU 1.
    assert_eq!(e.select_cpu(2 * MS, 100, 0, 0b10, 0b11), Some(1));
    e.enqueue(2 * MS, 1, 100);
    assert_eq!(e.pick(2 * MS, 1, 0), Some(100), "the turn goes first");
    e.waiter_slept(2 * MS + 3000, 100, L1, 200);
    e.dequeue(2 * MS + 3000, 1, 100);
    assert!(!e.is_boosted(100));
    assert_eq!(e.pick(2 * MS + 3000, 1, 0), Some(201));
    ok(&e);
}

/// Critical thread 100 waits on mutex `L1` held by 200 since 1 ms; at 2 ms 200's release
/// wakes it. Returns the tasks the wake boosted (100 itself, for its wake turn, if turns are on).
fn woken_by_release(e: &mut Engine<Log>) -> Vec<Tid> {
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 100, 200).as_slice().to_vec()
}

/// Whether the platform reports `tid`'s sleeps ([`Engine::woken_lanes`]).
fn sleep_reported(e: &Engine<Log>, tid: Tid) -> bool {
    e.woken_lanes() & (1 << (tid as u32 % 64)) != 0
}

/// [`woken_by_release`], and 100 now runs its wake turn on CPU 0 (instead of fair task 300).
fn running_its_wake_turn(e: &mut Engine<Log>) {
    assert_eq!(woken_by_release(e), [100]);
    e.enqueue(2 * MS, 0, 100);
    assert_eq!(e.pick(2 * MS, 0, 300), Some(100));
}

#[test]
fn a_wake_turn_ends_after_its_slice_and_counts_against_the_cpu_share() {
    let mut e = engine();
    let slice = e.tunables().wake_slice_ns;
    running_its_wake_turn(&mut e);
    assert_eq!(
        e.deadline(0),
        Some(2 * MS + slice),
        "the module arms its timer for the turn's end"
    );
    // It keeps running without ending its retry (spinning on a running owner, say).
    assert!(!e.tick(2 * MS + slice / 2, 0, 100));
    assert!(e.is_boosted(100));
    assert!(
        e.tick(2 * MS + slice, 0, 100),
        "the turn is over: reschedule"
    );
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::RevokeTurnOver), 1);
    assert_eq!(e.stats().get(Counter::FastTrackNs), slice);
    // Its wait goes on; the lock's next holder is not granted until it sleeps again.
    assert!(e.detector().wait_of(100).is_some());
    assert_eq!(
        e.waiter_slept(2 * MS + slice + 10, 100, L1, 0).as_slice(),
        &[] as &[Tid]
    );
    ok(&e);
}

#[test]
fn a_wake_turn_is_bounded_by_the_budget_too() {
    let mut e = engine();
    let mut t = *e.tunables();
    t.budget_ns = MS;
    t.slice_ns = MS;
    t.wake_slice_ns = 2 * MS;
    assert_eq!(
        e.set_tunables(0, t),
        Err(AbiError::BadValue),
        "a turn longer than the budget"
    );
    t.wake_slice_ns = MS;
    e.set_tunables(0, t).unwrap();
    woken_by_release(&mut e);
    assert!(e.is_boosted(100));
    e.enqueue(2 * MS, 0, 100);
    e.pick(2 * MS, 0, 300);
    e.tick(3 * MS, 0, 100);
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::RevokeBudget), 1);
    ok(&e);
}

/// [`running_its_wake_turn`], and the releaser takes the lock again while the waiter spins
/// through its turn: that holder's grant is deferred while the turn lasts.
fn spinning_while_the_releaser_retakes(e: &mut Engine<Log>) {
    running_its_wake_turn(e);
    assert!(e.owner_acquired(2 * MS + 10, L1, 200).as_slice().is_empty());
    assert!(!e.is_boosted(200), "deferred while the turn lasts");
}

#[test]
fn after_its_turn_runs_out_a_woken_waiter_that_sleeps_again_grants_the_holder() {
    let mut e = engine();
    let slice = e.tunables().wake_slice_ns;
    spinning_while_the_releaser_retakes(&mut e);
    let tick = Event::Tick { cpu: 0, curr: 100 };
    assert_eq!(e.handle(2 * MS + slice, tick), Answer::Resched);
    assert!(!e.is_boosted(100));
    // The turn is over, so the deferral is too: the same tick's grants due hand the holder its
    // grant again, without waiting for the next tick or a sleep the platform may not report.
    assert!(e.regrants_pending());
    let a = e.handle(2 * MS + slice, regrant(100, L1, 200));
    assert_eq!(a.newly_boosted(), &[200]);
    assert!(e.is_boosted(200));
    assert_eq!(e.stats().get(Counter::ResumedWaits), 1);
    assert_eq!(e.woken_lanes(), 0);
    assert!(!e.regrants_pending());
    // Its later sleep changes nothing more.
    assert!(e
        .waiter_slept(3 * MS + slice, 100, L1, 200)
        .as_slice()
        .is_empty());
    ok(&e);
}

#[test]
fn a_turn_that_runs_out_at_a_pick_grants_the_holder_at_that_pick() {
    let mut e = engine();
    let slice = e.tunables().wake_slice_ns;
    spinning_while_the_releaser_retakes(&mut e);
    // The timer armed for the turn's end fires, and the CPU picks: the pick charges the turn
    // to its end, and the holder the waiter spins on is granted before the CPU runs anything.
    let now = e.deadline(0).unwrap();
    assert_eq!(now, 2 * MS + slice);
    assert_eq!(e.pick(now, 0, 300), None);
    assert!(!e.is_boosted(100));
    assert_eq!(e.handle(now, regrant(100, L1, 200)).newly_boosted(), &[200]);
    e.enqueue(now, 0, 200);
    assert_eq!(e.pick(now, 0, 300), Some(200));
    ok(&e);
}

#[test]
fn a_turn_that_runs_out_with_no_holder_known_keeps_the_waiters_sleep_reported() {
    let mut e = engine();
    let slice = e.tunables().wake_slice_ns;
    running_its_wake_turn(&mut e);
    // The releaser takes the lock again unseen (the owner probes are detached) while the
    // waiter spins through its whole turn.
    assert!(e.tick(2 * MS + slice, 0, 100));
    assert!(!e.is_boosted(100));
    // Nor does the lock name one when the tick ends the turn (it is between owners).
    let a = e.handle(2 * MS + slice, regrant(100, L1, 0));
    assert!(a.newly_boosted().is_empty(), "no holder known");
    assert!(sleep_reported(&e, 100), "its sleep must still be reported");
    // It sleeps; the platform reads the mutex's owner: the releaser.
    assert_eq!(
        e.waiter_slept(3 * MS + slice, 100, L1, 200).as_slice(),
        &[200]
    );
    assert_eq!(e.stats().get(Counter::ResumedWaits), 1);
    assert_eq!(e.woken_lanes(), 0);
    ok(&e);
}

#[test]
fn a_turn_that_runs_out_grants_the_owner_its_lock_names_though_no_event_reported_it() {
    // The releaser takes the lock again unseen while the waiter spins through its whole turn;
    // the tick that ends the turn charged `curr`, whose record names `lock`, which names 200.
    let granted = |curr: Tid, lock: u64| {
        let mut e = engine();
        let slice = e.tunables().wake_slice_ns;
        running_its_wake_turn(&mut e);
        assert!(e.tick(2 * MS + slice, 0, 100));
        assert!(!e.is_boosted(100));
        let a = e.handle(2 * MS + slice, regrant(curr, lock, 200));
        ok(&e);
        (a.newly_boosted().to_vec(), sleep_reported(&e, 100))
    };
    // The waiter's own record names the lock it waits on: its owner is granted, and the wait
    // goes on as a wait again.
    assert_eq!(granted(100, L1), (vec![200], false));
    // Another task's record, or a lock it does not wait on, names nobody it waits for: its
    // sleep stays reported.
    assert_eq!(granted(300, L1), (vec![], true));
    assert_eq!(granted(100, L2), (vec![], true));
}

#[test]
fn a_zero_wake_slice_turns_wake_turns_off_but_keeps_the_deferral() {
    let mut e = engine_with(|t| t.wake_slice_ns = 0);
    assert!(woken_by_release(&mut e).is_empty());
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 0);
    assert!(e.owner_acquired(2 * MS, L1, 200).as_slice().is_empty());
    assert_eq!(e.stats().get(Counter::DeferredGrants), 1);
    ok(&e);
}

/// Critical thread 100 waits on an owner-hinted futex held by 200; at 2 ms 200's release
/// starts waking 100.
fn futex_wake_in_flight(tune: impl FnOnce(&mut Tunables)) -> Engine<Log> {
    let mut e = engine_with(tune);
    futex_wait_for_200(&mut e);
    e.handle(2 * MS, Event::from_hook_futex_woken(100, 100, 200));
    ok(&e);
    e
}

#[test]
fn a_releaser_keeps_its_grant_until_the_waiter_it_wakes_is_runnable() {
    // As measured on the real kernel: futex_wake() picks the waiter under the bucket lock and
    // wakes it after dropping the lock, where the releaser can be preempted. Unboosted there,
    // a nice-19 releaser left the critical waiter asleep for 67 ms.
    let mut e = futex_wake_in_flight(|_| {});
    assert!(e.is_boosted(200), "its wake is in flight");
    assert!(e.is_boosted(100), "the woken waiter has its wake turn");
    // Preempted by a fair task, the releaser still runs ahead of it.
    e.handle(
        2 * MS,
        Event::Enqueue {
            cpu: 0,
            tid: 200,
            handle: 0,
            curr: 0,
        },
    );
    assert_eq!(e.pick(2 * MS, 0, 300), Some(200));
    // The release makes the waiter runnable: the releaser's grant ends.
    e.handle(
        2 * MS + 10_000,
        Event::Enqueue {
            cpu: 1,
            tid: 100,
            handle: 0,
            curr: 0,
        },
    );
    assert!(!e.is_boosted(200));
    assert!(e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::RevokeReleased), 1);
    ok(&e);
}

#[test]
fn a_wake_in_flight_lasts_until_its_boosted_waiter_is_runnable() {
    // As measured on the real kernel: the releaser, nice 19, was preempted at the tick after
    // futex_wake() picked the waiter and before wake_up_q() woke it; its grant ended with the
    // wake slice, and the critical waiter slept on for 750 ms while it starved.
    let mut e = futex_wake_in_flight(|_| {});
    let slice = e.tunables().wake_slice_ns;
    for t in [slice, 4 * slice, 100 * MS] {
        e.handle(2 * MS + t, Event::Tick { cpu: 1, curr: 0 });
        assert!(e.is_boosted(200), "the woken waiter is not runnable yet");
    }
    let ev = Event::Enqueue {
        cpu: 0,
        tid: 100,
        handle: 0,
        curr: 0,
    };
    e.handle(103 * MS, ev);
    assert!(!e.is_boosted(200), "the wake is done");
    ok(&e);
}

#[test]
fn a_wake_in_flight_of_a_waiter_off_the_fast_track_ends_after_the_wake_slice() {
    // One grant in all: the woken waiter's wake turn does not fit, so its enqueue goes unseen.
    let mut e = futex_wake_in_flight(|t| t.max_grants = 1);
    assert!(e.is_boosted(200) && !e.is_boosted(100));
    let slice = e.tunables().wake_slice_ns;
    e.handle(2 * MS + slice - 1, Event::Tick { cpu: 1, curr: 0 });
    assert!(e.is_boosted(200));
    e.handle(2 * MS + slice, Event::Tick { cpu: 1, curr: 0 });
    assert!(!e.is_boosted(200), "a wake that takes a whole slice ends");
    ok(&e);
}

#[test]
fn without_wake_turns_the_releaser_s_grant_ends_with_its_release() {
    let e = futex_wake_in_flight(|t| t.wake_slice_ns = 0);
    assert!(!e.is_boosted(200));
    assert!(!e.is_boosted(100));
    ok(&e);
}

#[test]
fn a_wake_in_flight_ends_with_the_woken_waiter_s_wait_or_exit() {
    let mut e = futex_wake_in_flight(|_| {});
    e.handle(3 * MS, Event::from_hook_futex_wait_end(100));
    assert!(!e.is_boosted(200));
    ok(&e);
    let mut e = futex_wake_in_flight(|_| {});
    e.handle(
        3 * MS,
        Event::TaskExit {
            tid: 100,
            handle: 0,
        },
    );
    assert!(!e.is_boosted(200));
    ok(&e);
}

#[test]
fn reader_probes_are_wanted_while_a_critical_thread_is_registered() {
    use superpass_core::probes::{ALL, READERS};
    let mut e = engine();
    let linger = e.tunables().probe_linger_ns;
    // Readers must be recorded as they enter, before any wait: a critical writer's first wait
    // could not learn them afterwards.
    assert_eq!(e.probes_wanted(MS), READERS);
    e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert_eq!(e.probes_wanted(MS), ALL);
    e.wait_finish(2 * MS, 100, L1);
    assert_eq!(e.probes_wanted(2 * MS), ALL);
    let t = 2 * MS + linger;
    assert_eq!(e.probes_wanted(t), READERS, "owners lapse, readers stay");
    e.remove_critical(t, 100).unwrap();
    assert_eq!(e.probes_wanted(t), READERS);
    assert_eq!(e.probes_wanted(t + linger - 1), READERS, "lingers");
    assert_eq!(e.probes_wanted(t + linger), 0, "then lapses");
    e.add_critical(t + linger, 100, Role::Ui).unwrap();
    assert_eq!(e.probes_wanted(t + linger), READERS);
    e.set_enabled(t + linger, false);
    assert_eq!(e.probes_wanted(t + linger), 0, "disabled: none");
    ok(&e);
}

#[test]
fn a_blocker_asleep_on_another_lock_when_boosted_has_that_wait_followed() {
    // 200 went to sleep on rwsem L2, held by writer 300, before it mattered: no wait start
    // reached the engine. When the critical thread's wait boosts it, the platform's record
    // hands the wait over, and the chain reaches 300.
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(e.is_boosted(200) && !e.is_boosted(300));
    let a = asleep_wait(&mut e, MS, 200, L2, LockKind::RwsemWrite, 300, &[]);
    assert_eq!(a.newly_boosted(), &[300]);
    assert_eq!(e.stats().get(Counter::ChainWaits), 1);
    ok(&e);
    // Through an rwsem held by readers, the recorded readers are the blockers.
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    let a = asleep_wait(&mut e, MS, 200, L2, LockKind::RwsemWrite, 0, &[301, 302]);
    assert_eq!(a.newly_boosted(), &[301, 302]);
    ok(&e);
}

#[test]
fn an_asleep_wait_is_not_followed_for_a_task_that_is_not_boosted() {
    let mut e = engine();
    assert_eq!(
        asleep_wait(&mut e, MS, 200, L2, LockKind::Mutex, 300, &[]),
        Answer::None
    );
    assert!(!e.is_boosted(300));
    ok(&e);
}

#[test]
fn a_recorded_wait_that_a_release_already_ended_is_ignored() {
    // Critical writer 100 waits on L1, held by readers 200 and 201. The record still holds
    // 200's old wait on L1 behind writer 300, from before a release granted 200 the lock:
    // 200 holds L1 now, and 300, who let go of it, must not be boosted.
    let mut e = engine();
    lock_seen(&mut e, MS, L1, 0, &[200, 201]);
    e.wait_start(MS, 100, L1, LockKind::RwsemWrite, None);
    assert!(e.is_boosted(200) && e.is_boosted(201));
    assert_eq!(
        asleep_wait(&mut e, MS, 200, L1, LockKind::RwsemRead, 300, &[]),
        Answer::None
    );
    assert!(!e.is_boosted(300));
    assert!(
        e.detector().wait_of(200).is_none(),
        "a holder does not wait on its lock"
    );
    ok(&e);
}

#[test]
fn on_a_tracked_lock_the_engine_s_holders_win_over_the_recorded_owner() {
    // Critical 100 waits on mutex L1 held by 200; another critical thread's writer wait on L2
    // tracks L2's readers (201). 200 is asleep on L2 with a recorded owner (300) that has let
    // go since: the engine's own record of L2 names the blockers.
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    lock_seen(&mut e, MS, L2, 0, &[201]);
    e.wait_start(MS, 101, L2, LockKind::RwsemWrite, None);
    assert!(e.is_boosted(201));
    asleep_wait(&mut e, 2 * MS, 200, L2, LockKind::RwsemWrite, 300, &[]);
    assert!(!e.is_boosted(300), "the stale recorded owner");
    assert_eq!(e.stats().get(Counter::ChainWaits), 1);
    ok(&e);
}

#[test]
fn a_recorded_wait_never_replaces_one_the_engine_tracks() {
    // A woken critical thread is boosted for its wake turn while the platform's record still
    // holds the wait it was woken from: its tracked (woken) wait stays as it is.
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.handle(2 * MS, Event::OwnerReleased { lock: L1, tid: 200 });
    let a = e.handle(
        2 * MS,
        Event::WaiterWoken {
            lock: L1,
            tid: 100,
            waker: 200,
        },
    );
    assert_eq!(a.newly_boosted(), &[100], "its wake turn");
    assert_eq!(
        asleep_wait(&mut e, 2 * MS, 100, L1, LockKind::Mutex, 200, &[]),
        Answer::None
    );
    assert!(e.detector().wait_of(100).is_some_and(|w| w.woken));
    ok(&e);
}

#[test]
fn a_stale_holder_record_of_an_untracked_lock_does_not_hide_a_recorded_wait() {
    // 200 held rwsem L2 while a tracked wait was on it; once that wait ended, L2's events were
    // no longer followed, so the table may still name 200 as its writer after it let go.
    let mut e = engine();
    e.wait_start(MS, 100, L2, LockKind::RwsemWrite, Some(200));
    e.wait_finish(2 * MS, 100, L2);
    // Later 200 sleeps on L2 behind writer 300, then blocks the critical thread on L1.
    e.wait_start(3 * MS, 100, L1, LockKind::Mutex, Some(200));
    let a = asleep_wait(&mut e, 3 * MS, 200, L2, LockKind::RwsemWrite, 300, &[]);
    assert_eq!(a.newly_boosted(), &[300]);
    ok(&e);
}

#[test]
fn a_tick_makes_its_cpu_pick_a_boosted_task_that_waits_in_its_queue() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    assert!(e.is_boosted(200));
    assert!(
        e.enqueue(2 * MS, 0, 200),
        "the platform kicks CPU 0 to pick it"
    );
    // The kick is lost: hog 300 goes on running on CPU 0.
    assert!(e.tick(3 * MS, 0, 300), "the tick makes CPU 0 pick again");
    assert_eq!(e.stats().get(Counter::StrandedPicks), 1);
    assert_eq!(e.pick(3 * MS, 0, 300), Some(200));
    assert!(!e.tick(4 * MS, 0, 200), "it runs: nothing to do");
    assert_eq!(e.stats().get(Counter::StrandedPicks), 1);
    ok(&e);
}

#[test]
fn a_tick_does_not_take_the_cpu_from_a_critical_thread_for_a_queued_blocker() {
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    e.enqueue(2 * MS, 0, 200);
    assert!(!e.tick(3 * MS, 0, 101), "critical thread 101 runs on CPU 0");
    assert_eq!(e.stats().get(Counter::StrandedPicks), 0);
    ok(&e);
}

#[test]
fn a_pick_names_the_handle_its_enqueue_gave_until_the_task_exits() {
    let mut e = engine();
    e.wait_start(MS, 100, L1, LockKind::Mutex, Some(200));
    let enqueue = |tid, handle| Event::Enqueue {
        cpu: 0,
        tid,
        handle,
        curr: 0,
    };
    // Not boosted: nothing recorded.
    e.handle(MS, enqueue(300, 0xbeef));
    assert_eq!(
        e.handle(MS, enqueue(200, 0xcafe)),
        Answer::Resched,
        "a boosted task joins CPU 0"
    );
    let pick = Event::Pick {
        cpu: 0,
        fair_next: 300,
    };
    assert_eq!(
        e.handle(MS, pick),
        Answer::Run {
            tid: 200,
            handle: 0xcafe
        }
    );
    // The task is being freed: its handle is forgotten although it stays boosted.
    let exit = Event::TaskExit {
        tid: 999,
        handle: 0xcafe,
    };
    e.handle(2 * MS, exit);
    assert!(e.is_boosted(200));
    assert_eq!(
        e.handle(2 * MS, pick),
        Answer::Run {
            tid: 200,
            handle: 0
        }
    );
    ok(&e);
}

/// Blocker `tid` is on CPU 0's runqueue, which runs `curr`: whether CPU 0 is to pick now.
fn queued_under(e: &mut Engine<Log>, now: Nanos, tid: Tid, curr: Tid) -> bool {
    let ev = Event::Enqueue {
        cpu: 0,
        tid,
        handle: 0,
        curr,
    };
    e.handle(now, ev) == Answer::Resched
}

#[test]
fn a_critical_waiter_is_not_preempted_by_its_blocker_before_it_sleeps() {
    // As measured on the real kernel: the futex wait of critical 100 on CPU 0 granted holder
    // 200, queued there; the CPU picked again while 100 was still on its way to sleep, ran 200
    // instead, and 200 retook the lock 15 times in 17 ms before 100 ran to see it free.
    let mut e = engine();
    futex_wait_for_200(&mut e);
    assert!(!queued_under(&mut e, MS, 200, 100), "the waiter runs on");
    // Asleep, it has left the CPU: the blocker is picked at once.
    assert_eq!(e.pick(MS + 5_000, 0, 300), Some(200));
    ok(&e);
}

#[test]
fn a_blocker_preempts_a_task_that_is_not_critical() {
    let mut e = engine();
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    assert!(queued_under(&mut e, MS, 200, 300));
    // Already placed and running there: nothing to preempt again.
    assert_eq!(e.pick(MS, 0, 300), Some(200));
    assert!(!queued_under(&mut e, MS + 1_000, 200, 200));
    ok(&e);
}

#[test]
fn a_wake_turn_preempts_a_running_blocker() {
    // Critical 100 is woken while blocker 300 of critical 101 runs boosted on CPU 0: its wake
    // turn runs first, for it retries the lock in a moment.
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.handle(MS, wait_on(101, L2, LockKind::Mutex, 300, 1));
    futex_wait_for_200(&mut e);
    e.handle(2 * MS, Event::from_hook_futex_woken(100, 100, 200));
    assert!(queued_under(&mut e, 2 * MS, 300, 0));
    assert_eq!(e.pick(2 * MS, 0, 0), Some(300));
    assert!(
        queued_under(&mut e, 2 * MS, 100, 300),
        "the wake turn goes first"
    );
    assert_eq!(e.pick(2 * MS, 0, 0), Some(100));
    ok(&e);
}

#[test]
fn a_bound_is_armed_for_the_budget_and_due_within_the_slack() {
    let mut e = engine();
    let budget = e.tunables().budget_ns;
    let bound = |e: &mut Engine<Log>, now| e.handle(now, Event::Bound { cpu: 0 });
    assert_eq!(
        bound(&mut e, MS),
        Answer::None,
        "nothing boosted runs there"
    );
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    assert!(queued_under(&mut e, MS, 200, 300));
    assert_eq!(e.pick(MS, 0, 300), Some(200));
    assert_eq!(bound(&mut e, MS), Answer::Arm(MS + budget));
    let early = MS + budget - superpass_core::event::BOUND_SLACK_NS;
    assert_eq!(
        bound(&mut e, early),
        Answer::Resched,
        "due within the slack"
    );
    assert_eq!(bound(&mut e, early - 1), Answer::Arm(MS + budget));
    // The release ends the grant: the timer must not preempt whoever runs now.
    e.handle(2 * MS, Event::from_hook_owner(L1, 200, false));
    assert_eq!(bound(&mut e, 2 * MS), Answer::None);
    ok(&e);
}

/// Offers the engine places to push newly boosted `tid`, on CPU `cpu`, to.
fn push(
    e: &mut Engine<Log>,
    tid: Tid,
    cpu: u32,
    running: bool,
    idle: u64,
    others: &[Running],
) -> Answer {
    e.handle(
        2 * MS,
        Event::Push {
            tid,
            handle: 0x2000 + tid as u64,
            cpu,
            running,
            idle_mask: idle,
            others,
        },
    )
}

/// Asserts the engine's answer when blocker 200, on CPU 0, is offered `idle` and `others`.
fn expect_push(
    e: &mut Engine<Log>,
    running: bool,
    idle: u64,
    others: &[Running],
    want: Answer,
    why: &str,
) {
    assert_eq!(push(e, 200, 0, running, idle, others), want, "{why}");
}

fn runs(cpu: u32, tid: Tid, nice: i32) -> Running {
    Running {
        cpu,
        tid,
        prio: (120 + nice) as u32,
    }
}

#[test]
fn a_blocker_boosted_on_a_little_core_is_pushed_to_a_big_one_running_background_work() {
    // CPUs 0-5 little, 6-7 big; the UI thread waits on CPU 6 for 200, running on CPU 0.
    let mut e = waiting_on(&[256, 256, 256, 256, 256, 256, 1024, 1024], 6);
    let nice0 = [runs(6, 100, -10), runs(7, 400, 0)];
    expect_push(&mut e, true, 0, &nice0, Answer::None, "foreground work");
    let bg = [runs(6, 100, -10), runs(7, 400, 10)];
    expect_push(&mut e, true, 0, &bg, Answer::Place(7), "background work");
    assert_eq!(
        e.handle(3 * MS, Event::PushBack),
        Answer::None,
        "still boosted"
    );
    assert_eq!(
        push(&mut e, 300, 0, true, 0, &bg),
        Answer::None,
        "not boosted"
    );
    e.handle(4 * MS, Event::OwnerReleased { lock: L1, tid: 200 });
    e.wait_finish(4 * MS, 100, L1);
    let back = Answer::Return {
        handle: 0x2000 + 200,
        to: 0,
        expect: 7,
    };
    assert_eq!(e.handle(4 * MS, Event::PushBack), back, "its boost ended");
    assert_eq!(e.handle(4 * MS, Event::PushBack), Answer::None, "once");
    assert_eq!(e.stats().get(Counter::Pushes), 1);
    assert_eq!(e.stats().get(Counter::PushBacks), 1);
    ok(&e);
}

#[test]
fn a_running_blocker_is_not_pushed_onto_the_cpu_its_critical_thread_waits_on() {
    let mut e = waiting_on(&[256, 256, 256, 256, 256, 256, 1024, 1024], 6);
    let bg = [runs(7, 100, -10)];
    expect_push(&mut e, true, 1 << 6, &bg, Answer::None, "running");
    expect_push(&mut e, false, 1 << 6, &bg, Answer::Place(6), "queued");
    ok(&e);
}

#[test]
fn push_min_prio_140_pushes_to_idle_cpus_only() {
    let mut e = engine8();
    let mut t = *e.tunables();
    t.push_min_prio = 140;
    e.set_tunables(0, t).unwrap();
    e.set_cpu_capacities(&[256, 256, 256, 256, 256, 256, 1024, 1024]);
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 6));
    let bg = [runs(7, 400, 19)];
    expect_push(&mut e, true, 0, &bg, Answer::None, "nobody displaced");
    expect_push(&mut e, true, 1 << 7, &[], Answer::Place(7), "idle");
    ok(&e);
}

#[test]
fn a_named_boosted_task_is_unlocated_until_an_enqueue_reports_it() {
    let mut e = engine();
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 0));
    let unlocated = |e: &mut Engine<Log>, from| e.handle(MS, Event::Unlocated { from });
    assert_eq!(unlocated(&mut e, 0), Answer::None, "no handle named yet");
    e.handle(
        MS,
        Event::Named {
            tid: 200,
            handle: 0xabc,
            home: None,
        },
    );
    let Answer::Unlocated { tid, handle, next } = unlocated(&mut e, 0) else {
        panic!("200 is unlocated");
    };
    assert_eq!((tid, handle), (200, 0xabc));
    assert_eq!(unlocated(&mut e, next), Answer::None, "the only one");
    e.handle(
        MS,
        Event::Enqueue {
            cpu: 1,
            tid: 200,
            handle: 0xabc,
            curr: 0,
        },
    );
    assert_eq!(unlocated(&mut e, 0), Answer::None, "located");
    e.handle(
        MS,
        Event::Named {
            tid: 300,
            handle: 0xdef,
            home: None,
        },
    );
    assert_eq!(
        unlocated(&mut e, 0),
        Answer::None,
        "not boosted: nothing named"
    );
    ok(&e);
}

#[test]
fn unlocated_tasks_are_handed_out_one_slot_after_another() {
    let mut e = engine();
    e.add_critical(0, 101, Role::Render).unwrap();
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 0));
    e.handle(MS, wait_on(101, L2, LockKind::Mutex, 300, 1));
    for tid in [200, 300] {
        let handle = 0x1000 + tid as u64;
        e.handle(
            MS,
            Event::Named {
                tid,
                handle,
                home: None,
            },
        );
    }
    let mut seen = Vec::new();
    let mut from = 0;
    while let Answer::Unlocated { tid, handle, next } = e.handle(MS, Event::Unlocated { from }) {
        assert!(next > from, "each answer names a later slot");
        assert_eq!(handle, 0x1000 + tid as u64);
        seen.push(tid);
        from = next;
    }
    seen.sort();
    assert_eq!(seen, [200, 300]);
    ok(&e);
}

#[test]
fn a_critical_waiter_preempted_before_it_sleeps_runs_ahead_of_its_blocker() {
    let mut e = engine();
    // 100 starts an owner-hinted futex wait on CPU 1 naming 200, queued there behind it.
    let wait = Event::FutexWait {
        waiter: 100,
        owner: 200,
        valid: true,
        cpu: 1,
    };
    assert_eq!(e.handle(MS, wait).newly_boosted(), &[200]);
    let enq = Event::Enqueue {
        cpu: 1,
        tid: 200,
        handle: 7,
        curr: 100,
    };
    assert_eq!(
        e.handle(MS, enq),
        Answer::None,
        "the waiter is not preempted for it"
    );
    assert_ne!(e.published(MS).waiting_lanes & (1 << (100 % 64)), 0);
    // An unrelated wakeup preempts 100 before it sleeps: it stays queued on CPU 1.
    let preempted = preempted(100);
    assert_eq!(e.handle(MS + 10_000, preempted), Answer::None);
    assert_eq!(e.stats().get(Counter::WaitTurns), 1);
    let pick = Event::Pick {
        cpu: 1,
        fair_next: 300,
    };
    assert_eq!(
        e.handle(MS + 10_000, pick),
        Answer::Run {
            tid: 100,
            handle: 9
        },
        "the waiter runs ahead of its blocker, to its sleep or its retry"
    );
    assert_eq!(e.published(MS).waiting_lanes & (1 << (100 % 64)), 0);
    ok(&e);
    // It sleeps: its turn ends and the blocker runs.
    e.handle(MS + 20_000, Event::Dequeue { cpu: 1, tid: 100 });
    let slept = Event::WaiterSlept {
        tid: 100,
        lock: superpass_core::futex_wait_lock(100),
        owner: 0,
    };
    e.handle(MS + 20_000, slept);
    assert!(e.is_boosted(200) && !e.is_boosted(100));
    assert_eq!(
        e.handle(MS + 20_000, pick),
        Answer::Run {
            tid: 200,
            handle: 7
        }
    );
    ok(&e);
}

#[test]
fn a_preempted_thread_without_an_open_critical_wait_gets_no_turn() {
    let mut e = engine();
    e.handle(MS, preempted(100));
    e.handle(MS, preempted(300));
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 100, 200);
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    e.handle(2 * MS, preempted(100));
    e.wait_finish(3 * MS, 100, L1);
    // It returns from the lock call and sleeps: it is back from the wait.
    e.dequeue(3 * MS + 10_000, 1, 100);
    e.handle(
        4 * MS,
        Event::Enqueue {
            cpu: 1,
            tid: 100,
            handle: 9,
            curr: 300,
        },
    );
    e.handle(5 * MS, preempted(100));
    assert_eq!(
        e.stats().get(Counter::WaitTurns),
        0,
        "not waiting, not critical, already woken, or slept since its wait ended"
    );
    ok(&e);
}

#[test]
fn a_critical_thread_gets_one_turn_on_its_way_back_however_late_the_preemption() {
    let mut e = engine();
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 100, 200);
    e.wait_finish(3 * MS, 100, L1);
    // Its wake turn put it behind in the fair class's virtual time: the first preemption on
    // its way back may come well after the slice, and a fair task would then run ahead of it.
    let late = 3 * MS + 3 * e.tunables().wake_slice_ns;
    e.handle(late, preempted(100));
    assert_eq!(e.stats().get(Counter::WaitTurns), 1);
    assert_eq!(e.pick(late, 1, 300), Some(100));
    ok(&e);
    // Once per wait: after the turn, a preemption before it sleeps gets none.
    e.tick(late + e.tunables().wake_slice_ns, 1, 100);
    assert!(!e.is_boosted(100), "the turn ran its slice");
    assert_eq!(e.published(late).waiting_lanes & (1 << (100 % 64)), 0);
    e.handle(late + 2 * e.tunables().wake_slice_ns, preempted(100));
    assert_eq!(e.stats().get(Counter::WaitTurns), 1);
    ok(&e);
}

#[test]
fn a_critical_thread_preempted_on_its_way_back_from_the_lock_call_runs_ahead_of_fair_tasks() {
    let mut e = engine();
    let lane = 1u64 << (100 % 64);
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    e.owner_released(2 * MS, L1, 200);
    e.waiter_woken(2 * MS, L1, 100, 200);
    e.wait_finish(3 * MS, 100, L1);
    assert!(!e.is_boosted(100), "its wake turn ended with its wait");
    assert_ne!(e.published(3 * MS).waiting_lanes & lane, 0);
    // An interrupt's wakeup preempts it before it returns from the lock call.
    let preempted = preempted(100);
    e.handle(3 * MS + 100_000, preempted);
    assert_eq!(e.stats().get(Counter::WaitTurns), 1);
    assert_eq!(e.pick(3 * MS + 100_000, 1, 300), Some(100));
    ok(&e);
    // It returns and sleeps until its next frame: the turn ends.
    e.dequeue(3 * MS + 150_000, 1, 100);
    assert!(!e.is_boosted(100));
    assert_eq!(
        e.observer().revokes.last(),
        Some(&(100, RevokeReason::WaiterDone))
    );
    let slice = e.tunables().wake_slice_ns;
    assert_eq!(e.published(3 * MS + slice + 1).waiting_lanes & lane, 0);
    ok(&e);
}

#[test]
fn a_throttled_cpu_still_runs_a_wake_turn() {
    let mut e = engine_with(|t| {
        t.throttle_max_pct = 10;
    });
    e.handle(MS, wait_on(100, L1, LockKind::Mutex, 200, 1));
    e.enqueue(MS, 1, 200);
    assert_eq!(e.pick(MS, 1, 300), Some(200));
    let mut now = MS;
    while !e.fast_track().throttled(1) {
        now += MS;
        e.tick(now, 1, 200);
    }
    assert_eq!(
        e.pick(now, 1, 300),
        None,
        "the blocker waits out the window"
    );
    e.owner_released(now, L1, 200);
    assert_eq!(e.waiter_woken(now, L1, 100, 200).as_slice(), &[100]);
    assert!(e.enqueue(now, 1, 100), "its CPU reschedules at once");
    assert_eq!(
        e.pick(now, 1, 300),
        Some(100),
        "the turn runs on the throttled CPU"
    );
    let slice = e.tunables().wake_slice_ns;
    assert_eq!(
        e.deadline(1),
        Some(now + slice),
        "bounded by its slice alone"
    );
    assert!(e.tick(now + slice, 1, 100));
    assert!(!e.is_boosted(100));
    assert_eq!(e.pick(now + slice, 1, 300), None);
    ok(&e);
}

#[test]
fn a_critical_pi_futex_waiter_woken_by_an_unreported_handoff_gets_a_wake_turn() {
    let mut e = engine();
    // 100 waits on a PI futex (an rt_mutex) owned by 200; 200's FUTEX_UNLOCK_PI hands the lock
    // over and wakes 100 where no hook reports it: only its enqueue shows.
    e.handle(MS, wait_on(100, L1, LockKind::PiFutex, 200, 1));
    assert!(e.is_boosted(200));
    let enq = Event::Enqueue {
        cpu: 1,
        tid: 100,
        handle: 9,
        curr: 300,
    };
    assert_eq!(
        e.handle(2 * MS, enq),
        Answer::Resched,
        "it preempts the fair task there"
    );
    assert!(e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    assert_eq!(e.pick(2 * MS, 1, 300), Some(100));
    ok(&e);
    // Its wait finishes (it owns the lock): the turn and the wait end.
    e.wait_finish(2 * MS + 10_000, 100, L1);
    assert!(!e.is_boosted(100));
    // An enqueue of a critical thread with no open wait changes nothing.
    e.handle(3 * MS, enq);
    assert!(!e.is_boosted(100));
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    ok(&e);
}
