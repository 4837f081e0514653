//! Writes a [`Model`] into the schema with prepared, multi-row SQL INSERTs in one
//! transaction, then builds the indexes.

use rusqlite::{params, Connection, Statement};

use crate::binder;
use crate::model::{Model, SpRow, StateRow, TrackKind};
use crate::monitor_contention;
use crate::schema::INDEXES_SQL;

/// A value to bind.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Val<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
}

/// Formats `v` as `0x...` hex into `buf` (no allocation); returns the text.
fn hex(v: u64, buf: &mut [u8; 18]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits = ((64 - v.leading_zeros()) as usize).div_ceil(4).max(1);
    buf[0] = b'0';
    buf[1] = b'x';
    for i in 0..digits {
        buf[1 + digits - i] = DIGITS[((v >> (4 * i)) & 0xf) as usize];
    }
    std::str::from_utf8(&buf[..2 + digits]).expect("ASCII hex")
}

/// Rows per multi-row `INSERT ... VALUES (...), (...)` statement: one `sqlite3_step` and
/// reset per batch instead of per row.
const BATCH: usize = 64;

/// Inserts `rows` with `INSERT INTO {head} VALUES` and `cols` parameters per row, `BATCH`
/// rows per statement, through cached statements and raw binding (no per-row allocation).
/// `bind(st, first, row)` binds one row's parameters starting at index `first`.
fn insert_all<T>(
    conn: &Connection,
    head: &str,
    cols: usize,
    rows: impl ExactSizeIterator<Item = T>,
    mut bind: impl FnMut(&mut Statement<'_>, usize, T) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let sql = |n: usize| {
        let one = format!("({})", vec!["?"; cols].join(","));
        format!("INSERT INTO {head} VALUES {}", vec![one; n].join(","))
    };
    let total = rows.len();
    let mut rows = rows;
    let full = total / BATCH;
    if full > 0 {
        let mut st = conn.prepare_cached(&sql(BATCH))?;
        for _ in 0..full {
            for j in 0..BATCH {
                let r = rows.next().expect("ExactSizeIterator length");
                bind(&mut st, j * cols + 1, r)?;
            }
            st.raw_execute()?;
        }
    }
    let rest = total % BATCH;
    if rest > 0 {
        let mut st = conn.prepare(&sql(rest))?;
        for j in 0..rest {
            let r = rows.next().expect("ExactSizeIterator length");
            bind(&mut st, j * cols + 1, r)?;
        }
        st.raw_execute()?;
    }
    Ok(())
}

/// Columns of `slice` the importer fills, in the order of [`slice_rows`].
const SLICE_COLS: [&str; 8] = [
    "id",
    "ts",
    "dur",
    "track_id",
    "category",
    "name",
    "depth",
    "parent_id",
];
/// Columns of `counter` the importer fills.
const COUNTER_COLS: [&str; 4] = ["id", "ts", "track_id", "value"];
/// Columns of `sched` the importer fills.
const SCHED_COLS: [&str; 7] = ["id", "ts", "dur", "cpu", "utid", "end_state", "priority"];
/// Columns of `thread_state` the importer fills.
const THREAD_STATE_COLS: [&str; 9] = [
    "id",
    "ts",
    "dur",
    "cpu",
    "utid",
    "state",
    "io_wait",
    "blocked_function",
    "waker_utid",
];

fn opt_int(v: Option<impl Into<i64>>) -> Val<'static> {
    v.map_or(Val::Null, |v| Val::Int(v.into()))
}

fn opt_text(s: Option<&str>) -> Val<'_> {
    s.map_or(Val::Null, Val::Text)
}

// The big tables' rows, shared by both writers so that they store the same values.

fn slice_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 8]> + '_ {
    m.slices.iter().map(move |s| {
        [
            Val::Int(s.id.into()),
            Val::Int(s.ts),
            Val::Int(s.dur),
            Val::Int(s.track_id.into()),
            opt_text(s.cat.map(|c| m.str(c))),
            Val::Text(m.str(s.name)),
            Val::Int(s.depth.into()),
            opt_int(s.parent_id),
        ]
    })
}

