//! What real captures contain that the scenario traces do not: compressed packets, default
//! tracks and incremental clocks, NaN counters, cut UTF-8, names from line comms, async
//! slices, CPU counters, raw trace-cmd text, ART monitor contention, and unreadable files.

mod common;

use rusqlite::Connection;
use superpass_trace::import;
use superpass_trace::report::{self, Options};
use superpass_trace::wire::{put_bytes, put_message, put_uint};

fn rows(conn: &Connection, sql: &str) -> Vec<String> {
    let r = superpass_trace::query::run(conn, sql).unwrap();
    r.to_tsv().lines().skip(1).map(str::to_owned).collect()
}

fn one(conn: &Connection, sql: &str) -> String {
    rows(conn, sql).join("|")
}

#[test]
fn compressed_packets_import_like_plain_ones() {
    let plain = common::pftrace();
    // Perfetto's `compress_trace`: the packets, zlib-deflated, in one packet's field 50.
    let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
    let mut packed = Vec::new();
    put_message(&mut packed, 1, |p| put_bytes(p, 50, &deflated));
    let (a, sa) = import::import_in_memory(&plain).unwrap();
    let (b, sb) = import::import_in_memory(&packed).unwrap();
    assert!(sa.events > 0);
    assert_eq!(sa.events, sb.events);
    for t in ["slice", "sched", "thread_state", "thread"] {
        let q = format!("SELECT * FROM {t} ORDER BY 1");
        assert_eq!(rows(&a, &q), rows(&b, &q), "{t}");
    }
    // Damaged compressed data is counted corrupt, not silently empty.
    let mut bad = Vec::new();
    put_message(&mut bad, 1, |p| {
        put_bytes(p, 50, &deflated[..deflated.len() / 2])
    });
    let e = import::import_in_memory(&bad);
    assert!(e.map(|(_, s)| s.diag.corrupt).unwrap_or(1) > 0);
}

/// A Perfetto SDK sequence: defaults name the track and an incremental clock (µs units),
/// a clock snapshot ties that clock to the boot clock.
fn sdk_trace() -> Vec<u8> {
    let mut t = Vec::new();
    put_message(&mut t, 1, |p| {
        put_message(p, 60, |d| {
            put_uint(d, 1, 77);
            put_message(d, 4, |th| {
                put_uint(th, 1, 10);
                put_uint(th, 2, 11);
                put_bytes(th, 5, b"main");
            });
        });
    });
    put_message(&mut t, 1, |p| {
        put_uint(p, 10, 5);
        put_uint(p, 13, 1);
        put_message(p, 59, |d| {
            put_uint(d, 58, 64);
            put_message(d, 11, |te| put_uint(te, 11, 77));
        });
        put_message(p, 6, |c| {
            put_message(c, 1, |k| {
                put_uint(k, 1, 6);
                put_uint(k, 2, 1_000_000_000);
            });
            put_message(c, 1, |k| {
                put_uint(k, 1, 64);
                put_uint(k, 2, 1000);
                put_uint(k, 3, 1);
                put_uint(k, 4, 1000);
            });
        });
    });
    // A packet without a track event still advances the incremental clock (2 µs).
    for (delta, kind, name) in [
        (10u64, 1u64, Some("lockwait:m")),
        (2, 0, None),
        (5, 2, None),
    ] {
        put_message(&mut t, 1, |p| {
            put_uint(p, 10, 5);
            put_uint(p, 8, delta);
            if kind == 0 {
                put_message(p, 12, |_| {});
                return;
            }
            put_message(p, 11, |te| {
                put_uint(te, 9, kind);
                if let Some(n) = name {
                    put_bytes(te, 23, n.as_bytes());
                }
            });
        });
    }
    t
}

#[test]
fn sdk_events_on_default_tracks_with_incremental_timestamps() {
    let (conn, s) = import::import_in_memory(&sdk_trace()).unwrap();
    assert_eq!(s.slices, 1, "{s}");
    // 1000 µs + 10 µs on a clock whose 1000 µs is boot time 1 s.
    assert_eq!(
        one(
            &conn,
            "SELECT ts, dur, name, tid, thread_name FROM thread_slice"
        ),
        "1000010000\t7000\tlockwait:m\t11\tmain"
    );
}

