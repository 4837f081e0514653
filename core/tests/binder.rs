//! A synchronous binder call as a wait: the edge from the caller to the server thread that
//! took it, or to the pool's busy threads while it is queued, through its whole life.

use superpass_core::stats::Counter;
use superpass_core::{
    binder_txn_lock, Engine, Event, LockId, LockKind, Nanos, NoObserver, Role, Tid,
};

const MS: Nanos = 1_000_000;
/// A kernel mutex the server thread may wait on.
const L1: LockId = 0xffff_8880_0000_1000;
/// The critical caller.
const T: Tid = 100;
/// A server thread, and two more of its pool.
const S: Tid = 300;
const S2: Tid = 301;
const S3: Tid = 302;

fn engine() -> Engine<NoObserver> {
    let mut e = Engine::new(2, NoObserver);
    e.set_enabled(0, true);
    e.add_critical(0, T, Role::Ui).unwrap();
    e
}

fn ok(e: &Engine<NoObserver>) {
    e.check_invariants().unwrap();
}

fn call(waiter: Tid, debug_id: u32, server: Option<Tid>) -> Event<'static> {
    Event::WaitStart {
        waiter,
        lock: binder_txn_lock(debug_id),
        kind: LockKind::Binder,
        owner: server,
        cpu: 0,
    }
}

/// `tid` joins CPU `cpu`'s runqueue while `curr` (0: unknown) runs there.
fn enqueue(tid: Tid, cpu: u32, curr: Tid) -> Event<'static> {
    Event::Enqueue {
        cpu,
        tid,
        handle: 0,
        curr,
    }
}

fn boosted(e: &mut Engine<NoObserver>, now: Nanos, ev: Event<'_>) -> Vec<Tid> {
    e.handle(now, ev).newly_boosted().to_vec()
}

#[test]
fn a_call_a_server_thread_took_boosts_it_until_the_reply() {
    let mut e = engine();
    assert_eq!(boosted(&mut e, MS, call(T, 7, Some(S))), [S]);
    ok(&e);
    // The reply: the server thread is done with the call, and the caller's wait ends.
    let lock = binder_txn_lock(7);
    e.handle(2 * MS, Event::OwnerReleased { lock, tid: S });
    assert!(!e.is_boosted(S));
    e.handle(2 * MS, Event::WaitFinish { waiter: T, lock });
    assert!(e.detector().wait_of(T).is_none());
    ok(&e);
}

#[test]
fn the_reply_wakes_the_caller_into_a_wake_turn_that_lasts_until_it_receives_the_reply() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 7, Some(S)));
    let lock = binder_txn_lock(7);
    // The reply's wakeup queues the caller first (a critical thread in a wait: reported).
    let queued = enqueue(T, 0, S);
    // It joins a runqueue inside a wait no reported release woke, which alone gives it its
    // wake turn (the reply's wakeup comes before the reply hook); the reply's events keep it.
    e.handle(2 * MS, queued);
    assert!(e.is_boosted(T));
    for ev in Event::from_hook_binder_reply(lock, S, T) {
        e.handle(2 * MS, ev);
    }
    assert!(!e.is_boosted(S));
    assert!(e.is_boosted(T));
    assert_eq!(e.stats().get(Counter::WakeGrants), 1);
    ok(&e);
    // The server frees the call right after its reply: the caller has not run yet, and its
    // turn lasts.
    e.handle(2 * MS, Event::CallFreed { lock, caller: T });
    assert!(e.is_boosted(T));
    assert!(e.detector().wait_of(T).is_some());
    ok(&e);
    // It runs and receives the reply: its wait, and its turn, are over.
    e.handle(3 * MS, Event::from_hook_binder_received(T, lock));
    assert!(e.detector().wait_of(T).is_none());
    assert!(!e.is_boosted(T));
    ok(&e);
}

#[test]
fn a_call_freed_without_a_reply_ends_its_wait_at_the_free() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 15, Some(S)));
    // The server died: binder fails the call and frees it; no reply wakes the caller.
    let lock = binder_txn_lock(15);
    e.handle(2 * MS, Event::CallFreed { lock, caller: T });
    assert!(e.detector().wait_of(T).is_none());
    assert!(!e.is_boosted(S));
    ok(&e);
}

