//! The bounded set of latency-critical threads, with roles and a generation number.
//!
//! Clients (the HAL service) register the foreground UI thread and RenderThread here. The set is
//! small and fixed so that membership checks in hooks are bounded; the generation number lets a
//! client tell whether the set changed since it last looked.

use super::abi::AbiError;
use super::tunables::MAX_CRITICAL;
use super::{Cpu, LockId, Nanos, Role, Tid};

/// No CPU noted yet.
const NO_CPU: Cpu = Cpu::MAX;

/// The registered critical threads.
///
/// # Invariants
///
/// `tids[..len]` are distinct and `> 0`; `len <= N`; `cpus[i]` and `done[i]` belong to
/// `tids[i]`.
#[derive(Clone, Debug)]
pub struct CriticalSet<const N: usize = MAX_CRITICAL> {
    tids: [Tid; N],
    roles: [Role; N],
    /// The CPU each member's latest lock wait started on.
    cpus: [Cpu; N],
    /// Each member's latest tracked wait, while the member is on its way back from it.
    done: [WaitDone; N],
    len: usize,
    generation: u64,
}

/// When a critical thread's latest tracked wait ended, and on which lock (`at == 0`: none, or
/// the thread has slept or had its turn since).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitDone {
    /// When it ended.
    pub at: Nanos,
    /// The lock it was on.
    pub lock: LockId,
}

const NO_WAIT_DONE: WaitDone = WaitDone { at: 0, lock: 0 };

impl<const N: usize> Default for CriticalSet<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> CriticalSet<N> {
    /// An empty set.
    pub const fn new() -> Self {
        Self {
            tids: [0; N],
            roles: [Role::Other; N],
            cpus: [NO_CPU; N],
            done: [NO_WAIT_DONE; N],
            len: 0,
            generation: 0,
        }
    }

    /// The role of `tid`, if it is critical.
    #[inline]
    pub fn role(&self, tid: Tid) -> Option<Role> {
        self.position(tid).and_then(|i| self.roles.get(i).copied())
    }

    /// True if `tid` is critical.
    #[inline]
    pub fn contains(&self, tid: Tid) -> bool {
        self.position(tid).is_some()
    }

    #[inline(always)]
    fn position(&self, tid: Tid) -> Option<usize> {
        // One compare per member, indexing the fixed array: the set holds two or three threads,
        // so a slice bound and an unrolled prologue would cost more than the search (a range,
        // unlike a counted `while`, is not unrolled). `len <= N`: one unsigned compare rules out
        // a longer `len` and an empty set, in fewer instructions than a minimum.
        let n = self.len;
        if n.wrapping_sub(1) >= N {
            return None;
        }
        // The first member is compared apart: without this peel LLVM vectorises the whole
        // search, and the vector prologue costs a set of two or three more than it saves.
        if self.tids.first() == Some(&tid) {
            return Some(0);
        }
        (1..n).find(|&i| self.tids.get(i) == Some(&tid))
    }

    /// The number of critical threads.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// True if no thread is critical.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bumped on every change, so clients can detect concurrent edits.
    pub const fn generation(&self) -> u64 {
        self.generation
    }

