//! Reads kernel text ftrace, the tracefs `trace` (or `trace_pipe`) output, into [`Events`].
//!
//! A line looks like
//! `  <comm>-<tid> [(<tgid>)] [<cpu>] <flags> <sec>.<usec>: <event>: <fields>`; the flags
//! column is optional (`irq-info` off) and so is the tgid (`record-tgid` on adds it).
//! Comments (`#`), blank lines, `CPU:N [LOST M EVENTS]` markers, `trace-cmd report`'s header
//! and systrace's process dump are handled; a line that does not parse is counted corrupt
//! and skipped. Read events: `sched_switch` (also raw, as `trace-cmd report -R` prints it),
//! `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `sched_blocked_reason`,
//! `cpu_frequency`, `cpu_idle`, `tracing_mark_write`/`print`/`0` (atrace markers),
//! `binder_transaction`, `binder_transaction_received` and `superpass_*`; the others are
//! counted by name. Each line's `comm-tid` names its thread.

use crate::binder;
use crate::events::{Events, PrevState, SchedKind};
use crate::process_dump;
use crate::superpass;

/// Whether `buf` looks like text rather than binary: no NUL and almost only printable
/// bytes in the first 4 KiB. Bytes from 0x80 up count as text, valid UTF-8 or not: a
/// thread name cut in the middle of a character must not make a text trace binary.
pub fn looks_like_text(buf: &[u8]) -> bool {
    let head = &buf[..buf.len().min(4096)];
    if head.is_empty() || head.contains(&0) {
        return false;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
        .count();
    control * 100 <= head.len()
}

/// One parsed line's header.
#[derive(Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// Task name of the current thread.
    pub comm: &'a str,
    /// Current thread id.
    pub tid: i32,
    /// Thread group id, with `record-tgid`.
    pub tgid: Option<i32>,
    /// CPU.
    pub cpu: u32,
    /// Nanoseconds.
    pub ts: i64,
    /// Event name.
    pub event: &'a str,
    /// Everything after `event: `.
    pub args: &'a str,
}

/// Parses `sec.frac` into nanoseconds without floating point.
fn parse_ts(s: &str) -> Option<i64> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    let sec: i64 = sec.parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ns: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    sec.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Parses one event line; `None` if it is not one.
pub fn parse_line(line: &str) -> Option<Line<'_>> {
    // The CPU column `[NNN]` is the anchor: the task name before it may hold spaces and
    // dashes, so search for the first `[digits]` preceded by a space.
    let bytes = line.as_bytes();
    let mut cpu_at = None;
    let mut i = 0;
    while let Some(off) = line[i..].find(" [") {
        let start = i + off + 2;
        let digits = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits > 0 && bytes.get(start + digits) == Some(&b']') {
            cpu_at = Some((i + off, start, start + digits));
            break;
        }
        i = start;
    }
    let (task_end, d0, d1) = cpu_at?;
    let cpu: u32 = line[d0..d1].parse().ok()?;
    let mut task = line[..task_end].trim();
    // Optional `(tgid)` or `( tgid)` after the task, before the CPU.
    let mut tgid = None;
    if task.ends_with(')') {
        if let Some(open) = task.rfind('(') {
            tgid = task[open + 1..task.len() - 1].trim().parse().ok();
            task = task[..open].trim_end();
        }
    }
    let dash = task.rfind('-')?;
    let comm = &task[..dash];
    let tid: i32 = task[dash + 1..].parse().ok()?;
    // After the CPU: optional flags, then `ts:`, then ` event: args`.
    let rest = &line[d1 + 1..];
    let colon = rest.find(": ")?;
    let head = &rest[..colon];
    let ts_str = head.split_ascii_whitespace().last()?;
    let ts = parse_ts(ts_str)?;
    let after = &rest[colon + 2..];
    let (event, args) = match after.find(": ") {
        Some(p) => (&after[..p], &after[p + 2..]),
        None => (after.trim_end_matches(':'), ""),
    };
    Some(Line {
        comm,
        tid,
        tgid,
        cpu,
        ts,
        event: event.trim(),
        args,
    })
}

/// The value of `key=` in `s`, running to the next space.
fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(p) = s[from..].find(key) {
        let at = from + p;
        let end = at + key.len();
        let boundary = at == 0 || s.as_bytes()[at - 1] == b' ';
        if boundary && s.as_bytes().get(end) == Some(&b'=') {
            let v = &s[end + 1..];
            return Some(v.split(' ').next().unwrap_or(""));
        }
        from = end;
    }
    None
}

/// The value of `key=` that may contain spaces (a comm), running up to ` next_key=`.
fn field_until<'a>(s: &'a str, key: &str, next_key: &str) -> Option<&'a str> {
    let start = s.find(&format!("{key}="))? + key.len() + 1;
    let end = s[start..]
        .find(&format!(" {next_key}="))
        .map_or(s.len(), |p| start + p);
    Some(&s[start..end])
}

