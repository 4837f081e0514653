//! Unit tests: they run the real lock against the real kernel (a stock kernel ignores the hint),
//! and look at the futex calls through a recording seam.

use super::sys::{self, FutexCall, Kernel, FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE};
use super::{futex_wait_hinted, OwnerMutex, RawLock, TID_MASK, WAITERS};

use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

/// Polls `cond` until it holds, giving up after a generous deadline (this bounds a hang, it
/// measures nothing). Callers assert the answer only after releasing any thread that may be
/// asleep on a lock, so a failure fails the test instead of hanging it.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        if Instant::now() > deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

fn word_of<T>(m: &OwnerMutex<T>) -> u32 {
    m.raw.word.load(Ordering::SeqCst)
}

fn my_tid() -> i32 {
    sys::gettid()
}

fn tid_word(tid: i32) -> u32 {
    u32::try_from(tid).expect("TIDs are positive")
}

/// One futex(2) call as the seam saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Call {
    op: libc::c_int,
    val: u32,
    uaddr2: usize,
}

/// A futex seam that logs every call, then makes it for real so waiters really sleep.
#[derive(Default)]
struct Recorder {
    calls: Mutex<Vec<Call>>,
}

impl Recorder {
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn waits(&self) -> Vec<Call> {
        let mut calls = self.calls();
        calls.retain(|c| c.op == FUTEX_WAIT_PRIVATE);
        calls
    }
}

impl FutexCall for Recorder {
    fn futex(
        &self,
        word: &AtomicU32,
        op: libc::c_int,
        val: u32,
        uaddr2: usize,
    ) -> io::Result<libc::c_long> {
        self.calls.lock().unwrap().push(Call { op, val, uaddr2 });
        Kernel.futex(word, op, val, uaddr2)
    }
}

#[test]
fn contention_keeps_mutual_exclusion() {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 100_000;
    // A plain integer, read and written in two steps: lost updates show up in the total.
    let counter = OwnerMutex::new(0_u64);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                let me = my_tid();
                for _ in 0..ROUNDS {
                    let mut n = counter.lock();
                    assert_eq!(counter.owner(), Some(me), "word must name the holder");
                    let seen = std::hint::black_box(*n);
                    *n = seen + 1;
                }
            });
        }
    });
    assert_eq!(counter.into_inner(), THREADS * ROUNDS);
}

#[test]
fn word_holds_owner_tid_while_held_and_zero_after() {
    let m = OwnerMutex::new(());
    assert_eq!((word_of(&m), m.owner()), (0, None));
    let me = my_tid();
    let guard = m.lock();
    assert_eq!(
        word_of(&m),
        tid_word(me),
        "uncontended: the TID alone, no waiters bit"
    );
    assert_eq!(m.owner(), Some(me));
    // Another thread reads the same owner.
    let seen_elsewhere = thread::scope(|s| s.spawn(|| m.owner()).join().unwrap());
    assert_eq!(seen_elsewhere, Some(me));
    drop(guard);
    assert_eq!((word_of(&m), m.owner()), (0, None));

    let guard = m.try_lock().expect("free lock");
    assert_eq!(word_of(&m), tid_word(me));
    drop(guard);
    assert_eq!(word_of(&m), 0);
}

#[test]
fn waiters_bit_set_by_a_sleeper_and_cleared_by_the_last_unlock() {
    let m = OwnerMutex::new(0_u32);
    let me = my_tid();
    let guard = m.lock();
    let (bit_set, word_while_contended, (waiter, word_while_waiter_held)) = thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut n = m.lock();
            *n += 1;
            (my_tid(), word_of(&m))
        });
        let bit_set = eventually(|| word_of(&m) & WAITERS != 0);
        let word = word_of(&m);
        drop(guard);
        (bit_set, word, waiter.join().unwrap())
    });
    assert!(bit_set, "the contender never set the waiters bit");
    assert_eq!(
        word_while_contended,
        tid_word(me) | WAITERS,
        "the contender only adds the bit"
    );
    assert_ne!(waiter, me);
    // The thread that took the lock after sleeping keeps the bit (others might still sleep).
    assert_eq!(word_while_waiter_held, tid_word(waiter) | WAITERS);
    assert_eq!(word_of(&m), 0, "unlocking clears the whole word");
    assert_eq!(m.into_inner(), 1);
}

