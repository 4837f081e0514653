//! Scheduler mechanics on the simulator: accounting, wakeup placement, preemption, the pick
//! (RT, then fair, then the policy's override and proxy resolution), and idle balancing.

use super::{Flow, Sim};
use crate::engine::Ev;
use crate::locks::TaskIdx;
use crate::policy::{Policy, ProxyPick};
use crate::sched::{fair, remove_at, rt, Sched, State, Why};
use crate::trace::TraceEv;

impl<P: Policy + ?Sized> Sim<P> {
    /// Accounts time since the last update on `cpu`: debt first, then the running task; if
    /// the fair task's slice is used up, sets a new deadline and marks `cpu` for a pick
    /// (`update_curr` → `update_deadline` in kernel/sched/fair.c).
    #[inline(always)]
    pub(super) fn update_curr(&mut self, cpu: u32) {
        self.account(cpu, true);
    }

    /// As [`Self::update_curr`]; with `check_deadline` false the slice-expiry check is left
    /// to the next scheduling point (tick, enqueue, dequeue, wakeup), so accounting done for
    /// the simulator's own bookkeeping (charging a policy's hook cost) does not add a
    /// scheduling point the kernel would not have.
    #[inline(always)]
    pub(super) fn account(&mut self, cpu: u32, check_deadline: bool) {
        let now = self.w.now;
        let rq = &mut self.w.rqs[cpu as usize];
        let Some(e) = rq.curr else {
            // Idle time pays off debt.
            let dt = now - rq.last_update;
            rq.last_update = now;
            rq.debt -= dt.min(rq.debt);
            return;
        };
        let donor = rq.donor.unwrap_or(e);
        // About half the calls come at an instant already accounted (several scheduling
        // points in one event): those skip the out-of-line part.
        if now != rq.last_update {
            self.advance(cpu, e, donor);
        }
        // Checked even when no time passed, so an earlier `account(.., false)` at this
        // instant cannot hide an expiry from this scheduling point.
        if check_deadline {
            let d = &mut self.w.tasks[donor as usize];
            if !d.eff.is_rt() && d.vruntime >= d.deadline {
                // Slice used up: new deadline, and let the pick decide (update_deadline).
                d.deadline = d.vruntime + d.vslice;
                let rq = &self.w.rqs[cpu as usize];
                if !rq.fair.is_empty() || !rq.rt.is_empty() {
                    self.resched |= 1 << cpu;
                }
            }
        }
    }

    /// Runs `cpu`'s current task `e` (on `donor`'s context) from the last update to now:
    /// debt first, then the task's work, its CPU time and the donor's vruntime.
    #[inline(never)]
    fn advance(&mut self, cpu: u32, e: TaskIdx, donor: TaskIdx) {
        let now = self.w.now;
        let rq = &mut self.w.rqs[cpu as usize];
        let dt = now - rq.last_update;
        rq.last_update = now;
        let d = dt.min(rq.debt);
        rq.debt -= d;
        let run = dt - d;
        rq.busy_ns += dt;
        let cap = rq.cap as u64;
        let t = &mut self.w.tasks[e as usize];
        t.sum_exec += run;
        t.remaining = t.remaining.saturating_sub(run * cap);
        let d = &mut self.w.tasks[donor as usize];
        if !d.eff.is_rt() {
            d.vruntime += fair::to_virtual(dt, d.weight);
        }
    }

    /// (Re)schedules the completion event of `cpu`'s running compute.
    #[inline(always)]
    pub(super) fn arm(&mut self, cpu: u32) {
        let rq = &mut self.w.rqs[cpu as usize];
        rq.gen = rq.gen.wrapping_add(1);
        let Some(e) = rq.curr else { return };
        let at = self.w.now + rq.debt + wall(self.w.tasks[e as usize].remaining, rq.cap);
        let gen = rq.gen;
        self.q.push(at, Ev::Done(cpu, gen));
    }

    /// As [`Self::arm`] for a CPU running a task, with the completion queued at the end of
    /// the event ([`Self::queue_late`]) under the sequence number it takes now. Every hook
    /// charge re-arms its CPU, and most are superseded by another charge or by the arm after
    /// the CPU's next pick or op within the same event; nothing a later arm reads (the debt,
    /// the running task, its remaining work) changes without one.
    #[inline(always)]
    pub(super) fn arm_late(&mut self, cpu: u32) {
        let rq = &mut self.w.rqs[cpu as usize];
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        self.late_arm[cpu as usize % 64] = (self.q.reserve(), gen);
        self.late |= 1 << cpu;
    }

