//! SuperPass simulator: a discrete-event model of an Android phone's scheduler and locks that
//! runs scenario workloads under the stock kernel, its baselines and SuperPass.
//!
//! [`run`] is the library entry point: one scenario, one policy, one seed.

pub mod compare;
pub mod engine;
pub mod explain;
pub mod locks;
pub mod metrics;
pub mod platform;
pub mod plot;
pub mod plot_tail;
pub mod policy;
pub mod pooled;
pub mod report;
pub mod rng;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod svg;
pub mod trace;
pub mod transcript;
pub mod workload;

pub use metrics::{Blocking, RunResult, Summary};
use policy::superpass::SuperPass;
pub use workload::Scenario;

/// A policy by name (one of [`policy::NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy(pub &'static str);

impl Policy {
    /// Looks a policy name up.
    pub fn parse(name: &str) -> Result<Self, String> {
        policy::NAMES
            .iter()
            .find(|n| **n == name)
            .map(|n| Policy(n))
            .ok_or_else(|| {
                format!(
                    "unknown policy `{name}`; policies: {}",
                    policy::NAMES.join(", ")
                )
            })
    }

    /// All policies in report order.
    pub fn all() -> impl Iterator<Item = Policy> {
        policy::NAMES.iter().map(|n| Policy(n))
    }
}

/// Runs `sc` under `policy` with `seed` for `seconds` of simulated time.
pub fn run(sc: &Scenario, policy: Policy, seed: u64, seconds: f64) -> RunResult {
    run_with(sc, policy, seed, seconds, &sim::RunOpts::default()).0
}

/// Like [`run`], with options; returns the Perfetto trace bytes when asked for.
pub fn run_with(
    sc: &Scenario,
    policy: Policy,
    seed: u64,
    seconds: f64,
    o: &sim::RunOpts,
) -> (RunResult, Option<Vec<u8>>) {
    // SuperPass runs on a simulator built for its type: its hooks, a few per event, are
    // then direct calls the compiler may inline. The others go through the trait object.
    let out = match policy.0 {
        "superpass" => sim::Sim::new(sc, Box::new(SuperPass::new()), seed, seconds, o).run(),
        "superpass-stock" => {
            sim::Sim::new(sc, Box::new(SuperPass::stock()), seed, seconds, o).run()
        }
        name => {
            let p = policy::by_name(name).expect("Policy holds a known name");
            sim::Sim::new(sc, p, seed, seconds, o).run()
        }
    };
    let bytes = out
        .trace
        .as_ref()
        .map(|l| l.to_pftrace(&out.world, &out.processes));
    (out.res, bytes)
}
