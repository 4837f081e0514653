//! Every bound the policy obeys, with its default, its range and its validation.
//!
//! Bounds are what make the fast track safe to ship: each hook does bounded work and each boosted
//! task gets bounded CPU. Memory is sized at compile time for the *largest* allowed value
//! (the `MAX_*` constants); a tunable picks the effective bound below it at run time.
//! `docs/tunables.md` lists the same table; a test keeps the two in agreement.

use super::abi::AbiError;

/// Compile-time capacity of the critical set.
pub const MAX_CRITICAL: usize = 32;
/// Compile-time capacity of the lock table (a multiple of [`LOCK_WAYS`]).
pub const MAX_LOCK_SLOTS: usize = 256;
/// Associativity of the lock table: a lock may live in any of this many slots of its set.
pub const LOCK_WAYS: usize = 8;
/// Compile-time capacity of tracked readers per rwsem.
pub const MAX_READERS: usize = 8;
/// Compile-time bound on blocker-chain depth.
pub const MAX_DEPTH: usize = 8;
/// Compile-time capacity of the grant table (and of the boosted-task table).
pub const MAX_GRANTS: usize = 64;
/// Compile-time capacity of each CPU's fast-track queue.
pub const MAX_QUEUE: usize = 16;
/// How many entries of a futex hash-bucket chain a futex wake examines for tracked waiters of
/// the woken futex (the chain is walked under the bucket's spinlock, so the walk is bounded).
pub const MAX_FUTEX_SCAN: usize = 8;
/// How many threads of a binder server's pool a queued critical call examines for busy ones
/// (the pool's thread tree is walked under the pool's spinlock, so the walk is bounded); the
/// busy threads found, at most `max_pool_candidates` of them, become the call's blockers.
pub const MAX_POOL_SCAN: usize = 16;
/// [`lock_lane`](super::lock_lane) takes a lock's address in units of `1 << LOCK_LANE_SHIFT`
/// bytes (a cache line), so that two locks in one structure share a lane only if they share a
/// line.
pub const LOCK_LANE_SHIFT: u32 = 6;
/// The module's lock-free record of rwsem readers: `READER_TABLE_SETS` sets (picked by a hash
/// of the lock) of `READER_TABLE_WAYS` entries, each a (lock hash, TID) pair. A reader takes a
/// free entry of its lock's set as it enters and clears it as it leaves, without the engine
/// lock; when a critical thread starts waiting on the rwsem, the set's entries for that lock
/// are the readers the engine learns ([`Event::LockSeen`](super::Event::LockSeen)). A
/// reader that finds its set full is not recorded.
pub const READER_TABLE_SETS: usize = 128;
/// Entries per set of the module's reader record (see [`READER_TABLE_SETS`]): the most readers
/// of one rwsem it can name at a wait start.
pub const READER_TABLE_WAYS: usize = 16;
/// The module's lock-free record of the mutex and rwsem waits (and synchronous binder calls) in
/// progress: `WAIT_TABLE_SLOTS`
/// entries, each (TID, lock, kind, owner at the wait's start), picked by TID. Every such wait
/// writes its waiter's entry while a critical thread is registered, untracked waiters' too, and
/// clears it as it ends, without the engine lock. A blocker granted while already asleep in one
/// of these waits has it reported then, so the chain reaches the task it waits for; a waiter
/// whose slot another waiter took is not found, and its chain ends there as before.
pub const WAIT_TABLE_SLOTS: usize = 256;

/// One tunable's metadata: the single source for validation, docs and the service's `set`.
#[derive(Clone, Copy, Debug)]
pub struct TunableDesc {
    /// The key used by the ABI docs, the service (`set <key> <value>`) and docs/tunables.md.
    pub name: &'static str,
    /// The default value.
    pub default: u64,
    /// The smallest accepted value.
    pub min: u64,
    /// The largest accepted value.
    pub max: u64,
    /// The unit of the value.
    pub unit: &'static str,
    /// One sentence on what it bounds.
    pub doc: &'static str,
}

/// Declares the tunables once, in ABI order: their table ([`TUNABLES`], [`NUM_TUNABLES`]),
/// the [`Tunables`] struct, its defaults and its conversions to and from the ABI's array.
macro_rules! tunables {
    ($($field:ident: $ty:ty = {
        default: $default:expr,
        min: $min:expr,
        max: $max:expr,
        unit: $unit:literal,
        doc: $doc:literal $(,)?
    }),* $(,)?) => {
        /// The number of tunables.
        pub const NUM_TUNABLES: usize = [$(stringify!($field)),*].len();

        /// Every tunable in ABI order (the order of [`Tunables::to_array`]).
        pub const TUNABLES: [TunableDesc; NUM_TUNABLES] = [$(TunableDesc {
            name: stringify!($field),
            default: $default,
            min: $min,
            max: $max,
            unit: $unit,
            doc: $doc,
        }),*];

        /// The effective bounds of a running engine.
        ///
        /// # Invariants
        ///
        /// A `Tunables` held by an engine always passes [`Tunables::validate`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Tunables {
            $(
                #[doc = concat!("See [`TUNABLES`]: `", stringify!($field), "`.")]
                pub $field: $ty,
            )*
        }

        impl Tunables {
            /// The documented defaults.
            pub const DEFAULT: Self = Self { $($field: $default as $ty),* };

            const fn from_array_unchecked(v: &[u64; NUM_TUNABLES]) -> Self {
                let [$($field),*] = *v;
                Self { $($field: $field as $ty),* }
            }

            /// The values in [`TUNABLES`] order.
            pub const fn to_array(&self) -> [u64; NUM_TUNABLES] {
                [$(self.$field as u64),*]
            }
        }
    };
}

