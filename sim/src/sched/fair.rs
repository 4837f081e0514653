//! The fair class: nice weights and EEVDF-like picking (eligible task with the earliest
//! virtual deadline), lag kept across sleeps and migrations.

use super::{Rq, Task};
use crate::locks::TaskIdx;

/// `sched_prio_to_weight` from kernel/sched/core.c, indexed by nice + 20.
pub const WEIGHTS: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// Weight of a nice level.
pub fn weight(nice: i32) -> u64 {
    WEIGHTS[(nice.clamp(-20, 19) + 20) as usize]
}

/// A wall-time amount converted to virtual time at `weight`.
pub fn to_virtual(ns: u64, weight: u64) -> i64 {
    // u64 arithmetic when `ns * 1024` fits (always, in practice): the same quotient without
    // a 128-bit division.
    match ns.checked_mul(1024) {
        Some(n) => (n / weight) as i64,
        None => (ns as u128 * 1024 / weight as u128) as i64,
    }
}

/// The fair entities counted on `rq`: queued tasks plus the running donor if fair.
fn entities<'a>(rq: &'a Rq, tasks: &'a [Task]) -> impl Iterator<Item = TaskIdx> + 'a {
    rq.fair.iter().copied().chain(fair_donor(rq, tasks))
}

/// `rq`'s running donor if it counts as a fair entity (still on the runqueue, fair class).
#[inline(always)]
fn fair_donor(rq: &Rq, tasks: &[Task]) -> Option<TaskIdx> {
    rq.donor
        .filter(|&d| tasks[d as usize].on_rq && !tasks[d as usize].eff.is_rt())
}

/// The load-weighted average vruntime `V` of `rq` (its own clock if empty).
///
/// Inline: runqueues hold few entities (about two on average), so the call and the division
/// cost more than the loop; a lone entity (`V` is its own vruntime) divides nothing.
#[inline]
pub fn avg_vruntime(rq: &Rq, tasks: &[Task]) -> i64 {
    avg_vruntime_with(rq, tasks, fair_donor(rq, tasks))
}

/// [`avg_vruntime`] given [`fair_donor`]. The entities are visited as [`entities`] yields
/// them (queued tasks, then the donor), by plain loops: the chained iterator's state checks
/// cost as much as the sums.
#[inline(always)]
fn avg_vruntime_with(rq: &Rq, tasks: &[Task], donor: Option<TaskIdx>) -> i64 {
    // Exact i64 sums relative to the first entity when nothing overflows (the common case);
    // otherwise the i128 sums of `avg_vruntime_wide`. Both are exact, so the result is the
    // same.
    let (first, rest, last) = match rq.fair.split_first() {
        Some((&f, rest)) => (f, rest, donor),
        None => match donor {
            Some(d) => (d, &[][..], None),
            None => return rq.vclock,
        },
    };
    let first = &tasks[first as usize];
    let r = first.vruntime;
    let (mut sw, mut swv) = (first.weight as i64, 0i64);
    let mut add = |t: TaskIdx| {
        let t = &tasks[t as usize];
        let term = t
            .vruntime
            .checked_sub(r)
            .and_then(|d| d.checked_mul(t.weight as i64));
        match term.and_then(|x| swv.checked_add(x)) {
            Some(v) => {
                swv = v;
                sw += t.weight as i64;
                true
            }
            None => false,
        }
    };
    for &t in rest {
        if !add(t) {
            return avg_vruntime_wide(rq, tasks);
        }
    }
    if let Some(d) = last {
        if !add(d) {
            return avg_vruntime_wide(rq, tasks);
        }
    }
    if swv == 0 {
        r
    } else {
        r + swv / sw
    }
}

/// [`avg_vruntime`] with i128 sums, for runqueues whose i64 sums would overflow.
#[cold]
#[inline(never)]
fn avg_vruntime_wide(rq: &Rq, tasks: &[Task]) -> i64 {
    let mut reference = None;
    let (mut sw, mut swv) = (0i128, 0i128);
    for t in entities(rq, tasks) {
        let t = &tasks[t as usize];
        let r = *reference.get_or_insert(t.vruntime);
        sw += t.weight as i128;
        swv += t.weight as i128 * (t.vruntime - r) as i128;
    }
    match reference {
        None => rq.vclock,
        // i64 division when both fit (the common case): same truncated quotient as i128.
        Some(r) => match (i64::try_from(swv), i64::try_from(sw)) {
            (Ok(a), Ok(b)) => r + a / b,
            _ => r + (swv / sw) as i64,
        },
    }
}

/// EEVDF pick: among eligible entities (vruntime <= V), the earliest virtual deadline.
#[inline]
pub fn pick(rq: &Rq, tasks: &[Task]) -> Option<TaskIdx> {
    let donor = fair_donor(rq, tasks);
    let v = avg_vruntime_with(rq, tasks, donor);
    let mut best: Option<(i64, i64, TaskIdx)> = None;
    let mut fallback: Option<(i64, TaskIdx)> = None;
    // Queued tasks, then the donor (the order of `entities`: it decides `fallback`'s ties).
    let mut visit = |i: TaskIdx| {
        let t = &tasks[i as usize];
        if fallback.is_none_or(|(fv, _)| t.vruntime < fv) {
            fallback = Some((t.vruntime, i));
        }
        if t.vruntime <= v {
            let key = (t.deadline, t.vruntime, i);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
    };
    for &i in &rq.fair {
        visit(i);
    }
    if let Some(d) = donor {
        visit(d);
    }
    best.map(|b| b.2).or(fallback.map(|f| f.1))
}

/// Sets `t`'s fair-class weight and what follows from it, given the world's base slice and
/// tick.
pub fn set_weight(t: &mut Task, weight: u64, base_slice: u64, tick: u64) {
    t.weight = weight;
    t.vslice = to_virtual(base_slice, weight);
    t.vlag_limit = to_virtual((2 * base_slice).max(tick), weight);
}

/// Sets a waking or migrating task's vruntime from its saved lag and gives it a deadline.
pub fn place(t: &mut Task, v: i64) {
    t.vruntime = v - t.vlag;
    t.deadline = t.vruntime + t.vslice;
}

/// Saves a leaving task's lag relative to `V`, clamped as `update_entity_lag` does.
pub fn save_lag(t: &mut Task, v: i64) {
    t.vlag = (v - t.vruntime).clamp(-t.vlag_limit, t.vlag_limit);
}