fn counter_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 4]> + '_ {
    m.counters.iter().enumerate().map(|(id, c)| {
        [
            Val::Int(id as i64),
            Val::Int(c.ts),
            Val::Int(c.track_id.into()),
            // SQLite stores NaN as NULL anyway; saying so keeps both writers identical.
            if c.value.is_nan() {
                Val::Null
            } else {
                Val::Real(c.value)
            },
        ]
    })
}

fn sched_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 7]> + '_ {
    m.sched.iter().enumerate().map(move |(id, s)| {
        [
            Val::Int(id as i64),
            Val::Int(s.ts),
            Val::Int(s.dur),
            Val::Int(s.cpu.into()),
            Val::Int(s.utid.into()),
            opt_text(s.end_state.map(|e| m.str(e))),
            Val::Int(s.priority.into()),
        ]
    })
}

/// `states` (the model's thread_state, by utid) in (utid, ts, id) order; each thread's rows
/// are freed once read.
fn thread_state_rows(
    m: &Model,
    states: Vec<Vec<StateRow>>,
) -> impl ExactSizeIterator<Item = [Val<'_>; 9]> + '_ {
    let len = states.iter().map(Vec::len).sum();
    let rows = states
        .into_iter()
        .enumerate()
        .flat_map(move |(utid, rows)| {
            (0..rows.len()).map(move |i| {
                let s = &rows[i];
                [
                    Val::Int(s.id.into()),
                    Val::Int(s.ts),
                    Val::Int(s.dur(rows.get(i + 1))),
                    opt_int(s.cpu()),
                    Val::Int(utid as i64),
                    Val::Text(m.str(s.state)),
                    opt_int(s.io_wait),
                    opt_text(s.blocked_function().map(|f| m.str(f))),
                    opt_int(s.waker_utid()),
                ]
            })
        });
    Counted { rows, len }
}

/// An iterator whose length is known in advance (a flattened one's is not to the compiler).
struct Counted<I> {
    rows: I,
    len: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let r = self.rows.next();
        if r.is_some() {
            self.len -= 1;
        }
        r
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}

fn bind_val(st: &mut Statement<'_>, i: usize, v: Val<'_>) -> rusqlite::Result<()> {
    match v {
        Val::Null => st.raw_bind_parameter(i, rusqlite::types::Null),
        Val::Int(x) => st.raw_bind_parameter(i, x),
        Val::Real(x) => st.raw_bind_parameter(i, x),
        Val::Text(x) => st.raw_bind_parameter(i, x),
    }
}

/// Inserts rows of `N` values into `table (cols...)` with [`insert_all`].
fn insert_vals<'a, const N: usize>(
    conn: &Connection,
    table: &str,
    cols: [&str; N],
    rows: impl ExactSizeIterator<Item = [Val<'a>; N]>,
) -> rusqlite::Result<()> {
    let head = format!("{table} ({})", cols.join(", "));
    insert_all(conn, &head, N, rows, |st, i, row| {
        for (k, v) in row.into_iter().enumerate() {
            bind_val(st, i + k, v)?;
        }
        Ok(())
    })
}

/// Writes every row of `m` with SQL INSERTs in one transaction, then builds the indexes.
/// Each big table of `m` is freed once written.
pub fn write(conn: &mut Connection, m: Model) -> rusqlite::Result<()> {
    // rusqlite's bundled SQLite enforces foreign keys by default, which costs a lookup in
    // the parent table for every REFERENCES column of every row. The model only produces
    // valid references (tests check them with `PRAGMA foreign_key_check`), so enforcement is
    // off for the bulk load and restored afterwards. (The pragma is a no-op inside a
    // transaction, so it is set before one begins.)
    let fk: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA foreign_keys = OFF")?;
    let r = write_rows(conn, m);
    if fk {
        conn.execute_batch("PRAGMA foreign_keys = ON")?;
    }
    r
}

fn write_rows(conn: &mut Connection, mut m: Model) -> rusqlite::Result<()> {
    let timing = std::env::var_os("SUPERPASS_TRACE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timing {
            eprintln!("  {what}: {:?}", t0.elapsed());
        }
    };
    let tx = conn.transaction()?;
    write_small(&tx, &m)?;
    lap("small tables");
    // Each big table is freed as soon as it is written (the monitor contentions are read
    // from the slices), so that SQLite's pages and the whole model are not in memory at once.
    insert_vals(&tx, "slice", SLICE_COLS, slice_rows(&m))?;
    write_monitor_contention(&tx, &m)?;
    m.slices = Vec::new();
    insert_vals(&tx, "counter", COUNTER_COLS, counter_rows(&m))?;
    m.counters = Vec::new();
    lap("slices");
    insert_vals(&tx, "sched", SCHED_COLS, sched_rows(&m))?;
    m.sched = Vec::new();
    lap("sched");
    // thread_state is a WITHOUT ROWID table keyed by (utid, ts, id): inserted in key
    // order, as the model holds it, every row is an append and no index has to be sorted
    // and built afterwards. `id` stays the row's number in time order.
    let states = std::mem::take(&mut m.thread_state);
    insert_vals(
        &tx,
        "thread_state",
        THREAD_STATE_COLS,
        thread_state_rows(&m, states),
    )?;
    lap("thread_state");
    tx.execute_batch(INDEXES_SQL)?;
    lap("indexes");
    tx.commit()?;
    lap("commit");
    Ok(())
}

