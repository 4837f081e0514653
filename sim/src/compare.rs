//! `compare`: every policy × every seed, in parallel, summarized as the paper's table.
//!
//! Seeds are paired: seed *s* gives every policy the same per-thread random draws, so each
//! policy's change against `default` is computed on paired seeds, with a 95% interval from a
//! paired bootstrap (or a t interval of paired differences for percentages). Tail percentiles
//! come from the waits pooled over all seeds (`crate::pooled`).

use crate::explain::Tail;
use crate::metrics::{RunResult, Summary, Waiters};
use crate::pooled;
use crate::sim::RunOpts;
use crate::stats::{mean_ci, ratio_change};
use crate::{run_with, Policy, Scenario};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a metric is aggregated over seeds.
#[derive(Clone, Copy)]
pub enum Agg {
    /// The mean of a per-run figure, ± a t interval; its change is the relative change of
    /// the means (or, with `points`, the mean paired difference in percentage points, for
    /// figures that are themselves percentages of which `default` may be zero).
    Mean {
        /// Reads the figure from a run summary.
        get: fn(&Summary) -> f64,
        /// Change shown as percentage points.
        points: bool,
    },
    /// A percentile (0..=1, nearest rank) of the critical waits pooled over all seeds, in
    /// µs, with seed-bootstrap intervals (`crate::pooled`).
    Pooled(f64),
}

/// One metric column of the table.
pub struct Metric {
    /// JSON key.
    pub key: &'static str,
    /// Column title.
    pub title: &'static str,
    /// How it is aggregated.
    pub agg: Agg,
}

impl Metric {
    /// Whether its change is in percentage points.
    pub fn points(&self) -> bool {
        matches!(self.agg, Agg::Mean { points: true, .. })
    }
}

const fn mean(key: &'static str, title: &'static str, get: fn(&Summary) -> f64) -> Metric {
    Metric {
        key,
        title,
        agg: Agg::Mean { get, points: false },
    }
}

const fn pp(key: &'static str, title: &'static str, get: fn(&Summary) -> f64) -> Metric {
    Metric {
        key,
        title,
        agg: Agg::Mean { get, points: true },
    }
}

const fn pooled(key: &'static str, title: &'static str, q: f64) -> Metric {
    Metric {
        key,
        title,
        agg: Agg::Pooled(q),
    }
}

/// The metrics, in JSON order: the paper's five first, then the blocking counts, then the
/// secondary metrics.
pub const METRICS: &[Metric] = &[
    pooled("p999_blocking_us", "p99.9 blocking µs (pooled)", 0.999),
    mean("blocking_count", "blocking count", |s| s.blocking_count),
    mean("janky_frames", "janky frames", |s| s.janky_frames),
    pp("cpu_overhead_pct", "CPU overhead %", |s| s.cpu_overhead_pct),
    pp("background_share_pct", "background CPU share %", |s| {
        s.background_share_pct
    }),
    mean("blocking_count_ge1ms", "blockings ≥1 ms", |s| {
        s.blocking_count_ge1ms
    }),
    mean("blocking_count_ge2ms", "blockings ≥2 ms", |s| {
        s.blocking_count_ge2ms
    }),
    mean("blocking_per_frame", "blockings per frame", |s| {
        s.blocking_per_frame
    }),
    pooled("p50_blocking_us", "p50 blocking µs (pooled)", 0.5),
    pooled("p99_blocking_us", "p99 blocking µs (pooled)", 0.99),
    pooled("max_blocking_us", "max blocking µs (pooled)", 1.0),
    mean("blocking_ms_per_s", "blocking ms/s", |s| {
        s.blocking_ms_per_s
    }),
    pp("janky_pct", "janky %", |s| s.janky_pct),
    pp("blocker_asleep_pct", "blocker asleep %", |s| {
        s.blocker_asleep_pct
    }),
    pp("blocker_runnable_pct", "blocker runnable %", |s| {
        s.blocker_runnable_pct
    }),
    pp("blocker_running_pct", "blocker running %", |s| {
        s.blocker_running_pct
    }),
    pp("waiter_runnable_pct", "waiter runnable %", |s| {
        s.waiter_runnable_pct
    }),
    pp("other_woken_pct", "other waiter woken %", |s| {
        s.other_woken_pct
    }),
];