tunables! {
    max_critical: u32 = {
        default: 32,
        min: 1,
        max: MAX_CRITICAL as u64,
        unit: "threads",
        doc: "How many threads may be registered as critical at once.",
    },
    max_depth: u32 = {
        default: 3,
        min: 1,
        max: MAX_DEPTH as u64,
        unit: "links",
        doc: "How deep a chain of blockers is followed (1 = direct blockers only).",
    },
    max_readers: u32 = {
        default: 4,
        min: 0,
        max: MAX_READERS as u64,
        unit: "readers",
        doc: "How many concurrent readers are tracked per rwsem; further readers are counted as missed.",
    },
    lock_slots: u32 = {
        default: 64,
        min: LOCK_WAYS as u64,
        max: MAX_LOCK_SLOTS as u64,
        unit: "locks",
        doc: "How many locks are tracked at once (a multiple of 8); changing it clears the table.",
    },
    max_grants: u32 = {
        default: 32,
        min: 1,
        max: MAX_GRANTS as u64,
        unit: "grants",
        doc: "How many (blocker, waiter) grants may be live at once.",
    },
    queue_cap: u32 = {
        default: 8,
        min: 1,
        max: MAX_QUEUE as u64,
        unit: "tasks",
        doc: "How many fast-tracked tasks each CPU queues; more are left to the stock scheduler.",
    },
    slice_ns: u64 = {
        default: 2_000_000,
        min: 100_000,
        max: 20_000_000,
        unit: "ns",
        doc: "How long a fast-tracked task runs before the next fast-tracked task on its CPU gets a turn.",
    },
    budget_ns: u64 = {
        default: 16_000_000,
        min: 500_000,
        max: 100_000_000,
        unit: "ns",
        doc: "How much fast-tracked CPU time a boosted task gets before its grants are revoked (it may be granted again a throttle window later).",
    },
    throttle_window_ns: u64 = {
        default: 100_000_000,
        min: 10_000_000,
        max: 1_000_000_000,
        unit: "ns",
        doc: "The window over which each CPU's fast-track share is measured.",
    },
    throttle_max_pct: u32 = {
        default: 50,
        min: 1,
        max: 100,
        unit: "%",
        doc: "The largest share of a window a CPU may spend running fast-tracked tasks.",
    },
    probe_linger_ns: u64 = {
        default: 1_000_000_000,
        min: 10_000_000,
        max: 600_000_000_000,
        unit: "ns",
        doc: "How long the probes of every lock operation (mutex and rwsem owners, rwsem readers) stay attached after the last tracked wait or boost that needed them; each attach and detach patches kernel text, so this also bounds how often that happens.",
    },
    boost_uclamp_min: u32 = {
        default: 1024,
        min: 0,
        max: 1024,
        unit: "capacity",
        doc: "The uclamp.min a boosted task gets while its grant lasts, on a kernel with uclamp (0: none); it applies from the task's next enqueue.",
    },
    wake_slice_ns: u64 = {
        default: 1_000_000,
        min: 0,
        max: 20_000_000,
        unit: "ns",
        doc: "How long a critical thread that a release woke out of a tracked wait, or that was preempted inside one before it slept or (once) after it ended and before it slept, may run on the fast track (its wake or wait turn) before the turn ends; the turn ends sooner when its retry takes the lock or the thread sleeps, and counts against the budget and the CPU's share (it runs on a throttled CPU too). It also bounds how long a releaser keeps its grant while its wake is in flight to a woken waiter that is not on the fast track (one on it keeps the releaser's grant until it is runnable, within the budget; 0: no wake turns, and a releaser's grant ends with its release).",
    },
    push_min_prio: u32 = {
        default: 121,
        min: 100,
        max: 140,
        unit: "prio",
        doc: "A boosted blocker running or queued on a CPU slower than the fastest is pushed, the moment it is boosted, to the fastest CPU it may use that is idle or runs a fair task of this static priority or lower (the kernel's prio, 120 + nice: the default 121 displaces only background priorities, nice 1 and up); never to a CPU running a critical thread, another boosted task or an RT task, nor a running blocker to the CPU a critical thread's wait started on. 140: push to idle CPUs only.",
    },
    readers_while_critical: u32 = {
        default: 1,
        min: 0,
        max: 1,
        unit: "flag",
        doc: "1: the rwsem reader probes (and the percpu rw-semaphore writer record) stay attached while any critical thread is registered, so a critical writer's first wait of a contention episode sees the readers that entered before it, and a critical reader of a percpu rw-semaphore the writer that holds it; 0: only while a tracked rwsem wait needs them (and probe_linger_ns after), which spares every down_read, page fault and file write their cost while nothing contends, but misses the holders that entered before the episode's first wait.",
    },
    max_pool_candidates: u32 = {
        default: 2,
        min: 0,
        max: MAX_READERS as u64,
        unit: "threads",
        doc: "When a critical thread's synchronous binder call finds no free thread in the server's pool and is queued, how many of the pool's busy threads become its blockers until one takes the call (they are the call's readers, so max_readers bounds them too; 0: none).",
    },
    queue_first: u32 = {
        default: 1,
        min: 0,
        max: 1,
        unit: "flag",
        doc: "1: a critical or boosted thread that waits on a futex is queued ahead of the futex's waiters of its priority (android_vh_alter_futex_plist_add), so the release that wakes one waiter wakes it, not a background thread that queued first and would run its own critical section before it; 0: the kernel's order, first come, first woken.",
    },
    locate_window_ns: u64 = {
        default: 4_000_000,
        min: 0,
        max: 100_000_000,
        unit: "ns",
        doc: "How long after its boost a boosted task that was not found on a runqueue (asleep, or joining one as it was boosted, before its enqueue could be reported) makes the picks of the CPU its task record names (task_cpu(): the one it joins, or last ran on) look for it, or every CPU's if the platform named none; after that it is taken to be asleep, and only its next enqueue, which is reported, places it. Longer finds a late joiner on a CPU that picks seldom; shorter spares that CPU's picks while a boosted holder sleeps (in I/O, say).",
    },
}

