//! Run metrics in the paper's terms: critical-thread blocking intervals and their tail,
//! blocking count, where the blocker was during each blocking, janky frames, the policy's
//! CPU overhead and the CPU share background threads kept. Definitions: `docs/metrics.md`.

use crate::explain::{Parts, Seg};
use crate::policy::PolicyStats;
use crate::sched::Tid;
use serde::Serialize;

/// Where the blocker was during part of a blocking interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cat {
    /// The root blocker slept (I/O, timer, binder, a lock without a known owner).
    Asleep = 0,
    /// The root blocker was runnable, waiting for a CPU.
    Runnable = 1,
    /// The root blocker was running.
    Running = 2,
    /// The lock was handed to the waiter (or it was woken to retry) and it waited for a CPU.
    SelfWait = 3,
    /// The futex was free and another waiter, woken by the release, was yet to retry it: the
    /// critical thread still slept (a woken non-critical waiter, not the critical one).
    OtherWoken = 4,
}

/// One critical-thread lock wait, from the first failed attempt until it runs holding the lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocking {
    /// The critical thread.
    pub tid: Tid,
    /// Lock name.
    pub lock: String,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// Time the root blocker slept.
    pub asleep_ns: u64,
    /// Time the root blocker was runnable.
    pub runnable_ns: u64,
    /// Time the root blocker ran.
    pub running_ns: u64,
    /// Time the waiter itself waited for a CPU with the lock available.
    pub self_ns: u64,
    /// Time the futex was free while another woken waiter was yet to retry it.
    pub other_woken_ns: u64,
    /// Whether the waiter is the UI thread (otherwise RenderThread).
    pub ui: bool,
    /// Still waiting when the run ended: `end_ns` is the run's end, so the wait was at least
    /// this long.
    pub open: bool,
}

impl Blocking {
    /// Duration in ns.
    pub fn dur(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// A blocking interval in progress.
#[derive(Clone, Debug)]
pub struct Active {
    /// Waiting task index.
    pub task: u32,
    /// Lock index.
    pub lock: u32,
    /// Start time.
    pub start: u64,
    /// Time accounted up to.
    pub last: u64,
    /// Category since `last`.
    pub cat: Cat,
    /// ns per category.
    pub acc: [u64; 5],
    /// The finer kind of part since `last` (with `RunOpts::explain`).
    pub seg: Seg,
    /// ns per finer kind of part (with `RunOpts::explain`; empty otherwise).
    pub parts: Parts,
}

/// Per-lock counters over the measured window (for explaining blocking counts).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockStat {
    /// Lock name.
    pub lock: String,
    /// Successful acquisitions by any thread (grants included).
    pub acquisitions: u64,
    /// Lock operations started by critical threads.
    pub critical_attempts: u64,
    /// Of which found the lock unavailable and started a blocking interval.
    pub critical_contended: u64,
    /// Time the lock had at least one holder, ns.
    pub held_ns: u64,
    /// Time the lock had an exclusive owner (mutex/futex owner, rwsem writer), ns.
    pub owned_ns: u64,
    /// Time at least one task waited on it, ns.
    pub waited_ns: u64,
}

/// Everything one run produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResult {
    /// Scenario name.
    pub scenario: String,
    /// Policy name.
    pub policy: String,
    /// Seed.
    pub seed: u64,
    /// Simulated seconds (including warmup).
    pub seconds: f64,
    /// Measured window, ns (after warmup).
    pub measured_ns: u64,
    /// CPUs.
    pub nr_cpus: u32,
    /// Critical-thread blocking intervals that started after warmup.
    pub blocking: Vec<Blocking>,
    /// Critical threads' synchronous binder calls that started after warmup, from the call
    /// to the caller's receipt of the reply, in ns (calls still open at the end are left out).
    pub binder_ns: Vec<u64>,
    /// Frames completed after warmup.
    pub frames: u64,
    /// Of which missed their deadline.
    pub janky: u64,
    /// CPU busy time, ns.
    pub busy_ns: u64,
    /// CPU time charged to the policy's hooks, ns.
    pub policy_ns: u64,
    /// CPU time of context switches and migrations, ns.
    pub switch_ns: u64,
    /// Context switches.
    pub switches: u64,
    /// CPU time of background-group threads, ns.
    pub background_ns: u64,
    /// CPU time of all threads, ns.
    pub task_ns: u64,
    /// Simulated events processed.
    pub events: u64,
    /// Per-lock counters, in scenario order.
    pub locks: Vec<LockStat>,
    /// Policy counters.
    #[serde(skip)]
    pub policy_stats: PolicyStats,
    /// Per blocking interval (same order as `blocking`), its time itemized (only with
    /// `RunOpts::explain`; empty otherwise).
    #[serde(skip)]
    pub explained: Vec<Parts>,
}

