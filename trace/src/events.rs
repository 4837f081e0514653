//! The decoded trace before it becomes tables: what both parsers (protobuf and text) emit.
//!
//! Parsers only append here, in file order; each event gets a sequence number so that the
//! model can sort by `(ts, seq)` and keep the file order of equal timestamps.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::binder::{BinderEvent, BinderKind};

/// A small, fast hasher for integer and short-string keys (FNV-1a); trace data is not
/// adversarial in a way that matters for a one-shot import.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }

    fn write_i32(&mut self, v: i32) {
        self.write_u64(v as u32 as u64);
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

/// A `HashMap` using [`Fnv`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// Deduplicated strings, addressed by index.
#[derive(Default, Debug)]
pub struct Interner {
    map: FastMap<Box<str>, u32>,
    strings: Vec<Box<str>>,
}

impl Interner {
    /// The index of `s`, adding it if new.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.into());
        self.map.insert(s.into(), i);
        i
    }

    /// The string at index `i`.
    pub fn get(&self, i: u32) -> &str {
        &self.strings[i as usize]
    }
}

/// A task state as sched_switch reports it for the outgoing thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrevState {
    /// The kernel's reported state bits (protobuf `prev_state`).
    Bits(i64),
    /// Text ftrace's letters (`S`, `D`, `R+`, `D|K`), interned in [`Events::strings`].
    Text(u32),
}

/// What a sched event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedKind {
    /// A context switch; `prev_tid` is `None` in compact sched, where the model infers it.
    Switch {
        /// Outgoing thread, when recorded.
        prev_tid: Option<i32>,
        /// Its state as it leaves the CPU.
        prev_state: PrevState,
        /// Incoming thread.
        next_tid: i32,
        /// Incoming thread's priority.
        next_prio: i32,
    },
    /// `sched_waking` / `sched_wakeup`: `tid` became runnable.
    Waking {
        /// The woken thread.
        tid: i32,
        /// The waker, if recorded; otherwise the thread running on the event's CPU.
        waker: Option<i32>,
        /// Whether this was `sched_wakeup` (used only when no `sched_waking` precedes it).
        wakeup: bool,
    },
    /// `sched_blocked_reason`: where `tid` blocked (interned function name or address).
    Blocked {
        /// The blocked thread.
        tid: i32,
        /// Interned caller in [`Events::strings`].
        function: u32,
        /// Whether the sleep was I/O wait.
        io_wait: bool,
    },
}

/// A sched event at a time on a CPU.
#[derive(Debug, Clone, Copy)]
pub struct SchedEvent {
    /// Nanoseconds.
    pub ts: i64,
    /// File order.
    pub seq: u32,
    /// CPU whose buffer recorded the event.
    pub cpu: u32,
    /// What happened.
    pub kind: SchedKind,
}

/// Where a slice event belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrackKey {
    /// The thread's own track (atrace and thread track-event tracks merge here).
    Thread(i32),
    /// A track-event track that is not a thread's, by uuid.
    Uuid(u64),
    /// An atrace counter `C|pid|name|value`, keyed by pid and interned name.
    ProcessCounter(i32, u32),
    /// A per-CPU counter (`cpufreq`, `cpuidle`), keyed by interned name and CPU.
    CpuCounter(u32, u32),
    /// An async atrace slice `S|pid|name|cookie` / `F|pid|name|cookie`: one track per
    /// pid, interned name and cookie, so that overlapping operations do not nest.
    Async(i32, u32, i64),
}

/// What a slice event says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SliceKind {
    /// Opens a slice.
    Begin {
        /// Interned name.
        name: u32,
        /// Interned category, if any.
        cat: Option<u32>,
    },
    /// Closes the innermost open slice of the track.
    End,
    /// A zero-duration slice.
    Instant {
        /// Interned name.
        name: u32,
    },
    /// A counter sample.
    Counter {
        /// The value.
        value: f64,
    },
}

/// A slice or counter event.
#[derive(Debug, Clone, Copy)]
pub struct SliceEvent {
    /// Nanoseconds.
    pub ts: i64,
    /// File order.
    pub seq: u32,
    /// Target track.
    pub track: TrackKey,
    /// What happened.
    pub kind: SliceKind,
}