#[test]
fn try_lock_fails_while_held_by_anyone() {
    let m = OwnerMutex::new(5);
    let guard = m.lock();
    assert!(m.try_lock().is_none(), "held by this thread");
    let other = thread::scope(|s| s.spawn(|| m.try_lock().is_none()).join().unwrap());
    assert!(other, "held by another thread");
    assert_eq!(
        word_of(&m),
        tid_word(my_tid()),
        "failed try_lock must not touch the word"
    );
    drop(guard);
    assert_eq!(m.try_lock().as_deref(), Some(&5));
}

#[test]
fn relocking_panics_and_the_unwind_unlocks() {
    let m = OwnerMutex::new(0);
    let relock = panic::catch_unwind(AssertUnwindSafe(|| {
        let _held = m.lock();
        let _again = m.lock();
    }));
    assert!(
        relock.is_err(),
        "locking twice from one thread must panic, not sleep"
    );
    assert_eq!((word_of(&m), m.owner()), (0, None));
    assert!(m.try_lock().is_some());
}

#[test]
fn panic_while_held_unlocks_without_poisoning() {
    let m = OwnerMutex::new(Vec::new());
    let outcome = thread::scope(|s| {
        s.spawn(|| {
            let mut v = m.lock();
            v.push(1);
            panic!("half-way through an update");
        })
        .join()
    });
    assert!(outcome.is_err());
    assert_eq!((word_of(&m), m.owner()), (0, None));
    // No poisoning: the next holder sees what the panicking thread left.
    assert_eq!(*m.lock(), [1]);
}

#[test]
fn contended_wait_names_the_owner_in_uaddr2() {
    let lock = RawLock::new(Recorder::default());
    let owner = my_tid();
    lock.lock();
    let waiter = thread::scope(|s| {
        let waiter = s.spawn(|| {
            lock.lock();
            lock.unlock();
            my_tid()
        });
        let _ = eventually(|| !lock.sys.waits().is_empty());
        lock.unlock();
        waiter.join().unwrap()
    });
    let waits = lock.sys.waits();
    assert!(!waits.is_empty(), "the contender never called FUTEX_WAIT");
    for wait in &waits {
        assert_eq!(
            *wait,
            Call {
                op: FUTEX_WAIT_PRIVATE,
                val: tid_word(owner) | WAITERS,
                uaddr2: usize::try_from(owner).unwrap(),
            },
            "the wait must sleep on the word it saw and name its owner"
        );
    }
    // Both unlocks found the waiters bit: the owner's wakes the sleeper, and the sleeper, which
    // took the lock with the bit kept, wakes once more. Neither carries a hint.
    let wake = Call {
        op: FUTEX_WAKE_PRIVATE,
        val: 1,
        uaddr2: 0,
    };
    let wakes: Vec<Call> = lock
        .sys
        .calls()
        .into_iter()
        .filter(|c| c.op != FUTEX_WAIT_PRIVATE)
        .collect();
    assert_eq!(wakes, [wake, wake]);
    assert_ne!(waiter, owner);
    assert_eq!(lock.word.load(Ordering::SeqCst), 0);
}

#[test]
fn the_hint_follows_the_current_owner() {
    // The contender sees a lock word naming a thread other than the one it first met: each
    // sleep passes the TID in the word it is about to sleep on.
    let lock = RawLock::new(Recorder::default());
    // TIDs no thread can have (above PID_MAX_LIMIT), so neither is the contender's own.
    let fake_owner = i32::try_from(TID_MASK).unwrap() - 1;
    lock.word.store(tid_word(fake_owner), Ordering::SeqCst);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            lock.lock();
            lock.unlock();
        });
        let _ = eventually(|| !lock.sys.waits().is_empty());
        // Hand the lock to a second (pretend) owner, waking the sleeper, then release it.
        let second = fake_owner + 1;
        lock.word
            .store(tid_word(second) | WAITERS, Ordering::SeqCst);
        sys::wake(&Kernel, &lock.word, 1).unwrap();
        let second = usize::try_from(second).unwrap();
        let _ = eventually(|| lock.sys.waits().iter().any(|w| w.uaddr2 == second));
        lock.unlock();
        waiter.join().unwrap();
    });
    let hints: Vec<usize> = lock.sys.waits().iter().map(|w| w.uaddr2).collect();
    let first = usize::try_from(fake_owner).unwrap();
    let second = first + 1;
    assert_eq!(hints.first(), Some(&first));
    assert_eq!(hints.last(), Some(&second));
    assert!(hints.iter().all(|&h| h == first || h == second));
}

