//! The seed post's lock-blocking analysis as one report, human or JSON.
//!
//! Definitions (also in `docs/trace.md`):
//! - a *wait* is a `lockwait:<lock>` slice, a *hold* a `lockhold:<lock>` slice; the lock is
//!   the text after the colon; unended slices (`dur = -1`) are counted but left out of
//!   durations;
//! - percentiles: `pXX` is the shortest wait whose `PERCENT_RANK()` over that lock's waits is
//!   at least XX/100 (what `sql/tail.sql` computes);
//! - a *long* wait lasts at least `long_ns`; the report itemizes the `top` longest;
//! - *overlapping holds*: holds of the same lock by other threads that intersect the wait;
//!   a long wait's `holders` sums their states over the overlaps (holders asleep: the lock
//!   was held by a sleeping thread, which no CPU time can shorten);
//! - *barging*: holds of the same lock by other threads that begin inside the wait;
//! - *itemized*: the waiter's thread_state clipped to the wait: asleep (any sleeping
//!   state), runnable (`R`, `R+`), running; the rest is `unknown` (no sched data);
//! - SuperPass: a *blocking interval* runs from a `superpass_block` to the waiter's next
//!   `Running`; the blocker's runnable time in it is split at the first grant to it;
//! - SuperPass in a long wait: the `superpass_*` events inside it that concern its waiter
//!   (blocks it waits in, grants on its behalf, revokes, picks and runqueue joins of those
//!   blockers or of the waiter), the throttles of any CPU over it and the probe groups
//!   attached during it (`report_wait_superpass`). A `superpass_block` naming the waiter
//!   shows it was registered and a probe saw the wait.
//! - binder: synchronous binder calls are their own class of wait, the server thread the
//!   blocker (`report_binder`; null without binder events).

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::art;
use crate::art_owner::ArtOwners;
use crate::report_binder;
pub use crate::report_text::{render_long_waits, render_text};
use crate::report_wait_superpass::{has_table, Timeline};

/// Report knobs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Waits at least this long (ns) are "long".
    pub long_ns: i64,
    /// How many of the longest waits to itemize.
    pub top: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            long_ns: 1_000_000,
            top: 10,
        }
    }
}

/// Time of one thread in a window, by state class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Itemized {
    /// Sleeping (S, D, ...).
    pub asleep_ns: i64,
    /// Runnable, waiting for a CPU (R, R+).
    pub runnable_ns: i64,
    /// On a CPU.
    pub running_ns: i64,
    /// Not covered by any thread_state row.
    pub unknown_ns: i64,
}

impl Itemized {
    /// Adds `o`'s times.
    pub(crate) fn add(&mut self, o: Itemized) {
        self.asleep_ns += o.asleep_ns;
        self.runnable_ns += o.runnable_ns;
        self.running_ns += o.running_ns;
        self.unknown_ns += o.unknown_ns;
    }

