//! What the glue asked a platform during one hook call, and a platform that answers from it.
//!
//! [`Recording`] wraps a platform and writes down every call the glue makes to it, with the
//! answer. [`Replay`] is a platform that answers those calls again, in order, to a second
//! run of the same hook, and notes the first call that differs from the recording: a
//! different question, different arguments, a different published snapshot, or a different
//! event handed to the engine. The protocol tests drive the simulator with a [`Recording`]
//! and the module's decoding of the same hooks with a [`Replay`].

use superpass_core::platform::{CurrentWait, Handle, Platform, PushView, WaitRecord};
use superpass_core::tunables::READER_TABLE_WAYS;
use superpass_core::{Answer, Cpu, Event, Nanos, Published, Running, Tid, MAX_CPUS};

/// One call the glue made to its platform, with the platform's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// [`Platform::lookup`].
    Lookup {
        /// The TID asked for.
        tid: Tid,
        /// The handle found.
        found: Option<Handle>,
    },
    /// [`Platform::queued_cpu`].
    QueuedCpu {
        /// The task.
        task: Handle,
        /// Its CPU.
        cpu: Option<Cpu>,
    },
    /// [`Platform::home_cpu`].
    HomeCpu {
        /// The task.
        task: Handle,
        /// The CPU its record names.
        cpu: Option<Cpu>,
    },
    /// [`Platform::curr`].
    Curr {
        /// The CPU.
        cpu: Cpu,
        /// The task running there.
        tid: Tid,
    },
    /// [`Platform::push_view`].
    PushView {
        /// The task.
        task: Handle,
        /// Its CPU.
        src: Cpu,
        /// What the platform saw.
        view: PushView,
        /// The fair tasks it wrote (`view.n` of them).
        others: Vec<Running>,
    },
    /// [`Platform::move_to`].
    MoveTo {
        /// The task.
        task: Handle,
        /// Where to.
        dst: Cpu,
        /// Where it should be now.
        expect: Cpu,
        /// Whether the request was made.
        made: bool,
    },
    /// [`Platform::kick`].
    Kick {
        /// The CPU.
        cpu: Cpu,
    },
    /// [`Platform::wait_record`].
    WaitRecord {
        /// The task.
        tid: Tid,
        /// Its record.
        record: Option<WaitRecord>,
        /// The readers written.
        readers: [Tid; READER_TABLE_WAYS],
    },
    /// [`Platform::publish`].
    Publish(Published),
    /// [`Platform::queued_on`].
    QueuedOn {
        /// The task.
        task: Handle,
        /// The CPU.
        cpu: Cpu,
        /// The answer.
        yes: bool,
    },
    /// [`Platform::pickable`].
    Pickable {
        /// The task.
        task: Handle,
        /// The CPU.
        cpu: Cpu,
        /// The answer.
        yes: bool,
    },
    /// [`Platform::current_wait`].
    CurrentWait(CurrentWait),
    /// [`Platform::observe`]: an event the glue handed the engine (as `{:?}`) and the answer.
    Observe {
        /// The event.
        ev: String,
        /// The engine's answer.
        answer: Answer,
    },
}

/// A platform that passes every call on to `inner` and writes it down in `calls`.
pub struct Recording<'p, P> {
    /// The platform answering.
    pub inner: &'p mut P,
    /// The calls so far, oldest first.
    pub calls: Vec<Call>,
}

impl<'p, P: Platform> Recording<'p, P> {
    /// Records the calls made to `inner`.
    pub fn new(inner: &'p mut P) -> Self {
        Self {
            inner,
            calls: Vec::new(),
        }
    }
}

