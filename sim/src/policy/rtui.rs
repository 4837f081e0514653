//! RT UI promotion (`rt-ui`): the UI thread and RenderThread run as SCHED_FIFO priority 1.
//!
//! This is Android's `sys.use_fifo_ui=1`: ActivityManager puts the top app's UI thread and
//! RenderThread in SCHED_FIFO priority 1 (without it they run at nice -10, as the scenarios
//! declare). A fair-class lock holder gets no help, and the RT threads can starve fair ones.
//! The kernel underneath still does `rt_mutex` priority inheritance (`super::pi`), which now
//! matters: an RT UI thread waiting on a PI futex lends its priority to the owner.

use super::pi::Pi;
use super::{Action, LockEvent, Policy, PolicyStats};
use crate::sched::{Sched, World};
use crate::workload::ThreadRole;

/// RT-UI promotion on a kernel with `rt_mutex` priority inheritance.
#[derive(Clone, Debug, Default)]
pub struct RtUi {
    pi: Pi,
}

impl Policy for RtUi {
    fn name(&self) -> &'static str {
        "rt-ui"
    }

    fn setup(&mut self, w: &World, out: &mut Vec<Action>) {
        for (i, t) in w.tasks.iter().enumerate() {
            if matches!(t.role, ThreadRole::Ui | ThreadRole::Render) {
                out.push(Action::SetBase(i as u32, Sched::fifo(1)));
            }
        }
    }

    fn lock_event(&mut self, w: &World, cpu: u32, ev: LockEvent, out: &mut Vec<Action>) {
        self.pi.on_lock_event(w, cpu, ev, out);
    }

    fn stats(&mut self) -> PolicyStats {
        self.pi.counters()
    }
}