    /// The times as JSON (`*_ns` keys).
    pub(crate) fn json(&self) -> Value {
        json!({
            "asleep_ns": self.asleep_ns,
            "runnable_ns": self.runnable_ns,
            "running_ns": self.running_ns,
            "unknown_ns": self.unknown_ns,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Asleep,
    Runnable,
    Running,
}

#[derive(Debug, Clone, Copy)]
struct StateSpan {
    ts: i64,
    end: i64,
    class: Class,
    waker: Option<u32>,
}

#[derive(Debug, Clone)]
struct LockSlice {
    id: i64,
    ts: i64,
    dur: i64,
    utid: u32,
    /// The lock: the text after `lockwait:`/`lockhold:`, or `art:<lock>` for ART.
    lock: String,
    /// The census name: the slice name, or `art:<lock>` for ART contention.
    label: String,
    wait: bool,
    /// The owner ART named (`owner tid`), as a utid.
    owner: Option<u32>,
    /// For an ART monitor wait: the waiter's process and the methods ART named.
    monitor: Option<MonitorWait>,
}

/// What ART says about a Java monitor wait: for the per-process method tables.
#[derive(Debug, Clone)]
struct MonitorWait {
    process: Option<String>,
    /// The waiter's method and source line (the long form).
    blocked: Option<(String, String)>,
    /// The owner's (the long form, with lock profiling on).
    blocking: Option<(String, String)>,
}

impl LockSlice {
    fn end(&self) -> i64 {
        self.ts + self.dur
    }
}

/// Everything the report reads, loaded once.
struct Data {
    end_ts: i64,
    start_ts: i64,
    threads: BTreeMap<u32, (i64, String)>,
    states: BTreeMap<u32, Vec<StateSpan>>,
    locks: Vec<LockSlice>,
    unended: BTreeMap<String, i64>,
    /// Slices of any name: a trace with slices but no lock slices gets a hint.
    slices: i64,
    /// SuperPass's events.
    sp: Timeline,
}

impl Data {
    fn load(conn: &Connection) -> rusqlite::Result<Data> {
        let (start_ts, end_ts): (i64, i64) = conn
            .query_row("SELECT start_ts, end_ts FROM trace_bounds", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap_or((0, 0));
        let mut threads = BTreeMap::new();
        let mut st = conn.prepare("SELECT utid, tid, COALESCE(name, '') FROM thread")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get(1)?, r.get(2)?)))?;
        for row in rows {
            let (u, tid, name) = row?;
            threads.insert(u, (tid, name));
        }
        let mut states: BTreeMap<u32, Vec<StateSpan>> = BTreeMap::new();
        let mut st = conn.prepare(
            "SELECT utid, ts, dur, state, waker_utid FROM thread_state ORDER BY utid, ts",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let dur: i64 = r.get(2)?;
            let ts: i64 = r.get(1)?;
            let state: String = r.get(3)?;
            let class = match state.as_str() {
                "Running" => Class::Running,
                "R" | "R+" => Class::Runnable,
                _ => Class::Asleep,
            };
            states.entry(r.get(0)?).or_default().push(StateSpan {
                ts,
                end: if dur < 0 { end_ts } else { ts + dur },
                class,
                waker: r.get(4)?,
            });
        }
        let art_owners = ArtOwners::load(conn)?;
        let mut locks = Vec::new();
        let mut unended = BTreeMap::new();
        // ART's contention slices count as waits; one nested in another (newer ART writes
        // both shapes for one wait) is the same wait and is left out.
        let mut st = conn.prepare(
            "SELECT s.id, s.ts, s.dur, s.utid, s.name, p.name, s.process_name FROM thread_slice s \
             LEFT JOIN slice p ON p.id = s.parent_id \
             WHERE s.name GLOB 'lockwait:*' OR s.name GLOB 'lockhold:*' \
             OR s.name GLOB 'Lock contention on *' \
             OR s.name GLOB 'monitor contention with owner *' ORDER BY s.ts, s.id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(4)?;
            let parent: Option<String> = r.get(5)?;
            let dur: i64 = r.get(2)?;
            let mut monitor = None;
            let (lock, label, wait, owner) = match art::parse(&name) {
                Some(c) => {
                    if parent.as_deref().and_then(art::parse).is_some() {
                        continue;
                    }
                    // Grouped by kind: monitor, thread list lock, ... (not per method).
                    let kind = c.kind();
                    if kind == "monitor" {
                        let site = |s: art::Site<'_>| (s.method.to_owned(), s.src.to_owned());
                        monitor = Some(MonitorWait {
                            process: r.get(6)?,
                            blocked: c.blocked.map(site),
                            blocking: c.blocking.map(site),
                        });
                    }
                    let lock = format!("art:{kind}");
                    let owner = art_owners.resolve(&c, r.get(3)?);
                    (lock.clone(), lock, true, owner)
                }
                None => {
                    let (kind, lock) = name.split_once(':').unwrap_or(("", ""));
                    (lock.to_owned(), name.clone(), kind == "lockwait", None)
                }
            };
            if dur < 0 {
                *unended.entry(label.clone()).or_insert(0) += 1;
            }
            locks.push(LockSlice {
                id: r.get(0)?,
                ts: r.get(1)?,
                dur,
                utid: r.get(3)?,
                lock,
                label,
                wait,
                owner,
                monitor,
            });
        }
        let slices: i64 = conn.query_row("SELECT COUNT(*) FROM slice", [], |r| r.get(0))?;
        let sp = Timeline::load(conn)?;
        Ok(Data {
            end_ts,
            start_ts,
            threads,
            states,
            locks,
            unended,
            slices,
            sp,
        })
    }

    fn thread(&self, utid: u32) -> Value {
        let (tid, name) = self
            .threads
            .get(&utid)
            .cloned()
            .unwrap_or((-1, String::new()));
        json!({"utid": utid, "tid": tid, "name": name})
    }

    /// The spans of `utid` that intersect `[start, end)`.
    fn spans(&self, utid: u32, start: i64, end: i64) -> impl Iterator<Item = &StateSpan> {
        let v = self.states.get(&utid).map(Vec::as_slice).unwrap_or(&[]);
        // Rows of one thread do not overlap, so the first candidate is the last row that
        // starts at or before `start`.
        let first = v.partition_point(|s| s.ts <= start).saturating_sub(1);
        v[first..]
            .iter()
            .take_while(move |s| s.ts < end)
            .filter(move |s| s.end > start)
    }

    fn itemize(&self, utid: u32, start: i64, end: i64) -> Itemized {
        let mut it = Itemized::default();
        let mut covered = 0;
        for s in self.spans(utid, start, end) {
            let d = s.end.min(end) - s.ts.max(start);
            covered += d;
            match s.class {
                Class::Asleep => it.asleep_ns += d,
                Class::Runnable => it.runnable_ns += d,
                Class::Running => it.running_ns += d,
            }
        }
        it.unknown_ns = (end - start - covered).max(0);
        it
    }

    /// Who made `utid` runnable inside `[start, end)`: (when, waker utid).
    fn wakers(&self, utid: u32, start: i64, end: i64) -> impl Iterator<Item = (i64, u32)> + '_ {
        self.spans(utid, start, end)
            .filter(move |s| s.class == Class::Runnable && s.ts >= start)
            .filter_map(|s| s.waker.map(|u| (s.ts, u)))
    }

