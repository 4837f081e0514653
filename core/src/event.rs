//! The one protocol every platform speaks: what it observed, as [`Event`]s, and what the engine
//! answers, as [`Answer`]s.
//!
//! The kernel module turns each vendor-hook call into an event with the `from_hook_*`
//! constructors, which validate the raw C arguments once; the simulator builds the same events
//! at the points where those hooks would fire. Both hand them to [`Engine::handle`], so the two
//! cannot drive the policy differently.

use super::engine::{Boosted, Engine};
use super::observer::Observer;
use super::{futex_wait_lock, Cpu, LockId, LockKind, Nanos, Tid};

/// A fair task running on a CPU, as a platform sees it when it offers places to push a
/// boosted task to ([`Event::Push`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Running {
    /// The CPU.
    pub cpu: Cpu,
    /// The task running there.
    pub tid: Tid,
    /// Its static priority (120 + nice).
    pub prio: u32,
}

/// Something a platform observed, in the terms of the kernel hooks that report it; `'a` is the
/// lifetime of a list of readers the platform lends for the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// `waiter` starts sleeping on `lock`; `owner` is the owner the lock itself names, if any.
    WaitStart {
        /// The waiting task.
        waiter: Tid,
        /// The lock.
        lock: LockId,
        /// How it waits.
        kind: LockKind,
        /// The mutex owner or rwsem writer the lock names.
        owner: Option<Tid>,
        /// The CPU the wait starts on (the wait hooks run in the waiter's context): where a
        /// blocker of a critical waiter goes first when it wakes.
        cpu: Cpu,
    },
    /// The platform's own view of who holds rwsem `lock` (`owner`, 0 for none, and `readers`,
    /// oldest first), given right before a wait on it starts, by a platform that forwards the
    /// lock's acquire and release events only while tracked waits are on it (the lock lanes
    /// it publishes). Ignored while such waits exist: the engine's record is current.
    LockSeen {
        /// The lock.
        lock: LockId,
        /// The writer the owner word names, or 0.
        owner: Tid,
        /// The readers the platform recorded (none when there is a writer).
        readers: &'a [Tid],
    },
    /// `waiter`, just boosted while asleep, has been waiting on `lock` since before it mattered,
    /// so no wait start was reported: the platform found the wait in its own record and hands
    /// it over, so that the chain goes on through it (the engine's view wins where the record is stale).
    AsleepWait {
        /// The boosted task, asleep in the wait.
        waiter: Tid,
        /// The lock.
        lock: LockId,
        /// The wait's kind.
        kind: LockKind,
        /// The owner the lock named when the wait began, or 0.
        owner: Tid,
        /// For an rwsem without an owner, the readers the platform records.
        readers: &'a [Tid],
    },
    /// `waiter` stopped waiting for `lock`.
    WaitFinish {
        /// The task that waited.
        waiter: Tid,
        /// The lock.
        lock: LockId,
    },
    /// The binder call `lock` from `caller` is freed. Unless a reply woke the caller (which
    /// then ends its wait itself, as it receives the reply: the free comes first, in the
    /// server's context), the call ended without one and so does its wait. A failed call (a
    /// dead server thread) wakes its caller too, but no reply released its server thread.
    CallFreed {
        /// The call.
        lock: LockId,
        /// The thread that made it.
        caller: Tid,
    },
    /// Server thread `server` replied to the call it serves, which the event does not name
    /// (Rust Binder's `android_vh_rust_binder_restore_priority`). The innermost of the
    /// binder calls it holds ends: the last one a tracked wait began on, since a thread serves
    /// nested calls last in, first out. The reply wakes its caller, and a critical caller gets
    /// its wake turn, as with [`Event::from_hook_binder_reply`]; with no hook at its receipt of
    /// the reply, its wait ends at its next sleep ([`Event::WaiterSlept`]). Answered like
    /// [`Event::WaiterWoken`].
    ServerReplied {
        /// The server thread.
        server: Tid,
    },
    /// `tid` became the owner of `lock` (mutex, futex, rwsem writer).
    OwnerAcquired {
        /// The lock.
        lock: LockId,
        /// The new owner.
        tid: Tid,
    },
    /// `tid` released `lock` as its owner.
    OwnerReleased {
        /// The lock.
        lock: LockId,
        /// The old owner.
        tid: Tid,
    },
    /// `tid` took a read hold of `lock` (a writer doing so downgrades).
    ReaderAcquired {
        /// The lock.
        lock: LockId,
        /// The reader.
        tid: Tid,
    },
    /// `tid` released a read hold of `lock`.
    ReaderReleased {
        /// The lock.
        lock: LockId,
        /// The reader.
        tid: Tid,
    },
    /// A release of `lock` by `waker` woke waiter `tid`, which takes the lock when it runs.
    WaiterWoken {
        /// The lock.
        lock: LockId,
        /// The woken waiter.
        tid: Tid,
        /// The task whose release woke it (the unlock hooks run in its context); 0 if unknown.
        waker: Tid,
    },
    /// `waiter` starts an owner-hinted futex wait: it named `owner` as the holder, and the
    /// platform checked whether that names a live thread of the waiter's process other than
    /// the waiter (`valid`). The wait's lock is [`futex_wait_lock`]`(waiter)`.
    FutexWait {
        /// The waiting task.
        waiter: Tid,
        /// The holder the waiter named.
        owner: Tid,
        /// Whether the platform accepted the name.
        valid: bool,
        /// The CPU the wait starts on, as for [`Event::WaitStart`].
        cpu: Cpu,
    },
    /// `waiter` is about to join a futex's queue of waiters, under the queue's lock (the
    /// hook `android_vh_alter_futex_plist_add`). Answered `First` when it should go ahead of
    /// the waiters of its priority, so that the futex's next wake wakes it before them.
    FutexQueue {
        /// The waiting task.
        waiter: Tid,
    },
    /// `tid` left its runqueue to sleep. Reported only for tasks in [`Engine::woken_lanes`]: a
    /// woken waiter (critical, or a link of a chain) that sleeps again lost its retry, and its
    /// lock's holders block it.
    WaiterSlept {
        /// The task.
        tid: Tid,
        /// The lock the platform's own record says `tid` waits on, or 0 if it has none.
        lock: LockId,
        /// The mutex owner or rwsem writer `lock` names now, or 0. The task that beat the
        /// waiter to the lock may have taken it where no event reports (an uncontended fast
        /// path while the owner probes are detached): the lock itself still names it.
        owner: Tid,
    },
    /// Critical thread `tid` was preempted on CPU `cpu` inside a tracked wait it has not slept
    /// in yet, or on its way back from one (it ended, and the thread has neither slept nor had
    /// this turn since), and stays queued there; the platform
    /// reports it at the pick that follows, only for tasks in
    /// [`Published::waiting_lanes`](super::Published::waiting_lanes). Answered `None`: the
    /// thread gets a wait turn at the head of that CPU's fast-track queue, so the pick runs it.
    Preempted {
        /// The CPU it stays queued on.
        cpu: Cpu,
        /// The critical thread.
        tid: Tid,
        /// The platform's handle for it.
        handle: u64,
    },
    /// `tid` exited.
    TaskExit {
        /// The task.
        tid: Tid,
        /// The platform's handle for it (0: none), forgotten wherever the engine recorded it:
        /// what it names is about to be freed.
        handle: u64,
    },
    /// `tid` joined CPU `cpu`'s runqueue.
    Enqueue {
        /// The CPU.
        cpu: Cpu,
        /// The task.
        tid: Tid,
        /// The platform's handle for it (0: none), recorded while it is boosted so that a pick
        /// can name it back ([`Answer::Run`]); the engine never interprets it.
        handle: u64,
        /// The task running on that CPU (0: unknown), which an answer `Resched` preempts.
        curr: Tid,
    },
    /// `tid` left CPU `cpu`'s runqueue.
    Dequeue {
        /// The CPU.
        cpu: Cpu,
        /// The task.
        tid: Tid,
    },
    /// CPU `cpu`'s fair class chose `fair_next` (0: nothing).
    Pick {
        /// The CPU.
        cpu: Cpu,
        /// The stock choice.
        fair_next: Tid,
    },
    /// `waking` was queued on CPU `cpu`, which runs `curr`.
    Wakeup {
        /// The CPU.
        cpu: Cpu,
        /// The running task.
        curr: Tid,
        /// The woken task.
        waking: Tid,
    },
    /// Waking task `tid`, last on `prev_cpu`, needs a CPU.
    SelectCpu {
        /// The task.
        tid: Tid,
        /// Where it ran last.
        prev_cpu: Cpu,
        /// Idle CPUs.
        idle_mask: u64,
        /// CPUs it may run on.
        allowed_mask: u64,
    },
    /// The tick on CPU `cpu`, running `curr`. Answered `Resched` when a boosted task there
    /// reached a bound; the platform then sends [`Event::Regrant`].
    Tick {
        /// The CPU.
        cpu: Cpu,
        /// The running task.
        curr: Tid,
    },
    /// The kernel updates running task `tid`'s misfit status on CPU `cpu`. Answered
    /// `Misfit` for a boosted task off the fast CPUs (`fasttrack/misfit.rs`), so an idle CPU
    /// of higher capacity pulls it.
    UpdateMisfit {
        /// The task.
        tid: Tid,
        /// Its CPU.
        cpu: Cpu,
    },
    /// Load balancing would move `tid` from CPU `src` to CPU `dst`, taking it off `src` if
    /// `running` (an active balance). Answered `Veto` to keep it.
    CanMigrate {
        /// The task.
        tid: Tid,
        /// Where it is.
        src: Cpu,
        /// Where it would go.
        dst: Cpu,
        /// Whether it runs on `src`.
        running: bool,
    },
    /// Task `tid` was just boosted on CPU `cpu`, running there if `running`, else queued. The
    /// platform offers `idle_mask`, the idle CPUs it may use, and `others`, the fair tasks
    /// running on the other CPUs it may use. Answered `Place(dst)` when it should move there
    /// now (`fasttrack/misfit.rs`, `push_target`), which the platform does with the CPU
    /// stopper.
    Push {
        /// The task.
        tid: Tid,
        /// The platform's handle for it, given back when it is to return
        /// ([`Event::PushBack`]).
        handle: u64,
        /// Its CPU.
        cpu: Cpu,
        /// Whether it runs there.
        running: bool,
        /// The idle CPUs it may use.
        idle_mask: u64,
        /// What runs on the busy CPUs it may use (fair tasks only).
        others: &'a [Running],
    },
    /// The platform found boosted task `tid`'s handle right after its boost (its name for the
    /// task, which the engine hands back in `Run`, `Unlocated` and `Return`). Answered `None`;
    /// the engine drops the handle with the boost or at a `TaskExit` naming it.
    Named {
        /// The boosted task.
        tid: Tid,
        /// The platform's handle for it.
        handle: u64,
        /// The CPU the task runs or is queued on, or else the CPU of its task record (its last,
        /// or the one whose runqueue it is joining): a racy read, `None` if unknown. Until an
        /// event locates it, that CPU's picks look for it for `locate_window_ns`; every CPU's
        /// without one.
        home: Option<Cpu>,
    },
    /// The platform asks, at a pick, for the next boosted task (from boost slot `from` on)
    /// whose runqueue no event has reported since its boost: boosted while already queued, no
    /// enqueue announced it. Answered `Unlocated`, or `None` when there are no more; a task
    /// found queued on the picking CPU is then reported with `Enqueue`.
    Unlocated {
        /// The boost slot to look from: 0 first, then the answer's `next`.
        from: u32,
    },
    /// The platform attached the hooks of these mechanisms (`abi::mech` bits), which
    /// `GET_STATS` reports. Answered `None`.
    Attached {
        /// The mechanisms attached.
        active: u64,
    },
    /// Each CPU's capacity (`capacity[cpu]`, in any unit; the kernel's
    /// `arch_scale_cpu_capacity`): the fastest CPUs are those of the highest. Answered `None`.
    Capacities {
        /// The capacities, by CPU.
        capacity: &'a [u32],
    },
    /// The platform asks, after a call that may have ended a boost, for a pushed task whose
    /// boost has ended. Answered `Return` with the next one to send back to the CPU it was
    /// pushed from (`pushes.rs`), until `None`.
    PushBack,
    /// The kernel computes task `tid`'s effective uclamp.min. Answered `UclampMin` while
    /// SuperPass raises it.
    UclampEff {
        /// The task.
        tid: Tid,
    },
    /// A tick or a pick just ran, on any CPU: grants due by now are made. A budget-revoked
    /// task whose window has passed is granted again; a woken critical waiter whose turn ran
    /// out before its retry ended (the tick or pick charged it) has the holders of its lock
    /// granted, at once rather than at a sleep the platform may report much later or never.
    /// Answered `Boosted`, or `None`; one compare when nothing is due.
    Regrant {
        /// The task that ran on the CPU until the tick or pick (the one they charged), 0 if
        /// none.
        curr: Tid,
        /// The lock the platform's own record says `curr` waits on, or 0 if it has none.
        lock: LockId,
        /// The mutex owner or rwsem writer `lock` names now, or 0. A holder that took the lock
        /// again while the waiter spun through its turn may have done so where no event
        /// reports (the owner probes detached): the lock itself still names it.
        owner: Tid,
    },
    /// CPU `cpu` just picked, or the timer it armed then fired: when must it pick again for a
    /// boosted task that runs there to stop at its budget, its CPU's throttle share or its
    /// slice? Answered `Resched` if that is now (within [`BOUND_SLACK_NS`]), `Arm` with the
    /// moment if later, `None` if no boosted task runs there (its grant ended without a pick,
    /// and the task running now, perhaps the critical thread it was for, must not be
    /// preempted for it).
    Bound {
        /// The CPU.
        cpu: Cpu,
    },
}