/// A SuperPass tracepoint; see `docs/trace.md` for the field layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpKind {
    /// `superpass_block`: `waiter` blocked on `lock` held by `blocker`.
    Block {
        /// The critical thread that waits.
        waiter: i32,
        /// The lock owner it waits for.
        blocker: i32,
        /// Lock address.
        lock: u64,
        /// Lock kind (`mutex`, `rwsem`, `futex`, ...).
        kind: String,
    },
    /// `superpass_grant`: `blocker` got the fast track on behalf of `waiter` (chain `root`).
    Grant {
        /// Boosted thread.
        blocker: i32,
        /// The thread it blocks directly.
        waiter: i32,
        /// The critical thread at the root of the chain.
        root: i32,
        /// Lock address.
        lock: u64,
        /// Chain depth (1 = direct).
        depth: i64,
    },
    /// `superpass_revoke`: `blocker` lost the fast track.
    Revoke {
        /// The thread.
        blocker: i32,
        /// Why (`released`, `timeout`, `exit`, ...).
        reason: String,
    },
    /// `superpass_pick`: the scheduler picked `tid` via the fast track on `cpu`.
    Pick {
        /// CPU.
        cpu: i64,
        /// Thread.
        tid: i32,
    },
    /// `superpass_queue`: boosted task `tid` joined `cpu`'s runqueue.
    Queue {
        /// CPU whose runqueue it joined.
        cpu: i64,
        /// Thread.
        tid: i32,
        /// Whether that CPU was asked to pick again at once.
        run_now: bool,
    },
    /// `superpass_throttle`: `cpu` used up its fast-track share; for `dur` it runs no boosted
    /// task ahead of the stock choice.
    Throttle {
        /// CPU.
        cpu: i64,
        /// ns (the event's `for_us` scaled).
        dur: i64,
    },
    /// `superpass_probes`: the on-demand probe groups attached from now on.
    Probes {
        /// The module's bits (1 owners, 2 readers; see `superpass::probe_groups_name`).
        groups: u32,
    },
}

/// A SuperPass event.
#[derive(Debug, Clone)]
pub struct SpEvent {
    /// Nanoseconds.
    pub ts: i64,
    /// File order.
    pub seq: u32,
    /// CPU that recorded it.
    pub cpu: u32,
    /// What happened.
    pub kind: SpKind,
}

/// What is known about a thread from descriptors and events.
#[derive(Debug, Default, Clone)]
pub struct ThreadInfo {
    /// Name from a descriptor or process tree (wins over comm).
    pub name: Option<String>,
    /// Latest comm seen in sched events (16 bytes, kernel-truncated).
    pub comm: Option<String>,
    /// Owning process, when known.
    pub pid: Option<i32>,
}

/// A track-event track declared by a `TrackDescriptor`.
#[derive(Debug, Default, Clone)]
pub struct TrackInfo {
    /// Track name.
    pub name: Option<String>,
    /// Thread it belongs to, if a thread track.
    pub tid: Option<i32>,
    /// Process it belongs to, if any.
    pub pid: Option<i32>,
    /// Whether it is a counter track.
    pub counter: bool,
}

/// Counts of things the importer skipped or repaired, reported after import.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    /// Packets or lines that could not be decoded and were skipped.
    pub corrupt: u64,
    /// Whether the input ended in the middle of a packet.
    pub truncated: bool,
    /// Packet or event types this importer does not read (skipped by design): the sum of
    /// [`Diagnostics::skipped`].
    pub unknown: u64,
    /// What was skipped, by kind (`ftrace:cpu_idle`, `packet:perf_sample`, ...): the
    /// `stats` table.
    pub skipped: BTreeMap<String, u64>,
    /// Counter samples whose value was NaN (stored as NULL).
    pub nan_counters: u64,
    /// Events whose timestamp went backwards within their source (re-sorted).
    pub out_of_order: u64,
    /// Slice ends with no open slice on their track (dropped).
    pub unmatched_ends: u64,
    /// Slices still open at the end of the trace (kept with `dur = -1`).
    pub unended_slices: u64,
    /// Events the kernel reported lost.
    pub lost_events: u64,
    /// Free-form notes, at most a few.
    pub notes: Vec<String>,
}

impl Diagnostics {
    /// Counts one skipped item of `kind`.
    pub fn skip(&mut self, kind: &str) {
        self.skip_n(kind, 1);
    }