impl Default for Tunables {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Tunables {
    /// Builds tunables from values in [`TUNABLES`] order, validating every one.
    pub fn from_array(v: &[u64; NUM_TUNABLES]) -> Result<Self, AbiError> {
        for (d, &x) in TUNABLES.iter().zip(v.iter()) {
            check(d, x)?;
        }
        let t = Self::from_array_unchecked(v);
        t.validate()?;
        Ok(t)
    }

    /// Checks every value against its range and the cross-field rules.
    pub fn validate(&self) -> Result<(), AbiError> {
        for (d, x) in TUNABLES.iter().zip(self.to_array()) {
            check(d, x)?;
        }
        if (self.lock_slots as usize) % LOCK_WAYS != 0 {
            return Err(AbiError::BadValue);
        }
        // A slice longer than the budget would never rotate before revocation.
        if self.slice_ns > self.budget_ns {
            return Err(AbiError::BadValue);
        }
        // A wake turn longer than the budget would end on the budget, and be cooled like a
        // blocker's.
        if self.wake_slice_ns > self.budget_ns {
            return Err(AbiError::BadValue);
        }
        Ok(())
    }

    /// The value of the tunable called `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        let i = TUNABLES.iter().position(|d| d.name == name)?;
        self.to_array().get(i).copied()
    }

    /// Sets the tunable called `name`, leaving `self` unchanged if the result is invalid.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), AbiError> {
        let i = TUNABLES
            .iter()
            .position(|d| d.name == name)
            .ok_or(AbiError::UnknownTunable)?;
        let mut v = self.to_array();
        *v.get_mut(i).ok_or(AbiError::UnknownTunable)? = value;
        *self = Self::from_array(&v)?;
        Ok(())
    }
}

fn check(d: &TunableDesc, x: u64) -> Result<(), AbiError> {
    if x < d.min || x > d.max {
        Err(AbiError::BadValue)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_match_table() {
        let t = Tunables::default();
        t.validate().unwrap();
        for (d, v) in TUNABLES.iter().zip(t.to_array()) {
            assert_eq!(d.default, v, "{}", d.name);
            assert!(d.min <= d.default && d.default <= d.max, "{}", d.name);
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in TUNABLES.iter().enumerate() {
            for b in &TUNABLES[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn set_validates_and_keeps_old_value_on_error() {
        let mut t = Tunables::default();
        assert_eq!(t.set("max_depth", 0), Err(AbiError::BadValue));
        assert_eq!(t.set("max_depth", 9), Err(AbiError::BadValue));
        assert_eq!(t.get("max_depth"), Some(3));
        t.set("max_depth", 8).unwrap();
        assert_eq!(t.max_depth, 8);
        assert_eq!(t.set("lock_slots", 12), Err(AbiError::BadValue));
        assert_eq!(t.set("nope", 1), Err(AbiError::UnknownTunable));
        assert_eq!(
            t.set("slice_ns", t.budget_ns + 1_000_000),
            Err(AbiError::BadValue)
        );
        assert_eq!(t.slice_ns, 2_000_000);
    }

    #[test]
    fn roundtrip_array() {
        let mut t = Tunables::default();
        t.set("budget_ns", 12_345_678).unwrap();
        assert_eq!(Tunables::from_array(&t.to_array()).unwrap(), t);
    }
}
