//! The simulator: builds the world from a scenario, runs the event loop, interprets thread
//! programs and reports lock events to the policy.
//!
//! This file owns the state and the event loop. Building a run is in `sim/build.rs`, the thread
//! interpreter in `sim/interp.rs`, locks and lock events in `sim/locking.rs`, scheduling
//! mechanics (wakeup, pick, preemption, balancing) in `sim/sched_ops.rs` and the invariant
//! checks in `sim/checks.rs`.

mod build;
mod checks;
mod interp;
mod locking;
mod sched_ops;

use crate::engine::{Ev, EventQueue};
use crate::explain::Seg;
use crate::locks::{
    binder::{Call, Pool},
    Lock, TaskIdx,
};
use crate::metrics::{Active, Blocking, Cat, LockStat, RunResult};
use crate::platform::Platform;
use crate::policy::{Action, BinderEvent, LockEvent, LockKind, Policy};
use crate::rng::Stream;
use crate::sched::{fair, Rq, Sched, State, Task, Why, World};
use crate::trace::{Name, TraceLog};
use crate::workload::{Dist, OpSpec, Scenario, ThreadRole};
use std::collections::VecDeque;

/// A compiled program op (names resolved to indices).
#[derive(Clone, Copy, Debug)]
enum Op {
    Compute(Dist),
    Sleep(Dist),
    Lock(u32, bool),
    Unlock(u32),
    WaitVsync,
    DoFrameBegin,
    DoFrameEnd,
    DrawFrameBegin,
    DrawFrameEnd,
    /// A token for a task; with `true`, the sender blocks until the target takes it.
    Signal(TaskIdx, bool),
    Wait,
    BinderCall(u32),
    BinderServe,
    BinderReply,
    Branch(f64, u32),
}

/// What a thread does after running its instant ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// It has CPU work to do.
    Cpu,
    /// It blocked.
    Blocked,
}

/// A frame in flight.
#[derive(Clone, Copy, Debug)]
struct Frame {
    id: u64,
    vsync: u64,
    deadline: u64,
}

/// Options for one run.
#[derive(Clone, Debug, Default)]
pub struct RunOpts {
    /// Record a trace.
    pub trace: bool,
    /// Check scheduler invariants after every event (slow; for tests).
    pub check_invariants: bool,
    /// Itemize every critical wait finer than the blocker-state categories
    /// (`RunResult::explained`, see `crate::explain`).
    pub explain: bool,
}

/// What a finished run leaves behind.
pub struct Output {
    /// Metrics.
    pub res: RunResult,
    /// Recorded trace, if asked for.
    pub trace: Option<TraceLog>,
    /// Final world state (names for trace export).
    pub world: World,
    /// Process names by pid.
    pub processes: Vec<(i32, String)>,
    /// Invariant violations (when checking).
    pub violations: Vec<String>,
}

/// One simulation run in progress, under a policy of type `P`: a trait object by default,
/// or a concrete policy, whose hooks the compiler then calls directly and may inline.
pub struct Sim<P: Policy + ?Sized = dyn Policy> {
    /// The state policies see.
    pub w: World,
    policy: Box<P>,
    q: EventQueue,
    progs: Vec<Vec<Op>>,
    rngs: Vec<Stream>,
    tie: Stream,
    out: Vec<Action>,
    resched: u64,
    /// Entries on all runqueues' `fair` and `rt` lists together (balancing skips its scan
    /// when zero).
    queued: u32,
    /// CPUs whose `fair` or `rt` list is not empty (balancing scans only these).
    queued_on: u64,
    /// The policy's [`Policy::sched_hooks`].
    sched_hooks: bool,
    /// The policy's [`Policy::sched_hook_ns`].
    sched_hook_ns: u64,
    /// The policy's [`Policy::lock_hooks`].
    lock_hooks: bool,
    /// CPUs with nothing current (`World::idle_mask`, kept up to date where `curr` changes).
    idle: u64,
    /// CPUs whose completion a hook charge re-armed in this event: queued at its end unless
    /// a later arm superseded it (`Self::arm_late`).
    late: u64,
    /// Per CPU: the sequence number and generation of its completion in `late` (an array, as
    /// CPU masks are 64 bits wide: indexing it needs no bounds check on the charge path).
    late_arm: [(u64, u32); 64],
    scratch: Vec<TaskIdx>,
    vsync_period: Option<u64>,
    deadline_ns: u64,
    vsync_waiters: Vec<TaskIdx>,
    frames: VecDeque<Frame>,
    frame_seq: u64,
    /// The last binder call number handed out.
    call_seq: u32,
    warmup: u64,
    end: u64,
    platform: Platform,
    critical: Vec<bool>,
    active: Vec<Active>,
    /// Per lock: when its occupancy was last accounted.
    lock_last: Vec<u64>,
    /// Results being collected.
    pub res: RunResult,
    base_counters: [u64; 6],
    /// Trace, when recording.
    pub trace: Option<TraceLog>,
    checks: bool,
    explain: bool,
    /// Tasks the policy holds a grant for (`GrantBegin` less `GrantEnd`): misfit migration
    /// is only looked for while there are some.
    granted: u32,
    /// The CPUs by increasing (capacity, number): the order misfit migration visits sources.
    by_capacity: Vec<u32>,
    /// Per CPU: the mask of CPUs of higher capacity.
    faster_than: Vec<u64>,
    /// Invariant violations found (when checking).
    pub violations: Vec<String>,
    /// Process names by pid, for traces.
    pub processes: Vec<(i32, String)>,
}

