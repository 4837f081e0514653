//! Turns decoded [`Events`] into trace_processor-shaped rows: threads, processes, tracks,
//! slices, counters, sched and thread_state, plus SuperPass's tables.
//!
//! Everything is sorted by `(ts, file order)` first, so out-of-order input is repaired here
//! rather than rejected. The thread_state rules follow trace_processor's:
//! - `sched_switch` ends the outgoing thread's `Running` row and opens a row in the state
//!   it left with (`R`, `R+` when preempted, `S`, `D`, ...); the incoming thread's open row
//!   ends and a `Running` row (with `cpu`) starts;
//! - `sched_waking` (or `sched_wakeup`, if no waking came first) ends a sleeping row and
//!   opens `R` with `waker_utid` = the thread that ran the waking code;
//! - `sched_blocked_reason` names the function of the latest sleeping row (the kernel emits
//!   it during the wakeup, so that row may already be closed);
//! - rows still open at the end have `dur = -1`, as do slices with no end; the last sched
//!   slice of each CPU ends at the end of the trace.
//!
//! Synchronous binder calls become `binder_wait` rows ([`crate::binder::waits`]).

use std::collections::BTreeSet;

use crate::binder;
use crate::events::{
    Diagnostics, Events, FastMap, Interner, PrevState, SchedKind, SliceKind, SpKind, TrackKey,
};
use crate::superpass;

/// A `process` row.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessRow {
    /// Unique process id (row id).
    pub upid: u32,
    /// Kernel pid.
    pub pid: i32,
    /// Name, when known.
    pub name: Option<String>,
}

/// A `thread` row.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    /// Unique thread id (row id); 0 is the idle thread.
    pub utid: u32,
    /// Kernel tid.
    pub tid: i32,
    /// Name: descriptor name, else the latest comm.
    pub name: Option<String>,
    /// Owning process, when known.
    pub upid: Option<u32>,
}

/// What a track holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackKind {
    /// Slices of one thread.
    Thread,
    /// Slices of one process or of nothing in particular.
    Process,
    /// Counter values.
    Counter,
}

/// A `track` row.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackRow {
    /// Row id.
    pub id: u32,
    /// Name, if any.
    pub name: Option<String>,
    /// Kind.
    pub kind: TrackKind,
    /// Thread, for thread tracks.
    pub utid: Option<u32>,
    /// Process, for process and counter tracks.
    pub upid: Option<u32>,
    /// CPU, for per-CPU counter tracks.
    pub cpu: Option<u32>,
}

/// A `slice` row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceRow {
    /// Row id (slices are numbered in begin order).
    pub id: u32,
    /// Begin, ns.
    pub ts: i64,
    /// Duration, ns; -1 if it never ended.
    pub dur: i64,
    /// Track.
    pub track_id: u32,
    /// Interned category.
    pub cat: Option<u32>,
    /// Interned name.
    pub name: u32,
    /// Nesting depth on its track.
    pub depth: u32,
    /// Enclosing slice.
    pub parent_id: Option<u32>,
}

/// A `counter` row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterRow {
    /// Time, ns.
    pub ts: i64,
    /// Counter track.
    pub track_id: u32,
    /// Value.
    pub value: f64,
}

/// A `sched` row: one thread on one CPU from one switch to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedRow {
    /// Switch-in time, ns.
    pub ts: i64,
    /// Time on CPU, ns.
    pub dur: i64,
    /// CPU.
    pub cpu: u32,
    /// Thread.
    pub utid: u32,
    /// Interned state it left in (`R`, `S`, ...); `None` for the last slice of a CPU.
    pub end_state: Option<u32>,
    /// Kernel priority.
    pub priority: i32,
}

