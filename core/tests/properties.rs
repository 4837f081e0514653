//! Property tests: random but lock-consistent hook sequences against a brute-force world model.
//!
//! The test keeps the *true* state of a small world (who holds which lock, who waits where, which
//! runqueue each thread is on) and drives the engine with exactly the events the kernel hooks
//! would produce. After every step it checks the engine against that truth:
//! - memory stays within the tunables' bounds (`check_invariants`);
//! - no grant outlives its reason: its blocker really holds the lock and its waiter really waits,
//!   except a critical thread's own turn, which outlives its wait only while it stays on a
//!   runqueue;
//! - no boosted task has spent its budget;
//! - a throttled CPU takes the fast track only for a turn;
//! - every blocker within the bounds is found (a reference list of tracked readers is kept with
//!   the documented rule: the first `max_readers` of the readers recorded while SuperPass is on,
//!   in arrival order, a departed one's place taken by the next);
//! - while nothing was missed or reset, a critical wait follows its lock: whoever holds it now
//!   (owner, tracked readers) is boosted, however often it changed hands during the wait,
//!   except while a release has woken the critical waiter (it retries first) and until it
//!   sleeps again;
//! - a woken waiter is boosted only while it is about to take the lock;
//! - pick only ever names a boosted task that is on that CPU's runqueue.
//!
//! Synchronous binder calls run through the same world: a call is a wait on its transaction,
//! held by the server thread that took it, or by the pool's busy threads while it is queued,
//! through its whole life: taken, replied and received; freed without a reply (the server
//! thread may die with it); the caller exiting; nested calls, back to the caller among them.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use superpass_core::detector::READER_RECORD;
use superpass_core::stats::Counter;
use superpass_core::tunables::Tunables;
use superpass_core::{binder_txn_lock, Engine, Event, LockKind, NoObserver, Role, Tid};

const THREADS: Tid = 10;
const LOCKS: u64 = 4; // 1, 2: mutexes; 3, 4: rwsems
const CPUS: u32 = 2;

