//! Cross-check: a run's `.pftrace`, imported into SQLite by `superpass-trace` and measured by
//! its report, gives back the simulator's own blocking metrics.
//!
//! What is compared, and the definitional differences (all exact unless noted):
//! - The simulator's blocking intervals are critical-thread (`ui`, `RenderThread`) lock waits
//!   that *started* after warmup and ended before the run stopped. In the trace every lock wait
//!   of every thread is a `lockwait:<lock>` slice, so the database is first restricted to the
//!   same set: lockwait slices of critical threads with `ts >= warmup` and `dur >= 0` (a wait
//!   still open when the run stops has `dur = -1` in the database and no interval in the run).
//! - Per interval: (tid, lock, start, end) from `thread_slice` equal the run's `Blocking`s.
//! - Report (`report::analyze`): `all_waits.count`/`total_ns` equal the run's interval count
//!   and total; per lock, the report's tail `count` and `max_ns` equal the run's.
//! - Percentiles are defined differently: the simulator uses nearest rank (`ceil(q*n)`-th
//!   value), the report the shortest wait whose `(rank-1)/(n-1) >= q`. Over the same sorted
//!   durations the report's pXX is therefore the simulator's pXX or the next larger duration
//!   (the index is `ceil(q*(n-1))` vs `ceil(q*n)-1`); the test asserts exactly that bracket,
//!   and that the simulator's own `percentile` over the trace's durations equals its summary.
//! - The waiter is covered by thread_state for the whole of every interval (no unknown time),
//!   and it is on a CPU (`Running`) at the instant the interval ends (it resumes holding the
//!   lock, or won a futex retry while running).

use std::collections::BTreeMap;

use superpass_sim::metrics::percentile as sim_percentile;
use superpass_sim::sim::RunOpts;
use superpass_sim::{run_with, Policy, RunResult, Scenario};
use superpass_trace::import::import_in_memory;
use superpass_trace::report::{self, percentile as report_percentile, Options};

