//! Policies: plug-ins that see lock events and scheduler decisions and may change them.
//!
//! Every policy implements [`Policy`]; all methods default to the stock kernel's behaviour
//! (do nothing). A policy answers through its return value or by pushing [`Action`]s, which
//! the simulator applies after the call, so a policy never mutates the world directly.

pub mod default;
pub mod kernel_view;
pub mod pi;
pub mod pi_ideal;
pub mod probe_view;
pub mod proxy;
pub mod rtui;
pub mod superpass;
pub mod superpass_rtui;

use crate::locks::TaskIdx;
use crate::sched::{Sched, World};

/// What kind of wait or hold a lock event concerns: core's own type, so the simulator and the
/// kernel module describe lock hooks to the engine in the same words.
pub use superpass_core::LockKind;

/// A lock event, reported where the kernel's vendor hook would fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// `waiter` starts sleeping on `lock`; `owner` is the exclusive owner if there is one.
    WaitStart {
        /// The waiting task.
        waiter: TaskIdx,
        /// Lock index.
        lock: u32,
        /// Hook family.
        kind: LockKind,
        /// Exclusive owner, if any.
        owner: Option<TaskIdx>,
    },
    /// `waiter` stops waiting (acquired, or woken to retry a futex).
    WaitFinish {
        /// The task that waited.
        waiter: TaskIdx,
        /// Lock index.
        lock: u32,
        /// Whether it now holds the lock.
        acquired: bool,
    },
    /// `tid` became the exclusive owner.
    OwnerAcquired {
        /// Lock index.
        lock: u32,
        /// New owner.
        tid: TaskIdx,
    },
    /// `tid` released exclusive ownership.
    OwnerReleased {
        /// Lock index.
        lock: u32,
        /// Old owner.
        tid: TaskIdx,
    },
    /// `tid` took an rwsem for reading.
    ReaderAcquired {
        /// Lock index.
        lock: u32,
        /// Reader.
        tid: TaskIdx,
    },
    /// `tid` released an rwsem read hold.
    ReaderReleased {
        /// Lock index.
        lock: u32,
        /// Reader.
        tid: TaskIdx,
    },
    /// A release woke waiter `tid`, which takes the lock next (the kernel's unlock hooks name
    /// it while the wait list is locked).
    Woken {
        /// Lock index.
        lock: u32,
        /// The woken waiter.
        tid: TaskIdx,
        /// The releasing task, in whose context the unlock path runs.
        by: TaskIdx,
    },
}

impl LockEvent {
    /// The lock the event concerns.
    pub fn lock(&self) -> u32 {
        match *self {
            LockEvent::WaitStart { lock, .. }
            | LockEvent::WaitFinish { lock, .. }
            | LockEvent::OwnerAcquired { lock, .. }
            | LockEvent::OwnerReleased { lock, .. }
            | LockEvent::ReaderAcquired { lock, .. }
            | LockEvent::ReaderReleased { lock, .. }
            | LockEvent::Woken { lock, .. } => lock,
        }
    }
}

/// A synchronous binder call's event, reported where ACK's binder vendor hook would fire
/// (`include/trace/hooks/binder.h`; docs/binder-percpu-hooks.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinderEvent {
    /// `caller`'s call number `call` into `pool` is queued
    /// (`android_vh_binder_proc_transaction_finish`, in the caller's context): `server` is the
    /// idle pool thread binder chose for it, if there was one.
    Queued {
        /// The calling thread.
        caller: TaskIdx,
        /// The call's number.
        call: u32,
        /// The server's pool.
        pool: u32,
        /// The pool thread chosen for it, if one was idle.
        server: Option<TaskIdx>,
    },
    /// Pool thread `server` takes the call (`android_vh_binder_transaction_received` with
    /// `BR_TRANSACTION`, in the server's context).
    Taken {
        /// The call's number.
        call: u32,
        /// The pool thread.
        server: TaskIdx,
    },
    /// `server` replied, and the reply woke `caller` (`android_vh_binder_restore_priority`,
    /// after the wakeup).
    Replied {
        /// The call's number.
        call: u32,
        /// The pool thread.
        server: TaskIdx,
        /// The calling thread.
        caller: TaskIdx,
    },
    /// `caller` read the reply, in its own context (`android_vh_binder_transaction_received`
    /// with `BR_REPLY`).
    Received {
        /// The call's number.
        call: u32,
        /// The calling thread.
        caller: TaskIdx,
    },
}

