//! Perfetto's clocks: every `ClockSnapshot` relates the clocks it lists at one instant, and a
//! timestamp on any clock is converted to the trace's clock through a chain of snapshots, as
//! trace_processor's clock tracker does.
//!
//! - The trace clock is the snapshots' `primary_trace_clock`, else the boot clock. It can
//!   change only before any timestamp was converted to it.
//! - Clock ids 64..=127 are scoped to the packet sequence whose snapshot defines them, so two
//!   sequences' clock 64 are different clocks.
//! - An incremental clock's timestamps are deltas from the previous one on that clock (the
//!   snapshot gives the first value); `unit_multiplier_ns` scales a clock's units.
//! - Snapshots listing the same clocks form a group. A conversion walks the fewest groups
//!   from the source clock to the trace clock (breadth first), and in each group uses the
//!   latest snapshot at or before the timestamp (the first one for earlier timestamps).
//! - A clock that goes backwards between two snapshots of a group no longer converts through
//!   that group (it can still be converted to).

use crate::events::FastMap;
use crate::proto::clock;

/// A clock: sequence-scoped ids carry their sequence, global ones sequence 0.
pub type ClockKey = (u64, u64);

/// One clock's units and, for an incremental clock, its latest value.
#[derive(Clone, Copy)]
struct Domain {
    mult: i64,
    incremental: bool,
    /// The latest timestamp in ns (incremental clocks accumulate from it).
    last_ns: i64,
}

/// The snapshots that list the same set of clocks.
struct Group {
    members: Vec<ClockKey>,
    /// False for a member that went backwards: it cannot be a conversion's source here.
    source: Vec<bool>,
    /// One row of `members.len()` nanosecond values per snapshot, in file order.
    rows: Vec<i64>,
}

impl Group {
    fn col(&self, row: usize, member: usize) -> i64 {
        self.rows[row * self.members.len() + member]
    }

    fn row_count(&self) -> usize {
        self.rows.len() / self.members.len()
    }

    /// The latest snapshot whose `from` value is at or before `ns`, else the first.
    fn row_for(&self, from: usize, ns: i64) -> usize {
        let (mut lo, mut hi) = (0, self.row_count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.col(mid, from) <= ns {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.saturating_sub(1)
    }
}

/// One step of a conversion: in `group`, from member `from` to member `to`.
#[derive(Clone, Copy)]
struct Step {
    group: usize,
    from: usize,
    to: usize,
}

/// A clock as one snapshot lists it.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotClock {
    pub id: u64,
    /// The clock's value, in its units.
    pub value: u64,
    pub incremental: bool,
    /// Nanoseconds per unit (0 means 1, as an unset field).
    pub unit_multiplier_ns: u64,
}

/// Every clock seen so far and how to convert it to the trace clock.
pub struct Clocks {
    trace_clock: u64,
    /// A timestamp was converted to the trace clock, which therefore cannot change.
    used: bool,
    domains: FastMap<ClockKey, Domain>,
    groups: Vec<Group>,
    group_of: FastMap<Vec<ClockKey>, usize>,
    /// Each source clock's shortest path, cleared when a group appears or loses a source.
    paths: FastMap<ClockKey, Option<Vec<Step>>>,
}

impl Default for Clocks {
    fn default() -> Self {
        Clocks {
            trace_clock: clock::BOOTTIME,
            used: false,
            domains: FastMap::default(),
            groups: Vec::new(),
            group_of: FastMap::default(),
            paths: FastMap::default(),
        }
    }
}

/// The key of clock `id` as a packet on sequence `seq` names it.
pub fn key(seq: u64, id: u64) -> ClockKey {
    if is_sequence_scoped(id) {
        (seq, id)
    } else {
        (0, id)
    }
}

/// Clock ids 64..=127 belong to one packet sequence.
pub fn is_sequence_scoped(id: u64) -> bool {
    (clock::FIRST_SEQUENCE_CLOCK..128).contains(&id)
}

impl Clocks {
    /// The clock every stored timestamp is on.
    pub fn trace_clock(&self) -> u64 {
        self.trace_clock
    }