fn crosscheck(scenario: &str, policy: &str, seed: u64, secs: f64) -> RunResult {
    let mut sc = Scenario::builtin(scenario).unwrap();
    // The app's workers on the little cores: more waits to compare.
    sc.placement = superpass_sim::workload::Placement::Little;
    let warmup = (sc.warmup_ms * 1e6) as i64;
    let o = RunOpts {
        trace: true,
        check_invariants: false,
        explain: false,
    };
    let (r, bytes) = run_with(&sc, Policy::parse(policy).unwrap(), seed, secs, &o);
    let bytes = bytes.expect("trace requested");
    let ctx = format!("{scenario}/{policy}/seed {seed}");

    let (conn, summary) = import_in_memory(&bytes).expect("imports");
    let d = &summary.diag;
    assert_eq!(d.corrupt, 0, "{ctx}: {summary}");
    assert!(!d.truncated, "{ctx}: {summary}");
    assert_eq!(d.unmatched_ends, 0, "{ctx}: {summary}");
    assert!(
        summary.thread_state > 0 && summary.sched > 0,
        "{ctx}: {summary}"
    );

    // Keep only the waits the simulator counts as blocking intervals (see the module doc).
    // A deleted wait may enclose other slices (a grant slice re-begun inside it), whose
    // parent_id then dangles: harmless for the report, so foreign keys are off for this.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let removed = conn
        .execute(
            "DELETE FROM slice WHERE name LIKE 'lockwait:%' AND (ts < ?1 OR dur < 0 OR id NOT IN \
             (SELECT id FROM thread_slice WHERE thread_name IN ('ui', 'RenderThread')))",
            [warmup],
        )
        .unwrap();
    assert!(removed > 0, "{ctx}: other threads' waits exist too");

    // Per interval.
    let mut st = conn
        .prepare(
            "SELECT tid, substr(name, 10), ts, ts + dur FROM thread_slice \
             WHERE name LIKE 'lockwait:%' ORDER BY ts, tid",
        )
        .unwrap();
    let mut got: Vec<(i32, String, u64, u64)> = st
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get::<_, i64>(2)? as u64,
                row.get::<_, i64>(3)? as u64,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    got.sort();
    let mut want: Vec<(i32, String, u64, u64)> = r
        .blocking
        .iter()
        .map(|b| (b.tid, b.lock.clone(), b.start_ns, b.end_ns))
        .collect();
    want.sort();
    assert!(want.len() >= 20, "{ctx}: only {} intervals", want.len());
    assert_eq!(got.len(), want.len(), "{ctx}: interval count");
    assert_eq!(got, want, "{ctx}: intervals");

    // The waiter at the end of each interval, and its coverage by thread_state.
    let mut at_end = conn
        .prepare(
            "SELECT s.state FROM thread_state s JOIN thread t USING (utid) \
             WHERE t.tid = ?1 AND s.ts <= ?2 ORDER BY s.ts DESC LIMIT 1",
        )
        .unwrap();
    // A wait still in progress when the run ends is cut there, with its waiter still asleep.
    let run_end = (secs * 1e9) as u64;
    for (tid, lock, start, end) in want.iter().filter(|w| w.3 < run_end) {
        let state: String = at_end
            .query_row((tid, *end as i64), |row| row.get(0))
            .unwrap();
        assert_eq!(
            state, "Running",
            "{ctx}: tid {tid} {lock} [{start}, {end}] ends with the waiter {state}"
        );
    }

    // The report over the same waits.
    let rep = report::analyze(&conn, Options::default()).unwrap();
    let sim = r.summary();
    let all = &rep["all_waits"];
    assert_eq!(all["count"].as_u64().unwrap(), want.len() as u64, "{ctx}");
    let total: u64 = r.blocking.iter().map(|b| b.dur()).sum();
    assert_eq!(all["total_ns"].as_u64().unwrap(), total, "{ctx}");
    let w = &all["waiter"];
    let part = |k: &str| w[k].as_u64().unwrap();
    assert_eq!(
        part("unknown_ns"),
        0,
        "{ctx}: waiter without sched data: {w}"
    );
    assert_eq!(
        part("asleep_ns") + part("runnable_ns") + part("running_ns"),
        total,
        "{ctx}: itemized waiter time adds up: {w}"
    );

    // Whole-run percentiles: the simulator's definition over the trace's durations equals
    // its summary; the report's definition brackets it.
    let mut durs: Vec<u64> = got.iter().map(|(_, _, s, e)| e - s).collect();
    durs.sort_unstable();
    let us = |ns: u64| ns as f64 / 1000.0;
    assert_eq!(us(sim_percentile(&durs, 0.5)), sim.p50_blocking_us, "{ctx}");
    assert_eq!(
        us(sim_percentile(&durs, 0.99)),
        sim.p99_blocking_us,
        "{ctx}"
    );
    assert_eq!(us(*durs.last().unwrap()), sim.max_blocking_us, "{ctx}");
    assert_eq!(durs.len() as f64, sim.blocking_count, "{ctx}");
    let bracket = |sorted: &[u64], q: f64| {
        let lo = sim_percentile(sorted, q);
        let hi = sorted.iter().copied().find(|&d| d > lo).unwrap_or(lo);
        (lo, hi)
    };

    // Per lock: the report's tails against the run's intervals of that lock.
    let mut by_lock: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for b in &r.blocking {
        by_lock.entry(b.lock.clone()).or_default().push(b.dur());
    }
    let tails = rep["tails"].as_array().unwrap();
    assert_eq!(tails.len(), by_lock.len(), "{ctx}: locks with waits");
    for (lock, d) in &mut by_lock {
        d.sort_unstable();
        let name = format!("lockwait:{lock}");
        let t = tails
            .iter()
            .find(|t| t["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{ctx}: no tail for {name}"));
        assert_eq!(
            t["count"].as_u64().unwrap(),
            d.len() as u64,
            "{ctx}: {name}"
        );
        assert_eq!(t["max_ns"].as_u64(), d.last().copied(), "{ctx}: {name}");
        for (key, q) in [("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99)] {
            let got = t[key].as_u64().unwrap();
            let as_i64: Vec<i64> = d.iter().map(|&x| x as i64).collect();
            assert_eq!(report_percentile(&as_i64, q), Some(got as i64));
            let (lo, hi) = bracket(d, q);
            assert!(
                got == lo || got == hi,
                "{ctx}: {name} {key}: report {got}, simulator {lo} (next {hi})"
            );
        }
    }
    r
}

#[test]
fn imported_trace_reproduces_blocking_default_policy() {
    crosscheck("heavy-background", "default", 5, 2.0);
}

#[test]
fn imported_trace_reproduces_blocking_superpass_rwsem() {
    crosscheck("rwsem-storm", "superpass", 5, 2.0);
}

#[test]
fn imported_trace_reproduces_blocking_superpass_launch() {
    crosscheck("app-launch", "superpass", 5, 1.0);
}
