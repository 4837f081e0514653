//! Scheduler state: tasks, per-CPU runqueues, and the world view policies read.
//!
//! The mechanics that change this state (wakeup, pick, preemption, balancing) live in
//! `crate::sim`; the class-specific rules are in [`fair`] and [`rt`].

pub mod fair;
pub mod rt;

use crate::locks::visibility::Visibility;
use crate::locks::{
    binder::{Call, Pool},
    Lock, TaskIdx,
};
use crate::workload::ThreadRole;

/// A Linux thread id.
pub type Tid = i32;

/// Scheduling parameters: SCHED_FIFO priority (0 = SCHED_OTHER) and nice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sched {
    /// SCHED_FIFO priority 1..=99, or 0 for the fair class.
    pub rt: u8,
    /// Nice level (fair class).
    pub nice: i8,
}

impl Sched {
    /// A fair-class parameter set.
    pub fn fair(nice: i32) -> Self {
        Sched {
            rt: 0,
            nice: nice as i8,
        }
    }

    /// A SCHED_FIFO parameter set.
    pub fn fifo(prio: u8) -> Self {
        Sched { rt: prio, nice: 0 }
    }

    /// Whether this is the RT class.
    pub fn is_rt(&self) -> bool {
        self.rt > 0
    }

    /// Total order of urgency: any RT beats any fair; lower nice beats higher.
    pub fn rank(&self) -> i32 {
        if self.is_rt() {
            1000 + self.rt as i32
        } else {
            -(self.nice as i32)
        }
    }

    /// The more urgent of two parameter sets.
    pub fn max(self, other: Sched) -> Sched {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }

    /// Perfetto/ftrace `prio` field (RT: 99 - prio; fair: 120 + nice).
    pub fn kernel_prio(&self) -> i32 {
        if self.is_rt() {
            99 - self.rt as i32
        } else {
            120 + self.nice as i32
        }
    }
}

/// Why a task is not runnable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Timed sleep (I/O, timers) or not started yet.
    Sleep,
    /// Waiting on a lock.
    Lock,
    /// Waiting for vsync.
    Vsync,
    /// Waiting for a token from another thread.
    Wait,
    /// Waiting for another thread to take this one's token (a `sync` signal).
    Sync,
    /// Waiting for a binder reply.
    Binder,
    /// Binder server waiting for a transaction.
    Serve,
}

/// A task's scheduler state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// On a CPU.
    Running,
    /// Queued, waiting for a CPU.
    Runnable,
    /// Not runnable.
    Blocked(Why),
}

/// One simulated thread.
#[derive(Clone, Debug)]
pub struct Task {
    /// Thread id.
    pub tid: Tid,
    /// Process id.
    pub pid: i32,
    /// Thread name (comm, up to 15 bytes in traces).
    pub name: String,
    /// Index into the platform's groups.
    pub group: usize,
    /// Allowed CPUs.
    pub allowed: u64,
    /// Prefers high-capacity CPUs at wakeup.
    pub prefer_big: bool,
    /// UI, render or other.
    pub role: ThreadRole,
    /// The thread's own parameters (scenario, or a policy's setup-time promotion).
    pub own: Sched,
    /// Parameters before inheritance (`own`, or a binder caller's while serving).
    pub base: Sched,
    /// Parameters the scheduler uses (after inheritance or promotion).
    pub eff: Sched,
    /// Fair-class weight of `eff`.
    pub weight: u64,
    /// The base slice in virtual time at `weight` (set with it by [`fair::set_weight`]): the
    /// fair class adds it at every new deadline, and dividing each time cost more.
    pub vslice: i64,
    /// The bound on saved lag in virtual time at `weight` (set with it by
    /// [`fair::set_weight`]).
    pub vlag_limit: i64,
    /// Scheduler state.
    pub state: State,
    /// Runqueue CPU (last CPU if not queued).
    pub cpu: u32,
    /// Counted on a runqueue (runnable, running, or a blocked proxy donor).
    pub on_rq: bool,
    /// Fair-class virtual runtime.
    pub vruntime: i64,
    /// Fair-class virtual deadline.
    pub deadline: i64,
    /// Lag saved when leaving a runqueue.
    pub vlag: i64,
    /// Lock this task sleeps on (cleared when granted or woken).
    pub blocked_on: Option<u32>,
    /// Lock wait in progress, from first attempt until the task runs holding it.
    pub lock_wait: Option<u32>,
    /// When `lock_wait` began.
    pub lock_wait_since: u64,
    /// Locks held.
    pub held: Vec<u32>,
    /// Program index and counter.
    pub prog: u32,
    /// Next op.
    pub pc: u32,
    /// Remaining work of the current `compute`, in ns at capacity 1024 times 1024 (so a CPU
    /// of capacity `c` retires exactly `c` units per ns: no rounding is lost when the work is
    /// accounted in pieces, and the completion time computed at any point is the same).
    pub remaining: u64,
    /// Tokens posted by `signal`.
    pub tokens: u32,
    /// The task blocked in a `sync` signal until this one takes its token.
    pub sync_sender: Option<TaskIdx>,
    /// Vsync this task last woke for.
    pub vsync_ts: u64,
    /// Caller being served (binder server).
    pub serving: Option<TaskIdx>,
    /// The synchronous binder call this task made and has not yet read the reply to.
    pub call: Option<Call>,
    /// Binder pool served.
    pub pool: Option<u32>,
    /// Timer generation (stale timers are ignored).
    pub timer_gen: u32,
    /// CPU time used, ns (excluding switch and policy costs).
    pub sum_exec: u64,
    /// When the task last became runnable (for balancing).
    pub runnable_since: u64,
}

