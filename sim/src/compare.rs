//! `compare`: every policy × every seed, in parallel, summarized as the paper's table.
//!
//! Seeds are paired: seed *s* gives every policy the same per-thread random draws, so each
//! policy's change against `default` is computed per seed and then averaged, with a 95%
//! interval across seeds.

use crate::metrics::{RunResult, Summary};
use crate::stats::{mean_ci, ratio_change};
use crate::{run, Policy, Scenario};
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One metric column of the table.
pub struct Metric {
    /// JSON key.
    pub key: &'static str,
    /// Column title.
    pub title: &'static str,
    /// Reads the metric from a run summary.
    pub get: fn(&Summary) -> f64,
    /// Change shown as percentage points (for metrics that are themselves percentages of
    /// which `default` may be zero) instead of a relative change.
    pub points: bool,
}

/// The columns, in table order (the first five are the paper's).
pub const METRICS: &[Metric] = &[
    Metric {
        key: "p999_blocking_us",
        title: "p99.9 blocking µs",
        get: |s| s.p999_blocking_us,
        points: false,
    },
    Metric {
        key: "blocking_count",
        title: "blocking count",
        get: |s| s.blocking_count,
        points: false,
    },
    Metric {
        key: "janky_frames",
        title: "janky frames",
        get: |s| s.janky_frames,
        points: false,
    },
    Metric {
        key: "cpu_overhead_pct",
        title: "CPU overhead %",
        get: |s| s.cpu_overhead_pct,
        points: true,
    },
    Metric {
        key: "background_share_pct",
        title: "background CPU share %",
        get: |s| s.background_share_pct,
        points: true,
    },
    Metric {
        key: "p50_blocking_us",
        title: "p50 blocking µs",
        get: |s| s.p50_blocking_us,
        points: false,
    },
    Metric {
        key: "p99_blocking_us",
        title: "p99 blocking µs",
        get: |s| s.p99_blocking_us,
        points: false,
    },
    Metric {
        key: "max_blocking_us",
        title: "max blocking µs",
        get: |s| s.max_blocking_us,
        points: false,
    },
    Metric {
        key: "blocking_ms_per_s",
        title: "blocking ms/s",
        get: |s| s.blocking_ms_per_s,
        points: false,
    },
    Metric {
        key: "janky_pct",
        title: "janky %",
        get: |s| s.janky_pct,
        points: true,
    },
    Metric {
        key: "blocker_asleep_pct",
        title: "blocker asleep %",
        get: |s| s.blocker_asleep_pct,
        points: true,
    },
    Metric {
        key: "blocker_runnable_pct",
        title: "blocker runnable %",
        get: |s| s.blocker_runnable_pct,
        points: true,
    },
    Metric {
        key: "blocker_running_pct",
        title: "blocker running %",
        get: |s| s.blocker_running_pct,
        points: true,
    },
    Metric {
        key: "waiter_runnable_pct",
        title: "waiter runnable %",
        get: |s| s.waiter_runnable_pct,
        points: true,
    },
];

/// All runs of a comparison, by policy then seed.
pub struct Comparison {
    /// Scenario name.
    pub scenario: String,
    /// Simulated seconds per run.
    pub seconds: f64,
    /// Seeds used (1..=n).
    pub seeds: u64,
    /// Policies in order.
    pub policies: Vec<Policy>,
    /// `runs[p][s]`.
    pub runs: Vec<Vec<RunResult>>,
}

/// Runs every policy with seeds `1..=seeds` on up to `jobs` threads.
pub fn compare(
    sc: &Scenario,
    policies: &[Policy],
    seconds: f64,
    seeds: u64,
    jobs: usize,
) -> Comparison {
    let work: Vec<(usize, u64)> = (0..policies.len())
        .flat_map(|p| (1..=seeds).map(move |s| (p, s)))
        .collect();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, u64, RunResult)>> = Mutex::new(Vec::with_capacity(work.len()));
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(work.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, s)) = work.get(i) else { break };
                let r = run(sc, policies[p], s, seconds);
                done.lock()
                    .expect("no panics while holding")
                    .push((p, s, r));
            });
        }
    });
    let mut done = done.into_inner().expect("threads joined");
    done.sort_by_key(|(p, s, _)| (*p, *s));
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); policies.len()];
    for (p, _, r) in done {
        runs[p].push(r);
    }
    Comparison {
        scenario: sc.name.clone(),
        seconds,
        seeds,
        policies: policies.to_vec(),
        runs,
    }
}

/// One cell: mean ± CI and change vs default with its interval.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Mean across seeds.
    pub mean: f64,
    /// 95% CI half-width.
    pub ci: f64,
    /// Change vs default: relative change of the means (%), or the mean paired difference
    /// (percentage points) for metrics that are percentages; NaN if undefined.
    pub change: f64,
    /// Its 95% interval (bootstrap percentiles for relative changes, mean ± t half-width
    /// for points); NaN if unavailable.
    pub change_lo: f64,
    /// Upper end of the interval.
    pub change_hi: f64,
}

impl Comparison {
    fn summaries(&self) -> Vec<Vec<Summary>> {
        self.runs
            .iter()
            .map(|rs| rs.iter().map(RunResult::summary).collect())
            .collect()
    }