    /// Counts `n` skipped items of `kind`.
    pub fn skip_n(&mut self, kind: &str, n: u64) {
        self.unknown += n;
        match self.skipped.get_mut(kind) {
            Some(v) => *v += n,
            None => {
                self.skipped.insert(kind.to_owned(), n);
            }
        }
    }

    /// Records a note, keeping only the first few so a bad file cannot flood memory.
    pub fn note(&mut self, msg: impl Into<String>) {
        if self.notes.len() < 20 {
            self.notes.push(msg.into());
        }
    }
}

/// Everything decoded from a trace.
#[derive(Debug, Default)]
pub struct Events {
    /// Interned names: slice names, categories, states, blocked functions.
    pub strings: Interner,
    /// sched_switch, sched_waking, sched_blocked_reason.
    pub sched: Vec<SchedEvent>,
    /// Slices, instants and counters.
    pub slices: Vec<SliceEvent>,
    /// SuperPass tracepoints.
    pub superpass: Vec<SpEvent>,
    /// Binder transactions (`binder_transaction`, `binder_transaction_received`).
    pub binder: Vec<BinderEvent>,
    /// Threads by tid.
    pub threads: FastMap<i32, ThreadInfo>,
    /// Process names by pid.
    pub processes: FastMap<i32, Option<String>>,
    /// Track-event tracks by uuid.
    pub tracks: FastMap<u64, TrackInfo>,
    /// Skipped and repaired input.
    pub diag: Diagnostics,
    /// Smallest and largest timestamp seen.
    pub bounds: Option<(i64, i64)>,
    seq: u32,
}

impl Events {
    /// The next file-order sequence number.
    #[inline]
    pub fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Widens the trace bounds to cover `ts`.
    #[inline]
    pub fn see_ts(&mut self, ts: i64) {
        self.bounds = Some(match self.bounds {
            None => (ts, ts),
            Some((lo, hi)) => (lo.min(ts), hi.max(ts)),
        });
    }

    /// Appends a sched event.
    #[inline]
    pub fn push_sched(&mut self, ts: i64, cpu: u32, kind: SchedKind) {
        let seq = self.next_seq();
        self.see_ts(ts);
        self.sched.push(SchedEvent { ts, seq, cpu, kind });
    }

    /// Appends a slice event.
    #[inline]
    pub fn push_slice(&mut self, ts: i64, track: TrackKey, kind: SliceKind) {
        let seq = self.next_seq();
        self.see_ts(ts);
        self.slices.push(SliceEvent {
            ts,
            seq,
            track,
            kind,
        });
    }

    /// Appends a SuperPass event.
    pub fn push_superpass(&mut self, ts: i64, cpu: u32, kind: SpKind) {
        let seq = self.next_seq();
        self.see_ts(ts);
        self.superpass.push(SpEvent { ts, seq, cpu, kind });
    }

    /// Appends a binder event of thread `tid`.
    pub fn push_binder(&mut self, ts: i64, tid: i32, kind: BinderKind) {
        let seq = self.next_seq();
        self.see_ts(ts);
        self.binder.push(BinderEvent { ts, seq, tid, kind });
    }

    /// Appends a `cpu_frequency` (kHz) or `cpu_idle` (state; `u32::MAX` = left idle, kept
    /// as -1 like trace_processor) sample to the CPU's counter track.
    pub fn cpu_counter(&mut self, ts: i64, freq: bool, cpu: u32, state: u64) {
        let name = self
            .strings
            .intern(if freq { "cpufreq" } else { "cpuidle" });
        let value = if !freq && state == u64::from(u32::MAX) {
            -1.0
        } else {
            state as f64
        };
        self.push_slice(
            ts,
            TrackKey::CpuCounter(name, cpu),
            SliceKind::Counter { value },
        );
    }

    /// Notes `comm` as `tid`'s name from a sched event, allocating only when it changes.
    #[inline]
    pub fn note_comm(&mut self, tid: i32, comm: &str) {
        let t = self.threads.entry(tid).or_default();
        if t.comm.as_deref() != Some(comm) {
            t.comm = Some(comm.to_owned());
        }
    }

    /// Notes that `tid` belongs to process `pid` (unless already known).
    pub fn note_thread_pid(&mut self, tid: i32, pid: i32) {
        let t = self.threads.entry(tid).or_default();
        if t.pid.is_none() {
            t.pid = Some(pid);
        }
        self.processes.entry(pid).or_default();
    }