/// Reads all of `text` into `ev`.
pub fn parse(text: &str, ev: &mut Events) {
    let mut last_ts: Vec<i64> = Vec::new();
    // Inside systrace's process dump: `Some(None)` before its header, then its columns.
    let mut dump: Option<Option<process_dump::Columns>> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if process_dump::is_start(t) {
            dump = Some(None);
            continue;
        }
        if let Some(cols) = dump {
            if let Some(h) = process_dump::header(t) {
                dump = Some(Some(h));
                continue;
            }
            if cols.is_some_and(|c| process_dump::row(c, t, ev)) {
                continue;
            }
        }
        // `trace-cmd report` opens with `version = N`, `cpus=N` and `CPU N is empty`.
        if t.starts_with("version = ") || t.starts_with("cpus=") || is_empty_cpu_line(t) {
            continue;
        }
        if t.starts_with("CPU:") && t.contains("LOST") {
            ev.diag.lost_events += 1;
            ev.diag.note(t.to_owned());
            continue;
        }
        let Some(l) = parse_line(line) else {
            ev.diag.corrupt += 1;
            if ev.diag.corrupt <= 3 {
                ev.diag
                    .note(format!("unparsed line: {}", truncate(line, 120)));
            }
            continue;
        };
        let c = l.cpu as usize;
        if c < 4096 {
            if c >= last_ts.len() {
                last_ts.resize(c + 1, i64::MIN);
            }
            if l.ts < last_ts[c] {
                ev.diag.out_of_order += 1;
            } else {
                last_ts[c] = l.ts;
            }
        }
        if let Some(tgid) = l.tgid {
            ev.note_thread_pid(l.tid, tgid);
        }
        // The line's own `comm-tid` names the thread that wrote it; `<...>` means the
        // kernel's comm cache had no entry, and tid 0 is the idle task.
        if l.tid != 0 && l.comm != "<...>" && !l.comm.is_empty() {
            ev.note_comm(l.tid, l.comm);
        }
        if !event(&l, ev) {
            ev.diag.skip(&format!("ftrace:{}", l.event));
        }
    }
}