/// How early a bound may be answered as due: another timer for a few microseconds costs more
/// than running that much past the bound.
pub const BOUND_SLACK_NS: Nanos = 50_000;

impl Event<'_> {
    /// The wait-start hooks' event: `kind` is the [`LockKind`] encoding, `owner` the owner's
    /// TID read from the lock (`<= 0`: none) and `cpu` the CPU the hook runs on. `None` for a
    /// kind no hook reports.
    pub fn from_hook_wait_start(
        waiter: Tid,
        lock: LockId,
        kind: u32,
        owner: Tid,
        cpu: Cpu,
    ) -> Option<Self> {
        Some(Self::WaitStart {
            waiter,
            lock,
            kind: LockKind::from_u32(kind)?,
            owner: (owner > 0).then_some(owner),
            cpu,
        })
    }

    /// The futex-wait-end hook's event: `waiter`'s owner-hinted futex wait, if any, ends.
    pub fn from_hook_futex_wait_end(waiter: Tid) -> Self {
        Self::WaitFinish {
            waiter,
            lock: futex_wait_lock(waiter),
        }
    }

    /// The futex-wake hook's event: `waker`'s wake of the futex that `queued` waits on woke
    /// `woken`: `queued` itself (its wait was woken), or another waiter, which is then
    /// `queued`'s next blocker.
    pub fn from_hook_futex_woken(queued: Tid, woken: Tid, waker: Tid) -> Self {
        Self::WaiterWoken {
            lock: futex_wait_lock(queued),
            tid: woken,
            waker,
        }
    }

    /// The binder reply hook's events, in order: server thread `server` replied to the call
    /// `lock` from `caller`, whom the reply just woke. The server's hold of the call ends, and
    /// the reply wakes the caller as a release wakes a lock's waiter: it gets its wake turn,
    /// which lasts until it receives the reply ([`Event::from_hook_binder_received`]).
    pub fn from_hook_binder_reply(lock: LockId, server: Tid, caller: Tid) -> [Self; 2] {
        [
            Self::OwnerReleased { lock, tid: server },
            Self::WaiterWoken {
                lock,
                tid: caller,
                waker: server,
            },
        ]
    }

    /// Rust Binder's take hook's event: server thread `server` took the synchronous call
    /// `lock` from `caller`, which waits for it on CPU `cpu`. No hook reported the call
    /// before, so this is where the caller's wait starts.
    pub fn from_hook_binder_taken(caller: Tid, lock: LockId, server: Tid, cpu: Cpu) -> Self {
        Self::WaitStart {
            waiter: caller,
            lock,
            kind: LockKind::Binder,
            owner: (server > 0).then_some(server),
            cpu,
        }
    }

    /// The binder receive hook's event: `caller` received the reply to its call `lock`, in its
    /// own context, so its wait ends now that it runs.
    pub fn from_hook_binder_received(caller: Tid, lock: LockId) -> Self {
        Self::WaitFinish {
            waiter: caller,
            lock,
        }
    }

    /// The owner hooks' event (mutex start-time and unlock, rwsem writer owned and cleared).
    pub fn from_hook_owner(lock: LockId, tid: Tid, acquired: bool) -> Self {
        if acquired {
            Self::OwnerAcquired { lock, tid }
        } else {
            Self::OwnerReleased { lock, tid }
        }
    }

    /// The rwsem reader-owned and reader-cleared hooks' event.
    pub fn from_hook_reader(lock: LockId, tid: Tid, acquired: bool) -> Self {
        if acquired {
            Self::ReaderAcquired { lock, tid }
        } else {
            Self::ReaderReleased { lock, tid }
        }
    }
}

