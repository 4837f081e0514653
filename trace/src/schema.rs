//! Creates the SQLite schema (`sql/schema.sql`) and writes a [`Model`] into it.

use rusqlite::{params, Connection, Statement};

use crate::model::{Model, SpRow, StateRow, TrackKind};

/// The DDL of every table and view.
pub const SCHEMA_SQL: &str = include_str!("../sql/schema.sql");
/// Indexes, created after the rows are in.
pub const INDEXES_SQL: &str = include_str!("../sql/indexes.sql");

/// Creates the tables and views in an empty database.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA_SQL)
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

/// `rows` with their row numbers, in (utid, ts, id) order. Rows arrive in time order, so a
/// stable counting sort by utid is enough (it scatters each row once, reading `rows` in
/// order, so the inserts that follow read memory sequentially); a final check falls back to
/// a full sort otherwise.
fn by_utid_ts(rows: &[StateRow]) -> Vec<(u32, StateRow)> {
    let threads = rows.iter().map(|s| s.utid as usize + 1).max().unwrap_or(0);
    let mut start = vec![0usize; threads + 1];
    for s in rows {
        start[s.utid as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut out: Vec<(u32, StateRow)> = match rows.first() {
        Some(&first) => vec![(0, first); rows.len()],
        None => return Vec::new(),
    };
    for (i, s) in rows.iter().enumerate() {
        let slot = &mut start[s.utid as usize];
        out[*slot] = (i as u32, *s);
        *slot += 1;
    }
    let key = |(i, s): &(u32, StateRow)| (s.utid, s.ts, *i);
    if out.windows(2).any(|w| key(&w[0]) > key(&w[1])) {
        out.sort_unstable_by_key(key);
    }
    out
}

/// Writes every row of `m` in one transaction, then builds the indexes.
pub fn write(conn: &mut Connection, m: &Model) -> rusqlite::Result<()> {
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

fn write_rows(conn: &mut Connection, m: &Model) -> rusqlite::Result<()> {
    let timing = std::env::var_os("SUPERPASS_TRACE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timing {
            eprintln!("  {what}: {:?}", t0.elapsed());
        }
    };
    let tx = conn.transaction()?;
    {
        let mut st = tx.prepare("INSERT INTO process (upid, pid, name) VALUES (?1, ?2, ?3)")?;
        for p in &m.processes {
            st.execute(params![p.upid, p.pid, p.name])?;
        }
        let pids: Vec<i32> = m.processes.iter().map(|p| p.pid).collect();
        let mut st = tx.prepare(
            "INSERT INTO thread (utid, tid, name, upid, is_main_thread) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for t in &m.threads {
            let main = t.upid.map(|u| pids[u as usize] == t.tid);
            st.execute(params![t.utid, t.tid, t.name, t.upid, main])?;
        }

        let mut track = tx.prepare(
            "INSERT INTO track (id, name, type, utid, upid) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut thread_track =
            tx.prepare("INSERT INTO thread_track (id, name, utid) VALUES (?1, ?2, ?3)")?;
        let mut process_track =
            tx.prepare("INSERT INTO process_track (id, name, upid) VALUES (?1, ?2, ?3)")?;
        let mut counter_track =
            tx.prepare("INSERT INTO counter_track (id, name, upid) VALUES (?1, ?2, ?3)")?;
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
                TrackKind::Counter => counter_track.execute(params![t.id, t.name, t.upid])?,
            };
        }

        lap("meta");
        insert_all(
            &tx,
            "slice (id, ts, dur, track_id, category, name, depth, parent_id)",
            8,
            m.slices.iter(),
            |st, i, s| {
                st.raw_bind_parameter(i, s.id)?;
                st.raw_bind_parameter(i + 1, s.ts)?;
                st.raw_bind_parameter(i + 2, s.dur)?;
                st.raw_bind_parameter(i + 3, s.track_id)?;
                st.raw_bind_parameter(i + 4, s.cat.map(|c| m.str(c)))?;
                st.raw_bind_parameter(i + 5, m.str(s.name))?;
                st.raw_bind_parameter(i + 6, s.depth)?;
                st.raw_bind_parameter(i + 7, s.parent_id)
            },
        )?;
        insert_all(
            &tx,
            "counter (id, ts, track_id, value)",
            4,
            m.counters.iter().enumerate(),
            |st, i, (id, c)| {
                st.raw_bind_parameter(i, id as i64)?;
                st.raw_bind_parameter(i + 1, c.ts)?;
                st.raw_bind_parameter(i + 2, c.track_id)?;
                st.raw_bind_parameter(i + 3, c.value)
            },
        )?;

        lap("slices");
        insert_all(
            &tx,
            "sched (id, ts, dur, cpu, utid, end_state, priority)",
            7,
            m.sched.iter().enumerate(),
            |st, i, (id, s)| {
                st.raw_bind_parameter(i, id as i64)?;
                st.raw_bind_parameter(i + 1, s.ts)?;
                st.raw_bind_parameter(i + 2, s.dur)?;
                st.raw_bind_parameter(i + 3, s.cpu)?;
                st.raw_bind_parameter(i + 4, s.utid)?;
                st.raw_bind_parameter(i + 5, s.end_state.map(|e| m.str(e)))?;
                st.raw_bind_parameter(i + 6, s.priority)
            },
        )?;
        lap("sched");
        // thread_state is a WITHOUT ROWID table keyed by (utid, ts, id): inserted in key
        // order, every row is an append and no index has to be sorted and built afterwards.
        // `id` stays the row's number in time order.
        let order = by_utid_ts(&m.thread_state);
        insert_all(
            &tx,
            "thread_state (id, ts, dur, cpu, utid, state, io_wait, blocked_function, waker_utid)",
            9,
            order.iter(),
            |st, i, &(id, ref s)| {
                st.raw_bind_parameter(i, id)?;
                st.raw_bind_parameter(i + 1, s.ts)?;
                st.raw_bind_parameter(i + 2, s.dur)?;
                st.raw_bind_parameter(i + 3, s.cpu)?;
                st.raw_bind_parameter(i + 4, s.utid)?;
                st.raw_bind_parameter(i + 5, m.str(s.state))?;
                st.raw_bind_parameter(i + 6, s.io_wait)?;
                st.raw_bind_parameter(i + 7, s.blocked_function.map(|f| m.str(f)))?;
                st.raw_bind_parameter(i + 8, s.waker_utid)
            },
        )?;
        lap("thread_state");
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
        let mut pick =
            tx.prepare("INSERT INTO superpass_pick (ts, cpu, utid) VALUES (?1, ?2, ?3)")?;
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
            };
        }

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
    }
    lap("rest");
    tx.execute_batch(INDEXES_SQL)?;
    lap("indexes");
    tx.commit()?;
    lap("commit");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{by_utid_ts, hex};
    use crate::model::StateRow;

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

    #[test]
    fn thread_state_order_is_utid_ts_id() {
        let row = |utid, ts| StateRow {
            ts,
            dur: -1,
            utid,
            state: 0,
            cpu: None,
            io_wait: None,
            blocked_function: None,
            waker_utid: None,
        };
        // Time order, then out of order (the fallback sort).
        let rows = [row(2, 10), row(1, 10), row(2, 10), row(1, 20), row(3, 30)];
        let ids = |rows: &[StateRow]| -> Vec<u32> {
            let sorted = by_utid_ts(rows);
            for (id, r) in &sorted {
                assert_eq!(rows[*id as usize], *r);
            }
            sorted.iter().map(|(id, _)| *id).collect()
        };
        assert_eq!(ids(&rows), vec![1, 3, 0, 2, 4]);
        let rows = [row(1, 20), row(1, 10), row(0, 5)];
        assert_eq!(ids(&rows), vec![2, 1, 0]);
        assert!(by_utid_ts(&[]).is_empty());
    }
}
