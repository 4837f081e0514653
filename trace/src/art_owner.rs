//! Which thread an ART contention slice names as the lock's owner.
//!
//! The short form's `owner tid` is a kernel tid. The long form's number is a kernel tid on
//! Android 7-10 and from 14 on, but ART's internal thread id on 11-13, which a trace cannot
//! tell apart by itself; the owner's name settles it. The number is taken as a tid when that
//! thread is in the waiter's process and carries the owner's name (or has no name); else the
//! one thread of the waiter's process with that name is the owner; else a thread with that
//! tid, if any, unless it is known to be in another process: a Java monitor's owner runs in
//! the waiter's process, and on 11-13 a small ART thread id is often a kernel thread's tid.

use std::collections::BTreeMap;

use rusqlite::Connection;

use crate::art::Contention;

/// A thread's tid, process and name.
struct Thread {
    tid: i64,
    upid: Option<i64>,
    name: String,
}

/// The threads of a trace, by utid and by tid.
pub struct ArtOwners {
    threads: BTreeMap<u32, Thread>,
    by_tid: BTreeMap<i64, u32>,
}

/// Thread names in the kernel are cut to 15 bytes; ART's are whole.
fn same_name(kernel: &str, art: &str) -> bool {
    kernel == art || (kernel.len() == 15 && art.starts_with(kernel))
}

impl ArtOwners {
    /// The threads as (utid, tid, upid, name): from the model at import, from the
    /// `thread` table in a report.
    pub fn new(threads: impl IntoIterator<Item = (u32, i64, Option<i64>, String)>) -> ArtOwners {
        let mut o = ArtOwners {
            threads: BTreeMap::new(),
            by_tid: BTreeMap::new(),
        };
        for (utid, tid, upid, name) in threads {
            o.by_tid.insert(tid, utid);
            o.threads.insert(utid, Thread { tid, upid, name });
        }
        o
    }

    pub fn load(conn: &Connection) -> rusqlite::Result<ArtOwners> {
        let mut st = conn.prepare("SELECT utid, tid, upid, COALESCE(name, '') FROM thread")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        let threads = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(ArtOwners::new(threads))
    }

    /// The owner's utid, for a contention slice on thread `waiter`.
    pub fn resolve(&self, c: &Contention<'_>, waiter: u32) -> Option<u32> {
        let id = c.owner_id()?;
        let by_tid = self.by_tid.get(&id).copied();
        let Some(name) = c.owner_name else {
            return by_tid;
        };
        let upid = self.threads.get(&waiter).and_then(|t| t.upid);
        if let Some(t) = by_tid.and_then(|u| self.threads.get(&u)) {
            if upid.is_some() && t.upid == upid && (t.name.is_empty() || same_name(&t.name, name)) {
                return by_tid;
            }
        }
        let mut named = self
            .threads
            .iter()
            .filter(|(_, t)| upid.is_some() && t.upid == upid && same_name(&t.name, name));
        match (named.next(), named.next()) {
            (Some((&u, _)), None) => Some(u),
            _ => by_tid.filter(|u| {
                let other = self.threads.get(u).and_then(|t| t.upid);
                upid.is_none() || other.is_none() || other == upid
            }),
        }
    }

    /// The tid of `utid`.
    pub fn tid(&self, utid: u32) -> Option<i64> {
        self.threads.get(&utid).map(|t| t.tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::art;

    /// utid 1: kthreadd (tid 2, process 0); process 10: ui (tid 100), two threads named
    /// `worker` (101, 102), `owner` (200), and 300 with no process known.
    fn owners() -> ArtOwners {
        ArtOwners::new([
            (1, 2, Some(0), "kthreadd".into()),
            (2, 100, Some(10), "ui".into()),
            (3, 101, Some(10), "worker".into()),
            (4, 102, Some(10), "worker".into()),
            (5, 200, Some(10), "owner".into()),
            (6, 300, None, "loner".into()),
        ])
    }

    fn long(owner: &str, n: u32) -> String {
        format!("monitor contention with owner {owner} ({n}) waiters=0 blocking from void a.B.c()(B.java:1)")
    }

    #[test]
    fn owner_by_tid_then_by_name_within_the_process() {
        let o = owners();
        let resolve = |name: &str| o.resolve(&art::parse(name).unwrap(), 2);
        // Android 7-10 and 14+: the number is the owner's tid.
        assert_eq!(resolve(&long("owner", 200)), Some(5));
        // Android 11-13: ART's id 2 is kthreadd's tid; the name finds the owner.
        assert_eq!(resolve(&long("owner", 2)), Some(5));
        // Two threads of that name: not kthreadd, which is in another process.
        assert_eq!(resolve(&long("worker", 2)), None);
        // A thread whose process the trace does not give may still be the owner.
        assert_eq!(resolve(&long("worker", 300)), Some(6));
        // The short form's number is a kernel tid, whatever the process.
        let short = art::parse("Lock contention on thread list lock (owner tid: 2)").unwrap();
        assert_eq!(o.resolve(&short, 2), Some(1));
    }
}