/// The engine's answer to an [`Event`]: the decision the platform applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Nothing to do.
    None,
    /// These tasks became boosted: find them and kick the CPUs whose runqueues hold them.
    Boosted(Boosted),
    /// Reschedule the CPU (enqueue, tick), or preempt the running task (wakeup).
    Resched,
    /// Run this task instead of the stock choice (pick).
    Run {
        /// The task.
        tid: Tid,
        /// The handle the platform gave for it ([`Event::Enqueue`]), or 0.
        handle: u64,
    },
    /// Place the waking task on this CPU (select), or move the pushed one there now (push).
    Place(Cpu),
    /// A boosted task whose runqueue is unknown (`Event::Unlocated`); ask from `next` for the
    /// next one.
    Unlocated {
        /// The task.
        tid: Tid,
        /// Its handle.
        handle: u64,
        /// The boost slot to ask from next.
        next: u32,
    },
    /// Move the task the platform's `handle` names to CPU `to` now, if it is still on CPU
    /// `expect`: a pushed task whose boost has ended goes back (push back).
    Return {
        /// The platform's handle for the task, as the push named it.
        handle: u64,
        /// The CPU it was pushed from.
        to: Cpu,
        /// The CPU it was pushed to, where it should still be.
        expect: Cpu,
    },
    /// The task does not fit its CPU (misfit update).
    Misfit,
    /// Queue the waiter ahead of the others of its priority (futex queue).
    First,
    /// Leave the task where it is (migration).
    Veto,
    /// Raise the task's uclamp.min to this (uclamp).
    UclampMin(u32),
    /// Ask again at this moment (bound).
    Arm(Nanos),
}

