//! `superpass-sim`: run Android-like scenarios under the stock scheduler, its baselines and
//! SuperPass, and report the results in the paper's terms.

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use superpass_sim::compare::{compare_with, CompareOpts, Comparison};
use superpass_sim::plot_tail::tail_svg;
use superpass_sim::report::{self, ReportOpts};
use superpass_sim::sim::RunOpts;
use superpass_sim::workload::{Placement, SCENARIOS};
use superpass_sim::{plot, policy, run_with, Policy, Scenario};

/// Discrete-event simulator of a Pixel 8-like phone's scheduler and locks.
///
/// A phone can't be put in CI; this runs Android-scale workloads (scrolling at 60/90/120 Hz,
/// app launch, heavy background, binder-heavy, an exhausted binder pool, an rwsem reader storm,
/// scrolling under paper-scale load, and the frame loop of the real-kernel guest test sp-frames
/// on its two vCPUs) against the stock scheduler, Linux priority inheritance and an idealised one, RT-UI
/// promotion, Proxy Execution (single-runqueue and with donor migration) and SuperPass with and
/// without futex owner hints, whose decisions come from superpass-core.
///
/// Examples:
///   superpass-sim list
///   superpass-sim compare --scenario scroll-120 --seconds 10 --seeds 10
///   superpass-sim compare --scenario rwsem-storm --json --plot storm.svg
///   superpass-sim compare --scenario heavy-background --policies default,superpass --explain
///   superpass-sim run --scenario scroll-120 --policy superpass --trace out.pftrace
///   superpass-sim compare --scenario paper-scroll-120 --placement little --tail-plot t.svg
///   superpass-sim report          # regenerates docs/results.md (run from the workspace root)
///
/// The model and its sources: docs/sim.md. Metric definitions: docs/metrics.md.
#[derive(Parser, Debug)]
#[command(name = "superpass-sim", version, verbatim_doc_comment)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Where the scenario comes from.
#[derive(clap::Args, Debug)]
struct ScenarioArg {
    /// Built-in scenario name (see `superpass-sim list`).
    #[arg(long, default_value = "scroll-120", conflicts_with = "scenario_file")]
    scenario: String,
    /// A scenario TOML file instead of a built-in one (format: sim/scenarios/*.toml).
    #[arg(long, value_name = "PATH")]
    scenario_file: Option<PathBuf>,
    /// Where the top app's nice ≥ 10 threads run: `aosp` (its top-app cpuset, as AOSP does)
    /// or `little` (the background cpuset); default: the scenario's (`aosp` unless it says).
    #[arg(long, value_parser = Placement::parse)]
    placement: Option<Placement>,
}

