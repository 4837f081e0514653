//! Building a run: the world, the threads' compiled programs and the policy's setup, from a
//! scenario.

use super::*;

impl<P: Policy + ?Sized> Sim<P> {
    /// Builds a run of `sc` under `policy` with `seed` for `seconds` of simulated time.
    pub fn new(sc: &Scenario, policy: Box<P>, seed: u64, seconds: f64, o: &RunOpts) -> Self {
        let p = sc.platform.clone();
        let caps = p.capacities();
        let nr = caps.len();
        let mut lock_names = Vec::new();
        let mut locks = Vec::new();
        let mut lock_vis = Vec::new();
        for l in &sc.locks {
            lock_names.push(l.name.clone());
            locks.push(Lock::new(l));
            lock_vis.push(Lock::visibility(l));
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
            // The declared group decides what counts as background work; the CPUs of the top
            // app's background-priority threads follow the placement.
            let cpus = if sc.app_background(spec) && p.group_index(sc.placement.group()).is_some() {
                sc.placement.group()
            } else {
                &spec.group
            };
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
                    allowed: p.group_mask(cpus).unwrap_or(1) & ((1u64 << nr) - 1).max(1),
                    prefer_big: spec.prefer_big,
                    role: spec.role,
                    own,
                    base: own,
                    eff: own,
                    weight: 0,
                    vslice: 0,
                    vlag_limit: 0,
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
                    sync_sender: None,
                    vsync_ts: 0,
                    serving: None,
                    call: None,
                    pool: spec
                        .pool
                        .as_ref()
                        .and_then(|pn| pools.iter().position(|x| &x.name == pn))
                        .map(|x| x as u32),
                    timer_gen: 0,
                    sum_exec: 0,
                    runnable_since: 0,
                });
                let t = tasks.last_mut().expect("just pushed");
                fair::set_weight(t, fair::weight(spec.nice), p.base_slice_ns, p.tick_ns);
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
            lock_vis,
            pools,
            base_slice: p.base_slice_ns,
            tick_ns: p.tick_ns,
        };
        let nt = w.tasks.len();
        let (sched_hooks, lock_hooks) = (policy.sched_hooks(), policy.lock_hooks());
        let sched_hook_ns = policy.sched_hook_ns();
        let mut sim = Sim {
            policy,
            q: EventQueue::with_capacity(256),
            progs,
            rngs: (0..nt).map(|i| Stream::new(seed, i as u64 + 1)).collect(),
            tie: Stream::new(seed, 0),
            out: Vec::with_capacity(16),
            resched: 0,
            queued: 0,
            queued_on: 0,
            sched_hooks,
            sched_hook_ns,
            lock_hooks,
            idle: if nr >= 64 { u64::MAX } else { (1u64 << nr) - 1 },
            late: 0,
            late_arm: [(0, 0); 64],
            scratch: Vec::with_capacity(16),
            vsync_period: sc.vsync_hz.map(|hz| (1e9 / hz) as u64),
            deadline_ns: sc
                .vsync_hz
                .map_or(0, |hz| (sc.deadline_periods * 1e9 / hz) as u64),
            vsync_waiters: Vec::new(),
            frames: VecDeque::new(),
            frame_seq: 0,
            call_seq: 0,
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
            explain: o.explain,
            granted: 0,
            by_capacity: by_capacity(&caps),
            faster_than: caps
                .iter()
                .map(|&c| {
                    (0..nr)
                        .filter(|&d| caps[d] > c)
                        .fold(0u64, |m, d| m | 1 << d)
                })
                .collect(),
            violations: Vec::new(),
            processes,
            w,
        };
        sim.res.policy = sim.policy.name().into();
        sim.setup(&starts);
        sim
    }

    pub(super) fn setup(&mut self, starts: &[Option<Dist>]) {
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
}

/// The CPUs ordered by (capacity, number), given each one's capacity.
fn by_capacity(caps: &[u32]) -> Vec<u32> {
    let mut cpus: Vec<u32> = (0..caps.len() as u32).collect();
    cpus.sort_by_key(|&c| (caps[c as usize], c));
    cpus
}

pub(super) fn compile(
    op: &OpSpec,
    sc: &Scenario,
    names: &[String],
    locks: &[String],
    pools: &[Pool],
) -> Op {
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
        OpSpec::Signal { target, sync } => {
            let to = names.iter().position(|n| n == target).expect("validated") as u32;
            Op::Signal(to, *sync)
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