    /// Queues the completions [`Self::arm_late`] left for the end of the event, but those a
    /// later arm superseded (the CPU's generation moved on; `arm` leaves `late` alone, so a
    /// policy that never charges pays nothing for it).
    #[inline(always)]
    pub(super) fn queue_late(&mut self) {
        let mut m = std::mem::take(&mut self.late);
        while m != 0 {
            let cpu = m.trailing_zeros();
            m &= m - 1;
            let rq = &self.w.rqs[cpu as usize];
            let (seq, gen) = self.late_arm[cpu as usize % 64];
            if rq.gen != gen {
                continue;
            }
            let Some(e) = rq.curr else {
                unreachable!("the running task changed without a re-arm");
            };
            let at = self.w.now + rq.debt + wall(self.w.tasks[e as usize].remaining, rq.cap);
            self.q.push_reserved(at, seq, cpu, gen);
        }
    }

    /// Marks `cpu` for a pick before this event finishes.
    pub(super) fn resched(&mut self, cpu: u32) {
        self.resched |= 1 << cpu;
    }

    /// Runs pending picks and idle balancing until nothing changes.
    pub(super) fn flush(&mut self) {
        loop {
            while self.resched != 0 {
                let c = self.resched.trailing_zeros();
                self.resched &= !(1 << c);
                self.schedule(c);
            }
            if !self.balance() {
                break;
            }
        }
    }

    /// Puts the running task(s) back on the queue if they are still on the runqueue.
    fn put_prev(&mut self, cpu: u32) {
        let rq = &mut self.w.rqs[cpu as usize];
        let curr = rq.curr.take();
        let donor = rq.donor.take();
        self.idle |= 1 << cpu;
        if let Some(d) = donor {
            self.put_back(cpu, d);
        }
        if let Some(c) = curr.filter(|&c| Some(c) != donor) {
            self.put_back(cpu, c);
        }
    }

    /// Queues `t`, just taken off `cpu`, on `cpu`'s list again if it is still on the runqueue.
    #[inline(always)]
    fn put_back(&mut self, cpu: u32, t: TaskIdx) {
        // Not queued any more; or it blocked here and, before this CPU picked again, a
        // wakeup queued it anew, on another CPU or on this one's list: leave it there.
        let rq = &self.w.rqs[cpu as usize];
        let task = &self.w.tasks[t as usize];
        if !task.on_rq || task.cpu != cpu || rq.fair.contains(&t) || rq.rt.contains(&t) {
            return;
        }
        let task = &mut self.w.tasks[t as usize];
        if task.state == State::Running {
            task.state = State::Runnable;
            task.runnable_since = self.w.now;
        }
        let rq = &mut self.w.rqs[cpu as usize];
        if task.eff.is_rt() {
            rq.rt.insert(0, t); // a preempted FIFO task stays at the head of its level
        } else {
            rq.fair.push(t);
        }
        self.count_queued(cpu);
    }

    /// The pick on `cpu`.
    pub(super) fn schedule(&mut self, cpu: u32) {
        self.update_curr(cpu);
        let prev = self.w.rqs[cpu as usize].curr;
        self.put_prev(cpu);
        loop {
            let Some((exec, donor)) = self.pick_next(cpu, prev) else {
                self.switch_to(cpu, None, None);
                break;
            };
            self.switch_to(cpu, Some(exec), Some(donor));
            if self.w.tasks[exec as usize].remaining > 0 {
                break;
            }
            match self.run_ops(exec) {
                Flow::Cpu => break,
                Flow::Blocked => {
                    self.resched &= !(1 << cpu);
                    self.put_prev(cpu);
                }
            }
        }
        self.arm(cpu);
    }

