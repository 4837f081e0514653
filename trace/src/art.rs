//! ART's lock contention slices, which name the lock's owner: the stock-Android lock waits.
//!
//! With the `dalvik` atrace category, ART wraps a contended lock acquisition in a slice
//! (art/runtime/monitor.cc), in one of two forms:
//! - `Lock contention on <mutex> (owner tid: <n>)`: any ART mutex (`a monitor lock`,
//!   `thread list lock`, `an rosalloc size bracket 11 lock`, ...); `n` is 0 when the lock
//!   has no owner and 18446744073709551615 when a reader-writer lock is held shared;
//! - `monitor contention with owner <name> (<n>)[ at <method>(<file>:<line>)] waiters=<w>
//!   blocking from <method>(<file>:<line>)`: a Java monitor. The owner's method (` at ...`)
//!   is there only with lock profiling on. From Android 11 the short form nests inside it
//!   for the same wait.
//!
//! The long form's `n` is the owner's kernel tid on Android 7-10 and from 14 on, but ART's
//! own thread id on 11-13, so an owner is resolved by name where the two disagree
//! ([`Contention::owner_name`]).

use std::borrow::Cow;

/// Whom ART names as the lock's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// ART printed 0: the lock had no owner when the wait began.
    None,
    /// ART printed `u64::MAX`: a reader-writer lock held shared, by no single thread.
    Shared,
    /// The number ART printed (a kernel tid, or ART's thread id on Android 11-13).
    Id(i64),
}

/// A method and its source line, as ART prints them: `void a.B.c(int)` and `B.java:12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site<'a> {
    pub method: &'a str,
    /// `File.java:line` (`Object.java:-2` for native methods).
    pub src: &'a str,
}

impl<'a> Site<'a> {
    /// The method without return type and arguments, as Perfetto's `short_*_method`:
    /// `boolean a.B.c(int)` gives `a.B.c`.
    pub fn short_method(&self) -> &'a str {
        let m = self.method;
        let name_end = m.find('(').unwrap_or(m.len());
        let start = m[..name_end].rfind(' ').map_or(0, |i| i + 1);
        &m[start..name_end]
    }

    /// `<method>(<src>)`: the method is everything before the last parenthesis group.
    fn parse(text: &'a str) -> Option<Site<'a>> {
        let body = text.strip_suffix(')')?;
        let open = body.rfind('(')?;
        Some(Site {
            method: &body[..open],
            src: &body[open + 1..],
        })
    }
}

/// What a contention slice says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contention<'a> {
    /// The lock, as ART names it: `a monitor lock`, `thread list lock`, ...
    pub lock: &'a str,
    pub owner: Owner,
    /// The owner's thread name (the long form only).
    pub owner_name: Option<&'a str>,
    /// Where the owner acquired the lock (the long form, with lock profiling on).
    pub blocking: Option<Site<'a>>,
    /// Where the waiter blocks (the long form).
    pub blocked: Option<Site<'a>>,
    /// Other threads waiting on the monitor (the long form).
    pub waiters: Option<u32>,
    /// `monitor contention with owner ...`, not `Lock contention on ...`.
    pub long_form: bool,
}

impl Contention<'_> {
    /// The owner's number, unless ART named no single owner.
    pub fn owner_id(&self) -> Option<i64> {
        match self.owner {
            Owner::Id(n) => Some(n),
            Owner::None | Owner::Shared => None,
        }
    }

    /// The kind of lock, for grouping: `monitor` for Java monitors, else the mutex name
    /// without its article and with numbers as `N` (each rosalloc size bracket has its own
    /// lock, but they are one kind).
    pub fn kind(&self) -> Cow<'_, str> {
        if self.long_form || self.lock == "a monitor lock" {
            return Cow::Borrowed("monitor");
        }
        let l = self.lock;
        let l = ["a ", "an ", "the "]
            .iter()
            .find_map(|a| l.strip_prefix(a))
            .unwrap_or(l);
        if !l.bytes().any(|b| b.is_ascii_digit()) {
            return Cow::Borrowed(l);
        }
        let words: Vec<&str> = l
            .split(' ')
            .map(|w| {
                if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) {
                    "N"
                } else {
                    w
                }
            })
            .collect();
        Cow::Owned(words.join(" "))
    }
}

/// The owner number ART printed: 0 is nobody, `u64::MAX` a shared holder.
fn owner(digits: &str) -> Option<Owner> {
    let n: u64 = digits.parse().ok()?;
    Some(match n {
        0 => Owner::None,
        u64::MAX => Owner::Shared,
        n => Owner::Id(i64::try_from(n).ok()?),
    })
}

const SHORT: &str = "Lock contention on ";
const LONG: &str = "monitor contention with owner ";