/// A `thread_state` row of the thread whose list holds it ([`Model::thread_state`]).
///
/// A thread's rows tile its time: each lasts until the thread's next row begins, and the
/// last one is still open at the end of the trace (`dur = -1`). So neither the thread nor
/// the duration is stored, and the optional numbers use [`StateRow::NONE`]: the rows are
/// the model's biggest table, and 32 bytes each instead of 56 keep an import's peak memory
/// down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateRow {
    /// Start, ns.
    pub ts: i64,
    /// The row's number in time order over all threads (the `id` column).
    pub id: u32,
    /// Interned state: `Running`, `R`, `R+`, `S`, `D`, ...
    pub state: u32,
    /// CPU, for `Running`; else [`StateRow::NONE`].
    pub cpu: u32,
    /// Interned kernel function it slept in, or [`StateRow::NONE`].
    pub blocked_function: u32,
    /// Who woke it (for the `R` row after a wakeup), or [`StateRow::NONE`].
    pub waker_utid: u32,
    /// Whether the sleep was I/O (from `sched_blocked_reason`).
    pub io_wait: Option<bool>,
}

impl StateRow {
    /// No value, in the optional number fields.
    pub const NONE: u32 = u32::MAX;

    fn opt(v: u32) -> Option<u32> {
        (v != Self::NONE).then_some(v)
    }

    /// The CPU, for `Running`.
    pub fn cpu(&self) -> Option<u32> {
        Self::opt(self.cpu)
    }

    /// The interned function it slept in, when known.
    pub fn blocked_function(&self) -> Option<u32> {
        Self::opt(self.blocked_function)
    }

    /// The thread that woke it, when known.
    pub fn waker_utid(&self) -> Option<u32> {
        Self::opt(self.waker_utid)
    }

    /// Its duration, given the thread's next row: until that row begins, or -1 (still
    /// open at the end of the trace).
    pub fn dur(&self, next: Option<&StateRow>) -> i64 {
        next.map_or(-1, |n| n.ts - self.ts)
    }
}

/// A SuperPass event with tids resolved to utids.
#[derive(Debug, Clone, PartialEq)]
pub enum SpRow {
    /// `superpass_block`.
    Block {
        /// ns.
        ts: i64,
        /// CPU.
        cpu: u32,
        /// Critical thread.
        waiter: u32,
        /// Lock owner.
        blocker: u32,
        /// Lock address.
        lock: u64,
        /// Lock kind.
        kind: String,
    },
    /// `superpass_grant`.
    Grant {
        /// ns.
        ts: i64,
        /// CPU.
        cpu: u32,
        /// Boosted thread.
        blocker: u32,
        /// Thread it blocks.
        waiter: u32,
        /// Critical thread at the chain's root.
        root: u32,
        /// Lock address.
        lock: u64,
        /// Chain depth.
        depth: i64,
    },
    /// `superpass_revoke`.
    Revoke {
        /// ns.
        ts: i64,
        /// CPU.
        cpu: u32,
        /// Thread.
        blocker: u32,
        /// Reason.
        reason: String,
    },
    /// `superpass_pick`.
    Pick {
        /// ns.
        ts: i64,
        /// CPU reported by the event.
        cpu: i64,
        /// Thread picked.
        utid: u32,
    },
    /// `superpass_queue`.
    Queue {
        /// ns.
        ts: i64,
        /// CPU whose runqueue the thread joined (the event's).
        cpu: i64,
        /// Boosted thread.
        utid: u32,
        /// Whether that CPU was asked to pick again at once.
        run_now: bool,
    },
    /// `superpass_throttle`.
    Throttle {
        /// ns.
        ts: i64,
        /// CPU throttled (the event's).
        cpu: i64,
        /// How long, ns.
        dur: i64,
    },
    /// `superpass_probes`.
    Probes {
        /// ns.
        ts: i64,
        /// CPU that recorded it.
        cpu: u32,
        /// Probe groups attached from now on, as the module prints them.
        groups: &'static str,
    },
}

/// A `binder_wait` row: a synchronous binder call, its client waiting on its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinderWaitRow {
    /// The call as matched, with tids.
    pub wait: binder::Wait,
    /// The client's utid.
    pub client_utid: u32,
    /// The server's utid.
    pub server_utid: u32,
    /// The row of the call the client was serving when it made this one (a nested call);
    /// `None` when that call is no row or its transaction id is not unique in the trace.
    pub parent_id: Option<u32>,
}

