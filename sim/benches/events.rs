//! Simulated events per second on one core, and the wall time of `compare` on the default
//! scenario (scroll-120, 10 simulated s, 5 seeds, every policy).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use superpass_sim::compare::compare;
use superpass_sim::{run, Policy, Scenario};

fn events_per_second(c: &mut Criterion) {
    let mut g = c.benchmark_group("events");
    g.sample_size(10);
    for (scenario, policy) in [
        ("scroll-120", "default"),
        ("scroll-120", "superpass"),
        ("rwsem-storm", "superpass"),
    ] {
        let sc = Scenario::builtin(scenario).unwrap();
        let p = Policy::parse(policy).unwrap();
        let n = run(&sc, p, 1, 5.0).events;
        g.throughput(Throughput::Elements(n));
        g.bench_function(format!("{scenario}/{policy}/5s"), |b| {
            b.iter(|| run(&sc, p, 1, 5.0))
        });
    }
    g.finish();
}

fn compare_wall_time(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare");
    g.sample_size(10);
    let sc = Scenario::builtin("scroll-120").unwrap();
    let pols: Vec<Policy> = Policy::all().collect();
    g.bench_function("scroll-120/10s/5seeds/1job", |b| {
        b.iter(|| compare(&sc, &pols, 10.0, 5, 1))
    });
    g.bench_function("scroll-120/10s/5seeds/2jobs", |b| {
        b.iter(|| compare(&sc, &pols, 10.0, 5, 2))
    });
    g.finish();
}

criterion_group!(benches, events_per_second, compare_wall_time);
criterion_main!(benches);
