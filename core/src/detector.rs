//! The lock-level detector: who holds the lock a critical thread (or a link of its chain) waits for.
//!
//! The kernel knows a mutex's owner and an rwsem's writer, but an rwsem records only its *last*
//! reader, so readers must be tracked here as they come and go. Tracking every reader of every
//! rwsem is unbounded, so the table is fixed: `lock_slots` locks in 8-way sets, each with a record
//! of the first [`READER_RECORD`] readers seen entering, of which the first `max_readers` are
//! *tracked* (named as blockers). When a tracked reader leaves, a recorded one takes its place,
//! so a storm of readers above the bound is still covered as it drains. When a set is full, the
//! least recently touched entry that no tracked thread is waiting on is evicted. Every blocker the
//! bounds hide is counted (`missed_readers`, `missed_locks`), which is how the paper's claim that
//! "a few readers are enough" is measured.

use super::filter::TidFilter;
use super::stats::{Counter, Stats};
use super::tunables::{Tunables, LOCK_WAYS, MAX_CRITICAL, MAX_GRANTS, MAX_LOCK_SLOTS, MAX_READERS};
use super::{LockId, LockKind, Nanos, Tid};
use core::num::NonZeroU32;

// A lock-table slot index fits in a `u8`.
const _: () = assert!(MAX_LOCK_SLOTS <= 256);

/// Waits tracked at once: every critical thread and every boosted task can wait on one lock.
pub const MAX_WAITS: usize = MAX_CRITICAL + MAX_GRANTS;

/// The most blockers one wait can name: the writer/owner or up to `MAX_READERS` readers.
pub const MAX_BLOCKERS: usize = MAX_READERS + 1;

/// How many readers of one rwsem are remembered by name: the tracked ones and those waiting to
/// take a tracked reader's place when it leaves. Readers past this are only counted.
pub const READER_RECORD: usize = 16;

// A reader position fits in a `u8`, and the tracked readers fit in the record.
const _: () = assert!(READER_RECORD <= 255 && MAX_READERS <= READER_RECORD);

/// One tracked lock.
#[derive(Clone, Copy, Debug)]
struct LockSlot {
    /// 0 when the slot is free.
    id: LockId,
    /// The mutex/futex owner or rwsem writer, 0 if none is known.
    owner: Tid,
    /// The readers seen entering, oldest first; the first `max_readers` are tracked.
    readers: [Tid; READER_RECORD],
    nreaders: u8,
    /// Readers that hold the lock but did not fit in `readers`.
    untracked: u32,
    /// Tracked waits on this lock; a slot with waiters is never evicted.
    waiters: u16,
    touched: Nanos,
}

const FREE_LOCK: LockSlot = LockSlot {
    id: 0,
    owner: 0,
    readers: [0; READER_RECORD],
    nreaders: 0,
    untracked: 0,
    waiters: 0,
    touched: 0,
};

impl LockSlot {
    fn idle(&self) -> bool {
        self.owner == 0 && self.nreaders == 0 && self.untracked == 0 && self.waiters == 0
    }
}

/// A wait by a thread SuperPass cares about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The waiting thread.
    pub waiter: Tid,
    /// The lock it waits for.
    pub lock: LockId,
    /// How it waits.
    pub kind: LockKind,
    /// When the wait started.
    pub start: Nanos,
    /// The critical thread on whose behalf this wait matters (the waiter itself if critical).
    pub root: Tid,
    /// 0 for a critical waiter, n for a task n links down a chain.
    pub depth: u32,
    /// A release woke this waiter (a critical thread, or a link of a chain): it is runnable and
    /// retries the lock when it runs, so the lock's holders do not block it until it sleeps
    /// again.
    pub woken: bool,
}

/// The blockers of one wait, in a fixed array.
///
/// # Invariants
///
/// `len <= MAX_BLOCKERS`; only `tids[..len]` means anything (equality looks at nothing else).
#[derive(Clone, Copy, Debug, Default)]
pub struct Blockers {
    tids: [Tid; MAX_BLOCKERS],
    len: usize,
}

impl PartialEq for Blockers {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Blockers {}

impl Blockers {
    /// The blockers found.
    #[inline]
    pub fn as_slice(&self) -> &[Tid] {
        self.tids.get(..self.len).unwrap_or(&[])
    }

    #[inline]
    pub(crate) fn push(&mut self, t: Tid) {
        if self.len < MAX_BLOCKERS && t > 0 && !self.as_slice().contains(&t) {
            if let Some(x) = self.tids.get_mut(self.len) {
                *x = t;
                self.len += 1;
            }
        }
    }

    /// Keeps the blockers `keep` accepts (called once each, in order).
    #[inline]
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(Tid) -> bool) {
        let mut n = 0;
        for i in 0..self.len {
            let Some(&t) = self.tids.get(i) else { break };
            if keep(t) {
                if let Some(x) = self.tids.get_mut(n) {
                    *x = t;
                }
                n += 1;
            }
        }
        self.len = n;
    }

