//! Locking: taking, waiting for and releasing locks, the lock events the policy sees at the
//! points the kernel hooks fire, and the classification of each critical wait.

use super::*;
use crate::explain::{self, Occ, Subject as ExplainSubject};
use crate::locks::mutex::Release;
use crate::sched::remove_at;

impl<P: Policy + ?Sized> Sim<P> {
    /// Accounts lock `l`'s occupancy since it was last accounted; call before changing it.
    pub(super) fn lock_occupancy(&mut self, l: u32) {
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
        if lk.has_waiters() {
            st.waited_ns += dt;
        }
    }

    pub(super) fn lock_event(&mut self, cpu: u32, ev: LockEvent) {
        if self.lock_hooks {
            self.policy.lock_event(&self.w, cpu, ev, &mut self.out);
            self.apply();
        }
    }

    /// Whether the policy queues `t`, about to wait on a futex, ahead of the waiters of its
    /// priority (`android_vh_alter_futex_plist_add`, which fires at every futex wait).
    fn queue_first(&mut self, t: TaskIdx) -> bool {
        if !self.lock_hooks {
            return false;
        }
        let cpu = self.w.tasks[t as usize].cpu;
        // What the hook charges is applied with the wait start that follows at once: applying
        // it here would run the simulation on before the waiter is queued.
        self.policy.queue_first(&self.w, cpu, t, &mut self.out)
    }

    pub(super) fn binder_event(&mut self, cpu: u32, ev: BinderEvent) {
        if self.lock_hooks {
            self.policy.binder_event(&self.w, cpu, ev, &mut self.out);
            self.apply();
        }
    }

    pub(super) fn lock_kind(&self, l: u32, read: bool) -> LockKind {
        match &self.w.locks[l as usize] {
            Lock::Mutex(_) => LockKind::Mutex,
            Lock::Futex(_) => LockKind::Futex,
            Lock::PiFutex(_) => LockKind::PiFutex,
            Lock::Rwsem(_) if read => LockKind::RwsemRead,
            Lock::Rwsem(_) => LockKind::RwsemWrite,
        }
    }

    /// Whether `l` is a plain futex: a woken waiter retries, and arrivals may barge.
    pub(super) fn retries(&self, l: u32) -> bool {
        matches!(self.w.locks[l as usize], Lock::Futex(_))
    }