#[test]
fn uncontended_use_makes_no_futex_call() {
    let lock = RawLock::new(Recorder::default());
    for _ in 0..3 {
        lock.lock();
        lock.unlock();
    }
    assert!(lock.try_lock());
    lock.unlock();
    assert_eq!(lock.sys.calls(), []);
}

#[test]
fn futex_wait_hinted_passes_the_hint_or_none() {
    let rec = Recorder::default();
    let word = AtomicU32::new(7);
    // The word is not 8, so each call returns at once with EAGAIN.
    for (owner, hint) in [(4321, 4321), (0, 0), (-1, 0)] {
        let err = sys::wait_hinted(&rec, &word, 8, owner).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EAGAIN));
        assert_eq!(
            rec.calls().last(),
            Some(&Call {
                op: FUTEX_WAIT_PRIVATE,
                val: 8,
                uaddr2: hint
            })
        );
    }
}

#[test]
fn futex_wait_hinted_is_futex_wait() {
    let word = AtomicU32::new(1);
    let err = futex_wait_hinted(&word, 2, my_tid()).unwrap_err();
    assert_eq!(
        err.raw_os_error(),
        Some(libc::EAGAIN),
        "word differs: no sleep"
    );

    let word = AtomicU32::new(0);
    let owner = my_tid();
    thread::scope(|s| {
        let sleeper = s.spawn(|| {
            while word.load(Ordering::SeqCst) == 0 {
                match futex_wait_hinted(&word, 0, owner) {
                    Ok(()) => {}
                    Err(e) => assert!(
                        matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)),
                        "unexpected error {e}"
                    ),
                }
            }
        });
        word.store(1, Ordering::SeqCst);
        sys::wake(&Kernel, &word, 1).unwrap();
        sleeper.join().unwrap();
    });
}

#[test]
fn tid_is_cached_per_thread() {
    let first = sys::current_tid();
    assert_eq!(first, my_tid());
    assert_eq!(sys::current_tid(), first);
    assert_eq!(u32::try_from(first).unwrap() & !TID_MASK, 0);
    let other = thread::scope(|s| s.spawn(sys::current_tid).join().unwrap());
    assert_ne!(other, first);
}

#[test]
fn forked_child_uses_its_own_tid() {
    let parent = sys::current_tid();
    assert_ne!(parent, 0);
    // SAFETY: the child is a copy of a threaded process, so it only does async-signal-safe
    // things: reads and writes a thread-local integer, makes the gettid system call, loads
    // atomics of an already completed `Once`, and leaves with _exit (no destructors, no
    // allocation, no locks).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", io::Error::last_os_error());
    if pid == 0 {
        let ok = sys::current_tid() == sys::gettid();
        // SAFETY: _exit ends the child at once, which is the point.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: `pid` is this process's child and `status` a valid place for its exit status.
    let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(reaped, pid);
    assert!(libc::WIFEXITED(status), "child status {status:#x}");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "the child locked with its parent's TID"
    );
    assert_eq!(sys::current_tid(), parent);
}

#[test]
fn data_access_without_locking() {
    let mut m = OwnerMutex::<String>::default();
    m.get_mut().push_str("frame");
    assert_eq!(word_of(&m), 0, "get_mut does not lock");
    assert_eq!(
        format!("{m:?}"),
        r#"OwnerMutex { owner: None, data: "frame" }"#
    );
    {
        let g = m.lock();
        assert_eq!(g.to_string(), "frame");
        let shown = format!("{m:?}");
        assert!(shown.contains("<locked>") && shown.contains(&my_tid().to_string()));
    }
    assert_eq!(OwnerMutex::from(3).into_inner(), 3);
    assert_eq!(m.into_inner(), "frame");
}

#[test]
fn shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OwnerMutex<Vec<u8>>>();
    assert_send_sync::<OwnerMutex<std::cell::Cell<u8>>>(); // Send is enough for Sync
    fn assert_sync<T: Sync>() {}
    assert_sync::<super::OwnerMutexGuard<'static, u8>>();
}
