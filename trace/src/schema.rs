//! Creates the SQLite schema (`sql/schema.sql`) and writes a [`Model`] into it.

use rusqlite::{params, Connection};

use crate::model::{Model, SpRow, TrackKind};

/// The DDL of every table and view.
pub const SCHEMA_SQL: &str = include_str!("../sql/schema.sql");
/// Indexes, created after the rows are in.
pub const INDEXES_SQL: &str = include_str!("../sql/indexes.sql");

/// Creates the tables and views in an empty database.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA_SQL)
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// Writes every row of `m` in one transaction, then builds the indexes.
pub fn write(conn: &mut Connection, m: &Model) -> rusqlite::Result<()> {
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
        let mut st = tx.prepare(
            "INSERT INTO slice (id, ts, dur, track_id, category, name, depth, parent_id) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for s in &m.slices {
            st.execute(params![
                s.id,
                s.ts,
                s.dur,
                s.track_id,
                s.cat.map(|c| m.str(c)),
                m.str(s.name),
                s.depth,
                s.parent_id
            ])?;
        }
        let mut st =
            tx.prepare("INSERT INTO counter (id, ts, track_id, value) VALUES (?1, ?2, ?3, ?4)")?;
        for (i, c) in m.counters.iter().enumerate() {
            st.execute(params![i as i64, c.ts, c.track_id, c.value])?;
        }

        lap("slices");
        let mut st = tx.prepare(
            "INSERT INTO sched (id, ts, dur, cpu, utid, end_state, priority) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (i, s) in m.sched.iter().enumerate() {
            st.raw_bind_parameter(1, i as i64)?;
            st.raw_bind_parameter(2, s.ts)?;
            st.raw_bind_parameter(3, s.dur)?;
            st.raw_bind_parameter(4, s.cpu)?;
            st.raw_bind_parameter(5, s.utid)?;
            st.raw_bind_parameter(6, s.end_state.map(|e| m.str(e)))?;
            st.raw_bind_parameter(7, s.priority)?;
            st.raw_execute()?;
        }
        lap("sched");
        let mut st = tx.prepare(
            "INSERT INTO thread_state (id, ts, dur, cpu, utid, state, io_wait, blocked_function, \
             waker_utid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for (i, s) in m.thread_state.iter().enumerate() {
            // Raw binding skips params!'s per-row slice of trait objects: this is the
            // biggest table.
            st.raw_bind_parameter(1, i as i64)?;
            st.raw_bind_parameter(2, s.ts)?;
            st.raw_bind_parameter(3, s.dur)?;
            st.raw_bind_parameter(4, s.cpu)?;
            st.raw_bind_parameter(5, s.utid)?;
            st.raw_bind_parameter(6, m.str(s.state))?;
            st.raw_bind_parameter(7, s.io_wait)?;
            st.raw_bind_parameter(8, s.blocked_function.map(|f| m.str(f)))?;
            st.raw_bind_parameter(9, s.waker_utid)?;
            st.raw_execute()?;
        }
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
                } => block.execute(params![ts, cpu, waiter, blocker, hex(*lock), kind])?,
                SpRow::Grant {
                    ts,
                    cpu,
                    blocker,
                    waiter,
                    root,
                    lock,
                    depth,
                } => grant.execute(params![ts, cpu, blocker, waiter, root, hex(*lock), depth])?,
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
