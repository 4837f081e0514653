//! SuperPass: lock-level blocker detection plus a bounded scheduler fast track, with every
//! decision made by `superpass_core::Engine`, the code the kernel module runs.
//!
//! It sees only the lock events a kernel hook reports (`super::kernel_view`): `superpass`
//! runs on a device whose ART/bionic pass futex owner hints, `superpass-stock` on one without.
//! Both move a boosted blocker that core marks misfit to an idle faster CPU
//! (`Engine::misfit_targets`), as the module's misfit and migration probes let the kernel's load
//! balancing do.
//!
//! The simulator reports to the engine at the points the kernel hooks fire, in core's own
//! protocol ([`superpass_core::Event`], answered by [`Engine::handle`]), exactly as the kernel
//! module does: lock wait start and finish, owner and reader acquire/release, a waiter woken by
//! a release, a woken critical waiter's sleep, enqueue, dequeue, the fair pick (`replace_next_task_fair`), wakeup preemption,
//! wakeup CPU selection and the tick. The fast track only reorders the fair class, so RT tasks
//! still run first. Each hook call is charged as CPU time on the CPU it runs on ([`HOOK_NS`], an
//! assumption documented in docs/sim.md).

use super::kernel_view::{visible, Device};
use super::probe_view::ProbeView;
use super::{Action, BinderEvent, LockEvent, LockKind, Policy, PolicyStats};
use crate::locks::visibility::Visibility;
use crate::locks::{Lock, TaskIdx};
use crate::sched::{State, Why, World};
use crate::transcript::{Call, Recording};
use crate::workload::ThreadRole;
use std::collections::HashSet;
use superpass_core::abi::{self, Message, Request};
use superpass_core::platform::{CurrentWait, Handle, Hook, Platform, PushView, Ran, WaitRecord};
use superpass_core::tunables::{MAX_POOL_SCAN, READER_TABLE_WAYS};
use superpass_core::{
    binder_txn_lock, gates, lock_lane, Answer, Engine, Event, LockId, Nanos, Observer, Published,
    RevokeReason, Role, Running, Tid, MAX_CPUS,
};

/// CPU time charged per hook call: LAVD's measured cost of a tracepoint probe (130 ns),
/// which covers the probe dispatch plus the engine's short paths.
pub const HOOK_NS: u64 = 130;

/// Collects the engine's decisions as the module's tracepoints report them: boosts and their
/// ends for trace slices and rescheduling, and what is boosted or throttled now for itemizing
/// waits.
#[derive(Debug, Default)]
pub struct Recorder {
    /// (tid, true = boosted / false = unboosted), drained after each call.
    pub events: Vec<(Tid, bool)>,
    /// Grants made.
    pub grants: u64,
    /// Tasks boosted now.
    boosted: HashSet<Tid>,
    /// CPUs throttled now, one bit each.
    throttled: u64,
}

impl Recorder {
    /// Whether `tid` is boosted now.
    pub fn is_boosted(&self, tid: Tid) -> bool {
        self.boosted.contains(&tid)
    }

    /// Whether CPU `cpu` is throttled now.
    pub fn is_throttled(&self, cpu: u32) -> bool {
        cpu < 64 && self.throttled & (1 << cpu) != 0
    }
}

impl Observer for Recorder {
    fn grant(&mut self, _now: Nanos, _b: Tid, _via: Tid, _root: Tid, _l: LockId, _d: u32) {
        self.grants += 1;
    }
    fn boosted(&mut self, _now: Nanos, tid: Tid) {
        self.events.push((tid, true));
        self.boosted.insert(tid);
    }
    fn unboosted(&mut self, _now: Nanos, tid: Tid, _reason: RevokeReason) {
        self.events.push((tid, false));
        self.boosted.remove(&tid);
    }
    fn throttled(&mut self, _now: Nanos, cpu: u32, _until: Nanos) {
        if cpu < 64 {
            self.throttled |= 1 << cpu;
        }
    }
    fn unthrottled(&mut self, _now: Nanos, cpu: u32) {
        if cpu < 64 {
            self.throttled &= !(1 << cpu);
        }
    }
}