impl<P: Policy + ?Sized> Sim<P> {
    /// Runs to the end and returns the results.
    pub fn run(mut self) -> Output {
        self.run_loop();
        self.finish();
        Output {
            res: self.res,
            trace: self.trace,
            world: self.w,
            processes: self.processes,
            violations: self.violations,
        }
    }

    fn run_loop(&mut self) {
        while let Some((t, ev)) = self.q.pop() {
            self.w.now = t;
            if let Ev::Done(cpu, gen) = ev {
                if self.w.rqs[cpu as usize].gen != gen {
                    continue; // superseded by a later arm
                }
            }
            self.res.events += 1;
            match ev {
                Ev::Done(cpu, _) => self.on_done(cpu),
                Ev::Timer(i, gen) => {
                    let task = &self.w.tasks[i as usize];
                    if task.timer_gen == gen && task.state == State::Blocked(Why::Sleep) {
                        self.wake(i, None);
                    }
                }
                Ev::Tick(cpu) => self.on_tick(cpu),
                Ev::Vsync => self.on_vsync(),
                Ev::Warmup => self.snapshot(),
                Ev::End => break,
            }
            self.flush();
            if self.late != 0 {
                self.queue_late();
            }
            if !self.active.is_empty() {
                self.refresh_waits();
            }
            if self.checks {
                self.check_invariants();
            }
        }
    }

    fn on_done(&mut self, cpu: u32) {
        self.update_curr(cpu);
        let Some(e) = self.w.rqs[cpu as usize].curr else {
            return;
        };
        if self.w.tasks[e as usize].remaining > 0 {
            self.arm(cpu);
            return;
        }
        match self.run_ops(e) {
            Flow::Cpu => self.arm(cpu),
            Flow::Blocked => self.resched(cpu),
        }
    }

    fn on_tick(&mut self, cpu: u32) {
        let now = self.w.now;
        self.q.push(now + self.w.tick_ns, Ev::Tick(cpu));
        self.update_curr(cpu);
        let rq = &self.w.rqs[cpu as usize];
        if let (Some(c), true) = (rq.curr, self.sched_hooks) {
            if self.policy.tick(&self.w, cpu, c, &mut self.out) {
                self.resched(cpu);
            }
            self.apply();
            self.charge_sched_hook(cpu);
        }
    }

    fn on_vsync(&mut self) {
        let now = self.w.now;
        if let Some(p) = self.vsync_period {
            self.q.push(now + p, Ev::Vsync);
        }
        let waiters = std::mem::take(&mut self.vsync_waiters);
        for &t in &waiters {
            self.w.tasks[t as usize].vsync_ts = now;
            self.wake(t, None);
        }
        self.vsync_waiters = waiters;
        self.vsync_waiters.clear();
    }

    fn snapshot(&mut self) {
        for c in 0..self.w.rqs.len() as u32 {
            self.update_curr(c);
        }
        self.base_counters = self.counters();
        for l in 0..self.w.locks.len() {
            self.lock_occupancy(l as u32);
            let name = std::mem::take(&mut self.res.locks[l].lock);
            self.res.locks[l] = LockStat {
                lock: name,
                ..LockStat::default()
            };
        }
    }

    fn counters(&self) -> [u64; 6] {
        let rq_sum = |f: fn(&Rq) -> u64| self.w.rqs.iter().map(f).sum::<u64>();
        let bg: u64 = self
            .w
            .tasks
            .iter()
            .filter(|t| self.platform.groups[t.group].background)
            .map(|t| t.sum_exec)
            .sum();
        let all: u64 = self.w.tasks.iter().map(|t| t.sum_exec).sum();
        [
            rq_sum(|r| r.busy_ns),
            rq_sum(|r| r.policy_ns),
            rq_sum(|r| r.switch_ns),
            rq_sum(|r| r.switches),
            bg,
            all,
        ]
    }

