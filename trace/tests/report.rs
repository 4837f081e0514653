//! The report on the inversion scenario, from Perfetto and from text ftrace, against
//! answers worked out by hand in `common/mod.rs`.

mod common;

use common::US;
use serde_json::Value;
use superpass_trace::{import, report};

fn report_of(buf: &[u8]) -> Value {
    let (conn, _) = import::import_in_memory(buf).unwrap();
    report::analyze(&conn, report::Options::default()).unwrap()
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn check(r: &Value) {
    let census = r["census"].as_array().unwrap();
    assert_eq!(census.len(), 2);
    let hold = &census[0];
    assert_eq!(hold["name"], "lockhold:m");
    assert_eq!(i(&hold["count"]), 3);
    assert_eq!(i(&hold["total_ns"]), (10_000 + 600 + 500) * US);
    assert_eq!(i(&hold["avg_ns"]), 3_700 * US);
    assert_eq!(i(&hold["max_ns"]), 10_000 * US);
    let wait = &census[1];
    assert_eq!(wait["name"], "lockwait:m");
    assert_eq!(i(&wait["count"]), 1);
    assert_eq!(i(&wait["max_ns"]), 9_500 * US);

    let tail = &r["tails"][0];
    assert_eq!(i(&tail["p50_ns"]), 9_500 * US);
    assert_eq!(i(&tail["p99_ns"]), 9_500 * US);

    assert_eq!(i(&r["long_waits"]["count"]), 1);
    let w = &r["long_waits"]["worst"][0];
    assert_eq!(w["lock"], "m");
    assert_eq!(i(&w["waiter"]["tid"]), 101);
    assert_eq!(i(&w["dur"]), 9_500 * US);
    let it = &w["itemized"];
    assert_eq!(i(&it["asleep_ns"]), 7_000 * US);
    assert_eq!(i(&it["runnable_ns"]), 1_000 * US);
    assert_eq!(i(&it["running_ns"]), 1_500 * US);
    assert_eq!(i(&it["unknown_ns"]), 0);
    assert_eq!(i(&w["woken_by"][0]["waker"]["tid"]), 102);
    assert_eq!(w["woken_by"].as_array().unwrap().len(), 1);

    let holds = w["overlapping_holds"].as_array().unwrap();
    assert_eq!(holds.len(), 2);
    assert_eq!(i(&holds[0]["holder"]["tid"]), 102);
    assert_eq!(i(&holds[0]["overlap_ns"]), 8_000 * US);
    assert_eq!(i(&holds[0]["holder_state"]["runnable_ns"]), 7_000 * US);
    assert_eq!(i(&holds[0]["holder_state"]["running_ns"]), 1_000 * US);
    assert_eq!(i(&holds[1]["holder"]["tid"]), 103);
    assert_eq!(i(&holds[1]["overlap_ns"]), 600 * US);
    assert_eq!(i(&holds[1]["holder_state"]["running_ns"]), 600 * US);

    let spw = &w["superpass"];
    assert_eq!(spw["registered"], true);
    assert_eq!(i(&spw["blocks"][0]["blocker"]["tid"]), 102);
    assert_eq!(spw["grants"].as_array().unwrap().len(), 1);
    assert_eq!(spw["grants"][0]["budget_regrant"], false);
    assert_eq!(spw["revokes"][0]["reason"], "released");
    assert_eq!(i(&spw["picks"]), 1);
    assert_eq!(i(&spw["budget_regrants"]), 0);
    // hog's runqueue join is not of this wait's blockers.
    let queues = spw["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 1);
    assert_eq!(i(&queues[0]["thread"]["tid"]), 102);
    assert_eq!(i(&queues[0]["cpu"]), 0);
    assert_eq!(queues[0]["run_now"], true);
    // The throttle that ended before the wait is left out; the one running into it is not.
    let throttles = spw["throttles"].as_array().unwrap();
    assert_eq!(throttles.len(), 2);
    assert_eq!(i(&throttles[0]["cpu"]), 1);
    assert_eq!(i(&throttles[0]["dur"]), 1_000 * US);
    assert_eq!(i(&throttles[1]["dur"]), 1_500 * US);
    let probes = &spw["probe_groups"];
    assert_eq!(probes["at_start"], "owners");
    assert_eq!(probes["changes"].as_array().unwrap().len(), 1);
    assert_eq!(probes["changes"][0]["groups"], "owners,readers");

    assert_eq!(i(&w["holders"]["runnable_ns"]), 7_000 * US);
    assert_eq!(i(&w["holders"]["running_ns"]), 1_600 * US);

    let barging = w["barging"].as_array().unwrap();
    assert_eq!(barging.len(), 1);
    assert_eq!(i(&barging[0]["thread"]["tid"]), 103);
    assert_eq!(i(&barging[0]["after_wait_start_ns"]), 8_200 * US);

    let sp = &r["superpass"];
    assert_eq!(
        [
            sp["blocks"].clone(),
            sp["grants"].clone(),
            sp["revokes"].clone(),
            sp["picks"].clone()
        ],
        [1, 1, 1, 1].map(Value::from)
    );
    assert_eq!(
        [
            sp["queues"].clone(),
            sp["throttles"].clone(),
            sp["probe_changes"].clone()
        ],
        [2, 3, 2].map(Value::from)
    );
    let bi = &sp["blocking_intervals"];
    assert_eq!(i(&bi["count"]), 1);
    assert_eq!(i(&bi["total_ns"]), 8_000 * US);
    assert_eq!(i(&bi["waiter"]["asleep_ns"]), 7_000 * US);
    assert_eq!(i(&bi["waiter"]["runnable_ns"]), 1_000 * US);
    assert_eq!(i(&sp["blocker_runnable"]["before_grant_ns"]), 5_000 * US);
    assert_eq!(i(&sp["blocker_runnable"]["after_grant_ns"]), 1_000 * US);
    assert_eq!(i(&sp["grant_latency"]["max_ns"]), 1_000 * US);
    let b = &sp["blockers"][0];
    assert_eq!(i(&b["blocker"]["tid"]), 102);
    assert_eq!(i(&b["state"]["runnable_ns"]), 6_000 * US);
    assert_eq!(i(&b["state"]["running_ns"]), 2_000 * US);
}

#[test]
fn report_on_perfetto_trace() {
    let r = report_of(&common::pftrace());
    check(&r);
    assert_eq!(i(&r["trace"]["end_ts"]), 20_000 * US);
    let w = &r["long_waits"]["worst"][0]["superpass"];
    assert_eq!(i(&w["throttles"][0]["ts"]), 2_500 * US);
    assert_eq!(i(&w["probe_groups"]["changes"][0]["ts"]), 10_500 * US);
}

#[test]
fn report_on_text_ftrace() {
    let r = report_of(common::ftrace_text().as_bytes());
    check(&r);
    assert_eq!(i(&r["trace"]["end_ts"]), 20_000 * US + common::TEXT_OFFSET);
}

#[test]
fn text_report_names_the_numbers() {
    let r = report_of(&common::pftrace());
    let text = report::render_text(&r);
    assert!(text.contains("lockwait:m"), "{text}");
    assert!(
        text.contains("asleep 7.000 / runnable 1.000 / running 1.500"),
        "{text}"
    );
    assert!(text.contains("woken by bg (102)"), "{text}");
    assert!(text.contains("barged 1x: barger (103)"), "{text}");
    assert!(
        text.contains("holders in all: asleep 0.000 / runnable 7.000 / running 1.600"),
        "{text}"
    );
    assert!(
        text.contains(
            "== superpass: 1 blocks, 1 grants, 1 revokes, 1 picks, 2 queued, 3 throttles, 2 \
             probe changes =="
        ),
        "{text}"
    );
    assert!(
        text.contains("      queued 1: bg (102) on cpu 0 at +9.500 ms (run_now)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "      throttles 2: cpu 1 for 1.000 ms at +2.500 ms, cpu 1 for 1.500 ms at +9.800 ms\n"
        ),
        "{text}"
    );
}

#[test]
fn baseline_comparison_reports_removed_share() {
    let on = report_of(&common::pftrace());
    let c = report::compare(&on, &on);
    assert_eq!(c["waiter_runnable_share"]["removed"].as_f64(), Some(0.0));
    let share = c["waiter_runnable_share"]["current"].as_f64().unwrap();
    assert!((share - 1_000.0 / 9_500.0).abs() < 1e-9);
}

/// A text ftrace trace of one 20 ms wait of tid 101 with `events` inside it: (ms, tid,
/// superpass event text), then a short wait; reported with waits of 16 ms and more long.
fn wait_report(events: &[(u32, u32, &str)]) -> Value {
    let mut lines = vec![(0, 101, "tracing_mark_write: B|100|lockwait:m")];
    lines.extend_from_slice(events);
    lines.extend([
        (20, 101, "tracing_mark_write: E|100"),
        (30, 101, "tracing_mark_write: B|100|lockwait:m"),
        (40, 101, "tracing_mark_write: E|100"),
    ]);
    let mut t = String::from("# tracer: nop\n");
    for (ms, tid, body) in lines {
        let ts = format!("{}.{:06}", 100 + ms / 1000, (ms % 1000) * 1000);
        t.push_str(&format!(
            "{:>16}-{tid:<7} [000] d..2. {ts:>16}: {body}\n",
            format!("t{tid}")
        ));
    }
    let (conn, _) = import::import_in_memory(t.as_bytes()).unwrap();
    let opts = report::Options {
        long_ns: 16_000_000,
        top: 10,
    };
    report::analyze(&conn, opts).unwrap()
}

const GRANT_102: &str = "superpass_grant: blocker=102 waiter=101 root=101 lock=0x10 depth=1";

#[test]
fn long_wait_lists_superpass_events_and_budget_regrants() {
    let r = wait_report(&[
        (
            1,
            101,
            "superpass_block: waiter=101 blocker=102 lock=0x10 kind=mutex",
        ),
        (2, 101, GRANT_102),
        (3, 102, "superpass_pick: cpu=0 tid=102"),
        (8, 102, "superpass_revoke: blocker=102 reason=budget"),
        // Another thread's boost is not this wait's.
        (
            9,
            103,
            "superpass_grant: blocker=104 waiter=103 root=103 lock=0x20 depth=1",
        ),
        (15, 101, GRANT_102),
        (19, 102, "superpass_revoke: blocker=102 reason=released"),
    ]);
    assert_eq!(i(&r["long_waits"]["count"]), 1);
    let s = &r["long_waits"]["worst"][0]["superpass"];
    assert_eq!(s["registered"], true);
    let grants = s["grants"].as_array().unwrap();
    assert_eq!(grants.len(), 2);
    assert_eq!(grants[0]["budget_regrant"], false);
    assert_eq!(grants[1]["budget_regrant"], true);
    assert_eq!(i(&s["budget_regrants"]), 1);
    assert_eq!(s["revokes"][0]["reason"], "budget");
    assert_eq!(s["revokes"].as_array().unwrap().len(), 2);
    assert_eq!(i(&s["picks"]), 1);
    let text = report::render_long_waits(&r);
    assert!(
        text.contains("superpass: registered; blocked on t102 (102)"),
        "{text}"
    );
    assert!(text.contains("(budget regrant)"), "{text}");
    assert!(text.contains("budget regrants 1, picks 1"), "{text}");
    assert!(!text.contains("== census"), "{text}");
}

#[test]
fn long_wait_itemizes_queues_throttles_and_probe_groups() {
    let r = wait_report(&[
        (0, 0, "superpass_probes: groups=owners"),
        (
            1,
            101,
            "superpass_block: waiter=101 blocker=102 lock=0x10 kind=mutex",
        ),
        (2, 101, GRANT_102),
        (3, 102, "superpass_queue: cpu=1 tid=102 run_now=1"),
        // Not a boosted task of this wait.
        (4, 103, "superpass_queue: cpu=0 tid=103 run_now=0"),
        (5, 102, "superpass_throttle: cpu=1 for_us=4000"),
        (6, 101, "superpass_probes: groups=owners,readers"),
        (12, 101, "superpass_queue: cpu=0 tid=101 run_now=0"),
        // After the wait: neither its throttle nor its probe change.
        (25, 101, "superpass_throttle: cpu=0 for_us=1000"),
        (26, 101, "superpass_probes: groups=none"),
    ]);
    let text = report::render_long_waits(&r);
    for line in [
        "      queued 2: t102 (102) on cpu 1 at +3.000 ms (run_now), t101 (101) on cpu 0 at +12.000 ms\n",
        "      throttles 1: cpu 1 for 4.000 ms at +5.000 ms\n",
        "      probe groups: owners at the start, owners,readers from +6.000 ms\n",
        "      budget regrants 0, picks 0\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    assert!(!text.contains("not traced"), "{text}");
}

#[test]
fn long_wait_says_which_superpass_events_the_trace_lacks() {
    // Only the kinds of the first module: queue, throttle and probes were not traced.
    let r = wait_report(&[(
        1,
        101,
        "superpass_block: waiter=101 blocker=102 lock=0x10 kind=mutex",
    )]);
    let s = &r["long_waits"]["worst"][0]["superpass"];
    assert!(s["queues"].is_null() && s["throttles"].is_null() && s["probe_groups"].is_null());
    let text = report::render_long_waits(&r);
    assert!(
        text.contains("queued: no superpass_queue in the trace"),
        "{text}"
    );
    assert!(
        text.contains("throttles: no superpass_throttle in the trace"),
        "{text}"
    );
    assert!(
        text.contains("probe groups: no superpass_probes in the trace"),
        "{text}"
    );
    // A probes change after the wait's start does not say what was attached at it.
    let r = wait_report(&[
        (5, 101, "superpass_probes: groups=readers"),
        (8, 101, "superpass_throttle: cpu=0 for_us=100"),
    ]);
    let text = report::render_long_waits(&r);
    assert!(
        text.contains(
            "probe groups: unknown at the start (no superpass_probes before it), readers from \
             +5.000 ms"
        ),
        "{text}"
    );
    assert!(
        text.contains("queued: no superpass_queue in the trace"),
        "{text}"
    );
    assert!(
        text.contains("throttles 1: cpu 0 for 0.100 ms at +8.000 ms"),
        "{text}"
    );
}

#[test]
fn long_wait_without_a_block_says_so() {
    let r = wait_report(&[(
        5,
        103,
        "superpass_block: waiter=103 blocker=104 lock=0x20 kind=mutex",
    )]);
    assert_eq!(
        r["long_waits"]["worst"][0]["superpass"]["registered"],
        false
    );
    let text = report::render_long_waits(&r);
    assert!(
        text.contains("no superpass_block names the waiter"),
        "{text}"
    );
}