/// The SuperPass policy.
pub struct SuperPass {
    /// The engine (a placeholder until `setup` builds the run's; no hook comes before it).
    engine: Engine<Recorder>,
    /// Task index by tid (`Tid` → position), for mapping the engine's answers back.
    idx: TidIndex,
    hook_ns: u64,
    calls: u64,
    /// Sees every event handed to the engine with its answer, when set (tests check the
    /// simulator's decisions against the module's on the same events).
    watch: Option<Watch>,
    /// Which user-space locks the device reports.
    device: Device,
    /// The module's on-demand lock-operation probes and its rwsem reader record.
    probes: ProbeView,
}

/// A watcher of the glue: `(time, hook, calls, result)` for every hook call the simulator
/// makes, with the calls the glue made to the simulated kernel meanwhile (the events it handed
/// the engine among them) and the hook's result.
pub type Watch = Box<dyn FnMut(Nanos, Hook<'_>, &[Call], Ran) + Send>;

impl Default for SuperPass {
    fn default() -> Self {
        Self::new()
    }
}

impl SuperPass {
    /// SuperPass with default tunables and [`HOOK_NS`] per hook call.
    pub fn new() -> Self {
        SuperPass {
            engine: Engine::new(1, Recorder::default()),
            idx: TidIndex::default(),
            hook_ns: HOOK_NS,
            calls: 0,
            watch: None,
            device: Device::Hinting,
            probes: ProbeView::all_attached(),
        }
    }

    /// SuperPass on a device without patched user space: it sees kernel locks and PI futexes,
    /// and an owner-hinted futex looks like a plain one (invisible).
    pub fn stock() -> Self {
        SuperPass {
            device: Device::Stock,
            ..Self::new()
        }
    }

    /// SuperPass that shows `watch` every hook call it makes, with what the glue asked.
    pub fn watched(watch: Watch) -> Self {
        SuperPass {
            watch: Some(watch),
            ..Self::new()
        }
    }

    /// The threads registered as critical, as the HAL service would register them: every UI
    /// thread and RenderThread of the scenario.
    pub fn critical_set(w: &World) -> Vec<(Tid, Role)> {
        w.tasks
            .iter()
            .filter_map(|t| match t.role {
                ThreadRole::Ui => Some((t.tid, Role::Ui)),
                ThreadRole::Render => Some((t.tid, Role::Render)),
                ThreadRole::Other => None,
            })
            .collect()
    }

    /// Each CPU's capacity, which the module hands the engine at load
    /// (`arch_scale_cpu_capacity`): waking blockers go to the biggest idle cores.
    pub fn capacities(w: &World) -> Vec<u32> {
        w.rqs.iter().map(|r| r.cap).collect()
    }

    /// The core event the kernel hooks would report for simulator lock event `ev`, with TIDs
    /// for task indices; `hinted` says whether its lock is an owner-hinted futex. Inline, so
    /// its match merges with the visibility filter's on the lock-event hook.
    #[inline]
    pub fn core_event(w: &World, ev: LockEvent, hinted: bool) -> Event<'static> {
        let tid = |t| Self::tid(w, t);
        match ev {
            // An owner-hinted futex, as the module's futex probes report it: the hint at
            // futex_wait_start (every hint names a live thread of the app here), the end at
            // futex_wait_end, and a wake that passes a queued tracked waiter over.
            LockEvent::WaitStart { waiter, owner, .. } if hinted => Event::FutexWait {
                waiter: tid(waiter),
                owner: owner.map_or(0, tid),
                valid: owner.is_some(),
                cpu: w.task(waiter).cpu,
            },
            LockEvent::WaitFinish { waiter, .. } if hinted => {
                Event::from_hook_futex_wait_end(tid(waiter))
            }
            LockEvent::Woken { lock, tid: t, by } if hinted => {
                let queued = w.locks[lock as usize]
                    .waiters()
                    .find(|&q| {
                        q != t && matches!(w.task(q).role, ThreadRole::Ui | ThreadRole::Render)
                    })
                    .unwrap_or(t);
                Event::from_hook_futex_woken(tid(queued), tid(t), tid(by))
            }
            LockEvent::WaitStart {
                waiter,
                lock,
                kind,
                owner,
            } => Event::WaitStart {
                waiter: tid(waiter),
                lock: lock_id(lock),
                kind,
                owner: owner.map(tid),
                cpu: w.task(waiter).cpu,
            },
            LockEvent::WaitFinish { waiter, lock, .. } => Event::WaitFinish {
                waiter: tid(waiter),
                lock: lock_id(lock),
            },
            LockEvent::OwnerAcquired { lock, tid: t } => Event::OwnerAcquired {
                lock: lock_id(lock),
                tid: tid(t),
            },
            LockEvent::OwnerReleased { lock, tid: t } => Event::OwnerReleased {
                lock: lock_id(lock),
                tid: tid(t),
            },
            LockEvent::ReaderAcquired { lock, tid: t } => Event::ReaderAcquired {
                lock: lock_id(lock),
                tid: tid(t),
            },
            LockEvent::ReaderReleased { lock, tid: t } => Event::ReaderReleased {
                lock: lock_id(lock),
                tid: tid(t),
            },
            LockEvent::Woken { lock, tid: t, by } => Event::WaiterWoken {
                lock: lock_id(lock),
                tid: tid(t),
                waker: tid(by),
            },
        }
    }

    /// Makes one hook call into the glue, for a hook whose CPU last ran `current` (a pick's
    /// `prev`, a tick's `curr`), and shows it to the watcher, if any.
    #[inline]
    fn glue(
        &mut self,
        w: &World,
        out: &mut Vec<Action>,
        current: Option<TaskIdx>,
        hook: Hook<'_>,
    ) -> Ran {
        let mut host = Host {
            w,
            out,
            idx: &self.idx,
            probes: &self.probes,
            current,
        };
        match self.watch.as_mut() {
            None => hook.run(&mut self.engine, &mut host, w.now),
            Some(watch) => {
                let mut rec = Recording::new(&mut host);
                let r = hook.run(&mut self.engine, &mut rec, w.now);
                watch(w.now, hook, &rec.calls, r);
                r
            }
        }
    }

    /// Whether the module's wait probes would report `waiter`'s wait, with the holders they see
    /// (an rwsem's, a binder call's): their gate and the waiter's lane in the published
    /// snapshot (`sp_waits_matter`, `sp_may_matter`).
    fn may_matter(&mut self, now: Nanos, waiter: Tid) -> bool {
        let p = self.engine.published(now);
        p.gates & gates::WAITS != 0 && lane(p.interest_lanes, waiter)
    }

    /// Whether tracked waits may be on `lock` by its lane in the published snapshot
    /// (`sp_lock_may_matter`), the test the module's binder probes make for a call's events.
    fn lock_may_matter(&mut self, now: Nanos, lock: LockId) -> bool {
        self.engine.published(now).lock_lanes & (1 << lock_lane(lock)) != 0
    }

    /// The busy threads of pool `pool` as the module's proc-transaction probe finds them for a
    /// call that found none idle (`sp_binder_busy_pool`): of the pool's first
    /// [`MAX_POOL_SCAN`] threads, at most [`READER_TABLE_WAYS`] not parked waiting for work.
    fn busy_pool(w: &World, pool: u32) -> Vec<Tid> {
        w.tasks
            .iter()
            .filter(|t| t.pool == Some(pool))
            .take(MAX_POOL_SCAN)
            .filter(|t| t.state != State::Blocked(Why::Serve))
            .take(READER_TABLE_WAYS)
            .map(|t| t.tid)
            .collect()
    }

    /// Whether the module's dequeue probe would report `tid`'s sleep: its gate and its lane
    /// in the engine's published snapshot (`sp_may_be_woken`).
    fn may_be_woken(&mut self, now: Nanos, tid: Tid) -> bool {
        let p = self.engine.published(now);
        p.gates & gates::WOKEN != 0 && lane(p.woken_lanes, tid)
    }

    /// Reads the probe groups the engine wants from its published snapshot, as the module
    /// does after each call into it and at its work item's rechecks.
    fn refresh_probes(&mut self, now: Nanos) {
        let p = self.engine.published(now);
        self.probes.update(now, p.probes, p.probe_recheck_ns);
        self.probes.set_lock_lanes(p.lock_lanes);
    }

    /// Charges one lock-event hook call on `cpu`.
    fn hook(&mut self, cpu: u32, out: &mut Vec<Action>) {
        self.calls += 1;
        if self.hook_ns > 0 {
            out.push(Action::Charge(cpu, self.hook_ns));
        }
    }

    /// Counts one scheduler hook call (the simulator charges it: [`Policy::sched_hook_ns`]).
    fn sched_hook(&mut self) {
        self.calls += 1;
    }

    fn tid(w: &World, t: TaskIdx) -> Tid {
        w.task(t).tid
    }

    fn opt_tid(w: &World, t: Option<TaskIdx>) -> Tid {
        t.map_or(0, |t| Self::tid(w, t))
    }

    /// The lock task `t`'s wait record names and the owner that lock names now, as the module
    /// reads them (`sp_wait_owner_now`): its mutex or rwsem, with the owner or writer; (0, 0)
    /// for other waits, of which superpass_waits.c keeps no record.
    fn recorded_lock(w: &World, t: TaskIdx) -> (LockId, Tid) {
        match w.task(t).lock_wait {
            Some(l) if matches!(w.locks[l as usize], Lock::Mutex(_) | Lock::Rwsem(_)) => (
                lock_id(l),
                w.locks[l as usize].owner().map_or(0, |o| Self::tid(w, o)),
            ),
            _ => (0, 0),
        }
    }

    /// Turns boost changes into trace slices and rechecks the probe groups when due. Inline,
    /// so the common case (no boost changes) costs no call on every hook.
    #[inline(always)]
    fn drain(&mut self, w: &World, out: &mut Vec<Action>) {
        if !self.engine.observer().events.is_empty() {
            self.drain_events(w, out);
        }
        if self.probes.recheck_due(w.now) {
            self.refresh_probes(w.now);
        }
    }

    #[cold]
    fn drain_events(&mut self, w: &World, out: &mut Vec<Action>) {
        let evs = std::mem::take(&mut self.engine.observer_mut().events);
        for &(tid, on) in &evs {
            let Some(&i) = self.idx.get(&tid) else {
                continue;
            };
            out.push(if on {
                Action::GrantBegin(i)
            } else {
                Action::GrantEnd(i)
            });
        }
        let mut evs = evs;
        evs.clear();
        self.engine.observer_mut().events = evs;
        // A boost raises the owner probes' want, as the module's publish after the call does.
        self.refresh_probes(w.now);
    }
}

