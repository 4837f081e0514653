//! Priority inheritance as Linux does it (`pi`): only through `rt_mutex`, which on Android
//! means PI futexes (`FUTEX_LOCK_PI`, pthread mutexes with `PTHREAD_PRIO_INHERIT`); kernel
//! mutexes, rwsems and plain futexes inherit nothing.
//!
//! Kernel facts modelled (kernel/locking/rtmutex.c and kernel/sched/core.c, 6.12):
//! - A waiter that is not RT or DL is queued at `DEFAULT_PRIO` (`__waiter_prio`), so the top
//!   waiter's priority is an RT priority only when an RT task waits.
//! - `rt_mutex_setprio` sets the owner's `p->prio` to its top waiter's when that is more
//!   urgent, switching it to the RT class for an RT waiter. For a fair-class waiter it can at
//!   most set `p->prio` to `DEFAULT_PRIO`, which changes nothing: CFS weight comes from
//!   `static_prio`. So a fair owner gains nothing from fair waiters.
//! - The boost follows the chain (`rt_mutex_adjust_prio_chain`) while each owner is itself
//!   blocked on an `rt_mutex`, and is recomputed when the owner changes (the releasing owner
//!   is deboosted, the new owner takes its remaining waiters' priority).
//!
//! Each chain-walk step is charged as CPU time. The waiter order and handoff are the lock's
//! own (`crate::locks::rtmutex`), the same under every policy.

use super::{Action, LockEvent, Policy, PolicyStats};
use crate::locks::{Lock, TaskIdx};
use crate::sched::{Sched, World};

/// Assumed CPU cost of one chain-walk step (`rt_mutex_adjust_prio_chain`).
pub const STEP_NS: u64 = 150;

/// Linux priority inheritance through `rt_mutex`.
#[derive(Clone, Debug, Default)]
pub struct Pi {
    stats: PolicyStats,
}

fn is_rt_mutex(w: &World, l: u32) -> bool {
    matches!(w.locks[l as usize], Lock::PiFutex(_))
}

impl Pi {
    /// `t`'s parameters with inheritance: its own, or the most urgent RT waiter's on the
    /// `rt_mutex`es it owns. `pending` holds parameters set earlier in this chain walk, which
    /// the world does not show yet.
    fn inherited(w: &World, t: TaskIdx, pending: &[(TaskIdx, Sched)]) -> Sched {
        let mut s = w.task(t).base;
        for &l in &w.task(t).held {
            if !is_rt_mutex(w, l) {
                continue;
            }
            for wt in w.locks[l as usize].waiters() {
                let we = pending
                    .iter()
                    .rev()
                    .find(|p| p.0 == wt)
                    .map_or(w.task(wt).eff, |p| p.1);
                if we.is_rt() {
                    s = s.max(Sched::fifo(we.rt));
                }
            }
        }
        s
    }

    fn update_chain(&mut self, w: &World, cpu: u32, start: TaskIdx, out: &mut Vec<Action>) {
        let mut t = start;
        let mut pending: Vec<(TaskIdx, Sched)> = Vec::new();
        for _ in 0..16 {
            self.stats.hook_calls += 1;
            out.push(Action::Charge(cpu, STEP_NS));
            let new = Self::inherited(w, t, &pending);
            if new == w.task(t).eff {
                break;
            }
            self.stats.boosts += 1;
            out.push(Action::SetEff(t, new));
            pending.push((t, new));
            // Walk on only through rt_mutexes.
            let Some(l) = w.task(t).blocked_on.filter(|&l| is_rt_mutex(w, l)) else {
                break;
            };
            let Some(o) = w.locks[l as usize].owner() else {
                break;
            };
            t = o;
        }
    }

    /// Reacts to a lock event (also used by `rt-ui`, which runs on the same kernel).
    pub fn on_lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        match ev {
            LockEvent::WaitStart { lock, .. } | LockEvent::WaitFinish { lock, .. }
                if is_rt_mutex(w, lock) =>
            {
                if let Some(o) = w.locks[lock as usize].owner() {
                    self.update_chain(w, cpu, o, out);
                }
            }
            LockEvent::OwnerAcquired { lock, tid } | LockEvent::OwnerReleased { lock, tid }
                if is_rt_mutex(w, lock) =>
            {
                self.update_chain(w, cpu, tid, out);
            }
            _ => {}
        }
    }

    /// Counters.
    pub fn counters(&self) -> PolicyStats {
        self.stats.clone()
    }
}

impl Policy for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        self.on_lock_event(w, cpu, ev, out);
    }

    fn stats(&mut self) -> PolicyStats {
        self.counters()
    }
}
