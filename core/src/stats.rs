//! Counters and the critical-thread blocking-duration histogram.
//!
//! The product is judged by blocking durations, so the module must be able to report tails
//! without storing samples: a fixed log-linear histogram gives p99.9 within 1% from a few KiB,
//! merges across CPUs by addition, and needs no floating point.

/// The number of counter slots in the ABI (unused slots stay zero, for growth).
pub const NUM_COUNTERS: usize = 48;

/// Declares the counters once: each one's variant, its name in the ABI and its description
/// (the doc comment, which docs/abi.md repeats and `core/tests/docs.rs` checks). Indices follow
/// the order; slots past the last are reserved and stay zero.
macro_rules! counters {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal,)+) => {
        /// A named event counter; the discriminant is its index in [`Stats::counters`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Counter {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Counter {
            /// Every counter, in index order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant),+];
        }

        const _: () = assert!(Counter::ALL.len() <= NUM_COUNTERS, "grow NUM_COUNTERS");

        /// The counters' names, by index; empty names are reserved slots.
        pub const COUNTER_NAMES: [&str; NUM_COUNTERS] = padded([$($name),+]);

        /// The counters' descriptions, by index (their doc comments); empty for reserved slots.
        pub const COUNTER_DOCS: [&str; NUM_COUNTERS] = padded([$(concat!($($doc),+)),+]);
    };
}