/// All rows of a trace.
#[derive(Debug, Default)]
pub struct Model {
    /// Interned strings referenced by rows.
    pub strings: Interner,
    /// Processes by upid.
    pub processes: Vec<ProcessRow>,
    /// Threads by utid.
    pub threads: Vec<ThreadRow>,
    /// Tracks by id.
    pub tracks: Vec<TrackRow>,
    /// Slices by id.
    pub slices: Vec<SliceRow>,
    /// Counter samples.
    pub counters: Vec<CounterRow>,
    /// Sched slices in time order.
    pub sched: Vec<SchedRow>,
    /// Thread states by utid, each thread's in time order.
    pub thread_state: Vec<Vec<StateRow>>,
    /// SuperPass events in time order.
    pub superpass: Vec<SpRow>,
    /// Synchronous binder calls, in call order (the row id is the index).
    pub binder_waits: Vec<BinderWaitRow>,
    /// Binder transactions read, by kind.
    pub binder_counts: binder::Counts,
    /// First and last timestamp.
    pub bounds: (i64, i64),
    /// What was skipped or repaired.
    pub diag: Diagnostics,
    /// Events decoded (sched + slice + superpass + binder), for throughput figures.
    pub event_count: u64,
}

/// Maps kernel task-state bits (as `sched_switch.prev_state` reports them on 4.14+) to
/// the letters ftrace prints: `R`, `R+` (preempted), `S`, `D`, `T`, `t`, `X`, `Z`, `P`, `I`.
pub fn state_letters(bits: i64) -> String {
    const PREEMPTED: i64 = 0x100;
    if bits & PREEMPTED != 0 {
        return "R+".to_owned();
    }
    let b = bits & 0xff;
    if b == 0 {
        return "R".to_owned();
    }
    let letters = ['S', 'D', 'T', 't', 'X', 'Z', 'P', 'I'];
    let mut out = String::new();
    for (i, l) in letters.iter().enumerate() {
        if b & (1 << i) != 0 {
            if !out.is_empty() {
                out.push('|');
            }
            out.push(*l);
        }
    }
    out
}

/// Whether a state counts as runnable (woken or preempted, waiting for a CPU).
pub fn is_runnable(state: &str) -> bool {
    state == "R" || state == "R+"
}

/// A set of tids (hashed: most events repeat a few tids), listed sorted at the end.
#[derive(Default)]
struct TidSet(FastMap<i32, ()>);

impl TidSet {
    fn insert(&mut self, tid: i32) {
        self.0.insert(tid, ());
    }

    fn extend(&mut self, tids: impl IntoIterator<Item = i32>) {
        for t in tids {
            self.insert(t);
        }
    }

    fn sorted(self) -> Vec<i32> {
        let mut v: Vec<i32> = self.0.into_keys().collect();
        v.sort_unstable();
        v
    }
}

struct Builder {
    utids: FastMap<i32, u32>,
    running: u32,
    runnable: u32,
    preempted: u32,
    state_bits: FastMap<i64, u32>,
}

impl Builder {
    fn utid(&self, tid: i32) -> u32 {
        // Every tid was collected before building, so the lookup cannot miss; 0 (the idle
        // thread) is a harmless fallback all the same.
        self.utids.get(&tid).copied().unwrap_or(0)
    }
}

