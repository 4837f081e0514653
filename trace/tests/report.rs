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
}

#[test]
fn baseline_comparison_reports_removed_share() {
    let on = report_of(&common::pftrace());
    let c = report::compare(&on, &on);
    assert_eq!(c["waiter_runnable_share"]["removed"].as_f64(), Some(0.0));
    let share = c["waiter_runnable_share"]["current"].as_f64().unwrap();
    assert!((share - 1_000.0 / 9_500.0).abs() < 1e-9);
}