/// The simulated kernel as the module's C helpers read it, for one hook call: the glue in
/// `superpass_core::platform` asks it what the module asks the kernel.
struct Host<'a> {
    w: &'a World,
    out: &'a mut Vec<Action>,
    idx: &'a TidIndex,
    probes: &'a ProbeView,
    /// The task that ran until now on the hook's CPU (a pick's `prev`, a tick's `curr`).
    current: Option<TaskIdx>,
}

/// The handle the simulator gives task `t`: its index plus one, so that 0 names none.
fn handle_of(t: TaskIdx) -> Handle {
    Handle::from(t) + 1
}

/// The task a handle names.
fn task_of(handle: Handle) -> Option<TaskIdx> {
    TaskIdx::try_from(handle.checked_sub(1)?).ok()
}

impl Host<'_> {
    fn task(&self, handle: Handle) -> Option<&crate::sched::Task> {
        task_of(handle).and_then(|t| self.w.tasks.get(t as usize))
    }
}

impl Platform for Host<'_> {
    fn lookup(&mut self, tid: Tid) -> Option<Handle> {
        self.idx.get(&tid).map(|&t| handle_of(t))
    }

    fn queued_cpu(&mut self, task: Handle) -> Option<u32> {
        self.task(task).filter(|t| t.on_rq).map(|t| t.cpu)
    }

    /// As `task_cpu()`: the CPU the simulated task last ran or was queued on.
    fn home_cpu(&mut self, task: Handle) -> Option<u32> {
        self.task(task).map(|t| t.cpu)
    }

    fn curr(&mut self, cpu: u32) -> Tid {
        host_curr(self.w, cpu)
    }

    /// As `module/superpass_push.c` reads the runqueues: the idle CPUs the task may use and the
    /// fair tasks running on the others.
    fn push_view(&mut self, task: Handle, src: u32, others: &mut [Running; MAX_CPUS]) -> PushView {
        let (Some(t), Some(task)) = (task_of(task), self.task(task)) else {
            return PushView::default();
        };
        let w = self.w;
        let mut view = PushView {
            running: w.rqs[src as usize].curr == Some(t),
            ..PushView::default()
        };
        for (c, rq) in w.rqs.iter().enumerate().take(MAX_CPUS) {
            if c as u32 == src || task.allowed & (1 << c) == 0 {
                continue;
            }
            match rq.curr.map(|r| w.task(r)) {
                None => view.idle_mask |= 1 << c,
                Some(r) if !r.eff.is_rt() => {
                    others[view.n] = Running {
                        cpu: c as u32,
                        tid: r.tid,
                        prio: (120 + i32::from(r.eff.nice)) as u32,
                    };
                    view.n += 1;
                }
                Some(_) => {}
            }
        }
        view
    }

    /// The CPU stopper's move, which the simulator makes at once.
    fn move_to(&mut self, task: Handle, dst: u32, _expect: u32) -> bool {
        let Some(t) = task_of(task) else {
            return false;
        };
        self.out.push(Action::Migrate(t, dst));
        true
    }

    fn kick(&mut self, cpu: u32) {
        self.out.push(Action::Resched(cpu));
    }

    /// A kernel mutex or rwsem wait of a task off its runqueue, as `module/superpass_waits.c`
    /// records it, with the readers the module's reader record holds.
    fn wait_record(
        &mut self,
        tid: Tid,
        readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord> {
        let w = self.w;
        let t = *self.idx.get(&tid)?;
        let task = w.task(t);
        if task.on_rq {
            return None;
        }
        let l = task.blocked_on?;
        if w.lock_vis[l as usize] != Visibility::Kernel {
            return None; // the record holds mutex and rwsem waits only
        }
        let lock = &w.locks[l as usize];
        let kind = match lock {
            Lock::Rwsem(r) => match r.waiters.iter().find(|q| q.0 == t) {
                Some(&(_, true)) => LockKind::RwsemRead,
                Some(_) => LockKind::RwsemWrite,
                None => return None,
            },
            _ => LockKind::Mutex,
        };
        let owner = SuperPass::opt_tid(w, lock.owner());
        let mut n = 0;
        if owner == 0 && kind != LockKind::Mutex {
            for (slot, r) in readers.iter_mut().zip(self.probes.readers(l, t)) {
                *slot = SuperPass::tid(w, r);
                n += 1;
            }
        }
        Some(WaitRecord {
            lock: lock_id(l),
            kind,
            owner,
            readers: n,
        })
    }

    /// The simulator runs one hook at a time: nothing races the snapshot.
    fn publish(&mut self, _published: Published) {}

    fn queued_on(&mut self, task: Handle, cpu: u32) -> bool {
        self.task(task).is_some_and(|t| t.on_rq && t.cpu == cpu)
    }

    fn pickable(&mut self, task: Handle, cpu: u32) -> bool {
        task_of(task).is_some_and(|t| {
            self.w.rqs[cpu as usize].fair.contains(&t) && self.w.task(t).state == State::Runnable
        })
    }

    fn current_wait(&mut self) -> CurrentWait {
        self.current.map_or(CurrentWait::default(), |t| {
            let (lock, owner) = SuperPass::recorded_lock(self.w, t);
            CurrentWait {
                tid: SuperPass::tid(self.w, t),
                lock,
                owner,
            }
        })
    }
}

