//! ART's lock contention slices, which name the lock's owner: the stock-Android lock waits.
//!
//! With the `dalvik` atrace category, ART wraps a contended lock acquisition in a slice:
//! - `Lock contention on a monitor lock (owner tid: 1234)` (also `on thread list lock`,
//!   `on the InternTable lock`, ...; tid 0 when ART could not tell the owner);
//! - `monitor contention with owner <thread name> (1234) at <method>(<file>:<line>)
//!   waiters=<n> blocking from <method>(<file>:<line>)` (newer releases; the slice above
//!   may nest inside it).

/// What a contention slice says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contention<'a> {
    /// The lock, as ART names it: `a monitor lock`, `thread list lock`, ...
    pub lock: &'a str,
    /// The owner's tid, when ART knew it.
    pub owner_tid: Option<i32>,
}

/// The lock and owner of an ART contention slice name; `None` for any other name.
pub fn parse(name: &str) -> Option<Contention<'_>> {
    if let Some(rest) = name.strip_prefix("Lock contention on ") {
        let open = rest.rfind(" (owner tid: ")?;
        let tid = rest[open + " (owner tid: ".len()..]
            .split(')')
            .next()?
            .trim()
            .parse::<i32>()
            .ok()?;
        return Some(Contention {
            lock: &rest[..open],
            owner_tid: (tid > 0).then_some(tid),
        });
    }
    let rest = name.strip_prefix("monitor contention with owner ")?;
    // The owner's name may hold spaces and parentheses: the tid is the first `(digits)`
    // followed by ` at ` or the end.
    let mut from = 0;
    while let Some(p) = rest[from..].find('(') {
        let at = from + p + 1;
        let digits = rest[at..].bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[at + digits..];
        if digits > 0 && (after == ")" || after.starts_with(") at ")) {
            let tid: i32 = rest[at..at + digits].parse().ok()?;
            return Some(Contention {
                lock: "a monitor lock",
                owner_tid: (tid > 0).then_some(tid),
            });
        }
        from = at;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_shapes() {
        assert_eq!(
            parse("Lock contention on a monitor lock (owner tid: 13533)"),
            Some(Contention {
                lock: "a monitor lock",
                owner_tid: Some(13533)
            })
        );
        assert_eq!(
            parse("Lock contention on thread list lock (owner tid: 0)"),
            Some(Contention {
                lock: "thread list lock",
                owner_tid: None
            })
        );
        assert_eq!(
            parse("monitor contention with owner Binder (2) (1234) at void a.B.c()(B.java:5) waiters=0 blocking from int a.B.d()(B.java:9)"),
            Some(Contention { lock: "a monitor lock", owner_tid: Some(1234) })
        );
        assert_eq!(parse("lockwait:x"), None);
        assert_eq!(parse("Lock contention on a monitor lock"), None);
    }
}
