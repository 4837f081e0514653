//! Every query in `trace/sql/` runs on the inversion scenario's database with the answers
//! worked out by hand in `common/mod.rs` (the same ones the report test checks).

mod common;

use common::US;
use rusqlite::types::Value;
use rusqlite::Connection;
use superpass_trace::{import, query};

fn db() -> Connection {
    import::import_in_memory(&common::pftrace()).unwrap().0
}

fn run(conn: &Connection, file: &str) -> query::Rows {
    let path = format!("{}/sql/{file}", env!("CARGO_MANIFEST_DIR"));
    let sql = std::fs::read_to_string(&path).unwrap();
    query::run(conn, &sql).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn get(rows: &query::Rows, row: usize, col: &str) -> Value {
    let c = rows
        .col(col)
        .unwrap_or_else(|| panic!("no column {col} in {:?}", rows.columns));
    rows.rows[row][c].clone()
}

fn int(v: i64) -> Value {
    Value::Integer(v)
}

#[test]
fn census() {
    let r = run(&db(), "census.sql");
    assert_eq!(r.rows.len(), 2);
    assert_eq!(get(&r, 0, "name"), Value::Text("lockhold:m".into()));
    assert_eq!(get(&r, 0, "count"), int(3));
    assert_eq!(get(&r, 0, "total_ns"), int(11_100 * US));
    assert_eq!(get(&r, 0, "avg_ns"), int(3_700 * US));
    assert_eq!(get(&r, 1, "max_ns"), int(9_500 * US));
}

#[test]
fn tail_matches_report_percentiles() {
    let conn = db();
    // Add waits with ties so the percentile definition is exercised, then compare the SQL
    // file with the report's Rust implementation.
    let track: i64 = conn
        .query_row("SELECT id FROM thread_track LIMIT 1", [], |r| r.get(0))
        .unwrap();
    let durs = [5, 1, 3, 3, 3, 9, 2, 2, 7, 100, 3, 4];
    for (k, d) in durs.iter().enumerate() {
        conn.execute(
            "INSERT INTO slice (id, ts, dur, track_id, name, depth) VALUES (?1, ?2, ?3, ?4, 'lockwait:t', 0)",
            rusqlite::params![1000 + k as i64, k as i64, d, track],
        )
        .unwrap();
    }
    let r = run(&conn, "tail.sql");
    let row = r
        .rows
        .iter()
        .position(|x| x[0] == Value::Text("lockwait:t".into()))
        .unwrap();
    let mut sorted = durs.to_vec();
    sorted.sort();
    for (col, p) in [
        ("p50_ns", 0.5),
        ("p90_ns", 0.9),
        ("p95_ns", 0.95),
        ("p99_ns", 0.99),
    ] {
        let want = superpass_trace::report::percentile(&sorted, p).unwrap();
        assert_eq!(get(&r, row, col), int(want), "{col}");
    }
    assert_eq!(get(&r, row, "max_ns"), int(100));
    let m = r
        .rows
        .iter()
        .position(|x| x[0] == Value::Text("lockwait:m".into()))
        .unwrap();
    assert_eq!(get(&r, m, "p50_ns"), int(9_500 * US));
}

#[test]
fn overlap() {
    let r = run(&db(), "overlap.sql");
    assert_eq!(r.rows.len(), 2);
    assert_eq!(get(&r, 0, "holder_tid"), int(102));
    assert_eq!(get(&r, 0, "overlap_ns"), int(8_000 * US));
    assert_eq!(get(&r, 1, "holder_tid"), int(103));
    assert_eq!(get(&r, 1, "overlap_ns"), int(600 * US));
}

#[test]
fn barging() {
    let r = run(&db(), "barging.sql");
    assert_eq!(r.rows.len(), 1);
    assert_eq!(get(&r, 0, "acquisitions"), int(1));
    assert_eq!(get(&r, 0, "by_tids"), Value::Text("103".into()));
}

#[test]
fn itemize() {
    let r = run(&db(), "itemize.sql");
    assert_eq!(r.rows.len(), 1);
    assert_eq!(get(&r, 0, "waiter_tid"), int(101));
    assert_eq!(get(&r, 0, "asleep_ns"), int(7_000 * US));
    assert_eq!(get(&r, 0, "runnable_ns"), int(1_000 * US));
    assert_eq!(get(&r, 0, "running_ns"), int(1_500 * US));
    assert_eq!(get(&r, 0, "unknown_ns"), int(0));
    assert_eq!(get(&r, 0, "woken_by_tids"), Value::Text("102".into()));
}

#[test]
fn holder_state() {
    let r = run(&db(), "holder_state.sql");
    assert_eq!(r.rows.len(), 2);
    assert_eq!(get(&r, 0, "holder_tid"), int(102));
    assert_eq!(get(&r, 0, "runnable_ns"), int(7_000 * US));
    assert_eq!(get(&r, 0, "running_ns"), int(1_000 * US));
    assert_eq!(get(&r, 1, "running_ns"), int(600 * US));
}

#[test]
fn superpass_intervals() {
    let r = run(&db(), "superpass.sql");
    assert_eq!(r.rows.len(), 1);
    assert_eq!(get(&r, 0, "waiter_tid"), int(101));
    assert_eq!(get(&r, 0, "blocker_tid"), int(102));
    assert_eq!(get(&r, 0, "blocked_ns"), int(8_000 * US));
    assert_eq!(get(&r, 0, "first_grant_ns"), int(5_000 * US));
    assert_eq!(get(&r, 0, "lock"), Value::Text("0xffff888000001000".into()));
}

#[test]
fn seed_post_queries_run_unchanged() {
    // The seed post's style: thread_slice joined with thread_state by utid.
    let conn = db();
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM thread_slice s JOIN thread_state ts USING (utid) \
             WHERE s.name GLOB 'lockwait:*' AND ts.ts < s.ts + s.dur AND ts.ts + ts.dur > s.ts",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 4);
}