/// Tid → task index, as a table indexed by `tid - min tid` (tids are small and dense in
/// the simulator), instead of a SipHash map on the hook paths.
#[derive(Debug, Default)]
struct TidIndex {
    base: Tid,
    slots: Vec<TaskIdx>,
}

impl TidIndex {
    const NONE: TaskIdx = TaskIdx::MAX;

    fn new(tids: impl Iterator<Item = Tid> + Clone) -> Self {
        let Some(base) = tids.clone().min() else {
            return TidIndex::default();
        };
        let max = tids.clone().max().unwrap_or(base);
        let mut slots = vec![Self::NONE; (max - base) as usize + 1];
        for (i, tid) in tids.enumerate() {
            // Tids are unique (Sim::new hands them out in increasing order).
            slots[(tid - base) as usize] = i as TaskIdx;
        }
        TidIndex { base, slots }
    }

    fn get(&self, tid: &Tid) -> Option<&TaskIdx> {
        let off = tid.checked_sub(self.base)?;
        usize::try_from(off)
            .ok()
            .and_then(|o| self.slots.get(o))
            .filter(|&&i| i != Self::NONE)
    }
}

/// The engine's id of simulator lock `l` (0 names none).
pub(crate) fn lock_id(l: u32) -> LockId {
    l as LockId + 1
}

