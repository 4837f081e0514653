//! The simulator: builds the world from a scenario, runs the event loop, interprets thread
//! programs and reports lock events to the policy.
//!
//! Scheduling mechanics (wakeup, pick, preemption, balancing) are in `sim/sched_ops.rs`;
//! this file owns the loop and the thread interpreter.

mod sched_ops;

use crate::engine::{Ev, EventQueue};
use crate::locks::{binder::Pool, Lock, TaskIdx};
use crate::metrics::{Active, Blocking, Cat, LockStat, RunResult};
use crate::platform::Platform;
use crate::policy::{Action, LockEvent, LockKind, Policy};
use crate::rng::Stream;
use crate::sched::{fair, Rq, Sched, State, Task, Why, World};
use crate::trace::{Name, TraceLog};
use crate::workload::{Dist, LockType, OpSpec, Scenario, ThreadRole};
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
    Signal(TaskIdx),
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

/// One simulation run in progress.
pub struct Sim {
    /// The state policies see.
    pub w: World,
    policy: Box<dyn Policy>,
    q: EventQueue,
    progs: Vec<Vec<Op>>,
    rngs: Vec<Stream>,
    tie: Stream,
    out: Vec<Action>,
    resched: u64,
    /// Entries on all runqueues' `fair` and `rt` lists together (balancing skips its scan
    /// when zero).
    queued: u32,
    /// CPUs with nothing current (`World::idle_mask`, kept up to date where `curr` changes).
    idle: u64,
    scratch: Vec<TaskIdx>,
    vsync_period: Option<u64>,
    deadline_ns: u64,
    vsync_waiters: Vec<TaskIdx>,
    frames: VecDeque<Frame>,
    frame_seq: u64,
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
    /// Invariant violations found (when checking).
    pub violations: Vec<String>,
    /// Process names by pid, for traces.
    pub processes: Vec<(i32, String)>,
}

