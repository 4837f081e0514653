//! The SuperPass module's tracepoints: names, fields and parsing.
//!
//! The module defines `TRACE_SYSTEM superpass`, whose events' `TP_printk` output is
//! `key=value` pairs separated by single spaces (the format is specified in `docs/trace.md`).
//! These seven are read; another is counted as not imported ([`record`]):
//!
//! ```text
//! superpass_block: waiter=123 blocker=456 lock=0xffff888012345678 kind=mutex
//! superpass_grant: blocker=456 waiter=123 root=123 lock=0xffff888012345678 depth=1
//! superpass_revoke: blocker=456 reason=released
//! superpass_pick: cpu=1 tid=456
//! superpass_queue: cpu=1 tid=456 run_now=1
//! superpass_throttle: cpu=1 for_us=42000
//! superpass_probes: groups=owners,readers
//! ```
//!
//! In Perfetto protobuf they arrive as `GenericFtraceEvent`s (same names and fields) or, from
//! tools that write the text through `trace_marker`, as `print` events carrying the line above.
//! A generic event carries the struct's fields, not the printed text: `groups` is then the
//! module's bit mask, which [`parse`] names as `TP_printk` would.

use crate::events::{Events, SpKind};

/// Event names, as they appear in text ftrace and `GenericFtraceEvent.event_name`.
pub const BLOCK: &str = "superpass_block";
/// See [`BLOCK`].
pub const GRANT: &str = "superpass_grant";
/// See [`BLOCK`].
pub const REVOKE: &str = "superpass_revoke";
/// See [`BLOCK`].
pub const PICK: &str = "superpass_pick";
/// See [`BLOCK`].
pub const QUEUE: &str = "superpass_queue";
/// See [`BLOCK`].
pub const THROTTLE: &str = "superpass_throttle";
/// See [`BLOCK`].
pub const PROBES: &str = "superpass_probes";

/// The events this importer reads; another `superpass_*` (a newer module's) is counted as
/// not imported, not as malformed.
const KNOWN: [&str; 7] = [BLOCK, GRANT, REVOKE, PICK, QUEUE, THROTTLE, PROBES];

/// The module's probe group bits (`SP_PROBES_OWNERS`, `SP_PROBES_READERS` in
/// `module/superpass_consts.h`, generated from superpass-core's `probes`), with the words
/// `TP_printk` prints for them. The crate does not depend on superpass-core.
const PROBE_GROUPS: [(u32, &str); 2] = [(1, "owners"), (2, "readers")];

/// Whether `name` is one of SuperPass's events.
pub fn is_superpass(name: &str) -> bool {
    name.starts_with("superpass_")
}

/// Parses an integer written in decimal or `0x` hex (addresses), possibly negative.
pub fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|v| v as i64);
    }
    // Kernel addresses exceed i64::MAX in decimal (generic events' uint fields).
    s.parse::<i64>()
        .ok()
        .or_else(|| s.parse::<u64>().ok().map(|v| v as i64))
}

/// Iterates `key=value` pairs separated by whitespace.
pub fn key_values(s: &str) -> impl Iterator<Item = (&str, &str)> {
    s.split_ascii_whitespace()
        .filter_map(|kv| kv.split_once('='))
}

/// The name `TP_printk` gives a set of probe groups: `none`, `owners`, `readers` or
/// `owners,readers`.
pub fn probe_groups_name(bits: u32) -> &'static str {
    match bits & 3 {
        0 => "none",
        1 => "owners",
        2 => "readers",
        _ => "owners,readers",
    }
}

/// Probe groups from the printed words (`owners,readers`, `none`) or, in a generic event,
/// the bit mask (only the groups' bits count, as in `TP_printk`); `None` for another word.
fn parse_probe_groups(s: &str) -> Option<u32> {
    if let Some(bits) = parse_int(s) {
        return u32::try_from(bits).ok().map(|b| b & 3);
    }
    if s == "none" {
        return Some(0);
    }
    s.split(',').try_fold(0, |bits, word| {
        PROBE_GROUPS
            .iter()
            .find(|(_, w)| *w == word)
            .map(|(b, _)| bits | b)
    })
}

