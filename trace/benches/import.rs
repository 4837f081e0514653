//! Import throughput on a ~15 MB synthetic Perfetto trace (events/s, and time per trace).
//!
//! Run: `cargo bench -p superpass-trace --bench import`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use superpass_trace::{events::Events, import, model, perfetto, synth};

fn bench(c: &mut Criterion) {
    let (trace, events) = synth::contended_trace(15 << 20, 2);
    eprintln!(
        "synthetic trace: {:.1} MB, {events} events",
        trace.len() as f64 / (1 << 20) as f64
    );
    let mut g = c.benchmark_group("import_15MB");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut ev = Events::default();
            perfetto::decode(&trace, &mut ev).unwrap();
            ev
        })
    });
    g.bench_function("decode+model", |b| {
        b.iter(|| {
            let mut ev = Events::default();
            perfetto::decode(&trace, &mut ev).unwrap();
            model::build(ev)
        })
    });
    g.bench_function("full_import_to_file", |b| {
        let dir = std::env::temp_dir().join(format!("sp-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("bench.pftrace");
        let output = dir.join("bench.db");
        std::fs::write(&input, &trace).unwrap();
        b.iter(|| import::import_file(&input, &output).unwrap());
        std::fs::remove_dir_all(&dir).ok();
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