    /// Chooses what runs next: (execution context, scheduling context).
    fn pick_next(&mut self, cpu: u32, prev: Option<TaskIdx>) -> Option<(TaskIdx, TaskIdx)> {
        for _ in 0..10_000 {
            let rq = &self.w.rqs[cpu as usize];
            let next = match rt::pick(rq, &self.w.tasks) {
                Some(t) => Some(t),
                None if !self.sched_hooks => fair::pick(rq, &self.w.tasks),
                None => {
                    let n = fair::pick(rq, &self.w.tasks);
                    let o = self.policy.pick_fair(&self.w, cpu, prev, n, &mut self.out);
                    let changed = self.apply_changed();
                    self.charge_sched_hook(cpu);
                    let rq = &self.w.rqs[cpu as usize];
                    match o {
                        Some(t)
                            if rq.fair.contains(&t)
                                && self.w.tasks[t as usize].state == State::Runnable =>
                        {
                            Some(t)
                        }
                        // Nothing the pick reads changed since `n`: it would pick `n` again.
                        _ if !changed => n,
                        _ => fair::pick(rq, &self.w.tasks),
                    }
                }
            };
            let n = next?;
            if self.w.tasks[n as usize].state == State::Blocked(Why::Lock) {
                match self.policy.find_proxy(&self.w, cpu, n, &mut self.out) {
                    ProxyPick::Run(o)
                        if self.w.tasks[o as usize].state == State::Runnable
                            && self.w.tasks[o as usize].cpu == cpu =>
                    {
                        self.apply();
                        self.take_from_queue(cpu, n);
                        self.take_from_queue(cpu, o);
                        return Some((o, n));
                    }
                    ProxyPick::Migrate(c) if c != cpu => {
                        self.apply();
                        self.migrate_queued(n, c);
                        self.resched(c);
                    }
                    _ => {
                        self.apply();
                        self.deactivate_queued(cpu, n);
                    }
                }
                continue;
            }
            self.take_from_queue(cpu, n);
            return Some((n, n));
        }
        panic!("pick on cpu {cpu} did not converge");
    }

    fn take_from_queue(&mut self, cpu: u32, t: TaskIdx) {
        let rq = &mut self.w.rqs[cpu as usize];
        if let Some(i) = rq.fair.iter().position(|&x| x == t) {
            remove_at(&mut rq.fair, i);
        } else if let Some(i) = rq.rt.iter().position(|&x| x == t) {
            remove_at(&mut rq.rt, i);
        } else {
            return;
        }
        self.queued -= 1;
        if rq.fair.is_empty() && rq.rt.is_empty() {
            self.queued_on &= !(1 << cpu);
        }
    }

    /// Counts an entry just added to `cpu`'s `fair` or `rt` list.
    #[inline(always)]
    fn count_queued(&mut self, cpu: u32) {
        self.queued += 1;
        self.queued_on |= 1 << cpu;
    }

    /// Makes `exec` (on `donor`'s context) current on `cpu`, charging a switch if it changed.
    #[inline(always)]
    fn switch_to(&mut self, cpu: u32, exec: Option<TaskIdx>, donor: Option<TaskIdx>) {
        let now = self.w.now;
        let cs = self.platform.context_switch_ns;
        let rq = &mut self.w.rqs[cpu as usize];
        rq.curr = exec;
        rq.donor = donor;
        if exec.is_some() {
            self.idle &= !(1 << cpu);
        } else {
            self.idle |= 1 << cpu;
        }
        if let Some(e) = exec {
            self.w.tasks[e as usize].state = State::Running;
        }
        if let Some(d) = donor {
            if let Some(v) = self.w.tasks.get(d as usize).map(|t| t.vruntime) {
                let rq = &mut self.w.rqs[cpu as usize];
                rq.vclock = rq.vclock.max(v);
            }
        }
        let rq = &mut self.w.rqs[cpu as usize];
        if rq.last_exec == exec {
            return;
        }
        let prev = rq.last_exec;
        rq.last_exec = exec;
        if exec.is_some() {
            rq.debt += cs;
            rq.switch_ns += cs;
            rq.switches += 1;
        }
        if let Some(tr) = &mut self.trace {
            let (prev_state, prev_prio) = match prev {
                None => (0, 120),
                Some(p) => {
                    let t = &self.w.tasks[p as usize];
                    let st = match t.state {
                        State::Running | State::Runnable => 0,
                        State::Blocked(Why::Lock) => 2,
                        State::Blocked(_) => 1,
                    };
                    (st, t.eff.kernel_prio())
                }
            };
            let next_prio = exec.map_or(120, |e| self.w.tasks[e as usize].eff.kernel_prio());
            tr.events.push(TraceEv::Switch {
                ts: now,
                cpu,
                prev,
                prev_state,
                prev_prio,
                next: exec,
                next_prio,
            });
        }
    }

