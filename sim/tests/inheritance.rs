//! Priority inheritance, proxy execution and what SuperPass can see, on hand-built cases with
//! known answers.

mod one_cpu;

use one_cpu::ONE_CPU;
use superpass_sim::{run, Policy, RunResult, Scenario};

/// The scenario text of a lock kind: `mutex`, `rwsem`, or `futex-pi` / `futex-hinted` /
/// `futex-none` for a futex and what the kernel can see of it.
fn lock_decl(kind: &str) -> String {
    match kind.split_once('-') {
        Some((k, owner)) => format!("kind = \"{k}\"\nowner = \"{owner}\""),
        None => format!("kind = \"{kind}\""),
    }
}

/// A UI thread (nice -10) waits for a lock held by a nice-19 owner that shares its only CPU
/// with a nice-0 hog; the hold is 10 ms of work. Returns the UI's longest blocking in µs.
fn one_cpu_case(kind: &str, read: bool, policy: &str) -> f64 {
    one_cpu_run(kind, read, policy, 10_000, "")
        .summary()
        .max_blocking_us
}

/// The run behind [`one_cpu_case`], with a hold of `hold_us` and the threads `extra` declares.
fn one_cpu_run(kind: &str, read: bool, policy: &str, hold_us: u32, extra: &str) -> RunResult {
    let decl = lock_decl(kind);
    let lock_op = if read {
        r#"{ op = "lock", lock = "l", read = true }"#
    } else {
        r#"{ op = "lock", lock = "l" }"#
    };
    let text = format!(
        r#"
name = "pi-case"
warmup_ms = 0.0
{ONE_CPU}[[locks]]
name = "l"
{decl}
[[threads]]
name = "owner"
process = "p"
nice = 19
program = [{lock_op}, {{ op = "compute", us = {hold_us} }}, {{ op = "unlock", lock = "l" }}, {{ op = "sleep", us = 2000000 }}]
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
{extra}"#
    );
    let sc = Scenario::from_toml(&text).unwrap();
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 1.0);
    assert!(
        !r.blocking.is_empty(),
        "{policy}/{kind}: the UI never blocked"
    );
    r
}

#[test]
fn pi_ideal_boosts_mutex_and_futex_owners() {
    for kind in ["mutex", "futex-hinted", "futex-pi"] {
        let stock = one_cpu_case(kind, false, "default");
        let pi = one_cpu_case(kind, false, "pi-ideal");
        // Stock (EEVDF): the nice-19 owner gets a 3 ms slice only every ~200 ms.
        assert!(stock > 100_000.0, "{kind}: stock wait {stock} µs");
        // Inherited nice -10 (9548 vs 1024): about its 10 ms of work.
        assert!(pi < 15_000.0, "{kind}: pi-ideal wait {pi} µs");
    }
}

#[test]
fn linux_pi_gives_a_fair_owner_nothing() {
    // A fair waiter queues at DEFAULT_PRIO: even on a PI futex the nice-19 owner keeps its
    // weight; on a kernel mutex or a plain futex there is no inheritance at all.
    for kind in ["futex-pi", "mutex", "futex-hinted"] {
        let stock = one_cpu_case(kind, false, "default");
        let pi = one_cpu_case(kind, false, "pi");
        assert!(
            (pi - stock).abs() / stock < 0.05,
            "{kind}: pi {pi} vs stock {stock}"
        );
    }
}

#[test]
fn linux_pi_lends_an_rt_waiters_priority_through_a_pi_futex_only() {
    // rt-ui makes the UI SCHED_FIFO; rt_mutex inheritance then runs the owner as RT.
    let pi = one_cpu_case("futex-pi", false, "rt-ui");
    assert!(pi < 15_000.0, "rt-ui on a PI futex: {pi} µs");
    for kind in ["futex-hinted", "mutex"] {
        let stock = one_cpu_case(kind, false, "default");
        let rt = one_cpu_case(kind, false, "rt-ui");
        assert!(rt > stock / 2.0, "{kind}: rt-ui {rt} vs stock {stock}");
    }
}

#[test]
fn pi_gives_rwsem_readers_nothing() {
    let stock = one_cpu_case("rwsem", true, "default");
    for policy in ["pi", "pi-ideal"] {
        let pi = one_cpu_case("rwsem", true, policy);
        assert!(stock > 100_000.0, "stock {stock}");
        assert!(
            (pi - stock).abs() / stock < 0.05,
            "{policy} {pi} vs stock {stock}"
        );
    }
}