/// Builds all rows from `ev`, consuming it.
pub fn build(mut ev: Events) -> Model {
    let mut m = Model {
        event_count: (ev.sched.len() + ev.slices.len() + ev.superpass.len() + ev.binder.len())
            as u64,
        ..Model::default()
    };
    m.bounds = ev.bounds.unwrap_or((0, 0));

    // Threads: every tid mentioned anywhere gets a utid; 0 is the idle thread.
    let mut tids = TidSet::default();
    tids.extend(ev.threads.keys().copied());
    tids.insert(0);
    for s in &ev.sched {
        match s.kind {
            SchedKind::Switch {
                prev_tid, next_tid, ..
            } => {
                tids.extend(prev_tid);
                tids.insert(next_tid);
            }
            SchedKind::Waking { tid, waker, .. } => {
                tids.insert(tid);
                tids.extend(waker);
            }
            SchedKind::Blocked { tid, .. } => {
                tids.insert(tid);
            }
        }
    }
    for s in &ev.slices {
        if let TrackKey::Thread(tid) = s.track {
            tids.insert(tid);
        }
    }
    for t in ev.tracks.values() {
        tids.extend(t.tid);
    }
    for s in &ev.superpass {
        match &s.kind {
            SpKind::Block {
                waiter, blocker, ..
            } => tids.extend([*waiter, *blocker]),
            SpKind::Grant {
                blocker,
                waiter,
                root,
                ..
            } => tids.extend([*blocker, *waiter, *root]),
            SpKind::Revoke { blocker, .. } => {
                tids.insert(*blocker);
            }
            SpKind::Pick { tid, .. } | SpKind::Queue { tid, .. } => {
                tids.insert(*tid);
            }
            SpKind::Throttle { .. } | SpKind::Probes { .. } => {}
        }
    }
    tids.extend(ev.binder.iter().map(|e| e.tid));
    let mut pids: BTreeSet<i32> = ev.processes.keys().copied().collect();
    pids.extend(ev.threads.values().filter_map(|t| t.pid));
    pids.extend(ev.tracks.values().filter_map(|t| t.pid));
    pids.insert(0);
    let mut upids: FastMap<i32, u32> = FastMap::default();
    for (upid, pid) in pids.iter().enumerate() {
        upids.insert(*pid, upid as u32);
        // A process without a name of its own is named after its main thread (tid = pid),
        // as trace_processor does.
        let main_thread = || {
            ev.threads
                .get(pid)
                .and_then(|t| t.name.clone().or_else(|| t.comm.clone()))
        };
        let name = match ev.processes.get(pid) {
            Some(Some(n)) => Some(n.clone()),
            _ if *pid == 0 => Some("swapper".to_owned()),
            _ => main_thread(),
        };
        m.processes.push(ProcessRow {
            upid: upid as u32,
            pid: *pid,
            name,
        });
    }
    let mut b = Builder {
        utids: FastMap::default(),
        running: ev.strings.intern("Running"),
        runnable: ev.strings.intern("R"),
        preempted: ev.strings.intern("R+"),
        state_bits: FastMap::default(),
    };
    let tids = tids.sorted();
    for (utid, tid) in tids.iter().enumerate() {
        b.utids.insert(*tid, utid as u32);
        let info = ev.threads.get(tid);
        // A main thread known only from its process takes the process's name.
        let name = info
            .and_then(|t| t.name.clone().or_else(|| t.comm.clone()))
            .or_else(|| (*tid == 0).then(|| "swapper".to_owned()))
            .or_else(|| ev.processes.get(tid).cloned().flatten());
        let pid = info.and_then(|t| t.pid).or((*tid == 0).then_some(0));
        m.threads.push(ThreadRow {
            utid: utid as u32,
            tid: *tid,
            name,
            upid: pid.and_then(|p| upids.get(&p).copied()),
        });
    }

    // The events are freed as their rows are built, so that the events and the rows do not
    // all stay in memory at once. The slice rows come first: the slice events are then
    // gone before the biggest table, thread_state, is built. (Neither pass reads the other's
    // rows or interns a string the other looks up, so the order changes no row.)
    // The sched events are sorted on a second thread meanwhile: the two share nothing.
    let mut sched = std::mem::take(&mut ev.sched);
    ev.sched = std::thread::scope(|scope| {
        let sorter = scope.spawn(move || {
            sort_sched(&mut sched);
            sched
        });
        build_slices(&mut ev, &b, &upids, &mut m);
        sorter
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    build_sched(&mut ev, &mut b, &mut m);

    ev.superpass.sort_by_key(|e| (e.ts, e.seq));
    for e in ev.superpass.drain(..) {
        let (ts, cpu) = (e.ts, e.cpu);
        m.superpass.push(match e.kind {
            SpKind::Block {
                waiter,
                blocker,
                lock,
                kind,
            } => SpRow::Block {
                ts,
                cpu,
                waiter: b.utid(waiter),
                blocker: b.utid(blocker),
                lock,
                kind,
            },
            SpKind::Grant {
                blocker,
                waiter,
                root,
                lock,
                depth,
            } => SpRow::Grant {
                ts,
                cpu,
                blocker: b.utid(blocker),
                waiter: b.utid(waiter),
                root: b.utid(root),
                lock,
                depth,
            },
            SpKind::Revoke { blocker, reason } => SpRow::Revoke {
                ts,
                cpu,
                blocker: b.utid(blocker),
                reason,
            },
            SpKind::Pick { cpu: c, tid } => SpRow::Pick {
                ts,
                cpu: c,
                utid: b.utid(tid),
            },
            SpKind::Queue {
                cpu: c,
                tid,
                run_now,
            } => SpRow::Queue {
                ts,
                cpu: c,
                utid: b.utid(tid),
                run_now,
            },
            SpKind::Throttle { cpu: c, dur } => SpRow::Throttle { ts, cpu: c, dur },
            SpKind::Probes { groups } => SpRow::Probes {
                ts,
                cpu,
                groups: superpass::probe_groups_name(groups),
            },
        });
    }
    build_binder(&mut ev, &b, &mut m);
    m.strings = std::mem::take(&mut ev.strings);
    m.diag = std::mem::take(&mut ev.diag);
    m
}

/// Builds the `binder_wait` rows from `ev.binder`.
fn build_binder(ev: &mut Events, b: &Builder, m: &mut Model) {
    let (waits, counts) = binder::waits(std::mem::take(&mut ev.binder), &mut ev.diag);
    m.binder_counts = counts;
    // A nested call's parent by transaction id; ids wrap (i32), so a repeated id links none.
    let mut by_id: FastMap<i32, Option<u32>> = FastMap::default();
    for (i, w) in waits.iter().enumerate() {
        by_id
            .entry(w.debug_id)
            .and_modify(|v| *v = None)
            .or_insert(Some(i as u32));
    }
    m.binder_waits = waits
        .into_iter()
        .map(|w| BinderWaitRow {
            wait: w,
            client_utid: b.utid(w.client),
            server_utid: b.utid(w.server),
            parent_id: w.serving.and_then(|id| by_id.get(&id).copied().flatten()),
        })
        .collect();
}

/// Puts sched events in (time, file) order.
fn sort_sched(sched: &mut [crate::events::SchedEvent]) {
    // In place: a merge sort would exploit the runs sorted per CPU buffer, but needs a
    // scratch buffer half the events' size, at the import's peak of memory. The keys are
    // unique (file order), so the order is the same. (Sorting 16-byte keys and gathering
    // does fewer instructions but was slower: the gather's random reads miss the cache.)
    sched.sort_unstable_by_key(|e| (e.ts, e.seq));
}

/// Rows per step in which [`Freeing`] gives memory back.
const FREE_STEP: usize = 1 << 14;

/// Yields the items of a vector in order and frees its memory as it goes, a step at a
/// time: the events and the rows built from them then never take their whole size
/// together.
struct Freeing<T> {
    /// The items not yet yielded, last first.
    rev: Vec<T>,
}

impl<T> Freeing<T> {
    fn new(mut items: Vec<T>) -> Self {
        items.reverse();
        Freeing { rev: items }
    }
}

impl<T> Iterator for Freeing<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let item = self.rev.pop();
        if self.rev.capacity() - self.rev.len() >= FREE_STEP {
            self.rev.shrink_to_fit();
        }
        item
    }
}