impl<P: Platform> Platform for Recording<'_, P> {
    fn lookup(&mut self, tid: Tid) -> Option<Handle> {
        let found = self.inner.lookup(tid);
        self.calls.push(Call::Lookup { tid, found });
        found
    }

    fn queued_cpu(&mut self, task: Handle) -> Option<Cpu> {
        let cpu = self.inner.queued_cpu(task);
        self.calls.push(Call::QueuedCpu { task, cpu });
        cpu
    }

    fn home_cpu(&mut self, task: Handle) -> Option<Cpu> {
        let cpu = self.inner.home_cpu(task);
        self.calls.push(Call::HomeCpu { task, cpu });
        cpu
    }

    fn curr(&mut self, cpu: Cpu) -> Tid {
        let tid = self.inner.curr(cpu);
        self.calls.push(Call::Curr { cpu, tid });
        tid
    }

    fn push_view(&mut self, task: Handle, src: Cpu, others: &mut [Running; MAX_CPUS]) -> PushView {
        let view = self.inner.push_view(task, src, others);
        let written = others.get(..view.n).unwrap_or(others);
        self.calls.push(Call::PushView {
            task,
            src,
            view,
            others: written.to_vec(),
        });
        view
    }

    fn move_to(&mut self, task: Handle, dst: Cpu, expect: Cpu) -> bool {
        let made = self.inner.move_to(task, dst, expect);
        self.calls.push(Call::MoveTo {
            task,
            dst,
            expect,
            made,
        });
        made
    }

    fn kick(&mut self, cpu: Cpu) {
        self.inner.kick(cpu);
        self.calls.push(Call::Kick { cpu });
    }

    fn wait_record(
        &mut self,
        tid: Tid,
        readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord> {
        let record = self.inner.wait_record(tid, readers);
        self.calls.push(Call::WaitRecord {
            tid,
            record,
            readers: *readers,
        });
        record
    }

    fn publish(&mut self, published: Published) {
        self.inner.publish(published);
        self.calls.push(Call::Publish(published));
    }

    fn queued_on(&mut self, task: Handle, cpu: Cpu) -> bool {
        let yes = self.inner.queued_on(task, cpu);
        self.calls.push(Call::QueuedOn { task, cpu, yes });
        yes
    }

    fn pickable(&mut self, task: Handle, cpu: Cpu) -> bool {
        let yes = self.inner.pickable(task, cpu);
        self.calls.push(Call::Pickable { task, cpu, yes });
        yes
    }

    fn current_wait(&mut self) -> CurrentWait {
        let w = self.inner.current_wait();
        self.calls.push(Call::CurrentWait(w));
        w
    }

    fn observe(&mut self, now: Nanos, ev: &Event<'_>, answer: Answer) {
        self.inner.observe(now, ev, answer);
        self.calls.push(Call::Observe {
            ev: format!("{ev:?}"),
            answer,
        });
    }
}

/// A platform that answers from a recording, in order, and notes the first call that differs.
pub struct Replay<'c> {
    calls: &'c [Call],
    next: usize,
    /// The first difference from the recording, if any.
    pub mismatch: Option<String>,
}

impl<'c> Replay<'c> {
    /// Answers from `calls`.
    pub fn new(calls: &'c [Call]) -> Self {
        Self {
            calls,
            next: 0,
            mismatch: None,
        }
    }

    /// Notes a difference unless one was noted already.
    fn differs(&mut self, why: String) {
        if self.mismatch.is_none() {
            self.mismatch = Some(why);
        }
    }

    /// The recorded call this one must repeat, if its question (`same`) is the recorded one's.
    fn take(&mut self, asked: &str, same: impl Fn(&Call) -> bool) -> Option<&'c Call> {
        let i = self.next;
        self.next += 1;
        match self.calls.get(i) {
            Some(c) if same(c) => Some(c),
            Some(c) => {
                self.differs(format!("call {i}: asked {asked}, the recording has {c:?}"));
                None
            }
            None => {
                self.differs(format!(
                    "call {i}: asked {asked} after the recording's {} calls",
                    self.calls.len()
                ));
                None
            }
        }
    }

    /// The recorded yes or no of a question whose recorded call `same` accepts.
    fn yes(&mut self, asked: &str, same: impl Fn(&Call) -> bool) -> bool {
        matches!(
            self.take(asked, same),
            Some(
                Call::MoveTo { made: true, .. }
                    | Call::QueuedOn { yes: true, .. }
                    | Call::Pickable { yes: true, .. }
            )
        )
    }

    /// Notes a difference if the recording holds calls that were not made again.
    pub fn finish(&mut self) {
        if let Some(c) = self.calls.get(self.next) {
            let (i, n) = (self.next, self.calls.len());
            self.differs(format!("call {i} of {n} not made: {c:?}"));
        }
    }
}

