//! The same scenario, policy and seed give byte-identical results; seeds differ.

use superpass_sim::compare::compare;
use superpass_sim::sim::RunOpts;
use superpass_sim::{run, run_with, Policy, Scenario};

#[test]
fn same_seed_same_bytes() {
    let sc = Scenario::builtin("scroll-120").unwrap();
    for p in Policy::all() {
        let a = run(&sc, p, 7, 0.6);
        let b = run(&sc, p, 7, 0.6);
        let ja = serde_json::to_string(&a).unwrap();
        let jb = serde_json::to_string(&b).unwrap();
        assert_eq!(ja, jb, "policy {}", p.0);
        assert!(a.frames > 0, "policy {} produced no frames", p.0);
    }
}

#[test]
fn different_seeds_differ() {
    let sc = Scenario::builtin("scroll-60").unwrap();
    let a = run(&sc, Policy("default"), 1, 0.6);
    let b = run(&sc, Policy("default"), 2, 0.6);
    assert_ne!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn trace_bytes_are_identical() {
    let sc = Scenario::builtin("rwsem-storm").unwrap();
    let o = RunOpts {
        trace: true,
        check_invariants: false,
        explain: false,
    };
    let (_, a) = run_with(&sc, Policy("superpass"), 3, 0.3, &o);
    let (_, b) = run_with(&sc, Policy("superpass"), 3, 0.3, &o);
    assert_eq!(a.unwrap(), b.unwrap());
}

#[test]
fn compare_output_does_not_depend_on_jobs() {
    let sc = Scenario::builtin("binder-heavy").unwrap();
    let pols: Vec<Policy> = Policy::all().collect();
    let a = compare(&sc, &pols, 0.4, 3, 1);
    let b = compare(&sc, &pols, 0.4, 3, 4);
    assert_eq!(a.table(true), b.table(true));
    assert_eq!(a.json().to_string(), b.json().to_string());
}
