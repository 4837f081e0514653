//! The page writer (`btree.rs`, used by `import_in_memory` and `import_file`) must produce
//! the same database as SQL INSERTs (`import_in_memory_sql`, the reference): every table's
//! rows, values and types, the schema, and a clean `PRAGMA integrity_check`.

mod common;

use proptest::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use superpass_trace::import::{self, Writer};
use superpass_trace::writer::TraceWriter;

/// Every row of every table, each value with its storage class.
fn dump(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    let mut st = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")
        .unwrap();
    let schema: Vec<(String, String, String, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (ty, name, tbl, sql) in &schema {
        out.push(format!("schema {ty} {name} {tbl} {sql:?}"));
    }
    for (ty, name, _, _) in &schema {
        if ty != "table" {
            continue;
        }
        let mut st = conn.prepare(&format!("SELECT * FROM {name}")).unwrap();
        let n = st.column_count();
        let mut rows = st.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let vals: Vec<String> = (0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    ValueRef::Null => "null".to_owned(),
                    ValueRef::Integer(v) => format!("int {v}"),
                    ValueRef::Real(v) => format!("real {v:?}"),
                    ValueRef::Text(v) => format!("text {:?}", String::from_utf8_lossy(v)),
                    ValueRef::Blob(v) => format!("blob {v:?}"),
                })
                .collect();
            out.push(format!("{name}: {}", vals.join(" | ")));
        }
    }
    out
}

/// Compares dumps, reporting the first difference.
fn same_dump(pages: &[String], sql: &[String]) {
    for (i, (a, b)) in pages.iter().zip(sql).enumerate() {
        assert_eq!(a, b, "line {i}: page writer vs SQL");
    }
    assert_eq!(pages.len(), sql.len(), "line counts");
}

fn integrity(conn: &Connection) {
    let r: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(r, vec!["ok"], "integrity_check");
    let fk: Vec<String> = conn
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(fk.is_empty(), "dangling references: {fk:?}");
}

/// Imports `buf` both ways and checks that the databases agree; returns the page writer's
/// summary. Inputs that fail must fail both ways with the same message.
fn same_both_ways(buf: &[u8]) -> Option<import::Summary> {
    let pages = import::import_in_memory(buf);
    let sql = import::import_in_memory_sql(buf);
    match (pages, sql) {
        (Ok((p, ps)), Ok((s, _))) => {
            integrity(&p);
            same_dump(&dump(&p), &dump(&s));
            Some(ps)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            None
        }
        (a, b) => panic!(
            "page writer {:?} vs SQL {:?}",
            a.map(|x| x.1),
            b.map(|x| x.1)
        ),
    }
}

#[test]
fn scenario_traces_match_sql_inserts() {
    for buf in [common::pftrace(), common::ftrace_text().into_bytes()] {
        let s = same_both_ways(&buf).expect("imports");
        assert_eq!(s.writer, Writer::Pages);
        assert!(s.superpass > 0);
    }
}

#[test]
fn multi_level_trees_match_sql_inserts() {
    // Big enough for interior pages (and several levels of them) in every big table.
    let (trace, _) = superpass_trace::synth::contended_trace(3 << 20, 2);
    let s = same_both_ways(&trace).expect("imports");
    assert_eq!(s.writer, Writer::Pages);
    assert!(s.thread_state > 10_000, "{s}");
}

#[test]
fn wide_values_match_sql_inserts() {
    // Long names (few cells per page), negative and huge integers, every thread a track.
    let mut w = TraceWriter::new();
    for tid in 1..40 {
        w.thread(1, tid, &format!("t{tid}"));
    }
    let long = "x".repeat(3000);
    let mut ts = 10u64;
    for i in 0..400u64 {
        let tid = (i % 39) as i32 + 1;
        w.sched_switch(ts, (i % 3) as u32, "a", 0, 120, 1, "b", tid, -5);
        w.slice_begin(ts + 1, tid, &format!("{long}{i}"));
        w.print(
            ts + 2,
            0,
            tid,
            &format!("C|1|ctr{}|{}", i % 3, i as f64 * -0.25),
        );
        if i % 2 == 0 {
            w.slice_end(ts + 3, tid);
        }
        w.sched_blocked_reason(ts + 4, 0, tid, u64::MAX - i, i % 2 == 0);
        ts += 1_000_000_000_000;
    }
    let s = same_both_ways(&w.finish()).expect("imports");
    assert_eq!(s.writer, Writer::Pages);
}

#[test]
fn oversized_rows_fall_back_to_sql() {
    // A slice name longer than a 64 KiB page needs overflow pages, which the page writer
    // leaves to SQLite.
    let mut w = TraceWriter::new();
    w.thread(1, 2, "t");
    w.sched_switch(10, 0, "swapper", 0, 120, 0, "t", 2, 120);
    w.slice_begin(20, 2, &"y".repeat(70_000));
    w.slice_end(30, 2);
    let s = same_both_ways(&w.finish()).expect("imports");
    assert!(matches!(s.writer, Writer::Sql(_)), "{:?}", s.writer);
}

#[test]
fn file_import_is_complete_and_replaces_atomically() {
    let dir = std::env::temp_dir().join(format!("sp-page-writer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.pftrace");
    let output = dir.join("out.db");
    let (trace, _) = superpass_trace::synth::contended_trace(1 << 20, 2);
    std::fs::write(&input, &trace).unwrap();
    // An existing output is replaced.
    std::fs::write(&output, b"old").unwrap();
    let s = import::import_file(&input, &output).unwrap();
    assert_eq!(s.writer, Writer::Pages);
    let conn = Connection::open(&output).unwrap();
    integrity(&conn);
    let (reference, _) = import::import_in_memory_sql(&trace).unwrap();
    same_dump(&dump(&conn), &dump(&reference));
    drop(conn);
    // Bad input: an error, the existing database untouched, no partial file left.
    let before = std::fs::read(&output).unwrap();
    std::fs::write(&input, b"hello\nworld\n").unwrap();
    assert!(import::import_file(&input, &output).is_err());
    assert_eq!(std::fs::read(&output).unwrap(), before);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    std::fs::remove_dir_all(&dir).ok();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Damaged traces import the same both ways (whatever the decoder salvaged).
    #[test]
    fn corrupted_traces_match_sql_inserts(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = common::damaged_pftrace(flips, cut);
        same_both_ways(&bytes);
    }

    #[test]
    fn mangled_text_matches_sql_inserts(cut in 0usize..4000, junk in "[ -~\\[\\]=|>:]{0,40}") {
        let mut t = common::ftrace_text();
        let cut = cut.min(t.len());
        let cut = (0..=cut).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
        t.insert_str(cut, &junk);
        same_both_ways(t.as_bytes());
    }
}