fn text_trace(lines: &[&str]) -> Vec<u8> {
    let mut t = b"# tracer: nop\n#\n".to_vec();
    for l in lines {
        t.extend_from_slice(l.as_bytes());
        t.push(b'\n');
    }
    t
}

#[test]
fn text_names_counters_async_and_nan() {
    let t = text_trace(&[
        "   app-100   (100) [000] ....   1.000000: tracing_mark_write: B|100|work",
        "   app-100   (100) [000] ....   1.000100: tracing_mark_write: E|100",
        "   Binder:1-101 (100) [001] ....   1.000200: tracing_mark_write: S|100|load|7",
        "   Binder:1-101 (100) [001] ....   1.000300: tracing_mark_write: C|100|queue|nan",
        "   Binder:1-101 (100) [001] ....   1.000400: tracing_mark_write: C|100|queue|3",
        "   app-100   (100) [000] ....   1.000500: tracing_mark_write: F|100|load|7",
        "   <idle>-0  [000] d..2   1.000600: cpu_frequency: state=1800000 cpu_id=0",
        "   <idle>-0  [000] d..2   1.000700: cpu_idle: state=4294967295 cpu_id=0",
        "   app-100   (100) [000] d..2   1.000800: sched_wakeup_new: comm=app pid=102 prio=120 target_cpu=001",
        "   app-100   (100) [000] d..2   1.000900: sched_switch: prev_comm=app prev_pid=100 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120",
    ]);
    let (conn, s) = import::import_in_memory(&t).unwrap();
    // Names from the lines' comm-tid, the process from its main thread.
    assert_eq!(
        rows(
            &conn,
            "SELECT tid, name FROM thread WHERE tid > 0 ORDER BY tid"
        ),
        ["100\tapp", "101\tBinder:1", "102\tapp"]
    );
    assert_eq!(
        one(&conn, "SELECT name FROM process WHERE pid = 100"),
        "app"
    );
    assert_eq!(
        one(&conn, "SELECT DISTINCT process_name FROM thread_slice"),
        "app"
    );
    // The async slice on its own process track, ended by another thread.
    assert_eq!(
        one(&conn, "SELECT s.ts, s.dur FROM slice s JOIN process_track t ON s.track_id = t.id WHERE s.name = 'load'"),
        "1000200000\t300000"
    );
    // NaN is NULL and counted.
    assert_eq!(
        rows(&conn, "SELECT IFNULL(value, 'NULL') FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = 'queue' ORDER BY c.ts"),
        ["NULL", "3"]
    );
    assert_eq!(s.diag.nan_counters, 1);
    assert_eq!(
        one(&conn, "SELECT value FROM stats WHERE name = 'counter_nan'"),
        "1"
    );
    // CPU counters; cpu_idle's "left idle" as -1.
    assert_eq!(
        rows(&conn, "SELECT t.name, t.cpu, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.cpu IS NOT NULL ORDER BY c.ts"),
        ["cpufreq\t0\t1800000", "cpuidle\t0\t-1"]
    );
    // wakeup_new makes the new thread runnable; a raw (trace-cmd -R) switch parses.
    assert_eq!(
        one(
            &conn,
            "SELECT state FROM thread_state JOIN thread USING (utid) WHERE tid = 102"
        ),
        "R"
    );
    assert_eq!(one(&conn, "SELECT COUNT(*) FROM sched"), "1");
}

#[test]
fn text_with_a_cut_multibyte_name_is_still_text() {
    let mut t = b"# tracer: nop\n".to_vec();
    t.extend_from_slice(
        b"   \xe4\xb8\xad\xe6-300 [000] ....   2.000000: tracing_mark_write: B|300|x\n",
    );
    t.extend_from_slice(
        b"   \xe4\xb8\xad\xe6-300 [000] ....   2.000001: tracing_mark_write: E|300\n",
    );
    let (conn, s) = import::import_in_memory(&t).unwrap();
    assert_eq!(s.format, import::Format::FtraceText);
    assert_eq!(one(&conn, "SELECT COUNT(*) FROM slice"), "1");
}

