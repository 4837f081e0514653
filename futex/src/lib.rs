//! An owner-word mutex whose contended waits tell the kernel which thread holds the lock.
//!
//! A plain futex names no owner, so when the UI thread sleeps on one the kernel cannot know
//! which thread it waits for. [`OwnerMutex`] keeps the holder's TID in its 32-bit lock word and,
//! when it has to sleep, passes that TID in the otherwise unused `uaddr2` argument of
//! `futex(FUTEX_WAIT_PRIVATE)`: an *owner hint*. It is the Rust twin of the owner-word lock in
//! `module/uapi/superpass_futex.h`, and [`futex_wait_hinted`] is the twin of that header's
//! `superpass_futex_wait()`. The rules are in `docs/abi.md`, "Owner-hinted futexes"; where ART
//! and bionic would pass the same hint is in `docs/futex.md`.
//!
//! # The lock word
//!
//! `0` when free; otherwise the owner's TID (bits 0 to 29, [`TID_MASK`]) plus [`WAITERS`] (bit
//! 31) once some thread has gone, or is about to go, to sleep on it, the layout PI futex words
//! use. Locking is one compare-and-swap `0 → tid`, with the caller's TID read from a per-thread
//! cache, so an uncontended lock makes no system call. A contender sets [`WAITERS`] and sleeps
//! in `FUTEX_WAIT_PRIVATE` with `val` = the word it saw and `uaddr2` = the TID in that word;
//! each time it wakes without the lock it reads the word again and sleeps with a fresh hint.
//! Unlocking swaps in `0` and, only if [`WAITERS`] was set, wakes one sleeper
//! (`FUTEX_WAKE_PRIVATE`, 1). A thread that takes the lock after sleeping keeps [`WAITERS`] set,
//! because others may still sleep, so its unlock wakes one more thread even if none is left.
//!
//! # What the kernel does with the hint
//!
//! With `superpass.ko` loaded, the hint is accepted only
//!
//! - from a thread that matters: a registered critical thread (the foreground UI thread or
//!   RenderThread), or a thread SuperPass is already fast-tracking on a critical thread's behalf
//!   (a member of its blocking chain); everyone else's hints are ignored without a lookup;
//! - if the TID names a live thread of the waiter's own thread group (process), other than the
//!   waiter itself. A TID above `PID_MAX_LIMIT` is ignored.
//!
//! An accepted hint makes the named thread the wait's blocker, exactly like a kernel mutex
//! owner: it is fast-tracked within SuperPass's usual bounds (budget, throttle, `max_grants`,
//! `max_depth`), chains continue through its own waits, and it all ends when that `futex()` call
//! returns (woken, interrupted, or the word had already changed). The `futex_hints` and
//! `futex_hints_rejected` counters count accepted and refused hints.
//!
//! # Without superpass.ko
//!
//! A kernel without the module ignores `uaddr2` for `FUTEX_WAIT` and `FUTEX_WAKE`, so this is
//! an ordinary futex mutex there: same behaviour, same cost. The hint is only a hint: the kernel
//! checks it, and a wrong TID inside the same process can at worst misdirect a bounded boost.
//!
//! # Panics, poisoning, re-entry, fork
//!
//! - There is no poisoning. If a thread panics while holding the lock, unwinding drops the
//!   [`OwnerMutexGuard`], which unlocks; the next holder sees the data as the panicking thread
//!   left it, possibly half-updated. (With `panic = "abort"` the process ends anyway.)
//! - The lock is not re-entrant. A thread that calls [`OwnerMutex::lock`] while it already holds
//!   that lock panics (the contended path sees its own TID in the word) instead of sleeping
//!   forever; [`OwnerMutex::try_lock`] simply returns `None`.
//! - The lock is not fair: a thread arriving at the moment of an unlock can take the lock ahead
//!   of a woken sleeper, which then sleeps again.
//! - [`OwnerMutexGuard`] is not `Send`: the thread that locked is the one the word names, so it
//!   must be the one that unlocks.
//! - The per-thread TID cache is cleared in the child after `fork(2)` (a `pthread_atfork`
//!   handler), since the child's thread has a new TID. As with any mutex, a lock held at the
//!   time of the fork stays held in the child.
//!
//! Linux (and Android) only.

#[cfg(not(any(target_os = "linux", target_os = "android")))]
compile_error!("superpass-futex needs futex(2): it builds for Linux and Android only");

mod sys;