    /// Wakes a blocked task: places it, queues it and checks preemption.
    pub(super) fn wake(&mut self, t: TaskIdx, waker_cpu: Option<u32>) {
        let now = self.w.now;
        let task = &mut self.w.tasks[t as usize];
        if task.state == State::Running || task.state == State::Runnable {
            return;
        }
        task.state = State::Runnable;
        task.runnable_since = now;
        if task.on_rq {
            // A proxy donor whose lock was handed over: it is already queued. With donor
            // migration it returns through the wakeup path (return migration), unless it is
            // its CPU's scheduling context right now: a task still on a CPU is woken in place
            // (`ttwu_runnable`), and moving it would leave it current on one CPU and queued
            // on another.
            let cpu = task.cpu;
            let current = self.w.rqs[cpu as usize].donor == Some(t);
            if !self.policy.return_migrate() || current {
                self.check_preempt(cpu, t);
                return;
            }
            self.dequeue(t);
        }
        let cpu = self.select_cpu(t);
        self.enqueue(t, cpu);
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEv::Waking {
                ts: now,
                cpu: waker_cpu.unwrap_or(cpu),
                task: t,
                prio: self.w.tasks[t as usize].eff.kernel_prio(),
                target: cpu,
            });
        }
        self.check_preempt(cpu, t);
    }

    /// Queues `t` on `cpu`, placing its vruntime from its lag.
    #[inline(always)]
    fn enqueue(&mut self, t: TaskIdx, cpu: u32) {
        self.update_curr(cpu);
        let v = fair::avg_vruntime(&self.w.rqs[cpu as usize], &self.w.tasks);
        let task = &mut self.w.tasks[t as usize];
        task.cpu = cpu;
        task.on_rq = true;
        let rq = &mut self.w.rqs[cpu as usize];
        if task.eff.is_rt() {
            rq.rt.push(t);
        } else {
            fair::place(task, v);
            rq.fair.push(t);
        }
        self.count_queued(cpu);
        if self.sched_hooks {
            self.policy.enqueue(&self.w, cpu, t, &mut self.out);
            self.apply();
            self.charge_sched_hook(cpu);
        }
    }

    /// Takes a task off its runqueue, saving its lag.
    #[inline(always)]
    fn dequeue(&mut self, t: TaskIdx) {
        let cpu = self.w.tasks[t as usize].cpu;
        self.update_curr(cpu);
        self.take_from_queue(cpu, t);
        let v = fair::avg_vruntime(&self.w.rqs[cpu as usize], &self.w.tasks);
        let task = &mut self.w.tasks[t as usize];
        if !task.eff.is_rt() {
            fair::save_lag(task, v);
        }
        task.on_rq = false;
        self.w.rqs[cpu as usize].vclock = v;
        if self.sched_hooks {
            self.policy.dequeue(&self.w, cpu, t, &mut self.out);
            self.apply();
            self.charge_sched_hook(cpu);
        }
    }

    /// The running task `t` blocks.
    pub(super) fn block(&mut self, t: TaskIdx, why: Why) {
        let cpu = self.w.tasks[t as usize].cpu;
        self.w.tasks[t as usize].state = State::Blocked(why);
        if self.w.tasks[t as usize].on_rq {
            self.dequeue(t);
        }
        self.resched(cpu);
    }

    /// A blocked proxy donor leaves the runqueue (the owner cannot run here).
    fn deactivate_queued(&mut self, _cpu: u32, t: TaskIdx) {
        self.dequeue(t);
    }

    /// Moves a queued task to another runqueue.
    fn migrate_queued(&mut self, t: TaskIdx, dst: u32) {
        self.dequeue(t);
        let rq = &mut self.w.rqs[dst as usize];
        rq.debt += self.platform.migration_ns;
        rq.switch_ns += self.platform.migration_ns;
        let st = self.w.tasks[t as usize].state;
        self.enqueue(t, dst);
        self.w.tasks[t as usize].state = st;
        self.check_preempt(dst, t);
    }

    /// Whether `t`, just queued on `cpu`, should preempt what runs there.
    fn check_preempt(&mut self, cpu: u32, t: TaskIdx) {
        let rq = &self.w.rqs[cpu as usize];
        let Some(c) = rq.donor.or(rq.curr) else {
            self.resched(cpu);
            return;
        };
        let (ce, te) = (self.w.tasks[c as usize].eff, self.w.tasks[t as usize].eff);
        if te.is_rt() {
            if !ce.is_rt() || te.rt > ce.rt {
                self.resched(cpu);
            }
            return;
        }
        if ce.is_rt() {
            return;
        }
        self.update_curr(cpu);
        let pick = fair::pick(&self.w.rqs[cpu as usize], &self.w.tasks);
        let forced = self.sched_hooks && {
            let f = self
                .policy
                .should_preempt(&self.w, cpu, c, t, &mut self.out);
            self.apply();
            self.charge_sched_hook(cpu);
            f
        };
        if pick == Some(t) || forced {
            self.resched(cpu);
        }
    }

    /// Default wakeup placement (EAS-like, see docs/sim.md), unless the policy chooses.
    fn select_cpu(&mut self, t: TaskIdx) -> u32 {
        let task = &self.w.tasks[t as usize];
        let (allowed, prev, is_rt, big) =
            (task.allowed, task.cpu, task.eff.is_rt(), task.prefer_big);
        let idle = self.idle;
        if is_rt {
            return self.select_rt(t);
        }
        if self.sched_hooks {
            let c = self
                .policy
                .select_cpu(&self.w, t, prev, idle, &mut self.out);
            self.apply();
            // `prev` need not be accounted at this instant: the charge accounts it first.
            if self.sched_hook_ns != 0 {
                self.charge(prev, self.sched_hook_ns);
            }
            if let Some(c) = c.filter(|&c| allowed & (1 << c) != 0) {
                return c;
            }
        }
        let cand = idle & allowed;
        if cand != 0 {
            if !big && cand & (1 << prev) != 0 {
                return prev;
            }
            let cap = |c: u32| self.w.rqs[c as usize].cap;
            let want = if big {
                bits(cand).map(cap).max()
            } else {
                bits(cand).map(cap).min()
            };
            let ties = bits(cand)
                .filter(|&c| Some(cap(c)) == want)
                .fold(0u64, |m, c| m | 1 << c);
            if ties & (1 << prev) != 0 {
                return prev;
            }
            // Equal candidates: the tie-break stream decides (never the workload stream).
            let k = self.tie.below(ties.count_ones() as u64) as usize;
            return bits(ties).nth(k).unwrap_or(prev);
        }
        // No idle CPU: least load per capacity, prev on ties.
        let load = |s: &Self, c: u32| -> u64 {
            let rq = &s.w.rqs[c as usize];
            let mut l: u64 = rq.fair.iter().map(|&x| s.w.tasks[x as usize].weight).sum();
            if let Some(d) = rq.donor.or(rq.curr) {
                let dt = &s.w.tasks[d as usize];
                l += if dt.eff.is_rt() { 1 << 20 } else { dt.weight };
            }
            l += rq.rt.len() as u64 * (1 << 20);
            l * 1024 / rq.cap as u64
        };
        let mut best = (u64::MAX, prev);
        for c in bits(allowed) {
            let l = load(self, c);
            if l < best.0 || (l == best.0 && c == prev) {
                best = (l, c);
            }
        }
        best.1
    }

    /// RT placement (cpupri-like): the allowed CPU running the least urgent thing.
    fn select_rt(&mut self, t: TaskIdx) -> u32 {
        let task = &self.w.tasks[t as usize];
        let (allowed, prev, big) = (task.allowed, task.cpu, task.prefer_big);
        // Lowest rank wins; then (for tasks that must fit a big core, as uclamp.min asks)
        // capacity; then prev; then the highest capacity; then the lowest number.
        let mut best: Option<(u32, u32, bool, u32, u32)> = None;
        for c in bits(allowed) {
            let rq = &self.w.rqs[c as usize];
            let fit = if big { u32::MAX - rq.cap } else { 0 };
            let key = (
                rt::cpu_rank(rq, &self.w.tasks),
                fit,
                c != prev,
                u32::MAX - rq.cap,
                c,
            );
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map_or(prev, |b| b.4)
    }

    /// Applies new effective parameters, moving the task between classes if needed.
    pub(super) fn set_eff(&mut self, t: TaskIdx, s: Sched) {
        let task = &self.w.tasks[t as usize];
        if task.eff == s {
            return;
        }
        let cpu = task.cpu;
        let on_rq = task.on_rq;
        let rq = &self.w.rqs[cpu as usize];
        let running = rq.curr == Some(t) || rq.donor == Some(t);
        if running {
            self.update_curr(cpu);
        }
        let queued = on_rq && !running;
        let v = fair::avg_vruntime(&self.w.rqs[cpu as usize], &self.w.tasks);
        if queued {
            self.take_from_queue(cpu, t);
        }
        let (slice, tick) = (self.w.base_slice, self.w.tick_ns);
        let task = &mut self.w.tasks[t as usize];
        let was_rt = task.eff.is_rt();
        let old_w = task.weight;
        task.eff = s;
        fair::set_weight(task, fair::weight(s.nice as i32), slice, tick);
        if !s.is_rt() {
            if was_rt || !on_rq {
                task.vruntime = if on_rq { v } else { task.vruntime };
            } else {
                // reweight_entity: the lag scales by old/new weight.
                let lag = (v - task.vruntime) as i128 * old_w as i128 / task.weight as i128;
                task.vruntime = v - lag as i64;
            }
            if !on_rq {
                task.vlag = (task.vlag as i128 * old_w as i128 / task.weight as i128) as i64;
            }
            task.deadline = task.vruntime + task.vslice;
        }
        if queued {
            let rq = &mut self.w.rqs[cpu as usize];
            if s.is_rt() {
                rq.rt.push(t);
            } else {
                rq.fair.push(t);
            }
            self.count_queued(cpu);
            if self.w.tasks[t as usize].state == State::Runnable {
                self.check_preempt(cpu, t);
            }
        } else if running {
            self.resched(cpu);
        }
    }

    /// Pulls waiting tasks to idle CPUs, then misfit tasks to idle faster CPUs; true if
    /// anything moved.
    fn balance(&mut self) -> bool {
        let idle = self.idle;
        if idle == 0 {
            return false;
        }
        if self.queued != 0 && self.pull_waiting(idle) {
            return true;
        }
        self.granted != 0 && self.pull_misfit()
    }

    /// Misfit migration: an idle CPU of higher capacity pulls a task the policy marks misfit
    /// on its CPU, the slowest source first, to the fastest CPU the policy names (running
    /// tasks by active balance: the stopper takes them off their CPU). Linux does this at its
    /// next balance (kernel/sched/fair.c, `group_misfit_task`, `need_active_balance` for
    /// `migrate_misfit`); here at once, as the idle pull above (an **assumption**,
    /// docs/sim.md).
    #[cold]
    #[inline(never)]
    fn pull_misfit(&mut self) -> bool {
        // The sources in (capacity, number) order from a list made at build: SuperPass asks
        // here at many events while it holds a grant, and sorting cost more than the search.
        for i in 0..self.by_capacity.len() {
            let src = self.by_capacity[i];
            if self.idle & (1 << src) != 0 {
                continue;
            }
            let faster = self.idle & self.faster_than[src as usize];
            if faster == 0 {
                continue;
            }
            let (w, policy) = (&self.w, &mut self.policy);
            let rq = &w.rqs[src as usize];
            if rq.donor.is_some_and(|d| Some(d) != rq.curr) {
                continue; // proxy execution: leave the scheduling context alone
            }
            let found = rq
                .curr
                .into_iter()
                .chain(rq.fair.iter().copied())
                .find_map(|t| {
                    let task = &w.tasks[t as usize];
                    if !matches!(task.state, State::Running | State::Runnable) || task.eff.is_rt() {
                        return None;
                    }
                    let to =
                        policy.misfit_targets(w, t, src, faster & task.allowed, rq.curr == Some(t));
                    let dst = bits(to).max_by_key(|&c| (w.rqs[c as usize].cap, u32::MAX - c))?;
                    Some((t, dst))
                });
            if let Some((t, dst)) = found {
                self.migrate_misfit(t, src, dst);
                return true;
            }
        }
        false
    }

    /// A policy's push: moves task `t` to CPU `dst` now if it is still runnable or running on
    /// another CPU it may leave (the stopper takes a running one off its CPU), where it
    /// preempts as a waking task would; otherwise nothing (it slept or moved meanwhile).
    #[cold]
    #[inline(never)]
    pub(super) fn push_task(&mut self, t: TaskIdx, dst: u32) {
        let task = &self.w.tasks[t as usize];
        let src = task.cpu;
        let movable = task.on_rq
            && matches!(task.state, State::Running | State::Runnable)
            && !task.eff.is_rt()
            && src != dst
            && (dst as usize) < self.w.rqs.len()
            && task.allowed & (1 << dst) != 0;
        let rq = &self.w.rqs[src as usize];
        if movable && rq.donor.is_none_or(|d| Some(d) == rq.curr) {
            self.migrate_misfit(t, src, dst);
        }
    }

    /// Moves running or queued task `t` from `src` to `dst` (idle, or a push's target, which
    /// picks again).
    #[cold]
    #[inline(never)]
    fn migrate_misfit(&mut self, t: TaskIdx, src: u32, dst: u32) {
        let running = self.w.rqs[src as usize].curr == Some(t);
        self.dequeue(t);
        if running {
            // The stopper takes it off `src`, which picks again.
            let rq = &mut self.w.rqs[src as usize];
            rq.curr = None;
            rq.donor = None;
            self.idle |= 1 << src;
            let task = &mut self.w.tasks[t as usize];
            task.state = State::Runnable;
            task.runnable_since = self.w.now;
            self.resched(src);
        }
        let rq = &mut self.w.rqs[dst as usize];
        rq.debt += self.platform.migration_ns;
        rq.switch_ns += self.platform.migration_ns;
        self.enqueue(t, dst);
        self.resched(dst);
    }

    /// Pulls waiting tasks to idle CPUs; true if anything moved.
    #[inline(always)]
    fn pull_waiting(&mut self, idle: u64) -> bool {
        // The CPUs some queued runnable task may move to. Moves below neither change which
        // tasks are queued and runnable nor their masks, so `want` bounds the candidates
        // for the whole loop; a CPU outside it has none.
        let mut want = 0u64;
        for c in bits(self.queued_on) {
            let rq = &self.w.rqs[c as usize];
            for &t in &rq.rt {
                let task = &self.w.tasks[t as usize];
                if task.state == State::Runnable {
                    want |= task.allowed;
                }
            }
            for &t in &rq.fair {
                let task = &self.w.tasks[t as usize];
                if task.state == State::Runnable {
                    want |= task.allowed;
                }
            }
        }
        if idle & want == 0 {
            return false;
        }
        let mut moved = false;
        for c in bits(idle & want) {
            if !self.w.rqs[c as usize].is_idle() {
                continue;
            }
            // Candidate: RT first (highest prio), then the fair task waiting longest.
            let mut best: Option<(bool, u8, u64, TaskIdx)> = None;
            // Only lists that hold something, in CPU order as a scan of all would visit them.
            for src in bits(self.queued_on & !(1 << c)) {
                let rq = &self.w.rqs[src as usize];
                for &t in rq.rt.iter().chain(&rq.fair) {
                    let task = &self.w.tasks[t as usize];
                    if task.state != State::Runnable || task.allowed & (1 << c) == 0 {
                        continue;
                    }
                    let key = (
                        task.eff.is_rt(),
                        task.eff.rt,
                        u64::MAX - task.runnable_since,
                        t,
                    );
                    if best.is_none_or(|b| (key.0, key.1, key.2) > (b.0, b.1, b.2)) {
                        best = Some(key);
                    }
                }
            }
            if let Some((_, _, _, t)) = best {
                let st = self.w.tasks[t as usize].state;
                self.dequeue(t);
                let rq = &mut self.w.rqs[c as usize];
                rq.debt += self.platform.migration_ns;
                rq.switch_ns += self.platform.migration_ns;
                self.enqueue(t, c);
                self.w.tasks[t as usize].state = st;
                self.resched(c);
                moved = true;
            }
        }
        moved
    }
}

/// The wall time a CPU of capacity `cap` takes to retire `rem` units of work.
#[inline(always)]
fn wall(rem: u64, cap: u32) -> u64 {
    // A task whose work is done (it ran out at this very instant, and a charge or another
    // account re-arms before its completion is handled) completes once the CPU's debt is
    // burned: the re-arm superseded the completion it had.
    let cap = cap as u64;
    // `rem.div_ceil(cap)`, by shifting for the usual power-of-two capacities.
    if cap.is_power_of_two() {
        (rem >> cap.trailing_zeros()) + u64::from(rem & (cap - 1) != 0)
    } else {
        rem.div_ceil(cap)
    }
}

/// Set bits of a mask, lowest first.
fn bits(mut m: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let c = m.trailing_zeros();
        m &= m - 1;
        Some(c)
    })
}