    /// Reads one `ClockSnapshot` of sequence `seq`. An error is a `stats` kind: the snapshot
    /// (or its primary clock) was not used.
    pub fn snapshot(
        &mut self,
        seq: u64,
        primary: Option<u64>,
        clocks: &[SnapshotClock],
    ) -> Result<(), &'static str> {
        if let Some(p) = primary.filter(|&p| p != 0 && p != self.trace_clock) {
            if self.used {
                return Err("clock:trace_clock_changed_after_use");
            }
            self.trace_clock = p;
            self.paths.clear();
        }
        let mut row: Vec<(ClockKey, i64)> = Vec::with_capacity(clocks.len());
        for c in clocks {
            let k = key(seq, c.id);
            if c.incremental && !is_sequence_scoped(c.id) {
                return Err("clock:global_clock_incremental");
            }
            if row.iter().any(|(r, _)| *r == k) {
                return Err("clock:duplicate_clock_in_snapshot");
            }
            let mult = c.unit_multiplier_ns.max(1) as i64;
            let d = self.domains.entry(k).or_insert(Domain {
                mult,
                incremental: c.incremental,
                last_ns: 0,
            });
            if d.mult != mult || d.incremental != c.incremental {
                return Err("clock:clock_redefined");
            }
            row.push((k, (c.value as i64).wrapping_mul(mult)));
        }
        if row.len() < 2 {
            // One clock relates to nothing, but an incremental one still restarts from it.
            if let Some(d) = row.first().and_then(|(k, _)| self.domains.get_mut(k)) {
                d.last_ns = row[0].1;
            }
            return Ok(());
        }
        row.sort_unstable_by_key(|(k, _)| *k);
        let members: Vec<ClockKey> = row.iter().map(|(k, _)| *k).collect();
        let g = match self.group_of.get(&members) {
            Some(&g) => g,
            None => {
                self.groups.push(Group {
                    members: members.clone(),
                    source: vec![true; members.len()],
                    rows: Vec::new(),
                });
                self.group_of.insert(members, self.groups.len() - 1);
                self.paths.clear();
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        if let Some(last_row) = group.row_count().checked_sub(1) {
            for (m, &(k, ns)) in row.iter().enumerate() {
                if ns <= group.col(last_row, m) {
                    if k == (0, self.trace_clock) {
                        return Err("clock:trace_clock_not_monotonic");
                    }
                    if group.source[m] {
                        group.source[m] = false;
                        self.paths.clear();
                    }
                }
            }
        }
        group.rows.extend(row.iter().map(|&(_, ns)| ns));
        for &(k, ns) in &row {
            if let Some(d) = self.domains.get_mut(&k) {
                d.last_ns = ns;
            }
        }
        Ok(())
    }

    /// Timestamp `raw` of clock `id` on sequence `seq`, on the trace clock. An error is a
    /// `stats` kind naming why it cannot be converted.
    pub fn to_trace(&mut self, seq: u64, id: u64, raw: i64) -> Result<i64, &'static str> {
        let k = key(seq, id);
        if k == (0, self.trace_clock) {
            self.used = true;
            return Ok(raw);
        }
        let Some(d) = self.domains.get_mut(&k) else {
            return Err(if is_sequence_scoped(id) {
                "clock:sequence_clock_without_snapshot"
            } else {
                "clock:clock_without_snapshot"
            });
        };
        let ns = if d.incremental {
            d.last_ns = d.last_ns.wrapping_add(raw.wrapping_mul(d.mult));
            d.last_ns
        } else {
            raw.wrapping_mul(d.mult)
        };
        let target = (0, self.trace_clock);
        if !self.paths.contains_key(&k) {
            let p = self.find_path(k, target);
            self.paths.insert(k, p);
        }
        let Some(Some(path)) = self.paths.get(&k) else {
            return Err("clock:clock_sync_failure");
        };
        let mut ns = ns;
        for s in path {
            let g = &self.groups[s.group];
            let r = g.row_for(s.from, ns);
            ns = ns.wrapping_add(g.col(r, s.to).wrapping_sub(g.col(r, s.from)));
        }
        self.used = true;
        Ok(ns)
    }