/// Removes `v[i]`, keeping the order of the rest. The lists this serves hold a few entries,
/// and the one removed is often the last: a pop, or a short loop, instead of `Vec::remove`'s
/// call to `memmove`.
#[inline(always)]
pub fn remove_at(v: &mut Vec<u32>, i: usize) {
    for j in i + 1..v.len() {
        v[j - 1] = v[j];
    }
    v.pop();
}

/// A per-CPU runqueue.
#[derive(Clone, Debug, Default)]
pub struct Rq {
    /// Capacity (1024 = fastest).
    pub cap: u32,
    /// The task executing (for proxy execution: the lock owner).
    pub curr: Option<TaskIdx>,
    /// The task whose scheduling context is used (equals `curr` unless proxying).
    pub donor: Option<TaskIdx>,
    /// Queued fair tasks (not including `curr`/`donor`).
    pub fair: Vec<TaskIdx>,
    /// Queued RT tasks (not including `curr`/`donor`).
    pub rt: Vec<TaskIdx>,
    /// The task last switched in (for switch costs and traces).
    pub last_exec: Option<TaskIdx>,
    /// Last `V`, used to place tasks on an empty runqueue.
    pub vclock: i64,
    /// Time accounted up to.
    pub last_update: u64,
    /// CPU time owed to switches and policy hooks before `curr` progresses.
    pub debt: u64,
    /// Completion-event generation.
    pub gen: u32,
    /// Busy ns (running anything, including debt).
    pub busy_ns: u64,
    /// Policy hook ns charged here.
    pub policy_ns: u64,
    /// Context-switch and migration ns charged here.
    pub switch_ns: u64,
    /// Context switches.
    pub switches: u64,
}

impl Rq {
    /// No task running and none queued.
    pub fn is_idle(&self) -> bool {
        self.curr.is_none()
    }
}

/// Everything a policy may read.
#[derive(Clone, Debug)]
pub struct World {
    /// Current simulated time, ns.
    pub now: u64,
    /// Tasks by index.
    pub tasks: Vec<Task>,
    /// Runqueues by CPU.
    pub rqs: Vec<Rq>,
    /// Locks by index.
    pub locks: Vec<Lock>,
    /// Lock names by index.
    pub lock_names: Vec<String>,
    /// What the kernel can see of each lock, by index.
    pub lock_vis: Vec<Visibility>,
    /// Binder pools.
    pub pools: Vec<Pool>,
    /// EEVDF base slice.
    pub base_slice: u64,
    /// Tick period.
    pub tick_ns: u64,
}

impl World {
    /// Index of a task by tid.
    pub fn idx(&self, tid: Tid) -> Option<TaskIdx> {
        self.tasks
            .iter()
            .position(|t| t.tid == tid)
            .map(|i| i as u32)
    }

    /// The task by index.
    pub fn task(&self, i: TaskIdx) -> &Task {
        &self.tasks[i as usize]
    }

    /// Runnable (not blocked) and queued, not executing.
    pub fn is_waiting_for_cpu(&self, i: TaskIdx) -> bool {
        let t = self.task(i);
        t.state == State::Runnable
    }

    /// Mask of CPUs with nothing running.
    pub fn idle_mask(&self) -> u64 {
        self.rqs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_idle())
            .fold(0, |m, (c, _)| m | 1 << c)
    }
}
