//! Importer behaviour: table contents, recovery rules, and that no input panics.

mod common;

use common::US;
use proptest::prelude::*;
use rusqlite::Connection;
use superpass_trace::writer::TraceWriter;
use superpass_trace::{events::Events, import, perfetto};

fn db(buf: &[u8]) -> (Connection, import::Summary) {
    let (conn, s) = import::import_in_memory(buf).unwrap();
    assert_references_valid(&conn);
    (conn, s)
}

/// The importer writes with foreign-key enforcement off (speed); every reference must still
/// resolve, and enforcement is back on for the caller.
fn assert_references_valid(conn: &Connection) {
    let bad = rows(conn, "PRAGMA foreign_key_check");
    assert!(bad.is_empty(), "dangling references: {bad:?}");
    let fk: bool = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert!(fk, "foreign_keys restored after the import");
}

#[test]
fn synthetic_trace_references_are_valid() {
    let (trace, events) = superpass_trace::synth::contended_trace(256 << 10, 2);
    let (conn, s) = db(&trace);
    assert_eq!(s.events, events);
    let n = rows(&conn, "SELECT COUNT(*) FROM thread_state");
    assert_eq!(n, vec![s.thread_state.to_string()]);
}

fn rows(conn: &Connection, sql: &str) -> Vec<String> {
    let r = superpass_trace::query::run(conn, sql).unwrap();
    r.to_tsv().lines().skip(1).map(str::to_owned).collect()
}

#[test]
fn thread_state_follows_trace_processor_rules() {
    let (conn, _) = db(&common::pftrace());
    let ui = rows(
        &conn,
        "SELECT ts.ts, ts.dur, state, IFNULL(cpu, '-'), IFNULL(w.tid, '-') FROM thread_state ts \
         JOIN thread t USING (utid) LEFT JOIN thread w ON w.utid = ts.waker_utid \
         WHERE t.tid = 101 ORDER BY ts.ts",
    );
    let us = |v: i64| v * US;
    assert_eq!(
        ui,
        vec![
            format!("{}\t{}\tRunning\t0\t-", us(2000), us(2000)),
            format!("{}\t{}\tS\t-\t-", us(4000), us(7000)),
            format!("{}\t{}\tR\t-\t102", us(11000), us(1000)),
            format!("{}\t{}\tRunning\t0\t-", us(12000), us(8000)),
            format!("{}\t-1\tS\t-\t-", us(20000)),
        ]
    );
    let bg_preempted = rows(
        &conn,
        "SELECT state, dur FROM thread_state JOIN thread USING (utid) WHERE tid = 102 AND ts = 2000000",
    );
    assert_eq!(bg_preempted, vec![format!("R+\t{}", us(8000))]);
    // sched: the last slice of each CPU runs to the end of the trace.
    let sched = rows(
        &conn,
        "SELECT cpu, ts, dur, tid, IFNULL(end_state, '-') FROM sched JOIN thread USING (utid) \
         WHERE cpu = 1 ORDER BY ts",
    );
    assert_eq!(sched, vec![format!("1\t0\t{}\t103\t-", us(20000))]);
    let threads = rows(
        &conn,
        "SELECT tid, thread.name, p.pid, is_main_thread FROM thread LEFT JOIN process p USING (upid) \
         WHERE tid > 0 ORDER BY tid",
    );
    assert_eq!(
        threads,
        vec![
            "101\tui\t100\t0",
            "102\tbg\t100\t0",
            "103\tbarger\t100\t0",
            "201\thog\t200\t0"
        ]
    );
}

#[test]
fn blocked_reason_lands_on_the_sleep() {
    let mut w = TraceWriter::new();
    w.thread(1, 5, "t");
    w.sched_switch(10, 0, "swapper", 0, 120, 0, "t", 5, 120);
    w.sched_switch(20, 0, "t", 5, 120, 2, "swapper", 0, 120);
    // The kernel emits sched_blocked_reason during the wakeup, after sched_waking.
    w.sched_waking(30, 0, "t", 5, 120, 0);
    w.sched_blocked_reason(30, 0, 5, 0xffff_0000_0000_0abc, true);
    let (conn, _) = db(&w.finish());
    let r = rows(
        &conn,
        "SELECT state, blocked_function, io_wait FROM thread_state WHERE state = 'D'",
    );
    assert_eq!(r, vec!["D\t0xffff000000000abc\t1"]);
}

