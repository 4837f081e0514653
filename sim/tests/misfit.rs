//! Misfit blockers: a SuperPass-boosted lock holder running on a little core moves to an idle
//! faster core, but not to the fast core the critical threads use.

use superpass_sim::{run, Policy, Scenario};

/// One little (256), one mid (512) and one big (1024) CPU. The owner wakes first, so it lands on
/// the little core, takes the mutex and holds it for 4 ms of work at capacity 1024 (16 ms on
/// the little core, 8 ms on the mid, 4 ms on the big). The UI thread, on the big core, waits
/// for it from 100 µs on. Returns the UI's wait in µs.
fn wait_us(policy: &str, owner_cpus: &str) -> f64 {
    let text = format!(
        r#"
name = "misfit-case"
warmup_ms = 0.0
[platform]
clusters = [
  {{ name = "little", count = 1, capacity = 256 }},
  {{ name = "mid", count = 1, capacity = 512 }},
  {{ name = "big", count = 1, capacity = 1024 }},
]
groups = [{{ name = "top-app", cpus = [0, 1, 2] }}, {{ name = "background", cpus = {owner_cpus} }}]
tick_ns = 4000000
base_slice_ns = 3000000
context_switch_ns = 0
migration_ns = 0
[[locks]]
name = "l"
kind = "mutex"
[[threads]]
name = "owner"
process = "p"
group = "background"
nice = 10
program = [{{ op = "lock", lock = "l" }}, {{ op = "compute", us = 4000 }}, {{ op = "unlock", lock = "l" }}, {{ op = "sleep", us = 2000000 }}]
[[threads]]
name = "ui"
process = "p"
nice = -10
role = "ui"
prefer_big = true
start_us = 100
program = [{{ op = "lock", lock = "l" }}, {{ op = "compute", us = 10 }}, {{ op = "unlock", lock = "l" }}, {{ op = "sleep", us = 2000000 }}]
"#
    );
    let mut sc = Scenario::from_toml(&text).unwrap();
    // The owner's group must keep its cpuset (the `little` placement would do the same here).
    sc.placement = superpass_sim::workload::Placement::Little;
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 0.1);
    assert_eq!(r.blocking.len(), 1, "{policy}: one wait");
    r.summary().max_blocking_us
}

#[test]
fn a_boosted_owner_on_a_little_core_moves_to_the_idle_mid_core() {
    let stock = wait_us("default", "[0, 1, 2]");
    let sp = wait_us("superpass", "[0, 1, 2]");
    // Stock: the owner runs all of its section on the little core.
    assert!(stock > 15_000.0, "default wait {stock} µs");
    // SuperPass: moved to the mid core at once (about 8 ms); not to the big core (about 4 ms),
    // which the UI thread left idle and comes back to.
    assert!((7_500.0..9_000.0).contains(&sp), "superpass wait {sp} µs");
}

#[test]
fn an_owner_confined_to_the_little_core_stays() {
    let sp = wait_us("superpass", "[0]");
    assert!(sp > 15_000.0, "superpass wait {sp} µs");
}