    /// Removes the blocker at `j`, moving the last one into its place.
    #[inline]
    fn swap_remove(&mut self, j: usize) {
        let last = self.len.wrapping_sub(1);
        if let Some(&t) = self.tids.get(last) {
            if let Some(x) = self.tids.get_mut(j) {
                *x = t;
                self.len = last;
            }
        }
    }
}

/// The detector's fixed-size state.
///
/// # Invariants
///
/// Each live lock id appears in at most one slot, inside the set it hashes to; `waits[..hi]`
/// holds every live wait, each waiter at most once, and `hi` is 0 or one past the last one;
/// `waiters` of a slot counts the live waits on it; `wait_slot[j]` is the slot of live wait
/// `j`'s lock, `None` if the lock is not tracked; `untracked` counts the live waits on a non-zero
/// lock that is not tracked; `waiting` holds one membership per live wait of depth > 0; `nsets`
/// is `nslots / LOCK_WAYS`.
#[derive(Clone, Debug)]
pub struct Detector {
    locks: [LockSlot; MAX_LOCK_SLOTS],
    /// Effective table size (`lock_slots`), a multiple of [`LOCK_WAYS`].
    nslots: usize,
    /// The number of sets, kept so that hashing divides by a known non-zero `u32`.
    nsets: NonZeroU32,
    waits: [Option<Wait>; MAX_WAITS],
    /// The lock slot each wait counted itself in, so that ending it needs no lookup: a slot with
    /// waiters is never evicted or freed.
    wait_slot: [Option<u8>; MAX_WAITS],
    /// One past the last live wait, 0 if there is none.
    hi: usize,
    /// Live waits whose lock found no slot (its set was full of waited-on locks): a slot made
    /// for that lock later adopts them, so its waiter count stays exact.
    untracked: u16,
    /// The waiters of live chain waits (depth > 0), so that a wait whose task stopped mattering
    /// (its boost ended while it waited) can still be ended cheaply when it finishes. A critical
    /// waiter's own wait needs no entry: unregistering it ends the wait.
    waiting: TidFilter,
    /// `max_readers`: how many of a lock's recorded readers are tracked.
    max_readers: u8,
    /// [`Detector::woken_lanes`].
    woken_lanes: u64,
}

/// The number of lock-table sets `t` asks for (at least one, even for an invalid `t`).
const fn nsets_of(t: &Tunables) -> NonZeroU32 {
    match NonZeroU32::new(t.lock_slots / LOCK_WAYS as u32) {
        Some(n) => n,
        None => NonZeroU32::MIN,
    }
}

impl Detector {
    /// An empty detector sized by `t`.
    pub const fn new(t: &Tunables) -> Self {
        Self {
            locks: [FREE_LOCK; MAX_LOCK_SLOTS],
            nslots: t.lock_slots as usize,
            nsets: nsets_of(t),
            waits: [None; MAX_WAITS],
            wait_slot: [None; MAX_WAITS],
            hi: 0,
            untracked: 0,
            waiting: TidFilter::new(),
            max_readers: t.max_readers as u8,
            woken_lanes: 0,
        }
    }

    /// Forgets everything and adopts the table size of `t`.
    pub fn reset(&mut self, t: &Tunables) {
        // In place: a whole `Detector` temporary would take ~22 KiB of (kernel) stack.
        self.locks.fill(FREE_LOCK);
        self.nslots = t.lock_slots as usize;
        self.nsets = nsets_of(t);
        self.waits.fill(None);
        self.wait_slot.fill(None);
        self.hi = 0;
        self.untracked = 0;
        self.waiting.clear();
        self.max_readers = t.max_readers as u8;
        self.woken_lanes = 0;
    }