#[test]
fn proxy_runs_the_mutex_owner_on_the_waiters_context() {
    let stock = one_cpu_case("mutex", false, "default");
    let proxy = one_cpu_case("mutex", false, "proxy");
    assert!(stock > 100_000.0);
    assert!(proxy < 15_000.0, "proxy wait {proxy} µs");
    // Futexes are not covered by proxy execution.
    let fx = one_cpu_case("futex-hinted", false, "proxy");
    assert!(fx > 100_000.0, "proxy must not help a futex: {fx}");
}

#[test]
fn superpass_fast_tracks_the_blockers_the_kernel_sees() {
    for kind in ["mutex", "futex-hinted", "futex-pi"] {
        let stock = one_cpu_case(kind, false, "default");
        let sp = one_cpu_case(kind, false, "superpass");
        assert!(sp < stock / 5.0, "{kind}: superpass {sp} vs stock {stock}");
    }
    // Without owner hints (a stock device, or a futex without hints) the owner is unknown.
    for (kind, policy) in [
        ("futex-none", "superpass"),
        ("futex-none", "superpass-stock"),
        ("futex-hinted", "superpass-stock"),
    ] {
        let stock = one_cpu_case(kind, false, "default");
        let sp = one_cpu_case(kind, false, policy);
        assert!(
            (sp - stock).abs() / stock < 0.05,
            "{policy} on {kind}: {sp} vs stock {stock}"
        );
    }
    // A PI futex's owner is visible on a stock device.
    let stock = one_cpu_case("futex-pi", false, "default");
    let sp = one_cpu_case("futex-pi", false, "superpass-stock");
    assert!(
        sp < stock / 5.0,
        "superpass-stock on a PI futex: {sp} vs {stock}"
    );
}

#[test]
fn superpass_under_rt_ui_fast_tracks_a_fifo_waiters_owner_and_leaves_a_pi_futex_to_pi() {
    // The FIFO UI thread's wait counts like any other: its fair owner is fast-tracked, where
    // RT-UI alone leaves it behind the hog.
    let counter = |r: &RunResult, name: &str| {
        r.policy_stats
            .counters
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |c| c.1)
    };
    for kind in ["mutex", "futex-hinted"] {
        let rt = one_cpu_case(kind, false, "rt-ui");
        let both = one_cpu_run(kind, false, "superpass+rt-ui", 10_000, "");
        let wait = both.summary().max_blocking_us;
        assert!(
            wait < rt / 5.0,
            "{kind}: superpass+rt-ui {wait} vs rt-ui {rt} µs"
        );
        assert!(
            counter(&both, "fast_track_ns") > 0,
            "{:?}",
            both.policy_stats
        );
    }
    // On a PI futex the FIFO waiter makes the owner RT: it runs its 10 ms as RT, as under
    // RT-UI alone, and the fast track never picks it.
    let rt = one_cpu_case("futex-pi", false, "rt-ui");
    let both = one_cpu_run("futex-pi", false, "superpass+rt-ui", 10_000, "");
    let wait = both.summary().max_blocking_us;
    assert!(
        (wait - rt).abs() / rt < 0.05,
        "PI futex: superpass+rt-ui {wait} vs rt-ui {rt} µs"
    );
    assert_eq!(
        counter(&both, "fast_track_ns"),
        0,
        "{:?}",
        both.policy_stats
    );
    assert!(counter(&both, "pi_changes") > 0, "{:?}", both.policy_stats);
}

/// An RT thread that is not critical (SCHED_FIFO 50), running 20 ms from 500 µs on.
const RT_THREAD: &str = r#"
[[threads]]
name = "audio"
process = "q"
rt_prio = 50
start_us = 500
program = [{ op = "compute", us = 20000 }, { op = "sleep", us = 2000000 }]
"#;

#[test]
fn superpass_under_rt_ui_runs_a_fifo_waiters_owner_after_rt_tasks_and_before_fair_ones() {
    // A 2 ms hold, well within a grant's budget.
    let wait = |policy| {
        one_cpu_run("mutex", false, policy, 2_000, RT_THREAD)
            .summary()
            .max_blocking_us
    };
    // RT-UI alone: the nice-19 owner waits behind the hog as well.
    let rt = wait("rt-ui");
    assert!(rt > 40_000.0, "rt-ui: {rt} µs");
    // Fast-tracked, the owner runs at once, stops for the RT thread's 20 ms and then finishes
    // ahead of the hog.
    let both = wait("superpass+rt-ui");
    assert!(
        (20_000.0..25_000.0).contains(&both),
        "superpass+rt-ui: {both} µs"
    );
}