/// The per-run numbers the compare table is built from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Median blocking, µs.
    pub p50_blocking_us: f64,
    /// 99th percentile blocking, µs.
    pub p99_blocking_us: f64,
    /// 99.9th percentile blocking, µs.
    pub p999_blocking_us: f64,
    /// Longest blocking, µs.
    pub max_blocking_us: f64,
    /// Blocking intervals in the measured window.
    pub blocking_count: f64,
    /// Of which lasted at least 1 ms.
    pub blocking_count_ge1ms: f64,
    /// Of which lasted at least 2 ms.
    pub blocking_count_ge2ms: f64,
    /// Blocking intervals per completed frame (0 without frames).
    pub blocking_per_frame: f64,
    /// Total blocking time per second, ms.
    pub blocking_ms_per_s: f64,
    /// Frames that missed their deadline in the measured window.
    pub janky_frames: f64,
    /// Janky frames as a percentage of frames.
    pub janky_pct: f64,
    /// Policy CPU time as a percentage of busy CPU time.
    pub cpu_overhead_pct: f64,
    /// Background threads' CPU time as a percentage of all threads' CPU time.
    pub background_share_pct: f64,
    /// Share of blocking time with the root blocker asleep, %.
    pub blocker_asleep_pct: f64,
    /// Share with the root blocker runnable, %.
    pub blocker_runnable_pct: f64,
    /// Share with the root blocker running, %.
    pub blocker_running_pct: f64,
    /// Share with the waiter waiting for a CPU itself, %.
    pub waiter_runnable_pct: f64,
    /// Share with the futex free and another woken waiter yet to retry it, %.
    pub other_woken_pct: f64,
}

/// Whose waits a summary covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiters {
    /// The UI thread and RenderThread.
    Critical,
    /// The UI thread only.
    Ui,
}

impl Waiters {
    /// Whether `b` is one of these waiters' waits.
    pub fn has(self, b: &Blocking) -> bool {
        match self {
            Waiters::Critical => true,
            Waiters::Ui => b.ui,
        }
    }
}

/// Nearest-rank percentile of sorted values (`q` in 0..=1); 0 when empty.
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

impl RunResult {
    /// Blocking durations, sorted, in ns.
    pub fn sorted_durations(&self) -> Vec<u64> {
        self.sorted_durations_of(Waiters::Critical)
    }

    /// Blocking durations of `who`, sorted, in ns.
    pub fn sorted_durations_of(&self, who: Waiters) -> Vec<u64> {
        let mut d: Vec<u64> = self
            .blocking
            .iter()
            .filter(|b| who.has(b))
            .map(Blocking::dur)
            .collect();
        d.sort_unstable();
        d
    }

    /// The summary numbers over every critical thread's waits.
    pub fn summary(&self) -> Summary {
        self.summary_of(Waiters::Critical)
    }

    /// The summary numbers over `who`'s waits (frame, CPU and background figures are the
    /// run's).
    pub fn summary_of(&self, who: Waiters) -> Summary {
        let d = self.sorted_durations_of(who);
        let us = |ns: u64| ns as f64 / 1000.0;
        let secs = (self.measured_ns as f64 / 1e9).max(1e-9);
        let total: u64 = d.iter().sum();
        let mut acc = [0u64; 5];
        for b in self.blocking.iter().filter(|b| who.has(b)) {
            acc[0] += b.asleep_ns;
            acc[1] += b.runnable_ns;
            acc[2] += b.running_ns;
            acc[3] += b.self_ns;
            acc[4] += b.other_woken_ns;
        }
        let at_least = |ns: u64| d.len() - d.partition_point(|&x| x < ns);
        let share = |x: u64| {
            if total == 0 {
                0.0
            } else {
                100.0 * x as f64 / total as f64
            }
        };
        let pct = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        Summary {
            p50_blocking_us: us(percentile(&d, 0.5)),
            p99_blocking_us: us(percentile(&d, 0.99)),
            p999_blocking_us: us(percentile(&d, 0.999)),
            max_blocking_us: us(d.last().copied().unwrap_or(0)),
            blocking_count: d.len() as f64,
            blocking_count_ge1ms: at_least(1_000_000) as f64,
            blocking_count_ge2ms: at_least(2_000_000) as f64,
            blocking_per_frame: if self.frames == 0 {
                0.0
            } else {
                d.len() as f64 / self.frames as f64
            },
            blocking_ms_per_s: total as f64 / 1e6 / secs,
            janky_frames: self.janky as f64,
            janky_pct: pct(self.janky, self.frames),
            cpu_overhead_pct: pct(self.policy_ns, self.busy_ns),
            background_share_pct: pct(self.background_ns, self.task_ns),
            blocker_asleep_pct: share(acc[0]),
            blocker_runnable_pct: share(acc[1]),
            blocker_running_pct: share(acc[2]),
            waiter_runnable_pct: share(acc[3]),
            other_woken_pct: share(acc[4]),
        }
    }
}
