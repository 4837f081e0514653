//! Criterion benchmarks of the engine's hot paths (see docs/performance.md).
//!
//! Time stands still during a measurement, so the boosted blocker stays boosted (within its
//! slice, budget and window) however many iterations criterion runs: the steady state.

mod common;

use common::HOT_PATHS;
use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hotpath");
    for hp in HOT_PATHS {
        let mut e = (hp.setup)();
        let now = 10u64;
        g.bench_function(hp.name, |b| {
            b.iter(|| {
                (hp.op)(&mut e, now);
                if let Some(u) = hp.undo {
                    u(&mut e, now);
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
