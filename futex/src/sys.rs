//! The system calls: futex(2) behind a small seam, and the caller's TID, cached per thread.

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32};
use std::sync::Once;

/// `FUTEX_WAIT` on process-private memory (libc has the parts, not the `<linux/futex.h>` name).
pub(crate) const FUTEX_WAIT_PRIVATE: libc::c_int = libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG;
/// `FUTEX_WAKE` on process-private memory.
pub(crate) const FUTEX_WAKE_PRIVATE: libc::c_int = libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG;

/// The one futex(2) call the lock makes, as a seam so tests can see its arguments.
///
/// Production code uses [`Kernel`]; the unit tests put a recorder in its place that logs each
/// call's operation, value and `uaddr2` before passing it on to the kernel.
pub(crate) trait FutexCall {
    /// Calls `futex(word, op, val, NULL, uaddr2, 0)` and returns its non-negative result.
    ///
    /// `uaddr2` is a plain number here (for the wait, the owner hint), not an address.
    fn futex(
        &self,
        word: &AtomicU32,
        op: libc::c_int,
        val: u32,
        uaddr2: usize,
    ) -> io::Result<libc::c_long>;
}

/// The real futex(2) system call.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Kernel;

impl FutexCall for Kernel {
    fn futex(
        &self,
        word: &AtomicU32,
        op: libc::c_int,
        val: u32,
        uaddr2: usize,
    ) -> io::Result<libc::c_long> {
        // The hint is a TID carried in a pointer-sized argument: it gets no provenance because
        // the kernel never dereferences it (stock kernels ignore uaddr2 for FUTEX_WAIT and
        // FUTEX_WAKE; superpass.ko reads it as a number).
        let uaddr2 = std::ptr::without_provenance::<u32>(uaddr2);
        // SAFETY: `word` is a live, aligned 32-bit atomic borrowed for the whole call, which is
        // all FUTEX_WAIT and FUTEX_WAKE read; the timeout is NULL (sleep until woken), uaddr2 is
        // not dereferenced (see above) and val3 is unused by these operations. The kernel only
        // reads the word atomically, so sharing it with Rust atomics is sound.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                op,
                val,
                std::ptr::null::<libc::timespec>(),
                uaddr2,
                0u32,
            )
        };
        if ret < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(ret)
        }
    }
}

/// The `uaddr2` value that names `owner_tid`: the TID itself, or 0 (no hint) if it is not positive.
pub(crate) fn hint(owner_tid: i32) -> usize {
    usize::try_from(owner_tid).unwrap_or(0)
}

/// Sleeps on `word` while it holds `val`, naming `owner_tid` as the holder, through `sys`.
pub(crate) fn wait_hinted(
    sys: &impl FutexCall,
    word: &AtomicU32,
    val: u32,
    owner_tid: i32,
) -> io::Result<()> {
    sys.futex(word, FUTEX_WAIT_PRIVATE, val, hint(owner_tid))
        .map(drop)
}

/// Wakes at most `n` threads sleeping on `word`, through `sys`; returns how many woke.
pub(crate) fn wake(sys: &impl FutexCall, word: &AtomicU32, n: u32) -> io::Result<libc::c_long> {
    sys.futex(word, FUTEX_WAKE_PRIVATE, n, 0)
}

thread_local! {
    /// This thread's TID, or 0 until first asked (and again in a forked child).
    ///
    /// Const-initialised and without a destructor, so reading it costs one TLS load, is
    /// possible during thread teardown, and is safe from a fork handler.
    static TID: Cell<i32> = const { Cell::new(0) };
}

/// Whether the fork handler that clears the cache in a child is installed.
static FORK_HANDLER: AtomicBool = AtomicBool::new(false);
static FORK_HANDLER_ONCE: Once = Once::new();

/// Runs in the child after fork(2), on the forking thread: its TID changed, so drop the copy.
extern "C" fn forget_tid_in_child() {
    TID.set(0);
}

/// The kernel's TID for the calling thread, by system call.
pub(crate) fn gettid() -> i32 {
    // SAFETY: gettid(2) takes no arguments, cannot fail and touches no memory.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    // TIDs are at most PID_MAX_LIMIT (2^22), so the conversion never fails.
    i32::try_from(tid).unwrap_or(0)
}

/// The calling thread's TID: a thread-local load after the first call, so no system call.
///
/// A forked child gets a new TID while its memory (this cache included) is a copy of the
/// parent's, so the first call in a process installs a pthread_atfork(3) child handler that
/// clears the cache. If that cannot be installed, the TID is not cached at all: a stale TID in a
/// lock word would name the wrong thread.
pub(crate) fn current_tid() -> i32 {
    let cached = TID.get();
    if cached != 0 {
        return cached;
    }
    FORK_HANDLER_ONCE.call_once(|| {
        // SAFETY: the handler is a plain `extern "C" fn()` that lives for the whole program and
        // only stores to a const-initialised, destructor-free thread local (async-signal-safe:
        // no allocation, no locks), which is what may run in a child of a threaded process.
        let ret = unsafe { libc::pthread_atfork(None, None, Some(forget_tid_in_child)) };
        FORK_HANDLER.store(ret == 0, std::sync::atomic::Ordering::Release);
    });
    let tid = gettid();
    if FORK_HANDLER.load(std::sync::atomic::Ordering::Acquire) {
        TID.set(tid);
    }
    tid
}
