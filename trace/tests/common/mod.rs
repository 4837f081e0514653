//! The inversion scenario as a script, rendered both as Perfetto (via the writer) and as
//! text ftrace (formatted here independently), with its answers worked out by hand.
//!
//! Timeline (µs; CPU 0 unless noted; [`US`] converts to the ns the tables hold). ui=101 and bg=102 are in app (100); barger=103 runs
//! on CPU 1; hog=201.
//! -     0: bg runs on CPU 0; barger on CPU 1
//! -   500: superpass_probes groups=owners
//! -  1000: bg takes m (lockhold:m); CPU 1 throttled for 1000 (ends before the wait)
//! -  2000: bg preempted (R+) by ui
//! -  2500: CPU 1 throttled for 1000 (into the wait)
//! -  3000: ui starts waiting for m (lockwait:m)
//! -  4000: ui sleeps (S); hog runs. superpass_block waiter=ui blocker=bg
//! -  5000: superpass_queue of hog (not a blocker of ui's wait)
//! -  9000: superpass_grant blocker=bg
//! -  9500: superpass_queue bg on CPU 0, run_now
//! -  9800: CPU 1 throttled for 1500
//! - 10000: hog preempted, bg runs. superpass_pick
//! - 10500: superpass_probes groups=owners,readers
//! - 11000: bg releases m, wakes ui. superpass_revoke
//! - 11200..11800: barger holds m (CPU 1)
//! - 12000: bg sleeps, ui runs
//! - 12500: ui gets m (wait = 9500) and holds it until 13000
//! - 20000: ui sleeps; idle

#![allow(dead_code)]

use std::fmt::Write as _;

use superpass_trace::writer::{FieldValue, TraceWriter};

#[derive(Clone, Copy)]
pub enum Ev {
    /// ts, cpu, prev (tid, state letters, state bits), next tid
    Switch(u64, u32, i32, &'static str, i64, i32),
    /// ts, cpu, waker, woken
    Waking(u64, u32, i32, i32),
    /// ts, cpu, tid, atrace text
    Mark(u64, u32, i32, &'static str),
    /// ts, cpu, tid, superpass name, key=value args
    Sp(u64, u32, i32, &'static str, &'static str),
}

pub const THREADS: &[(i32, i32, &str)] = &[
    (100, 101, "ui"),
    (100, 102, "bg"),
    (100, 103, "barger"),
    (200, 201, "hog"),
];

fn name(tid: i32) -> &'static str {
    match tid {
        0 => "swapper/0",
        101 => "ui",
        102 => "bg",
        103 => "barger",
        201 => "hog",
        _ => "?",
    }
}

pub fn script() -> Vec<Ev> {
    use Ev::*;
    vec![
        Switch(0, 0, 0, "R", 0, 102),
        Switch(0, 1, 0, "R", 0, 103),
        Sp(500, 1, 103, "superpass_probes", "groups=owners"),
        Mark(1000, 0, 102, "B|100|lockhold:m"),
        Sp(1000, 1, 103, "superpass_throttle", "cpu=1 for_us=1000"),
        Switch(2000, 0, 102, "R+", 0x100, 101),
        Sp(2500, 1, 103, "superpass_throttle", "cpu=1 for_us=1000"),
        Mark(3000, 0, 101, "B|100|lockwait:m"),
        Switch(4000, 0, 101, "S", 1, 201),
        Sp(
            4000,
            0,
            101,
            "superpass_block",
            "waiter=101 blocker=102 lock=0xffff888000001000 kind=mutex",
        ),
        Sp(5000, 0, 201, "superpass_queue", "cpu=0 tid=201 run_now=0"),
        Sp(
            9000,
            0,
            201,
            "superpass_grant",
            "blocker=102 waiter=101 root=101 lock=0xffff888000001000 depth=1",
        ),
        Sp(9500, 0, 201, "superpass_queue", "cpu=0 tid=102 run_now=1"),
        Sp(9800, 1, 103, "superpass_throttle", "cpu=1 for_us=1500"),
        Switch(10000, 0, 201, "R+", 0x100, 102),
        Sp(10000, 0, 102, "superpass_pick", "cpu=0 tid=102"),
        Sp(10500, 0, 102, "superpass_probes", "groups=owners,readers"),
        Mark(11000, 0, 102, "E|100"),
        Waking(11000, 0, 102, 101),
        Sp(
            11000,
            0,
            102,
            "superpass_revoke",
            "blocker=102 reason=released",
        ),
        Mark(11200, 1, 103, "B|100|lockhold:m"),
        Mark(11800, 1, 103, "E|100"),
        Switch(12000, 0, 102, "S", 1, 101),
        Mark(12500, 0, 101, "E|100"),
        Mark(12500, 0, 101, "B|100|lockhold:m"),
        Mark(13000, 0, 101, "E|100"),
        Switch(20000, 0, 101, "S", 1, 0),
    ]
}

/// The scenario as a Perfetto trace: atrace markers as ftrace print events and SuperPass
/// events as generic ftrace events (integers typed; probe groups as the module's bit mask,
/// the struct field `TP_printk` names), like traced_probes records them.
pub fn pftrace() -> Vec<u8> {
    const NS: u64 = 1000;
    let mut w = TraceWriter::new();
    w.process(100, "app");
    w.process(200, "hog");
    for &(pid, tid, n) in THREADS {
        w.thread(pid, tid, n);
    }
    for e in script() {
        match e {
            Ev::Switch(ts, cpu, prev, _, bits, next) => w.sched_switch(
                ts * NS,
                cpu,
                name(prev),
                prev,
                120,
                bits,
                name(next),
                next,
                120,
            ),
            Ev::Waking(ts, cpu, waker, tid) => {
                w.sched_waking_by(ts * NS, cpu, Some(waker), name(tid), tid, 120, cpu as i32)
            }
            Ev::Mark(ts, cpu, tid, text) => w.print(ts * NS, cpu, tid, text),
            Ev::Sp(ts, cpu, tid, event, args) => {
                let fields: Vec<(&str, FieldValue<'_>)> = args
                    .split(' ')
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').unwrap();
                        let v = if k == "groups" {
                            let bit = |w| match w {
                                "owners" => 1,
                                "readers" => 2,
                                _ => 0,
                            };
                            FieldValue::Uint(v.split(',').map(bit).sum())
                        } else if let Some(h) = v.strip_prefix("0x") {
                            FieldValue::Uint(u64::from_str_radix(h, 16).unwrap())
                        } else if let Ok(i) = v.parse::<i64>() {
                            FieldValue::Int(i)
                        } else {
                            FieldValue::Str(v)
                        };
                        (k, v)
                    })
                    .collect();
                w.generic(ts * NS, cpu, tid, event, &fields)
            }
        }
    }
    w.finish()
}

