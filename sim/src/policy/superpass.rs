//! SuperPass: lock-level blocker detection plus a bounded scheduler fast track, with every
//! decision made by `superpass_core::Engine`, the code the kernel module runs.
//!
//! The simulator calls the engine at the points the kernel hooks fire: lock wait start and
//! finish, owner and reader acquire/release, enqueue, dequeue, the fair pick
//! (`replace_next_task_fair`), wakeup preemption, wakeup CPU selection and the tick. The fast
//! track only reorders the fair class, so RT tasks still run first. Each hook call is charged
//! as CPU time on the CPU it runs on ([`HOOK_NS`], an assumption documented in docs/sim.md).

use super::{Action, LockEvent, Policy, PolicyStats};
use crate::locks::TaskIdx;
use crate::sched::World;
use crate::workload::ThreadRole;
use superpass_core::{Engine, LockId, Nanos, Observer, RevokeReason, Role, Tid};

/// CPU time charged per hook call: LAVD's measured cost of a tracepoint probe (130 ns),
/// which covers the probe dispatch plus the engine's short paths.
pub const HOOK_NS: u64 = 130;

/// Collects the engine's boost/unboost decisions for trace slices and rescheduling.
#[derive(Debug, Default)]
pub struct Recorder {
    /// (tid, true = boosted / false = unboosted), drained after each call.
    pub events: Vec<(Tid, bool)>,
    /// Grants made.
    pub grants: u64,
}

impl Observer for Recorder {
    fn grant(&mut self, _now: Nanos, _b: Tid, _via: Tid, _root: Tid, _l: LockId, _d: u32) {
        self.grants += 1;
    }
    fn boosted(&mut self, _now: Nanos, tid: Tid) {
        self.events.push((tid, true));
    }
    fn unboosted(&mut self, _now: Nanos, tid: Tid, _reason: RevokeReason) {
        self.events.push((tid, false));
    }
}

/// The SuperPass policy.
pub struct SuperPass {
    engine: Option<Engine<Recorder>>,
    /// Task index by tid (`Tid` → position), for mapping the engine's answers back.
    idx: TidIndex,
    hook_ns: u64,
    calls: u64,
}

impl Default for SuperPass {
    fn default() -> Self {
        Self::new()
    }
}

impl SuperPass {
    /// SuperPass with default tunables and [`HOOK_NS`] per hook call.
    pub fn new() -> Self {
        SuperPass {
            engine: None,
            idx: TidIndex::default(),
            hook_ns: HOOK_NS,
            calls: 0,
        }
    }

    /// Charges one hook call on `cpu`.
    fn hook(&mut self, cpu: u32, out: &mut Vec<Action>) {
        self.calls += 1;
        if self.hook_ns > 0 {
            out.push(Action::Charge(cpu, self.hook_ns));
        }
    }

    fn tid(w: &World, t: TaskIdx) -> Tid {
        w.task(t).tid
    }

    fn opt_tid(w: &World, t: Option<TaskIdx>) -> Tid {
        t.map_or(0, |t| Self::tid(w, t))
    }

    /// Turns boost changes into trace slices and reschedules where a newly boosted task waits.
    /// Inline, so the common case (no boost changes) costs no call on every hook.
    #[inline(always)]
    fn drain(&mut self, w: &World, out: &mut Vec<Action>) {
        if self
            .engine
            .as_ref()
            .is_some_and(|e| !e.observer().events.is_empty())
        {
            self.drain_events(w, out);
        }
    }

