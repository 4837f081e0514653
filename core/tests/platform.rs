//! The glue both platforms run (`superpass_core::platform`), driven through a scripted platform
//! that records every call the glue makes to it.

use superpass_core::platform::{self, CurrentWait, Handle, Platform, PushView, WaitRecord};
use superpass_core::tunables::READER_TABLE_WAYS;
use superpass_core::{
    Answer, Engine, Event, LockKind, Nanos, NoObserver, Published, Role, Running, Tid, MAX_CPUS,
};

const MS: Nanos = 1_000_000;
const L1: u64 = 0xffff_8880_0000_1000;
const L2: u64 = 0xffff_8880_0000_2000;

/// One call the glue made to the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Lookup(Tid),
    QueuedCpu(Tid),
    HomeCpu(Tid),
    Curr(u32),
    PushView(Tid),
    MoveTo(Tid, u32),
    Kick(u32),
    WaitRecord(Tid),
    Publish,
    QueuedOn(Tid, u32),
    Pickable(Tid, u32),
    CurrentWait,
}

/// A task of the scripted kernel.
#[derive(Clone, Copy, Default)]
struct Task {
    tid: Tid,
    /// The CPU whose runqueue holds it, if it is queued.
    queued: Option<u32>,
    /// Whether a pick may run it where it is queued.
    pickable: bool,
    /// The lock wait its record holds: (lock, kind, owner).
    wait: Option<(u64, LockKind, Tid)>,
}

/// A kernel of a few tasks, with the task running on each CPU; every call is recorded.
#[derive(Default)]
struct Scripted {
    tasks: Vec<Task>,
    curr: [Tid; 2],
    calls: Vec<Call>,
    events: Vec<String>,
}

impl Scripted {
    fn with(tasks: &[Task]) -> Self {
        Self {
            tasks: tasks.to_vec(),
            ..Self::default()
        }
    }

    /// A task's handle: its index plus one.
    fn task(&self, h: Handle) -> Task {
        self.tasks[h as usize - 1]
    }

    fn tid(&self, h: Handle) -> Tid {
        self.task(h).tid
    }

    fn handle_of(&self, tid: Tid) -> Handle {
        self.tasks.iter().position(|t| t.tid == tid).unwrap() as Handle + 1
    }
}

impl Platform for Scripted {
    fn lookup(&mut self, tid: Tid) -> Option<Handle> {
        self.calls.push(Call::Lookup(tid));
        let i = self.tasks.iter().position(|t| t.tid == tid)?;
        Some(i as Handle + 1)
    }

    fn queued_cpu(&mut self, task: Handle) -> Option<u32> {
        self.calls.push(Call::QueuedCpu(self.tid(task)));
        self.task(task).queued
    }

    fn home_cpu(&mut self, task: Handle) -> Option<u32> {
        self.calls.push(Call::HomeCpu(self.tid(task)));
        Some(self.task(task).queued.unwrap_or(0))
    }

    fn curr(&mut self, cpu: u32) -> Tid {
        self.calls.push(Call::Curr(cpu));
        self.curr[cpu as usize]
    }

    fn push_view(
        &mut self,
        task: Handle,
        _src: u32,
        _others: &mut [Running; MAX_CPUS],
    ) -> PushView {
        self.calls.push(Call::PushView(self.tid(task)));
        // No idle CPU, nothing running the push could displace: the engine keeps it in place.
        PushView::default()
    }

    fn move_to(&mut self, task: Handle, dst: u32, _expect: u32) -> bool {
        self.calls.push(Call::MoveTo(self.tid(task), dst));
        true
    }

    fn kick(&mut self, cpu: u32) {
        self.calls.push(Call::Kick(cpu));
    }

    fn wait_record(
        &mut self,
        tid: Tid,
        _readers: &mut [Tid; READER_TABLE_WAYS],
    ) -> Option<WaitRecord> {
        self.calls.push(Call::WaitRecord(tid));
        let t = self.tasks.iter().find(|t| t.tid == tid)?;
        let (lock, kind, owner) = t.wait?;
        Some(WaitRecord {
            lock,
            kind,
            owner,
            readers: 0,
        })
    }

    fn publish(&mut self, _published: Published) {
        self.calls.push(Call::Publish);
    }

    fn queued_on(&mut self, task: Handle, cpu: u32) -> bool {
        self.calls.push(Call::QueuedOn(self.tid(task), cpu));
        self.task(task).queued == Some(cpu)
    }

    fn pickable(&mut self, task: Handle, cpu: u32) -> bool {
        self.calls.push(Call::Pickable(self.tid(task), cpu));
        let t = self.task(task);
        t.queued == Some(cpu) && t.pickable
    }