/// The owner is confined to CPU 1 (busy with a hog); the UI runs on CPU 0. Single-runqueue
/// proxy execution cannot help (the donor just blocks); donor migration can.
fn two_cpu_case(policy: &str) -> f64 {
    let text = r#"
name = "proxy-migrate-case"
warmup_ms = 0.0
# Keep the app's nice-19 owner in the background cpuset (CPU 1).
placement = "little"
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

/// An RT UI thread waits on PI futex `a`, whose nice-19 owner waits on PI futex `b`, whose
/// nice-19 owner shares the only CPU with a nice-0 hog (the UI comes late enough for both
/// locks to be taken: a nice-19 thread first runs about 200 ms after waking next to the hog).
/// Returns the UI's longest wait in µs.
fn pi_chain_case(policy: &str, owner: &str) -> f64 {
    chain_case(policy, &lock_decl(&format!("futex-{owner}")))
}

/// [`pi_chain_case`] with locks `a` and `b` declared by `decl`: the first owner has been
/// asleep on `b` for about 200 ms when the UI starts waiting on `a`.
fn chain_case(policy: &str, decl: &str) -> f64 {
    let text = format!(
        r#"
name = "pi-chain"
warmup_ms = 0.0
{ONE_CPU}[[locks]]
name = "a"
{decl}
[[locks]]
name = "b"
{decl}
[[threads]]
name = "t2"
process = "p"
nice = 19
program = [{{ op = "lock", lock = "b" }}, {{ op = "compute", us = 10000 }}, {{ op = "unlock", lock = "b" }}, {{ op = "sleep", us = 2000000 }}]
[[threads]]
name = "t1"
process = "p"
nice = 19
start_us = 50
program = [{{ op = "lock", lock = "a" }}, {{ op = "lock", lock = "b" }}, {{ op = "compute", us = 1000 }}, {{ op = "unlock", lock = "b" }}, {{ op = "unlock", lock = "a" }}, {{ op = "sleep", us = 2000000 }}]
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
start_us = 400000
program = [{{ op = "lock", lock = "a" }}, {{ op = "compute", us = 10 }}, {{ op = "unlock", lock = "a" }}, {{ op = "sleep", us = 2000000 }}]
"#
    );
    let sc = Scenario::from_toml(&text).unwrap();
    let r = run(&sc, Policy::parse(policy).unwrap(), 1, 2.0);
    assert!(!r.blocking.is_empty(), "{policy}: the UI never blocked");
    r.summary().max_blocking_us
}

#[test]
fn superpass_follows_a_blocker_that_was_asleep_on_a_kernel_lock_before_the_wait() {
    // The first owner's wait on `b` began before it mattered: only the module's record of
    // waits in progress tells the engine, when it boosts that owner, whom it waits for.
    for kind in ["mutex", "rwsem"] {
        let sp = chain_case("superpass", &lock_decl(kind));
        assert!(sp < 15_000.0, "superpass through two {kind}es: {sp} µs");
        let stock = chain_case("default", &lock_decl(kind));
        assert!(stock > 50_000.0, "stock through two {kind}es: {stock} µs");
    }
}

#[test]
fn superpass_under_rt_ui_follows_chains_of_kernel_locks_and_pi_futexes() {
    for kind in ["mutex", "rwsem"] {
        let both = chain_case("superpass+rt-ui", &lock_decl(kind));
        assert!(
            both < 15_000.0,
            "superpass+rt-ui through two {kind}es: {both} µs"
        );
    }
    let pi = pi_chain_case("superpass+rt-ui", "pi");
    assert!(
        pi < 15_000.0,
        "superpass+rt-ui through two PI futexes: {pi} µs"
    );
}

#[test]
fn linux_pi_follows_a_chain_of_pi_futexes() {
    // The RT waiter's priority reaches the second owner through the first.
    let chain = pi_chain_case("rt-ui", "pi");
    assert!(chain < 15_000.0, "rt-ui through two PI futexes: {chain} µs");
    // Without PI (plain futexes) the second owner starves behind the hog.
    let plain = pi_chain_case("rt-ui", "hinted");
    assert!(plain > 50_000.0, "rt-ui on plain futexes: {plain} µs");
}