#[derive(Clone, Debug)]
enum Op {
    Lock {
        t: Tid,
        l: u64,
        write: bool,
    },
    Unlock {
        t: Tid,
        l: u64,
    },
    GiveUp {
        t: Tid,
    },
    Grab {
        t: Tid,
    },
    Exit {
        t: Tid,
    },
    Enqueue {
        t: Tid,
        cpu: u32,
    },
    Dequeue {
        t: Tid,
    },
    Pick {
        cpu: u32,
        fair: usize,
    },
    Tick {
        cpu: u32,
    },
    Critical {
        t: Tid,
        add: bool,
    },
    Enable(bool),
    Tune {
        readers: u32,
        depth: u32,
        grants: u32,
        budget_ms: u64,
        pct: u32,
    },
    Advance {
        us: u64,
    },
    Wake {
        l: u64,
    },
    /// `t` sleeps: a woken critical waiter lost its retry.
    Sleep {
        t: Tid,
    },
    /// The owner of `l` releases it and `t`, arriving just then, takes it (barging).
    Handover {
        l: u64,
        t: Tid,
    },
    /// `t` makes a synchronous binder call: taken at once by server thread `s` (which may be
    /// in a call of its own: a nested call back to it), or queued while `pool` is busy.
    Call {
        t: Tid,
        s: Tid,
        queued: bool,
        pool: (Tid, Tid),
    },
    /// Server thread `s` takes `t`'s queued call.
    Take {
        t: Tid,
        s: Tid,
    },
    /// The server thread of `t`'s call replies; the reply wakes `t`.
    Reply {
        t: Tid,
    },
    /// `t` runs and reads the reply.
    Receive {
        t: Tid,
    },
    /// `t`'s call is freed: without a reply it fails (its server thread exiting with it if
    /// `server_exits`); after one, `t` has yet to read it.
    Free {
        t: Tid,
        server_exits: bool,
    },
    /// `t` exits in the middle of its call.
    CallerExit {
        t: Tid,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let t = 1..=THREADS;
    let l = 1..=LOCKS;
    prop_oneof![
        6 => (t.clone(), l.clone(), any::<bool>()).prop_map(|(t, l, write)| Op::Lock { t, l, write }),
        4 => (t.clone(), l).prop_map(|(t, l)| Op::Unlock { t, l }),
        1 => t.clone().prop_map(|t| Op::GiveUp { t }),
        3 => t.clone().prop_map(|t| Op::Grab { t }),
        1 => t.clone().prop_map(|t| Op::Exit { t }),
        4 => (t.clone(), 0..CPUS).prop_map(|(t, cpu)| Op::Enqueue { t, cpu }),
        2 => t.clone().prop_map(|t| Op::Dequeue { t }),
        4 => (0..CPUS, any::<usize>()).prop_map(|(cpu, fair)| Op::Pick { cpu, fair }),
        3 => (0..CPUS).prop_map(|cpu| Op::Tick { cpu }),
        1 => (1..=3 as Tid, any::<bool>()).prop_map(|(t, add)| Op::Critical { t, add }),
        1 => prop::bool::weighted(0.8).prop_map(Op::Enable),
        1 => (0..=3u32, 1..=3u32, 1..=6u32, 1..=20u64, 10..=100u32).prop_map(
            |(readers, depth, grants, budget_ms, pct)| Op::Tune { readers, depth, grants, budget_ms, pct }
        ),
        4 => (0..3000u64).prop_map(|us| Op::Advance { us }),
        2 => (1..=LOCKS).prop_map(|l| Op::Wake { l }),
        2 => t.clone().prop_map(|t| Op::Sleep { t }),
        3 => (1..=LOCKS, t.clone()).prop_map(|(l, t)| Op::Handover { l, t }),
        3 => (t.clone(), t.clone(), prop::bool::weighted(0.3), (t.clone(), t.clone()))
            .prop_map(|(t, s, queued, pool)| Op::Call { t, s, queued, pool }),
        2 => (t.clone(), t.clone()).prop_map(|(t, s)| Op::Take { t, s }),
        2 => t.clone().prop_map(|t| Op::Reply { t }),
        2 => t.clone().prop_map(|t| Op::Receive { t }),
        1 => (t.clone(), any::<bool>()).prop_map(|(t, server_exits)| Op::Free { t, server_exits }),
        1 => t.prop_map(|t| Op::CallerExit { t }),
    ]
}

fn is_mutex(l: u64) -> bool {
    l <= 2
}

#[derive(Default)]
struct World {
    owner: BTreeMap<u64, Tid>,           // mutex owner or rwsem writer
    readers: BTreeMap<u64, Vec<Tid>>,    // rwsem readers, in arrival order
    recorded: BTreeMap<u64, Vec<Tid>>,   // readers the engine records, in arrival order
    woken: BTreeMap<Tid, u64>,           // waiters woken by a release, until their wait ends
    woken_critical: BTreeSet<Tid>,       // of those, the ones critical when woken, until they sleep
    waiting: BTreeMap<Tid, (u64, bool)>, // thread -> (lock, write)
    rq: BTreeMap<Tid, u32>,
    curr: [Tid; CPUS as usize],
    critical: BTreeSet<Tid>,
    enabled: bool,
    /// Binder calls in progress by caller: the transaction's lock id, and whether it was
    /// replied to.
    calls: BTreeMap<Tid, (u64, bool)>,
    /// The last transaction's debug id.
    debug_id: u32,
}

impl World {
    fn holds_any(&self, t: Tid) -> bool {
        self.owner.values().any(|&o| o == t) || self.readers.values().any(|r| r.contains(&t))
    }
    fn holds(&self, t: Tid, l: u64) -> bool {
        self.owner.get(&l) == Some(&t) || self.readers.get(&l).is_some_and(|r| r.contains(&t))
    }
    fn can_take(&self, l: u64, write: bool) -> bool {
        let readers = self.readers.get(&l).map_or(0, |r| r.len());
        !self.owner.contains_key(&l) && (!write || readers == 0)
    }
    fn forget_tracking(&mut self) {
        self.recorded.clear();
    }
    /// The reference model of tracked readers: the first `k` recorded.
    fn tracked(&self, l: u64, k: usize) -> Vec<Tid> {
        self.recorded
            .get(&l)
            .map_or(vec![], |r| r[..r.len().min(k)].to_vec())
    }
}

struct Harness {
    e: Engine<NoObserver>,
    w: World,
    now: u64,
    /// Steps taken.
    step: u64,
    /// The step each current wait began at.
    wait_step: BTreeMap<Tid, u64>,
    /// The last step after which an exact follow-the-lock check cannot hold for waits that had
    /// begun (a reset, an unregistration, a missed bound, a spent budget).
    spoiled: u64,
    /// The sum of the counters that spoil, as of the last step.
    spoilers: u64,
}

impl Harness {
    fn new() -> Self {
        let mut e = Engine::new(CPUS, NoObserver);
        e.set_enabled(0, true);
        e.set_critical(0, &[(1, Role::Ui), (2, Role::Render)])
            .unwrap();
        let w = World {
            critical: [1, 2].into_iter().collect(),
            enabled: true,
            ..World::default()
        };
        Self {
            e,
            w,
            now: 1,
            step: 0,
            wait_step: BTreeMap::new(),
            spoiled: 0,
            spoilers: 0,
        }
    }

