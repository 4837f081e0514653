//! The report's binder section: synchronous binder calls as their own class of wait, the
//! server thread as the blocker (`binder_wait`, built by [`crate::binder`]).
//!
//! Per class (all waits; the critical threads' when the trace names any): count, total,
//! p50, p99.9 (only from [`MIN_P999`] waits on: below that it is one of the few longest
//! waits, not a tail), max, the waits longer than a frame ([`FRAME_NS`]), the time the calls
//! waited for a server thread to take them, the servers' states while serving, and the
//! servers by total wait. Percentiles are the report's (PERCENT_RANK, [`percentile`]).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::binder;
use crate::report::{percentile, Itemized};
use crate::report_wait_superpass::has_table;

/// A frame at 60 Hz, rounded down: a wait longer than this costs a frame.
pub const FRAME_NS: i64 = 16_000_000;

/// The fewest waits a p99.9 is reported from.
pub const MIN_P999: usize = 1000;

/// One `binder_wait` row, as the section reads it.
struct Row {
    dur: i64,
    client: u32,
    server: u32,
    ts: i64,
    received_ts: Option<i64>,
    reply_ts: i64,
}

/// The `binder:*` kinds of `stats` under their JSON names.
fn dropped_key(kind: &str) -> &str {
    kind.strip_prefix("binder:").unwrap_or(kind)
}

/// The critical threads a trace names: each process's `RenderThread` and main thread (the UI
/// thread) where it has a `RenderThread`, and the waiters of `superpass_block` (threads
/// SuperPass registered as critical).
fn critical_threads(conn: &Connection) -> rusqlite::Result<BTreeSet<u32>> {
    let mut sql = "SELECT utid FROM thread WHERE name = 'RenderThread' \
                   UNION SELECT utid FROM thread WHERE is_main_thread = 1 AND upid IN \
                   (SELECT upid FROM thread WHERE name = 'RenderThread' AND upid IS NOT NULL)"
        .to_owned();
    if has_table(conn, "superpass_block")? {
        sql.push_str(" UNION SELECT waiter_utid FROM superpass_block");
    }
    let mut st = conn.prepare(&sql)?;
    let rows = st.query_map([], |r| r.get::<_, u32>(0))?;
    rows.collect()
}

/// The binder section (`null` when the trace has no binder events; see the module doc).
/// `itemize` and `thread` are the report's: a thread's states in a window, a thread as JSON.
pub(crate) fn section(
    conn: &Connection,
    top: usize,
    itemize: impl Fn(u32, i64, i64) -> Itemized,
    thread: impl Fn(u32) -> Value,
) -> rusqlite::Result<Value> {
    if !has_table(conn, "binder_wait")? {
        return Ok(Value::Null);
    }
    let mut counts = BTreeMap::new();
    let mut st = conn.prepare("SELECT name, int_value FROM metadata WHERE name GLOB 'binder_*'")?;
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (name, v) = row?;
        counts.insert(name, v);
    }
    if counts.is_empty() {
        return Ok(Value::Null);
    }
    let mut dropped: BTreeMap<String, i64> = binder::STATS
        .iter()
        .map(|(k, _)| (dropped_key(k).to_owned(), 0))
        .collect();
    let mut st = conn.prepare("SELECT name, value FROM stats WHERE name GLOB 'binder:*'")?;
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (name, v) = row?;
        dropped.insert(dropped_key(&name).to_owned(), v);
    }
    let mut processes = BTreeMap::new();
    let mut st = conn.prepare(
        "SELECT t.utid, p.name FROM thread t JOIN process p USING (upid) WHERE p.name IS NOT NULL",
    )?;
    let rows = st.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (u, name) = row?;
        processes.insert(u, name);
    }
    let mut waits = Vec::new();
    let mut st = conn.prepare(
        "SELECT dur, client_utid, server_utid, ts, received_ts, reply_ts FROM binder_wait \
         ORDER BY id",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        waits.push(Row {
            dur: r.get(0)?,
            client: r.get(1)?,
            server: r.get(2)?,
            ts: r.get(3)?,
            received_ts: r.get(4)?,
            reply_ts: r.get(5)?,
        });
    }
    let class = |rows: &[&Row]| -> Value {
        let mut durs: Vec<i64> = rows.iter().map(|w| w.dur).collect();
        durs.sort_unstable();
        let mut server = Itemized::default();
        let mut queued = 0;
        // Per server: count, total, max.
        let mut by_server: BTreeMap<u32, (i64, i64, i64)> = BTreeMap::new();
        for w in rows {
            // Serving runs from taking the call to sending the reply; without the taking,
            // the server's part is not known.
            if let Some(r) = w.received_ts {
                queued += r - w.ts;
                server.add(itemize(w.server, r, w.reply_ts));
            }
            let s = by_server.entry(w.server).or_default();
            s.0 += 1;
            s.1 += w.dur;
            s.2 = s.2.max(w.dur);
        }
        let mut servers: Vec<(u32, (i64, i64, i64))> = by_server.into_iter().collect();
        servers.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
        let servers: Vec<Value> = servers
            .into_iter()
            .take(top)
            .map(|(u, (n, total, max))| {
                json!({
                    "server": thread(u),
                    "process": processes.get(&u),
                    "count": n,
                    "total_ns": total,
                    "max_ns": max,
                })
            })
            .collect();
        json!({
            "count": durs.len(),
            "total_ns": durs.iter().sum::<i64>(),
            "p50_ns": percentile(&durs, 0.5),
            "p999_ns": if durs.len() >= MIN_P999 { percentile(&durs, 0.999) } else { None },
            "max_ns": durs.last(),
            "over_frame": durs.iter().filter(|&&d| d > FRAME_NS).count(),
            "queued_ns": queued,
            "server_while_serving": server.json(),
            "servers": servers,
        })
    };
    let all: Vec<&Row> = waits.iter().collect();
    let critical_set = critical_threads(conn)?;
    let critical = if critical_set.is_empty() {
        Value::Null
    } else {
        let rows: Vec<&Row> = waits
            .iter()
            .filter(|w| critical_set.contains(&w.client))
            .collect();
        let mut v = class(&rows);
        v["threads"] = critical_set.iter().map(|&u| thread(u)).collect();
        v
    };
    let count = |k: &str| counts.get(k).copied().unwrap_or(0);
    Ok(json!({
        "sync_calls": count("binder_sync_calls"),
        "oneway_calls": count("binder_oneway_calls"),
        "replies": count("binder_replies"),
        "dropped": dropped,
        "frame_ns": FRAME_NS,
        "min_p999_count": MIN_P999,
        "all": class(&all),
        "critical": critical,
    }))
}
