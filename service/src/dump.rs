//! The service's report — state, active hooks, stats, tunables — as text or JSON.
//!
//! The report is built from the AIDL getters, so the service's `dump` (what `dumpsys`
//! prints) and `superpassctl dump` over any transport print the same thing, except the RT-UI
//! line: that setting has no interface method, so only the service's own dump fills it in.

use std::fmt::Write as _;

use rsbinder::BinderResult;
use serde::Serialize;

use crate::aidl::ISuperPass;

/// Everything `dumpsys vendor.superpass.ISuperPass/default` shows.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// What the service holds.
    pub service: ServiceView,
    /// The module's statistics.
    pub stats: StatsView,
    /// Every tunable.
    pub tunables: Vec<TunableView>,
}

/// The service part of the report.
#[derive(Clone, Debug, Serialize)]
pub struct ServiceView {
    /// The service name.
    pub name: &'static str,
    /// Interface version served.
    pub interface_version: i32,
    /// ABI version of the module.
    pub abi_version: i32,
    /// "device" or "memory".
    pub backend: String,
    /// Whether the fast track is on.
    pub enabled: bool,
    /// Whether foreground discovery runs.
    pub foreground_discovery: bool,
    /// The foreground app's pid, if any.
    pub foreground_pid: Option<i32>,
    /// Client tokens watched for death.
    pub clients: i32,
    /// The merged critical set.
    pub critical_threads: Vec<ThreadView>,
    /// RT-UI, where the service itself answers (`dumpsys`, `cmd`); absent over a client proxy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fifo: Option<crate::rtui::Status>,
}

/// One critical thread.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadView {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// "ui", "render" or "other".
    pub role: &'static str,
    /// Who registered it.
    pub owner: String,
}

/// The stats part of the report.
#[derive(Clone, Debug, Serialize)]
pub struct StatsView {
    /// Critical threads the module holds.
    pub critical_threads: i32,
    /// The module's critical-set generation.
    pub generation: i64,
    /// Tasks boosted right now.
    pub boosted: i64,
    /// The active-mechanism mask.
    pub active_mask: String,
    /// The active hooks and mechanisms, by name.
    pub active_hooks: Vec<String>,
    /// Blocking durations of critical threads.
    pub blocked: BlockedView,
    /// Named counters, in module order.
    pub counters: Vec<(String, i64)>,
}

/// Blocking-duration summary.
#[derive(Clone, Debug, Serialize)]
pub struct BlockedView {
    /// Samples.
    pub samples: i64,
    /// Minimum (ns).
    pub min_ns: i64,
    /// Median (ns).
    pub p50_ns: i64,
    /// 90th percentile (ns).
    pub p90_ns: i64,
    /// 99th percentile (ns).
    pub p99_ns: i64,
    /// Maximum (ns).
    pub max_ns: i64,
    /// Non-empty buckets: (low ns, width ns, count).
    pub histogram: Vec<(i64, i64, i64)>,
}

/// One tunable.
#[derive(Clone, Debug, Serialize)]
pub struct TunableView {
    /// Name.
    pub name: String,
    /// Value in force.
    pub value: i64,
    /// Default.
    pub default: i64,
    /// Smallest accepted.
    pub min: i64,
    /// Largest accepted.
    pub max: i64,
    /// Unit.
    pub unit: String,
    /// What it bounds.
    pub doc: String,
}

fn role_name(r: crate::aidl::Role) -> &'static str {
    match r.0 {
        0 => "ui",
        1 => "render",
        2 => "other",
        _ => "?",
    }
}

impl Report {
    /// Collects the report through the interface.
    pub fn collect(svc: &dyn ISuperPass) -> BinderResult<Self> {
        let st = svc.getState()?;
        let stats = svc.getStats()?;
        let tunables = svc.getTunables()?;
        Ok(Self {
            service: ServiceView {
                name: crate::SERVICE_NAME,
                interface_version: svc.getInterfaceVersion()?,
                abi_version: st.abiVersion,
                backend: st.backend,
                enabled: st.enabled,
                foreground_discovery: st.foregroundDiscovery,
                foreground_pid: (st.foregroundPid > 0).then_some(st.foregroundPid),
                clients: st.clients,
                critical_threads: st
                    .registrations
                    .into_iter()
                    .map(|r| ThreadView {
                        tid: r.tid,
                        pid: r.pid,
                        role: role_name(r.role),
                        owner: r.owner,
                    })
                    .collect(),
                fifo: None,
            },
            stats: StatsView {
                critical_threads: stats.criticalThreads,
                generation: stats.generation,
                boosted: stats.boosted,
                active_mask: format!("{:#x}", stats.activeMask),
                active_hooks: stats.activeMechanisms,
                blocked: BlockedView {
                    samples: stats.blockedSamples,
                    min_ns: stats.blockedMinNs,
                    p50_ns: stats.blockedP50Ns,
                    p90_ns: stats.blockedP90Ns,
                    p99_ns: stats.blockedP99Ns,
                    max_ns: stats.blockedMaxNs,
                    histogram: stats
                        .blockedHistogram
                        .iter()
                        .map(|b| (b.lowNs, b.widthNs, b.count))
                        .collect(),
                },
                counters: stats
                    .counters
                    .into_iter()
                    .map(|c| (c.name, c.value))
                    .collect(),
            },
            tunables: tunables
                .into_iter()
                .map(|t| TunableView {
                    name: t.name,
                    value: t.value,
                    default: t.defaultValue,
                    min: t.min,
                    max: t.max,
                    unit: t.unit,
                    doc: t.doc,
                })
                .collect(),
        })
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The report as text for humans: state, statistics, tunables.
    pub fn to_text(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.state_text(),
            self.stats_text(),
            self.tunables_text()
        )
    }

