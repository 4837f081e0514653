//! The simulator and the kernel module speak one protocol: every event the glue hands the
//! simulator's engine, passed through the module's path instead (raw hook arguments, decoded by
//! the same `Event::from_hook_*` the module's entry points call) into a second engine, gets the
//! same answer at every step.

use std::sync::{Arc, Mutex};
use superpass_core::{Answer, Engine, Event, NoObserver};
use superpass_sim::policy::superpass::{SuperPass, Watch};
use superpass_sim::sim::{RunOpts, Sim};
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

/// What the module's path saw: answers that boosted someone, and those that gave a woken
/// critical thread its own wake turn.
#[derive(Default)]
struct Seen {
    steps: usize,
    boosts: usize,
    wake_turns: usize,
}

/// The second engine, fed through the module's path as the simulator runs.
struct Shadow {
    e: Engine<NoObserver>,
    seen: Seen,
    mismatch: Option<String>,
}

impl Shadow {
    fn step(&mut self, now: u64, ev: &Event<'_>, want: Answer) {
        if self.mismatch.is_some() {
            return;
        }
        let got = self.e.handle(now, through_module_entry(*ev));
        let i = self.seen.steps;
        self.seen.steps += 1;
        if got != want {
            self.mismatch = Some(format!(
                "step {i} at {now} ns: {ev:?}: module {got:?}, simulator {want:?}"
            ));
            return;
        }
        if matches!(got, Answer::Boosted(_)) {
            self.seen.boosts += 1;
        }
        if let Event::WaiterWoken { tid, .. } = ev {
            if got.newly_boosted() == [*tid] && self.e.critical().contains(*tid) {
                self.seen.wake_turns += 1;
            }
        }
    }
}

fn replay(scenario: &str, seed: u64, seen: &mut Seen) {
    let sc = Scenario::builtin(scenario).unwrap();
    let shadow: Arc<Mutex<Option<Shadow>>> = Arc::new(Mutex::new(None));
    let feed = shadow.clone();
    let watch: Watch = Box::new(move |now, ev, want| {
        if let Some(s) = feed.lock().unwrap().as_mut() {
            s.step(now, ev, want);
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
    *shadow.lock().unwrap() = Some(Shadow {
        e,
        seen: Seen::default(),
        mismatch: None,
    });
    let _ = sim.run();
    let s = shadow.lock().unwrap().take().unwrap();
    if let Some(m) = s.mismatch {
        panic!("{scenario} seed {seed}: {m}");
    }
    s.e.check_invariants().unwrap();
    assert!(
        s.seen.steps > 10_000,
        "{scenario}: only {} events",
        s.seen.steps
    );
    seen.steps += s.seen.steps;
    seen.boosts += s.seen.boosts;
    seen.wake_turns += s.seen.wake_turns;
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
        replay(scenario, 3, &mut seen);
    }
    // The runs exercised the protocol's decisions, not just its no-ops: blockers boosted, and
    // woken critical threads given their wake turns.
    assert!(seen.boosts > 100, "only {} boosting answers", seen.boosts);
    assert!(seen.wake_turns > 10, "only {} wake turns", seen.wake_turns);
}
