//! SuperPass together with RT-UI (`superpass+rt-ui`) on built-in scenarios, against each alone
//! (the hand-built cases are in inheritance.rs).

use superpass_sim::compare::{compare, Comparison};
use superpass_sim::metrics::Waiters;
use superpass_sim::{pooled, Policy, Scenario};

/// `sc` under `policies`, 4 seeds of 10 s each.
fn runs(name: &str, policies: &[&str]) -> Comparison {
    let sc = Scenario::builtin(name).unwrap();
    let pols: Vec<Policy> = policies.iter().map(|p| Policy::parse(p).unwrap()).collect();
    compare(&sc, &pols, 10.0, 4, 2)
}

/// Each policy's p99.9 of the critical waits pooled over the seeds, in µs.
fn p999(c: &Comparison) -> Vec<f64> {
    c.durations(Waiters::Critical)
        .iter()
        .map(|seeds| pooled::quantile(seeds, 0.999) / 1e3)
        .collect()
}

/// Each policy's janky frames over all seeds.
fn janky(c: &Comparison) -> Vec<u64> {
    c.runs
        .iter()
        .map(|r| r.iter().map(|r| r.janky).sum())
        .collect()
}

#[test]
fn fifo_frame_threads_behind_nice_10_holders_wait_far_less_with_superpass() {
    // frames-60: the FIFO frame threads' locks are held by nice-10 workers that four nice-0
    // hogs keep off the CPU, and RT-UI alone gives those workers nothing.
    let c = runs("frames-60", &["rt-ui", "superpass+rt-ui"]);
    let (p, j) = (p999(&c), janky(&c));
    assert!(
        p[1] < p[0] / 10.0,
        "p99.9 µs: rt-ui {} superpass+rt-ui {}",
        p[0],
        p[1]
    );
    assert!(
        j[1] * 10 < j[0],
        "janky: rt-ui {} superpass+rt-ui {}",
        j[0],
        j[1]
    );
}

#[test]
fn with_every_core_busy_fifo_frame_threads_do_no_worse_than_superpass_alone() {
    // paper-scroll-120: background load keeps every core busy at 120 Hz, so the frame threads'
    // own CPU time decides their frames. SuperPass alone runs blockers ahead of the nice-10
    // frame threads; FIFO frame threads keep their CPU, and their waits are no longer.
    let c = runs("paper-scroll-120", &["superpass", "superpass+rt-ui"]);
    let (p, j) = (p999(&c), janky(&c));
    assert!(
        p[1] <= p[0],
        "p99.9 µs: superpass {} superpass+rt-ui {}",
        p[0],
        p[1]
    );
    assert!(
        j[1] <= j[0],
        "janky: superpass {} superpass+rt-ui {}",
        j[0],
        j[1]
    );
}
