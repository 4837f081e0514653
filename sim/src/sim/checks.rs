//! The invariants checked after every event when asked to: work conservation, no lost
//! wakeups, lock safety.

use super::*;

impl<P: Policy + ?Sized> Sim<P> {
    pub(super) fn check_invariants(&mut self) {
        let w = &self.w;
        // Lock safety: one exclusive owner, no readers beside a writer, holders agree.
        for (i, l) in w.locks.iter().enumerate() {
            if let Some(o) = l.owner() {
                if !l.readers().is_empty() {
                    self.violations
                        .push(format!("t={} lock {i}: writer and readers", w.now));
                }
                if !w.task(o).held.contains(&(i as u32)) {
                    self.violations
                        .push(format!("t={} lock {i}: owner does not hold it", w.now));
                }
            }
            let holders = w
                .tasks
                .iter()
                .filter(|t| t.held.contains(&(i as u32)))
                .count();
            let expect = l.owner().map_or(l.readers().len(), |_| 1);
            if holders != expect {
                self.violations
                    .push(format!("t={} lock {i}: {holders} holders", w.now));
            }
        }
        // Every CPU that runs a task has that task's completion pending: without it the task
        // would run forever without taking another step.
        for (c, rq) in w.rqs.iter().enumerate() {
            if rq.curr.is_some() && self.q.done_pending(c as u32) != Some(rq.gen) {
                self.violations.push(format!(
                    "t={} cpu {c}: runs a task with no completion pending",
                    w.now
                ));
            }
        }
        if self.idle != w.idle_mask() {
            self.violations.push(format!(
                "t={} idle mask {:#x} but {:#x} idle",
                w.now,
                self.idle,
                w.idle_mask()
            ));
        }
        let queued_on = w
            .rqs
            .iter()
            .enumerate()
            .filter(|(_, rq)| !rq.fair.is_empty() || !rq.rt.is_empty())
            .fold(0u64, |m, (c, _)| m | 1 << c);
        if queued_on != self.queued_on {
            self.violations.push(format!(
                "t={} queued-on mask {:#x} but {queued_on:#x} have queued tasks",
                w.now, self.queued_on
            ));
        }
        let queued: usize = w.rqs.iter().map(|rq| rq.fair.len() + rq.rt.len()).sum();
        if queued != self.queued as usize {
            self.violations.push(format!(
                "t={} queued count {} but {queued} queued",
                w.now, self.queued
            ));
        }
        // Run lists: each queued task once, on the runqueue its `cpu` names, marked queued.
        let mut seen = vec![false; w.tasks.len()];
        for (c, rq) in w.rqs.iter().enumerate() {
            for &t in rq.fair.iter().chain(&rq.rt) {
                let task = w.task(t);
                if seen[t as usize] || task.cpu as usize != c || !task.on_rq {
                    self.violations.push(format!(
                        "t={} {} listed on cpu {c} (cpu {}, on_rq {}, twice {})",
                        w.now, task.name, task.cpu, task.on_rq, seen[t as usize]
                    ));
                }
                seen[t as usize] = true;
            }
        }
        // Work conservation: no idle CPU while a runnable task allowed there waits.
        let idle = w.idle_mask();
        if idle != 0 {
            for (c, rq) in w.rqs.iter().enumerate() {
                for &t in rq.fair.iter().chain(&rq.rt) {
                    let task = w.task(t);
                    if task.state == State::Runnable && task.allowed & idle != 0 {
                        self.violations.push(format!(
                            "t={} {} waits on cpu {c} while cpus {idle:#x} idle",
                            w.now, task.name
                        ));
                    }
                }
            }
        }
        // No lost wakeups: every blocked task has someone or something to wake it.
        for (i, t) in w.tasks.iter().enumerate() {
            let ok = match t.state {
                State::Blocked(Why::Lock) => {
                    t.blocked_on
                        .is_some_and(|l| w.locks[l as usize].waiters().any(|x| x == i as u32))
                        || t.blocked_on.is_none()
                }
                State::Blocked(Why::Vsync) => self.vsync_waiters.contains(&(i as u32)),
                State::Blocked(Why::Sync) => {
                    w.tasks.iter().any(|o| o.sync_sender == Some(i as u32))
                }
                State::Blocked(Why::Serve) => t
                    .pool
                    .is_some_and(|p| w.pools[p as usize].idle.contains(&(i as u32))),
                State::Running => w.rqs[t.cpu as usize].curr == Some(i as u32),
                State::Runnable => {
                    let rq = &w.rqs[t.cpu as usize];
                    t.on_rq
                        && (rq.fair.contains(&(i as u32))
                            || rq.rt.contains(&(i as u32))
                            || rq.donor == Some(i as u32))
                }
                _ => true,
            };
            if !ok {
                self.violations
                    .push(format!("t={} {} lost: {:?}", w.now, t.name, t.state));
            }
        }
        self.violations.truncate(100);
    }
}
