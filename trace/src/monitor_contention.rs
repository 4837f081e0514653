//! The `monitor_contention` table: one row per Java monitor wait ART traced, with the
//! fields of its slice name, as Perfetto's `android_monitor_contention`, so that its
//! queries run on our database too.
//!
//! A row is a monitor contention slice (`monitor contention with owner ...`, or `Lock
//! contention on a monitor lock ...`) on a thread track that is not nested in another
//! contention slice: from Android 11 ART nests the short form in the long one for the same
//! wait, and that wait is one row (the long form's), as in Perfetto. Unlike Perfetto, rows
//! are kept when the owner is not found, when the slice has not ended (`dur = -1`) or
//! when ART printed no methods (the short form, `long_form = 0`): the table is every
//! monitor wait, and `WHERE long_form = 1 AND blocking_utid IS NOT NULL AND dur >= 0`
//! selects Perfetto's rows. The owner is resolved per Android era by [`ArtOwners`].

use crate::art::{self, Owner};
use crate::art_owner::ArtOwners;
use crate::model::{Model, SliceRow};

/// The name of the slice that a binder server thread's transaction handling is in.
const BINDER_REPLY: &str = "binder reply";

/// One row; strings borrow from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    /// The contention slice.
    pub slice: &'a SliceRow,
    /// What its name says.
    pub contention: art::Contention<'a>,
    /// The waiting thread.
    pub blocked_utid: u32,
    /// The owner's thread, when resolved.
    pub blocking_utid: Option<u32>,
    /// The closest enclosing `binder reply` slice.
    pub binder_reply: Option<&'a SliceRow>,
}

impl Row<'_> {
    /// The number ART printed for the owner: 0 when none, `None` for a shared holder
    /// (which does not fit the column).
    pub fn blocking_tid(&self) -> Option<i64> {
        match self.contention.owner {
            Owner::None => Some(0),
            Owner::Shared => None,
            Owner::Id(n) => Some(n),
        }
    }
}

/// Whether a slice name is any ART contention slice, cheaply (most names are not).
fn is_contention(name: &str) -> bool {
    (name.starts_with("Lock contention on ") || name.starts_with("monitor contention with "))
        && art::parse(name).is_some()
}

/// The monitor waits of `m`, in slice id order.
pub fn rows(m: &Model) -> Vec<Row<'_>> {
    let mut owners: Option<ArtOwners> = None;
    let mut out = Vec::new();
    for s in &m.slices {
        let name = m.str(s.name);
        if !name.starts_with("Lock contention on ") && !name.starts_with("monitor contention with ")
        {
            continue;
        }
        let Some(c) = art::parse(name) else { continue };
        if c.kind() != "monitor" {
            continue;
        }
        let Some(blocked_utid) = m.tracks.get(s.track_id as usize).and_then(|t| t.utid) else {
            continue;
        };
        let parent = s.parent_id.and_then(|p| m.slices.get(p as usize));
        if parent.is_some_and(|p| is_contention(m.str(p.name))) {
            continue;
        }
        let owners = owners.get_or_insert_with(|| {
            ArtOwners::new(m.threads.iter().map(|t| {
                (
                    t.utid,
                    i64::from(t.tid),
                    t.upid.map(i64::from),
                    t.name.clone().unwrap_or_default(),
                )
            }))
        });
        let blocking_utid = owners
            .resolve(&c, blocked_utid)
            .filter(|&u| u != blocked_utid);
        out.push(Row {
            slice: s,
            contention: c,
            blocked_utid,
            blocking_utid,
            binder_reply: binder_reply(m, s),
        });
    }
    out
}

/// The closest ancestor of `s` named `binder reply` (a bounded walk: depth limits it).
fn binder_reply<'a>(m: &'a Model, s: &SliceRow) -> Option<&'a SliceRow> {
    let mut cur = s.parent_id;
    for _ in 0..=s.depth {
        let p = m.slices.get(cur? as usize)?;
        if m.str(p.name) == BINDER_REPLY {
            return Some(p);
        }
        cur = p.parent_id;
    }
    None
}
