// SPDX-License-Identifier: GPL-2.0

//! The running kernel as the glue's [`Platform`]: what the engine's answers need that only the
//! kernel can do.
//!
//! The glue (`superpass_core::platform`, the same code the simulator drives) decides the order
//! of calls; this file answers them with the C companion's helpers: it finds a task by TID,
//! reads where it is queued, validates a pick against the locked runqueue, reads the module's
//! record of a wait in progress, asks the CPU stopper for a move, and collects the CPUs to kick,
//! which are sent only once the engine lock is dropped.

use core::marker::PhantomData;

use crate::ffi;
use crate::superpass_core::detector::MAX_BLOCKERS;
use crate::superpass_core::platform::{CurrentWait, Handle, Platform, PushView, WaitRecord};
use crate::superpass_core::tunables::READER_TABLE_WAYS;
use crate::superpass_core::{Cpu, Published, Running, Tid, MAX_CPUS};
use crate::{RqRef, TaskRef};

/// CPUs to kick once the engine lock is dropped.
pub(crate) struct Kicks {
    cpus: [Cpu; MAX_BLOCKERS],
    n: usize,
}

impl Kicks {
    /// No CPU to kick yet.
    pub(crate) fn new() -> Self {
        Self {
            cpus: [0; MAX_BLOCKERS],
            n: 0,
        }
    }

    fn add(&mut self, cpu: Cpu) {
        let known = self.cpus.get(..self.n).is_some_and(|k| k.contains(&cpu));
        if let (false, Some(slot)) = (known, self.cpus.get_mut(self.n)) {
            *slot = cpu;
            self.n += 1;
        }
    }

    /// Sends the kicks; call without the engine lock. The kicked CPU's next pick locates
    /// and runs the blocker.
    pub(crate) fn send(&self) {
        for &cpu in self.cpus.get(..self.n).unwrap_or(&[]) {
            ffi::kick_cpu(cpu);
        }
    }
}

/// The kernel for one hook call, made by [`crate::state::Guard::split`].
///
/// # Invariants
///
/// The engine lock is held for `'g`. Every handle the glue passes in came from
/// [`Platform::lookup`] or from the engine's records, which name live tasks only: the
/// `free_task` hook drops a task's handle, under the engine lock, before the task is freed.
pub(crate) struct Kernel<'g> {
    /// The runqueue the hook holds locked (a pick's or a tick's), if any.
    rq: Option<RqRef>,
    kicks: &'g mut Kicks,
    _lock: PhantomData<&'g mut ()>,
}

impl<'g> Kernel<'g> {
    /// The kernel for a hook holding `rq` locked, if any.
    ///
    /// # Safety
    ///
    /// The engine lock is held for `'g`.
    pub(crate) unsafe fn new(rq: Option<RqRef>, kicks: &'g mut Kicks) -> Self {
        // INVARIANT: the caller holds the engine lock for 'g.
        Self {
            rq,
            kicks,
            _lock: PhantomData,
        }
    }

    /// The task a handle names.
    pub(crate) fn task(&self, handle: Handle) -> Option<TaskRef> {
        // SAFETY: the handle names a live task and the engine lock is held (type invariant).
        unsafe { TaskRef::from_handle(handle) }
    }
}

impl Platform for Kernel<'_> {
    fn lookup(&mut self, tid: Tid) -> Option<Handle> {
        TaskRef::lookup(tid).map(TaskRef::handle)
    }

    fn queued_cpu(&mut self, task: Handle) -> Option<Cpu> {
        self.task(task)?.queued_cpu()
    }

    fn home_cpu(&mut self, task: Handle) -> Option<Cpu> {
        self.task(task).map(TaskRef::cpu)
    }

    fn curr(&mut self, cpu: Cpu) -> Tid {
        ffi::cpu_curr(cpu)
    }

    fn push_view(&mut self, task: Handle, src: Cpu, others: &mut [Running; MAX_CPUS]) -> PushView {
        let Some(t) = self.task(task) else {
            return PushView::default();
        };
        let (idle_mask, n) = t.push_view(src, others);
        PushView {
            idle_mask,
            n,
            running: t.running(),
        }
    }

    fn move_to(&mut self, task: Handle, dst: Cpu, expect: Cpu) -> bool {
        self.task(task)
            .is_some_and(|t| t.move_to(dst, Some(expect)))
    }

    fn kick(&mut self, cpu: Cpu) {
        self.kicks.add(cpu);
    }

    fn wait_record(
        &mut self,
        tid: Tid,
        readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord> {
        ffi::wait_of(tid, readers)
    }

    fn publish(&mut self, published: Published) {
        // The engine lock is held (type invariant).
        ffi::publish(&published);
    }

    fn queued_on(&mut self, task: Handle, _cpu: Cpu) -> bool {
        match (self.task(task), self.rq) {
            (Some(t), Some(rq)) => t.queued_on(rq),
            _ => false,
        }
    }

    fn pickable(&mut self, task: Handle, _cpu: Cpu) -> bool {
        match (self.task(task), self.rq) {
            (Some(t), Some(rq)) => t.pickable(rq),
            _ => false,
        }
    }

    fn current_wait(&mut self) -> CurrentWait {
        ffi::current_wait()
    }
}