/// `items` followed by empty strings up to [`NUM_COUNTERS`] (items past it are dropped; the
/// assertion in `counters!` rules that out).
#[expect(
    clippy::indexing_slicing,
    reason = "only evaluated for constants, where an index out of range fails the build"
)]
const fn padded<const N: usize>(items: [&'static str; N]) -> [&'static str; NUM_COUNTERS] {
    let mut out = [""; NUM_COUNTERS];
    let mut i = 0;
    while i < N && i < NUM_COUNTERS {
        out[i] = items[i];
        i += 1;
    }
    out
}

counters! {
    /// A critical thread started waiting for a lock.
    CriticalWaits = "critical_waits",
    /// A fast-tracked thread started waiting for a lock (a chain link).
    ChainWaits = "chain_waits",
    /// Blockers named by the detector (one per (waiter, blocker) found).
    BlockersFound = "blockers_found",
    /// Grants made.
    Grants = "grants",
    /// Grants ended because the blocker released the lock.
    RevokeReleased = "revoke_released",
    /// Grants ended because the waiter stopped waiting.
    RevokeWaiterDone = "revoke_waiter_done",
    /// Grants ended because the boosted task spent its budget.
    RevokeBudget = "revoke_budget",
    /// Grants ended because the blocker or the waiter exited.
    RevokeExit = "revoke_exit",
    /// Grants ended because SuperPass was disabled.
    RevokeDisabled = "revoke_disabled",
    /// Grants ended because their critical thread was unregistered.
    RevokeUnregistered = "revoke_unregistered",
    /// Grants ended because tunables changed.
    RevokeReconfigured = "revoke_reconfigured",
    /// Grants ended because the link they hung from ended (a chain collapsed).
    RevokeChain = "revoke_chain",
    /// Readers not tracked because a lock already held `max_readers` of them.
    MissedReaders = "missed_readers",
    /// Blockers not granted because the chain was deeper than `max_depth`.
    MissedDepth = "missed_depth",
    /// Locks not tracked because their lock-table set was full of busy entries.
    MissedLocks = "missed_locks",
    /// Blockers not granted because `max_grants` grants were live.
    MissedGrants = "missed_grants",
    /// Fast-tracked tasks left to the stock scheduler because their CPU queue was full.
    MissedQueue = "missed_queue",
    /// Critical waits for which no blocker was known.
    NoBlockerKnown = "no_blocker_known",
    /// Idle lock-table entries evicted to make room.
    LockEvictions = "lock_evictions",
    /// Picks where a fast-tracked task replaced the stock choice.
    Picks = "picks",
    /// Wakeups of fast-tracked tasks that preempted the running task.
    Preempts = "preempts",
    /// Wakeups of fast-tracked tasks steered to an idle CPU.
    SelectIdle = "select_idle",
    /// Slice expiries that rotated a CPU's fast-track queue.
    Rotations = "rotations",
    /// Times a CPU hit its fast-track share and was throttled for the rest of the window.
    Throttles = "throttles",
    /// Nanoseconds fast-tracked tasks ran.
    FastTrackNs = "fast_track_ns",
    /// Nanoseconds critical threads spent blocked (sum of the histogram's samples).
    BlockedNs = "blocked_ns",
    /// Read holds taken on tracked locks.
    ReadersSeen = "readers_seen",
    /// Readers that became tracked (named as blockers), on entry or by taking a departed
    /// tracked reader's place.
    ReadersTracked = "readers_tracked",
    /// Grants to a new holder of a lock that a tracked wait was already on (the lock changed
    /// hands during the wait).
    FollowGrants = "follow_grants",
    /// Grants to a waiter a release woke ahead of a tracked waiter of the same lock.
    HandoffGrants = "handoff_grants",
    /// Wait finishes for another lock than the one the tracked wait was on (a finish the
    /// platform missed); the tracked wait ends anyway.
    StaleWaits = "stale_waits",
    /// Owner-hinted futex waits accepted from tracked threads.
    FutexHints = "futex_hints",
    /// Owner hints refused: not a live thread of the waiter's process, or the waiter itself.
    FutexHintsRejected = "futex_hints_rejected",
    /// New holders of a lock left ungranted because the critical waiter they block was already
    /// woken by a release (it retries first; they are granted if it sleeps again).
    DeferredGrants = "deferred_grants",
    /// Woken critical waiters that lost the lock and slept again: their lock's holders were
    /// granted then.
    ResumedWaits = "resumed_waits",
    /// Grants given again, a throttle window after a budget revoke, to a task that still held a
    /// lock a tracked wait was on.
    BudgetRegrants = "budget_regrants",
    /// Waking boosted tasks placed on the idle CPU their critical thread's wait started on (a
    /// subset of `select_idle`).
    SelectHome = "select_home",
    /// Times a boosted task's effective uclamp.min was raised to `boost_uclamp_min` (each time
    /// the kernel computed it: an enqueue, or a read while it was not enqueued).
    UclampBoosts = "uclamp_boosts",
    /// Times the kernel asked whether a running boosted task fits its CPU and SuperPass said
    /// it does not (a boosted blocker off the fast CPUs), so an idle faster CPU may pull it.
    MisfitMarks = "misfit_marks",
    /// Load-balancing moves refused: a running misfit blocker kept off a CPU a critical
    /// thread's live lock wait started on.
    MigrateVetoes = "migrate_vetoes",
    /// Wake turns: a release woke a critical thread out of a tracked wait (or it joined a
    /// runqueue inside one with no release reported: a PI futex handed over), and it was put on
    /// the fast track itself so that it retries at once.
    WakeGrants = "wake_grants",
    /// Wake turns that ran their whole `wake_slice_ns` without the retry ending.
    RevokeTurnOver = "revoke_turn_over",
    /// Ticks that found a boosted task queued on their CPU while another task ran there (the
    /// kick that should have made the CPU pick it was lost, or came before it was queued), and
    /// made the CPU pick again.
    StrandedPicks = "stranded_picks",
    /// Boosted tasks pushed, just after their boost, from a CPU slower than the fastest to a
    /// faster one: an idle CPU, or one running a task of lower priority than `push_min_prio`
    /// allows to keep its CPU (the platform moves them with the CPU stopper).
    Pushes = "pushes",
    /// Pushed tasks sent back, once their boost ended, to the CPU they were pushed from.
    PushBacks = "push_backs",
    /// Wait turns: a critical thread was preempted inside a tracked wait before it slept (or
    /// after one ended, before it slept, once per wait), and was put on the fast track itself so that it reaches its
    /// sleep, its retry or its return from the lock call at once.
    WaitTurns = "wait_turns",
    /// Chain waits (a fast-tracked thread's own waits) for which no blocker was known;
    /// among them, a percpu rw-semaphore's writer, boosted for the readers queued behind it,
    /// waiting for the readers inside to leave, whom the semaphore does not name.
    ChainNoBlocker = "chain_no_blocker",
    /// Futex waits queued ahead of the waiters of their priority (`queue_first`): a critical
    /// or boosted thread's.
    QueuedFirst = "queued_first",
}

/// Sub-buckets per power of two: 64 keeps the midpoint within 1/128 (0.8%) of any sample.
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Samples below 2^9 ns (~0.5 us) share bucket 0; octaves start there.
const FIRST_OCTAVE_BITS: u32 = 9;
/// 25 octaves reach 2^34 ns (~17 s), past the documented 10 s ceiling.
const OCTAVES: usize = 25;
/// The number of histogram buckets.
pub const HIST_BUCKETS: usize = 1 + OCTAVES * SUB;

/// A log-linear histogram of durations in nanoseconds, exact in count, 0.8% in value.
///
/// # Invariants
///
/// `max`/`min` are the extreme samples recorded; with none, `min` is `u64::MAX` and `max` is 0,
/// so that `min > max` exactly when it is empty.
///
/// The sample count is not kept but summed when asked for: recording is on the path of every
/// critical wait, reading the count is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    buckets: [u64; HIST_BUCKETS],
    max: u64,
    min: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub const fn new() -> Self {
        Self {
            buckets: [0; HIST_BUCKETS],
            max: 0,
            min: u64::MAX,
        }
    }

    /// Rebuilds a histogram from raw bucket counts and the exact extremes (as the ABI carries them).
    pub fn from_parts(buckets: &[u64; HIST_BUCKETS], min: u64, max: u64) -> Self {
        let mut h = Self {
            buckets: *buckets,
            max,
            min,
        };
        if h.count() == 0 {
            (h.min, h.max) = (u64::MAX, 0);
        }
        h
    }

    /// The bucket a sample of `ns` nanoseconds falls in.
    pub const fn index(ns: u64) -> usize {
        if ns < (1 << FIRST_OCTAVE_BITS) {
            return 0;
        }
        let msb = 63 - ns.leading_zeros();
        let octave = (msb - FIRST_OCTAVE_BITS) as usize;
        if octave >= OCTAVES {
            return HIST_BUCKETS - 1;
        }
        let sub = ((ns >> (msb - SUB_BITS)) as usize) & (SUB - 1);
        1 + octave * SUB + sub
    }

    /// The smallest value of bucket `i` and its width.
    pub const fn bucket_range(i: usize) -> (u64, u64) {
        if i == 0 {
            return (0, 1 << FIRST_OCTAVE_BITS);
        }
        let octave = ((i - 1) / SUB) as u32;
        let sub = ((i - 1) % SUB) as u64;
        let shift = octave + FIRST_OCTAVE_BITS - SUB_BITS;
        ((SUB as u64 + sub) << shift, 1 << shift)
    }

    /// Records one sample.
    pub fn record(&mut self, ns: u64) {
        // One sample per critical wait cannot wrap a `u64` (at 10^9 a second it would take
        // centuries), so the add needs no saturation; the counters wrap the same way. `index`
        // is always in range, so the `get_mut` costs no check.
        if let Some(b) = self.buckets.get_mut(Self::index(ns)) {
            *b = b.wrapping_add(1);
        }
        if ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
    }

    /// Adds every sample of `other` (per-CPU histograms merge into one).
    pub fn merge(&mut self, other: &Self) {
        if other.min > other.max {
            // Empty: nothing to add.
            return;
        }
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a = a.saturating_add(*b);
        }
        if other.min < self.min {
            self.min = other.min;
        }
        if other.max > self.max {
            self.max = other.max;
        }
    }

    /// The number of samples (summed over the buckets).
    pub const fn count(&self) -> u64 {
        let mut total = 0u64;
        let mut rest: &[u64] = &self.buckets;
        while let [b, tail @ ..] = rest {
            total = total.saturating_add(*b);
            rest = tail;
        }
        total
    }

    /// The largest sample, exactly (0 if none).
    pub const fn max(&self) -> u64 {
        self.max
    }

    /// The smallest sample, exactly (0 if none).
    pub const fn min(&self) -> u64 {
        if self.min > self.max {
            0
        } else {
            self.min
        }
    }

    /// The raw bucket counts.
    pub const fn buckets(&self) -> &[u64; HIST_BUCKETS] {
        &self.buckets
    }

    /// The value at quantile `per_million` / 1e6 (500_000 = p50, 999_000 = p99.9), or 0 if empty.
    ///
    /// Uses the nearest-rank definition; the answer is the bucket's midpoint clamped to the exact
    /// extremes, so it is within 0.8% of the true sample.
    pub fn percentile(&self, per_million: u32) -> u64 {
        let total = self.count();
        if total == 0 {
            return 0;
        }
        let q = per_million.min(1_000_000) as u64;
        // Nearest rank: ceil(q * n / 1e6), at least 1. With n = a * 1e6 + b that is
        // a * q + ceil(b * q / 1e6): exact, no overflow (a * q <= n, b * q < 1e12), and no
        // 128-bit division (the kernel has no __udivti3).
        let (a, b) = (total / 1_000_000, total % 1_000_000);
        let rank = (a * q + (b * q).div_ceil(1_000_000)).max(1);
        if rank >= total {
            return self.max;
        }
        let mut seen = 0u64;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = Self::bucket_range(i);
                let mid = lo + w / 2;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Forgets every sample.
    pub fn clear(&mut self) {
        // In place: a whole `Histogram` temporary would take 12.8 KiB of (kernel) stack.
        self.buckets.fill(0);
        self.max = 0;
        self.min = u64::MAX;
    }
}