/// Builds a SuperPass event from its name and a field lookup; `None` if a field is missing
/// or malformed, or the name is unknown.
pub fn parse<'a>(name: &str, field: impl Fn(&str) -> Option<&'a str>) -> Option<SpKind> {
    let int = |k: &str| field(k).and_then(parse_int);
    let tid = |k: &str| int(k).and_then(|v| i32::try_from(v).ok());
    // `%u` fields: a negative or oversized value is damage, not a CPU.
    let cpu = |k: &str| int(k).filter(|v| u32::try_from(*v).is_ok());
    Some(match name {
        BLOCK => SpKind::Block {
            waiter: tid("waiter")?,
            blocker: tid("blocker")?,
            lock: int("lock")? as u64,
            kind: field("kind").unwrap_or("").to_owned(),
        },
        GRANT => SpKind::Grant {
            blocker: tid("blocker")?,
            waiter: tid("waiter")?,
            root: tid("root").or_else(|| tid("waiter"))?,
            lock: int("lock").unwrap_or(0) as u64,
            depth: int("depth").unwrap_or(1),
        },
        REVOKE => SpKind::Revoke {
            blocker: tid("blocker")?,
            reason: field("reason").unwrap_or("").to_owned(),
        },
        PICK => SpKind::Pick {
            cpu: int("cpu")?,
            tid: tid("tid")?,
        },
        QUEUE => SpKind::Queue {
            cpu: cpu("cpu")?,
            tid: tid("tid")?,
            run_now: match int("run_now")? {
                0 => false,
                1 => true,
                _ => return None,
            },
        },
        THROTTLE => SpKind::Throttle {
            cpu: cpu("cpu")?,
            // `%llu`: a value over i64::MAX wraps negative in parse_int and is refused.
            dur: int("for_us")
                .filter(|us| *us >= 0)
                .and_then(|us| us.checked_mul(1000))?,
        },
        PROBES => SpKind::Probes {
            groups: parse_probe_groups(field("groups")?)?,
        },
        _ => return None,
    })
}

/// Adds the event `parsed` from an event named `name` to `ev`, or counts why there is none:
/// `superpass:malformed` for one of ours with a missing or bad field, `ftrace:<name>` for a
/// `superpass_*` event this importer does not read.
pub fn record(ev: &mut Events, ts: i64, cpu: u32, name: &str, parsed: Option<SpKind>) {
    match parsed {
        Some(kind) => ev.push_superpass(ts, cpu, kind),
        None if KNOWN.contains(&name) => ev.diag.skip("superpass:malformed"),
        None => ev.diag.skip(&format!("ftrace:{name}")),
    }
}

/// [`record`] of a whole line `superpass_xxx: key=value ...` (as a `print` event carries it).
pub fn record_line(ev: &mut Events, ts: i64, cpu: u32, line: &str) {
    let name = line.trim().split([':', ' ']).next().unwrap_or("");
    record(ev, ts, cpu, name, parse_line(line));
}

/// Parses the `key=value` text after `superpass_xxx: `.
pub fn parse_text(name: &str, args: &str) -> Option<SpKind> {
    let pairs: Vec<(&str, &str)> = key_values(args).collect();
    parse(name, |k| {
        pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    })
}

