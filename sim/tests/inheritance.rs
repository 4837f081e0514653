//! Priority inheritance and proxy execution on hand-built cases with known answers.

use superpass_sim::{run, Policy, Scenario};

/// A UI thread (nice -10) waits for a lock held by a nice-19 owner that shares its only CPU
/// with a nice-0 hog; the hold is 10 ms of work. Returns the UI's longest blocking in µs.
fn one_cpu_case(kind: &str, read: bool, policy: &str) -> f64 {
    let lock_op = if read {
        r#"{ op = "lock", lock = "l", read = true }"#
    } else {
        r#"{ op = "lock", lock = "l" }"#
    };
    let text = format!(
        r#"
name = "pi-case"
warmup_ms = 0.0
[platform]
clusters = [{{ name = "c", count = 1, capacity = 1024 }}]
groups = [{{ name = "top-app", cpus = [0] }}]
tick_ns = 4000000
base_slice_ns = 3000000
context_switch_ns = 0
migration_ns = 0
[[locks]]
name = "l"
kind = "{kind}"
[[threads]]
name = "owner"
process = "p"
nice = 19
program = [{lock_op}, {{ op = "compute", us = 10000 }}, {{ op = "unlock", lock = "l" }}, {{ op = "sleep", us = 2000000 }}]
[[threads]]
name = "hog"
process = "p"
nice = 0
program = [{{ op = "compute", us = 100000 }}]
[[threads]]
name = "ui"
process = "p"
nice = -10
role = "ui"
start_us = 100
program = [{{ op = "lock", lock = "l" }}, {{ op = "compute", us = 10 }}, {{ op = "unlock", lock = "l" }}, {{ op = "sleep", us = 2000000 }}]
"#
    );
    let sc = Scenario::from_toml(&text).unwrap();
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 1.0);
    assert!(
        !r.blocking.is_empty(),
        "{policy}/{kind}: the UI never blocked"
    );
    r.summary().max_blocking_us
}

#[test]
fn pi_boosts_mutex_and_futex_owners() {
    for kind in ["mutex", "futex"] {
        let stock = one_cpu_case(kind, false, "default");
        let pi = one_cpu_case(kind, false, "pi");
        // Stock (EEVDF): the nice-19 owner gets a 3 ms slice only every ~200 ms.
        assert!(stock > 100_000.0, "{kind}: stock wait {stock} µs");
        // Inherited nice -10 (9548 vs 1024): about its 10 ms of work.
        assert!(pi < 15_000.0, "{kind}: pi wait {pi} µs");
    }
}

#[test]
fn pi_gives_rwsem_readers_nothing() {
    let stock = one_cpu_case("rwsem", true, "default");
    let pi = one_cpu_case("rwsem", true, "pi");
    assert!(stock > 100_000.0, "stock {stock}");
    assert!(
        (pi - stock).abs() / stock < 0.05,
        "pi {pi} vs stock {stock}"
    );
}

#[test]
fn proxy_runs_the_mutex_owner_on_the_waiters_context() {
    let stock = one_cpu_case("mutex", false, "default");
    let proxy = one_cpu_case("mutex", false, "proxy");
    assert!(stock > 100_000.0);
    assert!(proxy < 15_000.0, "proxy wait {proxy} µs");
    // Futexes are not covered by proxy execution.
    let fx = one_cpu_case("futex", false, "proxy");
    assert!(fx > 100_000.0, "proxy must not help a futex: {fx}");
}

#[test]
fn superpass_fast_tracks_the_blocker() {
    for (kind, read) in [("mutex", false), ("futex", false)] {
        let stock = one_cpu_case(kind, read, "default");
        let sp = one_cpu_case(kind, read, "superpass");
        assert!(sp < stock / 5.0, "{kind}: superpass {sp} vs stock {stock}");
    }
}

/// The owner is confined to CPU 1 (busy with a hog); the UI runs on CPU 0. Single-runqueue
/// proxy execution cannot help (the donor just blocks); donor migration can.
fn two_cpu_case(policy: &str) -> f64 {
    let text = r#"
name = "proxy-migrate-case"
warmup_ms = 0.0
[platform]
clusters = [{ name = "c", count = 2, capacity = 1024 }]
groups = [{ name = "top-app", cpus = [0, 1] }, { name = "background", cpus = [1], background = true }]
tick_ns = 4000000
base_slice_ns = 3000000
context_switch_ns = 0
migration_ns = 0
[[locks]]
name = "m"
kind = "mutex"
[[threads]]
name = "owner"
process = "p"
group = "background"
nice = 19
program = [{ op = "lock", lock = "m" }, { op = "compute", us = 10000 }, { op = "unlock", lock = "m" }, { op = "sleep", us = 2000000 }]
[[threads]]
name = "hog"
process = "p"
group = "background"
nice = 0
program = [{ op = "compute", us = 100000 }]
[[threads]]
name = "ui"
process = "p"
nice = -10
role = "ui"
start_us = 100
program = [{ op = "lock", lock = "m" }, { op = "compute", us = 10 }, { op = "unlock", lock = "m" }, { op = "sleep", us = 2000000 }]
"#;
    let sc = Scenario::from_toml(text).unwrap();
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 1.0);
    r.summary().max_blocking_us
}

#[test]
fn proxy_needs_donor_migration_across_cpus() {
    let stock = two_cpu_case("default");
    let proxy = two_cpu_case("proxy");
    let migrate = two_cpu_case("proxy-migrate");
    assert!(stock > 100_000.0, "stock {stock}");
    assert!(
        (proxy - stock).abs() / stock < 0.05,
        "single-rq proxy {proxy} vs stock {stock}"
    );
    assert!(migrate < 15_000.0, "donor migration {migrate}");
}