/// Parses an ART contention slice name; `None` for any other name.
pub fn parse(name: &str) -> Option<Contention<'_>> {
    if let Some(rest) = name.strip_prefix(SHORT) {
        let open = rest.rfind(" (owner tid: ")?;
        let digits = rest[open + " (owner tid: ".len()..].strip_suffix(')')?;
        return Some(Contention {
            lock: &rest[..open],
            owner: owner(digits.trim())?,
            owner_name: None,
            blocking: None,
            blocked: None,
            waiters: None,
            long_form: false,
        });
    }
    let rest = name.strip_prefix(LONG)?;
    // The owner's name may hold spaces and parentheses: the number is the first `(digits)`
    // followed by ` at `, ` waiters=`, ` blocking from ` or the end.
    let mut from = 0;
    let (owner_name, id, tail) = loop {
        let at = from + rest[from..].find('(')? + 1;
        let digits = rest[at..].bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[at + digits..];
        let ends = after == ")"
            || [") at ", ") waiters=", ") blocking from "]
                .iter()
                .any(|s| after.starts_with(s));
        if digits > 0 && ends {
            break (
                rest[..at - 1].trim_end(),
                owner(&rest[at..at + digits])?,
                &after[1..],
            );
        }
        from = at;
    };
    // Split from the right: method names hold spaces, but not these markers.
    let (tail, blocked) = match tail.rfind(" blocking from ") {
        Some(i) => (
            &tail[..i],
            Some(Site::parse(&tail[i + " blocking from ".len()..])?),
        ),
        None => (tail, None),
    };
    let (tail, waiters) = match tail.rfind(" waiters=") {
        Some(i) => (
            &tail[..i],
            Some(tail[i + " waiters=".len()..].parse().ok()?),
        ),
        None => (tail, None),
    };
    let blocking = match tail.strip_prefix(" at ") {
        Some(site) => Some(Site::parse(site)?),
        None if tail.is_empty() => None,
        None => return None,
    };
    Some(Contention {
        lock: "a monitor lock",
        owner: id,
        owner_name: Some(owner_name),
        blocking,
        blocked,
        waiters,
        long_form: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_form_owner_kinds() {
        let c = parse("Lock contention on a monitor lock (owner tid: 13533)").unwrap();
        assert_eq!((c.lock, c.owner), ("a monitor lock", Owner::Id(13533)));
        assert_eq!(c.kind(), "monitor");
        let c = parse("Lock contention on thread list lock (owner tid: 0)").unwrap();
        assert_eq!(
            (c.owner, c.kind()),
            (Owner::None, "thread list lock".into())
        );
        let c = parse("Lock contention on a mutator lock (owner tid: 18446744073709551615)");
        assert_eq!(c.unwrap().owner, Owner::Shared);
        let c = parse("Lock contention on an rosalloc size bracket 11 lock (owner tid: 7)");
        assert_eq!(c.unwrap().kind(), "rosalloc size bracket N lock");
        assert_eq!(parse("lockwait:x"), None);
        assert_eq!(parse("Lock contention on a monitor lock"), None);
        assert_eq!(parse("Lock contention on x (owner tid: -3)"), None);
    }

    #[test]
    fn long_form_with_and_without_the_owner_method() {
        let c = parse(
            "monitor contention with owner Binder (2) (1234) at void a.B.c(int, long)(B.java:5) \
             waiters=3 blocking from int a.B.d()(B.java:9)",
        )
        .unwrap();
        assert_eq!(c.owner_name, Some("Binder (2)"));
        assert_eq!(c.owner, Owner::Id(1234));
        let blocking = c.blocking.unwrap();
        assert_eq!(
            (blocking.method, blocking.src),
            ("void a.B.c(int, long)", "B.java:5")
        );
        assert_eq!(blocking.short_method(), "a.B.c");
        assert_eq!(c.blocked.unwrap().short_method(), "a.B.d");
        assert_eq!(c.waiters, Some(3));
        // Android 8 without lock profiling: no ` at `.
        let c = parse(
            "monitor contention with owner android.fg (1746) waiters=0 blocking from \
             android.os.Message android.os.MessageQueue.next()(MessageQueue.java:329)",
        )
        .unwrap();
        assert_eq!(
            (c.owner_name, c.owner, c.blocking),
            (Some("android.fg"), Owner::Id(1746), None)
        );
        assert_eq!(c.blocked.unwrap().src, "MessageQueue.java:329");
        assert_eq!(c.kind(), "monitor");
        let c = parse(
            "monitor contention with owner main (1) blocking from void java.lang.Object.wait!()(Object.java:-2)",
        )
        .unwrap();
        assert_eq!(
            (c.waiters, c.blocked.unwrap().method),
            (None, "void java.lang.Object.wait!()")
        );
        assert_eq!(parse("monitor contention with owner x (12) garbage"), None);
    }
}