    /// The state section: mode, foreground app, critical threads with their owners.
    pub fn state_text(&self) -> String {
        let s = &self.service;
        let mut o = String::new();
        let on = |b: bool| if b { "on" } else { "off" };
        let _ = writeln!(o, "SuperPass HAL service ({})", s.name);
        let _ = writeln!(
            o,
            "  interface v{}, module ABI v{}, backend {}",
            s.interface_version, s.abi_version, s.backend
        );
        let _ = writeln!(
            o,
            "  fast track: {}   foreground discovery: {}   clients watched: {}",
            on(s.enabled),
            on(s.foreground_discovery),
            s.clients
        );
        if let Some(f) = &s.fifo {
            let _ = writeln!(o, "  RT-UI (fifo): {}", f.summary());
        }
        match s.foreground_pid {
            Some(p) => {
                let _ = writeln!(o, "  foreground app: pid {p}");
            }
            None => {
                let _ = writeln!(o, "  foreground app: none");
            }
        }
        let _ = writeln!(
            o,
            "\nCritical threads ({}/{}):",
            s.critical_threads.len(),
            crate::registry::Registry::MAX
        );
        if s.critical_threads.is_empty() {
            let _ = writeln!(o, "  (none)");
        } else {
            let _ = writeln!(o, "  {:>8} {:>8}  {:<7} OWNER", "TID", "PID", "ROLE");
            for t in &s.critical_threads {
                let _ = writeln!(o, "  {:>8} {:>8}  {:<7} {}", t.tid, t.pid, t.role, t.owner);
            }
        }
        o
    }

    /// The statistics section: active hooks, counters, blocking percentiles.
    pub fn stats_text(&self) -> String {
        let mut o = String::new();
        let st = &self.stats;
        let _ = writeln!(
            o,
            "Active hooks ({}, mask {}): {}",
            st.active_hooks.len(),
            st.active_mask,
            if st.active_hooks.is_empty() {
                "none".to_string()
            } else {
                st.active_hooks.join(", ")
            }
        );
        let b = &st.blocked;
        let _ = writeln!(
            o,
            "\nStats:\n  critical threads in module: {}   generation: {}   boosted now: {}",
            st.critical_threads, st.generation, st.boosted
        );
        let _ = writeln!(
            o,
            "  critical-thread blocking: {} samples  min {}  p50 {}  p90 {}  p99 {}  max {}",
            b.samples,
            ns(b.min_ns),
            ns(b.p50_ns),
            ns(b.p90_ns),
            ns(b.p99_ns),
            ns(b.max_ns)
        );
        for (name, v) in &st.counters {
            let _ = writeln!(o, "  {name:<24} {v}");
        }
        o
    }

    /// The tunables section, with ranges.
    pub fn tunables_text(&self) -> String {
        let s = &self.service;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "Tunables (set with: dumpsys {} set <name> <value>):",
            s.name
        );
        let _ = writeln!(
            o,
            "  {:<20} {:>12} {:>12}  {:<25} UNIT",
            "NAME", "VALUE", "DEFAULT", "RANGE"
        );
        for t in &self.tunables {
            let _ = writeln!(
                o,
                "  {:<20} {:>12} {:>12}  {:<25} {}",
                t.name,
                t.value,
                t.default,
                format!("[{}, {}]", t.min, t.max),
                t.unit
            );
        }
        o
    }

    /// The state section as pretty JSON.
    pub fn state_json(&self) -> String {
        serde_json::to_string_pretty(&self.service)
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The statistics section as pretty JSON.
    pub fn stats_json(&self) -> String {
        serde_json::to_string_pretty(&self.stats)
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// A duration in ns, in the largest unit that keeps it readable.
pub fn ns(v: i64) -> String {
    match v {
        v if v >= 1_000_000_000 => format!("{:.2}s", v as f64 / 1e9),
        v if v >= 1_000_000 => format!("{:.2}ms", v as f64 / 1e6),
        v if v >= 1_000 => format!("{:.1}us", v as f64 / 1e3),
        v => format!("{v}ns"),
    }
}