#[test]
fn the_free_of_another_call_the_thread_made_leaves_its_wait_alone() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 16, Some(S)));
    // S waits on a kernel mutex that a nice-19 thread holds: a chain link.
    e.handle(
        MS,
        Event::WaitStart {
            waiter: S,
            lock: L1,
            kind: LockKind::Mutex,
            owner: Some(400),
            cpu: 1,
        },
    );
    assert!(e.is_boosted(400));
    // The caller of S's last reply read it, and binder frees that reply, which S made.
    e.handle(
        2 * MS,
        Event::CallFreed {
            lock: binder_txn_lock(12),
            caller: S,
        },
    );
    assert_eq!(e.detector().wait_of(S).map(|w| w.lock), Some(L1));
    assert!(e.is_boosted(400), "the chain holds");
    // T's own older call, freed late, ends nothing either.
    e.handle(
        2 * MS,
        Event::CallFreed {
            lock: binder_txn_lock(11),
            caller: T,
        },
    );
    assert!(e.detector().wait_of(T).is_some());
    assert!(e.is_boosted(S));
    ok(&e);
}

#[test]
fn a_queued_call_boosts_the_busy_pool_threads_until_one_takes_it() {
    let mut e = engine();
    let lock = binder_txn_lock(8);
    // No pool thread was free: the hook names the pool's busy threads.
    let seen = Event::LockSeen {
        lock,
        owner: 0,
        readers: &[S2, S3],
    };
    e.handle(MS, seen);
    let mut got = boosted(&mut e, MS, call(T, 8, None));
    got.sort();
    assert_eq!(got, [S2, S3]);
    ok(&e);
    // S2 finishes its call and takes this one: it alone blocks the caller now.
    e.handle(2 * MS, Event::OwnerAcquired { lock, tid: S2 });
    assert!(e.is_boosted(S2));
    assert!(
        !e.is_boosted(S3),
        "a pool thread that did not take the call"
    );
    ok(&e);
    // Another thread of the pool takes it instead (S2 went back to its own work).
    e.handle(3 * MS, Event::OwnerAcquired { lock, tid: S });
    assert!(e.is_boosted(S) && !e.is_boosted(S2));
    ok(&e);
}

#[test]
fn the_server_thread_s_own_lock_wait_chains_to_the_holder() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 9, Some(S)));
    // The handler waits for a kernel mutex a background thread holds.
    let wait = Event::WaitStart {
        waiter: S,
        lock: L1,
        kind: LockKind::Mutex,
        owner: Some(400),
        cpu: 1,
    };
    assert_eq!(boosted(&mut e, 2 * MS, wait), [400]);
    assert_eq!(e.stats().get(Counter::ChainWaits), 1);
    ok(&e);
    // The holder releases; the server thread runs on with the call, still boosted.
    e.handle(3 * MS, Event::OwnerReleased { lock: L1, tid: 400 });
    e.handle(
        3 * MS,
        Event::WaitFinish {
            waiter: S,
            lock: L1,
        },
    );
    assert!(!e.is_boosted(400) && e.is_boosted(S));
    ok(&e);
}

#[test]
fn the_server_thread_exiting_ends_its_grant_and_the_next_taker_is_followed() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 11, Some(S)));
    e.handle(2 * MS, Event::TaskExit { tid: S, handle: 0 });
    assert!(!e.is_boosted(S));
    assert!(
        e.detector().wait_of(T).is_some(),
        "the call is still pending"
    );
    ok(&e);
    let lock = binder_txn_lock(11);
    assert_eq!(
        boosted(&mut e, 3 * MS, Event::OwnerAcquired { lock, tid: S2 }),
        [S2]
    );
    ok(&e);
}

#[test]
fn a_nested_call_back_to_the_caller_boosts_no_one_twice() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 12, Some(S)));
    // The handler calls back into the caller's process, and binder runs the nested call on
    // the caller itself (it waits in binder for this reply): a cycle back to the root.
    assert!(boosted(&mut e, 2 * MS, call(S, 13, Some(T))).is_empty());
    assert!(!e.is_boosted(T));
    assert!(e.is_boosted(S));
    ok(&e);
}

#[test]
fn a_call_from_a_thread_that_does_not_matter_is_not_tracked() {
    let mut e = engine();
    assert!(boosted(&mut e, MS, call(500, 14, Some(S))).is_empty());
    assert!(e.detector().wait_of(500).is_none());
    ok(&e);
}

#[test]
fn binder_ids_stay_apart_from_kernel_addresses_and_futex_waits() {
    let b = binder_txn_lock(u32::MAX);
    assert_ne!(b, superpass_core::futex_wait_lock(-1));
    assert!(b < 0xffff_0000_0000_0000, "below kernel addresses");
    assert_ne!(binder_txn_lock(1), binder_txn_lock(2));
    assert_eq!(
        LockKind::from_u32(LockKind::Binder as u32),
        Some(LockKind::Binder)
    );
    assert_eq!(LockKind::Binder.name(), "binder");
}

