//! The generic suite, stamped onto every policy: work conservation, weight-proportional CPU
//! shares, no lost wakeups and lock safety (checked after every event), plus every scenario
//! (both placements, and a kernel-mutex and a PI-futex app lock) running clean.

mod one_cpu;

use one_cpu::ONE_CPU;
use superpass_sim::locks::visibility::FutexOwner;
use superpass_sim::policy::by_name;
use superpass_sim::sim::{RunOpts, Sim};
use superpass_sim::workload::{LockType, Placement, SCENARIOS};
use superpass_sim::Scenario;

const CHECKED: RunOpts = RunOpts {
    trace: false,
    check_invariants: true,
    explain: false,
};

/// Every built-in scenario under both placements, plus scroll-120 with its shared app lock
/// made a kernel mutex and a PI futex (the lock families proxy execution and PI act on).
fn scenarios() -> Vec<(String, Scenario)> {
    let mut v = Vec::new();
    for name in SCENARIOS {
        for placement in [Placement::Aosp, Placement::Little] {
            let mut sc = Scenario::builtin(name).unwrap();
            sc.placement = placement;
            v.push((format!("{name}/{}", placement.name()), sc));
        }
    }
    for (kind, owner) in [
        (LockType::Mutex, None),
        (LockType::Futex, Some(FutexOwner::Pi)),
    ] {
        let mut sc = Scenario::builtin("scroll-120").unwrap();
        let l = sc.locks.iter_mut().find(|l| l.name == "app_state").unwrap();
        l.kind = kind;
        l.owner = owner;
        sc.placement = Placement::Little;
        v.push((format!("scroll-120 with app_state {kind:?} {owner:?}"), sc));
    }
    v
}

/// Runs every scenario of [`scenarios`] with invariant checks after every event.
fn invariants_hold(policy: &str) {
    for (name, sc) in scenarios() {
        let out = Sim::new(&sc, by_name(policy).unwrap(), 11, 0.4, &CHECKED).run();
        assert!(
            out.violations.is_empty(),
            "{policy} on {name}: {:#?}",
            &out.violations[..out.violations.len().min(5)]
        );
        // The two-CPU frames scenarios make about 900 events in this time, the phone ones 2000 or more.
        assert!(
            out.res.events > 500,
            "{policy} on {name}: only {} events",
            out.res.events
        );
    }
}

/// The kernel-mutex app lock runs for several seconds without a panic (donor migration once
/// left a donor current on one CPU and queued on another).
fn mutex_app_lock_runs_long(policy: &str) {
    let (_, sc) = scenarios()
        .into_iter()
        .find(|(n, _)| n.contains("Mutex"))
        .unwrap();
    for seed in 1..=3 {
        let out = Sim::new(
            &sc,
            by_name(policy).unwrap(),
            seed,
            5.0,
            &RunOpts::default(),
        )
        .run();
        assert!(
            out.res.frames > 100,
            "{policy} seed {seed}: {} frames",
            out.res.frames
        );
    }
}

/// Two CPU-bound fair threads pinned to one CPU get CPU in proportion to their weights.
fn shares_follow_weights(policy: &str) {
    let threads = r#"
[[threads]]
name = "heavy"
process = "p"
nice = 0
program = [{ op = "compute", us = 100000 }]
[[threads]]
name = "light"
process = "p"
nice = 5
program = [{ op = "compute", us = 100000 }]
"#;
    let text = format!("name = \"weights\"\nwarmup_ms = 0.0\n{ONE_CPU}{threads}");
    let sc = Scenario::from_toml(&text).unwrap();
    let out = Sim::new(&sc, by_name(policy).unwrap(), 1, 4.0, &CHECKED).run();
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    let t = &out.world.tasks;
    let ratio = t[0].sum_exec as f64 / t[1].sum_exec as f64;
    let want = 1024.0 / 335.0;
    assert!(
        (ratio / want - 1.0).abs() < 0.05,
        "{policy}: ratio {ratio:.3}, want {want:.3}"
    );
}

/// A thread that sleeps and wakes forever is woken every time (no lost wakeups).
fn sleepers_keep_waking(policy: &str) {
    let text = r#"
name = "sleepers"
warmup_ms = 0.0
[[threads]]
name = "s"
process = "p"
count = 12
program = [{ op = "sleep", us = 100 }, { op = "compute", us = 50 }]
"#;
    let sc = Scenario::from_toml(text).unwrap();
    let out = Sim::new(&sc, by_name(policy).unwrap(), 1, 0.2, &CHECKED).run();
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    for t in &out.world.tasks {
        // 200 ms of 100 µs sleeps + 50 µs (at most 200 µs on a little core) work: >= 600 rounds.
        assert!(
            t.sum_exec > 600 * 50_000 / 4,
            "{} ran only {} ns",
            t.name,
            t.sum_exec
        );
    }
}

macro_rules! policy_suite {
    ($($m:ident => $name:literal),* $(,)?) => {$(
        mod $m {
            #[test]
            fn invariants_hold() { super::invariants_hold($name) }
            #[test]
            fn shares_follow_weights() { super::shares_follow_weights($name) }
            #[test]
            fn sleepers_keep_waking() { super::sleepers_keep_waking($name) }
            #[test]
            fn mutex_app_lock_runs_long() { super::mutex_app_lock_runs_long($name) }
        }
    )*};
}

policy_suite! {
    default => "default",
    pi => "pi",
    pi_ideal => "pi-ideal",
    rt_ui => "rt-ui",
    proxy => "proxy",
    proxy_migrate => "proxy-migrate",
    superpass => "superpass",
    superpass_stock => "superpass-stock",
    superpass_rt_ui => "superpass+rt-ui",
}

#[test]
fn the_suite_covers_every_policy() {
    assert_eq!(
        superpass_sim::policy::NAMES.len(),
        9,
        "add the new policy to policy_suite!"
    );
}

/// A task whose work ran out at the instant a hook charge re-armed its CPU kept running with
/// no completion pending and never took another step (found as a scroll-120 run whose
/// RenderThread ran on one CPU from 5.3 s to the end, 599 frames against the stock 3505).
#[test]
fn a_charge_at_the_instant_work_runs_out_does_not_stall_the_task() {
    let sc = Scenario::builtin("scroll-120").unwrap();
    let out = Sim::new(&sc, by_name("superpass").unwrap(), 17, 6.0, &CHECKED).run();
    assert!(
        out.violations.is_empty(),
        "{:?}",
        &out.violations[..out.violations.len().min(3)]
    );
    let stock = Sim::new(&sc, by_name("default").unwrap(), 17, 6.0, &CHECKED).run();
    assert!(
        out.res.frames * 10 > stock.res.frames * 9,
        "{} frames against {}",
        out.res.frames,
        stock.res.frames
    );
}
