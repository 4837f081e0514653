//! Idealised priority inheritance (`pi-ideal`): the owner of any mutex, futex or writer-owned
//! rwsem runs with the most urgent parameters among itself and its waiters, transitively
//! along the chain, re-applied at every owner change.
//!
//! No kernel does all of this: Linux inherits only through `rt_mutex` (PI futexes), and only
//! an RT waiter's priority (see `super::pi`). This is an upper bound for inheritance-based
//! schemes: it covers kernel mutexes, rwsem writers and plain futexes, whose owners the
//! simulator knows even where the kernel cannot, and nice as well as RT priority (as vendor
//! hooks such as Pixel's `vh_prio_inheritance` attempt for CFS). rwsem readers get none: a
//! reader-owned rwsem has no single owner to boost. Each chain-walk step is charged as CPU
//! time.

use super::{Action, LockEvent, Policy, PolicyStats};
use crate::locks::TaskIdx;
use crate::sched::{Sched, World};

/// Assumed CPU cost of one chain-walk step (`rt_mutex_adjust_prio_chain`).
pub const STEP_NS: u64 = 150;

/// Idealised priority inheritance.
#[derive(Clone, Debug, Default)]
pub struct PiIdeal {
    eff: Vec<Option<Sched>>,
    stats: PolicyStats,
}

impl PiIdeal {
    fn eff_of(&self, w: &World, t: TaskIdx) -> Sched {
        self.eff
            .get(t as usize)
            .copied()
            .flatten()
            .unwrap_or(w.task(t).base)
    }

    fn inherited(&self, w: &World, t: TaskIdx) -> Sched {
        let mut s = w.task(t).base;
        for &l in &w.task(t).held {
            let lock = &w.locks[l as usize];
            if lock.owner() != Some(t) {
                continue; // a read hold: readers inherit nothing
            }
            for wt in lock.waiters() {
                s = s.max(self.eff_of(w, wt));
            }
        }
        s
    }

    fn update_chain(&mut self, w: &World, cpu: u32, start: TaskIdx, out: &mut Vec<Action>) {
        if self.eff.len() < w.tasks.len() {
            self.eff.resize(w.tasks.len(), None);
        }
        let mut t = start;
        for _ in 0..16 {
            self.stats.hook_calls += 1;
            out.push(Action::Charge(cpu, STEP_NS));
            let new = self.inherited(w, t);
            if new == self.eff_of(w, t) && w.task(t).eff == new {
                break;
            }
            self.eff[t as usize] = Some(new);
            self.stats.boosts += 1;
            out.push(Action::SetEff(t, new));
            let Some(l) = w.task(t).blocked_on else { break };
            let Some(o) = w.locks[l as usize].owner() else {
                break;
            };
            t = o;
        }
    }
}

impl Policy for PiIdeal {
    fn name(&self) -> &'static str {
        "pi-ideal"
    }

    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        match ev {
            LockEvent::WaitStart { lock, owner, .. } => {
                if let Some(o) = owner.or(w.locks[lock as usize].owner()) {
                    self.update_chain(w, cpu, o, out);
                }
            }
            LockEvent::WaitFinish { lock, .. } => {
                if let Some(o) = w.locks[lock as usize].owner() {
                    self.update_chain(w, cpu, o, out);
                }
            }
            LockEvent::OwnerAcquired { tid, .. } | LockEvent::OwnerReleased { tid, .. } => {
                self.update_chain(w, cpu, tid, out);
            }
            LockEvent::ReaderAcquired { .. }
            | LockEvent::ReaderReleased { .. }
            | LockEvent::Woken { .. } => {}
        }
    }

    fn stats(&mut self) -> PolicyStats {
        self.stats.clone()
    }
}
