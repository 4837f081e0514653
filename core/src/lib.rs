//! The SuperPass policy engine and the `/dev/superpass` ABI.
//!
//! Everything SuperPass *decides* lives here: which threads are critical, which threads block
//! them, which blockers get the fast track, for how long, and what the counters say. The kernel
//! module, the simulator and the HAL service all compile this one crate, so the policy measured
//! in the simulator is the policy that runs in the kernel.
//!
//! The crate is `#![no_std]`, allocates nothing, uses no floating point (the kernel forbids it)
//! and has no `unsafe` and no dependencies. The kernel module includes it with
//! `#[path = ".../core/src/lib.rs"] mod superpass_core;`, so every module file is declared with a
//! plain `mod name;` next to this file and no item names the crate by `crate::` paths that would
//! break under `#[path]` inclusion: inside the crate, modules refer to each other with `super::`.
//!
//! Time, task identity and CPU are plain integers passed in by the caller (nanoseconds, kernel
//! TIDs, CPU numbers). The engine never asks the platform for anything; the glue in [`platform`]
//! does, through the small [`platform::Platform`] trait each platform implements once.
//!
//! Data flow: platform hooks report [`Event`]s through the glue in [`platform`], which hands
//! them to [`Engine::handle`] and applies the [`Answer`]; the engine consults [`critical`], feeds the
//! [`detector`], turns the blockers it names into grants held by [`fasttrack`], and accounts
//! everything in [`stats`], all bounded by [`tunables`]. After each call the platform stores
//! [`Engine::published`], whose [`gates`] and lanes its hooks test lock-free to keep unrelated
//! events out of the engine. [`abi`] decodes and encodes the ioctl messages and
//! [`Engine::ioctl`] applies them.

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// In the kernel a panic is a BUG() under the engine's IRQ-off spinlock: core's own code never
// panics (tests may).
#![cfg_attr(
    not(test),
    deny(
        clippy::expect_used,
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::unreachable
    )
)]

pub mod abi;
pub mod critical;
pub mod detector;
pub mod engine;
pub mod event;
pub mod fasttrack;
pub mod filter;
pub mod gates;
pub mod observer;
pub mod platform;
pub mod probes;
pub mod pushes;
pub mod stats;
pub mod tunables;
pub mod wakes;

pub use engine::{Boosted, Engine, Published};
pub use event::{Answer, Event, Running};
pub use observer::{NoObserver, Observer, RevokeReason};
pub use pushes::Pushed;

/// A kernel thread id (`pid_t`); values `<= 0` never name a task.
pub type Tid = i32;
/// A lock's identity: its kernel address, or any unique id in the simulator.
pub type LockId = u64;
/// A monotonic timestamp or duration in nanoseconds.
pub type Nanos = u64;
/// A CPU number.
pub type Cpu = u32;

/// The most CPUs the per-CPU state covers; CPUs at or above this are never fast-tracked.
pub const MAX_CPUS: usize = 64;

/// The kind of lock a thread waits for, as the lock hooks report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum LockKind {
    /// A sleeping `struct mutex`: one owner.
    Mutex = 0,
    /// The read side of a `struct rw_semaphore`: blocked by the writer.
    RwsemRead = 1,
    /// The write side of a `struct rw_semaphore`: blocked by the writer or by the readers.
    RwsemWrite = 2,
    /// A user-space futex whose waiter named the owner (an owner-hinted `FUTEX_WAIT`): one owner.
    Futex = 3,
    /// An `rt_mutex`: on Android a PI futex (`FUTEX_LOCK_PI`), whose owner the kernel records.
    PiFutex = 4,
    /// A synchronous binder transaction ([`binder_txn_lock`]): its caller waits for the server
    /// thread that took it (its owner), or, while it is queued with no pool thread free, for
    /// the target pool's busy threads (reported as its readers).
    Binder = 5,
}

