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
//! - *barging*: holds of the same lock by other threads that begin inside the wait;
//! - *itemized*: the waiter's thread_state clipped to the wait: asleep (any sleeping
//!   state), runnable (`R`, `R+`), running; the rest is `unknown` (no sched data);
//! - SuperPass: a *blocking interval* runs from a `superpass_block` to the waiter's next
//!   `Running`; the blocker's runnable time in it is split at the first grant to it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rusqlite::Connection;
use serde_json::{json, Value};

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
    fn add(&mut self, o: Itemized) {
        self.asleep_ns += o.asleep_ns;
        self.runnable_ns += o.runnable_ns;
        self.running_ns += o.running_ns;
        self.unknown_ns += o.unknown_ns;
    }

    fn json(&self) -> Value {
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
    lock: String,
    wait: bool,
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
        let mut locks = Vec::new();
        let mut unended = BTreeMap::new();
        let mut st = conn.prepare(
            "SELECT id, ts, dur, utid, name FROM thread_slice \
             WHERE name GLOB 'lockwait:*' OR name GLOB 'lockhold:*' ORDER BY ts, id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(4)?;
            let dur: i64 = r.get(2)?;
            if dur < 0 {
                *unended.entry(name.clone()).or_insert(0) += 1;
            }
            let (kind, lock) = name.split_once(':').unwrap_or(("", ""));
            locks.push(LockSlice {
                id: r.get(0)?,
                ts: r.get(1)?,
                dur,
                utid: r.get(3)?,
                lock: lock.to_owned(),
                wait: kind == "lockwait",
            });
        }
        Ok(Data {
            end_ts,
            start_ts,
            threads,
            states,
            locks,
            unended,
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
        let v = by_name.entry((s.wait, s.lock.as_str())).or_default();
        if s.dur >= 0 {
            v.push(s.dur);
        }
    }
    let mut census = Vec::new();
    let mut tails = Vec::new();
    for ((wait, lock), durs) in &mut by_name {
        durs.sort_unstable();
        let name = format!("{}:{lock}", if *wait { "lockwait" } else { "lockhold" });
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
    let waits: Vec<&LockSlice> = d.locks.iter().filter(|s| s.wait && s.dur >= 0).collect();
    for w in &waits {
        wait_total += w.dur;
        all.add(d.itemize(w.utid, w.ts, w.end()));
        for h in overlapping_holds(&w.lock, w.ts, w.end()) {
            if h.utid != w.utid {
                let (hs, he) = (h.ts, d.end_of(h));
                holders_all.add(d.itemize(h.utid, hs.max(w.ts), he.min(w.end())));
            }
        }
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
        for h in overlapping_holds(&w.lock, ws, we) {
            let (hs, he) = (h.ts, d.end_of(h));
            if h.utid == w.utid {
                continue;
            }
            let (os, oe) = (hs.max(ws), he.min(we));
            let holder = d.itemize(h.utid, os, oe);
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
            .spans(w.utid, ws, we)
            .filter(|s| s.class == Class::Runnable && s.ts >= ws)
            .filter_map(|s| s.waker.map(|u| (s.ts, u)))
            .map(|(ts, u)| json!({"ts": ts, "waker": d.thread(u)}))
            .collect();
        long_json.push(json!({
            "slice_id": w.id,
            "lock": w.lock,
            "waiter": d.thread(w.utid),
            "ts": ws,
            "dur": w.dur,
            "itemized": d.itemize(w.utid, ws, we).json(),
            "woken_by": wakers,
            "overlapping_holds": overlapping,
            "barging": barging,
        }));
    }

    let superpass = superpass_section(conn, &d)?;
    Ok(json!({
        "trace": {
            "start_ts": d.start_ts,
            "end_ts": d.end_ts,
            "duration_ns": d.end_ts - d.start_ts,
        },
        "options": {"long_ns": opts.long_ns, "top": opts.top},
        "census": census,
        "tails": tails,
        "all_waits": {
            "count": waits.len(),
            "total_ns": wait_total,
            "waiter": all.json(),
            "holders_during_waits": holders_all.json(),
        },
        "long_waits": {"count": long_count, "worst": long_json},
        "superpass": superpass,
    }))
}

fn superpass_section(conn: &Connection, d: &Data) -> rusqlite::Result<Value> {
    let count = |table: &str| -> rusqlite::Result<i64> {
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
    };
    let blocks_n = count("superpass_block")?;
    let grants_n = count("superpass_grant")?;
    if blocks_n == 0 && grants_n == 0 {
        return Ok(Value::Null);
    }
    let revokes_n = count("superpass_revoke")?;
    let picks_n = count("superpass_pick")?;

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
    let share = |v: &Value, who: &str| -> f64 {
        let total = get(v, &["all_waits", "total_ns"]);
        if total == 0 {
            return 0.0;
        }
        get(v, &["all_waits", who, "runnable_ns"]) as f64 / total as f64
    };
    let (bw, cw) = (share(baseline, "waiter"), share(current, "waiter"));
    let (bh, ch) = (
        share(baseline, "holders_during_waits"),
        share(current, "holders_during_waits"),
    );
    json!({
        "baseline_wait_total_ns": get(baseline, &["all_waits", "total_ns"]),
        "wait_total_ns": get(current, &["all_waits", "total_ns"]),
        "waiter_runnable_share": {"baseline": bw, "current": cw, "removed": bw - cw},
        "holder_runnable_share": {"baseline": bh, "current": ch, "removed": bh - ch},
    })
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn ms_v(v: &Value) -> String {
    v.as_i64().map_or_else(|| "-".to_owned(), ms)
}

fn who(v: &Value) -> String {
    format!(
        "{} ({})",
        v["name"].as_str().unwrap_or(""),
        v["tid"].as_i64().unwrap_or(-1)
    )
}

fn items(v: &Value) -> String {
    format!(
        "asleep {} / runnable {} / running {} / unknown {} ms",
        ms_v(&v["asleep_ns"]),
        ms_v(&v["runnable_ns"]),
        ms_v(&v["running_ns"]),
        ms_v(&v["unknown_ns"])
    )
}

/// Renders the JSON report as text tables (times in ms).
pub fn render_text(r: &Value) -> String {
    let mut o = String::new();
    let t = &r["trace"];
    let _ = writeln!(o, "trace: {} ms", ms_v(&t["duration_ns"]));
    let _ = writeln!(o, "\n== census (lockwait:* / lockhold:*) ==");
    let _ = writeln!(
        o,
        "{:<40} {:>7} {:>7} {:>12} {:>10} {:>10}",
        "name", "count", "unended", "total ms", "avg ms", "max ms"
    );
    for c in r["census"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{:<40} {:>7} {:>7} {:>12} {:>10} {:>10}",
            c["name"].as_str().unwrap_or(""),
            c["count"].as_i64().unwrap_or(0),
            c["unended"].as_i64().unwrap_or(0),
            ms_v(&c["total_ns"]),
            ms_v(&c["avg_ns"]),
            ms_v(&c["max_ns"])
        );
    }
    let _ = writeln!(o, "\n== wait tails (ms) ==");
    let _ = writeln!(
        o,
        "{:<40} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "name", "count", "p50", "p90", "p95", "p99", "max"
    );
    for c in r["tails"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{:<40} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
            c["name"].as_str().unwrap_or(""),
            c["count"].as_i64().unwrap_or(0),
            ms_v(&c["p50_ns"]),
            ms_v(&c["p90_ns"]),
            ms_v(&c["p95_ns"]),
            ms_v(&c["p99_ns"]),
            ms_v(&c["max_ns"])
        );
    }
    let a = &r["all_waits"];
    let _ = writeln!(
        o,
        "\n== all waits: {} waits, {} ms ==\n  waiter:  {}\n  holders: {}",
        a["count"],
        ms_v(&a["total_ns"]),
        items(&a["waiter"]),
        items(&a["holders_during_waits"])
    );
    let l = &r["long_waits"];
    let _ = writeln!(
        o,
        "\n== long waits (>= {} ms): {}; worst itemized ==",
        ms_v(&r["options"]["long_ns"]),
        l["count"]
    );
    for w in l["worst"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "- {} ms on {} by {} at {}\n    {}",
            ms_v(&w["dur"]),
            w["lock"].as_str().unwrap_or(""),
            who(&w["waiter"]),
            w["ts"],
            items(&w["itemized"])
        );
        for k in w["woken_by"].as_array().into_iter().flatten() {
            let _ = writeln!(o, "    woken by {} at {}", who(&k["waker"]), k["ts"]);
        }
        for h in w["overlapping_holds"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "    held by {} for {} ms of it: {}",
                who(&h["holder"]),
                ms_v(&h["overlap_ns"]),
                items(&h["holder_state"])
            );
        }
        let barging = w["barging"].as_array().map_or(0, Vec::len);
        if barging > 0 {
            let names: Vec<String> = w["barging"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| who(&b["thread"]))
                .collect();
            let _ = writeln!(o, "    barged {barging}x: {}", names.join(", "));
        }
    }
    let s = &r["superpass"];
    if s.is_null() {
        let _ = writeln!(o, "\n== superpass: no superpass_* events in this trace ==");
    } else {
        let bi = &s["blocking_intervals"];
        let _ = writeln!(
            o,
            "\n== superpass: {} blocks, {} grants, {} revokes, {} picks ==",
            s["blocks"], s["grants"], s["revokes"], s["picks"]
        );
        let _ = writeln!(
            o,
            "blocking intervals: {} totalling {} ms (p50 {}, p95 {}, max {} ms)\n  critical threads: {}",
            bi["count"],
            ms_v(&bi["total_ns"]),
            ms_v(&bi["p50_ns"]),
            ms_v(&bi["p95_ns"]),
            ms_v(&bi["max_ns"]),
            items(&bi["waiter"])
        );
        let g = &s["grant_latency"];
        let _ = writeln!(
            o,
            "grant -> on CPU: p50 {} ms, p95 {} ms, max {} ms ({} grants)",
            ms_v(&g["p50_ns"]),
            ms_v(&g["p95_ns"]),
            ms_v(&g["max_ns"]),
            g["count"]
        );
        let br = &s["blocker_runnable"];
        let _ = writeln!(
            o,
            "blockers runnable while blocking: {} ms before grant, {} ms after",
            ms_v(&br["before_grant_ns"]),
            ms_v(&br["after_grant_ns"])
        );
        for b in s["blockers"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "- blocker {}: {} blocks, {} ms blocking, {} grants; {}",
                who(&b["blocker"]),
                b["blocks"],
                ms_v(&b["blocked_ns"]),
                b["grants"],
                items(&b["state"])
            );
        }
    }
    if let Some(c) = r.get("versus_baseline") {
        let _ = writeln!(o, "\n== versus baseline (SuperPass off) ==");
        for (k, label) in [
            (
                "waiter_runnable_share",
                "waiters' runnable share of wait time",
            ),
            (
                "holder_runnable_share",
                "holders' runnable share of wait time",
            ),
        ] {
            let v = &c[k];
            let _ = writeln!(
                o,
                "{label}: baseline {:.1}% -> {:.1}% (removed {:.1} points)",
                v["baseline"].as_f64().unwrap_or(0.0) * 100.0,
                v["current"].as_f64().unwrap_or(0.0) * 100.0,
                v["removed"].as_f64().unwrap_or(0.0) * 100.0
            );
        }
        let _ = writeln!(
            o,
            "total wait time: baseline {} ms -> {} ms",
            ms_v(&c["baseline_wait_total_ns"]),
            ms_v(&c["wait_total_ns"])
        );
    }
    o
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
