//! Trace recording during a run and its export as a Perfetto `.pftrace`.
//!
//! The run records compact events; [`TraceLog::to_pftrace`] writes them with
//! `superpass_trace::writer::TraceWriter`: per-CPU `sched_switch`/`sched_waking`, process and
//! thread names, and slices named as the seed post does (`lockwait:<lock>`,
//! `lockhold:<lock>`), frames (`Choreographer#doFrame <n>`, `DrawFrame <n>`), binder calls
//! (`binder transaction <pool>`) and SuperPass grants (`superpass:grant <blocker tid>`).

use crate::locks::TaskIdx;
use crate::sched::World;
use superpass_trace::writer::TraceWriter;

/// A slice name, formatted at export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    /// `lockwait:<lock>`.
    LockWait(u32),
    /// `lockhold:<lock>`.
    LockHold(u32),
    /// `Choreographer#doFrame <id>`.
    DoFrame(u64),
    /// `DrawFrame <id>`.
    DrawFrame(u64),
    /// `binder transaction <pool>`.
    Binder(u32),
    /// `superpass:grant <blocker tid>`.
    Grant(TaskIdx),
}

impl Name {
    fn same_kind(&self, o: &Name) -> bool {
        match (self, o) {
            (Name::LockWait(a), Name::LockWait(b)) | (Name::LockHold(a), Name::LockHold(b)) => {
                a == b
            }
            (Name::DoFrame(_), Name::DoFrame(_))
            | (Name::DrawFrame(_), Name::DrawFrame(_))
            | (Name::Binder(_), Name::Binder(_))
            | (Name::Grant(_), Name::Grant(_)) => true,
            _ => false,
        }
    }
}

/// One recorded trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEv {
    /// `sched_switch` on `cpu`.
    Switch {
        /// Time.
        ts: u64,
        /// CPU.
        cpu: u32,
        /// Previous task (None = idle).
        prev: Option<TaskIdx>,
        /// Previous task's state (0 R, 1 S, 2 D).
        prev_state: i64,
        /// Previous task's kernel prio.
        prev_prio: i32,
        /// Next task (None = idle).
        next: Option<TaskIdx>,
        /// Next task's kernel prio.
        next_prio: i32,
    },
    /// `sched_waking` of `task`, emitted on `cpu`.
    Waking {
        /// Time.
        ts: u64,
        /// Waker's CPU.
        cpu: u32,
        /// Woken task.
        task: TaskIdx,
        /// Its prio.
        prio: i32,
        /// Target CPU.
        target: u32,
    },
    /// Slice begin on a thread.
    Begin {
        /// Time.
        ts: u64,
        /// Thread.
        task: TaskIdx,
        /// Name.
        name: Name,
    },
    /// Slice end on a thread.
    End {
        /// Time.
        ts: u64,
        /// Thread.
        task: TaskIdx,
        /// Which slice (matched by kind; see [`TraceLog::to_pftrace`]).
        name: Name,
    },
}

/// The events of one run.
#[derive(Clone, Debug, Default)]
pub struct TraceLog {
    /// Events in time order.
    pub events: Vec<TraceEv>,
}

impl TraceLog {
    /// Records a slice begin.
    pub fn begin(&mut self, ts: u64, task: TaskIdx, name: Name) {
        self.events.push(TraceEv::Begin { ts, task, name });
    }

    /// Records a slice end.
    pub fn end(&mut self, ts: u64, task: TaskIdx, name: Name) {
        self.events.push(TraceEv::End { ts, task, name });
    }

