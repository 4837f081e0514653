//! The engine's decisions as they happen, for a platform to trace: why grants end, and the
//! observer a platform implements.

use super::stats::Counter;
use super::{Cpu, LockId, LockKind, Nanos, Tid};

/// Why a grant ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RevokeReason {
    /// The blocker released the lock.
    Released = 0,
    /// The waiter stopped waiting (it got the lock, or gave up).
    WaiterDone = 1,
    /// The boosted task spent its budget.
    Budget = 2,
    /// The blocker or the waiter exited.
    Exit = 3,
    /// SuperPass was disabled.
    Disabled = 4,
    /// The critical thread was unregistered.
    Unregistered = 5,
    /// The tunables changed.
    Reconfigured = 6,
    /// The chain link the grant hung from ended.
    Chain = 7,
    /// A woken critical thread's wake turn ran its whole `wake_slice_ns`.
    TurnOver = 8,
}

impl RevokeReason {
    /// Every reason, by encoding (`ALL[i] as u32 == i`), for generated tables.
    pub const ALL: [Self; 9] = [
        Self::Released,
        Self::WaiterDone,
        Self::Budget,
        Self::Exit,
        Self::Disabled,
        Self::Unregistered,
        Self::Reconfigured,
        Self::Chain,
        Self::TurnOver,
    ];

    /// The name used in traces (`superpass:revoke reason=...`) and docs.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Released => "released",
            Self::WaiterDone => "waiter_done",
            Self::Budget => "budget",
            Self::Exit => "exit",
            Self::Disabled => "disabled",
            Self::Unregistered => "unregistered",
            Self::Reconfigured => "reconfigured",
            Self::Chain => "chain",
            Self::TurnOver => "turn_over",
        }
    }

    pub(crate) const fn counter(self) -> Counter {
        match self {
            Self::Released => Counter::RevokeReleased,
            Self::WaiterDone => Counter::RevokeWaiterDone,
            Self::Budget => Counter::RevokeBudget,
            Self::Exit => Counter::RevokeExit,
            Self::Disabled => Counter::RevokeDisabled,
            Self::Unregistered => Counter::RevokeUnregistered,
            Self::Reconfigured => Counter::RevokeReconfigured,
            Self::Chain => Counter::RevokeChain,
            Self::TurnOver => Counter::RevokeTurnOver,
        }
    }
}

/// Receives the engine's decisions as they happen: the module turns them into tracepoints,
/// the simulator into trace slices. Every method defaults to doing nothing.
#[expect(unused_variables, reason = "default methods ignore their arguments")]
pub trait Observer {
    /// `waiter` (critical, or a chain link) waits on `lock`, held by `blocker`.
    fn block(&mut self, now: Nanos, waiter: Tid, blocker: Tid, lock: LockId, kind: LockKind) {}
    /// `blocker` was granted the fast track on behalf of `via` (and critical thread `root`).
    fn grant(&mut self, now: Nanos, blocker: Tid, via: Tid, root: Tid, lock: LockId, depth: u32) {}
    /// A grant of `blocker` ended.
    fn revoke(&mut self, now: Nanos, blocker: Tid, reason: RevokeReason) {}
    /// `tid` became boosted (its first grant).
    fn boosted(&mut self, now: Nanos, tid: Tid) {}
    /// `tid` stopped being boosted (its last grant ended for `reason`).
    fn unboosted(&mut self, now: Nanos, tid: Tid, reason: RevokeReason) {}
    /// CPU `cpu` was told to run boosted task `tid` instead of the stock choice.
    fn pick(&mut self, now: Nanos, cpu: Cpu, tid: Tid) {}
    /// Boosted task `tid` joined CPU `cpu`'s runqueue; `run_now`: the CPU was asked to pick again.
    fn queued(&mut self, now: Nanos, cpu: Cpu, tid: Tid, run_now: bool) {}
    /// CPU `cpu` used up its fast-track share of the throttle window: it runs no boosted task
    /// ahead of the stock choice until `until`.
    fn throttled(&mut self, now: Nanos, cpu: Cpu, until: Nanos) {}
    /// CPU `cpu`'s throttle ended: the first charge after its window found the window over.
    fn unthrottled(&mut self, now: Nanos, cpu: Cpu) {}
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}