/// The columns of the default table (JSON keys), in order.
pub const NARROW: &[&str] = &[
    "p999_blocking_us",
    "blocking_count",
    "blocking_count_ge1ms",
    "blocking_count_ge2ms",
    "blocking_per_frame",
    "janky_frames",
    "cpu_overhead_pct",
    "background_share_pct",
];

/// The columns of the UI-thread-only table: those that depend on whose waits are counted.
pub const UI_COLUMNS: &[&str] = &[
    "p999_blocking_us",
    "blocking_count",
    "blocking_count_ge1ms",
    "blocking_count_ge2ms",
    "blocking_per_frame",
];

/// A pooled percentile backed by fewer waits than this is flagged in the table: below it
/// the p99.9 rests on one or two samples.
pub const MIN_SAMPLES: usize = 1000;

/// One frame at 60 Hz, in ns: a wait longer than this drops a frame.
const FRAME_NS: u64 = 16_666_667;

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

/// How a comparison is run; none of it changes the results.
#[derive(Clone, Copy, Debug)]
pub struct CompareOpts {
    /// Worker threads (at least one).
    pub jobs: usize,
    /// Show finished runs and the time left on stderr.
    pub progress: bool,
    /// Itemize every critical wait (`crate::explain`), for [`Comparison::explain`].
    pub explain: bool,
}

/// Runs every policy with seeds `1..=seeds` on up to `jobs` threads. The result does not
/// depend on `jobs`.
pub fn compare(
    sc: &Scenario,
    policies: &[Policy],
    seconds: f64,
    seeds: u64,
    jobs: usize,
) -> Comparison {
    let o = CompareOpts {
        jobs,
        progress: false,
        explain: false,
    };
    compare_with(sc, policies, seconds, seeds, &o)
}