impl Sim {
    /// Builds a run of `sc` under `policy` with `seed` for `seconds` of simulated time.
    pub fn new(
        sc: &Scenario,
        policy: Box<dyn Policy>,
        seed: u64,
        seconds: f64,
        o: &RunOpts,
    ) -> Self {
        let p = sc.platform.clone();
        let caps = p.capacities();
        let nr = caps.len();
        let mut lock_names = Vec::new();
        let mut locks = Vec::new();
        for l in &sc.locks {
            lock_names.push(l.name.clone());
            locks.push(Lock::new(l.kind));
        }
        let mut pools: Vec<Pool> = Vec::new();
        for t in &sc.threads {
            if let Some(pn) = &t.pool {
                if !pools.iter().any(|x| &x.name == pn) {
                    pools.push(Pool {
                        name: pn.clone(),
                        ..Pool::default()
                    });
                }
            }
        }
        let names = sc.expanded_names();
        let mut processes: Vec<(i32, String)> = Vec::new();
        let mut tasks = Vec::new();
        let mut progs = Vec::new();
        let mut starts = Vec::new();
        let mut next_tid = 1000;
        for spec in &sc.threads {
            let pid = match processes.iter().find(|(_, n)| n == &spec.process) {
                Some((pid, _)) => *pid,
                None => {
                    next_tid = (next_tid / 100 + 1) * 100;
                    processes.push((next_tid, spec.process.clone()));
                    next_tid
                }
            };
            let prog: Vec<Op> = spec
                .program
                .iter()
                .map(|op| compile(op, sc, &names, &lock_names, &pools))
                .collect();
            progs.push(prog);
            let group = p.group_index(&spec.group).unwrap_or(0);
            for i in 0..spec.count {
                let own = if spec.rt_prio > 0 {
                    Sched::fifo(spec.rt_prio as u8)
                } else {
                    Sched::fair(spec.nice)
                };
                let tid = if tasks.iter().any(|t: &Task| t.tid == pid) {
                    next_tid
                } else {
                    pid
                };
                next_tid = tid + 1;
                let name = if spec.count > 1 {
                    format!("{}-{}", spec.name, i)
                } else {
                    spec.name.clone()
                };
                starts.push(spec.start_us);
                tasks.push(Task {
                    tid,
                    pid,
                    name,
                    group,
                    allowed: p.group_mask(&spec.group).unwrap_or(1) & ((1u64 << nr) - 1).max(1),
                    prefer_big: spec.prefer_big,
                    role: spec.role,
                    own,
                    base: own,
                    eff: own,
                    weight: fair::weight(spec.nice),
                    state: State::Blocked(Why::Sleep),
                    cpu: 0,
                    on_rq: false,
                    vruntime: 0,
                    deadline: 0,
                    vlag: 0,
                    blocked_on: None,
                    lock_wait: None,
                    lock_wait_since: 0,
                    held: Vec::with_capacity(4),
                    prog: (progs.len() - 1) as u32,
                    pc: 0,
                    remaining: 0,
                    tokens: 0,
                    vsync_ts: 0,
                    serving: None,
                    pool: spec
                        .pool
                        .as_ref()
                        .and_then(|pn| pools.iter().position(|x| &x.name == pn))
                        .map(|x| x as u32),
                    timer_gen: 0,
                    sum_exec: 0,
                    runnable_since: 0,
                });
            }
        }
        let rqs = caps
            .iter()
            .map(|&cap| Rq {
                cap,
                ..Rq::default()
            })
            .collect();
        let critical = tasks
            .iter()
            .map(|t| matches!(t.role, ThreadRole::Ui | ThreadRole::Render))
            .collect();
        let w = World {
            now: 0,
            tasks,
            rqs,
            locks,
            lock_names,
            pools,
            base_slice: p.base_slice_ns,
            tick_ns: p.tick_ns,
        };
        let nt = w.tasks.len();
        let mut sim = Sim {
            policy,
            q: EventQueue::with_capacity(256),
            progs,
            rngs: (0..nt).map(|i| Stream::new(seed, i as u64 + 1)).collect(),
            tie: Stream::new(seed, 0),
            out: Vec::with_capacity(16),
            resched: 0,
            queued: 0,
            idle: if nr >= 64 { u64::MAX } else { (1u64 << nr) - 1 },
            scratch: Vec::with_capacity(16),
            vsync_period: sc.vsync_hz.map(|hz| (1e9 / hz) as u64),
            deadline_ns: sc
                .vsync_hz
                .map_or(0, |hz| (sc.deadline_periods * 1e9 / hz) as u64),
            vsync_waiters: Vec::new(),
            frames: VecDeque::new(),
            frame_seq: 0,
            warmup: (sc.warmup_ms * 1e6) as u64,
            end: (seconds * 1e9) as u64,
            platform: p,
            critical,
            active: Vec::new(),
            lock_last: vec![0; sc.locks.len()],
            res: RunResult {
                scenario: sc.name.clone(),
                seed,
                seconds,
                nr_cpus: nr as u32,
                locks: sc
                    .locks
                    .iter()
                    .map(|l| LockStat {
                        lock: l.name.clone(),
                        ..LockStat::default()
                    })
                    .collect(),
                ..RunResult::default()
            },
            base_counters: [0; 6],
            trace: o.trace.then(TraceLog::default),
            checks: o.check_invariants,
            violations: Vec::new(),
            processes,
            w,
        };
        sim.res.policy = sim.policy.name().into();
        sim.setup(&starts);
        sim
    }

