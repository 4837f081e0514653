//! Random scenarios under every policy: random platforms, lock families (kernel mutex, rwsem,
//! PI, hinted and plain futexes), thread priorities, cpusets, nested locks and binder calls.
//! Every run must finish without a panic (a pick that does not converge, an unlock of a lock
//! not held, a thread that never takes time) and with the invariants holding after every
//! event (no CPU idle while work waits, no lost wakeup, lock safety).

use superpass_sim::policy::{by_name, NAMES};
use superpass_sim::sim::{RunOpts, Sim};
use superpass_sim::Scenario;

/// splitmix64, so each case is reproducible from its number.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// A lock section: locks taken in increasing index order (so no deadlock), work inside, and
/// released in reverse.
fn section(g: &mut Gen, nlocks: u64, rwsem: &[bool]) -> String {
    let mut ls: Vec<u64> = (0..1 + g.below(2)).map(|_| g.below(nlocks)).collect();
    ls.sort_unstable();
    ls.dedup();
    let mut ops = Vec::new();
    for &l in &ls {
        let read = rwsem[l as usize] && g.chance(0.5);
        ops.push(format!(
            "{{ op = \"lock\", lock = \"l{l}\", read = {read} }}"
        ));
        ops.push(format!(
            "{{ op = \"compute\", us = [5, {}] }}",
            10 + g.below(800)
        ));
    }
    for &l in ls.iter().rev() {
        ops.push(format!("{{ op = \"unlock\", lock = \"l{l}\" }}"));
    }
    ops.join(", ")
}

fn scenario(case: u64) -> String {
    let mut g = Gen(case.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let clusters: Vec<(u64, u64)> = (0..1 + g.below(3))
        .map(|i| {
            (
                1 + g.below(3),
                [256, 512, 768, 1024][(i as usize + 1).min(3)],
            )
        })
        .collect();
    let ncpu: u64 = clusters.iter().map(|c| c.0).sum();
    let cl: Vec<String> = clusters
        .iter()
        .enumerate()
        .map(|(i, (n, c))| format!("{{ name = \"c{i}\", count = {n}, capacity = {c} }}"))
        .collect();
    let all: Vec<String> = (0..ncpu).map(|c| c.to_string()).collect();
    let little: Vec<String> = (0..clusters[0].0).map(|c| c.to_string()).collect();
    let placement = if g.chance(0.5) { "aosp" } else { "little" };
    let mut t = format!(
        "name = \"random-{case}\"\nwarmup_ms = 0.0\nvsync_hz = {}\nplacement = \"{placement}\"\n\
         [platform]\nclusters = [{}]\n\
         groups = [{{ name = \"top-app\", cpus = [{}] }}, {{ name = \"background\", cpus = [{}], background = true }}]\n\
         tick_ns = 4000000\nbase_slice_ns = 3000000\ncontext_switch_ns = {}\nmigration_ns = {}\n",
        [60, 90, 120][g.below(3) as usize],
        cl.join(", "),
        all.join(", "),
        little.join(", "),
        g.below(5000),
        g.below(20000),
    );
    let nlocks = 1 + g.below(4);
    let mut rwsem = Vec::new();
    for l in 0..nlocks {
        let (kind, owner) = match g.below(5) {
            0 => ("mutex", None),
            1 => ("rwsem", None),
            2 => ("futex", Some("pi")),
            3 => ("futex", Some("hinted")),
            _ => ("futex", Some("none")),
        };
        rwsem.push(kind == "rwsem");
        t += &format!("[[locks]]\nname = \"l{l}\"\nkind = \"{kind}\"\n");
        if let Some(o) = owner {
            t += &format!("owner = \"{o}\"\n");
        }
    }
    let binder = g.chance(0.5);
    let ui_sec = section(&mut g, nlocks, &rwsem);
    let call = if binder {
        ", { op = \"binder_call\", pool = \"svc\" }"
    } else {
        ""
    };
    let ui_rt = if g.chance(0.2) { "rt_prio = 1\n" } else { "" };
    let sync = g.chance(0.5);
    t += &format!(
        "[[threads]]\nname = \"ui\"\nprocess = \"app\"\nnice = -10\nrole = \"ui\"\nprefer_big = true\n{ui_rt}\
         program = [{{ op = \"wait_vsync\" }}, {{ op = \"do_frame_begin\" }}, {{ op = \"compute\", us = [100, 2000] }}, \
         {{ op = \"branch\", p = 0.5, skip = {} }}, {ui_sec}{call}, {{ op = \"do_frame_end\" }}, {{ op = \"signal\", target = \"rt\", sync = {sync} }}]\n",
        ui_sec.matches("op =").count() + usize::from(binder),
    );
    let rt_sec = section(&mut g, nlocks, &rwsem);
    t += &format!(
        "[[threads]]\nname = \"rt\"\nprocess = \"app\"\nnice = -10\nrole = \"render\"\n\
         program = [{{ op = \"wait\" }}, {{ op = \"draw_frame_begin\" }}, {rt_sec}, {{ op = \"compute\", us = [100, 1500] }}, {{ op = \"draw_frame_end\" }}]\n"
    );
    if binder {
        let srv = section(&mut g, nlocks, &rwsem);
        t += &format!(
            "[[threads]]\nname = \"srv\"\nprocess = \"server\"\ncount = {}\npool = \"svc\"\n\
             program = [{{ op = \"binder_serve\" }}, {srv}, {{ op = \"binder_reply\" }}]\n",
            1 + g.below(2)
        );
    }
    for w in 0..2 + g.below(6) {
        let group = if g.chance(0.5) {
            "background"
        } else {
            "top-app"
        };
        let (nice, rt) = match g.below(6) {
            0 => (0, 1 + g.below(3)),
            1 => (19, 0),
            2 => (0, 0),
            _ => (10, 0),
        };
        let sec = section(&mut g, nlocks, &rwsem);
        let process = if g.chance(0.6) { "app" } else { "other" };
        t += &format!(
            "[[threads]]\nname = \"w{w}\"\nprocess = \"{process}\"\ngroup = \"{group}\"\nnice = {nice}\nrt_prio = {rt}\n\
             count = {}\nstart_us = [0, 3000]\n\
             program = [{{ op = \"sleep\", us = {{ exp = {} }} }}, {{ op = \"compute\", us = [10, {}] }}, {sec}]\n",
            1 + g.below(3),
            100 + g.below(5000),
            50 + g.below(4000),
        );
    }
    t
}

#[test]
fn random_scenarios_run_clean_under_every_policy() {
    let checked = RunOpts {
        trace: false,
        check_invariants: true,
        explain: true,
    };
    let mut events = 0;
    for case in 0..150 {
        let text = scenario(case);
        let sc = Scenario::from_toml(&text)
            .unwrap_or_else(|e| panic!("case {case} does not parse: {e}\n{text}"));
        for p in NAMES {
            let out = Sim::new(&sc, by_name(p).unwrap(), case + 1, 1.0, &checked).run();
            assert!(
                out.violations.is_empty(),
                "case {case} under {p}: {:#?}\n{text}",
                &out.violations[..out.violations.len().min(5)]
            );
            assert!(
                out.res.events > 100,
                "case {case} under {p}: stalled\n{text}"
            );
            events += out.res.events;
        }
    }
    assert!(events > 100_000, "only {events} events in all");
}
