//! The gates: which hook events may reach the engine at all.
//!
//! A platform's hooks fire on every lock operation and every scheduler event in the system, and
//! almost none of them can change anything. So after every engine call the platform publishes
//! one word of these bits ([`Engine::published`](super::Engine::published)), and each hook
//! tests its bit with one lock-free load before it does any work: a clear bit proves that the
//! event it gates cannot change the engine's state, so the hook returns at once. The engine
//! decides the bits; a platform only stores them and tests them. The kernel module's C side
//! gets them as `SP_GATE_*` (generated into `superpass_consts.h`).
//!
//! "On" below means the fast track is enabled. A disabled engine holds no grant and tracks no
//! wait, so most gates need it on; [`BOOSTING`] and [`TASKS`] do not, because the scheduler
//! and exit hooks must still reach a task that is boosted or critical while the engine turns
//! off.

/// Lock-wait starts and ends (mutex, rwsem, futex, PI futex), rwsem writer changes and wakes on
/// a lock a tracked wait may be on, and the platform's own record of waits in progress: set
/// while on and anything is critical or boosted, the only tasks whose waits are tracked.
pub const WAITS: u32 = 1 << 0;
/// rwsem reader entries and exits (the platform's reader record): set while on and anything is
/// critical, because a critical writer's wait must find readers that entered before it.
pub const OWNERS: u32 = 1 << 1;
/// Mutex acquires and releases, and the waiter a mutex release wakes: set while on and anything
/// is boosted (a release ends the holder's grant) or a wait is tracked (a new owner may take
/// the lock from under the waiter and must be boosted in turn).
pub const OWNERSHIP: u32 = 1 << 2;
/// Owner-hinted futex wait ends and futex wakes: set while on and a tracked wait is an
/// owner-hinted futex wait ([`LockKind::Futex`](super::LockKind::Futex)).
pub const FUTEX_WAITS: u32 = 1 << 3;
/// Scheduler events (enqueue, pick, preempt, placement, tick, clamps, misfit): set while
/// anything is boosted, on or not.
pub const BOOSTING: u32 = 1 << 4;
/// Task exits: set while anything is critical or boosted, on or not, so that the engine
/// forgets an exiting task it still names.
pub const TASKS: u32 = 1 << 5;
/// The sleep of a waiter a release woke, critical or a chain's link (its retry lost the lock
/// again): set while on
/// and such a waiter exists ([`Engine::woken_lanes`](super::Engine::woken_lanes) is not 0).
pub const WOKEN: u32 = 1 << 6;
/// Ticks while nothing is boosted: set while on and a task revoked on its budget awaits its
/// next throttle window to be granted again
/// ([`Engine::regrants_pending`](super::Engine::regrants_pending)).
pub const REGRANT: u32 = 1 << 7;

/// Every gate with its name, in bit order, for generated headers and tests.
pub const ALL: [(&str, u32); 8] = [
    ("waits", WAITS),
    ("owners", OWNERS),
    ("ownership", OWNERSHIP),
    ("futex_waits", FUTEX_WAITS),
    ("boosting", BOOSTING),
    ("tasks", TASKS),
    ("woken", WOKEN),
    ("regrant", REGRANT),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gate_is_its_own_bit_in_order() {
        for (i, (name, bit)) in ALL.iter().enumerate() {
            assert_eq!(*bit, 1 << i, "{name}");
        }
    }
}