    /// The members and their roles.
    pub fn iter(&self) -> impl Iterator<Item = (Tid, Role)> + '_ {
        self.tids
            .iter()
            .copied()
            .zip(self.roles.iter().copied())
            .take(self.len)
    }

    /// The CPU critical `tid`'s latest lock wait started on, if it is critical and has waited.
    pub fn cpu(&self, tid: Tid) -> Option<Cpu> {
        self.position(tid)
            .and_then(|i| self.cpus.get(i).copied())
            .filter(|&c| c != NO_CPU)
    }

    /// Notes that `tid`, if critical, starts a lock wait on CPU `cpu`.
    pub fn set_cpu(&mut self, tid: Tid, cpu: Cpu) {
        if let Some(c) = self.position(tid).and_then(|i| self.cpus.get_mut(i)) {
            *c = cpu;
        }
    }

    /// When and on which lock critical `tid`'s latest tracked wait ended, if it is on its way
    /// back from it.
    pub fn wait_done(&self, tid: Tid) -> Option<WaitDone> {
        self.position(tid)
            .and_then(|i| self.done.get(i).copied())
            .filter(|d| d.at != 0)
    }

    /// Notes that `tid`, if critical, ended a tracked wait on `lock` at `now`.
    pub fn set_wait_done(&mut self, tid: Tid, now: Nanos, lock: LockId) {
        if let Some(d) = self.position(tid).and_then(|i| self.done.get_mut(i)) {
            *d = WaitDone {
                at: now.max(1),
                lock,
            };
        }
    }

    /// Takes `tid`'s way back from its latest tracked wait, if it is on one: it ends there.
    pub fn take_wait_done(&mut self, tid: Tid) -> Option<WaitDone> {
        let d = self.position(tid).and_then(|i| self.done.get_mut(i))?;
        let taken = core::mem::replace(d, NO_WAIT_DONE);
        (taken.at != 0).then_some(taken)
    }

    /// The members on their way back from a tracked wait.
    pub fn returning(&self) -> impl Iterator<Item = Tid> + '_ {
        self.tids
            .iter()
            .zip(self.done.iter())
            .take(self.len)
            .filter(|(_, d)| d.at != 0)
            .map(|(&t, _)| t)
    }

    /// Adds `tid` (or updates its role), keeping at most `limit` members.
    pub fn add(&mut self, tid: Tid, role: Role, limit: usize) -> Result<(), AbiError> {
        if tid <= 0 {
            return Err(AbiError::BadTid);
        }
        if let Some(i) = self.position(tid) {
            if let Some(r) = self.roles.get_mut(i) {
                *r = role;
            }
        } else {
            let n = self.len;
            if n >= limit.min(N) {
                return Err(AbiError::NoSpace);
            }
            let (Some(t), Some(r), Some(c), Some(d)) = (
                self.tids.get_mut(n),
                self.roles.get_mut(n),
                self.cpus.get_mut(n),
                self.done.get_mut(n),
            ) else {
                return Err(AbiError::NoSpace);
            };
            (*t, *r, *c, *d) = (tid, role, NO_CPU, NO_WAIT_DONE);
            self.len += 1;
        }
        self.generation += 1;
        Ok(())
    }

    /// Removes `tid`; it is an error if it was not a member.
    pub fn remove(&mut self, tid: Tid) -> Result<Role, AbiError> {
        let i = self.position(tid).ok_or(AbiError::NotFound)?;
        let role = self.roles.get(i).copied().ok_or(AbiError::NotFound)?;
        self.len -= 1;
        // The last member fills the hole.
        let last = self.len;
        if let (Some(&t), Some(&r), Some(&c), Some(&d)) = (
            self.tids.get(last),
            self.roles.get(last),
            self.cpus.get(last),
            self.done.get(last),
        ) {
            if let (Some(ti), Some(ri), Some(ci), Some(di)) = (
                self.tids.get_mut(i),
                self.roles.get_mut(i),
                self.cpus.get_mut(i),
                self.done.get_mut(i),
            ) {
                (*ti, *ri, *ci, *di) = (t, r, c, d);
            }
        }
        self.generation += 1;
        Ok(role)
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.len = 0;
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_cpu_follows_its_member() {
        let mut s = CriticalSet::<4>::new();
        s.add(10, Role::Ui, 4).unwrap();
        s.add(11, Role::Render, 4).unwrap();
        assert_eq!(s.cpu(10), None);
        s.set_cpu(10, 3);
        s.set_cpu(99, 1);
        assert_eq!((s.cpu(10), s.cpu(99)), (Some(3), None));
        s.set_cpu(11, 5);
        s.remove(10).unwrap();
        assert_eq!(s.cpu(11), Some(5), "moved with its member");
        s.add(10, Role::Ui, 4).unwrap();
        assert_eq!(s.cpu(10), None, "a new member has waited nowhere yet");
    }

    #[test]
    fn add_update_remove() {
        let mut s = CriticalSet::<4>::new();
        s.add(10, Role::Ui, 4).unwrap();
        s.add(11, Role::Render, 4).unwrap();
        assert_eq!(s.role(10), Some(Role::Ui));
        s.add(10, Role::Other, 4).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.role(10), Some(Role::Other));
        let g = s.generation();
        assert_eq!(s.remove(10), Ok(Role::Other));
        assert!(s.generation() > g);
        assert_eq!(s.remove(10), Err(AbiError::NotFound));
        assert!(s.contains(11) && !s.contains(10));
    }

    #[test]
    fn bounded() {
        let mut s = CriticalSet::<4>::new();
        for t in 1..=3 {
            s.add(t, Role::Other, 3).unwrap();
        }
        assert_eq!(s.add(4, Role::Other, 3), Err(AbiError::NoSpace));
        assert_eq!(s.add(0, Role::Other, 3), Err(AbiError::BadTid));
        assert_eq!(s.add(-5, Role::Other, 3), Err(AbiError::BadTid));
        s.add(1, Role::Ui, 3).unwrap();
    }
}