    /// Tries to take lock `l`; on contention starts (or continues) a wait and blocks.
    pub(super) fn lock(&mut self, t: TaskIdx, l: u32, read: bool) -> bool {
        let ti = t as usize;
        let now = self.w.now;
        self.lock_occupancy(l);
        let st = &mut self.res.locks[l as usize];
        if self.critical[ti] && self.w.tasks[ti].lock_wait.is_none() {
            st.critical_attempts += 1;
        }
        let rt_prio = self.w.tasks[ti].eff.rt;
        let first = match &self.w.locks[l as usize] {
            Lock::Futex(f) if f.taken() => self.queue_first(t),
            _ => false,
        };
        let ok = match &mut self.w.locks[l as usize] {
            Lock::Mutex(m) => m.lock(t),
            Lock::Futex(f) => f.lock(t, rt_prio, first),
            Lock::PiFutex(m) => m.lock(t, rt_prio),
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
                    acc: [0; 5],
                    seg: Seg::bare(Cat::Asleep),
                    parts: Vec::new(),
                });
            }
        }
        let retries = self.retries(l);
        let task = &mut self.w.tasks[ti];
        task.blocked_on = Some(l);
        if retries {
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

    /// A task woken from a lock wait is running again; returns false if it sleeps again (a
    /// woken mutex waiter that found the mutex taken).
    pub(super) fn resume_from_lock(&mut self, t: TaskIdx, l: u32) -> bool {
        let cpu = self.w.tasks[t as usize].cpu;
        if matches!(&self.w.locks[l as usize], Lock::Mutex(m) if m.owner != Some(t)) {
            return self.retry_mutex(t, l);
        }
        if self.retries(l) {
            // Woken to retry: the kernel wait is over, the user-visible wait is not.
            self.report_wait_finish(cpu, t, l, false);
            return true;
        }
        self.report_wait_finish(cpu, t, l, true);
        self.end_wait(t, l);
        self.slice_begin(t, Name::LockHold(l));
        true
    }

    /// Reports that `by`'s release of `l` woke waiter `w`.
    fn report_woken(&mut self, cpu: u32, l: u32, w: TaskIdx, by: TaskIdx) {
        self.lock_event(
            cpu,
            LockEvent::Woken {
                lock: l,
                tid: w,
                by,
            },
        );
    }

    /// Reports that `t`'s kernel wait for `l` ended, with the lock (`acquired`) or to retry.
    fn report_wait_finish(&mut self, cpu: u32, t: TaskIdx, l: u32, acquired: bool) {
        self.lock_event(
            cpu,
            LockEvent::WaitFinish {
                waiter: t,
                lock: l,
                acquired,
            },
        );
    }

    /// Woken mutex waiter `t` retries inside the same kernel wait: it takes the mutex if it is
    /// still free (the wait ends, then the acquire is reported, in the kernel's order), or asks
    /// for a handoff and sleeps again (no new wait starts). Returns false if it sleeps.
    fn retry_mutex(&mut self, t: TaskIdx, l: u32) -> bool {
        let ti = t as usize;
        let cpu = self.w.tasks[ti].cpu;
        self.lock_occupancy(l);
        let Lock::Mutex(m) = &mut self.w.locks[l as usize] else {
            unreachable!("retry_mutex on a mutex");
        };
        if m.retry(t) {
            self.report_wait_finish(cpu, t, l, true);
            self.res.locks[l as usize].acquisitions += 1;
            self.w.tasks[ti].held.push(l);
            self.lock_event(cpu, LockEvent::OwnerAcquired { lock: l, tid: t });
            self.end_wait(t, l);
            self.slice_begin(t, Name::LockHold(l));
            return true;
        }
        self.w.tasks[ti].blocked_on = Some(l);
        if self.policy.blocks_in_place(LockKind::Mutex) {
            self.w.tasks[ti].state = State::Blocked(Why::Lock);
            self.resched(cpu);
        } else {
            self.block(t, Why::Lock);
        }
        false
    }

    /// Closes a lock wait: trace slice and, for critical threads, a blocking interval.
    pub(super) fn end_wait(&mut self, t: TaskIdx, l: u32) {
        self.close_wait(t, l, false);
    }

    /// Closes every critical lock wait still open when the run ends, as a wait at least that
    /// long: dropping it would hide the worst wait of all, a critical thread starved to the end.
    pub(super) fn end_open_waits(&mut self) {
        while let Some(a) = self.active.last() {
            self.close_wait(a.task, a.lock, true);
        }
    }

    fn close_wait(&mut self, t: TaskIdx, l: u32, open: bool) {
        self.w.tasks[t as usize].lock_wait = None;
        self.slice_end(t, Name::LockWait(l));
        if let Some(i) = self.active.iter().position(|a| a.task == t) {
            let mut a = self.active.swap_remove(i);
            let now = self.w.now;
            a.acc[a.cat as usize] += now - a.last;
            if self.explain {
                explain::add(&mut a.parts, a.seg, now - a.last);
            }
            if a.start >= self.warmup {
                if self.explain {
                    self.res.explained.push(std::mem::take(&mut a.parts));
                }
                self.res.blocking.push(Blocking {
                    tid: self.w.tasks[t as usize].tid,
                    lock: self.w.lock_names[l as usize].clone(),
                    start_ns: a.start,
                    end_ns: now,
                    asleep_ns: a.acc[0],
                    runnable_ns: a.acc[1],
                    running_ns: a.acc[2],
                    self_ns: a.acc[3],
                    other_woken_ns: a.acc[4],
                    ui: self.w.tasks[t as usize].role == ThreadRole::Ui,
                    open,
                });
            }
        }
    }

    pub(super) fn unlock(&mut self, t: TaskIdx, l: u32) {
        let ti = t as usize;
        let pos = self.w.tasks[ti]
            .held
            .iter()
            .rposition(|&h| h == l)
            .unwrap_or_else(|| panic!("{} unlocks a lock it does not hold", self.w.tasks[ti].name));
        remove_at(&mut self.w.tasks[ti].held, pos);
        self.slice_end(t, Name::LockHold(l));
        let cpu = self.w.tasks[ti].cpu;
        let now = self.w.now;
        self.lock_occupancy(l);
        let mut granted = std::mem::take(&mut self.scratch);
        granted.clear();
        let mut read_grants = false;
        let mut woken = None;
        let released = match &mut self.w.locks[l as usize] {
            Lock::Mutex(m) => {
                match m.unlock(t) {
                    Release::HandedTo(g) => granted.push(g),
                    Release::Woken(w) => woken = Some(w),
                    Release::Free => {}
                }
                LockEvent::OwnerReleased { lock: l, tid: t }
            }
            Lock::PiFutex(m) => {
                granted.extend(m.unlock(t));
                LockEvent::OwnerReleased { lock: l, tid: t }
            }
            Lock::Futex(f) => {
                let w = f.unlock(t);
                self.lock_event(cpu, LockEvent::OwnerReleased { lock: l, tid: t });
                if let Some(w) = w {
                    // FUTEX_WAKE names the waiter it wakes; it does not own the word.
                    self.report_woken(cpu, l, w, t);
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
        if let Some(w) = woken {
            // The unlock path names the first waiter it wakes (mutex_unlock_slowpath); the
            // mutex stays free until someone takes it, the woken waiter or a running task.
            self.report_woken(cpu, l, w, t);
            let wt = &mut self.w.tasks[w as usize];
            if wt.blocked_on == Some(l) {
                wt.blocked_on = None;
                self.wake(w, Some(cpu));
            }
        }
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
                self.report_woken(cpu, l, g, t);
                LockEvent::OwnerAcquired { lock: l, tid: g }
            };
            self.lock_event(cpu, ev);
            self.wake(g, Some(cpu));
        }
        self.scratch = granted;
    }

    /// Accounts elapsed time of active blockings to their category and reclassifies them.
    pub(super) fn refresh_waits(&mut self) {
        if self.explain {
            return self.refresh_waits_explained();
        }
        let now = self.w.now;
        for i in 0..self.active.len() {
            let a = &self.active[i];
            let cat = self.classify(a.task, a.lock).0;
            let a = &mut self.active[i];
            a.acc[a.cat as usize] += now - a.last;
            a.last = now;
            a.cat = cat;
        }
    }

    /// [`Self::refresh_waits`], also itemizing each part ([`Self::segment`]).
    #[cold]
    fn refresh_waits_explained(&mut self) {
        let now = self.w.now;
        for i in 0..self.active.len() {
            let a = &self.active[i];
            let (cat, subject) = self.classify(a.task, a.lock);
            let seg = self.segment(a.task, cat, subject);
            let a = &mut self.active[i];
            a.acc[a.cat as usize] += now - a.last;
            explain::add(&mut a.parts, a.seg, now - a.last);
            a.last = now;
            a.cat = cat;
            a.seg = seg;
        }
    }

    /// The finer kind of a part of `waiter`'s wait in category `cat` decided by `subject`'s
    /// state (see `crate::explain`).
    fn segment(&self, waiter: TaskIdx, cat: Cat, subject: Option<TaskIdx>) -> Seg {
        let w = &self.w;
        let Some(t) = subject else {
            return Seg::bare(cat);
        };
        let helped = |t: TaskIdx| {
            let task = w.task(t);
            self.policy.helps(w, t) || task.eff.rank() > task.base.rank()
        };
        let occupant = |c: u32| match w.rqs[c as usize].curr {
            None => Occ::Idle,
            Some(o) if w.task(o).eff.is_rt() => Occ::Rt,
            Some(o) if self.critical[o as usize] => Occ::Critical,
            Some(o) if helped(o) => Occ::Helped,
            Some(_) => Occ::Fair,
        };
        let task = w.task(t);
        let kind = if t == waiter {
            ExplainSubject::Waiter
        } else if self.critical[t as usize] {
            ExplainSubject::Critical
        } else {
            ExplainSubject::Other
        };
        let mut seg = Seg {
            subject: kind,
            helped: helped(t),
            ..Seg::bare(cat)
        };
        match cat {
            Cat::Runnable | Cat::SelfWait | Cat::OtherWoken => {
                seg.cap = w.rqs[task.cpu as usize].cap;
                seg.occ = occupant(task.cpu);
                seg.throttled = self.policy.throttled(task.cpu);
            }
            Cat::Running => {
                let cap = w.rqs[task.cpu as usize].cap;
                seg.cap = cap;
                seg.top = (0..w.rqs.len())
                    .filter(|&c| task.allowed & (1 << c) != 0)
                    .map(|c| w.rqs[c].cap)
                    .max()
                    .unwrap_or(cap);
                // The most telling occupant of the faster CPUs it may use: idle (it could
                // have run faster) over helped, critical, RT and other fair tasks.
                seg.occ = (0..w.rqs.len() as u32)
                    .filter(|&c| task.allowed & (1 << c) != 0 && w.rqs[c as usize].cap > cap)
                    .map(occupant)
                    .min_by_key(|o| match o {
                        Occ::Idle => 0,
                        Occ::Helped => 1,
                        Occ::Critical => 2,
                        Occ::Rt => 3,
                        Occ::Fair => 4,
                        Occ::None => 5,
                    })
                    .unwrap_or(Occ::None);
            }
            Cat::Asleep => {}
        }
        seg
    }

    /// Where the root blocker of `waiter`'s wait on `l` is now, and which task decided it
    /// (the waiter itself for [`Cat::SelfWait`]; none for a free futex).
    pub(super) fn classify(&self, waiter: TaskIdx, l: u32) -> (Cat, Option<TaskIdx>) {
        let w = &self.w;
        if w.task(waiter).blocked_on.is_none() {
            return (Cat::SelfWait, Some(waiter));
        }
        let mut lock = l;
        for _ in 0..8 {
            let lk = &w.locks[lock as usize];
            let owner = match lk.owner() {
                Some(o) => o,
                None => {
                    let rs = lk.readers();
                    if rs.is_empty() {
                        // Nobody holds it, yet the waiter still sleeps: a release woke
                        // another waiter, which has not retried yet.
                        return (Cat::OtherWoken, lk.woken());
                    }
                    let best = rs
                        .iter()
                        .map(|&r| (cat_of(w.task(r).state), r))
                        .max_by_key(|(c, _)| *c as u8);
                    return best.map_or((Cat::Asleep, None), |(c, r)| (c, Some(r)));
                }
            };
            let ot = w.task(owner);
            match (ot.state, ot.blocked_on) {
                (State::Blocked(Why::Lock), Some(next)) => lock = next,
                (s, _) => return (cat_of(s), Some(owner)),
            }
        }
        (Cat::Asleep, None)
    }
}

pub(super) fn cat_of(s: State) -> Cat {
    match s {
        State::Running => Cat::Running,
        State::Runnable => Cat::Runnable,
        State::Blocked(_) => Cat::Asleep,
    }
}
