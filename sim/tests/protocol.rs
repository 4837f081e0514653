//! The simulator and the kernel module speak one protocol: replaying the events of a simulated
//! run through the module's path (raw hook arguments, decoded by the same `Event::from_hook_*`
//! the module's entry points call, into a fresh engine, with the holders the module reports
//! before each rwsem wait) gives the same answer at every step.

use std::sync::{Arc, Mutex};
use superpass_core::{Answer, Engine, Event, NoObserver};
use superpass_sim::policy::superpass::{EventLog, Step, SuperPass};
use superpass_sim::sim::{RunOpts, Sim};
use superpass_sim::Scenario;

/// The raw arguments the C probes pass for a lock event, decoded as the module decodes them.
fn through_module_entry(ev: Event<'static>) -> Event<'static> {
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

/// What a replay saw: answers that boosted someone, and those that gave a woken critical
/// thread its own wake turn.
#[derive(Default)]
struct Seen {
    boosts: usize,
    wake_turns: usize,
}

fn replay(scenario: &str, seed: u64, seen: &mut Seen) {
    let sc = Scenario::builtin(scenario).unwrap();
    let log: EventLog = Arc::new(Mutex::new(Vec::new()));
    let opts = RunOpts {
        trace: false,
        check_invariants: false,
        explain: false,
    };
    let out = Sim::new(
        &sc,
        Box::new(SuperPass::recording(log.clone())),
        seed,
        3.0,
        &opts,
    )
    .run();
    let mut e = Engine::new(out.world.rqs.len() as u32, NoObserver);
    e.set_cpu_capacities(&SuperPass::capacities(&out.world));
    e.set_critical(0, &SuperPass::critical_set(&out.world))
        .unwrap();
    e.set_enabled(0, true);
    let log = log.lock().unwrap();
    for (i, (now, step)) in log.iter().enumerate() {
        let (now, ev, want) = match step {
            Step::Event(ev, want) => (*now, *ev, *want),
            Step::LockSeen {
                lock,
                owner,
                readers,
            } => {
                let ev = Event::LockSeen {
                    lock: *lock,
                    owner: *owner,
                    readers,
                };
                assert_eq!(e.handle(*now, ev), Answer::None);
                continue;
            }
            Step::AsleepWait {
                waiter,
                lock,
                kind,
                owner,
                readers,
                answer,
            } => {
                let ev = Event::AsleepWait {
                    waiter: *waiter,
                    lock: *lock,
                    kind: *kind,
                    owner: *owner,
                    readers,
                };
                let got = e.handle(*now, ev);
                assert_eq!(got, *answer, "{scenario} seed {seed}: step {i} at {now} ns");
                continue;
            }
        };
        let got = e.handle(now, through_module_entry(ev));
        assert_eq!(
            got, want,
            "{scenario} seed {seed}: step {i} at {now} ns: {ev:?}"
        );
        if matches!(got, Answer::Boosted(_)) {
            seen.boosts += 1;
        }
        if let Event::WaiterWoken { tid, .. } = ev {
            if got.newly_boosted() == [tid] && e.critical().contains(tid) {
                seen.wake_turns += 1;
            }
        }
    }
    e.check_invariants().unwrap();
    assert!(log.len() > 10_000, "{scenario}: only {} events", log.len());
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
