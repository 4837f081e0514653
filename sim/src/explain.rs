//! Itemizing the worst waits: where the time of the longest critical waits went, by the
//! blocker's state and by what the scheduler and the policy were doing meanwhile.
//!
//! With `RunOpts::explain`, every part of a blocking interval (the pieces `metrics::Cat`
//! cuts it into) also records a [`Seg`]: whose state decided the category, whether a policy
//! was helping that task, the capacity of the CPU it ran or waited on, what occupied the CPU
//! that mattered, and whether SuperPass had throttled that CPU. [`Tail::of`] pools the
//! intervals of several runs, keeps the longest `frac` of them and sums their parts per
//! category and per segment. Definitions: docs/metrics.md, "Itemizing the tail".

use crate::metrics::{Cat, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// What occupied the CPU that mattered for a part of a wait.
///
/// For a runnable blocker, or a waiter runnable itself, it is what ran on the CPU it was
/// queued on; for a running blocker on a slower CPU than it may use, it is what ran on the
/// fastest CPU it may use (so `Idle` there means it could have run faster).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Occ {
    /// Not applicable (asleep, or running on the fastest CPU it may use).
    None,
    /// Nothing ran there.
    Idle,
    /// An RT task.
    Rt,
    /// A critical thread (the UI thread or RenderThread).
    Critical,
    /// A task a policy was helping (SuperPass-boosted, or running with inherited parameters).
    Helped,
    /// Any other fair task.
    Fair,
}

impl Occ {
    fn name(self) -> &'static str {
        match self {
            Occ::None => "",
            Occ::Idle => "idle",
            Occ::Rt => "an RT task",
            Occ::Critical => "a critical thread",
            Occ::Helped => "a helped task",
            Occ::Fair => "another fair task",
        }
    }
}

/// Whose state a part of a wait was decided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// No task (a free futex, or a blocker the chain could not name).
    Nobody,
    /// The other critical thread (the UI thread holds what RenderThread waits for, or back).
    Critical,
    /// A non-critical task.
    Other,
    /// The waiter itself (the lock was handed to it).
    Waiter,
}

/// One kind of part of a blocking interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seg {
    /// The blocker-state category.
    pub cat: Cat,
    /// Whose state decided it.
    pub subject: Subject,
    /// Whether a policy was helping the subject (a SuperPass grant, or inherited parameters).
    pub helped: bool,
    /// Capacity of the subject's CPU (its runqueue's when runnable); 0 when asleep.
    pub cap: u32,
    /// The highest capacity among the CPUs the subject may use, when it runs; 0 otherwise.
    pub top: u32,
    /// What occupied the CPU that mattered (see [`Occ`]).
    pub occ: Occ,
    /// Whether SuperPass had throttled that CPU.
    pub throttled: bool,
}

impl Seg {
    /// A part with nothing more to say than its category.
    pub fn bare(cat: Cat) -> Self {
        Seg {
            cat,
            subject: Subject::Nobody,
            helped: false,
            cap: 0,
            top: 0,
            occ: Occ::None,
            throttled: false,
        }
    }

    /// A one-line description, e.g. "blocker running, helped, cap 256; fastest CPU: a
    /// critical thread".
    pub fn label(&self) -> String {
        let mut s = String::from(cat_name(self.cat));
        match self.subject {
            Subject::Critical => s.push_str(" (the other critical thread)"),
            Subject::Nobody | Subject::Other | Subject::Waiter => {}
        }
        if self.cat == Cat::Asleep || self.subject == Subject::Nobody {
            return s;
        }
        let _ = write!(
            s,
            ", {}, cap {}",
            if self.helped { "helped" } else { "not helped" },
            self.cap
        );
        if self.occ != Occ::None {
            let place = if self.cat == Cat::Running {
                "; a faster CPU it may use ran"
            } else {
                "; its CPU ran"
            };
            let _ = write!(s, "{place} {}", self.occ.name());
        }
        if self.throttled {
            s.push_str(" (throttled)");
        }
        s
    }
}