impl LockKind {
    /// Every kind, by encoding (`ALL[i] as u32 == i`), for generated tables.
    pub const ALL: [Self; 6] = [
        Self::Mutex,
        Self::RwsemRead,
        Self::RwsemWrite,
        Self::Futex,
        Self::PiFutex,
        Self::Binder,
    ];

    /// Decodes the ABI/trace encoding of a lock kind.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Mutex),
            1 => Some(Self::RwsemRead),
            2 => Some(Self::RwsemWrite),
            3 => Some(Self::Futex),
            4 => Some(Self::PiFutex),
            5 => Some(Self::Binder),
            _ => None,
        }
    }

    /// The name used in traces and docs.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mutex => "mutex",
            Self::RwsemRead => "rwsem-read",
            Self::RwsemWrite => "rwsem-write",
            Self::Futex => "futex",
            Self::PiFutex => "pi-futex",
            Self::Binder => "binder",
        }
    }

    /// Whether the lock has one owner and no readers.
    pub const fn exclusive(self) -> bool {
        matches!(self, Self::Mutex | Self::Futex | Self::PiFutex)
    }
}

/// The lock identity of `waiter`'s owner-hinted futex wait.
///
/// Futex wait hooks name no futex, so each waiter's futex wait is its own lock: the wait
/// hooks and the wake hook (which finds the queued waiter) all name it the same way. The tag
/// in the top bits keeps these ids apart from kernel addresses (`0xffff...`) and from the
/// simulator's small lock numbers.
pub const fn futex_wait_lock(waiter: Tid) -> LockId {
    FUTEX_WAIT_LOCK_TAG | waiter as u32 as u64
}

/// The lane of `lock` in [`Engine::lock_lanes`]: its address in 64-byte units, modulo 64.
///
/// Kernel locks sit in different structures, so their cache lines (and lanes) mostly differ.
/// The module computes the same from [`tunables::LOCK_LANE_SHIFT`] (a generated C constant).
pub const fn lock_lane(lock: LockId) -> u32 {
    ((lock >> tunables::LOCK_LANE_SHIFT) % 64) as u32
}

/// The tag of [`futex_wait_lock`] ids ("SPFX" in the top 32 bits).
pub const FUTEX_WAIT_LOCK_TAG: LockId = 0x5350_4658 << 32;

/// The lock identity of the binder transaction whose `debug_id` is `debug_id`.
///
/// A transaction's address is reused once it is freed, but its `debug_id` is not (binder
/// numbers every transaction from one counter): the caller's wait, the server's pickup and the
/// reply all name it the same way, and a later transaction at the same address is another
/// lock. The tag in the top bits keeps these ids apart from kernel addresses and from
/// [`futex_wait_lock`] ids.
pub const fn binder_txn_lock(debug_id: u32) -> LockId {
    BINDER_TXN_LOCK_TAG | debug_id as u64
}

/// The tag of [`binder_txn_lock`] ids ("SPBD" in the top 32 bits).
pub const BINDER_TXN_LOCK_TAG: LockId = 0x5350_4244 << 32;

/// Whether `lock` is a [`binder_txn_lock`] id.
pub const fn is_binder_txn_lock(lock: LockId) -> bool {
    lock >> 32 == BINDER_TXN_LOCK_TAG >> 32
}

/// What a critical thread does for the user; the role is reported, not weighted, by the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Role {
    /// The foreground app's UI (main) thread.
    Ui = 0,
    /// The foreground app's RenderThread.
    Render = 1,
    /// Any other latency-critical thread a client registers.
    Other = 2,
}

impl Role {
    /// Every role, by encoding (`ALL[i] as u32 == i`), for generated tables.
    pub const ALL: [Self; 3] = [Self::Ui, Self::Render, Self::Other];

    /// Decodes the ABI encoding of a role.
    pub const fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Ui),
            1 => Some(Self::Render),
            2 => Some(Self::Other),
            _ => None,
        }
    }

    /// The name used in the service, traces and docs.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ui => "ui",
            Self::Render => "render",
            Self::Other => "other",
        }
    }
}