    fn end_of(&self, s: &LockSlice) -> i64 {
        if s.dur < 0 {
            self.end_ts
        } else {
            s.end()
        }
    }
}

/// The holds of one lock in ts order, and the longest of them.
#[derive(Default)]
struct Holds<'a> {
    by_ts: Vec<&'a LockSlice>,
    longest: i64,
}

impl<'a> Holds<'a> {
    /// Holds intersecting `[ws, we)`, in ts order. Only holds starting within `longest`
    /// before `ws` can reach it, which keeps this a short scan per wait.
    fn overlapping(&self, d: &Data, ws: i64, we: i64) -> Vec<&'a LockSlice> {
        let hi = self.by_ts.partition_point(|h| h.ts < we);
        let lo = self.by_ts[..hi].partition_point(|h| h.ts < ws.saturating_sub(self.longest));
        self.by_ts[lo..hi]
            .iter()
            .copied()
            .filter(|h| d.end_of(h) > ws)
            .collect()
    }
}

/// PERCENT_RANK-style percentile: the first value whose rank/(n-1) is at least `p`.
pub fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    let n = sorted.len();
    match n {
        0 => None,
        1 => Some(sorted[0]),
        _ => {
            let i = (0..n)
                .find(|&i| i as f64 / (n - 1) as f64 >= p)
                .unwrap_or(n - 1);
            Some(sorted[i])
        }
    }
}