/// Writes `monitor_contention`, from the slices already in the model.
fn write_monitor_contention(tx: &Connection, m: &Model) -> rusqlite::Result<()> {
    let rows = monitor_contention::rows(m);
    if rows.is_empty() {
        return Ok(());
    }
    let mut st = tx.prepare(
        "INSERT INTO monitor_contention (blocking_method, blocked_method, \
         short_blocking_method, short_blocked_method, blocking_src, blocked_src, waiter_count, \
         blocked_utid, blocked_thread_name, blocking_utid, blocking_thread_name, blocking_tid, \
         upid, process_name, id, ts, dur, monotonic_dur, track_id, is_blocked_thread_main, \
         blocked_thread_tid, is_blocking_thread_main, blocking_thread_tid, binder_reply_id, \
         binder_reply_ts, binder_reply_tid, pid, lock, long_form) VALUES (?1, ?2, ?3, ?4, ?5, \
         ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, \
         ?24, ?25, ?26, ?27, ?28, ?29)",
    )?;
    let thread = |u: u32| m.threads.get(u as usize);
    let process = |u: Option<u32>| u.and_then(|u| m.processes.get(u as usize));
    let is_main = |u: u32| {
        let t = thread(u)?;
        Some(process(t.upid)?.pid == t.tid)
    };
    let tid_of_track = |track: u32| {
        let utid = m.tracks.get(track as usize)?.utid?;
        Some(thread(utid)?.tid)
    };
    for r in &rows {
        let c = &r.contention;
        let blocked = thread(r.blocked_utid);
        let upid = blocked.and_then(|t| t.upid);
        let proc_row = process(upid);
        // The long form names the owner; the short form only numbers it.
        let blocking_name = c
            .owner_name
            .or_else(|| r.blocking_utid.and_then(|u| thread(u)?.name.as_deref()));
        let s = r.slice;
        st.execute(params![
            c.blocking.map(|b| b.method),
            c.blocked.map(|b| b.method),
            c.blocking.map(|b| b.short_method()),
            c.blocked.map(|b| b.short_method()),
            c.blocking.map(|b| b.src),
            c.blocked.map(|b| b.src),
            c.waiters,
            r.blocked_utid,
            blocked.and_then(|t| t.name.as_deref()),
            r.blocking_utid,
            blocking_name,
            r.blocking_tid(),
            upid,
            proc_row.and_then(|p| p.name.as_deref()),
            s.id,
            s.ts,
            s.dur,
            s.dur,
            s.track_id,
            is_main(r.blocked_utid),
            blocked.map(|t| t.tid),
            r.blocking_utid.and_then(is_main),
            r.blocking_utid.and_then(|u| thread(u).map(|t| t.tid)),
            r.binder_reply.map(|b| b.id),
            r.binder_reply.map(|b| b.ts),
            r.binder_reply.and_then(|b| tid_of_track(b.track_id)),
            proc_row.map(|p| p.pid),
            c.lock,
            c.long_form,
        ])?;
    }
    Ok(())
}