/// `CPU 3 is empty`, from `trace-cmd report`.
fn is_empty_cpu_line(t: &str) -> bool {
    t.strip_prefix("CPU ")
        .and_then(|r| r.strip_suffix(" is empty"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Handles one event; false if it is of a kind not imported or malformed.
fn event(l: &Line<'_>, ev: &mut Events) -> bool {
    let a = l.args;
    match l.event {
        "sched_switch" => {
            // `trace-cmd report -R` prints the raw fields: no ` ==> `, numeric prev_state.
            let (left, right) = a.split_once(" ==> ").unwrap_or((a, a));
            let (Some(prev_comm), Some(prev_tid), Some(state)) = (
                field_until(left, "prev_comm", "prev_pid"),
                field(left, "prev_pid").and_then(|v| v.parse::<i32>().ok()),
                field(left, "prev_state"),
            ) else {
                return false;
            };
            let (Some(next_comm), Some(next_tid)) = (
                field_until(right, "next_comm", "next_pid"),
                field(right, "next_pid").and_then(|v| v.parse::<i32>().ok()),
            ) else {
                return false;
            };
            let next_prio = field(right, "next_prio")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            ev.note_comm(prev_tid, prev_comm);
            ev.note_comm(next_tid, next_comm);
            let prev_state = match state.parse::<i64>() {
                Ok(bits) => PrevState::Bits(bits),
                Err(_) => PrevState::Text(ev.strings.intern(state)),
            };
            ev.push_sched(
                l.ts,
                l.cpu,
                SchedKind::Switch {
                    prev_tid: Some(prev_tid),
                    prev_state,
                    next_tid,
                    next_prio,
                },
            );
            true
        }
        "cpu_frequency" | "cpu_idle" => {
            let (Some(state), Some(cpu)) = (
                field(a, "state").and_then(|v| v.parse::<u64>().ok()),
                field(a, "cpu_id").and_then(|v| v.parse::<u32>().ok()),
            ) else {
                return false;
            };
            ev.cpu_counter(l.ts, l.event == "cpu_frequency", cpu, state);
            true
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let (Some(comm), Some(tid)) = (
                field_until(a, "comm", "pid"),
                field(a, "pid").and_then(|v| v.parse::<i32>().ok()),
            ) else {
                return false;
            };
            ev.note_comm(tid, comm);
            ev.push_sched(
                l.ts,
                l.cpu,
                SchedKind::Waking {
                    tid,
                    waker: Some(l.tid),
                    wakeup: l.event == "sched_wakeup",
                },
            );
            true
        }
        "sched_blocked_reason" => {
            let Some(tid) = field(a, "pid").and_then(|v| v.parse::<i32>().ok()) else {
                return false;
            };
            let io_wait = field(a, "iowait").is_some_and(|v| v != "0");
            let caller = field(a, "caller").unwrap_or("");
            let function = ev.strings.intern(caller);
            ev.push_sched(
                l.ts,
                l.cpu,
                SchedKind::Blocked {
                    tid,
                    function,
                    io_wait,
                },
            );
            true
        }
        // Old kernels print a trace_marker write as event `0`.
        "tracing_mark_write" | "print" | "0" => {
            // Some kernels prefix the marker with the writer's address: `0x...: B|..`.
            let text = match a.split_once(": ") {
                Some((ip, rest)) if ip.starts_with("0x") => rest,
                _ => a,
            };
            let text = text.trim_end();
            if superpass::is_superpass(text) {
                superpass::record_line(ev, l.ts, l.cpu, text);
                true
            } else {
                ev.atrace(l.ts, l.tid, text)
            }
        }
        // Recorded, or counted as malformed there.
        binder::TRANSACTION | binder::RECEIVED => {
            let kind = binder::parse_text(l.event, a);
            binder::record(ev, l.ts, Some(l.tid), kind, || {
                format!("{}: {}", l.event, truncate(a, 120))
            });
            true
        }
        // Recorded or counted there (malformed, or an event this importer does not read).
        name if superpass::is_superpass(name) => {
            superpass::record(ev, l.ts, l.cpu, name, superpass::parse_text(name, a));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_headers() {
        let l = parse_line(
            "   Binder:1-2 x-1234    [001] d..2.  5123.000123: sched_switch: prev_comm=a",
        )
        .unwrap();
        assert_eq!(l.comm, "Binder:1-2 x");
        assert_eq!(l.tid, 1234);
        assert_eq!(l.cpu, 1);
        assert_eq!(l.ts, 5_123_000_123_000);
        assert_eq!(l.event, "sched_switch");
        let l = parse_line("bash-7 (      5) [000] 1.5: print: B|5|x").unwrap();
        assert_eq!((l.tid, l.tgid, l.ts), (7, Some(5), 1_500_000_000));
        assert_eq!(l.args, "B|5|x");
        assert!(parse_line("garbage").is_none());
        assert!(parse_line("a-1 [0] x: y").is_none());
    }

    #[test]
    fn parses_sched_and_markers() {
        let text = "\
# tracer: nop
          <idle>-0     [000] d..2.   100.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my thread next_pid=42 next_prio=110
     my thread-42    [000] .....   100.000002: tracing_mark_write: B|40|lockwait:m
     my thread-42    [000] d..3.   100.000003: sched_waking: comm=other pid=43 prio=120 target_cpu=001
     my thread-42    [000] d..2.   100.000004: sched_switch: prev_comm=my thread prev_pid=42 prev_prio=110 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
     my thread-42    [000] d..2.   100.000004: sched_blocked_reason: pid=42 iowait=0 caller=mutex_lock+0x10/0x20
     my thread-42    [000] .....   100.000005: superpass_block: waiter=42 blocker=43 lock=0xff kind=mutex
CPU:1 [LOST 3 EVENTS]
this line is junk
";
        let mut ev = Events::default();
        parse(text, &mut ev);
        assert_eq!(ev.sched.len(), 4);
        assert_eq!(ev.slices.len(), 1);
        assert_eq!(ev.superpass.len(), 1);
        assert_eq!(ev.threads[&42].comm.as_deref(), Some("my thread"));
        assert_eq!(ev.threads[&42].pid, Some(40));
        assert_eq!(ev.diag.corrupt, 1);
        assert_eq!(ev.diag.lost_events, 1);
        assert!(matches!(
            ev.sched[1].kind,
            SchedKind::Waking {
                tid: 43,
                waker: Some(42),
                ..
            }
        ));
    }

    #[test]
    fn superpass_lines_malformed_or_unknown_are_counted() {
        let text = "\
          <idle>-0     [001] d.h2.   100.000001: superpass_queue: cpu=1 tid=456 run_now=1
          <idle>-0     [001] d..2.   100.000002: superpass_throttle: cpu=1 for_us=42000
     my thread-42    [000] .....   100.000003: superpass_probes: groups=owners,readers
     my thread-42    [000] .....   100.000004: tracing_mark_write: superpass_probes: groups=none
     my thread-42    [000] .....   100.000005: superpass_queue: cpu=1 tid=456 run_now=yes
     my thread-42    [000] .....   100.000006: superpass_throttle: cpu=1 for_us=
     my thread-42    [000] .....   100.000007: superpass_probes: groups=all
     my thread-42    [000] .....   100.000008: tracing_mark_write: superpass_queue: cpu=1
     my thread-42    [000] .....   100.000009: superpass_later: x=1
";
        let mut ev = Events::default();
        parse(text, &mut ev);
        assert_eq!(ev.superpass.len(), 4);
        assert_eq!(
            (ev.superpass[0].ts, ev.superpass[0].cpu),
            (100_000_001_000, 1)
        );
        assert_eq!(ev.diag.skipped.get("superpass:malformed"), Some(&4));
        assert_eq!(ev.diag.skipped.get("ftrace:superpass_later"), Some(&1));
        assert_eq!(ev.diag.skipped.len(), 2, "{:?}", ev.diag.skipped);
        assert_eq!(ev.diag.corrupt, 0);
    }

    #[test]
    fn timestamps_scale_by_digits() {
        assert_eq!(parse_ts("1.5"), Some(1_500_000_000));
        assert_eq!(parse_ts("2.000000001"), Some(2_000_000_001));
        assert_eq!(parse_ts("1.0000000001"), None);
        assert_eq!(parse_ts("x.1"), None);
    }
}
