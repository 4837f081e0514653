//! The RT class: SCHED_FIFO priorities above the fair class, FIFO within a priority.

use super::{Rq, Task};
use crate::locks::TaskIdx;

/// The highest-priority queued RT task (first queued among equals).
pub fn pick(rq: &Rq, tasks: &[Task]) -> Option<TaskIdx> {
    let mut best: Option<(u8, TaskIdx)> = None;
    for &i in &rq.rt {
        let p = tasks[i as usize].eff.rt;
        if best.is_none_or(|(bp, _)| p > bp) {
            best = Some((p, i));
        }
    }
    best.map(|b| b.1)
}

/// How much a task running on a CPU resists preemption: idle 0, fair 1, RT 2 + prio.
pub fn cpu_rank(rq: &Rq, tasks: &[Task]) -> u32 {
    match rq.donor.or(rq.curr) {
        None if rq.fair.is_empty() && rq.rt.is_empty() => 0,
        None => 1,
        Some(d) => {
            let s = tasks[d as usize].eff;
            if s.is_rt() {
                2 + s.rt as u32
            } else {
                1
            }
        }
    }
}