    fn take(&mut self, t: Tid, l: u64, write: bool) {
        let now = self.now;
        if write || is_mutex(l) {
            self.w.owner.insert(l, t);
            self.e.owner_acquired(now, l, t);
        } else {
            self.w.readers.entry(l).or_default().push(t);
            if self.w.enabled {
                let r = self.w.recorded.entry(l).or_default();
                if r.len() < READER_RECORD {
                    r.push(t);
                }
            }
            self.e.reader_acquired(now, l, t);
        }
    }

    fn release(&mut self, t: Tid, l: u64) {
        let now = self.now;
        if self.w.owner.get(&l) == Some(&t) {
            self.w.owner.remove(&l);
            self.e.owner_released(now, l, t);
        } else if let Some(r) = self.w.readers.get_mut(&l) {
            if let Some(i) = r.iter().position(|&x| x == t) {
                r.remove(i);
                if let Some(tr) = self.w.recorded.get_mut(&l) {
                    tr.retain(|&x| x != t);
                }
                self.e.reader_released(now, l, t);
            }
        }
    }

    fn kind(l: u64, write: bool) -> LockKind {
        match (is_mutex(l), write) {
            (true, _) => LockKind::Mutex,
            (false, true) => LockKind::RwsemWrite,
            (false, false) => LockKind::RwsemRead,
        }
    }

    /// Places the tasks an answer newly boosted where the model has them queued.
    fn place(&mut self, now: u64, boosted: &[Tid]) {
        for &b in boosted {
            if let Some(&cpu) = self.w.rq.get(&b) {
                self.e.enqueue(now, cpu, b);
            }
        }
    }

    /// `t` leaves its runqueue and its CPU.
    fn off_cpu(&mut self, now: u64, t: Tid) {
        if let Some(cpu) = self.w.rq.remove(&t) {
            self.e.dequeue(now, cpu, t);
        }
        for c in self.w.curr.iter_mut() {
            if *c == t {
                *c = 0;
            }
        }
    }

    /// `t`'s call (transaction `l`) is over for it: it no longer waits.
    fn end_call(&mut self, now: u64, t: Tid, l: u64) {
        self.w.calls.remove(&t);
        self.w.owner.remove(&l);
        self.w.readers.remove(&l);
        self.w.woken.remove(&t);
        self.w.woken_critical.remove(&t);
        if self.w.waiting.remove(&t).is_some() {
            self.runnable(now, t);
        }
    }