fn ts_text(us: u64) -> String {
    // Text ftrace prints sec.usec.
    format!("{}.{:06}", 5 + us / 1_000_000, us % 1_000_000)
}

/// The scenario as the tracefs `trace` file would show it (offset by 5 s).
pub fn ftrace_text() -> String {
    let mut o =
        String::from("# tracer: nop\n#\n# entries-in-buffer/entries-written: 20/20   #P:2\n");
    for e in script() {
        let (ts, cpu, tid, body) = match e {
            Ev::Switch(ts, cpu, prev, st, _, next) => (
                ts,
                cpu,
                prev,
                format!(
                    "sched_switch: prev_comm={} prev_pid={prev} prev_prio=120 prev_state={st} ==> next_comm={} next_pid={next} next_prio=120",
                    name(prev),
                    name(next)
                ),
            ),
            Ev::Waking(ts, cpu, waker, tid) => (
                ts,
                cpu,
                waker,
                format!("sched_waking: comm={} pid={tid} prio=120 target_cpu={cpu:03}", name(tid)),
            ),
            Ev::Mark(ts, cpu, tid, text) => (ts, cpu, tid, format!("tracing_mark_write: {text}")),
            Ev::Sp(ts, cpu, tid, event, args) => (ts, cpu, tid, format!("{event}: {args}")),
        };
        let comm = if tid == 0 { "<idle>" } else { name(tid) };
        let _ = writeln!(
            o,
            "{:>16}-{:<7} [{:03}] d..2. {:>16}: {body}",
            comm,
            tid,
            cpu,
            ts_text(ts)
        );
    }
    o
}

/// Nanoseconds per scenario time unit.
pub const US: i64 = 1000;

/// Text timestamps are offset by 5 s.
pub const TEXT_OFFSET: i64 = 5_000_000_000;

/// [`pftrace`] damaged for the fuzz-style tests: each `(at, byte)` of `flips` overwrites one
/// byte (positions taken modulo the length), then the trace is cut to `cut` bytes.
pub fn damaged_pftrace(
    flips: Vec<(proptest::sample::Index, u8)>,
    cut: proptest::sample::Index,
) -> Vec<u8> {
    let mut bytes = pftrace();
    for (i, b) in flips {
        let i = i.index(bytes.len());
        bytes[i] = b;
    }
    let cut = cut.index(bytes.len() + 1);
    bytes.truncate(cut);
    bytes
}