impl Platform for Replay<'_> {
    fn lookup(&mut self, tid: Tid) -> Option<Handle> {
        match self.take(
            &format!("lookup({tid})"),
            |c| matches!(c, Call::Lookup { tid: t, .. } if *t == tid),
        ) {
            Some(Call::Lookup { found, .. }) => *found,
            _ => None,
        }
    }

    fn queued_cpu(&mut self, task: Handle) -> Option<Cpu> {
        let asked = format!("queued_cpu({task})");
        match self.take(
            &asked,
            |c| matches!(c, Call::QueuedCpu { task: t, .. } if *t == task),
        ) {
            Some(Call::QueuedCpu { cpu, .. }) => *cpu,
            _ => None,
        }
    }

    fn home_cpu(&mut self, task: Handle) -> Option<Cpu> {
        let asked = format!("home_cpu({task})");
        match self.take(
            &asked,
            |c| matches!(c, Call::HomeCpu { task: t, .. } if *t == task),
        ) {
            Some(Call::HomeCpu { cpu, .. }) => *cpu,
            _ => None,
        }
    }

    fn curr(&mut self, cpu: Cpu) -> Tid {
        match self.take(
            &format!("curr({cpu})"),
            |c| matches!(c, Call::Curr { cpu: k, .. } if *k == cpu),
        ) {
            Some(Call::Curr { tid, .. }) => *tid,
            _ => 0,
        }
    }

    fn push_view(&mut self, task: Handle, src: Cpu, others: &mut [Running; MAX_CPUS]) -> PushView {
        let asked = format!("push_view({task}, {src})");
        let same = |c: &Call| matches!(c, Call::PushView { task: t, src: s, .. } if *t == task && *s == src);
        match self.take(&asked, same) {
            Some(Call::PushView {
                view, others: o, ..
            }) => {
                for (slot, r) in others.iter_mut().zip(o) {
                    *slot = *r;
                }
                *view
            }
            _ => PushView::default(),
        }
    }

    fn move_to(&mut self, task: Handle, dst: Cpu, expect: Cpu) -> bool {
        let asked = format!("move_to({task}, {dst}, {expect})");
        self.yes(&asked, |c| {
            matches!(c, Call::MoveTo { task: t, dst: d, expect: x, .. }
                if *t == task && *d == dst && *x == expect)
        })
    }

    fn kick(&mut self, cpu: Cpu) {
        self.take(&format!("kick({cpu})"), |c| *c == Call::Kick { cpu });
    }

    fn wait_record(
        &mut self,
        tid: Tid,
        readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord> {
        let asked = format!("wait_record({tid})");
        match self.take(
            &asked,
            |c| matches!(c, Call::WaitRecord { tid: t, .. } if *t == tid),
        ) {
            Some(Call::WaitRecord {
                record, readers: r, ..
            }) => {
                *readers = *r;
                *record
            }
            _ => None,
        }
    }

    fn publish(&mut self, published: Published) {
        self.take(&format!("publish({published:?})"), |c| {
            *c == Call::Publish(published)
        });
    }

    fn queued_on(&mut self, task: Handle, cpu: Cpu) -> bool {
        let asked = format!("queued_on({task}, {cpu})");
        self.yes(
            &asked,
            |c| matches!(c, Call::QueuedOn { task: t, cpu: k, .. } if *t == task && *k == cpu),
        )
    }

    fn pickable(&mut self, task: Handle, cpu: Cpu) -> bool {
        let asked = format!("pickable({task}, {cpu})");
        self.yes(
            &asked,
            |c| matches!(c, Call::Pickable { task: t, cpu: k, .. } if *t == task && *k == cpu),
        )
    }

    fn current_wait(&mut self) -> CurrentWait {
        match self.take("current_wait()", |c| matches!(c, Call::CurrentWait(_))) {
            Some(Call::CurrentWait(w)) => *w,
            _ => CurrentWait::default(),
        }
    }

    fn observe(&mut self, _now: Nanos, ev: &Event<'_>, answer: Answer) {
        let ev = format!("{ev:?}");
        let asked = format!("the engine's {answer:?} to {ev}");
        self.take(&asked, |c| {
            *c == Call::Observe {
                ev: ev.clone(),
                answer,
            }
        });
    }
}
