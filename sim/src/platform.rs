//! The simulated phone: CPUs with relative capacities, cpuset groups and scheduler constants.
//!
//! Every default is cited or marked as an assumption in `docs/sim.md`.

use serde::{Deserialize, Serialize};

/// One CPU cluster: a run of CPUs sharing a core type.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cluster {
    /// Core type, for display only.
    pub name: String,
    /// How many CPUs the cluster has.
    pub count: u32,
    /// Relative capacity, the fastest core being 1024 (Linux `capacity_orig` scale).
    pub capacity: u32,
}

/// A cpuset/cgroup: which CPUs its threads may run on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Group {
    /// cgroup name as on Android (`top-app`, `foreground`, `background`, ...).
    pub name: String,
    /// Allowed CPUs, as indices.
    pub cpus: Vec<u32>,
    /// Whether the group counts as background for the fairness-cost metric.
    #[serde(default)]
    pub background: bool,
}

/// The whole platform model.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Platform {
    /// CPU clusters in CPU-number order (little first).
    pub clusters: Vec<Cluster>,
    /// cpusets.
    pub groups: Vec<Group>,
    /// Scheduler tick period (CONFIG_HZ=250).
    pub tick_ns: u64,
    /// EEVDF base slice (`sysctl_sched_base_slice`, scaled by 1 + ilog2(nr_cpus)).
    pub base_slice_ns: u64,
    /// Wall time a context switch costs the CPU.
    pub context_switch_ns: u64,
    /// Extra wall time a migration costs the destination CPU (cache refill).
    pub migration_ns: u64,
}

impl Default for Platform {
    fn default() -> Self {
        Self::pixel8()
    }
}

impl Platform {
    /// A Pixel 8-like (Tensor G3) phone: 4 little, 4 mid, 1 big core.
    pub fn pixel8() -> Self {
        let g = |name: &str, cpus: &[u32], bg: bool| Group {
            name: name.into(),
            cpus: cpus.to_vec(),
            background: bg,
        };
        Platform {
            clusters: vec![
                Cluster {
                    name: "Cortex-A510".into(),
                    count: 4,
                    capacity: 256,
                },
                Cluster {
                    name: "Cortex-A715".into(),
                    count: 4,
                    capacity: 640,
                },
                Cluster {
                    name: "Cortex-X3".into(),
                    count: 1,
                    capacity: 1024,
                },
            ],
            groups: vec![
                g("top-app", &[0, 1, 2, 3, 4, 5, 6, 7, 8], false),
                g("foreground", &[0, 1, 2, 3, 4, 5, 6, 7], false),
                g("system", &[0, 1, 2, 3, 4, 5, 6, 7, 8], false),
                g("background", &[0, 1, 2, 3], true),
                g("system-background", &[0, 1, 2, 3], true),
            ],
            tick_ns: 4_000_000,
            base_slice_ns: 3_000_000,
            context_switch_ns: 3_000,
            migration_ns: 10_000,
        }
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> u32 {
        self.clusters.iter().map(|c| c.count).sum()
    }

    /// Capacity of each CPU, indexed by CPU number.
    pub fn capacities(&self) -> Vec<u32> {
        self.clusters
            .iter()
            .flat_map(|c| std::iter::repeat_n(c.capacity, c.count as usize))
            .collect()
    }

    /// The allowed-CPU mask of a group, or `None` if no group has that name.
    pub fn group_mask(&self, name: &str) -> Option<u64> {
        self.groups
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.cpus.iter().fold(0u64, |m, &c| m | (1 << c)))
    }

    /// Index of a group by name.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.name == name)
    }
}