/// Runs the whole analysis and returns it as a JSON object (the `--json` output).
pub fn analyze(conn: &Connection, opts: Options) -> rusqlite::Result<Value> {
    let d = Data::load(conn)?;

    // Census and tails, per slice name.
    let mut by_name: BTreeMap<(bool, &str), Vec<i64>> = BTreeMap::new();
    for s in &d.locks {
        let v = by_name.entry((s.wait, s.label.as_str())).or_default();
        if s.dur >= 0 {
            v.push(s.dur);
        }
    }
    let mut census = Vec::new();
    let mut tails = Vec::new();
    for ((wait, name), durs) in &mut by_name {
        durs.sort_unstable();
        let name = name.to_string();
        let total: i64 = durs.iter().sum();
        let n = durs.len() as i64;
        census.push(json!({
            "name": name,
            "count": n,
            "unended": d.unended.get(&name).copied().unwrap_or(0),
            "total_ns": total,
            "avg_ns": if n > 0 { total / n } else { 0 },
            "max_ns": durs.last().copied().unwrap_or(0),
        }));
        if *wait && !durs.is_empty() {
            tails.push(json!({
                "name": name,
                "count": n,
                "p50_ns": percentile(durs, 0.50),
                "p90_ns": percentile(durs, 0.90),
                "p95_ns": percentile(durs, 0.95),
                "p99_ns": percentile(durs, 0.99),
                "max_ns": durs.last(),
            }));
        }
    }

    // Holds by lock (in ts order, as loaded), for the interval joins.
    let mut holds: BTreeMap<&str, Holds<'_>> = BTreeMap::new();
    for s in d.locks.iter().filter(|s| !s.wait) {
        let h = holds.entry(s.lock.as_str()).or_default();
        h.longest = h.longest.max(d.end_of(s) - s.ts);
        h.by_ts.push(s);
    }
    let overlapping_holds = |lock: &str, ws: i64, we: i64| -> Vec<&LockSlice> {
        holds
            .get(lock)
            .map(|h| h.overlapping(&d, ws, we))
            .unwrap_or_default()
    };

    // All waits, aggregated: the numbers a baseline comparison needs.
    let mut all = Itemized::default();
    let mut holders_all = Itemized::default();
    let mut wait_total = 0i64;
    // Waits with some holder measured (a lockhold: slice overlapping it, or ART's owner).
    let mut with_holder = 0usize;
    let mut with_owner = 0usize;
    let mut woken_by_owner = 0usize;
    let waits: Vec<&LockSlice> = d.locks.iter().filter(|s| s.wait && s.dur >= 0).collect();
    for w in &waits {
        wait_total += w.dur;
        all.add(d.itemize(w.utid, w.ts, w.end()));
        let mut held = false;
        if let Some(o) = w.owner.filter(|&o| o != w.utid) {
            // ART's owner holds the lock for the whole wait.
            holders_all.add(d.itemize(o, w.ts, w.end()));
            held = true;
            with_owner += 1;
            if d.wakers(w.utid, w.ts, w.end()).any(|(_, u)| u == o) {
                woken_by_owner += 1;
            }
        }
        for h in overlapping_holds(&w.lock, w.ts, w.end()) {
            if h.utid != w.utid {
                let (hs, he) = (h.ts, d.end_of(h));
                holders_all.add(d.itemize(h.utid, hs.max(w.ts), he.min(w.end())));
                held = true;
            }
        }
        with_holder += usize::from(held);
    }

    // Long waits, longest first.
    let mut long: Vec<&LockSlice> = waits
        .iter()
        .copied()
        .filter(|w| w.dur >= opts.long_ns)
        .collect();
    long.sort_by(|a, b| b.dur.cmp(&a.dur).then(a.id.cmp(&b.id)));
    let long_count = long.len();
    let mut long_json = Vec::new();
    for w in long.iter().take(opts.top) {
        let (ws, we) = (w.ts, w.end());
        let mut overlapping = Vec::new();
        let mut barging = Vec::new();
        let mut holders = Itemized::default();
        for h in overlapping_holds(&w.lock, ws, we) {
            let (hs, he) = (h.ts, d.end_of(h));
            if h.utid == w.utid {
                continue;
            }
            let (os, oe) = (hs.max(ws), he.min(we));
            let holder = d.itemize(h.utid, os, oe);
            holders.add(holder);
            overlapping.push(json!({
                "slice_id": h.id,
                "holder": d.thread(h.utid),
                "ts": hs,
                "dur": h.dur,
                "overlap_ns": oe - os,
                "holder_state": holder.json(),
            }));
            if hs > ws {
                barging.push(json!({
                    "slice_id": h.id,
                    "thread": d.thread(h.utid),
                    "ts": hs,
                    "after_wait_start_ns": hs - ws,
                }));
            }
        }
        let wakers: Vec<Value> = d
            .wakers(w.utid, ws, we)
            .map(|(ts, u)| json!({"ts": ts, "waker": d.thread(u), "is_owner": w.owner == Some(u)}))
            .collect();
        let owner = match w.owner {
            Some(o) if o != w.utid => json!({
                "thread": d.thread(o),
                "state": d.itemize(o, ws, we).json(),
            }),
            _ => Value::Null,
        };
        long_json.push(json!({
            "slice_id": w.id,
            "lock": w.lock,
            "waiter": d.thread(w.utid),
            "ts": ws,
            "dur": w.dur,
            "itemized": d.itemize(w.utid, ws, we).json(),
            "owner": owner,
            "woken_by": wakers,
            "overlapping_holds": overlapping,
            "holders": holders.json(),
            "barging": barging,
            "superpass": if d.sp.is_empty() {
                Value::Null
            } else {
                d.sp.in_wait(w.utid, ws, we, |u| d.thread(u))
            },
        }));
    }

    let superpass = superpass_section(conn, &d)?;
    let binder = report_binder::section(
        conn,
        opts.top,
        |u, s, e| d.itemize(u, s, e),
        |u| d.thread(u),
    )?;
    Ok(json!({
        "binder": binder,
        "monitors": monitors_section(&waits),
        "trace": {
            "start_ts": d.start_ts,
            "end_ts": d.end_ts,
            "duration_ns": d.end_ts - d.start_ts,
        },
        "options": {"long_ns": opts.long_ns, "top": opts.top},
        "census": census,
        "tails": tails,
        "slices": d.slices,
        "all_waits": {
            "count": waits.len(),
            "total_ns": wait_total,
            "waiter": all.json(),
            "holders_during_waits": holders_all.json(),
            "waits_with_holder": with_holder,
            "waits_with_owner": with_owner,
            "woken_by_owner": woken_by_owner,
        },
        "long_waits": {"count": long_count, "worst": long_json},
        "superpass": superpass,
    }))
}