/// A change a policy asks the simulator to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Set a task's effective scheduling parameters (inheritance, promotion).
    SetEff(TaskIdx, Sched),
    /// Set a task's own parameters and its effective ones (setup-time promotion).
    SetBase(TaskIdx, Sched),
    /// Re-run the pick on a CPU now.
    Resched(u32),
    /// Charge CPU time (ns) for the policy's own work on a CPU.
    Charge(u32, u64),
    /// A SuperPass grant to this blocker started (trace slice).
    GrantBegin(TaskIdx),
    /// The grant ended (trace slice).
    GrantEnd(TaskIdx),
    /// Move a running or queued task to this CPU now, as a kernel module does with the CPU
    /// stopper (SuperPass's push of a boosted task to a faster CPU).
    Migrate(TaskIdx, u32),
}

/// The answer to "the picked task is a blocked donor; what runs?" (proxy execution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyPick {
    /// Run this task (the lock owner) on the donor's scheduling context.
    Run(TaskIdx),
    /// Take the donor off the runqueue; it sleeps until the lock is handed to it.
    Deactivate,
    /// Move the donor to this CPU's runqueue (the owner's) and pick again.
    Migrate(u32),
}

/// Counters a policy reports at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyStats {
    /// Hook calls charged.
    pub hook_calls: u64,
    /// Boost grants made (SuperPass) or inheritance changes (PI) or proxy runs (proxy).
    pub boosts: u64,
    /// Policy-specific named counters (SuperPass: the engine's counters).
    pub counters: Vec<(String, u64)>,
}

/// A scheduling/locking policy.
pub trait Policy: Send {
    /// The CLI name (one of [`NAMES`]).
    fn name(&self) -> &'static str;

    /// Called once before the run; may promote threads.
    fn setup(&mut self, _w: &World, _out: &mut Vec<Action>) {}

    /// Whether [`Self::lock_event`] does anything: the simulator does not call it for a policy
    /// that answers no.
    fn lock_hooks(&self) -> bool {
        true
    }

    /// Whether the scheduler hooks ([`Self::enqueue`], [`Self::dequeue`],
    /// [`Self::pick_fair`], [`Self::should_preempt`], [`Self::select_cpu`], [`Self::tick`])
    /// do anything: the simulator does not call them for a policy that answers no (the
    /// default; they are the hottest calls, a few per event).
    fn sched_hooks(&self) -> bool {
        false
    }

    /// CPU time (ns) each scheduler hook call costs on the CPU it runs on (for
    /// [`Self::select_cpu`], the task's previous CPU). The simulator charges it after applying
    /// the hook's actions, as if the hook had pushed an [`Action::Charge`] first: it is read
    /// once per run, and the hottest calls then push nothing.
    fn sched_hook_ns(&self) -> u64 {
        0
    }

    /// A lock event on `cpu`.
    fn lock_event(&mut self, _w: &World, _cpu: u32, _ev: LockEvent, _out: &mut Vec<Action>) {}

    /// Task `t`, on `cpu`, is about to join a futex's queue of waiters (the kernel hook
    /// `android_vh_alter_futex_plist_add`, at every futex wait): true queues it ahead of the
    /// waiters of its priority. Called only if [`Self::lock_hooks`].
    fn queue_first(&mut self, _w: &World, _cpu: u32, _t: TaskIdx, _out: &mut Vec<Action>) -> bool {
        false
    }

    /// A synchronous binder call's event on `cpu`; called only if [`Self::lock_hooks`].
    fn binder_event(&mut self, _w: &World, _cpu: u32, _ev: BinderEvent, _out: &mut Vec<Action>) {}

    /// Whether a waiter on this kind of lock stays on its runqueue as a donor.
    fn blocks_in_place(&self, _kind: LockKind) -> bool {
        false
    }

    /// Whether a donor whose lock was handed over leaves its runqueue and is placed again
    /// by the wakeup path (proxy execution's return migration).
    fn return_migrate(&self) -> bool {
        false
    }

