//! Property tests: random but lock-consistent hook sequences against a brute-force world model.
//!
//! The test keeps the *true* state of a small world (who holds which lock, who waits where, which
//! runqueue each thread is on) and drives the engine with exactly the events the kernel hooks
//! would produce. After every step it checks the engine against that truth:
//! - memory stays within the tunables' bounds (`check_invariants`);
//! - no grant outlives its reason: its blocker really holds the lock and its waiter really waits;
//! - no boosted task has spent its budget;
//! - a throttled CPU never takes the fast track;
//! - every blocker within the bounds is found (a reference list of tracked readers is kept with
//!   the documented rule: the first `max_readers` readers to arrive while SuperPass is on);
//! - pick only ever names a boosted task that is on that CPU's runqueue.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use superpass_core::stats::Counter;
use superpass_core::tunables::Tunables;
use superpass_core::{Engine, LockKind, NoObserver, Role, Tid};

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
    ]
}

fn is_mutex(l: u64) -> bool {
    l <= 2
}

#[derive(Default)]
struct World {
    owner: BTreeMap<u64, Tid>,           // mutex owner or rwsem writer
    readers: BTreeMap<u64, Vec<Tid>>,    // rwsem readers, in arrival order
    tracked: BTreeMap<u64, Vec<Tid>>,    // the reference model of tracked readers
    waiting: BTreeMap<Tid, (u64, bool)>, // thread -> (lock, write)
    rq: BTreeMap<Tid, u32>,
    curr: [Tid; CPUS as usize],
    critical: BTreeSet<Tid>,
    enabled: bool,
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
        self.tracked.clear();
    }
}

struct Harness {
    e: Engine<NoObserver>,
    w: World,
    now: u64,
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
        Self { e, w, now: 1 }
    }

    fn take(&mut self, t: Tid, l: u64, write: bool) {
        let now = self.now;
        if write || is_mutex(l) {
            self.w.owner.insert(l, t);
            self.e.owner_acquired(now, l, t);
        } else {
            self.w.readers.entry(l).or_default().push(t);
            if self.w.enabled {
                let k = self.e.tunables().max_readers as usize;
                let tr = self.w.tracked.entry(l).or_default();
                if tr.len() < k {
                    tr.push(t);
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
                if let Some(tr) = self.w.tracked.get_mut(&l) {
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

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let now = self.now;
        match *op {
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
                            self.w.tracked.get(&l).cloned().unwrap_or_default()
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
            Op::GiveUp { t } => {
                if let Some((l, _)) = self.w.waiting.remove(&t) {
                    self.e.wait_finish(now, t, l, false);
                }
            }
            Op::Grab { t } => {
                if let Some(&(l, write)) = self.w.waiting.get(&t) {
                    if self.w.can_take(l, write) {
                        self.w.waiting.remove(&t);
                        self.e.wait_finish(now, t, l, true);
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
                let prev = self.w.curr[cpu as usize];
                let throttled = self.e.fast_track().throttled(cpu);
                let got = self.e.pick(now, cpu, prev, fair_next);
                if let Some(p) = got {
                    prop_assert!(self.e.is_boosted(p), "picked an unboosted task");
                    prop_assert_eq!(
                        self.w.rq.get(&p),
                        Some(&cpu),
                        "picked a task not on this runqueue"
                    );
                    prop_assert!(
                        !throttled || !self.e.fast_track().throttled(cpu),
                        "throttled CPU took the fast track"
                    );
                }
                self.w.curr[cpu as usize] = got.unwrap_or(fair_next);
            }
            Op::Tick { cpu } => {
                let curr = self.w.curr[cpu as usize];
                self.e.tick(now, cpu, curr);
            }
            Op::Critical { t, add } => {
                if add {
                    if self.e.add_critical(now, t, Role::Other).is_ok() {
                        self.w.critical.insert(t);
                    }
                } else if self.e.remove_critical(now, t).is_ok() {
                    self.w.critical.remove(&t);
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
        }
        self.check()
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
                self.w.holds(g.blocker, g.lock),
                "grant {g:?}: blocker no longer holds the lock"
            );
            prop_assert_eq!(
                self.w.waiting.get(&g.via).map(|w| w.0),
                Some(g.lock),
                "grant {:?}: waiter not waiting",
                g
            );
            prop_assert!(
                self.w.critical.contains(&g.root),
                "grant {g:?}: root not critical"
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
