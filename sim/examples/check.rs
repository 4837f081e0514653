//! Runs one scenario/policy with invariant checks and prints violations.
use superpass_sim::sim::{RunOpts, Sim};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let sc = superpass_sim::Scenario::builtin(&a[1]).unwrap();
    let p = superpass_sim::policy::by_name(&a[2]).unwrap();
    let secs: f64 = a.get(3).map_or(1.0, |s| s.parse().unwrap());
    let o = RunOpts {
        trace: false,
        check_invariants: true,
    };
    let out = Sim::new(&sc, p, 1, secs, &o).run();
    println!(
        "frames {} blockings {} events {} stats {:?}",
        out.res.frames,
        out.res.blocking.len(),
        out.res.events,
        out.res.policy_stats
    );
    let s = out.res.summary();
    println!("{s:?}");
    for v in out.violations.iter().take(20) {
        println!("{v}");
    }
    for t in &out.world.tasks {
        println!(
            "{:16} {:?} on_rq={} cpu={} blocked_on={:?} held={:?} eff={:?} rem={} pc={}",
            t.name, t.state, t.on_rq, t.cpu, t.blocked_on, t.held, t.eff, t.remaining, t.pc
        );
    }
    for (c, rq) in out.world.rqs.iter().enumerate() {
        println!(
            "cpu{c} curr={:?} donor={:?} fair={:?} rt={:?} debt={} last={}",
            rq.curr, rq.donor, rq.fair, rq.rt, rq.debt, rq.last_update
        );
    }
}