/// Builds sched and thread_state from `ev.sched`, which must be sorted by [`sort_sched`].
fn build_sched(ev: &mut Events, b: &mut Builder, m: &mut Model) {
    debug_assert!(ev.sched.is_sorted_by_key(|e| (e.ts, e.seq)));
    let events = std::mem::take(&mut ev.sched);
    // Per thread: the index of its latest sleeping row, for `sched_blocked_reason`. A
    // thread's open row is its last.
    let mut last_sleep: Vec<Option<usize>> = vec![None; b.utids.len()];
    // Each thread's rows and the sched rows are sized beforehand (at most one row per
    // switch in or out and per wakeup): grown by doubling instead, their copies leave holes
    // in the heap that make up much of an import's peak memory.
    let mut sizes = vec![0usize; b.utids.len()];
    let mut switches = 0;
    for e in &events {
        match e.kind {
            SchedKind::Switch {
                prev_tid, next_tid, ..
            } => {
                switches += 1;
                // Without a `prev_tid` (compact sched), the thread is found while building.
                if let Some(t) = prev_tid {
                    sizes[b.utid(t) as usize] += 1;
                }
                sizes[b.utid(next_tid) as usize] += 1;
            }
            SchedKind::Waking { tid, .. } => sizes[b.utid(tid) as usize] += 1,
            SchedKind::Blocked { .. } => {}
        }
    }
    let states = &mut m.thread_state;
    states.extend(sizes.into_iter().map(Vec::with_capacity));
    let mut next_id = 0u32;
    let mut push = |rows: &mut Vec<StateRow>, mut row: StateRow| {
        row.id = next_id;
        next_id += 1;
        rows.push(row);
        rows.len() - 1
    };
    let new_row = |ts: i64, state: u32| StateRow {
        ts,
        id: 0,
        state,
        cpu: StateRow::NONE,
        blocked_function: StateRow::NONE,
        waker_utid: StateRow::NONE,
        io_wait: None,
    };
    // Per CPU: the running thread and its open sched row.
    let mut cpus: Vec<Option<(u32, usize)>> = Vec::new();
    m.sched.reserve(switches);

    for e in Freeing::new(events) {
        let ts = e.ts;
        let cpu = e.cpu as usize;
        if cpu >= cpus.len() {
            if cpu >= 4096 {
                continue;
            }
            cpus.resize(cpu + 1, None);
        }
        match e.kind {
            SchedKind::Switch {
                prev_tid,
                prev_state,
                next_tid,
                next_prio,
            } => {
                let state = match prev_state {
                    PrevState::Text(s) => s,
                    PrevState::Bits(bits) => match b.state_bits.get(&bits) {
                        Some(&s) => s,
                        None => {
                            let s = ev.strings.intern(&state_letters(bits));
                            b.state_bits.insert(bits, s);
                            s
                        }
                    },
                };
                let current = cpus[cpu];
                if let Some((_, idx)) = current {
                    let row = &mut m.sched[idx];
                    row.dur = ts - row.ts;
                    row.end_state = Some(state);
                }
                let prev = match prev_tid {
                    Some(t) => Some(b.utid(t)),
                    None => current.map(|(u, _)| u),
                };
                let next = b.utid(next_tid);
                m.sched.push(SchedRow {
                    ts,
                    dur: -1,
                    cpu: e.cpu,
                    utid: next,
                    end_state: None,
                    priority: next_prio,
                });
                cpus[cpu] = Some((next, m.sched.len() - 1));
                if let Some(prev) = prev.filter(|&u| u != 0) {
                    let runnable = state == b.runnable || state == b.preempted;
                    let i = push(&mut states[prev as usize], new_row(ts, state));
                    if !runnable {
                        last_sleep[prev as usize] = Some(i);
                    }
                }
                if next != 0 {
                    let row = StateRow {
                        cpu: e.cpu,
                        ..new_row(ts, b.running)
                    };
                    push(&mut states[next as usize], row);
                }
            }
            SchedKind::Waking { tid, waker, .. } => {
                let u = b.utid(tid);
                if u == 0 {
                    continue;
                }
                let rows = &mut states[u as usize];
                if let Some(open) = rows.last() {
                    let s = open.state;
                    if s == b.running || s == b.runnable || s == b.preempted {
                        continue;
                    }
                }
                let waker = match waker {
                    Some(t) => Some(b.utid(t)),
                    None => cpus[cpu].map(|(u, _)| u),
                };
                let row = StateRow {
                    waker_utid: waker.unwrap_or(StateRow::NONE),
                    ..new_row(ts, b.runnable)
                };
                push(rows, row);
            }
            SchedKind::Blocked {
                tid,
                function,
                io_wait,
            } => {
                let u = b.utid(tid);
                if let Some(i) = last_sleep[u as usize] {
                    let row = &mut states[u as usize][i];
                    row.blocked_function = function;
                    row.io_wait = Some(io_wait);
                }
            }
        }
    }
    let end = m.bounds.1;
    for (_, idx) in cpus.into_iter().flatten() {
        let row = &mut m.sched[idx];
        row.dur = end - row.ts;
    }
}

