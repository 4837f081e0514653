//! The simulator and the kernel module speak one protocol: every hook call the simulator makes
//! into the glue is made again through the module's path (lock events as the C probes' raw
//! arguments, decoded by the same `Event::from_hook_*` the module's entry points call) into a
//! second engine, against a platform that answers from the simulator's recording. At every
//! step the glue must ask that platform the same things in the same order (the same lookups,
//! kicks, moves, validations and published snapshots, and the same events with the same
//! answers from the engine), and the hook must return the same result.

use std::sync::{Arc, Mutex};
use superpass_core::platform::{Hook, Ran};
use superpass_core::{Answer, Engine, Event, NoObserver};
use superpass_sim::policy::superpass::{SuperPass, Watch};
use superpass_sim::sim::{RunOpts, Sim};
use superpass_sim::transcript::{Call, Replay};
use superpass_sim::Scenario;

/// The raw arguments the C probes pass for a lock event, decoded as the module decodes them.
fn through_module_entry(ev: Event<'_>) -> Event<'_> {
    match ev {
        Event::WaitStart {
            waiter,
            lock,
            kind,
            owner,
            cpu,
        } => Event::from_hook_wait_start(waiter, lock, kind as u32, owner.unwrap_or(0), cpu)
            .expect("a kind the hooks report"),
        Event::OwnerAcquired { lock, tid } => Event::from_hook_owner(lock, tid, true),
        Event::OwnerReleased { lock, tid } => Event::from_hook_owner(lock, tid, false),
        Event::ReaderAcquired { lock, tid } => Event::from_hook_reader(lock, tid, true),
        Event::ReaderReleased { lock, tid } => Event::from_hook_reader(lock, tid, false),
        other => other,
    }
}

/// What the module's path saw: hook calls, the platform calls they made, answers that boosted
/// someone, woken critical threads given their own wake turn, and placements (kicks, moves).
#[derive(Default)]
struct Seen {
    steps: usize,
    calls: usize,
    boosts: usize,
    wake_turns: usize,
    kicks: usize,
    moves: usize,
}

/// The second engine, fed through the module's path as the simulator runs.
struct Shadow {
    e: Engine<NoObserver>,
    seen: Seen,
    mismatch: Option<String>,
}

impl Shadow {
    fn step(&mut self, now: u64, hook: Hook<'_>, calls: &[Call], want: Ran) {
        if self.mismatch.is_some() {
            return;
        }
        let mut evs = [Event::PushBack; 2];
        let hook = match hook {
            Hook::LockEvent(ev) => Hook::LockEvent(through_module_entry(ev)),
            Hook::LockEvents(raw) => {
                assert!(raw.len() <= evs.len(), "{} events in one hook", raw.len());
                for (slot, &ev) in evs.iter_mut().zip(raw) {
                    *slot = through_module_entry(ev);
                }
                Hook::LockEvents(&evs[..raw.len()])
            }
            Hook::WaitStartSeen(ev, lock, writer, readers) => {
                Hook::WaitStartSeen(through_module_entry(ev), lock, writer, readers)
            }
            other => other,
        };
        let mut replay = Replay::new(calls);
        let got = hook.run(&mut self.e, &mut replay, now);
        replay.finish();
        let i = self.seen.steps;
        self.seen.steps += 1;
        self.seen.calls += calls.len();
        if let Some(m) = replay.mismatch {
            self.mismatch = Some(format!("step {i} at {now} ns: {hook:?}: {m}"));
            return;
        }
        if got != want {
            self.mismatch = Some(format!(
                "step {i} at {now} ns: {hook:?}: module {got:?}, simulator {want:?}"
            ));
            return;
        }
        for c in calls {
            match c {
                Call::Observe {
                    answer: Answer::Boosted(_),
                    ..
                } => self.seen.boosts += 1,
                Call::Kick { .. } => self.seen.kicks += 1,
                Call::MoveTo { .. } => self.seen.moves += 1,
                _ => {}
            }
        }
        // A woken critical thread's wake turn: the glue's first event, the wakeup, answered by
        // boosting the woken thread itself.
        if let Hook::LockEvent(Event::WaiterWoken { tid, .. }) = hook {
            let first = calls.iter().find_map(|c| match c {
                Call::Observe { answer, .. } => Some(*answer),
                _ => None,
            });
            let turn = first.is_some_and(|a| a.newly_boosted() == [tid]);
            if turn && self.e.critical().contains(tid) {
                self.seen.wake_turns += 1;
            }
        }
    }
}

/// Runs `scenario` with the module's path beside the simulator; the first difference, if any.
/// `tunables` changes the second engine's tunables first (none: as the simulator's).
fn replay(
    scenario: &str,
    seed: u64,
    seen: &mut Seen,
    tunables: impl FnOnce(&mut Engine<NoObserver>),
) -> Result<(), String> {
    let sc = Scenario::builtin(scenario).unwrap();
    let shadow: Arc<Mutex<Option<Shadow>>> = Arc::new(Mutex::new(None));
    let feed = shadow.clone();
    let watch: Watch = Box::new(move |now, hook, calls, want| {
        if let Some(s) = feed.lock().unwrap().as_mut() {
            s.step(now, hook, calls, want);
        }
    });
    let opts = RunOpts {
        trace: false,
        check_invariants: false,
        explain: false,
    };
    let sim = Sim::new(&sc, Box::new(SuperPass::watched(watch)), seed, 3.0, &opts);
    // Set up as the simulator's engine is, before the first event.
    let mut e = Engine::new(sim.w.rqs.len() as u32, NoObserver);
    e.set_cpu_capacities(&SuperPass::capacities(&sim.w));
    e.set_critical(0, &SuperPass::critical_set(&sim.w)).unwrap();
    e.set_enabled(0, true);
    tunables(&mut e);
    *shadow.lock().unwrap() = Some(Shadow {
        e,
        seen: Seen::default(),
        mismatch: None,
    });
    let _ = sim.run();
    let s = shadow.lock().unwrap().take().unwrap();
    if let Some(m) = s.mismatch {
        return Err(format!("{scenario} seed {seed}: {m}"));
    }
    s.e.check_invariants().unwrap();
    assert!(
        s.seen.steps > 10_000,
        "{scenario}: only {} events",
        s.seen.steps
    );
    seen.steps += s.seen.steps;
    seen.calls += s.seen.calls;
    seen.boosts += s.seen.boosts;
    seen.wake_turns += s.seen.wake_turns;
    seen.kicks += s.seen.kicks;
    seen.moves += s.seen.moves;
    Ok(())
}

#[test]
fn the_module_path_makes_the_simulators_decisions() {
    let mut seen = Seen::default();
    for scenario in [
        "scroll-120",
        "heavy-background",
        "rwsem-storm",
        "binder-heavy",
    ] {
        replay(scenario, 3, &mut seen, |_| {}).unwrap();
    }
    // The runs exercised the protocol's decisions, not just its no-ops: blockers boosted and
    // placed (kicks, moves), and woken critical threads given their wake turns.
    assert!(seen.boosts > 100, "only {} boosting answers", seen.boosts);
    assert!(seen.wake_turns > 10, "only {} wake turns", seen.wake_turns);
    assert!(seen.kicks > 100, "only {} kicks", seen.kicks);
    assert!(seen.moves > 0, "no move asked for");
    assert!(
        seen.calls > 2 * seen.steps,
        "{} platform calls in {} hook calls",
        seen.calls,
        seen.steps
    );
    eprintln!(
        "{} hook calls, {} platform calls (boosts {}, wake turns {}, kicks {}, moves {}): the same",
        seen.steps, seen.calls, seen.boosts, seen.wake_turns, seen.kicks, seen.moves
    );
}

#[test]
fn a_module_path_that_decides_otherwise_is_caught() {
    // The second engine with a smaller budget: the first grant it ends early must show up as
    // a different answer, published snapshot or platform call.
    let smaller_budget = |e: &mut Engine<NoObserver>| {
        let mut t = *e.tunables();
        t.budget_ns /= 4;
        e.set_tunables(0, t).unwrap();
    };
    let err = replay("heavy-background", 3, &mut Seen::default(), smaller_budget)
        .expect_err("an engine with other tunables went unnoticed");
    assert!(err.contains("step "), "{err}");
    eprintln!("caught: {err}");
}