/// Count, total and longest of a set of waits.
#[derive(Default)]
struct Tally {
    count: i64,
    total_ns: i64,
    max_ns: i64,
}

impl Tally {
    fn add(&mut self, dur: i64) {
        self.count += 1;
        self.total_ns += dur;
        self.max_ns = self.max_ns.max(dur);
    }
}

/// ART monitor waits per process (a trace does not identify the monitor object itself):
/// the methods that waited (blocked) and the methods that held the monitor (blocking), by
/// total wait, longest first. A method ART did not print (the short form; the owner's
/// without lock profiling) is `null`.
fn monitors_section(waits: &[&LockSlice]) -> Value {
    type Site = Option<(String, String)>;
    #[derive(Default)]
    struct Proc {
        all: Tally,
        blocked: BTreeMap<Site, Tally>,
        blocking: BTreeMap<Site, Tally>,
    }
    let mut procs: BTreeMap<Option<&str>, Proc> = BTreeMap::new();
    for w in waits {
        let Some(m) = &w.monitor else { continue };
        let p = procs.entry(m.process.as_deref()).or_default();
        p.all.add(w.dur);
        p.blocked.entry(m.blocked.clone()).or_default().add(w.dur);
        p.blocking.entry(m.blocking.clone()).or_default().add(w.dur);
    }
    let methods = |by: BTreeMap<Site, Tally>| -> Vec<Value> {
        let mut v: Vec<(Site, Tally)> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(&b.0)));
        v.into_iter()
            .map(|(site, t)| {
                let (method, src) = site.unzip();
                json!({
                    "method": method,
                    "short_method": method.as_deref().map(|m| art::Site { method: m, src: "" }.short_method()),
                    "src": src,
                    "count": t.count,
                    "total_ns": t.total_ns,
                    "max_ns": t.max_ns,
                })
            })
            .collect()
    };
    let mut out: Vec<(i64, Value)> = procs
        .into_iter()
        .map(|(process, p)| {
            let total = p.all.total_ns;
            let v = json!({
                "process": process,
                "waits": p.all.count,
                "total_ns": total,
                "max_ns": p.all.max_ns,
                "blocked_methods": methods(p.blocked),
                "blocking_methods": methods(p.blocking),
            });
            (total, v)
        })
        .collect();
    out.sort_by_key(|(total, _)| std::cmp::Reverse(*total));
    Value::Array(out.into_iter().map(|(_, v)| v).collect())
}