use std::cell::UnsafeCell;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, Ordering};

use sys::{FutexCall, Kernel};

/// The lock word's waiters bit: set once a thread sleeps, or is about to, and cleared by unlock.
pub const WAITERS: u32 = 0x8000_0000;

/// The lock word's owner field: the holder's TID (as in PI futex words).
pub const TID_MASK: u32 = 0x3fff_ffff;

/// Sleeps while `word` holds `val`, naming `owner_tid` as the thread that holds the lock.
///
/// This is `futex(word, FUTEX_WAIT_PRIVATE, val, NULL, owner_tid, 0)`, the Rust form of
/// `superpass_futex_wait()` in `module/uapi/superpass_futex.h`. A non-positive `owner_tid` passes
/// no hint (`uaddr2` = 0). It returns as `FUTEX_WAIT` does: `Ok(())` when woken (or spuriously),
/// otherwise the error, typically `EAGAIN` (the word no longer held `val`) or `EINTR` (a signal).
/// Callers re-check their condition in a loop either way. `word` must be process-private memory
/// (the `_PRIVATE` operation), which any Rust atomic not placed in shared memory is.
pub fn futex_wait_hinted(word: &AtomicU32, val: u32, owner_tid: i32) -> io::Result<()> {
    sys::wait_hinted(&Kernel, word, val, owner_tid)
}

/// The lock itself: the word and its protocol, over a futex seam that tests can replace.
struct RawLock<S> {
    word: AtomicU32,
    sys: S,
}

impl<S: FutexCall> RawLock<S> {
    const fn new(sys: S) -> Self {
        Self {
            word: AtomicU32::new(0),
            sys,
        }
    }

    /// The lock word for the calling thread: its TID, which always fits [`TID_MASK`].
    fn own_word() -> u32 {
        let tid = sys::current_tid();
        let word = u32::try_from(tid).unwrap_or(0);
        debug_assert!(
            word != 0 && word & !TID_MASK == 0,
            "TID {tid} does not fit a lock word"
        );
        word
    }