    fn binder_step(&mut self, op: &Op) {
        let now = self.now;
        match *op {
            Op::Call { t, s, queued, pool } => {
                if self.w.waiting.contains_key(&t) || self.w.calls.contains_key(&t) {
                    return;
                }
                // A server thread is free for work, or (a nested call back to it) waits for the
                // reply to a call of its own.
                let server_free = s != t
                    && self
                        .w
                        .waiting
                        .get(&s)
                        .map_or(true, |w| self.w.calls.get(&s) == Some(&(w.0, false)));
                if !queued && !server_free {
                    return;
                }
                self.w.debug_id += 1;
                let l = binder_txn_lock(self.w.debug_id);
                self.off_cpu(now, t);
                let owner = if queued {
                    let busy: Vec<Tid> = [pool.0, pool.1]
                        .into_iter()
                        .filter(|&p| p != t)
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    let seen = Event::LockSeen {
                        lock: l,
                        owner: 0,
                        readers: &busy,
                    };
                    self.e.handle(now, seen);
                    self.w.readers.insert(l, busy);
                    None
                } else {
                    self.w.owner.insert(l, s);
                    Some(s)
                };
                self.w.waiting.insert(t, (l, false));
                self.wait_step.insert(t, self.step);
                self.w.calls.insert(t, (l, false));
                let ev = Event::WaitStart {
                    waiter: t,
                    lock: l,
                    kind: LockKind::Binder,
                    owner,
                    cpu: 0,
                };
                let a = self.e.handle(now, ev);
                self.place(now, a.newly_boosted());
            }
            Op::Take { t, s } => {
                let Some(&(l, false)) = self.w.calls.get(&t) else {
                    return;
                };
                if s == t || self.w.owner.contains_key(&l) || self.w.waiting.contains_key(&s) {
                    return;
                }
                self.w.readers.remove(&l);
                self.w.owner.insert(l, s);
                let a = self.e.handle(now, Event::OwnerAcquired { lock: l, tid: s });
                self.place(now, a.newly_boosted());
            }
            Op::Reply { t } => {
                let Some(&(l, false)) = self.w.calls.get(&t) else {
                    return;
                };
                let Some(s) = self.w.owner.remove(&l) else {
                    return;
                };
                self.w.calls.insert(t, (l, true));
                self.w.woken.insert(t, l);
                if self.w.critical.contains(&t) {
                    self.w.woken_critical.insert(t);
                }
                for ev in Event::from_hook_binder_reply(l, s, t) {
                    let a = self.e.handle(now, ev);
                    self.place(now, a.newly_boosted());
                }
            }
            Op::Receive { t } => {
                if let Some(&(l, true)) = self.w.calls.get(&t) {
                    self.end_call(now, t, l);
                    self.e.handle(now, Event::from_hook_binder_received(t, l));
                }
            }
            Op::Free { t, server_exits } => {
                let Some(&(l, replied)) = self.w.calls.get(&t) else {
                    return;
                };
                if replied {
                    // The caller reads the reply later: its wait lasts until then.
                    self.e.handle(now, Event::CallFreed { lock: l, caller: t });
                    return;
                }
                let server = self.w.owner.get(&l).copied();
                if let Some(s) = server.filter(|_| server_exits) {
                    // It dies serving the call: binder fails the call as it goes.
                    self.w.owner.remove(&l);
                    if !self.w.waiting.contains_key(&s) && !self.w.holds_any(s) && s != t {
                        self.off_cpu(now, s);
                        self.e.task_exit(now, s);
                        self.w.critical.remove(&s);
                    }
                }
                self.end_call(now, t, l);
                self.e.handle(now, Event::CallFreed { lock: l, caller: t });
            }
            Op::CallerExit { t } => {
                let Some(&(l, _)) = self.w.calls.get(&t) else {
                    return;
                };
                if self.w.holds_any(t) {
                    return;
                }
                self.end_call(now, t, l);
                self.off_cpu(now, t);
                self.e.task_exit(now, t);
                self.w.critical.remove(&t);
            }
            _ => {}
        }
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let now = self.now;
        match *op {
            Op::Call { .. }
            | Op::Take { .. }
            | Op::Reply { .. }
            | Op::Receive { .. }
            | Op::Free { .. }
            | Op::CallerExit { .. } => self.binder_step(op),
            Op::Lock { t, l, write } => {
                if self.w.waiting.contains_key(&t) || self.w.holds(t, l) {
                    return Ok(());
                }
                if self.w.can_take(l, write) {
                    self.take(t, l, write);
                    return Ok(());
                }
                // Blocks: it leaves its runqueue and the wait hook fires.
                if let Some(cpu) = self.w.rq.remove(&t) {
                    self.e.dequeue(now, cpu, t);
                }
                self.w.waiting.insert(t, (l, write));
                self.wait_step.insert(t, self.step);
                let hint = self.w.owner.get(&l).copied();
                let was: BTreeSet<Tid> = (1..=THREADS).filter(|&x| self.e.is_boosted(x)).collect();
                let missed_before = self.missed();
                let chain = self.e.is_boosted(t);
                let boosted = self.e.wait_start(now, t, l, Self::kind(l, write), hint);
                for &b in boosted.as_slice() {
                    prop_assert!(!was.contains(&b), "reported as newly boosted twice");
                    if let Some(&cpu) = self.w.rq.get(&b) {
                        self.e.enqueue(now, cpu, b);
                    }
                }
                // Every blocker within the bounds is found.
                if self.w.enabled
                    && self.w.critical.contains(&t)
                    && !chain
                    && self.missed() == missed_before
                {
                    let expect: Vec<Tid> = match hint {
                        Some(o) => vec![o],
                        None if !is_mutex(l) && write => {
                            self.w.tracked(l, self.e.tunables().max_readers as usize)
                        }
                        None => vec![],
                    };
                    for b in expect.into_iter().filter(|&b| b != t) {
                        prop_assert!(
                            self.e.is_boosted(b),
                            "blocker {b} of {t} on {l} not boosted"
                        );
                    }
                }
            }
            Op::Unlock { t, l } => {
                if self.w.holds(t, l) {
                    self.release(t, l);
                }
            }
            // A binder caller waits for its reply: no retry, no giving up.
            Op::GiveUp { t } | Op::Grab { t } | Op::Sleep { t }
                if self.w.calls.contains_key(&t) => {}
            Op::GiveUp { t } => {
                if let Some((l, _)) = self.w.waiting.remove(&t) {
                    self.w.woken.remove(&t);
                    self.w.woken_critical.remove(&t);
                    self.runnable(now, t);
                    self.e.wait_finish(now, t, l);
                }
            }
            Op::Grab { t } => {
                if let Some(&(l, write)) = self.w.waiting.get(&t) {
                    if self.w.can_take(l, write) {
                        self.w.waiting.remove(&t);
                        self.w.woken.remove(&t);
                        self.w.woken_critical.remove(&t);
                        self.runnable(now, t);
                        self.e.wait_finish(now, t, l);
                        self.take(t, l, write);
                    }
                }
            }
            Op::Exit { t } => {
                if !self.w.waiting.contains_key(&t) && !self.w.holds_any(t) {
                    if let Some(cpu) = self.w.rq.remove(&t) {
                        self.e.dequeue(now, cpu, t);
                    }
                    self.e.task_exit(now, t);
                    self.w.critical.remove(&t);
                    for c in self.w.curr.iter_mut() {
                        if *c == t {
                            *c = 0;
                        }
                    }
                }
            }
            Op::Enqueue { t, cpu } => {
                if !self.w.waiting.contains_key(&t) {
                    if let Some(old) = self.w.rq.insert(t, cpu) {
                        self.e.dequeue(now, old, t);
                    }
                    self.e.enqueue(now, cpu, t);
                }
            }
            Op::Dequeue { t } => {
                if let Some(cpu) = self.w.rq.remove(&t) {
                    self.e.dequeue(now, cpu, t);
                    let c = &mut self.w.curr[cpu as usize];
                    if *c == t {
                        *c = 0;
                    }
                }
            }
            Op::Pick { cpu, fair } => {
                let on: Vec<Tid> = self
                    .w
                    .rq
                    .iter()
                    .filter(|(_, &c)| c == cpu)
                    .map(|(&t, _)| t)
                    .collect();
                let fair_next = if on.is_empty() {
                    0
                } else {
                    on[fair % on.len()]
                };
                let throttled = self.e.fast_track().throttled(cpu);
                let prev = self.w.curr[cpu as usize];
                let got = self.e.pick(now, cpu, fair_next);
                if let Some(p) = got {
                    prop_assert!(self.e.is_boosted(p), "picked an unboosted task");
                    prop_assert_eq!(
                        self.w.rq.get(&p),
                        Some(&cpu),
                        "picked a task not on this runqueue"
                    );
                    let turn = self
                        .e
                        .fast_track()
                        .grants()
                        .any(|g| g.blocker == p && g.depth == 0);
                    prop_assert!(
                        !throttled || !self.e.fast_track().throttled(cpu) || turn,
                        "throttled CPU took the fast track for a blocker"
                    );
                }
                self.w.curr[cpu as usize] = got.unwrap_or(fair_next);
                // The pick charged the task that ran: grants due then are placed, as the module
                // does (it picks again; the model's next pick does).
                self.regrant(now, prev);
            }
            Op::Tick { cpu } => {
                let curr = self.w.curr[cpu as usize];
                // A tick may end a bound, and grants due then are made: place them as the
                // module does.
                self.e.handle(now, Event::Tick { cpu, curr });
                self.regrant(now, curr);
            }
            Op::Critical { t, add } => {
                if add {
                    if self.e.add_critical(now, t, Role::Other).is_ok() {
                        self.w.critical.insert(t);
                    }
                } else if self.e.remove_critical(now, t).is_ok() {
                    self.w.critical.remove(&t);
                    // Unregistering ends its wait in the engine, woken mark and all.
                    self.w.woken_critical.remove(&t);
                }
            }
            Op::Enable(on) => {
                if self.w.enabled && !on {
                    self.w.forget_tracking();
                }
                self.e.set_enabled(now, on);
                self.w.enabled = on;
            }
            Op::Tune {
                readers,
                depth,
                grants,
                budget_ms,
                pct,
            } => {
                let t = Tunables {
                    max_readers: readers,
                    max_depth: depth,
                    max_grants: grants,
                    budget_ns: budget_ms * 1_000_000,
                    slice_ns: 500_000,
                    throttle_max_pct: pct,
                    throttle_window_ns: 20_000_000,
                    ..Tunables::default()
                };
                self.e.set_tunables(now, t).unwrap();
                self.w.forget_tracking();
            }
            Op::Advance { us } => self.now += us * 1000,
            Op::Handover { l, t } => {
                if let Some(&o) = self.w.owner.get(&l) {
                    if o != t && !self.w.waiting.contains_key(&t) && !self.w.holds(t, l) {
                        self.release(o, l);
                        let write = true;
                        if self.w.can_take(l, write) {
                            self.take(t, l, write);
                        }
                    }
                }
            }
            Op::Sleep { t } => {
                // Only a waiter that was critical when woken had its wait marked woken; one
                // woken before it became critical keeps its handoff boost until its wait ends.
                if self.w.woken_critical.remove(&t) {
                    self.w.woken.remove(&t);
                }
                let (l, owner) = self.w.waiting.get(&t).map_or((0, 0), |&(l, _)| {
                    (l, self.w.owner.get(&l).copied().unwrap_or(0))
                });
                for &b in self.e.waiter_slept(now, t, l, owner).as_slice() {
                    if let Some(&cpu) = self.w.rq.get(&b) {
                        self.e.enqueue(now, cpu, b);
                    }
                }
            }
            Op::Wake { l } => {
                // A release wakes the first waiter in line (here: the lowest TID waiting).
                let first = self
                    .w
                    .waiting
                    .iter()
                    .find(|(_, w)| w.0 == l)
                    .map(|(&t, _)| t);
                if let Some(t) = first {
                    if let std::collections::btree_map::Entry::Vacant(v) = self.w.woken.entry(t) {
                        v.insert(l);
                        if self.w.critical.contains(&t) {
                            self.w.woken_critical.insert(t);
                        }
                        // The model does not say who released: the waker is unknown.
                        for &b in self.e.waiter_woken(now, l, t, 0).as_slice() {
                            if let Some(&cpu) = self.w.rq.get(&b) {
                                self.e.enqueue(now, cpu, b);
                            }
                        }
                    }
                }
            }
        }
        self.step += 1;
        let s = self.e.stats();
        let spoilers = self.missed() + s.get(Counter::RevokeBudget);
        if spoilers != self.spoilers
            || matches!(op, Op::Tune { .. } | Op::Enable(_) | Op::Critical { .. })
        {
            self.spoilers = spoilers;
            self.spoiled = self.step;
        }
        self.check()
    }