    fn setup(&mut self, starts: &[Option<Dist>]) {
        self.policy.setup(&self.w, &mut self.out);
        self.apply();
        for (i, s) in starts.iter().enumerate() {
            let at = s.map_or(0, |d| self.rngs[i].sample_ns(&d));
            self.q.push(at, Ev::Timer(i as u32, 0));
        }
        for c in 0..self.w.rqs.len() as u32 {
            // Stagger ticks across CPUs as the kernel's per-CPU timers are.
            let off = self.w.tick_ns * c as u64 / self.w.rqs.len() as u64;
            self.q.push(off, Ev::Tick(c));
        }
        if let Some(p) = self.vsync_period {
            self.q.push(p, Ev::Vsync);
        }
        self.q.push(self.warmup.min(self.end), Ev::Warmup);
        self.q.push(self.end, Ev::End);
    }

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
        if let Some(c) = rq.curr {
            if self.policy.tick(&self.w, cpu, c, &mut self.out) {
                self.resched(cpu);
            }
            self.apply();
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

    /// Accounts lock `l`'s occupancy since it was last accounted; call before changing it.
    fn lock_occupancy(&mut self, l: u32) {
        let now = self.w.now;
        let lk = &self.w.locks[l as usize];
        let dt = now - std::mem::replace(&mut self.lock_last[l as usize], now);
        if dt == 0 {
            return;
        }
        let st = &mut self.res.locks[l as usize];
        if lk.owner().is_some() {
            st.owned_ns += dt;
            st.held_ns += dt;
        } else if !lk.readers().is_empty() {
            st.held_ns += dt;
        }
        if lk.waiters().next().is_some() {
            st.waited_ns += dt;
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
        let changed = self
            .out
            .iter()
            .any(|a| matches!(a, Action::SetEff(..) | Action::SetBase(..)));
        self.apply();
        changed
    }

    /// Applies the actions a policy pushed (usually none: checked inline, without a call).
    #[inline(always)]
    fn apply(&mut self) {
        if !self.out.is_empty() {
            self.apply_actions();
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
                Action::Charge(c, ns) => {
                    // Account the time before the charge first, so the debt delays only
                    // what remains. No slice-expiry check here: a hook running does not
                    // make the kernel re-evaluate the pick, and checking would preempt
                    // tasks at lock operations (where hooks fire) instead of at the tick.
                    // (Accounting at an instant already accounted changes nothing.)
                    if self.w.rqs[c as usize].last_update != self.w.now {
                        self.account(c, false);
                    }
                    let rq = &mut self.w.rqs[c as usize];
                    rq.debt += ns;
                    rq.policy_ns += ns;
                    if rq.curr.is_some() {
                        self.arm(c);
                    }
                }
                Action::GrantBegin(t) => self.slice_begin(t, Name::Grant(t)),
                Action::GrantEnd(t) => self.slice_end(t, Name::Grant(t)),
            }
        }
    }

    fn lock_event(&mut self, cpu: u32, ev: LockEvent) {
        self.policy.lock_event(&self.w, cpu, ev, &mut self.out);
        self.apply();
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

    /// Runs `t`'s instant ops until it needs CPU time or blocks. `t` is on a CPU.
    fn run_ops(&mut self, t: TaskIdx) -> Flow {
        let ti = t as usize;
        if let (Some(l), None) = (self.w.tasks[ti].lock_wait, self.w.tasks[ti].blocked_on) {
            self.resume_from_lock(t, l);
        }
        for _ in 0..100_000 {
            let task = &mut self.w.tasks[ti];
            let prog = &self.progs[task.prog as usize];
            let op = prog[task.pc as usize];
            // `pc < len`, so this is `(pc + 1) % len` without a division.
            task.pc = if task.pc + 1 == prog.len() as u32 {
                0
            } else {
                task.pc + 1
            };
            let cpu = task.cpu;
            match op {
                Op::Compute(d) => {
                    task.remaining = self.rngs[ti].sample_ns(&d).max(1) * 1024;
                    return Flow::Cpu;
                }
                Op::Sleep(d) => {
                    let dur = self.rngs[ti].sample_ns(&d).max(1);
                    let task = &mut self.w.tasks[ti];
                    task.timer_gen = task.timer_gen.wrapping_add(1);
                    let gen = task.timer_gen;
                    self.q.push(self.w.now + dur, Ev::Timer(t, gen));
                    self.block(t, Why::Sleep);
                    return Flow::Blocked;
                }
                Op::Lock(l, read) => {
                    if !self.lock(t, l, read) {
                        return Flow::Blocked;
                    }
                }
                Op::Unlock(l) => self.unlock(t, l),
                Op::WaitVsync => {
                    self.vsync_waiters.push(t);
                    self.block(t, Why::Vsync);
                    return Flow::Blocked;
                }
                Op::DoFrameBegin => {
                    let id = self.frame_seq;
                    self.frame_seq += 1;
                    let vsync = task.vsync_ts;
                    self.frames.push_back(Frame {
                        id,
                        vsync,
                        deadline: vsync + self.deadline_ns,
                    });
                    self.slice_begin(t, Name::DoFrame(id));
                }
                Op::DoFrameEnd => self.slice_end(t, Name::DoFrame(0)),
                Op::DrawFrameBegin => {
                    let id = self.frames.front().map_or(0, |f| f.id);
                    self.slice_begin(t, Name::DrawFrame(id));
                }
                Op::DrawFrameEnd => {
                    self.slice_end(t, Name::DrawFrame(0));
                    if let Some(f) = self.frames.pop_front() {
                        if f.vsync >= self.warmup {
                            self.res.frames += 1;
                            if self.w.now > f.deadline {
                                self.res.janky += 1;
                            }
                        }
                    }
                }
                Op::Signal(target) => {
                    let tt = &mut self.w.tasks[target as usize];
                    if tt.state == State::Blocked(Why::Wait) {
                        self.wake(target, Some(cpu));
                    } else {
                        tt.tokens += 1;
                    }
                }
                Op::Wait => {
                    if task.tokens > 0 {
                        task.tokens -= 1;
                    } else {
                        self.block(t, Why::Wait);
                        return Flow::Blocked;
                    }
                }
                Op::BinderCall(pool) => {
                    self.slice_begin(t, Name::Binder(pool));
                    let server = self.w.pools[pool as usize].call(t);
                    self.block(t, Why::Binder);
                    if let Some(s) = server {
                        self.wake(s, Some(cpu));
                    }
                    return Flow::Blocked;
                }
                Op::BinderServe => {
                    let pool = task.pool.expect("binder_serve outside a pool") as usize;
                    match self.w.pools[pool].serve(t) {
                        Some(c) => {
                            self.w.tasks[ti].serving = Some(c);
                            let ce = self.w.tasks[c as usize].eff;
                            let own = self.w.tasks[ti].own;
                            if !ce.is_rt() && !own.is_rt() && ce.nice < own.nice {
                                self.set_base(t, Sched::fair(ce.nice as i32));
                            }
                        }
                        None => {
                            self.block(t, Why::Serve);
                            return Flow::Blocked;
                        }
                    }
                }
                Op::BinderReply => {
                    if let Some(c) = task.serving.take() {
                        let own = task.own;
                        self.set_base(t, own);
                        self.slice_end(c, Name::Binder(0));
                        self.wake(c, Some(cpu));
                    }
                }
                Op::Branch(p, skip) => {
                    if self.rngs[ti].unit() >= p {
                        let task = &mut self.w.tasks[ti];
                        let len = self.progs[task.prog as usize].len() as u32;
                        task.pc = (task.pc + skip) % len;
                    }
                }
            }
        }
        panic!(
            "thread {} ran 100000 ops without taking time",
            self.w.tasks[ti].name
        );
    }

    fn set_base(&mut self, t: TaskIdx, s: Sched) {
        let task = &mut self.w.tasks[t as usize];
        let old_base = task.base;
        task.base = s;
        // Keep any inheritance above the old base; otherwise follow the new base.
        let eff = if task.eff != old_base {
            task.eff.max(s)
        } else {
            s
        };
        self.set_eff(t, eff);
    }

    fn lock_kind(&self, l: u32, read: bool) -> LockKind {
        match self.w.locks[l as usize].kind() {
            LockType::Mutex => LockKind::Mutex,
            LockType::Futex => LockKind::Futex,
            LockType::Rwsem if read => LockKind::RwsemRead,
            LockType::Rwsem => LockKind::RwsemWrite,
        }
    }

    /// Tries to take lock `l`; on contention starts (or continues) a wait and blocks.
    fn lock(&mut self, t: TaskIdx, l: u32, read: bool) -> bool {
        let ti = t as usize;
        let now = self.w.now;
        self.lock_occupancy(l);
        let st = &mut self.res.locks[l as usize];
        if self.critical[ti] && self.w.tasks[ti].lock_wait.is_none() {
            st.critical_attempts += 1;
        }
        let ok = match &mut self.w.locks[l as usize] {
            Lock::Mutex(m) => m.lock(t),
            Lock::Futex(f) => f.lock(t),
            Lock::Rwsem(r) => r.lock(t, read, now),
        };
        let kind = self.lock_kind(l, read);
        let cpu = self.w.tasks[ti].cpu;
        if ok {
            self.res.locks[l as usize].acquisitions += 1;
            self.w.tasks[ti].held.push(l);
            let ev = if kind == LockKind::RwsemRead {
                LockEvent::ReaderAcquired { lock: l, tid: t }
            } else {
                LockEvent::OwnerAcquired { lock: l, tid: t }
            };
            self.lock_event(cpu, ev);
            if self.w.tasks[ti].lock_wait == Some(l) {
                // A futex retry that won: the wait ends here.
                self.end_wait(t, l);
            }
            self.slice_begin(t, Name::LockHold(l));
            return true;
        }
        let task = &mut self.w.tasks[ti];
        if task.lock_wait.is_none() {
            task.lock_wait = Some(l);
            task.lock_wait_since = self.w.now;
            self.slice_begin(t, Name::LockWait(l));
            if self.critical[ti] {
                self.res.locks[l as usize].critical_contended += 1;
                self.active.push(Active {
                    task: t,
                    lock: l,
                    start: self.w.now,
                    last: self.w.now,
                    cat: Cat::Asleep,
                    acc: [0; 4],
                });
            }
        }
        let task = &mut self.w.tasks[ti];
        task.blocked_on = Some(l);
        if kind == LockKind::Futex {
            // Retry the lock op when woken.
            let len = self.progs[task.prog as usize].len() as u32;
            task.pc = (task.pc + len - 1) % len;
        }
        let owner = self.w.locks[l as usize].owner();
        self.lock_event(
            cpu,
            LockEvent::WaitStart {
                waiter: t,
                lock: l,
                kind,
                owner,
            },
        );
        if self.policy.blocks_in_place(kind) {
            self.w.tasks[ti].state = State::Blocked(Why::Lock);
            self.resched(cpu);
        } else {
            self.block(t, Why::Lock);
        }
        false
    }

    /// A task woken from a lock wait is running again.
    fn resume_from_lock(&mut self, t: TaskIdx, l: u32) {
        let cpu = self.w.tasks[t as usize].cpu;
        if self.w.locks[l as usize].kind() == LockType::Futex {
            // Woken to retry: the kernel wait is over, the user-visible wait is not.
            self.lock_event(
                cpu,
                LockEvent::WaitFinish {
                    waiter: t,
                    lock: l,
                    acquired: false,
                },
            );
            return;
        }
        self.lock_event(
            cpu,
            LockEvent::WaitFinish {
                waiter: t,
                lock: l,
                acquired: true,
            },
        );
        self.end_wait(t, l);
        self.slice_begin(t, Name::LockHold(l));
    }

    /// Closes a lock wait: trace slice and, for critical threads, a blocking interval.
    fn end_wait(&mut self, t: TaskIdx, l: u32) {
        self.w.tasks[t as usize].lock_wait = None;
        self.slice_end(t, Name::LockWait(l));
        if let Some(i) = self.active.iter().position(|a| a.task == t) {
            let mut a = self.active.swap_remove(i);
            let now = self.w.now;
            a.acc[a.cat as usize] += now - a.last;
            if a.start >= self.warmup {
                self.res.blocking.push(Blocking {
                    tid: self.w.tasks[t as usize].tid,
                    lock: self.w.lock_names[l as usize].clone(),
                    start_ns: a.start,
                    end_ns: now,
                    asleep_ns: a.acc[0],
                    runnable_ns: a.acc[1],
                    running_ns: a.acc[2],
                    self_ns: a.acc[3],
                });
            }
        }
    }

    fn unlock(&mut self, t: TaskIdx, l: u32) {
        let ti = t as usize;
        let pos = self.w.tasks[ti]
            .held
            .iter()
            .rposition(|&h| h == l)
            .unwrap_or_else(|| panic!("{} unlocks a lock it does not hold", self.w.tasks[ti].name));
        self.w.tasks[ti].held.remove(pos);
        self.slice_end(t, Name::LockHold(l));
        let cpu = self.w.tasks[ti].cpu;
        let now = self.w.now;
        self.lock_occupancy(l);
        let mut granted = std::mem::take(&mut self.scratch);
        granted.clear();
        let mut read_grants = false;
        let released = match &mut self.w.locks[l as usize] {
            Lock::Mutex(m) => {
                granted.extend(m.unlock(t));
                LockEvent::OwnerReleased { lock: l, tid: t }
            }
            Lock::Futex(f) => {
                let w = f.unlock(t);
                self.lock_event(cpu, LockEvent::OwnerReleased { lock: l, tid: t });
                if let Some(w) = w {
                    self.w.tasks[w as usize].blocked_on = None;
                    self.wake(w, Some(cpu));
                }
                self.scratch = granted;
                return;
            }
            Lock::Rwsem(r) => {
                let was_writer = r.writer == Some(t);
                r.unlock(t, &mut granted, now);
                read_grants = r.writer.is_none();
                if was_writer {
                    LockEvent::OwnerReleased { lock: l, tid: t }
                } else {
                    LockEvent::ReaderReleased { lock: l, tid: t }
                }
            }
        };
        self.lock_event(cpu, released);
        self.res.locks[l as usize].acquisitions += granted.len() as u64;
        for &g in &granted {
            let gt = &mut self.w.tasks[g as usize];
            gt.blocked_on = None;
            gt.held.push(l);
            let ev = if read_grants {
                // rwsem_mark_wake reports the readers it grants (record_rwsem_reader_owned).
                LockEvent::ReaderAcquired { lock: l, tid: g }
            } else {
                // The unlock path names the waiter it woke (mutex_unlock_slowpath,
                // rwsem_wake_finish) before the handoff makes it the owner.
                self.lock_event(cpu, LockEvent::Woken { lock: l, tid: g });
                LockEvent::OwnerAcquired { lock: l, tid: g }
            };
            self.lock_event(cpu, ev);
            self.wake(g, Some(cpu));
        }
        self.scratch = granted;
    }

    /// Accounts elapsed time of active blockings to their category and reclassifies them.
    fn refresh_waits(&mut self) {
        let now = self.w.now;
        for i in 0..self.active.len() {
            let a = &self.active[i];
            let cat = self.classify(a.task, a.lock);
            let a = &mut self.active[i];
            a.acc[a.cat as usize] += now - a.last;
            a.last = now;
            a.cat = cat;
        }
    }

    /// Where the root blocker of `waiter`'s wait on `l` is now.
    fn classify(&self, waiter: TaskIdx, l: u32) -> Cat {
        let w = &self.w;
        if w.task(waiter).blocked_on.is_none() {
            return Cat::SelfWait;
        }
        let mut lock = l;
        for _ in 0..8 {
            let lk = &w.locks[lock as usize];
            let owner = match lk.owner() {
                Some(o) => o,
                None => {
                    let rs = lk.readers();
                    if rs.is_empty() {
                        return Cat::SelfWait;
                    }
                    let best = rs
                        .iter()
                        .map(|&r| cat_of(w.task(r).state))
                        .max_by_key(|c| *c as u8);
                    return best.unwrap_or(Cat::Asleep);
                }
            };
            let ot = w.task(owner);
            match (ot.state, ot.blocked_on) {
                (State::Blocked(Why::Lock), Some(next)) => lock = next,
                (s, _) => return cat_of(s),
            }
        }
        Cat::Asleep
    }

    fn check_invariants(&mut self) {
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
        if self.idle != w.idle_mask() {
            self.violations.push(format!(
                "t={} idle mask {:#x} but {:#x} idle",
                w.now,
                self.idle,
                w.idle_mask()
            ));
        }
        let queued: usize = w.rqs.iter().map(|rq| rq.fair.len() + rq.rt.len()).sum();
        if queued != self.queued as usize {
            self.violations.push(format!(
                "t={} queued count {} but {queued} queued",
                w.now, self.queued
            ));
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

fn cat_of(s: State) -> Cat {
    match s {
        State::Running => Cat::Running,
        State::Runnable => Cat::Runnable,
        State::Blocked(_) => Cat::Asleep,
    }
}

fn compile(op: &OpSpec, sc: &Scenario, names: &[String], locks: &[String], pools: &[Pool]) -> Op {
    let lock = |n: &str| locks.iter().position(|l| l == n).expect("validated") as u32;
    let _ = sc;
    match op {
        OpSpec::Compute { us } => Op::Compute(*us),
        OpSpec::Sleep { us } => Op::Sleep(*us),
        OpSpec::Lock { lock: l, read } => Op::Lock(lock(l), *read),
        OpSpec::Unlock { lock: l } => Op::Unlock(lock(l)),
        OpSpec::WaitVsync => Op::WaitVsync,
        OpSpec::DoFrameBegin => Op::DoFrameBegin,
        OpSpec::DoFrameEnd => Op::DoFrameEnd,
        OpSpec::DrawFrameBegin => Op::DrawFrameBegin,
        OpSpec::DrawFrameEnd => Op::DrawFrameEnd,
        OpSpec::Signal { target } => {
            Op::Signal(names.iter().position(|n| n == target).expect("validated") as u32)
        }
        OpSpec::Wait => Op::Wait,
        OpSpec::BinderCall { pool } => Op::BinderCall(
            pools
                .iter()
                .position(|p| &p.name == pool)
                .expect("validated") as u32,
        ),
        OpSpec::BinderServe => Op::BinderServe,
        OpSpec::BinderReply => Op::BinderReply,
        OpSpec::Branch { p, skip } => Op::Branch(*p, *skip),
    }
}