    fn current_wait(&mut self) -> CurrentWait {
        self.calls.push(Call::CurrentWait);
        CurrentWait::default()
    }

    fn observe(&mut self, _now: Nanos, ev: &Event<'_>, answer: Answer) {
        self.events.push(format!("{ev:?} -> {answer:?}"));
    }
}

/// Two CPUs, critical thread 100.
fn engine() -> Engine<NoObserver> {
    let mut e = Engine::new(2, NoObserver);
    e.set_enabled(0, true);
    e.add_critical(0, 100, Role::Ui).unwrap();
    e
}

/// Critical thread 100, on CPU 0, starts waiting on mutex `L1` owned by `owner`.
fn wait_for(owner: Tid) -> Event<'static> {
    Event::WaitStart {
        waiter: 100,
        lock: L1,
        kind: LockKind::Mutex,
        owner: Some(owner),
        cpu: 0,
    }
}

/// Critical thread 100 starts waiting, at 1 ms, on blocker 200, queued on CPU 1 where 300 runs.
fn waiting_on_queued_200() -> (Engine<NoObserver>, Scripted) {
    let mut e = engine();
    let mut k = Scripted::with(&[Task {
        tid: 200,
        queued: Some(1),
        pickable: true,
        wait: None,
    }]);
    k.curr = [100, 300];
    platform::lock_event(&mut e, &mut k, MS, wait_for(200));
    (e, k)
}

#[test]
fn a_blocker_boosted_while_queued_is_named_offered_a_push_and_its_cpu_kicked() {
    let (mut e, mut k) = waiting_on_queued_200();
    assert_eq!(
        k.calls,
        [
            Call::Lookup(200),
            Call::QueuedCpu(200),
            Call::PushView(200),
            Call::Curr(1),
            Call::Kick(1),
            Call::Publish,
            Call::WaitRecord(200),
        ],
        "{:#?}",
        k.events
    );
    // Named, so that CPU 1's pick gets the platform's task back.
    let h = k.handle_of(200);
    k.calls.clear();
    let picked = platform::pick(&mut e, &mut k, 2 * MS, 1, 300, None);
    assert_eq!(picked.task, Some((200, h)), "{:#?}", k.events);
    assert!(k.calls.contains(&Call::Pickable(200, 1)));
}

#[test]
fn a_blocker_asleep_in_a_recorded_wait_has_that_wait_followed_to_its_holder() {
    let mut e = engine();
    let mut k = Scripted::with(&[
        Task {
            tid: 200,
            queued: None,
            pickable: false,
            wait: Some((L2, LockKind::Mutex, 300)),
        },
        Task {
            tid: 300,
            queued: Some(1),
            pickable: true,
            wait: None,
        },
    ]);
    k.curr = [100, 400];
    platform::lock_event(&mut e, &mut k, MS, wait_for(200));
    // 200 sleeps in a wait no probe reported: the record names 300, which is boosted in turn,
    // placed where it is queued, and its own record read.
    let at = |c: Call| k.calls.iter().position(|&x| x == c);
    let record = at(Call::WaitRecord(200)).expect("200's record read");
    let publish = at(Call::Publish).expect("lanes published");
    assert!(
        publish < record,
        "the lanes go out before the record is read"
    );
    let holder = at(Call::Lookup(300)).expect("the record's holder is looked up");
    assert!(record < holder);
    assert!(k.calls.contains(&Call::Kick(1)), "{:#?}", k.events);
    assert!(k.calls.contains(&Call::WaitRecord(300)));
}

#[test]
fn a_stale_pick_is_dropped_and_a_task_that_moved_is_placed_where_it_is_queued() {
    let (mut e, mut k) = waiting_on_queued_200();
    // A load balance moved 200 to CPU 0 before its enqueue there could be reported.
    k.tasks[0].queued = Some(0);
    k.calls.clear();
    let picked = platform::pick(&mut e, &mut k, 2 * MS, 1, 300, None);
    assert_eq!(picked.task, None, "{:#?}", k.events);
    assert!(k.calls.contains(&Call::Pickable(200, 1)));
    // CPU 0's next pick finds it there.
    let picked = platform::pick(&mut e, &mut k, 2 * MS, 0, 0, None);
    assert_eq!(
        picked.task,
        Some((200, k.handle_of(200))),
        "{:#?}",
        k.events
    );
}

#[test]
fn a_pick_on_a_cpu_without_work_asks_the_platform_nothing_about_tasks() {
    let mut e = engine();
    let mut k = Scripted::with(&[]);
    let picked = platform::pick(&mut e, &mut k, MS, 0, 300, None);
    assert_eq!(picked, platform::Picked::default());
    assert_eq!(k.calls, [Call::CurrentWait]);
}
