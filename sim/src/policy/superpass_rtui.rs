//! SuperPass on a device that also runs RT-UI (`superpass+rt-ui`): the UI thread and
//! RenderThread are SCHED_FIFO 1 exactly as [`RtUi`] makes them (with the kernel's `rt_mutex`
//! inheritance), and [`SuperPass`]'s engine fast-tracks their fair blockers exactly as it does
//! alone. Each part is the existing policy, called through the trait; this file adds only what
//! the kernel does where the two meet:
//!
//! - A FIFO critical thread's lock wait is reported like any other: the module's wait probes
//!   filter by TID, never by class (`sp_may_matter` in module/superpass_lock.c and
//!   module/superpass_futex.c), so its fair blockers are fast-tracked.
//! - The fast track never fights an RT task. Its pick hook sits in `pick_next_task_fair`,
//!   which `__pick_next_task` reaches only when no RT task is runnable (kernel/sched/core.c),
//!   and the module runs only a fair task there (`sp_task_pickable`); its wakeup-preemption and
//!   CPU-selection hooks are the fair class's own; its enqueue and misfit probes pass over a
//!   task that is not fair (`sp_is_fair`, module/superpass_sched.c). The simulator asks the
//!   policy at the same points, and [`Policy::enqueue`] below drops an RT task, as the probe.
//! - On a PI futex an RT waiter makes the owner RT (`task_blocks_on_rt_mutex` →
//!   `rt_mutex_adjust_prio` → `rt_mutex_setprio`, kernel/locking/rtmutex.c, 6.12), before
//!   `android_vh_rtmutex_wait_start` fires (vm/patches/0005). The engine may still grant the
//!   owner, but an RT task is never fair-picked, so the grant costs nothing and the PI boost
//!   decides. `rt_mutex_setprio` moves a queued task between classes through `dequeue_task` and
//!   `enqueue_task`, whose `android_rvh_dequeue_task` / `android_rvh_enqueue_task` the module
//!   probes; the simulator's class change calls no policy hook, so this policy reports those two
//!   probes for each inheritance change it makes to a task on a runqueue.

use super::rtui::RtUi;
use super::superpass::SuperPass;
use super::{Action, BinderEvent, LockEvent, Policy, PolicyStats};
use crate::locks::TaskIdx;
use crate::sched::World;

/// RT-UI promotion with SuperPass's fast track underneath.
#[derive(Default)]
pub struct SuperPassRtUi {
    rt: RtUi,
    sp: SuperPass,
    /// The inheritance changes of one lock event, before they join the run's actions.
    pi_out: Vec<Action>,
}

impl SuperPassRtUi {
    /// The enqueue and dequeue probes `rt_mutex_setprio` fires for each inheritance change
    /// in `pi` to a task on a runqueue (queued or running), each charged as a hook call.
    fn report_setprio(&mut self, w: &World, pi: &[Action], out: &mut Vec<Action>) {
        let ns = self.sp.sched_hook_ns();
        for &a in pi {
            let Action::SetEff(t, s) = a else { continue };
            let task = w.task(t);
            if !task.on_rq {
                continue;
            }
            let cpu = task.cpu;
            self.sp.dequeue(w, cpu, t, out);
            out.push(Action::Charge(cpu, ns));
            if !s.is_rt() {
                self.sp.enqueue(w, cpu, t, out);
            }
            out.push(Action::Charge(cpu, ns));
        }
    }
}

impl Policy for SuperPassRtUi {
    fn name(&self) -> &'static str {
        "superpass+rt-ui"
    }

    fn setup(&mut self, w: &World, out: &mut Vec<Action>) {
        self.sp.setup(w, out);
        self.rt.setup(w, out);
    }

    fn sched_hooks(&self) -> bool {
        true
    }

    fn sched_hook_ns(&self) -> u64 {
        self.sp.sched_hook_ns()
    }

    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        // The kernel boosts a PI owner before the wait hook fires; here the engine hears the
        // wait first and may queue the owner, and the dequeue reported for its class change
        // then takes it off the fast track's queue again, where the kernel's order leaves it.
        self.sp.lock_event(w, cpu, ev, out);
        let mut pi = std::mem::take(&mut self.pi_out);
        pi.clear();
        self.rt.lock_event(w, cpu, ev, &mut pi);
        if pi.iter().any(|a| matches!(a, Action::SetEff(..))) {
            self.report_setprio(w, &pi, out);
        }
        out.append(&mut pi);
        self.pi_out = pi;
    }

    fn binder_event(&mut self, w: &World, cpu: u32, ev: BinderEvent, out: &mut Vec<Action>) {
        self.sp.binder_event(w, cpu, ev, out);
    }

    fn enqueue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        if !w.task(t).eff.is_rt() {
            self.sp.enqueue(w, cpu, t, out);
        }
    }

    fn dequeue(&mut self, w: &World, cpu: u32, t: TaskIdx, out: &mut Vec<Action>) {
        self.sp.dequeue(w, cpu, t, out);
    }

    fn pick_fair(
        &mut self,
        w: &World,
        cpu: u32,
        prev: Option<TaskIdx>,
        next: Option<TaskIdx>,
        out: &mut Vec<Action>,
    ) -> Option<TaskIdx> {
        self.sp.pick_fair(w, cpu, prev, next, out)
    }

    fn should_preempt(
        &mut self,
        w: &World,
        cpu: u32,
        curr: TaskIdx,
        waking: TaskIdx,
        out: &mut Vec<Action>,
    ) -> bool {
        self.sp.should_preempt(w, cpu, curr, waking, out)
    }

    fn select_cpu(
        &mut self,
        w: &World,
        t: TaskIdx,
        prev: u32,
        idle: u64,
        out: &mut Vec<Action>,
    ) -> Option<u32> {
        self.sp.select_cpu(w, t, prev, idle, out)
    }

    fn tick(&mut self, w: &World, cpu: u32, curr: TaskIdx, out: &mut Vec<Action>) -> bool {
        self.sp.tick(w, cpu, curr, out)
    }

    fn misfit_targets(
        &mut self,
        w: &World,
        t: TaskIdx,
        cpu: u32,
        faster: u64,
        running: bool,
    ) -> u64 {
        self.sp.misfit_targets(w, t, cpu, faster, running)
    }

    fn helps(&self, w: &World, t: TaskIdx) -> bool {
        self.sp.helps(w, t)
    }

    fn throttled(&self, cpu: u32) -> bool {
        self.sp.throttled(cpu)
    }

    /// SuperPass's counters, with the inheritance steps added to its hook calls and the
    /// inheritance changes as `pi_changes`.
    fn stats(&mut self) -> PolicyStats {
        let (mut s, pi) = (self.sp.stats(), self.rt.stats());
        s.hook_calls += pi.hook_calls;
        if pi.boosts != 0 {
            s.counters.push(("pi_changes".into(), pi.boosts));
        }
        s
    }
}
