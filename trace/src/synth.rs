//! Synthetic traces for benchmarks and smoke tests: many threads contending on locks.

use crate::writer::TraceWriter;

/// Builds a Perfetto trace of about `target_bytes` bytes: `cpus` CPUs switching among 64
/// threads, with wakings, and lockwait/lockhold atrace markers on a third of the switches.
/// Returns the bytes and the number of events written.
pub fn contended_trace(target_bytes: usize, cpus: u32) -> (Vec<u8>, u64) {
    let mut w = TraceWriter::new();
    let threads: Vec<i32> = (1000..1064).collect();
    w.process(1000, "bench");
    for &t in &threads {
        w.thread(1000, t, &format!("worker-{t}"));
    }
    // A fixed LCG keeps the trace identical run to run.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    let mut current: Vec<i32> = vec![0; cpus as usize];
    let mut ts: u64 = 1_000_000;
    let mut events = 0u64;
    // Flushed bundles reach the output as they fill; check the size every so often.
    while w.len() < target_bytes {
        for cpu in 0..cpus {
            ts += 1_000 + rnd(20_000);
            let prev = current[cpu as usize];
            let next = threads[rnd(threads.len() as u64) as usize];
            if next == prev || current.contains(&next) {
                continue;
            }
            let woken = threads[rnd(threads.len() as u64) as usize];
            if !current.contains(&woken) {
                w.sched_waking(ts - 500, cpu, "worker", woken, 120, cpu as i32);
                events += 1;
            }
            let state = [0x100, 1, 2][rnd(3) as usize];
            let prev_name = if prev == 0 { "swapper" } else { "worker" };
            w.sched_switch(ts, cpu, prev_name, prev, 120, state, "worker", next, 120);
            events += 1;
            if rnd(3) == 0 {
                let lock = rnd(4);
                w.print(ts + 100, cpu, next, &format!("B|1000|lockwait:lock{lock}"));
                w.print(ts + 200 + rnd(300), cpu, next, "E|1000");
                w.print(ts + 600, cpu, next, &format!("B|1000|lockhold:lock{lock}"));
                w.print(ts + 900, cpu, next, "E|1000");
                events += 4;
            }
            current[cpu as usize] = next;
        }
    }
    (w.finish(), events)
}