impl ScenarioArg {
    fn load(&self) -> Result<Scenario, String> {
        let mut sc = match &self.scenario_file {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                Scenario::from_toml(&text).map_err(|e| format!("{}: {e}", p.display()))?
            }
            None => Scenario::builtin(&self.scenario)?,
        };
        if let Some(p) = self.placement {
            sc.placement = p;
        }
        Ok(sc)
    }
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run every policy over several seeds and print the paper-form table.
    ///
    /// For each policy and metric: the mean across seeds ± a 95% confidence interval
    /// (Student's t), and the change against `default`, paired by seed (seed s gives every
    /// policy the same per-thread random draws).
    Compare {
        #[command(flatten)]
        scenario: ScenarioArg,
        /// Simulated seconds per run (the first `warmup_ms` are not measured).
        #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
        seconds: f64,
        /// Number of seeds (1..=N); each policy runs once per seed.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
        seeds: u64,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// Also show the secondary metrics (p50/p99/max, blocker-state breakdown).
        #[arg(long)]
        wide: bool,
        /// Comma-separated policies (default: all).
        #[arg(long, value_delimiter = ',')]
        policies: Vec<String>,
        /// Write the blocking-duration CDF per policy as SVG.
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
        /// Write the tail (fraction of waits longer than x, log-log, p99 and p99.9 marked) per
        /// policy as SVG.
        #[arg(long, value_name = "OUT.svg")]
        tail_plot: Option<PathBuf>,
        /// Worker threads (default: available cores). Output does not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Show progress on stderr (default: when stderr is a terminal).
        #[arg(long)]
        progress: bool,
        /// Instead of the table, itemize each policy's worst 1% and 0.1% of waits: their time
        /// by blocker state, by lock and by finer kind (whose state, whether a policy helped
        /// it, the CPU's capacity and what ran there), with the policy's counters.
        #[arg(long, conflicts_with = "json")]
        explain: bool,
    },
    /// Run one policy once; optionally write a Perfetto trace.
    Run {
        #[command(flatten)]
        scenario: ScenarioArg,
        /// Policy (see `superpass-sim list`).
        #[arg(long)]
        policy: String,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Simulated seconds.
        #[arg(long, default_value_t = 2.0, value_parser = parse_seconds)]
        seconds: f64,
        /// Write a Perfetto trace (sched_switch/sched_waking per CPU, thread names, lockwait,
        /// lockhold, frame and SuperPass grant slices). Open it at ui.perfetto.dev.
        #[arg(long, value_name = "OUT.pftrace")]
        trace: Option<PathBuf>,
        /// Write the blocking-duration CDF as SVG.
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
        /// Print the run summary and every blocking interval as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Regenerate the results document: every built-in scenario under both placements and
    /// every policy, with the paper and baseline summaries and one tail plot per scenario.
    /// Run it from the workspace root.
    Report {
        /// Simulated seconds per run.
        #[arg(long, default_value_t = 30.0, value_parser = parse_seconds)]
        seconds: f64,
        /// Seeds per policy.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(2..=1000))]
        seeds: u64,
        /// Output Markdown file.
        #[arg(long, default_value = "docs/results.md")]
        out: PathBuf,
        /// Directory for the plots (relative to the same directory as `--out`).
        #[arg(long, default_value = "sim/plots")]
        img_dir: PathBuf,
        /// Worker threads (default: available cores). Output does not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// List the built-in scenarios and the policies.
    List,
    /// Print a built-in scenario's TOML (a starting point for --scenario-file).
    Show {
        /// Built-in scenario name.
        scenario: String,
    },
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if !(0.01..=3600.0).contains(&v) {
        return Err("seconds must be in 0.01..=3600".into());
    }
    Ok(v)
}

fn main() -> ExitCode {
    match real_main(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("superpass-sim: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Cmd::List => {
            println!("scenarios:");
            for s in SCENARIOS {
                let sc = Scenario::builtin(s)?;
                println!("  {s:18} {}", sc.description);
            }
            println!("policies: {}", policy::NAMES.join(", "));
            Ok(())
        }
        Cmd::Show { scenario } => {
            let t = Scenario::builtin_text(&scenario).ok_or_else(|| {
                format!(
                    "unknown scenario `{scenario}`; built-in: {}",
                    SCENARIOS.join(", ")
                )
            })?;
            print!("{t}");
            Ok(())
        }
        Cmd::Compare {
            scenario,
            seconds,
            seeds,
            json,
            wide,
            policies,
            plot: plot_path,
            tail_plot,
            jobs,
            progress,
            explain,
        } => {
            let sc = scenario.load()?;
            let pols: Vec<Policy> = if policies.is_empty() {
                Policy::all().collect()
            } else {
                policies
                    .iter()
                    .map(|p| Policy::parse(p))
                    .collect::<Result<_, _>>()?
            };
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let o = CompareOpts {
                jobs,
                progress: progress || std::io::stderr().is_terminal(),
                explain,
            };
            let c: Comparison = compare_with(&sc, &pols, seconds, seeds, &o);
            if explain {
                print!("{}", c.explain(&[0.01, 0.001]));
            } else if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&c.json()).map_err(|e| e.to_string())?
                );
            } else {
                print!("{}", c.table(wide));
                if let Some(t) = c.binder_table() {
                    print!("\nSynchronous binder calls of the UI thread and RenderThread, from the call to the receipt of the reply:\n\n{t}");
                }
            }
            if let Some(p) = plot_path {
                let title = format!(
                    "{}: blocking CDF ({} s × {} seeds)",
                    sc.name, seconds, seeds
                );
                std::fs::write(&p, plot::cdf_svg(&title, &c.pooled_durations()))
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            if let Some(p) = tail_plot {
                let title = format!(
                    "{}: waits longer than x ({} s × {} seeds)",
                    sc.name, seconds, seeds
                );
                std::fs::write(&p, tail_svg(&title, &c.pooled_durations()))
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            Ok(())
        }
        Cmd::Report {
            seconds,
            seeds,
            out,
            img_dir,
            jobs,
        } => {
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let o = ReportOpts {
                seconds,
                seeds,
                jobs,
                progress: true,
            };
            report::write(&o, &out, &img_dir)?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
        Cmd::Run {
            scenario,
            policy,
            seed,
            seconds,
            trace,
            plot: plot_path,
            json,
        } => {
            let sc = scenario.load()?;
            let p = Policy::parse(&policy)?;
            let o = RunOpts {
                trace: trace.is_some(),
                ..RunOpts::default()
            };
            let (r, bytes) = run_with(&sc, p, seed, seconds, &o);
            if let (Some(path), Some(b)) = (&trace, bytes) {
                std::fs::write(path, b).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            let s = r.summary();
            if json {
                let v = serde_json::json!({ "summary": s, "run": r });
                println!(
                    "{}",
                    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
                );
            } else {
                println!("{} / {} / seed {} / {} s: {} frames, {} janky; {} blockings, p50 {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs, max {:.0} µs; policy CPU {:.3}%; background share {:.1}%; {} events",
                    sc.name, p.0, seed, seconds, r.frames, r.janky, r.blocking.len(), s.p50_blocking_us, s.p99_blocking_us, s.p999_blocking_us, s.max_blocking_us, s.cpu_overhead_pct, s.background_share_pct, r.events);
                if let Some(path) = &trace {
                    println!("trace: {}", path.display());
                }
            }
            if let Some(path) = plot_path {
                let title = format!("{} / {}: blocking CDF", sc.name, p.0);
                std::fs::write(
                    &path,
                    plot::cdf_svg(&title, &[(p.0.to_string(), r.sorted_durations())]),
                )
                .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(())
        }
    }
}
