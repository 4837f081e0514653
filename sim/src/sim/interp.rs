//! The thread interpreter: runs a thread's compiled program until it blocks, sleeps or
//! computes.

use super::*;

impl<P: Policy + ?Sized> Sim<P> {
    /// Runs `t`'s instant ops until it needs CPU time or blocks. `t` is on a CPU.
    pub(super) fn run_ops(&mut self, t: TaskIdx) -> Flow {
        let ti = t as usize;
        if let (Some(l), None) = (self.w.tasks[ti].lock_wait, self.w.tasks[ti].blocked_on) {
            if !self.resume_from_lock(t, l) {
                return Flow::Blocked;
            }
        }
        if let Some(call) = self.w.tasks[ti].call.filter(|c| c.replied) {
            // Back from its binder call: it reads the reply.
            self.w.tasks[ti].call = None;
            if self.critical[ti] && call.since >= self.warmup {
                self.res.binder_ns.push(self.w.now - call.since);
            }
            let cpu = self.w.tasks[ti].cpu;
            let received = BinderEvent::Received {
                call: call.id,
                caller: t,
            };
            self.binder_event(cpu, received);
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
                Op::Signal(target, sync) => {
                    let tt = &mut self.w.tasks[target as usize];
                    if tt.state == State::Blocked(Why::Wait) {
                        self.wake(target, Some(cpu));
                    } else {
                        tt.tokens += 1;
                        if sync {
                            tt.sync_sender = Some(t);
                            self.block(t, Why::Sync);
                            return Flow::Blocked;
                        }
                    }
                }
                Op::Wait => {
                    if task.tokens > 0 {
                        task.tokens -= 1;
                        if let Some(s) = task.sync_sender.take() {
                            self.wake(s, Some(cpu));
                        }
                    } else {
                        self.block(t, Why::Wait);
                        return Flow::Blocked;
                    }
                }
                Op::BinderCall(pool) => {
                    self.slice_begin(t, Name::Binder(pool));
                    self.call_seq += 1;
                    let call = self.call_seq;
                    self.w.tasks[ti].call = Some(Call {
                        id: call,
                        since: self.w.now,
                        replied: false,
                    });
                    let server = self.w.pools[pool as usize].call(t);
                    let queued = BinderEvent::Queued {
                        caller: t,
                        call,
                        pool,
                        server,
                    };
                    self.binder_event(cpu, queued);
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
                            if let Some(call) = self.w.tasks[c as usize].call {
                                let taken = BinderEvent::Taken {
                                    call: call.id,
                                    server: t,
                                };
                                self.binder_event(cpu, taken);
                            }
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
                        if let Some(call) = self.w.tasks[c as usize].call.as_mut() {
                            call.replied = true;
                            let id = call.id;
                            let replied = BinderEvent::Replied {
                                call: id,
                                server: t,
                                caller: c,
                            };
                            self.binder_event(cpu, replied);
                        }
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

    pub(super) fn set_base(&mut self, t: TaskIdx, s: Sched) {
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
}
