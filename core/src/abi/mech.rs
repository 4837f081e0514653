//! Bits of [`StatsMsg::active_mask`]: which hooks and mechanisms the platform attached.

#[cfg(doc)]
use super::StatsMsg;

/// `android_vh_mutex_wait_start` / `_finish`.
pub const MUTEX_WAIT: u64 = 1 << 0;
/// `android_vh_rwsem_read_wait_start` / `_finish`.
pub const RWSEM_READ_WAIT: u64 = 1 << 1;
/// `android_vh_rwsem_write_wait_start` / `_finish`.
pub const RWSEM_WRITE_WAIT: u64 = 1 << 2;
/// rwsem reader-owned record/clear hooks (reader tracking).
pub const RWSEM_READERS: u64 = 1 << 3;
/// rwsem writer-owned record/clear hooks.
pub const RWSEM_WRITER: u64 = 1 << 4;
/// `android_vh_mutex_unlock_slowpath` (release ends grants).
pub const MUTEX_UNLOCK: u64 = 1 << 5;
/// `android_rvh_enqueue_task`.
pub const ENQUEUE: u64 = 1 << 6;
/// `android_rvh_dequeue_task`.
pub const DEQUEUE: u64 = 1 << 7;
/// `android_rvh_replace_next_task_fair`: the fast track itself.
pub const PICK: u64 = 1 << 8;
/// `android_rvh_check_preempt_wakeup_fair`.
pub const PREEMPT: u64 = 1 << 9;
/// `android_rvh_select_task_rq_fair`.
pub const SELECT_CPU: u64 = 1 << 10;
/// The scheduler tick hook.
pub const TICK: u64 = 1 << 11;
/// `android_vh_free_task` (exit cleanup).
pub const TASK_EXIT: u64 = 1 << 12;
/// `android_vh_do_futex` and `android_vh_futex_wait_start` / `_end`: owner-hinted futexes.
pub const FUTEX_HINT: u64 = 1 << 13;
/// `android_vh_futex_wake_traverse_plist` and `android_vh_futex_wake_this`: a futex wake
/// that passes over a tracked waiter boosts the woken thread.
pub const FUTEX_WOKEN: u64 = 1 << 14;
/// `android_vh_rtmutex_wait_start` / `_finish`: PI futexes and rt_mutexes.
pub const PI_FUTEX: u64 = 1 << 15;
/// `android_rvh_uclamp_eff_get`: a boosted task's uclamp.min is raised for its grant (only
/// on a kernel with `CONFIG_UCLAMP_TASK`).
pub const UCLAMP: u64 = 1 << 16;
/// `android_rvh_update_misfit_status` and `android_rvh_can_migrate_task`: a boosted blocker
/// off the fast CPUs is marked misfit, and load balancing keeps it, running, off the
/// critical threads' CPUs.
pub const MISFIT: u64 = 1 << 17;
/// `android_vh_binder_proc_transaction_finish`, `android_vh_binder_restore_priority`,
/// `android_vh_binder_transaction_received` and `android_vh_free_oem_binder_struct`: a critical
/// thread's synchronous binder call is a wait on the server thread that takes it, or on the
/// pool's busy threads while it is queued.
pub const BINDER: u64 = 1 << 18;
/// `android_vh_percpu_rwsem_wq_add`, `android_vh_record_pcpu_rwsem_starttime` and
/// `android_vh_percpu_rwsem_up_write`: a thread queued on a percpu rw-semaphore (the cgroup
/// threadgroup lock a `fork` or `exit` takes for reading) waits on the writer the module
/// recorded taking it.
pub const PCPU_RWSEM: u64 = 1 << 19;
/// `android_vh_alter_futex_plist_add`: a critical or boosted thread's futex wait is queued
/// ahead of the waiters of its priority (`queue_first`).
pub const FUTEX_QUEUE: u64 = 1 << 20;
/// `android_vh_rust_binder_set_priority` and `android_vh_rust_binder_restore_priority`
/// (kernels with Rust Binder): a critical thread's synchronous call waits on the server thread
/// that takes it, from the moment it is taken until the reply. Rust Binder has no hook where a
/// call is queued, so a call no pool thread is free for is not followed.
pub const RUST_BINDER: u64 = 1 << 21;

/// Names of the mechanism bits, by bit number.
pub const MECH_NAMES: [&str; 22] = [
    "mutex_wait",
    "rwsem_read_wait",
    "rwsem_write_wait",
    "rwsem_readers",
    "rwsem_writer",
    "mutex_unlock",
    "enqueue",
    "dequeue",
    "pick",
    "preempt",
    "select_cpu",
    "tick",
    "task_exit",
    "futex_hint",
    "futex_woken",
    "pi_futex",
    "uclamp",
    "misfit",
    "binder",
    "pcpu_rwsem",
    "futex_queue",
    "rust_binder",
];