fn build_slices(ev: &mut Events, b: &Builder, upids: &FastMap<i32, u32>, m: &mut Model) {
    // In place, as `sort_sched`: the keys are unique.
    let mut events = std::mem::take(&mut ev.slices);
    events.sort_unstable_by_key(|e| (e.ts, e.seq));
    let mut thread_tracks: FastMap<u32, u32> = FastMap::default();
    let mut other_tracks: FastMap<TrackKey, u32> = FastMap::default();
    let mut stacks: Vec<Vec<usize>> = Vec::new();
    let mut nan = 0u64;

    for e in Freeing::new(events) {
        // Resolve the track: thread tracks merge atrace and track-event slices.
        let thread = match e.track {
            TrackKey::Thread(tid) => Some(tid),
            TrackKey::Uuid(u) => ev.tracks.get(&u).and_then(|t| t.tid),
            TrackKey::ProcessCounter(..) | TrackKey::CpuCounter(..) | TrackKey::Async(..) => None,
        };
        let track_id = match thread {
            Some(tid) => {
                let utid = b.utid(tid);
                *thread_tracks.entry(utid).or_insert_with(|| {
                    let id = m.tracks.len() as u32;
                    m.tracks.push(TrackRow {
                        id,
                        name: None,
                        kind: TrackKind::Thread,
                        utid: Some(utid),
                        upid: None,
                        cpu: None,
                    });
                    id
                })
            }
            None => *other_tracks.entry(e.track).or_insert_with(|| {
                let id = m.tracks.len() as u32;
                let mut cpu = None;
                let (name, kind, pid) = match e.track {
                    TrackKey::ProcessCounter(pid, name) => (
                        Some(ev.strings.get(name).to_owned()),
                        TrackKind::Counter,
                        Some(pid),
                    ),
                    TrackKey::CpuCounter(name, c) => {
                        cpu = Some(c);
                        (
                            Some(ev.strings.get(name).to_owned()),
                            TrackKind::Counter,
                            None,
                        )
                    }
                    TrackKey::Async(pid, name, _) => (
                        Some(ev.strings.get(name).to_owned()),
                        TrackKind::Process,
                        Some(pid),
                    ),
                    TrackKey::Uuid(u) => {
                        let t = ev.tracks.get(&u);
                        let kind = if t.is_some_and(|t| t.counter) {
                            TrackKind::Counter
                        } else {
                            TrackKind::Process
                        };
                        (t.and_then(|t| t.name.clone()), kind, t.and_then(|t| t.pid))
                    }
                    TrackKey::Thread(_) => (None, TrackKind::Thread, None),
                };
                m.tracks.push(TrackRow {
                    id,
                    name,
                    kind,
                    utid: None,
                    upid: pid.and_then(|p| upids.get(&p).copied()),
                    cpu,
                });
                id
            }),
        };
        let t = track_id as usize;
        if t >= stacks.len() {
            stacks.resize_with(t + 1, Vec::new);
        }
        let stack = &mut stacks[t];
        let mut open = |name: u32, cat: Option<u32>, dur: i64| -> usize {
            let id = m.slices.len() as u32;
            m.slices.push(SliceRow {
                id,
                ts: e.ts,
                dur,
                track_id,
                cat,
                name,
                depth: stack.len() as u32,
                parent_id: stack.last().map(|&i| i as u32),
            });
            id as usize
        };
        match e.kind {
            SliceKind::Begin { name, cat } => {
                let i = open(name, cat, -1);
                stack.push(i);
            }
            SliceKind::Instant { name } => {
                open(name, None, 0);
            }
            SliceKind::End => match stack.pop() {
                Some(i) => m.slices[i].dur = e.ts - m.slices[i].ts,
                None => m.diag_unmatched(),
            },
            SliceKind::Counter { value } => {
                if value.is_nan() {
                    nan += 1;
                }
                m.counters.push(CounterRow {
                    ts: e.ts,
                    track_id,
                    value,
                })
            }
        }
    }
    ev.diag.nan_counters += nan;
    let unended: usize = stacks.iter().map(Vec::len).sum();
    ev.diag.unended_slices += unended as u64;
    ev.diag.unmatched_ends += std::mem::take(&mut m.diag.unmatched_ends);
}