    #[inline(always)]
    fn set_of(&self, lock: LockId) -> usize {
        // Kernel lock addresses are 8-byte aligned and cluster; mix the bits before reducing.
        // The hash has 32 bits, so a 32-bit remainder is exact.
        let h = ((lock ^ (lock >> 17)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
        // A valid table has at most `MAX_LOCK_SLOTS / LOCK_WAYS` sets, so the second remainder
        // changes nothing; it shows the compiler that every way of the set is in bounds.
        (h % self.nsets) as usize % (MAX_LOCK_SLOTS / LOCK_WAYS) * LOCK_WAYS
    }

    #[inline(always)]
    fn find(&self, lock: LockId) -> Option<usize> {
        if lock == 0 {
            return None;
        }
        let base = self.set_of(lock);
        (base..base + LOCK_WAYS).find(|&i| self.locks.get(i).is_some_and(|s| s.id == lock))
    }

    /// Finds `lock`'s slot or makes one, evicting the stalest idle-of-waiters entry of its set.
    #[inline]
    fn find_or_insert(&mut self, now: Nanos, lock: LockId, st: &mut Stats) -> Option<usize> {
        if lock == 0 {
            return None;
        }
        let base = self.set_of(lock);
        let mut free = None;
        let mut victim: Option<usize> = None;
        for i in base..base + LOCK_WAYS {
            let Some(s) = self.locks.get(i) else { break };
            if s.id == lock {
                return Some(i);
            }
            if s.id == 0 {
                free = free.or(Some(i));
            } else if s.waiters == 0
                && victim
                    .and_then(|v| self.locks.get(v))
                    .map_or(true, |v| s.touched < v.touched)
            {
                victim = Some(i);
            }
        }
        let i = match (free, victim) {
            (Some(i), _) => i,
            (None, Some(v)) => {
                st.bump(Counter::LockEvictions);
                v
            }
            (None, None) => {
                st.bump(Counter::MissedLocks);
                return None;
            }
        };
        *self.locks.get_mut(i)? = LockSlot {
            id: lock,
            touched: now,
            ..FREE_LOCK
        };
        if self.untracked > 0 {
            self.adopt_untracked(i);
        }
        Some(i)
    }

    /// Counts the earlier, untracked waits on the lock that slot `i` now tracks.
    #[cold]
    fn adopt_untracked(&mut self, i: usize) {
        let Some(s) = self.locks.get_mut(i) else {
            return;
        };
        let live = self.wait_slot.iter_mut().zip(&self.waits).take(self.hi);
        for (slot, w) in live {
            if slot.is_none() && w.is_some_and(|w| w.lock == s.id) {
                *slot = Some(i as u8);
                s.waiters += 1;
                self.untracked -= 1;
            }
        }
    }

    fn release_if_idle(&mut self, i: usize) {
        if let Some(s) = self.locks.get_mut(i) {
            if s.idle() {
                *s = FREE_LOCK;
            }
        }
    }

    /// Records that `tid` now owns `lock` (mutex, futex or rwsem writer), if the lock is tracked.
    ///
    /// Returns the previous owner (0 if none) when tracked waits are on the lock: they now wait
    /// for `tid`.
    pub fn owner_acquired(&mut self, now: Nanos, lock: LockId, tid: Tid) -> Option<Tid> {
        let i = self.find(lock)?;
        let s = self.locks.get_mut(i)?;
        let old = core::mem::replace(&mut s.owner, tid);
        s.touched = now;
        (s.waiters > 0).then_some(old)
    }

    /// Forgets `lock`'s readers, whom an owner taking it has replaced, and returns them: a
    /// binder call's pool threads once a server thread takes the call, or readers of an rwsem
    /// whose releases went unseen.
    pub fn drop_readers(&mut self, lock: LockId) -> ([Tid; READER_RECORD], usize) {
        let Some(s) = self.find(lock).and_then(|i| self.locks.get_mut(i)) else {
            return ([0; READER_RECORD], 0);
        };
        let n = (s.nreaders as usize).min(READER_RECORD);
        let readers = core::mem::replace(&mut s.readers, [0; READER_RECORD]);
        s.nreaders = 0;
        s.untracked = 0;
        (readers, n)
    }

    /// Records that `tid` released `lock` as its owner.
    pub fn owner_released(&mut self, now: Nanos, lock: LockId, tid: Tid) {
        if let Some(i) = self.find(lock) {
            if let Some(s) = self.locks.get_mut(i) {
                if s.owner == tid {
                    s.owner = 0;
                }
                s.touched = now;
            }
            self.release_if_idle(i);
        }
    }

    /// Records that `tid` took `lock` for reading; readers past the record are only counted.
    ///
    /// A writer taking a read hold is a downgrade (`downgrade_write`): it stops being the owner
    /// and holds on as a reader. Returns true if `tid` became a tracked reader of a lock that
    /// tracked waits are on and no writer owns: it blocks them now.
    pub fn reader_acquired(
        &mut self,
        now: Nanos,
        lock: LockId,
        tid: Tid,
        t: &Tunables,
        st: &mut Stats,
    ) -> bool {
        let Some(i) = self.find_or_insert(now, lock, st) else {
            return false;
        };
        let Some(s) = self.locks.get_mut(i) else {
            return false;
        };
        s.touched = now;
        if s.owner == tid {
            s.owner = 0;
        }
        let n = s.nreaders as usize;
        if s.readers.iter().take(n).any(|&r| r == tid) {
            // Already recorded (a platform's view of the lock and its own event crossed).
            return false;
        }
        st.bump(Counter::ReadersSeen);
        // Past the record (`n >= READER_RECORD`): only counted.
        let Some(r) = s.readers.get_mut(n) else {
            s.untracked = s.untracked.saturating_add(1);
            return false;
        };
        *r = tid;
        s.nreaders += 1;
        let tracked = (n as u32) < t.max_readers;
        if tracked {
            st.bump(Counter::ReadersTracked);
        }
        tracked && s.waiters > 0 && s.owner == 0
    }

    /// Replaces what the table says holds `lock` with the platform's own view: `owner` (0 for
    /// none) and `readers`, oldest first. Does nothing while tracked waits are on the lock: then
    /// the table follows the lock's events and is current.
    ///
    /// A platform that forwards a lock's acquire and release events only while tracked waits are
    /// on it (the module does, to keep the engine off every `down_read` in the system) calls this
    /// before a wait on the lock starts, so that holders that came and went unseen leave no
    /// stale record and the current ones are known.
    pub fn lock_seen(
        &mut self,
        now: Nanos,
        lock: LockId,
        owner: Tid,
        readers: &[Tid],
        st: &mut Stats,
    ) {
        let owner = owner.max(0);
        let i = match self.find(lock) {
            Some(i) if self.locks.get(i).is_some_and(|s| s.waiters > 0) => return,
            Some(i) => i,
            None if owner == 0 && readers.is_empty() => return,
            None => match self.insert(now, lock, st) {
                Some(i) => i,
                None => return,
            },
        };
        let max = self.max_readers as u32;
        let Some(s) = self.locks.get_mut(i) else {
            return;
        };
        s.owner = owner;
        s.touched = now;
        s.readers = [0; READER_RECORD];
        s.nreaders = 0;
        s.untracked = 0;
        for &r in readers {
            let n = s.nreaders as usize;
            if r <= 0 || r == owner || s.readers.iter().take(n).any(|&x| x == r) {
                continue;
            }
            st.bump(Counter::ReadersSeen);
            // Past the record (`n >= READER_RECORD`): only counted.
            let Some(x) = s.readers.get_mut(n) else {
                s.untracked = s.untracked.saturating_add(1);
                continue;
            };
            *x = r;
            s.nreaders += 1;
            if (n as u32) < max {
                st.bump(Counter::ReadersTracked);
            }
        }
        self.release_if_idle(i);
    }

    /// Records that `tid` released a read hold of `lock`.
    ///
    /// The oldest recorded reader past the tracked ones takes a departing tracked reader's place;
    /// it is returned if tracked waits are on the lock and no writer owns it: it blocks them now.
    pub fn reader_released(
        &mut self,
        now: Nanos,
        lock: LockId,
        tid: Tid,
        st: &mut Stats,
    ) -> Option<Tid> {
        let i = self.find(lock)?;
        let max = self.max_readers as usize;
        let s = self.locks.get_mut(i)?;
        s.touched = now;
        let n = s.nreaders as usize;
        let mut promoted = None;
        let found = s.readers.iter().take(n).position(|&r| r == tid);
        if let Some((j, rest)) = found.and_then(|j| Some((j, s.readers.get_mut(j..n)?))) {
            // Oldest first: the first recorded reader past the tracked ones moves up into them.
            // `rest` starts with the departing reader, so it is not empty.
            rest.rotate_left(1);
            if let Some(last) = rest.last_mut() {
                *last = 0;
            }
            s.nreaders -= 1;
            if j < max && n > max {
                st.bump(Counter::ReadersTracked);
                promoted = s.readers.get(max - 1).copied();
            }
        } else {
            // An untracked reader, or one released by another task (up_read_non_owner).
            s.untracked = s.untracked.saturating_sub(1);
        }
        let follow = s.waiters > 0 && s.owner == 0;
        self.release_if_idle(i);
        promoted.filter(|_| follow)
    }

    /// True if the table says `tid` holds `lock`, as its owner or a recorded reader.
    pub fn holds(&self, lock: LockId, tid: Tid) -> bool {
        self.find(lock)
            .and_then(|i| self.locks.get(i))
            .is_some_and(|s| {
                let n = s.nreaders as usize;
                s.owner == tid || s.readers.iter().take(n).any(|&r| r == tid)
            })
    }

    /// True if `tid` holds `lock` as its owner or as one of its first `max_readers` recorded
    /// readers (those named as blockers).
    pub fn blocks_as_holder(&self, lock: LockId, tid: Tid) -> bool {
        self.find(lock)
            .and_then(|i| self.locks.get(i))
            .is_some_and(|s| {
                let tracked = (s.nreaders as usize).min(self.max_readers as usize);
                s.owner == tid
                    || (s.owner == 0 && s.readers.iter().take(tracked).any(|&r| r == tid))
            })
    }

    /// True if tracked waits are on `lock`.
    #[inline]
    pub fn has_waits_on(&self, lock: LockId) -> bool {
        self.find(lock)
            .and_then(|i| self.locks.get(i))
            .is_some_and(|s| s.waiters > 0)
    }

    /// One past the last live wait slot: [`Detector::wait_at`] is `None` at and above it.
    #[inline]
    pub(crate) fn wait_end(&self) -> usize {
        self.hi
    }

    /// The live wait in slot `j`, if any.
    #[inline]
    pub(crate) fn wait_at(&self, j: usize) -> Option<Wait> {
        self.waits.get(j).copied().flatten()
    }

    /// Records a wait by a thread that matters and names its blockers.
    ///
    /// `owner` is what the platform knows directly (the mutex owner or rwsem writer); it
    /// overrides the table, which only learns owners from events.
    pub fn wait_start(
        &mut self,
        now: Nanos,
        w: Wait,
        owner: Option<Tid>,
        st: &mut Stats,
    ) -> Blockers {
        let mut b = Blockers::default();
        self.wait_start_into(now, w, owner, st, &mut b);
        b
    }

    /// [`Detector::wait_start`], naming the blockers into `b` (empty on entry) in place: the
    /// engine hands in its answer's storage, so the list is never copied.
    #[inline(always)]
    pub(crate) fn wait_start_into(
        &mut self,
        now: Nanos,
        w: Wait,
        owner: Option<Tid>,
        st: &mut Stats,
        b: &mut Blockers,
    ) {
        // A task waits for one lock at a time: a new wait replaces a stale record.
        let mut free = None;
        for (j, x) in self.live_waits().iter().enumerate() {
            match x {
                Some(old) if old.waiter == w.waiter => {
                    self.end_stale_wait(j);
                    free = Some(j);
                    break;
                }
                None if free.is_none() => free = Some(j),
                _ => {}
            }
        }
        let Some(slot) = free.or((self.hi < MAX_WAITS).then_some(self.hi)) else {
            return;
        };
        // Before the wait is stored, so that a new slot adopts only earlier waits.
        let found = self.find_or_insert(now, w.lock, st);
        let (Some(ws), Some(wl)) = (self.waits.get_mut(slot), self.wait_slot.get_mut(slot)) else {
            return;
        };
        *ws = Some(w);
        *wl = found.map(|i| i as u8);
        if w.depth > 0 {
            self.waiting.insert(w.waiter);
        }
        self.hi = self.hi.max(slot + 1);
        let Some(s) = found.and_then(|i| self.locks.get_mut(i)) else {
            if w.lock != 0 {
                self.untracked += 1;
            }
            if let Some(o) = owner {
                b.push(o);
            }
            return;
        };
        s.touched = now;
        s.waiters += 1;
        if let Some(o) = owner.filter(|&o| o > 0) {
            s.owner = o;
        }
        match w.kind {
            LockKind::Mutex | LockKind::Futex | LockKind::PiFutex => b.push(s.owner),
            // A reader with no writer owning the lock waits behind a queued writer, which in turn
            // waits for the current readers: they are the ones to speed up. A binder call no
            // server thread has taken waits for one of the pool's busy threads to finish.
            LockKind::RwsemRead | LockKind::RwsemWrite | LockKind::Binder => {
                if s.owner > 0 {
                    b.push(s.owner);
                } else {
                    let n = s.nreaders as usize;
                    let tracked = n.min(self.max_readers as usize);
                    for &r in s.readers.iter().take(tracked) {
                        b.push(r);
                    }
                    st.add(
                        Counter::MissedReaders,
                        s.untracked as u64 + (n - tracked) as u64,
                    );
                }
            }
        }
        // A thread never blocks itself (e.g. a reader upgrading); drop it if named.
        if let Some(j) = b.as_slice().iter().position(|&x| x == w.waiter) {
            b.swap_remove(j);
        }
    }

    /// The wait slot [`Detector::wait_start`] would give a wait by `waiter` without replacing
    /// one, and what `hi` becomes once it is taken: `None` if `waiter` has a live wait or the
    /// wait table is full. Changes nothing.
    #[inline(always)]
    pub(crate) fn free_wait_slot(&self, waiter: Tid) -> Option<(usize, usize)> {
        // No live wait, the common case: the first slot, with nothing to search.
        if self.hi == 0 {
            return Some((0, 1));
        }
        // The first free slot below `hi` (which leaves `hi` as it is), else `hi`.
        let mut free = None;
        for (j, x) in self.live_waits().iter().enumerate() {
            match x {
                Some(old) if old.waiter == waiter => return None,
                None if free.is_none() => free = Some((j, self.hi)),
                _ => {}
            }
        }
        free.or((self.hi < MAX_WAITS).then_some((self.hi, self.hi + 1)))
    }

    /// [`Detector::wait_start`] for a mutex or futex wait `w` whose owner `o` (`o > 0`, not the
    /// waiter) the platform named, in wait slot `j` (leaving `hi` at `hi`) from
    /// [`Detector::free_wait_slot`]: the same records, and `o` is its one blocker.
    #[inline(always)]
    pub(crate) fn wait_start_owned(
        &mut self,
        now: Nanos,
        (j, hi): (usize, usize),
        w: Wait,
        o: Tid,
        st: &mut Stats,
    ) {
        // Before the wait is stored, so that a new slot adopts only earlier waits. A tracked
        // lock is found by the probe alone; only a new one pays for the insertion.
        let i = match self.find(w.lock) {
            Some(i) => i,
            None => match self.insert(now, w.lock, st) {
                Some(i) => i,
                None => {
                    self.store_wait(j, hi, w, None);
                    if w.lock != 0 {
                        self.untracked += 1;
                    }
                    return;
                }
            },
        };
        // Slots number fewer than 256, so the `u8` the wait records is the slot, and indexing
        // by it needs no bounds check.
        let i = i as u8;
        self.store_wait(j, hi, w, Some(i));
        if let Some(s) = self.locks.get_mut(usize::from(i)) {
            s.touched = now;
            s.waiters += 1;
            s.owner = o;
        }
    }

    /// Stores wait `w` in free wait slot `j`, counted in lock slot `slot`; `hi` becomes `hi`.
    #[inline(always)]
    fn store_wait(&mut self, j: usize, hi: usize, w: Wait, slot: Option<u8>) {
        let (Some(ws), Some(wl)) = (self.waits.get_mut(j), self.wait_slot.get_mut(j)) else {
            return;
        };
        *ws = Some(w);
        *wl = slot;
        if w.depth > 0 {
            self.waiting.insert(w.waiter);
        }
        self.hi = hi;
    }

    /// [`Detector::find_or_insert`], out of line: the path of a lock not tracked yet.
    #[inline(never)]
    fn insert(&mut self, now: Nanos, lock: LockId, st: &mut Stats) -> Option<usize> {
        self.find_or_insert(now, lock, st)
    }

    /// The waiting tasks' [`TidFilter::lanes`](super::filter::TidFilter::lanes).
    pub const fn waiting_lanes(&self) -> u64 {
        self.waiting.lanes()
    }

    /// False if `waiter` certainly has no live chain wait (depth > 0); a few instructions. A
    /// critical thread's own wait is ended when it is unregistered, so only a chain wait can
    /// outlive the reason it was tracked.
    #[inline(always)]
    pub fn may_wait(&self, waiter: Tid) -> bool {
        self.waiting.may_contain(waiter)
    }

    /// Ends the wait of `waiter`, returning it.
    #[inline(always)]
    pub fn wait_finish(&mut self, waiter: Tid) -> Option<Wait> {
        // The search copies the wait out, so ending it need not look at the slot again; it runs
        // over a range the table bounds, so that its slot needs no bounds check. `hi` is never
        // past the table (every `waits[..hi]` relies on it): one unsigned compare rules out that
        // and an empty table, in fewer instructions than a minimum and a test for zero.
        let hi = self.hi;
        if hi.wrapping_sub(1) >= MAX_WAITS {
            return None;
        }
        let (j, w) = (0..hi).find_map(|j| {
            self.waits
                .get(j)
                .copied()
                .flatten()
                .filter(|w| w.waiter == waiter)
                .map(|w| (j, w))
        })?;
        *self.waits.get_mut(j)? = None;
        self.forget_wait(j, w);
        Some(w)
    }

    /// Ends the wait in slot `j`, returning it.
    #[inline(always)]
    fn end_wait(&mut self, j: usize) -> Option<Wait> {
        let w = self.waits.get_mut(j)?.take()?;
        self.forget_wait(j, w);
        Some(w)
    }

    /// Undoes the bookkeeping of wait `w`, whose slot `j` was just emptied.
    #[inline(always)]
    fn forget_wait(&mut self, j: usize, w: Wait) {
        if w.depth > 0 {
            self.waiting.remove(w.waiter);
        }
        if w.woken {
            self.update_woken_lanes();
        }
        // `hi` is one past the last live wait: only ending that one can leave free slots at the
        // end of the range.
        if j + 1 == self.hi {
            self.hi = j;
            while self.hi > 0 && matches!(self.waits.get(self.hi - 1), Some(None)) {
                self.hi -= 1;
            }
        }
        match self.wait_slot.get(j).copied().flatten() {
            Some(i) => {
                let i = i as usize;
                if let Some(s) = self.locks.get_mut(i) {
                    // A live wait with a slot is counted in it, so the count is at least 1.
                    s.waiters -= 1;
                }
                self.release_if_idle(i);
            }
            None if w.lock != 0 => self.untracked -= 1,
            None => {}
        }
    }

    /// Ends a wait its task left without telling us, before the task's next wait replaces it.
    #[cold]
    fn end_stale_wait(&mut self, j: usize) {
        self.end_wait(j);
    }

    /// Marks `waiter`'s wait on `lock` woken (see [`Wait::woken`]); false if it has no such
    /// wait.
    pub fn set_woken(&mut self, waiter: Tid, lock: LockId) -> bool {
        let Some(w) = self
            .live_waits_mut()
            .iter_mut()
            .flatten()
            .find(|w| w.waiter == waiter && w.lock == lock)
        else {
            return false;
        };
        w.woken = true;
        self.woken_lanes |= 1 << (waiter as u32 % 64);
        true
    }

    /// Clears `waiter`'s woken mark, returning its wait if it was woken.
    pub fn take_woken(&mut self, waiter: Tid) -> Option<Wait> {
        let w = self
            .live_waits_mut()
            .iter_mut()
            .flatten()
            .find(|w| w.waiter == waiter && w.woken)?;
        w.woken = false;
        let w = *w;
        self.update_woken_lanes();
        Some(w)
    }

    #[cold]
    fn update_woken_lanes(&mut self) {
        self.woken_lanes = self
            .live_waits()
            .iter()
            .flatten()
            .filter(|w| w.woken)
            .fold(0, |m, w| m | 1 << (w.waiter as u32 % 64));
    }

    /// One bit per woken waiter, bit `tid % 64`: a platform reports a task's sleep
    /// ([`Event::WaiterSlept`](super::event::Event::WaiterSlept)) only if its bit is set.
    #[inline]
    pub fn woken_lanes(&self) -> u64 {
        self.woken_lanes
    }

    /// The live wait of `waiter`, if any.
    pub fn wait_of(&self, waiter: Tid) -> Option<Wait> {
        self.live_waits()
            .iter()
            .flatten()
            .find(|w| w.waiter == waiter)
            .copied()
    }

    /// Every live wait.
    pub fn waits(&self) -> impl Iterator<Item = &Wait> + '_ {
        self.live_waits().iter().flatten()
    }

    /// The wait slots below `hi` (`hi` never passes the table).
    #[inline(always)]
    fn live_waits(&self) -> &[Option<Wait>] {
        self.waits.get(..self.hi).unwrap_or(&[])
    }

    #[inline(always)]
    fn live_waits_mut(&mut self) -> &mut [Option<Wait>] {
        self.waits.get_mut(..self.hi).unwrap_or(&mut [])
    }

    /// The number of locks tracked now.
    pub fn tracked_locks(&self) -> usize {
        self.locks.iter().filter(|s| s.id != 0).count()
    }

    /// The owner, the recorded readers (tracked ones first) and the count of unrecorded
    /// readers of `lock`, for tests and introspection.
    pub fn holders(&self, lock: LockId) -> Option<(Tid, &[Tid], u32)> {
        let s = self.locks.get(self.find(lock)?)?;
        let readers = s.readers.get(..s.nreaders as usize).unwrap_or(&[]);
        Some((s.owner, readers, s.untracked))
    }

    /// Checks the structural invariants; used by tests.
    pub fn check(&self, t: &Tunables) -> Result<(), &'static str> {
        let woken = self
            .waits()
            .filter(|w| w.woken)
            .fold(0u64, |m, w| m | 1 << (w.waiter as u32 % 64));
        if woken != self.woken_lanes {
            return Err("woken lanes out of sync");
        }
        for (i, s) in self.locks.iter().enumerate() {
            if s.id == 0 {
                continue;
            }
            if i >= self.nslots {
                return Err("lock outside the configured table");
            }
            if s.nreaders as usize > READER_RECORD {
                return Err("more readers than the record holds");
            }
            if s.readers.iter().take(s.nreaders as usize).any(|&r| r == 0) {
                return Err("a recorded reader is not a task");
            }
            let base = self.set_of(s.id);
            if i < base || i >= base + LOCK_WAYS {
                return Err("lock outside its set");
            }
            let waits = self.waits().filter(|w| w.lock == s.id).count();
            if waits != s.waiters as usize {
                return Err("waiter count out of sync");
            }
        }
        if self.max_readers as u32 != t.max_readers {
            return Err("max_readers out of sync");
        }
        if self.nsets.get() as usize != self.nslots / LOCK_WAYS {
            return Err("nsets out of sync");
        }
        if self.hi > 0 && matches!(self.waits.get(self.hi - 1), Some(None)) {
            return Err("hi past the last live wait");
        }
        for (j, w) in self.waits.iter().enumerate() {
            let Some(w) = w else { continue };
            if j >= self.hi {
                return Err("live wait at or above hi");
            }
            if self.wait_slot.get(j).copied().flatten().map(usize::from) != self.find(w.lock) {
                return Err("wait's lock slot out of sync");
            }
        }
        let untracked = self
            .waits()
            .filter(|w| w.lock != 0 && self.find(w.lock).is_none())
            .count();
        if untracked != self.untracked as usize {
            return Err("untracked wait count out of sync");
        }
        if self
            .waits()
            .any(|w| w.depth > 0 && !self.waiting.may_contain(w.waiter))
        {
            return Err("live chain waiter missing from the waiting filter");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(waiter: Tid, lock: LockId, kind: LockKind) -> Wait {
        Wait {
            waiter,
            lock,
            kind,
            start: 0,
            root: waiter,
            depth: 0,
            woken: false,
        }
    }

    #[test]
    fn a_lock_tracked_late_counts_the_waits_that_began_untracked() {
        // One set of LOCK_WAYS slots, each held by a waited-on lock: the next lock is untracked.
        let t = Tunables {
            lock_slots: LOCK_WAYS as u32,
            ..Tunables::default()
        };
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        for k in 0..LOCK_WAYS as u64 {
            d.wait_start(
                1,
                w(10 + k as Tid, 0x100 + 8 * k, LockKind::Mutex),
                None,
                &mut st,
            );
        }
        let late = 0x9000;
        d.wait_start(2, w(40, late, LockKind::Mutex), Some(50), &mut st);
        assert!(
            d.holders(late).is_none(),
            "the set is full of waited-on locks"
        );
        d.check(&t).unwrap();
        d.wait_finish(10).unwrap();
        d.wait_start(3, w(41, late, LockKind::Mutex), Some(50), &mut st);
        d.check(&t).unwrap();
        d.wait_finish(40).unwrap();
        assert!(d.holders(late).is_some(), "41 still waits on it");
        d.wait_finish(41).unwrap();
        d.owner_released(4, late, 50);
        assert!(d.holders(late).is_none(), "freed once idle");
        d.check(&t).unwrap();
    }

    #[test]
    fn mutex_owner_from_hint_and_events() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        let b = d.wait_start(1, w(10, 0x1000, LockKind::Mutex), Some(20), &mut st);
        assert_eq!(b.as_slice(), &[20]);
        d.owner_acquired(2, 0x1000, 21);
        assert_eq!(d.holders(0x1000).unwrap().0, 21);
        d.owner_released(3, 0x1000, 21);
        d.wait_finish(10).unwrap();
        assert!(d.holders(0x1000).is_none(), "idle slot freed");
        d.check(&t).unwrap();
    }

    #[test]
    fn rwsem_writer_sees_bounded_readers() {
        let t = Tunables {
            max_readers: 2,
            ..Tunables::default()
        };
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        for r in [31, 32, 33, 34] {
            d.reader_acquired(1, 0x2000, r, &t, &mut st);
        }
        let b = d.wait_start(2, w(10, 0x2000, LockKind::RwsemWrite), None, &mut st);
        assert_eq!(b.as_slice(), &[31, 32]);
        assert_eq!(st.get(Counter::MissedReaders), 2);
        for r in [31, 32, 33, 34] {
            d.reader_released(3, 0x2000, r, &mut st);
        }
        assert_eq!(d.holders(0x2000).unwrap().2, 0);
        d.wait_finish(10);
        assert!(d.holders(0x2000).is_none());
    }

    #[test]
    fn full_set_evicts_stalest_idle_entry_and_never_a_waited_one() {
        let t = Tunables {
            lock_slots: 8,
            ..Tunables::default()
        };
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        // One set of 8: fill it with readers' locks at increasing times.
        for k in 0..8u64 {
            d.reader_acquired(k, 0x100 * (k + 1), 50, &t, &mut st);
        }
        d.wait_start(9, w(10, 0x100, LockKind::RwsemWrite), None, &mut st);
        d.reader_acquired(10, 0x9999, 51, &t, &mut st);
        assert_eq!(st.get(Counter::LockEvictions), 1);
        assert!(d.holders(0x100).is_some(), "waited-on lock kept");
        assert!(d.holders(0x200).is_none(), "stalest idle lock evicted");
        d.check(&t).unwrap();
    }

    #[test]
    fn rwsem_reader_behind_a_queued_writer_names_the_readers() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        d.reader_acquired(1, 0x4000, 31, &t, &mut st);
        let b = d.wait_start(2, w(10, 0x4000, LockKind::RwsemRead), None, &mut st);
        assert_eq!(b.as_slice(), &[31]);
        let b = d.wait_start(3, w(11, 0x4000, LockKind::RwsemRead), Some(40), &mut st);
        assert_eq!(b.as_slice(), &[40], "a writer owner is the blocker");
    }

    #[test]
    fn waiter_never_blocks_itself() {
        let t = Tunables::default();
        let mut st = Stats::default();
        let mut d = Detector::new(&t);
        d.reader_acquired(1, 0x3000, 10, &t, &mut st);
        d.reader_acquired(1, 0x3000, 11, &t, &mut st);
        let b = d.wait_start(2, w(10, 0x3000, LockKind::RwsemWrite), None, &mut st);
        assert_eq!(b.as_slice(), &[11]);
    }
}