    /// A waiter finishes its wait in its own context: it is on a runqueue (woken) by then.
    /// The grants due after a tick or pick that charged `curr`, placed where the model has
    /// their tasks queued. The model keeps no wait records: the platform reads no lock.
    fn regrant(&mut self, now: u64, curr: Tid) {
        let ev = Event::Regrant {
            curr,
            lock: 0,
            owner: 0,
        };
        let a = self.e.handle(now, ev);
        for &b in a.newly_boosted() {
            if let Some(&c) = self.w.rq.get(&b) {
                self.e.enqueue(now, c, b);
            }
        }
    }

    fn runnable(&mut self, now: u64, t: Tid) {
        if let std::collections::btree_map::Entry::Vacant(v) = self.w.rq.entry(t) {
            let cpu = t.unsigned_abs() % CPUS;
            v.insert(cpu);
            self.e.enqueue(now, cpu, t);
        }
    }

    fn missed(&self) -> u64 {
        let s = self.e.stats();
        s.get(Counter::MissedGrants) + s.get(Counter::MissedDepth) + s.get(Counter::MissedLocks)
    }

    fn check(&self) -> Result<(), TestCaseError> {
        self.e.check_invariants().map_err(TestCaseError::fail)?;
        let t = self.e.tunables();
        prop_assert!(self.e.detector().tracked_locks() <= t.lock_slots as usize);
        for g in self.e.fast_track().grants() {
            // No grant outlives its reason, judged against the true world.
            prop_assert!(self.w.enabled);
            prop_assert!(
                self.w.critical.contains(&g.root),
                "grant {g:?}: root not critical"
            );
            let turn = g.depth == 0 && g.blocker == g.root && g.via == g.root;
            if turn && !self.w.waiting.contains_key(&g.root) {
                prop_assert!(
                    self.w.rq.contains_key(&g.root),
                    "turn {g:?} outlived its wait after its thread slept"
                );
                continue;
            }
            prop_assert!(
                self.w.holds(g.blocker, g.lock) || self.w.woken.get(&g.blocker) == Some(&g.lock),
                "grant {g:?}: blocker neither holds the lock nor is about to take it"
            );
            prop_assert_eq!(
                self.w.waiting.get(&g.via).map(|w| w.0),
                Some(g.lock),
                "grant {:?}: waiter not waiting",
                g
            );
            prop_assert!(
                self.w.waiting.contains_key(&g.root),
                "grant {g:?}: root not waiting"
            );
            prop_assert!(g.depth <= t.max_depth);
        }
        for x in 1..=THREADS {
            if let Some(used) = self.e.fast_track().used_ns(x) {
                prop_assert!(used < t.budget_ns, "boosted task over budget");
            }
        }
        self.check_follows()
    }