fn superpass_section(conn: &Connection, d: &Data) -> rusqlite::Result<Value> {
    let count = |table: &str| -> rusqlite::Result<i64> {
        if !has_table(conn, table)? {
            return Ok(0);
        }
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
    };
    let blocks_n = count("superpass_block")?;
    let grants_n = count("superpass_grant")?;
    if blocks_n == 0 && grants_n == 0 {
        return Ok(Value::Null);
    }
    let revokes_n = count("superpass_revoke")?;
    let picks_n = count("superpass_pick")?;
    let queues_n = count("superpass_queue")?;
    let throttles_n = count("superpass_throttle")?;
    let probes_n = count("superpass_probes")?;

    let mut grants: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
    let mut st = conn.prepare("SELECT blocker_utid, ts FROM superpass_grant ORDER BY ts")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        grants.entry(r.get(0)?).or_default().push(r.get(1)?);
    }

    // Blocking intervals: block -> waiter's next Running.
    #[derive(Default)]
    struct Blocker {
        blocks: i64,
        blocked_ns: i64,
        state: Itemized,
        runnable_before_grant_ns: i64,
        runnable_after_grant_ns: i64,
    }
    let mut blockers: BTreeMap<u32, Blocker> = BTreeMap::new();
    let mut intervals = Vec::new();
    let mut waiter_total = Itemized::default();
    let mut st =
        conn.prepare("SELECT ts, waiter_utid, blocker_utid FROM superpass_block ORDER BY ts, id")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (ts, waiter, blocker): (i64, u32, u32) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let end = d
            .states
            .get(&waiter)
            .and_then(|v| {
                v.iter()
                    .find(|s| s.ts > ts && s.class == Class::Running)
                    .map(|s| s.ts)
            })
            .unwrap_or(d.end_ts)
            .max(ts);
        intervals.push(end - ts);
        waiter_total.add(d.itemize(waiter, ts, end));
        let first_grant = grants
            .get(&blocker)
            .and_then(|g| g.iter().copied().find(|&g| g >= ts && g < end));
        let b = blockers.entry(blocker).or_default();
        b.blocks += 1;
        b.blocked_ns += end - ts;
        b.state.add(d.itemize(blocker, ts, end));
        let split = first_grant.unwrap_or(end);
        b.runnable_before_grant_ns += d.itemize(blocker, ts, split).runnable_ns;
        b.runnable_after_grant_ns += d.itemize(blocker, split, end).runnable_ns;
    }
    intervals.sort_unstable();

    // Grant latency: grant -> the blocker on a CPU (0 if it already was).
    let mut latencies = Vec::new();
    for (&blocker, ts_list) in &grants {
        for &g in ts_list {
            let spans = d.states.get(&blocker).map(Vec::as_slice).unwrap_or(&[]);
            let running_at = spans
                .iter()
                .any(|s| s.ts <= g && s.end > g && s.class == Class::Running);
            let lat = if running_at {
                Some(0)
            } else {
                spans
                    .iter()
                    .find(|s| s.ts >= g && s.class == Class::Running)
                    .map(|s| s.ts - g)
            };
            latencies.extend(lat);
        }
    }
    latencies.sort_unstable();

    let total_before: i64 = blockers.values().map(|b| b.runnable_before_grant_ns).sum();
    let total_after: i64 = blockers.values().map(|b| b.runnable_after_grant_ns).sum();
    let blockers_json: Vec<Value> = blockers
        .iter()
        .map(|(u, b)| {
            json!({
                "blocker": d.thread(*u),
                "blocks": b.blocks,
                "blocked_ns": b.blocked_ns,
                "grants": grants.get(u).map_or(0, Vec::len),
                "state": b.state.json(),
                "runnable_before_grant_ns": b.runnable_before_grant_ns,
                "runnable_after_grant_ns": b.runnable_after_grant_ns,
            })
        })
        .collect();
    Ok(json!({
        "blocks": blocks_n,
        "grants": grants_n,
        "revokes": revokes_n,
        "picks": picks_n,
        "queues": queues_n,
        "throttles": throttles_n,
        "probe_changes": probes_n,
        "blocking_intervals": {
            "count": intervals.len(),
            "total_ns": intervals.iter().sum::<i64>(),
            "p50_ns": percentile(&intervals, 0.5),
            "p95_ns": percentile(&intervals, 0.95),
            "max_ns": intervals.last(),
            "waiter": waiter_total.json(),
        },
        "blockers": blockers_json,
        "grant_latency": {
            "count": latencies.len(),
            "p50_ns": percentile(&latencies, 0.5),
            "p95_ns": percentile(&latencies, 0.95),
            "max_ns": latencies.last(),
        },
        "blocker_runnable": {
            "before_grant_ns": total_before,
            "after_grant_ns": total_after,
        },
    }))
}

