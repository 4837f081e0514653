//! RT UI promotion: the UI thread and RenderThread run as SCHED_FIFO priority 1.
//!
//! This is Android's `sys.use_fifo_ui=1` (ActivityManager promotes the top app's UI thread
//! and RenderThread). Lock holders get no help, and the RT threads can starve fair ones.

use super::{Action, Policy};
use crate::sched::{Sched, World};
use crate::workload::ThreadRole;

/// RT-UI promotion.
#[derive(Clone, Copy, Debug, Default)]
pub struct RtUi;

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
}