    /// While nothing was missed, revoked for budget or reset, every critical wait's current
    /// holders are boosted, whoever held the lock when the wait began.
    fn check_follows(&self) -> Result<(), TestCaseError> {
        if !self.w.enabled {
            return Ok(());
        }
        let k = self.e.tunables().max_readers as usize;
        for (&t, &(l, write)) in &self.w.waiting {
            if !self.w.critical.contains(&t) || self.wait_step[&t] < self.spoiled {
                continue;
            }
            if self.w.woken.contains_key(&t) {
                // Woken: it retries before anyone is granted for it.
                continue;
            }
            let holders = match self.w.owner.get(&l) {
                Some(&o) => vec![o],
                // A read wait with no writer waits behind a queued writer; not modelled here.
                None if !is_mutex(l) && write => self.w.tracked(l, k),
                None => vec![],
            };
            for h in holders.into_iter().filter(|&h| h != t) {
                prop_assert!(
                    self.e.is_boosted(h),
                    "holder {h} of {l} not boosted while critical {t} waits on it"
                );
            }
        }
        Ok(())
    }
}

/// 512 cases by default; set `PROPTEST_CASES` for a longer hunt.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_world(ops in prop::collection::vec(op(), 1..300)) {
        let mut h = Harness::new();
        for op in &ops {
            h.step(op)?;
        }
    }
}