#[test]
fn out_of_order_and_unended_are_repaired_and_counted() {
    let mut w = TraceWriter::new();
    w.thread(1, 2, "t");
    // Written out of order on the same CPU: the importer sorts them.
    w.sched_switch(200, 0, "t", 2, 120, 1, "swapper", 0, 120);
    w.sched_switch(100, 0, "swapper", 0, 120, 0, "t", 2, 120);
    w.slice_begin(110, 2, "outer");
    w.slice_begin(120, 2, "inner");
    w.slice_end(130, 2);
    w.slice_end(140, 2);
    w.slice_end(150, 2); // unmatched
    w.slice_begin(160, 2, "lockwait:never_ends");
    let (conn, s) = db(&w.finish());
    assert_eq!(s.diag.out_of_order, 1);
    assert_eq!(s.diag.unmatched_ends, 1);
    assert_eq!(s.diag.unended_slices, 1);
    let sl = rows(
        &conn,
        "SELECT name, ts, dur, depth, IFNULL(parent_id, '-') FROM slice ORDER BY id",
    );
    assert_eq!(
        sl,
        vec![
            "outer\t110\t30\t0\t-",
            "inner\t120\t10\t1\t0",
            "lockwait:never_ends\t160\t-1\t0\t-"
        ]
    );
    let st = rows(&conn, "SELECT state, ts, dur FROM thread_state ORDER BY ts");
    assert_eq!(st, vec!["Running\t100\t100", "S\t200\t-1"]);
    let meta = rows(
        &conn,
        "SELECT int_value FROM metadata WHERE name = 'import_unended_slices'",
    );
    assert_eq!(meta, vec!["1"]);
}

#[test]
fn text_and_perfetto_give_the_same_tables() {
    let (a, _) = db(&common::pftrace());
    let (b, _) = db(common::ftrace_text().as_bytes());
    let off = common::TEXT_OFFSET;
    for sql in [
        "SELECT ts - {o}, dur, state, utid, IFNULL(waker_utid, -1) FROM thread_state ORDER BY id",
        "SELECT ts - {o}, dur, cpu, utid, IFNULL(end_state, '') FROM sched ORDER BY id",
        "SELECT ts - {o}, dur, name, depth FROM thread_slice ORDER BY id",
        "SELECT ts - {o}, cpu, utid, run_now FROM superpass_queue ORDER BY id",
        "SELECT ts - {o}, cpu, dur FROM superpass_throttle ORDER BY id",
        "SELECT ts - {o}, cpu, groups FROM superpass_probes ORDER BY id",
    ] {
        let qa = sql.replace("{o}", "0");
        let qb = sql.replace("{o}", &off.to_string());
        let (ra, rb) = (rows(&a, &qa), rows(&b, &qb));
        // The last sched slices end at the trace end, which both place at 20 ms.
        assert_eq!(ra, rb, "{sql}");
        assert!(!ra.is_empty(), "{sql}");
    }
}

#[test]
fn compact_sched_infers_prev_thread() {
    use superpass_trace::wire::{put_bytes, put_message, put_uint, put_varint};
    let mut out = Vec::new();
    put_message(&mut out, 1, |p| {
        put_message(p, 1, |b| {
            put_uint(b, 1, 0);
            put_message(b, 4, |c| {
                put_bytes(c, 5, b"a");
                put_bytes(c, 5, b"b");
                let col = |c: &mut Vec<u8>, f, v: &[u64]| {
                    put_message(c, f, |c| v.iter().for_each(|&x| put_varint(c, x)))
                };
                col(c, 1, &[100, 50, 50]);
                col(c, 2, &[0, 1, 0]);
                col(c, 3, &[7, 8, 7]);
                col(c, 4, &[120, 120, 120]);
                col(c, 6, &[0, 1, 0]);
                col(c, 7, &[160]);
                col(c, 8, &[8]);
                col(c, 11, &[1]);
            });
        });
    });
    let (conn, _) = db(&out);
    let st = rows(
        &conn,
        "SELECT t.tid, state, s.ts, dur, IFNULL(w.tid, '-') FROM thread_state s JOIN thread t USING (utid) \
         LEFT JOIN thread w ON w.utid = s.waker_utid ORDER BY s.ts, t.tid",
    );
    assert_eq!(
        st,
        vec![
            "7\tRunning\t100\t50\t-",
            "7\tS\t150\t50\t-",
            "8\tRunning\t150\t50\t-",
            "7\tRunning\t200\t-1\t-",
            "8\tR\t200\t-1\t-",
        ]
    );
}