/// [`compare`] with every option.
///
/// The (policy, seed) runs are spread over a rayon pool of `o.jobs` threads; rayon's indexed
/// collect keeps them in (policy, seed) order whichever thread ran each, so the output does
/// not depend on the number of workers.
pub fn compare_with(
    sc: &Scenario,
    policies: &[Policy],
    seconds: f64,
    seeds: u64,
    o: &CompareOpts,
) -> Comparison {
    let work: Vec<(usize, u64)> = (0..policies.len())
        .flat_map(|p| (1..=seeds).map(move |s| (p, s)))
        .collect();
    let ro = RunOpts {
        explain: o.explain,
        ..RunOpts::default()
    };
    let finished = AtomicUsize::new(0);
    let t0 = std::time::Instant::now();
    let one = |&(p, s): &(usize, u64)| {
        let r = run_with(sc, policies[p], s, seconds, &ro).0;
        let f = finished.fetch_add(1, Ordering::Relaxed) + 1;
        if o.progress {
            let el = t0.elapsed().as_secs_f64();
            let eta = el / f as f64 * (work.len() - f) as f64;
            eprint!(
                "\r{}: {f}/{} runs, {el:.0} s, ~{eta:.0} s left   ",
                sc.name,
                work.len()
            );
        }
        r
    };
    let done: Vec<RunResult> = match rayon::ThreadPoolBuilder::new()
        .num_threads(o.jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(|| work.par_iter().map(one).collect()),
        // No threads to be had: run here, one after another.
        Err(_) => work.iter().map(one).collect(),
    };
    if o.progress {
        eprintln!();
    }
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); policies.len()];
    for (&(p, _), r) in work.iter().zip(done) {
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
    /// Per policy, per seed: the summary of `who`'s waits.
    fn summaries(&self, who: Waiters) -> Vec<Vec<Summary>> {
        self.runs
            .iter()
            .map(|rs| rs.iter().map(|r| r.summary_of(who)).collect())
            .collect()
    }

    /// Per policy, per seed: `who`'s wait durations in ns, sorted.
    pub fn durations(&self, who: Waiters) -> Vec<Vec<Vec<u64>>> {
        self.runs
            .iter()
            .map(|rs| rs.iter().map(|r| r.sorted_durations_of(who)).collect())
            .collect()
    }

    /// Waits pooled per policy (`who`'s).
    pub fn samples(&self, who: Waiters) -> Vec<usize> {
        self.durations(who)
            .iter()
            .map(|d| pooled::samples(d))
            .collect()
    }

    /// The cells of every policy (rows) and metric (columns, [`METRICS`] order) over the
    /// critical threads' waits.
    pub fn cells(&self) -> Vec<Vec<Cell>> {
        self.cells_of(Waiters::Critical)
    }

    /// The cells over `who`'s waits.
    pub fn cells_of(&self, who: Waiters) -> Vec<Vec<Cell>> {
        let sums = self.summaries(who);
        let durs = self.durations(who);
        let base = self.policies.iter().position(|p| p.0 == "default");
        (0..self.policies.len())
            .map(|p| {
                METRICS
                    .iter()
                    .map(|m| match m.agg {
                        Agg::Mean { get, points } => {
                            mean_cell(&sums[p], base.map(|b| &sums[b][..]), get, points)
                        }
                        Agg::Pooled(q) => pooled_cell(&durs[p], base.map(|b| &durs[b][..]), q),
                    })
                    .collect()
            })
            .collect()
    }

    /// The paper-form tables (Markdown): every policy over the UI thread's and RenderThread's
    /// waits, then over the UI thread's alone; `wide` adds the secondary metrics.
    pub fn table(&self, wide: bool) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario `{}`: {} simulated s × {} seeds; p50/p99/p99.9/max from the waits pooled over all seeds (n = waits pooled; † under {MIN_SAMPLES}) ± half its 95% seed-bootstrap interval; other cells mean ± 95% CI across seeds; Δ vs default: relative change in % [95% paired-bootstrap interval], or mean paired difference in pp ± 95% CI for percentages; n/a where default is 0\n",
            self.scenario, self.seconds, self.seeds
        );
        let cols: Vec<usize> = if wide {
            (0..METRICS.len()).collect()
        } else {
            NARROW.iter().map(|k| index(k)).collect()
        };
        let _ = writeln!(s, "UI thread and RenderThread:\n");
        self.table_of(&mut s, Waiters::Critical, &cols, None);
        let ui: Vec<usize> = if wide {
            cols
        } else {
            UI_COLUMNS.iter().map(|k| index(k)).collect()
        };
        let _ = writeln!(s, "\nUI thread only:\n");
        self.table_of(&mut s, Waiters::Ui, &ui, None);
        s
    }

    /// Per policy, per seed: the critical threads' binder round trips in ns, sorted.
    pub fn binder_durations(&self) -> Vec<Vec<Vec<u64>>> {
        self.runs
            .iter()
            .map(|rs| {
                rs.iter()
                    .map(|r| {
                        let mut v = r.binder_ns.clone();
                        v.sort_unstable();
                        v
                    })
                    .collect()
            })
            .collect()
    }

    /// The critical threads' synchronous binder calls, from the call to the receipt of the
    /// reply, per policy (Markdown): pooled p50, p99.9 and max, and the calls longer than a
    /// 60 Hz frame per run; `None` if no critical thread made a call.
    pub fn binder_table(&self) -> Option<String> {
        let durs = self.binder_durations();
        if durs.iter().flatten().all(Vec::is_empty) {
            return None;
        }
        let base = self.policies.iter().position(|p| p.0 == "default");
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| policy | binder calls (pooled) | p50 µs | p99.9 µs | Δ | max µs | Δ | calls > 16 ms per run |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for (i, p) in self.policies.iter().enumerate() {
            let b = base.map(|b| &durs[b][..]);
            let (p50, p999, max) = (
                pooled_cell(&durs[i], b, 0.5),
                pooled_cell(&durs[i], b, 0.999),
                pooled_cell(&durs[i], b, 1.0),
            );
            let over: Vec<f64> = durs[i]
                .iter()
                .map(|d| d.iter().filter(|&&x| x > FRAME_NS).count() as f64)
                .collect();
            let (m, ci) = mean_ci(&over);
            let n = pooled::samples(&durs[i]);
            let dagger = if n < MIN_SAMPLES { "†" } else { "" };
            let _ = writeln!(
                s,
                "| {} | {n}{dagger} | {} | {} | {} | {} | {} | {} |",
                p.0,
                fmt_num(p50.mean),
                fmt_pm(p999.mean, p999.ci),
                fmt_change(p.0, &p999, false),
                fmt_num(max.mean),
                fmt_change(p.0, &max, false),
                fmt_pm(m, ci),
            );
        }
        Some(s)
    }

    /// The critical threads' table with the rows of `policies` alone and the columns `keys`
    /// (JSON keys of [`METRICS`]), in the comparison's order.
    pub fn table_for(&self, policies: &[&str], keys: &[&str]) -> String {
        let mut s = String::new();
        let cols: Vec<usize> = keys.iter().map(|k| index(k)).collect();
        self.table_of(&mut s, Waiters::Critical, &cols, Some(policies));
        s
    }

    /// Writes the table of `who`'s waits: every policy, or those `only` names.
    fn table_of(&self, s: &mut String, who: Waiters, cols: &[usize], only: Option<&[&str]>) {
        let cells = self.cells_of(who);
        let n = self.samples(who);
        let _ = write!(s, "| policy |");
        for &c in cols {
            let _ = write!(s, " {} | Δ |", METRICS[c].title);
        }
        let _ = writeln!(s);
        let _ = write!(s, "|---|");
        for _ in cols {
            let _ = write!(s, "---:|---:|");
        }
        let _ = writeln!(s);
        for (i, (p, row)) in self.policies.iter().zip(&cells).enumerate() {
            if only.is_some_and(|o| !o.contains(&p.0)) {
                continue;
            }
            let _ = write!(s, "| {} |", p.0);
            for &c in cols {
                let m = &METRICS[c];
                let cell = &row[c];
                let mut v = fmt_pm(cell.mean, cell.ci);
                if matches!(m.agg, Agg::Pooled(_)) {
                    let dagger = if n[i] < MIN_SAMPLES { "†" } else { "" };
                    v = format!("{v} (n={}{dagger})", n[i]);
                }
                let _ = write!(s, " {} | {} |", v, fmt_change(p.0, cell, m.points()));
            }
            let _ = writeln!(s);
        }
    }

    fn json_row(&self, i: usize, row: &[Cell], n: usize, totals: bool) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("name".into(), json!(self.policies[i].0));
        // Means first, in METRICS order; then sample and run totals; then intervals and
        // changes.
        for (m, c) in METRICS.iter().zip(row) {
            o.insert(m.key.into(), num(c.mean));
        }
        o.insert("blocking_samples".into(), json!(n));
        if totals {
            let rs = &self.runs[i];
            let sum = |f: fn(&RunResult) -> u64| json!(rs.iter().map(f).sum::<u64>());
            o.insert("frames".into(), sum(|r| r.frames));
            o.insert("events".into(), sum(|r| r.events));
            o.insert("switches".into(), sum(|r| r.switches));
            o.insert("hook_calls".into(), sum(|r| r.policy_stats.hook_calls));
            o.insert("boosts".into(), sum(|r| r.policy_stats.boosts));
        }
        for (m, c) in METRICS.iter().zip(row) {
            o.insert(format!("{}_ci95", m.key), num(c.ci));
            let suffix = if m.points() {
                "change_pp"
            } else {
                "change_pct"
            };
            o.insert(format!("{}_{suffix}", m.key), num(c.change));
            o.insert(format!("{}_{suffix}_lo95", m.key), num(c.change_lo));
            o.insert(format!("{}_{suffix}_hi95", m.key), num(c.change_hi));
        }
        o
    }

    /// The `--json` object.
    pub fn json(&self) -> Value {
        let cells = self.cells();
        let ui_cells = self.cells_of(Waiters::Ui);
        let n = self.samples(Waiters::Critical);
        let ui_n = self.samples(Waiters::Ui);
        let binder = self.binder_durations();
        let policies: Vec<Value> = (0..self.policies.len())
            .map(|i| {
                let mut o = self.json_row(i, &cells[i], n[i], true);
                let mut ui = self.json_row(i, &ui_cells[i], ui_n[i], false);
                ui.remove("name");
                o.insert("ui_only".into(), Value::Object(ui));
                let calls = pooled::samples(&binder[i]);
                o.insert("binder_calls".into(), json!(calls));
                if calls > 0 {
                    let us = |q| num(pooled::quantile(&binder[i], q) * 1e-3);
                    o.insert("binder_p50_us".into(), us(0.5));
                    o.insert("binder_p999_us".into(), us(0.999));
                    o.insert("binder_max_us".into(), us(1.0));
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

    /// Sorted blocking durations pooled over seeds, per policy (for the plots).
    pub fn pooled_durations(&self) -> Vec<(String, Vec<u64>)> {
        self.policies
            .iter()
            .zip(self.durations(Waiters::Critical))
            .map(|(p, per_seed)| {
                let mut v = per_seed.concat();
                v.sort_unstable();
                (p.0.to_string(), v)
            })
            .collect()
    }

    /// The worst `fracs` (e.g. 1% and 0.1%) of each policy's critical waits, pooled over its
    /// seeds and itemized (`crate::explain`), with the policy's counters summed over seeds;
    /// the runs must have been made with `CompareOpts::explain`.
    pub fn explain(&self, fracs: &[f64]) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario `{}`: {} simulated s × {} seeds; the worst waits pooled over all seeds, \
             their time by blocker state and by finer kind (docs/metrics.md, \"Itemizing the tail\")\n",
            self.scenario, self.seconds, self.seeds
        );
        for (p, rs) in self.policies.iter().zip(&self.runs) {
            for &f in fracs {
                s.push_str(&Tail::of(rs, f).render(p.0, 1.0));
            }
            let mut counters: Vec<(String, u64)> = Vec::new();
            for r in rs {
                for (k, v) in &r.policy_stats.counters {
                    match counters.iter_mut().find(|(n, _)| n == k) {
                        Some((_, t)) => *t += v,
                        None => counters.push((k.clone(), *v)),
                    }
                }
            }
            if !counters.is_empty() {
                let c: Vec<String> = counters.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = writeln!(s, "  counters (all seeds): {}", c.join(" "));
            }
            let _ = writeln!(s);
        }
        s
    }
}

/// Index of a metric in [`METRICS`] by JSON key.
pub fn index(key: &str) -> usize {
    METRICS
        .iter()
        .position(|m| m.key == key)
        .expect("a key of METRICS")
}

fn mean_cell(
    xs: &[Summary],
    base: Option<&[Summary]>,
    get: fn(&Summary) -> f64,
    points: bool,
) -> Cell {
    let xs: Vec<f64> = xs.iter().map(get).collect();
    let (mean, ci) = mean_ci(&xs);
    let (change, change_lo, change_hi) = match base {
        None => (f64::NAN, f64::NAN, f64::NAN),
        Some(b) => {
            let ys: Vec<f64> = b.iter().map(get).collect();
            if points {
                let d: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| x - y).collect();
                let (c, h) = mean_ci(&d);
                (c, c - h, c + h)
            } else {
                split(ratio_change(&xs, &ys))
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
}

fn pooled_cell(xs: &[Vec<u64>], base: Option<&[Vec<u64>]>, q: f64) -> Cell {
    let us = 1e-3;
    let mean = pooled::quantile(xs, q) * us;
    let ci = pooled::interval(xs, q).map_or(f64::NAN, |(lo, hi)| (hi - lo) / 2.0 * us);
    let (change, change_lo, change_hi) = match base {
        None => (f64::NAN, f64::NAN, f64::NAN),
        Some(b) => split(pooled::change(xs, b, q)),
    };
    Cell {
        mean,
        ci,
        change,
        change_lo,
        change_hi,
    }
}

fn split(c: Option<(f64, Option<(f64, f64)>)>) -> (f64, f64, f64) {
    match c {
        None => (f64::NAN, f64::NAN, f64::NAN),
        Some((c, None)) => (c, f64::NAN, f64::NAN),
        Some((c, Some((lo, hi)))) => (c, lo, hi),
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
