//! Who registered which critical thread, and the one critical set that results.
//!
//! Pure bookkeeping, no I/O: the service validates a call, applies it to a copy of the
//! [`Registry`], pushes [`Registry::critical_set`] into the module, and keeps the copy only
//! if the module accepted it.

use std::collections::BTreeMap;

use superpass_core::abi::MAX_CRITICAL_ENTRIES;
use superpass_core::{Role, Tid};

/// A client token the service watches for death, numbered in registration order.
pub type ClientId = u64;

/// Who a registration belongs to, and so when it goes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// Registered without a token by a caller of this uid: stays until a caller of the same
    /// uid removes it, and is apart from other uids' registrations.
    Uid(u32),
    /// Registered with a client token: dropped when that client dies or is released.
    Client(ClientId),
    /// Found by the top-app cpuset watcher.
    Discovery,
}

/// The foreground app: its UI thread and, once it has one, its RenderThread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Foreground {
    /// The app's process.
    pub pid: i32,
    /// Its UI (main) thread.
    pub ui_tid: Tid,
    /// Its RenderThread, if known.
    pub render_tid: Option<Tid>,
    /// Who declared it.
    pub owner: Owner,
}

/// One thread of the merged critical set, with where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The process the thread belongs to.
    pub pid: i32,
    /// The thread.
    pub tid: Tid,
    /// Its role.
    pub role: Role,
    /// Who registered it.
    pub owner: Owner,
    /// True if it comes from the foreground slot.
    pub foreground: bool,
}

/// Every registration the service holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registry {
    foreground: Option<Foreground>,
    threads: BTreeMap<Owner, BTreeMap<Tid, (i32, Role)>>,
}

impl Registry {
    /// The most threads the merged set may hold (the module's compile-time capacity).
    pub const MAX: usize = MAX_CRITICAL_ENTRIES;

    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The foreground app, if one is declared.
    pub fn foreground(&self) -> Option<Foreground> {
        self.foreground
    }

    /// Declares the foreground app, replacing the previous one.
    pub fn set_foreground(&mut self, fg: Foreground) {
        self.foreground = Some(fg);
    }

    /// Forgets the foreground app.
    pub fn clear_foreground(&mut self) {
        self.foreground = None;
    }

    /// Replaces every thread `owner` registered with `threads` of process `pid`.
    pub fn set_threads(&mut self, owner: Owner, pid: i32, threads: &[(Tid, Role)]) {
        let m: BTreeMap<Tid, (i32, Role)> = threads
            .iter()
            .map(|&(tid, role)| (tid, (pid, role)))
            .collect();
        if m.is_empty() {
            self.threads.remove(&owner);
        } else {
            self.threads.insert(owner, m);
        }
    }

    /// Adds one thread for `owner` (or changes its role).
    pub fn add_thread(&mut self, owner: Owner, pid: i32, tid: Tid, role: Role) {
        self.threads
            .entry(owner)
            .or_default()
            .insert(tid, (pid, role));
    }

    /// Removes a thread `owner` registered; false if it had not.
    pub fn remove_thread(&mut self, owner: Owner, tid: Tid) -> bool {
        let Some(m) = self.threads.get_mut(&owner) else {
            return false;
        };
        let found = m.remove(&tid).is_some();
        if m.is_empty() {
            self.threads.remove(&owner);
        }
        found
    }

    /// Drops everything `owner` registered, including the foreground app if it declared it.
    pub fn drop_owner(&mut self, owner: Owner) {
        self.threads.remove(&owner);
        if self.foreground.is_some_and(|f| f.owner == owner) {
            self.foreground = None;
        }
    }

    /// True if `owner` holds any registration.
    pub fn owns_anything(&self, owner: Owner) -> bool {
        self.threads.contains_key(&owner) || self.foreground.is_some_and(|f| f.owner == owner)
    }

    /// Keeps only the threads for which `alive(pid, tid)` holds; the foreground app goes if
    /// its UI thread is gone, its RenderThread alone if only that is gone.
    pub fn retain_alive(&mut self, alive: impl Fn(i32, Tid) -> bool) {
        if let Some(f) = &mut self.foreground {
            if !alive(f.pid, f.ui_tid) {
                self.foreground = None;
            } else if f.render_tid.is_some_and(|r| !alive(f.pid, r)) {
                f.render_tid = None;
            }
        }
        for m in self.threads.values_mut() {
            m.retain(|&tid, &mut (pid, _)| alive(pid, tid));
        }
        self.threads.retain(|_, m| !m.is_empty());
    }