impl Model {
    fn diag_unmatched(&mut self) {
        self.diag.unmatched_ends += 1;
    }

    /// The interned string `i`.
    pub fn str(&self, i: u32) -> &str {
        self.strings.get(i)
    }

    /// The number of `thread_state` rows.
    pub fn thread_state_len(&self) -> usize {
        self.thread_state.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_bits_map_to_letters() {
        assert_eq!(state_letters(0), "R");
        assert_eq!(state_letters(0x100), "R+");
        assert_eq!(state_letters(1), "S");
        assert_eq!(state_letters(2), "D");
        assert_eq!(state_letters(0x80), "I");
        assert_eq!(state_letters(3), "S|D");
    }

    #[test]
    fn thread_states_are_per_thread_in_time_order_and_tile() {
        use crate::events::SchedEvent;
        let mut ev = Events::default();
        let f = ev.strings.intern("do_sleep");
        let switch = |prev_tid, bits, next_tid| SchedKind::Switch {
            prev_tid: Some(prev_tid),
            prev_state: PrevState::Bits(bits),
            next_tid,
            next_prio: 120,
        };
        // In file order, not time order: cpu 1's buffer comes after cpu 0's.
        let events = [
            (10, 0, switch(0, 0, 1)),
            (30, 0, switch(1, 1, 0)),
            (20, 1, switch(0, 0, 2)),
            (
                35,
                1,
                SchedKind::Blocked {
                    tid: 1,
                    function: f,
                    io_wait: true,
                },
            ),
            (
                40,
                1,
                SchedKind::Waking {
                    tid: 1,
                    waker: Some(2),
                    wakeup: false,
                },
            ),
            (50, 1, switch(2, 0x100, 1)),
        ];
        for (ts, cpu, kind) in events {
            let seq = ev.next_seq();
            ev.sched.push(SchedEvent { ts, seq, cpu, kind });
        }
        ev.bounds = Some((10, 50));
        let m = build(ev);
        // id, ts, dur, state, cpu, waker
        type Row = (u32, i64, i64, String, Option<u32>, Option<u32>);
        let rows = |utid: usize| -> Vec<Row> {
            let r = &m.thread_state[utid];
            (0..r.len())
                .map(|i| {
                    let s = &r[i];
                    (
                        s.id,
                        s.ts,
                        s.dur(r.get(i + 1)),
                        m.str(s.state).to_owned(),
                        s.cpu(),
                        s.waker_utid(),
                    )
                })
                .collect()
        };
        // utid 0 is the idle thread, which has no states; tids 1 and 2 are utids 1 and 2.
        assert!(m.thread_state[0].is_empty());
        let running = |id, ts, dur, cpu| (id, ts, dur, "Running".to_owned(), Some(cpu), None);
        assert_eq!(
            rows(1),
            vec![
                running(0, 10, 20, 0),
                (2, 30, 10, "S".to_owned(), None, None),
                (3, 40, 10, "R".to_owned(), None, Some(2)),
                running(5, 50, -1, 1),
            ]
        );
        assert_eq!(
            rows(2),
            vec![
                running(1, 20, 30, 1),
                (4, 50, -1, "R+".to_owned(), None, None)
            ]
        );
        let slept = &m.thread_state[1][1];
        assert_eq!(slept.blocked_function(), Some(f));
        assert_eq!(slept.io_wait, Some(true));
        assert_eq!(m.thread_state[1][2].blocked_function(), None);
        assert_eq!(m.thread_state_len(), 6);
    }
}