/// Compares a report with a baseline (SuperPass off): how much runnable time went away.
pub fn compare(current: &Value, baseline: &Value) -> Value {
    let get = |v: &Value, path: &[&str]| -> i64 {
        path.iter().fold(v, |v, k| &v[*k]).as_i64().unwrap_or(0)
    };
    // A share is null (n/a) without waits, or for holders without any holder measured.
    let share = |v: &Value, who: &str| -> Option<f64> {
        let total = get(v, &["all_waits", "total_ns"]);
        let measured = who == "waiter" || get(v, &["all_waits", "waits_with_holder"]) > 0;
        (total > 0 && measured)
            .then(|| get(v, &["all_waits", who, "runnable_ns"]) as f64 / total as f64)
    };
    let pair = |who: &str| {
        let (b, c) = (share(baseline, who), share(current, who));
        let removed = b.zip(c).map(|(b, c)| b - c);
        json!({"baseline": b, "current": c, "removed": removed})
    };
    json!({
        "baseline_wait_total_ns": get(baseline, &["all_waits", "total_ns"]),
        "wait_total_ns": get(current, &["all_waits", "total_ns"]),
        "waiter_runnable_share": pair("waiter"),
        "holder_runnable_share": pair("holders_during_waits"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_matches_percent_rank() {
        let v: Vec<i64> = (1..=101).collect();
        assert_eq!(percentile(&v, 0.5), Some(51));
        assert_eq!(percentile(&v, 0.95), Some(96));
        assert_eq!(percentile(&v, 1.0), Some(101));
        assert_eq!(percentile(&[7], 0.99), Some(7));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[1, 2, 3, 4], 0.5), Some(3));
    }
}