    /// Records a thread's authoritative name and process from a descriptor.
    pub fn declare_thread(&mut self, tid: i32, pid: Option<i32>, name: Option<&str>) {
        let t = self.threads.entry(tid).or_default();
        if let Some(pid) = pid {
            t.pid = Some(pid);
        }
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            t.name = Some(name.to_owned());
        }
        if let Some(pid) = pid {
            self.processes.entry(pid).or_default();
        }
    }

    /// Records a process's name from a descriptor.
    pub fn declare_process(&mut self, pid: i32, name: Option<&str>) {
        let p = self.processes.entry(pid).or_default();
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            *p = Some(name.to_owned());
        }
    }

    /// Handles an atrace marker (`B|pid|name`, `E|pid`, `C|pid|name|value`, `I|pid|name`)
    /// written by thread `tid`; returns false for text that is not one.
    pub fn atrace(&mut self, ts: i64, tid: i32, text: &str) -> bool {
        let text = text.trim_end_matches(['\n', '\0']);
        let mut parts = text.splitn(4, '|');
        let kind = parts.next().unwrap_or("");
        let pid = parts.next().and_then(|p| p.trim().parse::<i32>().ok());
        match kind {
            "B" => {
                let name = parts.next().unwrap_or("");
                // A name may itself contain '|': take everything after the pid.
                let name = match parts.next() {
                    Some(rest) => format!("{name}|{rest}"),
                    None => name.to_owned(),
                };
                if let Some(pid) = pid {
                    self.note_thread_pid(tid, pid);
                }
                let name = self.strings.intern(&name);
                self.push_slice(
                    ts,
                    TrackKey::Thread(tid),
                    SliceKind::Begin { name, cat: None },
                );
                true
            }
            "E" => {
                self.push_slice(ts, TrackKey::Thread(tid), SliceKind::End);
                true
            }
            "I" => {
                let name = self.strings.intern(parts.next().unwrap_or(""));
                self.push_slice(ts, TrackKey::Thread(tid), SliceKind::Instant { name });
                true
            }
            "S" | "F" => {
                // Async: `S|pid|name|cookie`; a name may hold '|', the cookie is last.
                let (Some(pid), Some(rest)) = (
                    pid,
                    parts.next().map(|n| match parts.next() {
                        Some(r) => format!("{n}|{r}"),
                        None => n.to_owned(),
                    }),
                ) else {
                    return false;
                };
                let (name, cookie) = match rest.rsplit_once('|') {
                    Some((n, c)) => match c.trim().parse::<i64>() {
                        Ok(c) => (n, c),
                        Err(_) => (rest.as_str(), 0),
                    },
                    None => (rest.as_str(), 0),
                };
                self.note_thread_pid(tid, pid);
                let name = self.strings.intern(name);
                let kind = if kind == "S" {
                    SliceKind::Begin { name, cat: None }
                } else {
                    SliceKind::End
                };
                self.push_slice(ts, TrackKey::Async(pid, name, cookie), kind);
                true
            }
            "C" => {
                let (Some(pid), Some(name), Some(value)) = (pid, parts.next(), parts.next()) else {
                    return false;
                };
                let value = value.split('|').next().unwrap_or("").trim();
                let Ok(value) = value.parse::<f64>() else {
                    return false;
                };
                self.note_thread_pid(tid, pid);
                let name = self.strings.intern(name);
                self.push_slice(
                    ts,
                    TrackKey::ProcessCounter(pid, name),
                    SliceKind::Counter { value },
                );
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atrace_markers() {
        let mut e = Events::default();
        assert!(e.atrace(10, 7, "B|5|lockwait:a|b\n"));
        assert!(e.atrace(20, 7, "E|5"));
        assert!(e.atrace(30, 7, "C|5|queue|42"));
        assert!(!e.atrace(40, 7, "hello"));
        assert!(!e.atrace(40, 7, "C|5|bad|x"));
        assert_eq!(e.slices.len(), 3);
        match e.slices[0].kind {
            SliceKind::Begin { name, .. } => assert_eq!(e.strings.get(name), "lockwait:a|b"),
            other => panic!("{other:?}"),
        }
        assert_eq!(e.threads[&7].pid, Some(5));
        assert!(matches!(e.slices[2].kind, SliceKind::Counter { value } if value == 42.0));
    }
}
