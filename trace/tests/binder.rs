//! Binder calls as waits: a scenario written as text ftrace and as Perfetto, with its waits
//! worked out by hand, the report's binder section, and the real captures that have binder
//! events.
//!
//! Scenario (ms after 100 s; app = 100 with ui 100 and RenderThread 101; system_server = 200
//! with binder threads 201, 202; 300 with 301):
//! -  0.5: 202 replies (5) to 101: its call began before the trace (dropped, counted)
//! -  1: ui calls 200 (10); 2: 201 takes it
//! -  3: 201, serving 10, calls 300 (11); 4: 301 takes it; 6: 301 replies (12); 7: 201 gets it
//! -  8: 201 replies (13) to ui; 9: ui gets it. Waits: 10 (ui on 201, 8 ms), 11 (201 on 301,
//!    4 ms, nested in 10)
//! - 10: RenderThread calls 200 one-way (14); 11: 202 takes it (no wait)
//! - 12: RenderThread calls 200 (16); 12.5: 202 takes it; 29: 202 replies (17); 29.5:
//!   RenderThread gets it (17.5 ms: over a frame)
//! - 30: RenderThread calls 200 (15); 31: 202 takes it; no reply by the end (dropped, counted)
//! - 35: a reply with no target thread (malformed, counted); 40: the trace ends
//! - sched: 202 runs on CPU 1 from 12, preempted by 301 at 20 (R+), runs again 25 to 40.

mod shared_corpus;

use rusqlite::Connection;
use serde_json::Value;
use superpass_trace::binder::BinderKind;
use superpass_trace::writer::TraceWriter;
use superpass_trace::{import, report};

/// Text timestamps start at 100 s.
const T0: i64 = 100_000_000_000;