/// ART's contention slice on the waiter, the owner starved of CPU inside it.
fn art_trace() -> Vec<u8> {
    text_trace(&[
        "   owner-200 (200) [000] d..2   1.000000: sched_switch: prev_comm=owner prev_pid=200 prev_prio=120 prev_state=R+ ==> next_comm=hog next_pid=300 next_prio=120",
        "   ui-100    (100) [001] ....   1.000100: tracing_mark_write: B|100|Lock contention on a monitor lock (owner tid: 200)",
        "   ui-100    (100) [001] ....   1.000110: tracing_mark_write: B|100|Lock contention on a monitor lock (owner tid: 200)",
        "   ui-100    (100) [001] d..2   1.000200: sched_switch: prev_comm=ui prev_pid=100 prev_prio=110 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
        "   hog-300   (300) [000] d..2   1.004000: sched_switch: prev_comm=hog prev_pid=300 prev_prio=120 prev_state=R+ ==> next_comm=owner next_pid=200 next_prio=120",
        "   owner-200 (200) [000] d..4   1.005000: sched_waking: comm=ui pid=100 prio=110 target_cpu=001",
        "   <idle>-0  [001] d..2   1.005100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=ui next_pid=100 next_prio=110",
        "   ui-100    (100) [001] ....   1.005190: tracing_mark_write: E|100",
        "   ui-100    (100) [001] ....   1.005200: tracing_mark_write: E|100",
    ])
}

#[test]
fn art_monitor_contention_is_a_wait_with_its_owner() {
    let (conn, _) = import::import_in_memory(&art_trace()).unwrap();
    let r = report::analyze(&conn, Options::default()).unwrap();
    // The nested second slice is the same wait.
    assert_eq!(r["census"][0]["name"], "art:monitor");
    assert_eq!(r["census"][0]["count"], 1);
    let w = &r["long_waits"]["worst"][0];
    assert_eq!(w["dur"], 5_100_000);
    assert_eq!(w["owner"]["thread"]["tid"], 200);
    // The owner: runnable (preempted) 1.0001 .. 1.004, then running to the end.
    assert_eq!(w["owner"]["state"]["runnable_ns"], 3_900_000);
    assert_eq!(w["owner"]["state"]["running_ns"], 1_200_000);
    assert_eq!(w["woken_by"][0]["waker"]["tid"], 200);
    assert_eq!(w["woken_by"][0]["is_owner"], true);
    assert_eq!(r["all_waits"]["woken_by_owner"], 1);
    assert_eq!(
        r["all_waits"]["holders_during_waits"]["runnable_ns"],
        3_900_000
    );
    let text = report::render_text(&r);
    assert!(text.contains("owner owner (200)"), "{text}");
    assert!(
        text.contains("(runnable 3.900 ms: the owner waited for a CPU"),
        "{text}"
    );
    assert!(text.contains("at +0.100 ms"), "{text}");
}

#[test]
fn report_says_when_there_is_nothing_to_report() {
    let t = text_trace(&[
        "   app-100 (100) [000] ....   1.000000: tracing_mark_write: B|100|work",
        "   app-100 (100) [000] ....   1.000100: tracing_mark_write: E|100",
    ]);
    let (conn, _) = import::import_in_memory(&t).unwrap();
    let r = report::analyze(&conn, Options::default()).unwrap();
    let text = report::render_text(&r);
    assert!(
        text.contains("hint: this trace has 1 slices but no lock waits"),
        "{text}"
    );
    assert!(text.contains("holders: n/a"), "{text}");
    // Against a baseline without waits there is nothing to compare.
    let (art, _) = import::import_in_memory(&art_trace()).unwrap();
    let mut cur = report::analyze(&art, Options::default()).unwrap();
    cur["versus_baseline"] = report::compare(&cur, &r);
    let text = report::render_text(&cur);
    assert!(text.contains("n/a: no waits to compare"), "{text}");
    assert!(!text.contains("removed -"), "{text}");
}