    /// The cell of policy `p`, metric `m`.
    pub fn cells(&self) -> Vec<Vec<Cell>> {
        let sums = self.summaries();
        let base = self.policies.iter().position(|p| p.0 == "default");
        sums.iter()
            .map(|ps| {
                METRICS
                    .iter()
                    .map(|m| {
                        let xs: Vec<f64> = ps.iter().map(m.get).collect();
                        let (mean, ci) = mean_ci(&xs);
                        let (change, change_lo, change_hi) = match base {
                            None => (f64::NAN, f64::NAN, f64::NAN),
                            Some(b) => {
                                let ys: Vec<f64> = sums[b].iter().map(m.get).collect();
                                if m.points {
                                    let d: Vec<f64> =
                                        xs.iter().zip(&ys).map(|(x, y)| x - y).collect();
                                    let (c, h) = mean_ci(&d);
                                    (c, c - h, c + h)
                                } else {
                                    match ratio_change(&xs, &ys) {
                                        None => (f64::NAN, f64::NAN, f64::NAN),
                                        Some((c, None)) => (c, f64::NAN, f64::NAN),
                                        Some((c, Some((lo, hi)))) => (c, lo, hi),
                                    }
                                }
                            }
                        };
                        Cell {
                            mean,
                            ci,
                            change,
                            change_lo,
                            change_hi,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The paper-form table (Markdown), `wide` adding the secondary metrics.
    pub fn table(&self, wide: bool) -> String {
        let cells = self.cells();
        let ncol = if wide { METRICS.len() } else { 5 };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario `{}`: {} simulated s × {} seeds; mean ± 95% CI across seeds; Δ vs default: change of the means in % [95% paired-bootstrap interval], or mean paired difference in pp ± 95% CI for percentages; n/a where default is 0\n",
            self.scenario, self.seconds, self.seeds
        );
        let _ = write!(s, "| policy |");
        for m in &METRICS[..ncol] {
            let _ = write!(s, " {} | Δ |", m.title);
        }
        let _ = writeln!(s);
        let _ = write!(s, "|---|");
        for _ in 0..ncol {
            let _ = write!(s, "---:|---:|");
        }
        let _ = writeln!(s);
        for (p, row) in self.policies.iter().zip(&cells) {
            let _ = write!(s, "| {} |", p.0);
            for (m, c) in METRICS[..ncol].iter().zip(row) {
                let _ = write!(
                    s,
                    " {} | {} |",
                    fmt_pm(c.mean, c.ci),
                    fmt_change(p.0, c, m.points)
                );
            }
            let _ = writeln!(s);
        }
        s
    }

    /// The `--json` object.
    pub fn json(&self) -> Value {
        let cells = self.cells();
        let policies: Vec<Value> = self
            .policies
            .iter()
            .zip(&cells)
            .enumerate()
            .map(|(i, (p, row))| {
                let mut o = Map::new();
                o.insert("name".into(), json!(p.0));
                // Means first, in table order; then run totals; then intervals and changes.
                for (m, c) in METRICS.iter().zip(row) {
                    o.insert(m.key.into(), num(c.mean));
                }
                let rs = &self.runs[i];
                o.insert(
                    "frames".into(),
                    json!(rs.iter().map(|r| r.frames).sum::<u64>()),
                );
                o.insert(
                    "events".into(),
                    json!(rs.iter().map(|r| r.events).sum::<u64>()),
                );
                o.insert(
                    "switches".into(),
                    json!(rs.iter().map(|r| r.switches).sum::<u64>()),
                );
                o.insert(
                    "hook_calls".into(),
                    json!(rs.iter().map(|r| r.policy_stats.hook_calls).sum::<u64>()),
                );
                o.insert(
                    "boosts".into(),
                    json!(rs.iter().map(|r| r.policy_stats.boosts).sum::<u64>()),
                );
                for (m, c) in METRICS.iter().zip(row) {
                    o.insert(format!("{}_ci95", m.key), num(c.ci));
                    let suffix = if m.points { "change_pp" } else { "change_pct" };
                    o.insert(format!("{}_{suffix}", m.key), num(c.change));
                    o.insert(format!("{}_{suffix}_lo95", m.key), num(c.change_lo));
                    o.insert(format!("{}_{suffix}_hi95", m.key), num(c.change_hi));
                }
                Value::Object(o)
            })
            .collect();
        json!({
            "scenario": self.scenario,
            "seconds": self.seconds,
            "seeds": self.seeds,
            "policies": policies,
        })
    }

    /// Sorted blocking durations pooled over seeds, per policy (for the CDF plot).
    pub fn pooled_durations(&self) -> Vec<(String, Vec<u64>)> {
        self.policies
            .iter()
            .zip(&self.runs)
            .map(|(p, rs)| {
                let mut v: Vec<u64> = rs
                    .iter()
                    .flat_map(|r| r.blocking.iter().map(|b| b.dur()))
                    .collect();
                v.sort_unstable();
                (p.0.to_string(), v)
            })
            .collect()
    }
}

fn num(x: f64) -> Value {
    if x.is_finite() {
        json!((x * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn fmt_pm(m: f64, ci: f64) -> String {
    if ci.is_finite() {
        format!("{} ± {}", fmt_num(m), fmt_num(ci))
    } else {
        fmt_num(m)
    }
}

fn fmt_change(name: &str, c: &Cell, points: bool) -> String {
    if name == "default" {
        return "—".into();
    }
    if !c.change.is_finite() {
        return "n/a".into();
    }
    let signed = |x: f64| {
        let sign = if x >= 0.0 { "+" } else { "" };
        format!("{sign}{}", fmt_num(x))
    };
    let have_ci = c.change_lo.is_finite() && c.change_hi.is_finite();
    if points {
        if have_ci {
            let h = (c.change_hi - c.change_lo) / 2.0;
            format!("{}pp ± {}", signed(c.change), fmt_num(h))
        } else {
            format!("{}pp", signed(c.change))
        }
    } else if have_ci {
        format!(
            "{}% [{}, {}]",
            signed(c.change),
            signed(c.change_lo),
            signed(c.change_hi)
        )
    } else {
        format!("{}%", signed(c.change))
    }
}
