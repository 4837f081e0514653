//! The SuperPass module's tracepoints: names, fields and parsing.
//!
//! The module defines `TRACE_SYSTEM superpass` with four events whose `TP_printk` output is
//! `key=value` pairs separated by single spaces (the format is specified in `docs/trace.md`):
//!
//! ```text
//! superpass_block: waiter=123 blocker=456 lock=0xffff888012345678 kind=mutex
//! superpass_grant: blocker=456 waiter=123 root=123 lock=0xffff888012345678 depth=1
//! superpass_revoke: blocker=456 reason=released
//! superpass_pick: cpu=1 tid=456
//! ```
//!
//! In Perfetto protobuf they arrive as `GenericFtraceEvent`s (same names and fields) or, from
//! tools that write the text through `trace_marker`, as `print` events carrying the line above.

use crate::events::SpKind;

/// Event names, as they appear in text ftrace and `GenericFtraceEvent.event_name`.
pub const BLOCK: &str = "superpass_block";
/// See [`BLOCK`].
pub const GRANT: &str = "superpass_grant";
/// See [`BLOCK`].
pub const REVOKE: &str = "superpass_revoke";
/// See [`BLOCK`].
pub const PICK: &str = "superpass_pick";

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

/// Builds a SuperPass event from its name and a field lookup; `None` if a field is missing
/// or malformed, or the name is unknown.
pub fn parse<'a>(name: &str, field: impl Fn(&str) -> Option<&'a str>) -> Option<SpKind> {
    let int = |k: &str| field(k).and_then(parse_int);
    let tid = |k: &str| int(k).and_then(|v| i32::try_from(v).ok());
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
        _ => return None,
    })
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
    }
}