/// The task running on CPU `cpu` (0: none), as the module reads it from the runqueue.
fn host_curr(w: &World, cpu: u32) -> Tid {
    SuperPass::opt_tid(w, w.rqs.get(cpu as usize).and_then(|rq| rq.curr))
}

/// Whether `tid`'s bit is set in a published lane mask (bit `tid % 64`), the test the
/// module's probes make before calling in.
#[inline(always)]
fn lane(lanes: u64, tid: Tid) -> bool {
    lanes & (1 << (tid as u32 % 64)) != 0
}

// The hooks are `#[inline]`: the simulator built for this type (`Sim<SuperPass>`) calls them
// directly, a few times per event, and inlined they cost no call frame of their own.
impl Policy for SuperPass {
    fn name(&self) -> &'static str {
        match self.device {
            Device::Hinting => "superpass",
            Device::Stock => "superpass-stock",
        }
    }

    fn sched_hooks(&self) -> bool {
        true
    }

    fn sched_hook_ns(&self) -> u64 {
        self.hook_ns
    }

    fn setup(&mut self, w: &World, _out: &mut Vec<Action>) {
        // Built in place: the engine is tens of KiB, and a local moved in copied all of it.
        self.engine = Engine::new(w.rqs.len() as u32, Recorder::default());
        let e = &mut self.engine;
        let capacity = Self::capacities(w);
        e.handle(
            w.now,
            Event::Capacities {
                capacity: &capacity,
            },
        );
        // Registered and switched on as the service does it: through the control plane.
        let set = abi::CriticalList::new(&Self::critical_set(w))
            .expect("critical set fits the ABI's list");
        for req in [Request::SetCritical(set), Request::SetEnabled(true)] {
            e.apply(w.now, &req, &mut [], &abi::SameSpace)
                .expect("critical set fits the default tunables");
        }
        self.idx = TidIndex::new(w.tasks.iter().map(|t| t.tid));
    }

    #[inline]
    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        let lock = ev.lock();
        if !visible(w, self.device, ev, lock) {
            return; // no hook fires for it
        }
        let vis = w.lock_vis[lock as usize];
        if vis == Visibility::Kernel && !self.probes.sees(w, ev) {
            return; // its hook is detached
        }
        self.hook(cpu, out);
        // An owner-hinted futex's events get here on a hinting device only (`visible`).
        let core_ev = Self::core_event(w, ev, vis == Visibility::Hinted);
        // Before an rwsem wait the module reports the holders it sees: the writer the owner
        // word names, or else the readers its record holds.
        let seen = match ev {
            LockEvent::WaitStart {
                waiter,
                kind: LockKind::RwsemRead | LockKind::RwsemWrite,
                owner,
                ..
            } if self.may_matter(w.now, Self::tid(w, waiter)) => {
                let readers: Vec<Tid> = match owner {
                    Some(_) => Vec::new(),
                    None => self
                        .probes
                        .readers(lock, waiter)
                        .map(|t| Self::tid(w, t))
                        .collect(),
                };
                Some((Self::opt_tid(w, owner), readers))
            }
            _ => None,
        };
        let hook = match &seen {
            Some((writer, readers)) => {
                Hook::WaitStartSeen(core_ev, lock_id(lock), *writer, readers)
            }
            None => Hook::LockEvent(core_ev),
        };
        self.glue(w, out, None, hook);
        self.drain(w, out);
        self.refresh_probes(w.now);
    }

    fn queue_first(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) -> bool {
        // The module's probe on android_vh_alter_futex_plist_add (superpass_futex.c): a
        // waiter outside the interest lanes keeps the kernel's order; the engine decides for
        // the others.
        let now = w.now;
        let waiter = Self::tid(w, t);
        if !lane(self.engine.published(now).interest_lanes, waiter) {
            return false;
        }
        self.hook(cpu, out);
        let hook = Hook::Ask(Event::FutexQueue { waiter });
        self.glue(w, out, None, hook).answer() == Answer::First
    }

    fn binder_event(&mut self, w: &World, cpu: u32, ev: BinderEvent, out: &mut Vec<Action>) {
        let now = w.now;
        // The module's binder probes (superpass_binder.c): a sync call is a wait of its caller
        // from the moment it is queued, on a lock named by the call's number; the server that
        // takes it owns it; the reply releases it and wakes the caller, whose receipt ends it.
        match ev {
            BinderEvent::Queued {
                caller,
                call,
                pool,
                server,
            } => {
                let waiter = Self::tid(w, caller);
                if !self.may_matter(now, waiter) {
                    return;
                }
                self.hook(cpu, out);
                let lock = binder_txn_lock(call);
                let owner = Self::opt_tid(w, server);
                let busy = match server {
                    Some(_) => Vec::new(),
                    None => Self::busy_pool(w, pool),
                };
                let start = Event::WaitStart {
                    waiter,
                    lock,
                    kind: LockKind::Binder,
                    owner: (owner > 0).then_some(owner),
                    cpu,
                };
                let hook = Hook::WaitStartSeen(start, lock, owner, &busy);
                self.glue(w, out, None, hook);
            }
            BinderEvent::Taken { call, server } => {
                let lock = binder_txn_lock(call);
                if !self.lock_may_matter(now, lock) {
                    return;
                }
                self.hook(cpu, out);
                let tid = Self::tid(w, server);
                let hook = Hook::LockEvent(Event::from_hook_owner(lock, tid, true));
                self.glue(w, out, None, hook);
            }
            BinderEvent::Replied {
                call,
                server,
                caller,
            } => {
                let lock = binder_txn_lock(call);
                if !self.lock_may_matter(now, lock) {
                    return;
                }
                self.hook(cpu, out);
                let (server, caller) = (Self::tid(w, server), Self::tid(w, caller));
                let evs = Event::from_hook_binder_reply(lock, server, caller);
                self.glue(w, out, None, Hook::LockEvents(&evs));
            }
            BinderEvent::Received { call, caller } => {
                let caller = Self::tid(w, caller);
                if !self.may_matter(now, caller) {
                    return;
                }
                self.hook(cpu, out);
                let done = Event::from_hook_binder_received(caller, binder_txn_lock(call));
                self.glue(w, out, None, Hook::LockEvent(done));
            }
        }
        self.drain(w, out);
        self.refresh_probes(now);
    }

    #[inline]
    fn enqueue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        self.sched_hook();
        let (tid, curr) = (Self::tid(w, t), host_curr(w, cpu));
        let hook = Hook::Enqueue(cpu, tid, handle_of(t), curr);
        if self.glue(w, out, None, hook).resched() {
            out.push(Action::Resched(cpu));
        }
        self.drain(w, out);
    }

    #[inline]
    fn dequeue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        self.sched_hook();
        let tid = Self::tid(w, t);
        // The module's dequeue probe reports a sleep (DEQUEUE_SLEEP) of a task in the
        // engine's woken lanes, with the owner its mutex or rwsem names then: the lock is
        // the one in its wait record (superpass_waits.c keeps none for futexes).
        let slept = matches!(w.task(t).state, State::Blocked(_)) && self.may_be_woken(w.now, tid);
        if slept {
            let (lock, owner) = Self::recorded_lock(w, t);
            let hook = Hook::LockEvent(Event::WaiterSlept { tid, lock, owner });
            self.glue(w, out, None, hook);
        }
        self.glue(w, out, None, Hook::Dequeue(cpu, tid));
        self.drain(w, out);
    }

    #[inline]
    fn pick_fair(
        &mut self,
        w: &World,
        cpu: u32,
        prev: Option<TaskIdx>,
        next: Option<TaskIdx>,
        out: &mut Vec<Action>,
    ) -> Option<TaskIdx> {
        self.sched_hook();
        // The module's pick hook reports the task it preempts (the kernel's `prev`, still
        // queued here) when its lane is in the snapshot's `waiting_lanes`: a critical thread
        // inside its wait or on its way back from one (`sp_preempted_waiter`).
        let mut preempted = None;
        if let Some(p) = prev.filter(|&p| Some(p) != next) {
            let task = w.task(p);
            if task.state == State::Runnable
                && w.rqs[cpu as usize].fair.contains(&p)
                && lane(self.engine.published(w.now).waiting_lanes, task.tid)
            {
                preempted = Some((task.tid, handle_of(p)));
            }
        }
        let fair_next = Self::opt_tid(w, next);
        let hook = Hook::Pick(cpu, fair_next, preempted);
        let picked = self.glue(w, out, prev, hook).picked();
        self.drain(w, out);
        picked.task.and_then(|(_, h)| task_of(h))
    }

    #[inline]
    fn should_preempt(
        &mut self,
        w: &World,
        cpu: u32,
        curr: TaskIdx,
        waking: TaskIdx,
        out: &mut Vec<Action>,
    ) -> bool {
        self.sched_hook();
        let (curr, waking) = (Self::tid(w, curr), Self::tid(w, waking));
        let hook = Hook::ShouldPreempt(cpu, curr, waking);
        let r = self.glue(w, out, None, hook).resched();
        self.drain(w, out);
        r
    }

    #[inline]
    fn select_cpu(
        &mut self,
        w: &World,
        t: TaskIdx,
        prev: u32,
        idle: u64,
        out: &mut Vec<Action>,
    ) -> Option<u32> {
        self.sched_hook();
        let task = w.task(t);
        let hook = Hook::SelectCpu(task.tid, prev, idle, task.allowed);
        let r = self.glue(w, out, None, hook).place();
        self.drain(w, out);
        r
    }

    #[inline]
    fn tick(&mut self, w: &World, cpu: u32, curr: TaskIdx, out: &mut Vec<Action>) -> bool {
        self.sched_hook();
        let tid = Self::tid(w, curr);
        // A task granted again (a budget window passed, a turn ran out mid-wait) is placed
        // like any other.
        let r = self
            .glue(w, out, Some(curr), Hook::Tick(cpu, tid))
            .resched();
        self.drain(w, out);
        r
    }

    fn misfit_targets(
        &mut self,
        w: &World,
        t: TaskIdx,
        cpu: u32,
        faster: u64,
        running: bool,
    ) -> u64 {
        // As the kernel asks the module: the task's misfit status (`update_misfit_status`),
        // then `can_migrate_task` for each CPU that would pull it.
        let tid = Self::tid(w, t);
        let mut out = Vec::new();
        let ask = Hook::Ask(Event::UpdateMisfit { tid, cpu });
        if self.glue(w, &mut out, None, ask).answer() != Answer::Misfit {
            return 0;
        }
        let mut to = 0;
        for dst in (0..64).filter(|&c| faster & (1u64 << c) != 0) {
            let ev = Event::CanMigrate {
                tid,
                src: cpu,
                dst,
                running,
            };
            if self.glue(w, &mut out, None, Hook::Ask(ev)).answer() != Answer::Veto {
                to |= 1 << dst;
            }
        }
        to
    }

    fn helps(&self, w: &World, t: TaskIdx) -> bool {
        self.engine.observer().is_boosted(Self::tid(w, t))
    }

    fn throttled(&self, cpu: u32) -> bool {
        self.engine.observer().is_throttled(cpu)
    }

    fn stats(&mut self) -> PolicyStats {
        // Read as the service reads the module's: through GET_STATS.
        let mut buf = vec![0u8; abi::ioc_size(abi::GET_STATS)];
        let counters = abi::request_header(abi::GET_STATS, &mut buf)
            .and_then(|()| self.engine.ioctl(0, abi::GET_STATS, &mut buf))
            .and_then(|_| abi::StatsMsg::decode(&buf))
            .map(|m| m.counters)
            .ok();
        PolicyStats {
            hook_calls: self.calls,
            boosts: self.engine.observer().grants,
            counters: superpass_core::stats::COUNTER_NAMES
                .iter()
                .zip(counters.unwrap_or([0; superpass_core::stats::NUM_COUNTERS]))
                .filter(|(_, v)| *v != 0)
                .map(|(n, v)| (n.to_string(), v))
                .collect(),
        }
    }
}