/// Parses a whole line `superpass_xxx: key=value ...` (as a `print` event carries it).
pub fn parse_line(line: &str) -> Option<SpKind> {
    let (name, args) = line.trim().split_once(':')?;
    parse_text(name.trim(), args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_event() {
        assert_eq!(
            parse_line("superpass_block: waiter=123 blocker=456 lock=0xffff0001 kind=mutex"),
            Some(SpKind::Block {
                waiter: 123,
                blocker: 456,
                lock: 0xffff0001,
                kind: "mutex".into()
            })
        );
        assert_eq!(
            parse_line("superpass_grant: blocker=456 waiter=123 root=120 lock=0x10 depth=2"),
            Some(SpKind::Grant {
                blocker: 456,
                waiter: 123,
                root: 120,
                lock: 16,
                depth: 2
            })
        );
        assert_eq!(
            parse_line("superpass_revoke: blocker=456 reason=released"),
            Some(SpKind::Revoke {
                blocker: 456,
                reason: "released".into()
            })
        );
        assert_eq!(
            parse_line("superpass_pick: cpu=1 tid=456"),
            Some(SpKind::Pick { cpu: 1, tid: 456 })
        );
        assert_eq!(parse_line("superpass_pick: cpu=1"), None);
        assert_eq!(
            parse_int("18446612682070036480"),
            Some(0xffff_8880_0000_1000_u64 as i64)
        );
        assert_eq!(parse_line("superpass_nope: a=1"), None);
        assert_eq!(
            parse_line("superpass_queue: cpu=1 tid=456 run_now=1"),
            Some(SpKind::Queue {
                cpu: 1,
                tid: 456,
                run_now: true
            })
        );
        assert_eq!(
            parse_line("superpass_throttle: cpu=1 for_us=42000"),
            Some(SpKind::Throttle {
                cpu: 1,
                dur: 42_000_000
            })
        );
        for (text, groups) in [
            ("none", 0),
            ("owners", 1),
            ("readers", 2),
            ("owners,readers", 3),
            ("readers,owners", 3),
        ] {
            assert_eq!(
                parse_line(&format!("superpass_probes: groups={text}")),
                Some(SpKind::Probes { groups }),
                "{text}"
            );
        }
    }

    #[test]
    fn probe_groups_from_a_generic_event_are_the_bit_mask() {
        let probes = |v: &str| parse(PROBES, |k| (k == "groups").then_some(v));
        assert_eq!(probes("3"), Some(SpKind::Probes { groups: 3 }));
        // Only the groups' bits, as TP_printk masks them.
        assert_eq!(probes("6"), Some(SpKind::Probes { groups: 2 }));
        for bits in 0..4 {
            let name = probe_groups_name(bits);
            assert_eq!(
                probes(name),
                Some(SpKind::Probes { groups: bits }),
                "{name}"
            );
        }
    }

    #[test]
    fn malformed_new_events_are_dropped() {
        for line in [
            // A field missing.
            "superpass_queue: cpu=1 tid=456",
            "superpass_queue: tid=456 run_now=1",
            "superpass_throttle: cpu=1",
            "superpass_probes: ",
            // A value that is not one.
            "superpass_queue: cpu=1 tid=456 run_now=2",
            "superpass_queue: cpu=-1 tid=456 run_now=1",
            "superpass_queue: cpu=1 tid=x run_now=1",
            "superpass_queue: cpu=4294967296 tid=1 run_now=0",
            "superpass_throttle: cpu=1 for_us=-5",
            "superpass_throttle: cpu=1 for_us=18446744073709551615",
            "superpass_throttle: cpu=1 for_us=9223372036854776",
            "superpass_throttle: cpu=1 for_us=4.2",
            "superpass_probes: groups=writers",
            "superpass_probes: groups=owners,",
            "superpass_probes: groups=",
            // No colon after the name.
            "superpass_queue cpu=1 tid=456 run_now=1",
        ] {
            assert_eq!(parse_line(line), None, "{line}");
        }
    }

    #[test]
    fn record_counts_malformed_and_unknown_apart() {
        let mut ev = Events::default();
        record_line(&mut ev, 1, 0, "superpass_throttle: cpu=1 for_us=7");
        record_line(&mut ev, 2, 0, "superpass_throttle: cpu=1");
        record_line(&mut ev, 3, 0, "superpass_queue cpu=1 tid=2 run_now=1");
        record_line(&mut ev, 4, 0, "superpass_later: x=1");
        assert_eq!(ev.superpass.len(), 1);
        assert_eq!(ev.diag.skipped.get("superpass:malformed"), Some(&2));
        assert_eq!(ev.diag.skipped.get("ftrace:superpass_later"), Some(&1));
    }
}