impl Answer {
    fn flag(b: bool) -> Self {
        if b {
            Self::Resched
        } else {
            Self::None
        }
    }

    pub(crate) fn boosted(b: Boosted) -> Self {
        if b.as_slice().is_empty() {
            Self::None
        } else {
            Self::Boosted(b)
        }
    }

    /// The newly boosted tasks this answer names (none for other answers).
    pub fn newly_boosted(&self) -> &[Tid] {
        match self {
            Self::Boosted(b) => b.as_slice(),
            _ => &[],
        }
    }
}

impl<O: Observer> Engine<O> {
    /// Applies one observed event and returns the decision: the whole protocol in one call.
    #[inline]
    pub fn handle(&mut self, now: Nanos, ev: Event<'_>) -> Answer {
        match ev {
            Event::WaitStart {
                waiter,
                lock,
                kind,
                owner,
                cpu,
            } => {
                self.wait_cpu(waiter, cpu);
                Answer::boosted(self.wait_start(now, waiter, lock, kind, owner))
            }
            Event::LockSeen {
                lock,
                owner,
                readers,
            } => {
                self.lock_seen(now, lock, owner, readers);
                Answer::None
            }
            Event::AsleepWait {
                waiter,
                lock,
                kind,
                owner,
                readers,
            } => self.asleep_wait(now, waiter, lock, kind, owner, readers),
            Event::WaitFinish { waiter, lock } => {
                self.wait_finish(now, waiter, lock);
                Answer::None
            }
            Event::CallFreed { lock, caller } => {
                self.call_freed(now, lock, caller);
                Answer::None
            }
            Event::ServerReplied { server } => Answer::boosted(self.server_replied(now, server)),
            Event::OwnerAcquired { lock, tid } => {
                Answer::boosted(self.owner_acquired(now, lock, tid))
            }
            Event::OwnerReleased { lock, tid } => {
                self.owner_released(now, lock, tid);
                Answer::None
            }
            Event::ReaderAcquired { lock, tid } => {
                Answer::boosted(self.reader_acquired(now, lock, tid))
            }
            Event::ReaderReleased { lock, tid } => {
                Answer::boosted(self.reader_released(now, lock, tid))
            }
            Event::WaiterWoken { lock, tid, waker } => {
                Answer::boosted(self.waiter_woken(now, lock, tid, waker))
            }
            Event::FutexWait {
                waiter,
                owner,
                valid,
                cpu,
            } => {
                self.wait_cpu(waiter, cpu);
                Answer::boosted(self.futex_wait(now, waiter, owner, valid))
            }
            Event::FutexQueue { waiter } => {
                if self.queue_first(waiter) {
                    Answer::First
                } else {
                    Answer::None
                }
            }
            Event::WaiterSlept { tid, lock, owner } => {
                Answer::boosted(self.waiter_slept(now, tid, lock, owner))
            }
            Event::Preempted { cpu, tid, handle } => {
                self.waiter_preempted(now, cpu, tid, handle);
                Answer::None
            }
            Event::TaskExit { tid, handle } => {
                self.task_exit(now, tid);
                if handle != 0 {
                    self.forget_handle(handle);
                }
                Answer::None
            }
            Event::Enqueue {
                cpu,
                tid,
                handle,
                curr,
            } => Answer::flag(self.enqueue_task(now, cpu, tid, handle, curr)),
            Event::Dequeue { cpu, tid } => {
                self.dequeue(now, cpu, tid);
                Answer::None
            }
            Event::Pick { cpu, fair_next } => match self.pick(now, cpu, fair_next) {
                Some(tid) => Answer::Run {
                    tid,
                    handle: self.handle_of(tid).unwrap_or(0),
                },
                None => Answer::None,
            },
            Event::Wakeup { cpu, curr, waking } => {
                Answer::flag(self.should_preempt(now, cpu, curr, waking))
            }
            Event::SelectCpu {
                tid,
                prev_cpu,
                idle_mask,
                allowed_mask,
            } => self
                .select_cpu(now, tid, prev_cpu, idle_mask, allowed_mask)
                .map_or(Answer::None, Answer::Place),
            Event::Tick { cpu, curr } => {
                self.settle_stale_wakes(now);
                Answer::flag(self.tick(now, cpu, curr))
            }
            Event::Regrant { curr, lock, owner } => {
                if self.regrant_due(now) {
                    Answer::boosted(self.regrant(now, curr, lock, owner))
                } else {
                    Answer::None
                }
            }
            Event::UpdateMisfit { tid, cpu } => {
                if self.misfit(tid, cpu) {
                    Answer::Misfit
                } else {
                    Answer::None
                }
            }
            Event::CanMigrate {
                tid,
                src,
                dst,
                running,
            } => {
                if self.may_migrate(tid, src, dst, running) {
                    Answer::None
                } else {
                    Answer::Veto
                }
            }
            Event::Push {
                tid,
                handle,
                cpu,
                running,
                idle_mask,
                others,
            } => self
                .push_target(now, tid, handle, cpu, running, idle_mask, others)
                .map_or(Answer::None, Answer::Place),
            Event::Named { tid, handle, home } => {
                self.set_handle(tid, handle, home);
                Answer::None
            }
            Event::Unlocated { from } => {
                self.unlocated_from(from as usize)
                    .map_or(Answer::None, |(tid, handle, next)| Answer::Unlocated {
                        tid,
                        handle,
                        next: next as u32,
                    })
            }
            Event::Attached { active } => {
                self.set_active(active);
                Answer::None
            }
            Event::Capacities { capacity } => {
                self.set_cpu_capacities(capacity);
                Answer::None
            }
            Event::PushBack => self
                .take_push_back(now)
                .map_or(Answer::None, |p| Answer::Return {
                    handle: p.handle,
                    to: p.from,
                    expect: p.to,
                }),
            Event::UclampEff { tid } => {
                self.uclamp_min(tid).map_or(Answer::None, Answer::UclampMin)
            }
            Event::Bound { cpu } => match self.deadline(cpu) {
                Some(at) if at <= now.saturating_add(BOUND_SLACK_NS) => Answer::Resched,
                Some(at) => Answer::Arm(at),
                None => Answer::None,
            },
        }
    }
}