    /// The fewest snapshot groups leading from `src` to `target`, breadth first.
    fn find_path(&self, src: ClockKey, target: ClockKey) -> Option<Vec<Step>> {
        let mut came_from: FastMap<ClockKey, Option<(ClockKey, Step)>> = FastMap::default();
        came_from.insert(src, None);
        let mut queue = std::collections::VecDeque::from([src]);
        while let Some(at) = queue.pop_front() {
            if at == target {
                let mut steps = Vec::new();
                let mut cur = at;
                while let Some(&Some((prev, step))) = came_from.get(&cur) {
                    steps.push(step);
                    cur = prev;
                }
                steps.reverse();
                return Some(steps);
            }
            for (gi, g) in self.groups.iter().enumerate() {
                let Some(from) = g.members.iter().position(|&m| m == at) else {
                    continue;
                };
                if !g.source[from] {
                    continue;
                }
                for (to, &next) in g.members.iter().enumerate() {
                    if to != from && !came_from.contains_key(&next) {
                        came_from.insert(
                            next,
                            Some((
                                at,
                                Step {
                                    group: gi,
                                    from,
                                    to,
                                },
                            )),
                        );
                        queue.push_back(next);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: u64, value: u64) -> SnapshotClock {
        SnapshotClock {
            id,
            value,
            incremental: false,
            unit_multiplier_ns: 0,
        }
    }

    const MONO: u64 = 3;
    const BOOT: u64 = clock::BOOTTIME;

    #[test]
    fn sequence_clock_converts_through_a_global_snapshot() {
        // Chrome's shape: a global snapshot relates MONOTONIC to BOOTTIME; a sequence's own
        // snapshot relates its incremental clock 64 to MONOTONIC.
        let mut k = Clocks::default();
        k.snapshot(1, Some(BOOT), &[c(BOOT, 10_000), c(MONO, 4_000)])
            .unwrap();
        let inc = SnapshotClock {
            incremental: true,
            ..c(64, 5_000)
        };
        k.snapshot(7, None, &[c(MONO, 5_000), inc]).unwrap();
        // Deltas accumulate from the snapshot's value: 5000+10 = 5010 mono = 11010 boot.
        assert_eq!(k.to_trace(7, 64, 10), Ok(11_010));
        assert_eq!(k.to_trace(7, 64, 5), Ok(11_015));
        // Another sequence's clock 64 is another clock.
        assert_eq!(
            k.to_trace(8, 64, 1),
            Err("clock:sequence_clock_without_snapshot")
        );
        assert_eq!(k.to_trace(0, MONO, 4_500), Ok(10_500));
        assert_eq!(k.to_trace(0, BOOT, 42), Ok(42));
    }

    #[test]
    fn latest_snapshot_at_or_before_is_used() {
        let mut k = Clocks::default();
        k.snapshot(1, None, &[c(BOOT, 1_000), c(MONO, 0)]).unwrap();
        // The clocks drifted 7 ns apart by the second snapshot.
        k.snapshot(1, None, &[c(BOOT, 2_007), c(MONO, 1_000)])
            .unwrap();
        assert_eq!(k.to_trace(1, MONO, 500), Ok(1_500));
        assert_eq!(k.to_trace(1, MONO, 1_500), Ok(2_507));
        // Before every snapshot: the first one.
        assert_eq!(k.to_trace(1, MONO, -100), Ok(900));
    }

    #[test]
    fn unit_multiplier_scales_and_primary_clock_is_the_target() {
        let mut k = Clocks::default();
        let us = SnapshotClock {
            unit_multiplier_ns: 1_000,
            ..c(64, 3)
        };
        k.snapshot(2, Some(MONO), &[c(MONO, 50_000), us]).unwrap();
        assert_eq!(k.trace_clock(), MONO);
        assert_eq!(k.to_trace(2, 64, 4), Ok(51_000));
        // Boot time has no snapshot relating it to the trace clock (MONOTONIC) here.
        assert_eq!(k.to_trace(0, BOOT, 1), Err("clock:clock_without_snapshot"));
        // The trace clock was used, so it cannot change any more.
        assert_eq!(
            k.snapshot(2, Some(BOOT), &[c(BOOT, 1), c(MONO, 2)]),
            Err("clock:trace_clock_changed_after_use")
        );
    }

    #[test]
    fn no_path_and_bad_snapshots_are_errors() {
        let mut k = Clocks::default();
        k.snapshot(1, None, &[c(1, 10), c(2, 20)]).unwrap();
        assert_eq!(k.to_trace(1, 1, 10), Err("clock:clock_sync_failure"));
        let inc = SnapshotClock {
            incremental: true,
            ..c(MONO, 1)
        };
        assert_eq!(
            k.snapshot(1, None, &[c(BOOT, 1), inc]),
            Err("clock:global_clock_incremental")
        );
        k.snapshot(1, None, &[c(BOOT, 100), c(MONO, 100)]).unwrap();
        assert_eq!(
            k.snapshot(1, None, &[c(BOOT, 50), c(MONO, 200)]),
            Err("clock:trace_clock_not_monotonic")
        );
    }

    #[test]
    fn a_clock_that_goes_backwards_converts_no_more_through_its_group() {
        let mut k = Clocks::default();
        k.snapshot(1, None, &[c(BOOT, 100), c(1, 1_000)]).unwrap();
        assert_eq!(k.to_trace(1, 1, 1_000), Ok(100));
        k.snapshot(1, None, &[c(BOOT, 200), c(1, 500)]).unwrap();
        assert_eq!(k.to_trace(1, 1, 1_000), Err("clock:clock_sync_failure"));
    }
}