/// The engine's counters and blocking histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Counter values, indexed by [`Counter`].
    pub counters: [u64; NUM_COUNTERS],
    /// Critical-thread blocking durations.
    pub blocking: Histogram,
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Zeroed counters and an empty histogram (`const`, so a kernel module can place an
    /// engine in static memory instead of building it on a 16 KiB stack).
    pub const fn new() -> Self {
        Self {
            counters: [0; NUM_COUNTERS],
            blocking: Histogram::new(),
        }
    }

    /// Adds one to `c`.
    #[inline]
    pub fn bump(&mut self, c: Counter) {
        self.add(c, 1);
    }

    /// Adds `n` to `c`.
    #[inline]
    pub fn add(&mut self, c: Counter, n: u64) {
        // Every `Counter` is below `NUM_COUNTERS`, so the `None` arm compiles away.
        if let Some(v) = self.counters.get_mut(c as usize) {
            *v = v.wrapping_add(n);
        }
    }

    /// The value of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.counters.get(c as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_range_agree() {
        for &v in &[
            0u64,
            1,
            511,
            512,
            513,
            1000,
            1023,
            1024,
            99_999,
            1_000_000,
            10_000_000_000,
        ] {
            let i = Histogram::index(v);
            let (lo, w) = Histogram::bucket_range(i);
            assert!(lo <= v && v < lo + w, "v={v} i={i} lo={lo} w={w}");
        }
        assert_eq!(Histogram::index(u64::MAX), HIST_BUCKETS - 1);
    }

    #[test]
    fn relative_error_at_most_one_percent_from_1us_to_10s() {
        let mut v = 1_000u64;
        while v <= 10_000_000_000 {
            let (lo, w) = Histogram::bucket_range(Histogram::index(v));
            let mid = lo + w / 2;
            let err = mid.abs_diff(v) as f64 / v as f64;
            assert!(err <= 0.01, "v={v} mid={mid} err={err}");
            v = v * 1013 / 1000 + 1;
        }
    }

    #[test]
    fn percentiles_match_sorted_samples() {
        let mut h = Histogram::new();
        let mut samples: [u64; 1000] = [0; 1000];
        for (i, s) in samples.iter_mut().enumerate() {
            *s = 1_000 + (i as u64 * 7919 % 1000) * 37_003;
            h.record(*s);
        }
        samples.sort_unstable();
        for &q in &[500_000u32, 900_000, 990_000, 999_000, 1_000_000] {
            let rank = ((q as u64 * 1000).div_ceil(1_000_000)).max(1) as usize;
            let exact = samples[rank - 1];
            let got = h.percentile(q);
            let err = got.abs_diff(exact) as f64 / exact as f64;
            assert!(err <= 0.01, "q={q} exact={exact} got={got}");
        }
        assert_eq!(h.percentile(1_000_000), h.max());
        assert_eq!(h.max(), *samples.last().unwrap());
        assert_eq!(h.count(), 1000);
    }

    #[test]
    fn merge_is_addition() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut all = Histogram::new();
        for i in 0..500u64 {
            let v = 900 + i * i * 13;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let empty = Histogram::new();
        a.merge(&empty);
        assert_eq!(a, all);
    }

    #[test]
    fn empty_percentile_is_zero() {
        assert_eq!(Histogram::new().percentile(999_000), 0);
    }

    #[test]
    fn counter_names_cover_every_counter() {
        assert_eq!(COUNTER_NAMES[Counter::BlockedNs as usize], "blocked_ns");
        assert_eq!(
            COUNTER_NAMES[Counter::CriticalWaits as usize],
            "critical_waits"
        );
        assert_eq!(COUNTER_NAMES[Counter::Throttles as usize], "throttles");
    }

    #[test]
    fn empty_extremes_read_as_zero_and_round_trip() {
        let mut h = Histogram::new();
        assert_eq!((h.count(), h.min(), h.max()), (0, 0, 0));
        assert_eq!(Histogram::from_parts(h.buckets(), 0, 0), h);
        h.merge(&Histogram::new());
        assert_eq!(h, Histogram::new());
        h.record(0);
        assert_eq!((h.count(), h.min(), h.max()), (1, 0, 0));
        h.record(7_000);
        let mut m = Histogram::new();
        m.merge(&h);
        assert_eq!(m, h);
        assert_eq!(Histogram::from_parts(h.buckets(), h.min(), h.max()), h);
        h.clear();
        assert_eq!(h, Histogram::new());
    }
}