/// The category names, in [`Cat`] order.
pub const CAT_NAMES: [&str; 5] = [
    "blocker asleep",
    "blocker runnable",
    "blocker running",
    "waiter runnable",
    "other waiter woken",
];

fn cat_name(c: Cat) -> &'static str {
    CAT_NAMES[c as usize]
}

/// The itemized time of one blocking interval (parallel to `RunResult::blocking`).
pub type Parts = Vec<(Seg, u64)>;

/// Adds `ns` of `seg` to `parts`.
pub fn add(parts: &mut Parts, seg: Seg, ns: u64) {
    if ns == 0 {
        return;
    }
    match parts.iter_mut().find(|(s, _)| *s == seg) {
        Some((_, t)) => *t += ns,
        None => parts.push((seg, ns)),
    }
}

/// The worst `frac` of the waits pooled over some runs, itemized.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tail {
    /// The fraction kept (0.01 = the worst 1%).
    pub frac: f64,
    /// Waits pooled.
    pub pooled: usize,
    /// Waits kept (`ceil(frac × pooled)`).
    pub kept: usize,
    /// The shortest wait kept, ns.
    pub threshold_ns: u64,
    /// Their total time, ns.
    pub total_ns: u64,
    /// Per category, ns (in [`Cat`] order).
    pub by_cat: [u64; 5],
    /// Per segment label, ns, longest first.
    pub by_seg: Vec<(String, u64)>,
    /// Per lock, ns, longest first.
    pub by_lock: Vec<(String, u64)>,
    /// The same quantile as `threshold_ns` of every pooled wait's floor: the time its
    /// blockers slept plus the time they ran, scaled to the fastest CPU each may use. No CPU
    /// policy shortens a holder's sleep or runs its work faster than its fastest allowed CPU,
    /// so a tail below it is out of any scheduler's reach (an estimate: another policy's waits
    /// are not the same waits).
    pub floor_ns: u64,
}

impl Tail {
    /// The worst `frac` of the critical waits of `runs` (which must have been run with
    /// `explain`), ties broken by run order then interval order, so the answer is
    /// deterministic.
    pub fn of(runs: &[RunResult], frac: f64) -> Tail {
        let mut all: Vec<(u64, usize, usize)> = runs
            .iter()
            .enumerate()
            .flat_map(|(r, run)| {
                run.blocking
                    .iter()
                    .enumerate()
                    .map(move |(i, b)| (b.dur(), r, i))
            })
            .collect();
        all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let kept = ((frac * all.len() as f64).ceil() as usize).min(all.len());
        let mut t = Tail {
            frac,
            pooled: all.len(),
            kept,
            ..Tail::default()
        };
        let mut segs: BTreeMap<String, u64> = BTreeMap::new();
        let mut locks: BTreeMap<String, u64> = BTreeMap::new();
        for &(d, r, i) in &all[..kept] {
            t.threshold_ns = d;
            t.total_ns += d;
            let b = &runs[r].blocking[i];
            *locks.entry(b.lock.clone()).or_default() += d;
            let by = [
                b.asleep_ns,
                b.runnable_ns,
                b.running_ns,
                b.self_ns,
                b.other_woken_ns,
            ];
            for (a, x) in t.by_cat.iter_mut().zip(by) {
                *a += x;
            }
            for (seg, ns) in runs[r].explained.get(i).into_iter().flatten() {
                *segs.entry(seg.label()).or_default() += ns;
            }
        }
        t.by_seg = sorted(segs);
        t.by_lock = sorted(locks);
        let mut floors: Vec<u64> = runs
            .iter()
            .flat_map(|run| {
                run.blocking.iter().enumerate().map(|(i, b)| {
                    let work: u64 = run
                        .explained
                        .get(i)
                        .into_iter()
                        .flatten()
                        .filter(|(seg, _)| seg.cat == Cat::Running)
                        .map(|(seg, ns)| {
                            ns * u64::from(seg.cap) / u64::from(seg.top.max(seg.cap).max(1))
                        })
                        .sum();
                    b.asleep_ns + work
                })
            })
            .collect();
        floors.sort_unstable_by(|a, b| b.cmp(a));
        t.floor_ns = kept.checked_sub(1).map_or(0, |k| floors[k]);
        t
    }