/// Writes the small tables: processes, threads, tracks, SuperPass events, binder waits,
/// bounds, metadata.
fn write_small(tx: &Connection, m: &Model) -> rusqlite::Result<()> {
    let mut st = tx.prepare("INSERT INTO process (upid, pid, name) VALUES (?1, ?2, ?3)")?;
    for p in &m.processes {
        st.execute(params![p.upid, p.pid, p.name])?;
    }
    let pids: Vec<i32> = m.processes.iter().map(|p| p.pid).collect();
    let mut st = tx.prepare(
        "INSERT INTO thread (utid, tid, name, upid, is_main_thread) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for t in &m.threads {
        let main = t
            .upid
            .and_then(|u| pids.get(u as usize))
            .map(|&pid| pid == t.tid);
        st.execute(params![t.utid, t.tid, t.name, t.upid, main])?;
    }

    let mut track =
        tx.prepare("INSERT INTO track (id, name, type, utid, upid) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut thread_track =
        tx.prepare("INSERT INTO thread_track (id, name, utid) VALUES (?1, ?2, ?3)")?;
    let mut process_track =
        tx.prepare("INSERT INTO process_track (id, name, upid) VALUES (?1, ?2, ?3)")?;
    let mut counter_track =
        tx.prepare("INSERT INTO counter_track (id, name, upid, cpu) VALUES (?1, ?2, ?3, ?4)")?;
    for t in &m.tracks {
        let kind = match t.kind {
            TrackKind::Thread => "thread",
            TrackKind::Process => "process",
            TrackKind::Counter => "counter",
        };
        track.execute(params![t.id, t.name, kind, t.utid, t.upid])?;
        match t.kind {
            TrackKind::Thread => thread_track.execute(params![t.id, t.name, t.utid])?,
            TrackKind::Process => process_track.execute(params![t.id, t.name, t.upid])?,
            TrackKind::Counter => counter_track.execute(params![t.id, t.name, t.upid, t.cpu])?,
        };
    }

    let mut block = tx.prepare(
        "INSERT INTO superpass_block (ts, cpu, waiter_utid, blocker_utid, lock, kind) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut grant = tx.prepare(
        "INSERT INTO superpass_grant (ts, cpu, blocker_utid, waiter_utid, root_utid, lock, \
         depth) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut revoke = tx.prepare(
        "INSERT INTO superpass_revoke (ts, cpu, blocker_utid, reason) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut pick = tx.prepare("INSERT INTO superpass_pick (ts, cpu, utid) VALUES (?1, ?2, ?3)")?;
    let mut queue =
        tx.prepare("INSERT INTO superpass_queue (ts, cpu, utid, run_now) VALUES (?1, ?2, ?3, ?4)")?;
    let mut throttle =
        tx.prepare("INSERT INTO superpass_throttle (ts, cpu, dur) VALUES (?1, ?2, ?3)")?;
    let mut probes =
        tx.prepare("INSERT INTO superpass_probes (ts, cpu, groups) VALUES (?1, ?2, ?3)")?;
    for r in &m.superpass {
        match r {
            SpRow::Block {
                ts,
                cpu,
                waiter,
                blocker,
                lock,
                kind,
            } => {
                let mut buf = [0u8; 18];
                block.execute(params![
                    ts,
                    cpu,
                    waiter,
                    blocker,
                    hex(*lock, &mut buf),
                    kind
                ])?
            }
            SpRow::Grant {
                ts,
                cpu,
                blocker,
                waiter,
                root,
                lock,
                depth,
            } => {
                let mut buf = [0u8; 18];
                grant.execute(params![
                    ts,
                    cpu,
                    blocker,
                    waiter,
                    root,
                    hex(*lock, &mut buf),
                    depth
                ])?
            }
            SpRow::Revoke {
                ts,
                cpu,
                blocker,
                reason,
            } => revoke.execute(params![ts, cpu, blocker, reason])?,
            SpRow::Pick { ts, cpu, utid } => pick.execute(params![ts, cpu, utid])?,
            SpRow::Queue {
                ts,
                cpu,
                utid,
                run_now,
            } => queue.execute(params![ts, cpu, utid, run_now])?,
            SpRow::Throttle { ts, cpu, dur } => throttle.execute(params![ts, cpu, dur])?,
            SpRow::Probes { ts, cpu, groups } => probes.execute(params![ts, cpu, groups])?,
        };
    }

    write_binder(tx, m)?;

    tx.execute(
        "INSERT INTO trace_bounds (start_ts, end_ts) VALUES (?1, ?2)",
        params![m.bounds.0, m.bounds.1],
    )?;
    let mut meta =
        tx.prepare("INSERT INTO metadata (name, int_value, str_value) VALUES (?1, ?2, ?3)")?;
    let d = &m.diag;
    let ints: [(&str, i64); 8] = [
        ("import_events", m.event_count as i64),
        ("import_corrupt", d.corrupt as i64),
        ("import_truncated", i64::from(d.truncated)),
        ("import_unknown", d.unknown as i64),
        ("import_out_of_order", d.out_of_order as i64),
        ("import_unmatched_ends", d.unmatched_ends as i64),
        ("import_unended_slices", d.unended_slices as i64),
        ("import_lost_events", d.lost_events as i64),
    ];
    for (name, v) in ints {
        meta.execute(params![name, v, Option::<String>::None])?;
    }
    let mut stat = tx.prepare(
        "INSERT INTO stats (name, severity, value, description) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (name, severity, value, description) in crate::stats::rows(d) {
        stat.execute(params![name, severity, value as i64, description])?;
    }
    // Only a trace with binder events gets these rows: the report's binder section is there
    // exactly when they are.
    let c = &m.binder_counts;
    if c.sync_calls + c.oneway_calls + c.replies > 0 {
        for (name, v) in [
            ("binder_sync_calls", c.sync_calls),
            ("binder_oneway_calls", c.oneway_calls),
            ("binder_replies", c.replies),
        ] {
            meta.execute(params![name, v as i64, Option::<String>::None])?;
        }
    }
    meta.execute(params![
        "import_notes",
        Option::<i64>::None,
        d.notes.join("\n")
    ])?;
    meta.execute(params![
        "superpass_trace_version",
        Option::<i64>::None,
        env!("CARGO_PKG_VERSION")
    ])?;
    Ok(())
}

/// Writes `binder_wait`: the synchronous binder calls, row id = index.
fn write_binder(tx: &Connection, m: &Model) -> rusqlite::Result<()> {
    let mut st = tx.prepare(
        "INSERT INTO binder_wait (id, ts, dur, client_utid, client_tid, server_utid, \
         server_tid, debug_id, reply_debug_id, received_ts, reply_ts, code, flags, parent_id, \
         lock) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    for (id, r) in m.binder_waits.iter().enumerate() {
        let w = &r.wait;
        let mut buf = [0u8; 18];
        st.execute(params![
            id as i64,
            w.ts,
            w.end - w.ts,
            r.client_utid,
            w.client,
            r.server_utid,
            w.server,
            w.debug_id,
            w.reply_debug_id,
            w.received_ts,
            w.reply_ts,
            w.code,
            w.flags,
            r.parent_id,
            hex(binder::txn_lock(w.debug_id), &mut buf),
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn hex_matches_format() {
        for v in [
            0,
            1,
            0xf,
            0x10,
            0xdead_beef,
            0xffff_8880_1234_5678,
            u64::MAX,
        ] {
            let mut buf = [0u8; 18];
            assert_eq!(hex(v, &mut buf), format!("{v:#x}"));
        }
    }
}