#[test]
fn file_import_is_complete_and_replaces_atomically() {
    let dir = std::env::temp_dir().join(format!("sp-import-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.pftrace");
    let output = dir.join("out.db");
    let (trace, _) = superpass_trace::synth::contended_trace(1 << 20, 2);
    std::fs::write(&input, &trace).unwrap();
    // A file that is not a database is never replaced, nor is the input itself (also
    // under another name).
    std::fs::write(&output, b"old").unwrap();
    let e = import::import_file(&input, &output)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a SQLite database"), "{e}");
    assert_eq!(std::fs::read(&output).unwrap(), b"old");
    let e = import::import_file(&input, &input).unwrap_err().to_string();
    assert!(e.contains("is the input trace"), "{e}");
    let alias = dir.join(".").join("in.pftrace");
    assert!(import::import_file(&input, &alias).is_err());
    assert_eq!(std::fs::read(&input).unwrap(), trace);
    // An existing database is replaced.
    std::fs::remove_file(&output).unwrap();
    Connection::open(&output)
        .unwrap()
        .execute_batch("CREATE TABLE old (x)")
        .unwrap();
    let s = import::import_file(&input, &output).unwrap();
    let conn = Connection::open(&output).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    assert_references_valid(&conn);
    let n = rows(&conn, "SELECT COUNT(*) FROM thread_state");
    assert_eq!(n, vec![s.thread_state.to_string()]);
    assert!(rows(&conn, "SELECT name FROM sqlite_master WHERE name = 'old'").is_empty());
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

#[test]
fn errors_are_clear() {
    let e = import::import_in_memory(b"\x0a\xff\xff\xff\xff\x0f").unwrap_err();
    assert!(e.to_string().contains("not a Perfetto trace"), "{e}");
    let e = import::import_in_memory(b"hello\nworld\n").unwrap_err();
    assert!(e.to_string().contains("no ftrace events"), "{e}");
}

#[test]
fn unknown_packets_are_skipped() {
    use superpass_trace::wire::{put_bytes, put_message, put_uint};
    let mut buf = common::pftrace();
    put_message(&mut buf, 1, |p| {
        put_uint(p, 8, 5);
        put_bytes(p, 999, b"some future packet");
    });
    put_bytes(&mut buf, 7, b"unknown top-level field");
    let (_, s) = db(&buf);
    assert!(s.diag.unknown >= 2);
    assert_eq!(s.diag.corrupt, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut ev = Events::default();
        let _ = perfetto::decode(&bytes, &mut ev);
    }

    #[test]
    fn text_parser_never_panics(s in "\\PC{0,300}") {
        let mut ev = Events::default();
        superpass_trace::ftrace_text::parse(&s, &mut ev);
    }
}

// The whole pipeline (model + SQLite) per case is slower; fewer cases.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn corrupted_real_trace_never_panics(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = common::damaged_pftrace(flips, cut);
        let mut ev = Events::default();
        let _ = perfetto::decode(&bytes, &mut ev);
        // The whole pipeline too: model building and SQLite must take whatever decoded.
        if let Ok((conn, _)) = import::import_in_memory(&bytes) {
            assert_references_valid(&conn);
        }
    }

    #[test]
    fn mangled_text_lines_never_panic(cut in 0usize..4000, junk in "[ -~\\[\\]=|>:]{0,40}") {
        let mut t = common::ftrace_text();
        let cut = cut.min(t.len());
        let cut = (0..=cut).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
        t.insert_str(cut, &junk);
        if let Ok((conn, _)) = import::import_in_memory(t.as_bytes()) {
            assert_references_valid(&conn);
        }
    }
}

/// The peak memory (kB) an import of `trace` reports, from the CLI's timing lines.
#[cfg(target_os = "linux")]
fn import_peak_kb(dir: &std::path::Path, name: &str, trace: &[u8]) -> u64 {
    let input = dir.join(format!("{name}.pftrace"));
    std::fs::write(&input, trace).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_superpass-trace"))
        .arg("import")
        .arg(&input)
        .arg("-o")
        .arg(dir.join(format!("{name}.db")))
        .env("SUPERPASS_TRACE_TIMING", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The peak so far after each phase; the last is the whole import's (the close and the
    // fsync allocate nothing).
    let peaks: Vec<u64> = err
        .lines()
        .filter_map(|l| {
            l.split("peak RSS ")
                .nth(1)?
                .strip_suffix(" kB)")?
                .parse()
                .ok()
        })
        .collect();
    assert!(peaks.len() >= 3, "no peak RSS in the timing lines: {err}");
    peaks.into_iter().max().unwrap()
}

/// An import's memory grows by at most twice the trace file's size, on the 15 MiB synthetic
/// trace the goal is set on. The fixed part (the program, SQLite's page cache) is measured
/// on a tiny trace and counted apart.
#[cfg(target_os = "linux")]
#[test]
fn import_memory_grows_at_most_twice_the_file() {
    let dir = std::env::temp_dir().join(format!("sp-import-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (tiny, _) = superpass_trace::synth::contended_trace(16 << 10, 2);
    let (big, _) = superpass_trace::synth::contended_trace(15 << 20, 2);
    let fixed = import_peak_kb(&dir, "tiny", &tiny) + u64::from(import::FILE_CACHE_KIB);
    let peak = import_peak_kb(&dir, "big", &big);
    let file_kb = big.len() as u64 / 1024;
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        peak <= fixed + 2 * file_kb,
        "peak {peak} kB: {} kB over the fixed {fixed} kB, more than twice the {file_kb} kB file",
        peak - fixed
    );
}