    /// A Markdown rendering: the categories, then the locks, then the segments that hold at
    /// least `min_share` of the time (the rest summed in one row).
    pub fn render(&self, title: &str, min_share: f64) -> String {
        let mut s = String::new();
        let pct = |x: u64| {
            if self.total_ns == 0 {
                0.0
            } else {
                100.0 * x as f64 / self.total_ns as f64
            }
        };
        let _ = writeln!(
            s,
            "{title}: worst {} % = {} of {} waits (≥ {:.0} µs), {:.1} ms in all",
            self.frac * 100.0,
            self.kept,
            self.pooled,
            self.threshold_ns as f64 / 1e3,
            self.total_ns as f64 / 1e6
        );
        let cats: Vec<String> = CAT_NAMES
            .iter()
            .zip(self.by_cat)
            .filter(|(_, ns)| *ns > 0)
            .map(|(n, ns)| format!("{n} {:.1}%", pct(ns)))
            .collect();
        let _ = writeln!(s, "  by category: {}", cats.join(", "));
        let locks: Vec<String> = self
            .by_lock
            .iter()
            .map(|(n, ns)| format!("{n} {:.1}%", pct(*ns)))
            .collect();
        let _ = writeln!(s, "  by lock: {}", locks.join(", "));
        if self.threshold_ns > 0 {
            let _ = writeln!(
                s,
                "  floor (blockers' sleep + their running on their fastest CPU), same rank: {:.0} µs, {:.0}% of {:.0} µs",
                self.floor_ns as f64 / 1e3,
                100.0 * self.floor_ns as f64 / self.threshold_ns as f64,
                self.threshold_ns as f64 / 1e3
            );
        }
        let mut rest = 0;
        for (label, ns) in &self.by_seg {
            if pct(*ns) >= min_share {
                let _ = writeln!(s, "  {:5.1}%  {label}", pct(*ns));
            } else {
                rest += ns;
            }
        }
        if rest > 0 {
            let _ = writeln!(s, "  {:5.1}%  (smaller parts)", pct(rest));
        }
        s
    }
}

fn sorted(m: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Blocking;

    fn wait(dur: u64, running: u64) -> Blocking {
        Blocking {
            tid: 1,
            lock: "l".into(),
            start_ns: 0,
            end_ns: dur,
            asleep_ns: dur - running,
            runnable_ns: 0,
            running_ns: running,
            self_ns: 0,
            other_woken_ns: 0,
            ui: true,
            open: false,
        }
    }

    #[test]
    fn keeps_the_longest_waits_of_all_runs_and_sums_their_parts() {
        let seg = Seg {
            cap: 256,
            ..Seg::bare(Cat::Running)
        };
        let a = RunResult {
            blocking: vec![wait(10, 4), wait(1000, 600)],
            explained: vec![vec![(seg, 4)], vec![(seg, 600)]],
            ..RunResult::default()
        };
        let b = RunResult {
            blocking: vec![wait(500, 0), wait(20, 0)],
            explained: vec![vec![], vec![]],
            ..RunResult::default()
        };
        let t = Tail::of(&[a, b], 0.5);
        assert_eq!((t.pooled, t.kept, t.threshold_ns), (4, 2, 500));
        assert_eq!(t.total_ns, 1500);
        assert_eq!(t.by_cat[Cat::Running as usize], 600);
        assert_eq!(t.by_cat[Cat::Asleep as usize], 900);
        assert_eq!(t.by_seg, vec![(seg.label(), 600)]);
    }

    #[test]
    fn parts_of_one_kind_merge() {
        let mut p = Parts::new();
        add(&mut p, Seg::bare(Cat::Asleep), 5);
        add(&mut p, Seg::bare(Cat::Asleep), 7);
        add(&mut p, Seg::bare(Cat::Running), 0);
        assert_eq!(p, vec![(Seg::bare(Cat::Asleep), 12)]);
    }
}