    fn try_lock(&self) -> bool {
        self.word
            .compare_exchange(0, Self::own_word(), Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    fn lock(&self) {
        let me = Self::own_word();
        match self
            .word
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {}
            Err(seen) => self.lock_contended(me, seen),
        }
    }

    /// The slow path: the word was `seen` (not 0) when `me` tried to take it.
    #[cold]
    fn lock_contended(&self, me: u32, mut seen: u32) {
        loop {
            if seen == 0 {
                // Others may still sleep: taking the lock here keeps the waiters bit, so this
                // thread's unlock wakes the next one.
                match self.word.compare_exchange(
                    0,
                    me | WAITERS,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(now) => {
                        seen = now;
                        continue;
                    }
                }
            }
            let owner = seen & TID_MASK;
            assert!(
                owner != me,
                "OwnerMutex::lock called by the thread that already holds the lock"
            );
            if seen & WAITERS == 0 {
                if let Err(now) = self.word.compare_exchange(
                    seen,
                    seen | WAITERS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    seen = now;
                    continue;
                }
            }
            // Every outcome leads to the same re-check: woken (maybe by an unlock meant for
            // another sleeper), EAGAIN because the word changed before the kernel looked, or
            // EINTR. The owner field is at most TID_MASK, so it always converts.
            let hint = i32::try_from(owner).unwrap_or(0);
            let _ = sys::wait_hinted(&self.sys, &self.word, seen | WAITERS, hint);
            seen = self.word.load(Ordering::Relaxed);
        }
    }

    fn unlock(&self) {
        if self.word.swap(0, Ordering::Release) & WAITERS != 0 {
            // A failed wake leaves nothing to undo: the only possible errors are for a bad
            // address, and the word is a live atomic.
            let _ = sys::wake(&self.sys, &self.word, 1);
        }
    }

    fn owner(&self) -> Option<i32> {
        match self.word.load(Ordering::Relaxed) & TID_MASK {
            0 => None,
            tid => i32::try_from(tid).ok(),
        }
    }
}

/// A mutual-exclusion lock whose lock word holds the owner's TID, for owner-hinted futex waits.
///
/// Use it like [`std::sync::Mutex`] without poisoning: [`lock`](Self::lock) returns a guard that
/// dereferences to the data and unlocks when dropped. See the [crate documentation](crate) for
/// the word's layout, what the kernel does with the hint, and behaviour on panic and re-entry.
///
/// ```
/// use superpass_futex::OwnerMutex;
///
/// let frames = OwnerMutex::new(Vec::new());
/// frames.lock().push(16_u32);
/// assert_eq!(*frames.lock(), [16]);
/// assert_eq!(frames.owner(), None);
/// ```
///
/// It is `Sync` only for `Send` data, like [`std::sync::Mutex`]:
///
/// ```compile_fail
/// fn share<T: Sync>(_: &T) {}
/// share(&superpass_futex::OwnerMutex::new(std::rc::Rc::new(0)));
/// ```
pub struct OwnerMutex<T: ?Sized> {
    raw: RawLock<Kernel>,
    data: UnsafeCell<T>,
}

// SAFETY: the mutex owns its `T`; moving the mutex to another thread moves the `T`, which is
// sound when `T: Send`.
unsafe impl<T: ?Sized + Send> Send for OwnerMutex<T> {}

// SAFETY: sharing `&OwnerMutex<T>` lets any thread obtain `&mut T` through a guard, one thread
// at a time: the lock word's acquire/release compare-and-swap and swap give exclusive access
// and order each holder's writes before the next holder's reads. Handing `&mut T` to other
// threads in turn is exactly moving access to the `T` across threads, so `T: Send` is required
// and sufficient (as for `std::sync::Mutex`); `T: Sync` is not needed because no two threads
// ever hold a reference at once.
unsafe impl<T: ?Sized + Send> Sync for OwnerMutex<T> {}

impl<T> OwnerMutex<T> {
    /// Creates an unlocked mutex holding `value`.
    pub const fn new(value: T) -> Self {
        Self {
            raw: RawLock::new(Kernel),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the mutex and returns the data (no locking needed: nobody else can hold it).
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> OwnerMutex<T> {
    /// Takes the lock, sleeping with an owner hint while another thread holds it.
    ///
    /// # Panics
    ///
    /// If the calling thread already holds this lock (re-entry would otherwise sleep forever).
    pub fn lock(&self) -> OwnerMutexGuard<'_, T> {
        self.raw.lock();
        OwnerMutexGuard {
            mutex: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the lock if it is free right now; `None` if any thread, the caller included, holds it.
    pub fn try_lock(&self) -> Option<OwnerMutexGuard<'_, T>> {
        // Build the guard only on success: a guard dropped on failure would unlock.
        self.raw.try_lock().then(|| OwnerMutexGuard {
            mutex: self,
            _not_send: PhantomData,
        })
    }

    /// Returns the data through an exclusive borrow (no locking needed: the borrow is exclusive).
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// The TID the lock word names as holder, or `None` if the lock is free; for diagnostics.
    ///
    /// The answer may be stale by the time it is returned.
    pub fn owner(&self) -> Option<i32> {
        self.raw.owner()
    }
}

impl<T: Default> Default for OwnerMutex<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> From<T> for OwnerMutex<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnerMutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("OwnerMutex");
        d.field("owner", &self.owner());
        // Never blocks: formatting a lock the caller itself holds must not deadlock.
        match self.try_lock() {
            Some(guard) => d.field("data", &&*guard),
            None => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Exclusive access to an [`OwnerMutex`]'s data; unlocks (waking one sleeper) when dropped.
///
/// It is not `Send`: the lock word names the thread that locked, so that thread must unlock.
///
/// ```compile_fail
/// let m = superpass_futex::OwnerMutex::new(0);
/// let guard = m.lock();
/// std::thread::scope(|s| {
///     s.spawn(move || drop(guard));
/// });
/// ```
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct OwnerMutexGuard<'a, T: ?Sized> {
    mutex: &'a OwnerMutex<T>,
    /// Keeps the guard `!Send` (see above) at no cost.
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a shared guard only hands out `&T` (Deref), so sharing it across threads is sharing
// `&T`, which `T: Sync` makes sound. The raw-pointer marker only exists to withhold `Send`.
unsafe impl<T: ?Sized + Sync> Sync for OwnerMutexGuard<'_, T> {}

impl<T: ?Sized> Deref for OwnerMutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this thread holds the lock, so no `&mut T` exists
        // elsewhere, and the returned borrow cannot outlive the guard.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> DerefMut for OwnerMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard exists only while this thread holds the lock, and `&mut self`
        // guarantees this is the only borrow through the guard, so the `&mut T` is unique.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized> Drop for OwnerMutexGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.raw.unlock();
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnerMutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for OwnerMutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests;