    /// The merged set: the foreground app's threads first, then every owner's in owner order;
    /// a thread registered twice appears once, with its first role.
    pub fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let mut push = |e: Entry| {
            if !out.iter().any(|x| x.tid == e.tid) {
                out.push(e);
            }
        };
        if let Some(f) = self.foreground {
            push(Entry {
                pid: f.pid,
                tid: f.ui_tid,
                role: Role::Ui,
                owner: f.owner,
                foreground: true,
            });
            if let Some(r) = f.render_tid {
                push(Entry {
                    pid: f.pid,
                    tid: r,
                    role: Role::Render,
                    owner: f.owner,
                    foreground: true,
                });
            }
        }
        for (&owner, m) in &self.threads {
            for (&tid, &(pid, role)) in m {
                push(Entry {
                    pid,
                    tid,
                    role,
                    owner,
                    foreground: false,
                });
            }
        }
        out
    }

    /// The set to push into the module with `SET_CRITICAL`.
    pub fn critical_set(&self) -> Vec<(Tid, Role)> {
        self.entries().iter().map(|e| (e.tid, e.role)).collect()
    }

    /// True if the merged set fits in the module.
    pub fn fits(&self) -> bool {
        self.entries().len() <= Self::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fg(owner: Owner) -> Foreground {
        Foreground {
            pid: 100,
            ui_tid: 100,
            render_tid: Some(101),
            owner,
        }
    }

    #[test]
    fn merges_foreground_first_and_dedups() {
        let mut r = Registry::new();
        r.add_thread(Owner::Uid(0), 7, 8, Role::Other);
        r.add_thread(Owner::Client(1), 100, 101, Role::Other);
        r.set_foreground(fg(Owner::Discovery));
        assert_eq!(
            r.critical_set(),
            vec![(100, Role::Ui), (101, Role::Render), (8, Role::Other)]
        );
    }

    #[test]
    fn dropping_an_owner_drops_its_foreground_and_threads() {
        let mut r = Registry::new();
        r.set_foreground(fg(Owner::Client(3)));
        r.add_thread(Owner::Client(3), 5, 6, Role::Other);
        r.add_thread(Owner::Client(4), 5, 9, Role::Other);
        assert!(r.owns_anything(Owner::Client(3)));
        r.drop_owner(Owner::Client(3));
        assert!(!r.owns_anything(Owner::Client(3)));
        assert_eq!(r.critical_set(), vec![(9, Role::Other)]);
    }

    #[test]
    fn set_replaces_and_remove_reports() {
        let mut r = Registry::new();
        r.set_threads(Owner::Uid(0), 1, &[(2, Role::Other), (3, Role::Render)]);
        r.set_threads(Owner::Uid(0), 1, &[(4, Role::Other)]);
        assert_eq!(r.critical_set(), vec![(4, Role::Other)]);
        assert!(!r.remove_thread(Owner::Uid(0), 2));
        assert!(!r.remove_thread(Owner::Client(1), 4));
        assert!(
            !r.remove_thread(Owner::Uid(2000), 4),
            "another uid's thread"
        );
        assert!(r.remove_thread(Owner::Uid(0), 4));
        assert_eq!(r, Registry::new());
    }

    #[test]
    fn retain_alive_prunes_dead_threads() {
        let mut r = Registry::new();
        r.set_foreground(fg(Owner::Uid(0)));
        r.add_thread(Owner::Uid(0), 5, 6, Role::Other);
        r.retain_alive(|_, tid| tid != 101 && tid != 6);
        assert_eq!(r.critical_set(), vec![(100, Role::Ui)]);
        r.retain_alive(|_, _| false);
        assert_eq!(r, Registry::new());
    }

    #[test]
    fn fits_bounds_the_merged_set() {
        let mut r = Registry::new();
        let many: Vec<(Tid, Role)> = (1..=Registry::MAX as i32)
            .map(|t| (t, Role::Other))
            .collect();
        r.set_threads(Owner::Uid(0), 1, &many);
        assert!(r.fits());
        r.add_thread(Owner::Client(1), 1, 1000, Role::Other);
        assert!(!r.fits());
    }
}