    #[cold]
    fn drain_events(&mut self, w: &World, out: &mut Vec<Action>) {
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        let evs = std::mem::take(&mut e.observer_mut().events);
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
        if let Some(e) = self.engine.as_mut() {
            e.observer_mut().events = evs;
        }
        let _ = w;
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

fn lock_id(l: u32) -> LockId {
    l as LockId + 1
}

impl Policy for SuperPass {
    fn name(&self) -> &'static str {
        "superpass"
    }

    fn setup(&mut self, w: &World, _out: &mut Vec<Action>) {
        let mut e = Engine::new(w.rqs.len() as u32, Recorder::default());
        let crit: Vec<(Tid, Role)> = w
            .tasks
            .iter()
            .filter_map(|t| match t.role {
                ThreadRole::Ui => Some((t.tid, Role::Ui)),
                ThreadRole::Render => Some((t.tid, Role::Render)),
                ThreadRole::Other => None,
            })
            .collect();
        e.set_critical(w.now, &crit)
            .expect("critical set fits the default tunables");
        e.set_enabled(w.now, true);
        self.idx = TidIndex::new(w.tasks.iter().map(|t| t.tid));
        self.engine = Some(e);
    }

    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        self.hook(cpu, out);
        let now = w.now;
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        match ev {
            LockEvent::WaitStart {
                waiter,
                lock,
                kind,
                owner,
            } => {
                let boosted = e.wait_start(
                    now,
                    Self::tid(w, waiter),
                    lock_id(lock),
                    kind,
                    owner.map(|o| Self::tid(w, o)),
                );
                // Blockers already on a runqueue must be located there now.
                for &b in boosted.as_slice() {
                    let Some(&bi) = self.idx.get(&b) else {
                        continue;
                    };
                    let bt = w.task(bi);
                    if bt.on_rq && e.enqueue(now, bt.cpu, b) {
                        out.push(Action::Resched(bt.cpu));
                    }
                }
            }
            LockEvent::WaitFinish {
                waiter,
                lock,
                acquired,
            } => {
                e.wait_finish(now, Self::tid(w, waiter), lock_id(lock), acquired);
            }
            LockEvent::OwnerAcquired { lock, tid } => {
                e.owner_acquired(now, lock_id(lock), Self::tid(w, tid))
            }
            LockEvent::OwnerReleased { lock, tid } => {
                e.owner_released(now, lock_id(lock), Self::tid(w, tid))
            }
            LockEvent::ReaderAcquired { lock, tid } => {
                e.reader_acquired(now, lock_id(lock), Self::tid(w, tid))
            }
            LockEvent::ReaderReleased { lock, tid } => {
                e.reader_released(now, lock_id(lock), Self::tid(w, tid))
            }
        }
        self.drain(w, out);
    }

    fn enqueue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        self.hook(cpu, out);
        if let Some(e) = self.engine.as_mut() {
            if e.enqueue(w.now, cpu, Self::tid(w, t)) {
                out.push(Action::Resched(cpu));
            }
        }
        self.drain(w, out);
    }

    fn dequeue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        self.hook(cpu, out);
        if let Some(e) = self.engine.as_mut() {
            e.dequeue(w.now, cpu, Self::tid(w, t));
        }
        self.drain(w, out);
    }

    fn pick_fair(
        &mut self,
        w: &World,
        cpu: u32,
        prev: Option<TaskIdx>,
        next: Option<TaskIdx>,
        out: &mut Vec<Action>,
    ) -> Option<TaskIdx> {
        self.hook(cpu, out);
        let e = self.engine.as_mut()?;
        let r = e.pick(w.now, cpu, Self::opt_tid(w, prev), Self::opt_tid(w, next));
        let r = r.and_then(|tid| self.idx.get(&tid).copied());
        self.drain(w, out);
        r
    }

    fn should_preempt(
        &mut self,
        w: &World,
        cpu: u32,
        curr: TaskIdx,
        waking: TaskIdx,
        out: &mut Vec<Action>,
    ) -> bool {
        self.hook(cpu, out);
        let r = self.engine.as_mut().is_some_and(|e| {
            e.should_preempt(w.now, cpu, Self::tid(w, curr), Self::tid(w, waking))
        });
        self.drain(w, out);
        r
    }

    fn select_cpu(
        &mut self,
        w: &World,
        t: TaskIdx,
        prev: u32,
        idle: u64,
        out: &mut Vec<Action>,
    ) -> Option<u32> {
        self.hook(prev, out);
        let task = w.task(t);
        let r = self
            .engine
            .as_mut()?
            .select_cpu(w.now, task.tid, prev, idle, task.allowed);
        self.drain(w, out);
        r
    }

    fn tick(&mut self, w: &World, cpu: u32, curr: TaskIdx, out: &mut Vec<Action>) -> bool {
        self.hook(cpu, out);
        let r = self
            .engine
            .as_mut()
            .is_some_and(|e| e.tick(w.now, cpu, Self::tid(w, curr)));
        self.drain(w, out);
        r
    }

    fn stats(&self) -> PolicyStats {
        PolicyStats {
            hook_calls: self.calls,
            boosts: self.engine.as_ref().map_or(0, |e| e.observer().grants),
            counters: self.engine.as_ref().map_or(Vec::new(), |e| {
                superpass_core::stats::COUNTER_NAMES
                    .iter()
                    .zip(e.stats().counters.iter())
                    .filter(|(_, &v)| v != 0)
                    .map(|(n, &v)| (n.to_string(), v))
                    .collect()
            }),
        }
    }
}