#[test]
fn errors_name_the_file_and_what_it_is() {
    let dir = std::env::temp_dir().join(format!("sp-real-world-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.db");
    for (name, bytes, what) in [
        ("a.zip", &b"PK\x03\x04rest of a zip"[..], "zip archive"),
        ("b.dat", &b"\x17\x08Dtracing6\0\0"[..], "trace-cmd report"),
        ("c.json", &b"{\"traceEvents\": []}"[..], "JSON"),
        ("d.gz", &b"\x1f\x8b\x08\0\0\0\0\0\0\x03garbage"[..], "gzip"),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = import::import_file(&p, &out).unwrap_err().to_string();
        assert!(e.contains(&p.display().to_string()), "{e}");
        assert!(e.contains(what), "{e}");
        assert!(!out.exists());
    }
    let e = import::open_any(&dir.join("missing.pftrace"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.pftrace"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn systrace_html_with_its_process_dump() {
    let html = "<!DOCTYPE html>\n<html><head><title>x</title></head><body>\n\
  <script class=\"trace-data\" type=\"application/json\">{\"traceEvents\": []}</script>\n\
  <script class=\"trace-data\" type=\"application/text\">\n\
# tracer: nop\n\
#\n\
   <...>-501   (500) [000] ....   3.000000: tracing_mark_write: B|500|inflate\n\
   <...>-501   (500) [000] ....   3.000200: tracing_mark_write: E|500\n\
PROCESS DUMP\n\
USER           PID  PPID     VSZ    RSS WCHAN  PC S NAME                        COMM\n\
u0_a42         500   300  100000  20000 0      0  S com.example.app             [app]\n\
USER PID TID CMD\n\
u0_a42 500 501 RenderThread\n\
  </script>\n</body></html>\n";
    let (conn, s) = import::import_in_memory(html.as_bytes()).unwrap();
    assert_eq!(s.containers, [import::Format::SystraceHtml]);
    assert_eq!(
        one(
            &conn,
            "SELECT name, thread_name, process_name FROM thread_slice"
        ),
        "inflate\tRenderThread\tcom.example.app"
    );
    assert_eq!(s.diag.corrupt, 0, "{s}");
}

#[test]
fn trace_cmd_report_raw_text() {
    let t = "version = 6\nCPU 1 is empty\ncpus=2\n\
     bash-1234  [000]  5678.000100: sched_switch:         prev_comm=bash prev_pid=1234 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120\n\
   <idle>-0     [000]  5678.000200: sched_wakeup:         comm=bash pid=1234 prio=120 target_cpu=000\n";
    let (conn, s) = import::import_in_memory(t.as_bytes()).unwrap();
    assert_eq!(s.diag.corrupt, 0, "{s}");
    // prev_state=1 is TASK_INTERRUPTIBLE: the thread sleeps until the wakeup.
    assert_eq!(
        rows(&conn, "SELECT state, dur FROM thread_state JOIN thread USING (utid) WHERE tid = 1234 ORDER BY ts"),
        ["S\t100000", "R\t-1"]
    );
}

/// Android 11-13 print ART's own thread id in the long form: `(2)` is not a tid here, and
/// the owner is the thread of the waiter's process with the name ART gives. A long form
/// with no nested short one (Android 7-10) is the wait itself.
#[test]
fn art_long_form_owner_resolves_by_name_within_the_process() {
    let t = text_trace(&[
        "   owner-200 (100) [000] d..2   1.000000: sched_switch: prev_comm=owner prev_pid=200 prev_prio=120 prev_state=R+ ==> next_comm=other next_pid=2 next_prio=120",
        "   ui-100    (100) [001] ....   1.000100: tracing_mark_write: B|100|monitor contention with owner owner (2) waiters=0 blocking from void a.B.c()(B.java:1)",
        "   ui-100    (100) [001] ....   1.000300: tracing_mark_write: E|100",
    ]);
    let (conn, _) = import::import_in_memory(&t).unwrap();
    let opts = Options {
        long_ns: 0,
        top: 10,
    };
    let r = report::analyze(&conn, opts).unwrap();
    assert_eq!(r["census"][0]["name"], "art:monitor");
    assert_eq!(r["census"][0]["count"], 1);
    // Thread 2 exists but is named `other`: ART's id 2 is the thread named `owner`.
    assert_eq!(r["long_waits"]["worst"][0]["owner"]["thread"]["tid"], 200);
}

#[test]
fn monitor_contention_table_has_perfettos_columns_and_the_binder_reply() {
    // Android 11-13: the long form numbers the owner with ART's thread id (2), which is
    // another thread's tid; the short form nested in it is the same wait.
    let t = text_trace(&[
        "   owner-200 (100) [000] d..2   1.000000: sched_switch: prev_comm=owner prev_pid=200 prev_prio=120 prev_state=R+ ==> next_comm=other next_pid=2 next_prio=120",
        "   ui-100    (100) [001] ....   1.000050: tracing_mark_write: B|100|binder reply",
        "   ui-100    (100) [001] ....   1.000100: tracing_mark_write: B|100|monitor contention with owner owner (2) at void a.B.h()(B.java:7) waiters=1 blocking from void a.B.c()(B.java:1)",
        "   ui-100    (100) [001] ....   1.000110: tracing_mark_write: B|100|Lock contention on a monitor lock (owner tid: 200)",
        "   ui-100    (100) [001] ....   1.000290: tracing_mark_write: E|100",
        "   ui-100    (100) [001] ....   1.000300: tracing_mark_write: E|100",
        "   ui-100    (100) [001] ....   1.000400: tracing_mark_write: E|100",
        "   ui-100    (100) [001] ....   1.000500: tracing_mark_write: B|100|Lock contention on a monitor lock (owner tid: 0)",
        "   ui-100    (100) [001] ....   1.000600: tracing_mark_write: E|100",
        "   ui-100    (100) [001] ....   1.000700: tracing_mark_write: B|100|Lock contention on thread list lock (owner tid: 200)",
        "   ui-100    (100) [001] ....   1.000800: tracing_mark_write: E|100",
    ]);
    let (conn, _) = import::import_in_memory(&t).unwrap();
    let got = rows(
        &conn,
        "SELECT blocking_method, blocked_method, short_blocking_method, short_blocked_method, \
         blocking_src, blocked_src, waiter_count, blocked_thread_name, blocking_thread_name, \
         blocking_tid, process_name, ts, dur, monotonic_dur, is_blocked_thread_main, \
         blocked_thread_tid, is_blocking_thread_main, blocking_thread_tid, \
         binder_reply_id = (SELECT id FROM slice WHERE name = 'binder reply'), binder_reply_ts, \
         binder_reply_tid, pid, lock, long_form, \
         blocking_utid = (SELECT utid FROM thread WHERE tid = 200), \
         blocked_utid = (SELECT utid FROM thread WHERE tid = 100), \
         id = (SELECT id FROM slice s WHERE s.ts = m.ts AND s.depth < 2) \
         FROM monitor_contention m ORDER BY ts",
    );
    assert_eq!(
        got,
        [
            "void a.B.h()\tvoid a.B.c()\ta.B.h\ta.B.c\tB.java:7\tB.java:1\t1\tui\towner\t2\tui\t\
             1000100000\t200000\t200000\t1\t100\t0\t200\t1\t1000050000\t100\t100\t\
             a monitor lock\t1\t1\t1\t1",
            "NULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tui\tNULL\t0\tui\t1000500000\t100000\t\
             100000\t1\t100\tNULL\tNULL\tNULL\tNULL\tNULL\t100\ta monitor lock\t0\tNULL\t1\t1",
        ]
    );
    let r = report::analyze(&conn, Options::default()).unwrap();
    let m = &r["monitors"][0];
    assert_eq!(
        (m["process"].as_str(), m["waits"].as_i64()),
        (Some("ui"), Some(2))
    );
    assert_eq!(m["blocked_methods"][0]["short_method"], "a.B.c");
    assert_eq!(m["blocking_methods"][0]["src"], "B.java:7");
    assert!(m["blocking_methods"][1]["method"].is_null());
    let text = report::render_text(&r);
    assert!(text.contains("blocking     1 waits"), "{text}");
    assert!(text.contains("a.B.h (B.java:7)"), "{text}");
    let fk = rows(&conn, "PRAGMA foreign_key_check");
    assert!(fk.is_empty(), "{fk:?}");
}
