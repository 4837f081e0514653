//! Synchronous binder calls as SuperPass waits, on hand-built one-CPU cases with known answers:
//! the UI thread's call into a pool whose only thread is busy, and a call whose server waits on
//! a lock held by a low-priority thread.

mod one_cpu;

use one_cpu::ONE_CPU;
use superpass_sim::{run, Policy, Scenario};

/// One CPU shared by the UI thread (nice -10), a one-thread binder pool `svc`, a nice-0 hog and
/// the threads `threads` declares; the UI calls at `ui_start` µs, and the pool thread's handler
/// is `handler` (ops between `binder_serve` and `binder_reply`). Returns the UI's binder round
/// trips in µs.
fn round_trips(policy: &str, ui_start: u32, handler: &str, threads: &str) -> Vec<f64> {
    let text = format!(
        r#"
name = "binder-case"
warmup_ms = 0.0
{ONE_CPU}[[locks]]
name = "l"
kind = "mutex"
[[threads]]
name = "binder"
process = "server"
nice = 0
pool = "svc"
program = [{{ op = "binder_serve" }}, {handler}, {{ op = "binder_reply" }}]
[[threads]]
name = "hog"
process = "other"
nice = 0
program = [{{ op = "compute", us = 100000 }}]
[[threads]]
name = "ui"
process = "app"
nice = -10
role = "ui"
start_us = {ui_start}
program = [{{ op = "binder_call", pool = "svc" }}, {{ op = "sleep", us = 2000000 }}]
{threads}"#
    );
    let sc = Scenario::from_toml(&text).unwrap();
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 1.0);
    assert!(!r.binder_ns.is_empty(), "{policy}: the UI made no call");
    r.binder_ns.iter().map(|&ns| ns as f64 / 1e3).collect()
}

/// The pool's only thread is serving a nice-19 app's call (5 ms of work) when the UI calls:
/// the UI's call is queued (no idle thread), and the busy thread is its blocker.
fn pool_busy(policy: &str) -> f64 {
    let handler = r#"{ op = "compute", us = 5000 }"#;
    let client = r#"
[[threads]]
name = "bg_client"
process = "bg"
nice = 19
program = [{ op = "binder_call", pool = "svc" }, { op = "sleep", us = 2000000 }]
"#;
    round_trips(policy, 1000, handler, client)[0]
}

#[test]
fn a_call_queued_on_an_exhausted_pool_fast_tracks_the_busy_thread() {
    let stock = pool_busy("default");
    let sp = pool_busy("superpass");
    // Stock: the rest of the background call (about 4.5 ms of work) shares the CPU with the
    // nice-0 hog, then the UI's own call runs at the UI's inherited nice -10.
    assert!(stock > 13_000.0, "stock round trip {stock} µs");
    // SuperPass: the busy pool thread is the queued call's blocker and runs at once, then
    // the call's server (the same thread) is its owner: about the 9.5 ms of work.
    assert!(sp < 11_000.0, "superpass {sp} µs against stock {stock} µs");
}

/// The idle pool thread takes the UI's call at once, and its handler needs a mutex that a
/// nice-19 thread took at the start and holds for 5 ms of work: by the call (20 ms in) it has
/// run one slice and is starved by the nice-0 hog.
fn server_blocked(policy: &str) -> f64 {
    let handler = r#"{ op = "lock", lock = "l" }, { op = "compute", us = 200 }, { op = "unlock", lock = "l" }"#;
    let owner = r#"
[[threads]]
name = "owner"
process = "bg"
nice = 19
program = [{ op = "lock", lock = "l" }, { op = "compute", us = 5000 }, { op = "unlock", lock = "l" }, { op = "sleep", us = 2000000 }]
"#;
    round_trips(policy, 20_000, handler, owner)[0]
}

#[test]
fn a_server_s_lock_wait_chains_to_the_calling_critical_thread() {
    let stock = server_blocked("default");
    let sp = server_blocked("superpass");
    // Stock: the nice-19 owner gets a sliver of the CPU beside the nice-0 hog.
    assert!(stock > 50_000.0, "stock round trip {stock} µs");
    // SuperPass: the server owns the UI's call, so its mutex wait is a chain wait and the
    // owner runs at once: its 5 ms of work, then the handler.
    assert!(sp < 10_000.0, "superpass round trip {sp} µs");
}