    /// Writes the trace as Perfetto protobuf bytes.
    ///
    /// Perfetto slices on a track must nest. Grant slices can overlap a thread's lock slices
    /// without nesting, so ending a slice that is not innermost ends the inner ones too and
    /// begins them again at the same instant (names kept).
    pub fn to_pftrace(&self, w: &World, processes: &[(i32, String)]) -> Vec<u8> {
        let mut tw = TraceWriter::new();
        for (pid, name) in processes {
            tw.process(*pid, name);
        }
        for t in &w.tasks {
            tw.thread(t.pid, t.tid, &t.name);
        }
        let comm = |t: Option<TaskIdx>| -> (&str, i32) {
            match t {
                None => ("swapper", 0),
                Some(i) => {
                    let t = &w.tasks[i as usize];
                    let n = &t.name;
                    let mut end = n.len().min(15);
                    while !n.is_char_boundary(end) {
                        end -= 1;
                    }
                    (&n[..end], t.tid)
                }
            }
        };
        let mut stacks: Vec<Vec<Name>> = vec![Vec::new(); w.tasks.len()];
        let fmt = |n: &Name| -> String {
            match *n {
                Name::LockWait(l) => format!("lockwait:{}", w.lock_names[l as usize]),
                Name::LockHold(l) => format!("lockhold:{}", w.lock_names[l as usize]),
                Name::DoFrame(id) => format!("Choreographer#doFrame {id}"),
                Name::DrawFrame(id) => format!("DrawFrame {id}"),
                Name::Binder(p) => format!("binder transaction {}", w.pools[p as usize].name),
                Name::Grant(t) => format!("superpass:grant {}", w.tasks[t as usize].tid),
            }
        };
        for e in &hoist_ends(&self.events, w.tasks.len()) {
            match *e {
                TraceEv::Switch {
                    ts,
                    cpu,
                    prev,
                    prev_state,
                    prev_prio,
                    next,
                    next_prio,
                } => {
                    let (pc, pt) = comm(prev);
                    let (nc, nt) = comm(next);
                    tw.sched_switch(ts, cpu, pc, pt, prev_prio, prev_state, nc, nt, next_prio);
                }
                TraceEv::Waking {
                    ts,
                    cpu,
                    task,
                    prio,
                    target,
                } => {
                    let (c, t) = comm(Some(task));
                    tw.sched_waking(ts, cpu, c, t, prio, target as i32);
                }
                TraceEv::Begin { ts, task, name } => {
                    stacks[task as usize].push(name);
                    tw.slice_begin(ts, w.tasks[task as usize].tid, &fmt(&name));
                }
                TraceEv::End { ts, task, name } => {
                    let tid = w.tasks[task as usize].tid;
                    let st = &mut stacks[task as usize];
                    let Some(pos) = st.iter().rposition(|n| n.same_kind(&name)) else {
                        continue;
                    };
                    let reopen: Vec<Name> = st.drain(pos + 1..).collect();
                    for _ in 0..reopen.len() {
                        tw.slice_end(ts, tid);
                    }
                    st.pop();
                    tw.slice_end(ts, tid);
                    for n in reopen {
                        tw.slice_begin(ts, tid, &fmt(&n));
                        st.push(n);
                    }
                }
            }
        }
        tw.finish()
    }
}

/// `events` with each end of a slice moved before the begins of the slices opened inside it at
/// the same instant, if every slice still open inside it began then: ending it after them
/// would cut each into a zero-length fragment and its re-begun rest (a critical thread's lock
/// wait that starts at the very instant its own grant ends).
fn hoist_ends(events: &[TraceEv], tasks: usize) -> Vec<TraceEv> {
    let mut out: Vec<TraceEv> = Vec::with_capacity(events.len());
    // Per task, its open slices: name, index of the begin in `out`, begin time.
    let mut open: Vec<Vec<(Name, usize, u64)>> = vec![Vec::new(); tasks];
    for e in events {
        match *e {
            TraceEv::Begin { ts, task, name } => {
                open[task as usize].push((name, out.len(), ts));
                out.push(*e);
            }
            TraceEv::End { ts, task, name } => {
                let st = &mut open[task as usize];
                let Some(pos) = st.iter().rposition(|o| o.0.same_kind(&name)) else {
                    out.push(*e);
                    continue;
                };
                st.remove(pos);
                let inner = &st[pos..];
                if inner.is_empty() || inner.iter().any(|o| o.2 != ts) {
                    out.push(*e);
                    continue;
                }
                let at = inner[0].1;
                out.insert(at, *e);
                for o in open.iter_mut().flatten() {
                    if o.1 >= at {
                        o.1 += 1;
                    }
                }
            }
            _ => out.push(*e),
        }
    }
    out
}
