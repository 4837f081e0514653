//! Proxy Execution (`CONFIG_SCHED_PROXY_EXEC`): a task blocked on a mutex stays on its
//! runqueue, and when the scheduler picks it, the mutex owner runs on its scheduling context.
//!
//! Mutex only (no rwsem, futex or binder). The 6.17 form handles only owners queued on the
//! donor's own runqueue: otherwise the donor is deactivated and simply blocks. The
//! `proxy-migrate` form moves the donor to the owner's runqueue instead (donor migration).

use super::{Action, LockKind, Policy, PolicyStats, ProxyPick};
use crate::locks::{Lock, TaskIdx};
use crate::sched::{State, Why, World};

/// Assumed CPU cost of one `find_proxy_task` step.
pub const STEP_NS: u64 = 100;

/// Proxy execution, single-runqueue or with donor migration.
#[derive(Clone, Debug)]
pub struct Proxy {
    migrate: bool,
    stats: PolicyStats,
}

impl Proxy {
    /// The 6.17 form (`migrate` false) or the donor-migration form.
    pub fn new(migrate: bool) -> Self {
        Proxy {
            migrate,
            stats: PolicyStats::default(),
        }
    }
}

impl Policy for Proxy {
    fn name(&self) -> &'static str {
        if self.migrate {
            "proxy-migrate"
        } else {
            "proxy"
        }
    }

    fn lock_hooks(&self) -> bool {
        false
    }

    fn blocks_in_place(&self, kind: LockKind) -> bool {
        kind == LockKind::Mutex
    }

    fn return_migrate(&self) -> bool {
        self.migrate
    }

    fn find_proxy(
        &mut self,
        w: &World,
        cpu: u32,
        donor: TaskIdx,
        out: &mut Vec<Action>,
    ) -> ProxyPick {
        let mut t = donor;
        for _ in 0..16 {
            self.stats.hook_calls += 1;
            out.push(Action::Charge(cpu, STEP_NS));
            let Some(l) = w.task(t).blocked_on else {
                return ProxyPick::Deactivate;
            };
            let Lock::Mutex(m) = &w.locks[l as usize] else {
                return ProxyPick::Deactivate;
            };
            let Some(o) = m.owner else {
                return ProxyPick::Deactivate;
            };
            let ot = w.task(o);
            match ot.state {
                // A blocked owner that is itself a donor: follow its chain. With migration the
                // donor goes to the CPU of the chain's end, not to a blocked donor's CPU in the
                // middle (from there the walk would send it back: a same-instant ping-pong).
                State::Blocked(Why::Lock) if ot.on_rq && (ot.cpu == cpu || self.migrate) => t = o,
                State::Runnable if ot.cpu == cpu => {
                    self.stats.boosts += 1;
                    return ProxyPick::Run(o);
                }
                State::Runnable | State::Running if self.migrate && ot.cpu != cpu && ot.on_rq => {
                    if w.task(donor).allowed & (1 << ot.cpu) != 0 {
                        return ProxyPick::Migrate(ot.cpu);
                    }
                    return ProxyPick::Deactivate;
                }
                _ => return ProxyPick::Deactivate,
            }
        }
        ProxyPick::Deactivate
    }

    fn stats(&mut self) -> PolicyStats {
        self.stats.clone()
    }
}