#[derive(Clone, Copy)]
enum Ev {
    /// ms, cpu, tid, debug_id, dest_proc, dest_thread, reply, flags
    Txn(f64, u32, i32, i32, i32, i32, bool, u32),
    /// ms, cpu, tid, debug_id
    Recv(f64, u32, i32, i32),
    /// ms, cpu, tid, raw text args (a malformed event)
    Raw(f64, u32, i32, &'static str),
    /// ms, cpu, prev tid, prev state letters, prev state bits, next tid
    Switch(f64, u32, i32, &'static str, i64, i32),
}

/// (pid, tid, name).
const THREADS: &[(i32, i32, &str)] = &[
    (100, 100, "app"),
    (100, 101, "RenderThread"),
    (200, 201, "Binder:200_1"),
    (200, 202, "Binder:200_2"),
    (300, 301, "Binder:300_1"),
];

fn scenario() -> Vec<Ev> {
    use Ev::*;
    vec![
        Txn(0.5, 1, 202, 5, 100, 101, true, 0),
        Recv(0.6, 0, 101, 5),
        Txn(1.0, 0, 100, 10, 200, 0, false, 0x10),
        Recv(2.0, 1, 201, 10),
        Txn(3.0, 1, 201, 11, 300, 0, false, 0x10),
        Recv(4.0, 0, 301, 11),
        Txn(6.0, 0, 301, 12, 200, 201, true, 0),
        Recv(7.0, 1, 201, 12),
        Txn(8.0, 1, 201, 13, 100, 100, true, 0),
        Recv(9.0, 0, 100, 13),
        Txn(10.0, 0, 101, 14, 200, 0, false, 0x11),
        Recv(11.0, 1, 202, 14),
        Switch(12.0, 1, 0, "R", 0, 202),
        Txn(12.0, 0, 101, 16, 200, 0, false, 0x10),
        Recv(12.5, 1, 202, 16),
        Switch(20.0, 1, 202, "R+", 0x100, 301),
        Switch(25.0, 1, 301, "S", 1, 202),
        Txn(29.0, 1, 202, 17, 100, 101, true, 0),
        Recv(29.5, 0, 101, 17),
        Txn(30.0, 0, 101, 15, 200, 0, false, 0x10),
        Recv(31.0, 1, 202, 15),
        Raw(
            35.0,
            1,
            202,
            "transaction=18 dest_node=0 dest_proc=100 dest_thread=0 reply=1 flags=0x0 code=0x0",
        ),
        Switch(40.0, 1, 202, "S", 1, 0),
    ]
}

fn comm(tid: i32) -> &'static str {
    THREADS
        .iter()
        .find(|t| t.1 == tid)
        .map_or("swapper/1", |t| t.2)
}

fn pid(tid: i32) -> i32 {
    THREADS.iter().find(|t| t.1 == tid).map_or(0, |t| t.0)
}

fn ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// The events as tracefs text with `record-tgid`.
fn text(events: &[Ev]) -> String {
    let mut t = String::from("# tracer: nop\n");
    for e in events {
        let (ms, cpu, tid, body) = match *e {
            Ev::Txn(ms, cpu, tid, id, to_proc, to_thread, reply, flags) => (
                ms,
                cpu,
                tid,
                format!(
                    "binder_transaction: transaction={id} dest_node=7 dest_proc={to_proc} \
                     dest_thread={to_thread} reply={} flags=0x{flags:x} code=0x3",
                    u8::from(reply)
                ),
            ),
            Ev::Recv(ms, cpu, tid, id) => (
                ms,
                cpu,
                tid,
                format!("binder_transaction_received: transaction={id}"),
            ),
            Ev::Raw(ms, cpu, tid, args) => (ms, cpu, tid, format!("binder_transaction: {args}")),
            Ev::Switch(ms, cpu, prev, state, _, next) => (
                ms,
                cpu,
                prev,
                format!(
                    "sched_switch: prev_comm={} prev_pid={prev} prev_prio=120 prev_state={state} \
                     ==> next_comm={} next_pid={next} next_prio=120",
                    comm(prev),
                    comm(next)
                ),
            ),
        };
        let ts = T0 + ns(ms);
        let ts = format!("{}.{:06}", ts / 1_000_000_000, ts % 1_000_000_000 / 1000);
        t.push_str(&format!(
            "{:>16}-{tid:<7} ({:>5}) [{cpu:03}] d..2. {ts:>16}: {body}\n",
            comm(tid),
            pid(tid)
        ));
    }
    t
}

/// The events as Perfetto, with process and thread descriptors.
fn pftrace(events: &[Ev]) -> Vec<u8> {
    let mut w = TraceWriter::new();
    for &(pid, _, name) in THREADS.iter().filter(|t| t.0 == t.1) {
        w.process(pid, name);
    }
    w.process(200, "system_server");
    for &(pid, tid, name) in THREADS {
        w.thread(pid, tid, name);
    }
    let at = |ms: f64| (T0 + ns(ms)) as u64;
    for e in events {
        match *e {
            Ev::Txn(ms, cpu, tid, id, to_proc, to_thread, reply, flags) => w.binder(
                at(ms),
                cpu,
                tid,
                &BinderKind::Transaction {
                    debug_id: id,
                    to_proc,
                    to_thread,
                    reply,
                    flags,
                    code: 3,
                },
            ),
            Ev::Recv(ms, cpu, tid, id) => {
                w.binder(at(ms), cpu, tid, &BinderKind::Received { debug_id: id })
            }
            // The same malformed reply: no target thread.
            Ev::Raw(ms, cpu, tid, _) => w.binder(
                at(ms),
                cpu,
                tid,
                &BinderKind::Transaction {
                    debug_id: 18,
                    to_proc: 100,
                    to_thread: 0,
                    reply: true,
                    flags: 0,
                    code: 0,
                },
            ),
            Ev::Switch(ms, cpu, prev, _, bits, next) => w.sched_switch(
                at(ms),
                cpu,
                comm(prev),
                prev,
                120,
                bits,
                comm(next),
                next,
                120,
            ),
        }
    }
    w.finish()
}

fn rows(conn: &Connection, sql: &str) -> Vec<String> {
    let r = superpass_trace::query::run(conn, sql).unwrap();
    r.to_tsv().lines().skip(1).map(str::to_owned).collect()
}

fn one(conn: &Connection, sql: &str) -> String {
    rows(conn, sql).join("|")
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Both renderings of `events`, imported.
fn both(events: &[Ev]) -> [(&'static str, Connection); 2] {
    let (a, _) = import::import_in_memory(text(events).as_bytes()).unwrap();
    let (b, _) = import::import_in_memory(&pftrace(events)).unwrap();
    [("text", a), ("perfetto", b)]
}

#[test]
fn a_sync_call_is_a_wait_on_the_thread_that_served_it() {
    for (fmt, conn) in both(&scenario()) {
        // ts, dur, client, server, call, reply, taken, replied (ms after 100 s).
        let waits = rows(
            &conn,
            &format!(
                "SELECT (ts - {T0}) / 1e6, dur / 1e6, client_tid, server_tid, debug_id, \
                 reply_debug_id, (received_ts - {T0}) / 1e6, (reply_ts - {T0}) / 1e6, code, \
                 flags, lock FROM binder_wait ORDER BY id"
            ),
        );
        assert_eq!(
            waits,
            [
                "1\t8\t100\t201\t10\t13\t2\t8\t3\t16\t0x535042440000000a",
                "3\t4\t201\t301\t11\t12\t4\t6\t3\t16\t0x535042440000000b",
                "12\t17.5\t101\t202\t16\t17\t12.5\t29\t3\t16\t0x5350424400000010",
            ],
            "{fmt}"
        );
    }
}

#[test]
fn a_nested_call_names_the_call_its_client_was_serving() {
    for (fmt, conn) in both(&scenario()) {
        // 201 called 301 while serving ui's call: the chain ui -> 201 -> 301.
        assert_eq!(
            one(
                &conn,
                "SELECT p.client_tid, p.server_tid, c.client_tid, c.server_tid FROM binder_wait c \
                 JOIN binder_wait p ON p.id = c.parent_id"
            ),
            "100\t201\t201\t301",
            "{fmt}"
        );
        assert_eq!(
            one(
                &conn,
                "SELECT COUNT(*) FROM binder_wait WHERE parent_id IS NULL"
            ),
            "2",
            "{fmt}"
        );
    }
}

#[test]
fn one_way_calls_are_no_waits_and_unmatched_ends_are_dropped_and_counted() {
    for (fmt, conn) in both(&scenario()) {
        assert_eq!(
            one(
                &conn,
                "SELECT COUNT(*) FROM binder_wait WHERE debug_id IN (14, 15, 5)"
            ),
            "0",
            "{fmt}"
        );
        let stats = rows(
            &conn,
            "SELECT name, value FROM stats WHERE name GLOB 'binder:*' ORDER BY name",
        );
        assert_eq!(
            stats,
            [
                "binder:call_unended\t1",
                "binder:malformed\t1",
                "binder:reply_without_call\t1"
            ],
            "{fmt}"
        );
        let described = one(
            &conn,
            "SELECT description FROM stats WHERE name = 'binder:call_unended'",
        );
        assert!(described.contains("at the trace end"), "{fmt}: {described}");
        let meta = rows(
            &conn,
            "SELECT name, int_value FROM metadata WHERE name GLOB 'binder_*' ORDER BY name",
        );
        assert_eq!(
            meta,
            [
                "binder_oneway_calls\t1",
                "binder_replies\t4",
                "binder_sync_calls\t4"
            ],
            "{fmt}"
        );
    }
}

#[test]
fn malformed_binder_events_are_counted_with_a_note() {
    let (_, s) = import::import_in_memory(text(&scenario()).as_bytes()).unwrap();
    assert_eq!(s.diag.skipped.get("binder:malformed"), Some(&1));
    assert!(
        s.diag
            .notes
            .iter()
            .any(|n| n.starts_with("binder: malformed event skipped")
                && n.contains("transaction=18")),
        "{:?}",
        s.diag.notes
    );
    let summary = s.to_string();
    assert!(
        summary.contains(
            "binder: 4 synchronous calls -> 3 binder_wait rows, 1 one-way calls, 4 replies"
        ),
        "{summary}"
    );
    // Damage of every kind: skipped and counted, never a panic. (A text trace of nothing but
    // damaged events is no trace at all; the switch makes it one.)
    let junk = "\
          <idle>-0     [000] d..2.   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=t next_pid=5 next_prio=120
          t-5     [000] d..2.   100.000001: binder_transaction: transaction=1 reply=1
          t-5     [000] d..2.   100.000002: binder_transaction: transaction= dest_proc=1 dest_thread=0 reply=0 flags=0x0
          t-5     [000] d..2.   100.000003: binder_transaction_received:
          t-5     [000] d..2.   100.000004: binder_transaction: transaction=2 dest_proc=1 dest_thread=5 reply=1 flags=0xffffffffff
";
    let (_, s) = import::import_in_memory(junk.as_bytes()).unwrap();
    assert_eq!(s.diag.skipped.get("binder:malformed"), Some(&4));
    assert_eq!(s.binder_waits, 0);
}

#[test]
fn report_shows_binder_waits_as_their_own_class() {
    for (fmt, conn) in both(&scenario()) {
        let r = report::analyze(&conn, report::Options::default()).unwrap();
        let b = &r["binder"];
        assert_eq!(
            (i(&b["sync_calls"]), i(&b["oneway_calls"]), i(&b["replies"])),
            (4, 1, 4),
            "{fmt}"
        );
        let all = &b["all"];
        assert_eq!(i(&all["count"]), 3, "{fmt}");
        assert_eq!(i(&all["total_ns"]), ns(8.0 + 4.0 + 17.5), "{fmt}");
        assert_eq!(i(&all["p50_ns"]), ns(8.0), "{fmt}");
        assert!(all["p999_ns"].is_null(), "{fmt}: n < 1000");
        assert_eq!(i(&all["max_ns"]), ns(17.5), "{fmt}");
        assert_eq!(i(&all["over_frame"]), 1, "{fmt}");
        assert_eq!(i(&all["queued_ns"]), ns(1.0 + 1.0 + 0.5), "{fmt}");
        // 202 served 16 from 12.5 to 29: running to 20, runnable (preempted) to 25, running;
        // 201 and 301 have no sched data while serving.
        let s = &all["server_while_serving"];
        assert_eq!(i(&s["running_ns"]), ns(7.5 + 4.0), "{fmt}");
        assert_eq!(i(&s["runnable_ns"]), ns(5.0), "{fmt}");
        assert_eq!(i(&s["unknown_ns"]), ns(6.0 + 2.0), "{fmt}");
        assert_eq!(i(&all["servers"][0]["server"]["tid"]), 202, "{fmt}");
        // The app's main thread and its RenderThread are the critical threads.
        let crit = &b["critical"];
        let tids: Vec<i64> = crit["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| i(&t["tid"]))
            .collect();
        assert_eq!(tids, [100, 101], "{fmt}");
        assert_eq!(i(&crit["count"]), 2, "{fmt}");
        assert_eq!(i(&crit["p50_ns"]), ns(17.5), "{fmt}");
        assert_eq!(i(&crit["queued_ns"]), ns(1.5), "{fmt}");
        assert_eq!(i(&b["dropped"]["call_unended"]), 1, "{fmt}");
        assert_eq!(i(&b["dropped"]["call_superseded"]), 0, "{fmt}");

        let text = report::render_text(&r);
        for line in [
            "== binder waits (synchronous calls, until the client received the reply; blocker = \
             the server thread): 4 calls, 3 waits ==\n",
            "class        count    total ms    p50 ms  p99.9 ms    max ms  >16 ms  queued ms\n",
            "all              3      29.500     8.000       n/a    17.500       1      2.500\n",
            "critical         2      25.500    17.500       n/a    17.500       1      1.500\n",
            "  p99.9 n/a: n is too small (fewer than 1000 waits)\n",
            "  critical threads: app (100), RenderThread (101)\n",
            "  one-way calls 1 (no waits); dropped (stats binder:*): 1 still waiting at the trace \
             end, 0 left without a reply, 1 replies to calls from before the trace, 0 \
             mismatched, 1 malformed events\n",
            "  - system_server Binder:200_2 (202): 1 waits, 17.500 ms, max 17.500 ms\n",
        ] {
            // The text trace names processes after their main thread's comm.
            let line = if fmt == "text" {
                line.replace("  - system_server", "  - (unknown process)")
            } else {
                line.to_owned()
            };
            assert!(text.contains(&line), "{fmt}: missing {line:?} in\n{text}");
        }
    }
}

#[test]
fn p999_needs_a_thousand_waits() {
    // n calls of ui (100) to 201, the k-th lasting k µs.
    let calls = |n: i32| -> String {
        let mut events = Vec::new();
        for k in 1..=n {
            let start = f64::from(k) * 10.0;
            let id = 2 * k;
            events.push(Ev::Txn(start, 0, 100, id, 200, 0, false, 0x10));
            events.push(Ev::Recv(start, 1, 201, id));
            let end = start + f64::from(k) / 1000.0;
            events.push(Ev::Txn(end, 1, 201, id + 1, 100, 100, true, 0));
            events.push(Ev::Recv(end, 0, 100, id + 1));
        }
        text(&events)
    };
    let report_of = |t: String| {
        let (conn, _) = import::import_in_memory(t.as_bytes()).unwrap();
        report::analyze(&conn, report::Options::default()).unwrap()
    };
    let r = report_of(calls(999));
    assert!(r["binder"]["all"]["p999_ns"].is_null());
    let r = report_of(calls(1000));
    let all = &r["binder"]["all"];
    assert_eq!(i(&all["count"]), 1000);
    // PERCENT_RANK: the first of 1000 sorted waits whose rank / 999 reaches 0.999.
    assert_eq!(i(&all["p999_ns"]), 1000 * 1000);
    assert_eq!(i(&all["p50_ns"]), 501 * 1000);
    let text = report::render_text(&r);
    let row = format!(
        "{:<10} {:>7} {:>11} {:>9} {:>9} {:>9} {:>7} {:>10}\n",
        "all", 1000, "500.500", "0.501", "1.000", "1.000", 0, "0.000"
    );
    assert!(text.contains(&row), "missing {row:?} in\n{text}");
    assert!(!text.contains("n is too small"), "{text}");
    // No RenderThread and no SuperPass events: no critical thread is known.
    assert!(r["binder"]["critical"].is_null());
    assert!(text.contains("(no critical thread known"), "{text}");
}

#[test]
fn traces_without_binder_events_report_as_before() {
    // A trace with no binder event: no binder rows, `binder` null, no binder text at all.
    let t = "\
          <idle>-0     [000] d..2.   100.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=42 next_prio=120
               a-42    [000] .....   100.000002: tracing_mark_write: B|40|lockwait:m
               a-42    [000] .....   100.000003: tracing_mark_write: E|40
";
    let (conn, s) = import::import_in_memory(t.as_bytes()).unwrap();
    assert!(!s.to_string().contains("binder"));
    assert_eq!(one(&conn, "SELECT COUNT(*) FROM binder_wait"), "0");
    let r = report::analyze(&conn, report::Options::default()).unwrap();
    assert!(r["binder"].is_null());
    assert!(!report::render_text(&r).contains("binder"));
    // A database an older import wrote, without the table, reads the same.
    let (conn, _) = import::import_in_memory(text(&scenario()).as_bytes()).unwrap();
    conn.execute_batch("DROP TABLE binder_wait").unwrap();
    let r = report::analyze(&conn, report::Options::default()).unwrap();
    assert!(r["binder"].is_null());
}

/// The real captures with binder events (text ftrace from devices; `traces/` in the corpus):
/// every wait's server is another thread, times are ordered, a nested call's parent was
/// served by its client, and the report counts every row.
#[test]
fn real_captures_binder_waits_are_well_formed() {
    const TEST: &str = "real_captures_binder_waits_are_well_formed";
    let Some(dir) = shared_corpus::folder("traces", TEST) else {
        return;
    };
    for file in [
        "blog_launcher_scroll.ftrace.txt.gz",
        "blog_xiaomi_launcher_tgid.ftrace.txt.gz",
    ] {
        let path = dir.join(file);
        if !path.exists() {
            eprintln!("skipped: {} missing", path.display());
            continue;
        }
        let (conn, s) = import::open_any(&path).unwrap();
        let s = s.unwrap();
        let n: i64 = one(&conn, "SELECT COUNT(*) FROM binder_wait")
            .parse()
            .unwrap();
        assert!(n > 0, "{file}: no binder waits");
        assert_eq!(n as usize, s.binder_waits, "{file}");
        let checks = [
            ("server is the client", "client_utid = server_utid"),
            ("negative duration", "dur < 0"),
            (
                "out of order",
                "received_ts < ts OR reply_ts < received_ts OR reply_ts < ts OR ts + dur < reply_ts",
            ),
            (
                "parent not served by the client",
                "parent_id IS NOT NULL AND (SELECT p.server_utid FROM binder_wait p WHERE p.id = \
                 binder_wait.parent_id) != client_utid",
            ),
            ("one-way call", "flags & 1 = 1"),
        ];
        for (what, cond) in checks {
            let bad = one(
                &conn,
                &format!("SELECT COUNT(*) FROM binder_wait WHERE {cond}"),
            );
            assert_eq!(bad, "0", "{file}: {what}");
        }
        let r = report::analyze(&conn, report::Options::default()).unwrap();
        let all = &r["binder"]["all"];
        assert_eq!(i(&all["count"]), n, "{file}");
        assert_eq!(all["p999_ns"].is_null(), n < 1000, "{file}");
        assert!(i(&r["binder"]["sync_calls"]) >= n, "{file}");
    }
}