    /// The picked task `donor` is blocked on a lock: decide what runs.
    fn find_proxy(
        &mut self,
        _w: &World,
        _cpu: u32,
        _donor: TaskIdx,
        _out: &mut Vec<Action>,
    ) -> ProxyPick {
        ProxyPick::Deactivate
    }

    /// A task was queued on `cpu`.
    fn enqueue(&mut self, _w: &World, _cpu: u32, _t: TaskIdx, _out: &mut Vec<Action>) {}

    /// A task left `cpu`'s runqueue.
    fn dequeue(&mut self, _w: &World, _cpu: u32, _t: TaskIdx, _out: &mut Vec<Action>) {}

    /// After the fair class picked `next` on `cpu`: `Some(t)` runs queued fair task `t` instead.
    fn pick_fair(
        &mut self,
        _w: &World,
        _cpu: u32,
        _prev: Option<TaskIdx>,
        _next: Option<TaskIdx>,
        _out: &mut Vec<Action>,
    ) -> Option<TaskIdx> {
        None
    }

    /// A fair task `waking` was queued on `cpu` running fair `curr`: force preemption?
    fn should_preempt(
        &mut self,
        _w: &World,
        _cpu: u32,
        _curr: TaskIdx,
        _waking: TaskIdx,
        _out: &mut Vec<Action>,
    ) -> bool {
        false
    }

    /// Choose a CPU for a waking fair task, or `None` for the default placement.
    fn select_cpu(
        &mut self,
        _w: &World,
        _t: TaskIdx,
        _prev: u32,
        _idle: u64,
        _out: &mut Vec<Action>,
    ) -> Option<u32> {
        None
    }

    /// Scheduler tick on `cpu`: `true` to reschedule now.
    fn tick(&mut self, _w: &World, _cpu: u32, _curr: TaskIdx, _out: &mut Vec<Action>) -> bool {
        false
    }

    /// Of `faster` (idle CPUs of higher capacity than `cpu` that task `t`, `running` there or
    /// queued, may use), those that should pull `t` because it is misfit on `cpu` (as
    /// `update_misfit_status` would mark it, and `can_migrate_task` would let it go); by active
    /// balance if it is running. Only asked while some task is helped (between an
    /// [`Action::GrantBegin`] and its `GrantEnd`).
    fn misfit_targets(
        &mut self,
        _w: &World,
        _t: TaskIdx,
        _cpu: u32,
        _faster: u64,
        _running: bool,
    ) -> u64 {
        0
    }

    /// Whether the policy is giving `t` the CPU ahead of its own parameters right now (a
    /// SuperPass grant); inheritance through parameters is seen in `Task::eff` instead. Only
    /// used to itemize waits.
    fn helps(&self, _w: &World, _t: TaskIdx) -> bool {
        false
    }

    /// Whether the policy has stopped helping on CPU `cpu` for now (SuperPass's throttle).
    /// Only used to itemize waits.
    fn throttled(&self, _cpu: u32) -> bool {
        false
    }

    /// Counters for the report.
    fn stats(&mut self) -> PolicyStats {
        PolicyStats::default()
    }
}

/// The policy names the CLI accepts, in report order.
pub const NAMES: &[&str] = &[
    "default",
    "pi",
    "pi-ideal",
    "rt-ui",
    "proxy",
    "proxy-migrate",
    "superpass",
    "superpass-stock",
    "superpass+rt-ui",
];

/// Builds a policy by CLI name.
pub fn by_name(name: &str) -> Result<Box<dyn Policy>, String> {
    Ok(match name {
        "default" => Box::new(default::Default),
        "pi" => Box::new(pi::Pi::default()),
        "pi-ideal" => Box::new(pi_ideal::PiIdeal::default()),
        "rt-ui" => Box::new(rtui::RtUi::default()),
        "proxy" => Box::new(proxy::Proxy::new(false)),
        "proxy-migrate" => Box::new(proxy::Proxy::new(true)),
        "superpass" => Box::new(superpass::SuperPass::new()),
        "superpass-stock" => Box::new(superpass::SuperPass::stock()),
        "superpass+rt-ui" => Box::new(superpass_rtui::SuperPassRtUi::default()),
        _ => {
            return Err(format!(
                "unknown policy `{name}`; policies: {}",
                NAMES.join(", ")
            ))
        }
    })
}