#[test]
fn a_failed_call_ends_its_wait_and_its_server_thread_s_grant_at_the_free() {
    let mut e = engine();
    let lock = binder_txn_lock(17);
    assert_eq!(boosted(&mut e, MS, call(T, 17, Some(S))), [S]);
    // The server thread dies serving the call: binder wakes the caller with a dead reply
    // (it joins a runqueue inside its wait, with no reply reported), then frees the call.
    let woken = enqueue(T, 0, 0);
    e.handle(2 * MS, woken);
    assert!(e.is_boosted(T) && e.is_boosted(S));
    e.handle(2 * MS, Event::CallFreed { lock, caller: T });
    // No reply released the server thread: the call failed, and its edge is gone.
    assert!(e.detector().wait_of(T).is_none());
    assert!(!e.is_boosted(S));
    assert!(!e.is_boosted(T));
    ok(&e);
}

#[test]
fn a_rust_binder_reply_wakes_the_caller_into_a_turn_that_ends_at_its_next_sleep() {
    let mut e = engine();
    // Rust Binder reports the call only as its server takes it, in the server's context.
    let lock = binder_txn_lock(21);
    assert_eq!(
        boosted(&mut e, MS, Event::from_hook_binder_taken(T, lock, S, 1)),
        [S]
    );
    // A reply from a thread that holds no call changes nothing.
    assert!(boosted(&mut e, 2 * MS, Event::ServerReplied { server: S2 }).is_empty());
    assert!(e.is_boosted(S) && e.detector().wait_of(T).is_some());
    // A wakeup that is not the reply (the caller queued inside its wait) and the sleep that
    // follows it leave the call followed: the server still holds it.
    let queued = enqueue(T, 1, 0);
    e.handle(2 * MS, queued);
    let slept = Event::WaiterSlept {
        tid: T,
        lock: 0,
        owner: 0,
    };
    e.handle(2 * MS, slept);
    assert_eq!(e.detector().wait_of(T).map(|w| w.lock), Some(lock));
    assert!(e.is_boosted(S));
    ok(&e);
    // The reply: the server lets go of the call, and the caller gets its wake turn, so that
    // it does not wait for a CPU behind fair tasks on its way back from the call.
    let turns = e.stats().get(Counter::WakeGrants);
    assert_eq!(
        boosted(&mut e, 3 * MS, Event::ServerReplied { server: S }),
        [T]
    );
    assert!(!e.is_boosted(S));
    assert_eq!(e.stats().get(Counter::WakeGrants), turns + 1);
    ok(&e);
    // No hook reports its receipt of the reply: its next sleep ends the wait and the turn,
    // whatever its wait record says (it has none for a Rust Binder call).
    let slept = Event::WaiterSlept {
        tid: T,
        lock: 0,
        owner: 0,
    };
    assert!(boosted(&mut e, 4 * MS, slept).is_empty());
    assert!(e.detector().wait_of(T).is_none());
    assert!(!e.is_boosted(T) && !e.is_boosted(S));
    ok(&e);
}

#[test]
fn a_rust_binder_reply_ends_only_the_innermost_of_nested_calls() {
    let mut e = engine();
    boosted(&mut e, MS, call(T, 31, Some(S)));
    // The handler calls S2, whose handler calls back into S's process: binder runs that
    // nested call on S, which then holds two calls.
    assert_eq!(boosted(&mut e, 2 * MS, call(S, 32, Some(S2))), [S2]);
    assert!(boosted(&mut e, 3 * MS, call(S2, 33, Some(S))).is_empty());
    ok(&e);
    // S replies to the nested call first: S2's wait on it ends (a chain link goes on with
    // the call it serves), and T's call stays held by S.
    assert!(boosted(&mut e, 4 * MS, Event::ServerReplied { server: S }).is_empty());
    assert!(e.detector().wait_of(S2).is_none());
    assert_eq!(
        e.detector().wait_of(T).map(|w| w.lock),
        Some(binder_txn_lock(31))
    );
    assert!(e.is_boosted(S) && e.is_boosted(S2));
    ok(&e);
    e.handle(5 * MS, Event::ServerReplied { server: S2 });
    assert!(e.detector().wait_of(S).is_none() && !e.is_boosted(S2));
    assert_eq!(
        boosted(&mut e, 6 * MS, Event::ServerReplied { server: S }),
        [T]
    );
    assert!(!e.is_boosted(S));
    ok(&e);
}

#[test]
fn a_rust_binder_reply_leaves_the_server_s_other_locks_alone() {
    let mut e = engine();
    // S holds a kernel mutex T waits for, and serves no call.
    let wait = Event::WaitStart {
        waiter: T,
        lock: L1,
        kind: LockKind::Mutex,
        owner: Some(S),
        cpu: 0,
    };
    assert_eq!(boosted(&mut e, MS, wait), [S]);
    e.handle(2 * MS, Event::ServerReplied { server: S });
    assert!(e.is_boosted(S));
    assert_eq!(e.detector().wait_of(T).map(|w| w.lock), Some(L1));
    ok(&e);
}