    fn finish(&mut self) {
        for c in 0..self.w.rqs.len() as u32 {
            self.update_curr(c);
        }
        self.end_open_waits();
        for l in 0..self.w.locks.len() as u32 {
            self.lock_occupancy(l);
        }
        let c = self.counters();
        let b = self.base_counters;
        let r = &mut self.res;
        r.measured_ns = self.end.saturating_sub(self.warmup);
        r.busy_ns = c[0] - b[0];
        r.policy_ns = c[1] - b[1];
        r.switch_ns = c[2] - b[2];
        r.switches = c[3] - b[3];
        r.background_ns = c[4] - b[4];
        r.task_ns = c[5] - b[5];
        r.policy_stats = self.policy.stats();
    }

    /// As [`Self::apply`]; true if a pushed action could change what the fair pick on a CPU
    /// being picked for sees. Only `SetEff`/`SetBase` can: `Resched` and the grant slices
    /// change no task, and a `Charge` accounts a CPU's running task, which is not queued
    /// (the CPU being picked for has none running while it picks).
    fn apply_changed(&mut self) -> bool {
        if let [] | [Action::Charge(..)] = self.out[..] {
            self.apply();
            return false;
        }
        let changed = self
            .out
            .iter()
            .any(|a| matches!(a, Action::SetEff(..) | Action::SetBase(..)));
        self.apply();
        changed
    }

    /// Applies the actions a policy pushed: usually none, or a lone hook charge, both told
    /// apart inline so the charge is a direct call without the action loop's frame.
    #[inline(always)]
    fn apply(&mut self) {
        match self.out[..] {
            [] => {}
            [Action::Charge(c, ns)] => {
                self.out.clear();
                self.charge(c, ns);
            }
            _ => self.apply_actions(),
        }
    }

    fn apply_actions(&mut self) {
        while let Some(a) = self.out.pop() {
            match a {
                Action::SetEff(t, s) => self.set_eff(t, s),
                Action::SetBase(t, s) => {
                    let task = &mut self.w.tasks[t as usize];
                    task.own = s;
                    task.base = s;
                    self.set_eff(t, s);
                }
                Action::Resched(c) => self.resched(c),
                Action::Charge(c, ns) => self.charge(c, ns),
                Action::GrantBegin(t) => {
                    self.granted += 1;
                    self.slice_begin(t, Name::Grant(t));
                }
                Action::GrantEnd(t) => {
                    self.granted = self.granted.saturating_sub(1);
                    self.slice_end(t, Name::Grant(t));
                }
                Action::Migrate(t, dst) => self.push_task(t, dst),
            }
        }
    }

    /// Charges a scheduler hook call's own cost on `cpu` ([`Policy::sched_hook_ns`]), after
    /// the hook's actions. `cpu` must be accounted at this instant (every such hook but
    /// `select_cpu` follows an `update_curr` of its CPU), so the charge adds the debt at once.
    #[inline(always)]
    fn charge_sched_hook(&mut self, cpu: u32) {
        if self.sched_hook_ns != 0 {
            debug_assert_eq!(self.w.rqs[cpu as usize].last_update, self.w.now);
            self.add_charge(cpu, self.sched_hook_ns);
        }
    }

    /// Charges `ns` of a policy's work to CPU `c` (`Action::Charge`).
    #[inline(never)]
    fn charge(&mut self, c: u32, ns: u64) {
        // Account the time before the charge first, so the debt delays only what remains.
        // No slice-expiry check here: a hook running does not make the kernel re-evaluate
        // the pick, and checking would preempt tasks at lock operations (where hooks fire)
        // instead of at the tick. (Accounting at an instant already accounted changes
        // nothing.)
        if self.w.rqs[c as usize].last_update != self.w.now {
            return self.charge_accounting(c, ns);
        }
        self.add_charge(c, ns);
    }

    /// [`Self::charge`] on a CPU not yet accounted at this instant. Apart, so the usual
    /// charge (most come at an instant already accounted) makes no call and saves no
    /// registers.
    #[inline(never)]
    fn charge_accounting(&mut self, c: u32, ns: u64) {
        self.account(c, false);
        self.add_charge(c, ns);
    }

    /// The debt part of [`Self::charge`].
    #[inline(always)]
    fn add_charge(&mut self, c: u32, ns: u64) {
        let rq = &mut self.w.rqs[c as usize];
        rq.debt += ns;
        rq.policy_ns += ns;
        if rq.curr.is_some() {
            self.arm_late(c);
        }
    }

    fn slice_begin(&mut self, t: TaskIdx, n: Name) {
        if let Some(tr) = &mut self.trace {
            tr.begin(self.w.now, t, n);
        }
    }

    fn slice_end(&mut self, t: TaskIdx, n: Name) {
        if let Some(tr) = &mut self.trace {
            tr.end(self.w.now, t, n);
        }
    }
}
