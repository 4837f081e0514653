//! A critical wait still open when the run ends is counted, at least as long as it lasted.

use superpass_sim::{run, Policy, Scenario};

/// The UI thread waits on a mutex whose holder keeps it for 10 s, longer than the run.
const STARVED: &str = r#"
name = "starved"
description = "test"
source = "test"
vsync_hz = 60.0

[[locks]]
name = "m"
kind = "mutex"

[[threads]]
name = "holder"
process = "app"
nice = 10
program = [
  { op = "lock", lock = "m" },
  { op = "sleep", us = 10000000 },
  { op = "unlock", lock = "m" },
]

[[threads]]
name = "ui"
process = "app"
nice = -10
role = "ui"
start_us = [300000, 300000]
program = [
  { op = "wait_vsync" },
  { op = "lock", lock = "m" },
  { op = "compute", us = 100 },
  { op = "unlock", lock = "m" },
]
"#;

#[test]
fn a_wait_open_at_the_end_is_counted_to_the_end() {
    let sc = Scenario::from_toml(STARVED).unwrap();
    let r = run(&sc, Policy::parse("default").unwrap(), 1, 1.0);
    assert_eq!(r.blocking.len(), 1, "{:?}", r.blocking);
    let b = &r.blocking[0];
    assert!(b.open);
    assert_eq!(b.end_ns, 1_000_000_000, "ends with the run");
    assert!(b.dur() > 600_000_000, "{} ns", b.dur());
}
