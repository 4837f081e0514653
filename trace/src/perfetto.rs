//! Decodes Perfetto protobuf traces into [`Events`].
//!
//! Read: ftrace bundles (`sched_switch`, `sched_waking`, `sched_wakeup`, `sched_wakeup_new`,
//! `sched_blocked_reason`, `cpu_frequency`, `cpu_idle`, `print` with atrace markers,
//! `GenericFtraceEvent` for SuperPass, `binder_transaction`, `binder_transaction_received`,
//! `compact_sched`), `compressed_packets`,
//! `process_tree`, `TrackDescriptor`s, `TrackEvent` slices, instants and counters (with
//! per-sequence interned names, default tracks, and every timestamp converted to the trace
//! clock by [`crate::clocks`]). Everything else is skipped and
//! counted by kind ([`crate::events::Diagnostics::skip`]). Recovery rules (see
//! `docs/trace.md`):
//! - a packet that fails to decode is counted corrupt and skipped; events it yielded before
//!   the fault are kept;
//! - input that ends inside a packet keeps every whole packet and sets `truncated`;
//! - a framing error between packets stops decoding; what came before is kept.

use std::fmt;

use crate::binder::{self, BinderKind};
use crate::clocks::{Clocks, SnapshotClock};
use crate::events::{Events, FastMap, PrevState, SchedKind, SliceKind, TrackInfo, TrackKey};
use crate::proto::{
    bundle, clock, compact, defaults, ftrace, interned, packet, process_tree, thread_descriptor,
    trace, track, track_event,
};
use crate::superpass;
use crate::wire::{Fields, Value, Varints, WireError};

/// Why a buffer could not be imported as a Perfetto trace at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The first bytes are not a `Trace.packet` field.
    NotATrace(WireError),
    /// Not a single packet could be read.
    NoPackets,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::NotATrace(e) => write!(f, "not a Perfetto trace: {e}"),
            DecodeError::NoPackets => write!(f, "not a Perfetto trace: no TracePacket found"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Incremental state of one trusted packet sequence: interned names, defaults, clocks.
#[derive(Default)]
struct SeqState {
    names: FastMap<u64, u32>,
    categories: FastMap<u64, u32>,
    /// `TracePacketDefaults.track_event_defaults.track_uuid`.
    default_track: Option<u64>,
    /// `TracePacketDefaults.timestamp_clock_id`.
    default_clock: Option<u64>,
    /// The legacy `ThreadDescriptor`: the thread whose track events lack a track.
    thread: Option<i32>,
    /// The legacy `ThreadDescriptor` reference time for `timestamp_delta_us`, in us.
    reference_us: Option<i64>,
}

/// Decoder state that spans packets.
#[derive(Default)]
struct Decoder {
    sequences: FastMap<u64, SeqState>,
    /// Snapshots so far: every timestamp is converted to the trace clock with them.
    clocks: Clocks,
    /// Last ftrace timestamp per CPU, to count out-of-order events.
    last_ts: Vec<i64>,
    /// Skipped-data table keys already formatted, per (kind, field number).
    skip_keys: FastMap<(u8, u32), String>,
}

/// Inflated `compressed_packets` larger than this are refused (a decompression bomb).
#[cfg(feature = "db")]
const MAX_INFLATED: usize = 1 << 30;

/// Decodes a whole `Trace` message, appending to `ev`; see the module doc for recovery.
pub fn decode(buf: &[u8], ev: &mut Events) -> Result<(), DecodeError> {
    let mut s = StreamDecoder::default();
    s.feed(buf, true, ev)?;
    s.finish()
}

/// Decodes a `Trace` message that arrives in pieces (a file read a chunk at a time, so that
/// the whole file is never in memory), with the same events, diagnostics and errors as
/// [`decode`] of the whole.
#[derive(Default)]
pub struct StreamDecoder {
    d: Decoder,
    packets: u64,
    /// Bytes of the input consumed before the current piece.
    offset: usize,
    /// A framing error ended the input: the rest is skipped.
    stopped: bool,
}

impl StreamDecoder {
    /// Decodes the whole fields at the start of `buf`, which continues the input after the
    /// bytes consumed so far, and returns how many bytes it consumed: the caller passes the
    /// rest again, followed by more input. `eof`: no more input follows `buf`.
    pub fn feed(&mut self, buf: &[u8], eof: bool, ev: &mut Events) -> Result<usize, DecodeError> {
        if self.stopped {
            return Ok(buf.len());
        }
        let mut fields = Fields::new(buf);
        let mut used = 0;
        while let Some(field) = fields.next() {
            match field {
                Ok((trace::PACKET, Value::Bytes(p))) => {
                    self.packets += 1;
                    if let Err(e) = self.d.packet(p, ev) {
                        ev.diag.corrupt += 1;
                        ev.diag
                            .note(format!("packet {}: {e}; skipped", self.packets));
                    }
                }
                Ok((n, _)) => ev.diag.skip(&format!("trace:field_{n}")),
                // The field may be whole once more input arrives.
                Err(WireError::Truncated { .. }) if !eof => break,
                Err(e) => {
                    self.stopped = true;
                    let e = e.shifted(self.offset);
                    let packets = self.packets;
                    if packets == 0 {
                        return Err(DecodeError::NotATrace(e));
                    }
                    if let WireError::Truncated { .. } = e {
                        ev.diag.truncated = true;
                        ev.diag.note(format!(
                            "trace truncated after {packets} packets ({e}); the partial packet was dropped"
                        ));
                    } else {
                        ev.diag.corrupt += 1;
                        ev.diag.note(format!(
                            "framing error after {packets} packets ({e}); the rest of the file was skipped"
                        ));
                    }
                    return Ok(buf.len());
                }
            }
            used = fields.position();
        }
        self.offset += used;
        Ok(used)
    }

    /// Ends the input: an error if it held no packet.
    pub fn finish(self) -> Result<(), DecodeError> {
        if self.packets == 0 {
            return Err(DecodeError::NoPackets);
        }
        Ok(())
    }
}

/// The first string of a repeated string field, or the only one.
fn text(v: Value<'_>) -> Result<&str, WireError> {
    Ok(v.as_str().unwrap_or(""))
}

impl Decoder {
    /// Counts one skipped item, keyed `prefix:name` (`name` from `name_of(n)`, else the
    /// field number), without formatting the key again for every event.
    fn skip(&mut self, ev: &mut Events, kind: u8, n: u32, name: Option<&'static str>) {
        let key = self.skip_keys.entry((kind, n)).or_insert_with(|| {
            let prefix = ["packet", "ftrace", "track_event"][kind as usize];
            match name {
                Some(name) if name != "other" => format!("{prefix}:{name}"),
                _ => format!("{prefix}:field_{n}"),
            }
        });
        ev.diag.skip(key);
    }

    fn packet(&mut self, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
        let mut ts: Option<u64> = None;
        let mut clock_id = None;
        let mut seq_id = 0u64;
        let mut cleared = false;
        let mut track_event_buf = None;
        let mut interned_buf = None;
        let mut defaults_buf = None;
        let mut clock_buf = None;
        let mut thread_buf = None;
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                packet::FTRACE_EVENTS => {
                    if let Some(b) = v.as_bytes() {
                        self.bundle(b, ev)?;
                    }
                }
                packet::PROCESS_TREE => {
                    if let Some(b) = v.as_bytes() {
                        process_tree(b, ev)?;
                    }
                }
                packet::TRACK_DESCRIPTOR => {
                    if let Some(b) = v.as_bytes() {
                        track_descriptor(b, ev)?;
                    }
                }
                packet::COMPRESSED_PACKETS => {
                    if let Some(b) = v.as_bytes() {
                        self.compressed(b, ev);
                    }
                }
                packet::TIMESTAMP => ts = v.as_u64(),
                packet::TIMESTAMP_CLOCK_ID => clock_id = v.as_u64(),
                packet::TRUSTED_PACKET_SEQUENCE_ID => seq_id = v.as_u64().unwrap_or(0),
                packet::SEQUENCE_FLAGS => {
                    cleared |= v.as_u64().unwrap_or(0) & packet::SEQ_INCREMENTAL_STATE_CLEARED != 0
                }
                packet::INCREMENTAL_STATE_CLEARED => cleared |= v.as_u64().unwrap_or(0) != 0,
                packet::TRACK_EVENT => track_event_buf = v.as_bytes(),
                packet::INTERNED_DATA => interned_buf = v.as_bytes(),
                packet::TRACE_PACKET_DEFAULTS => defaults_buf = v.as_bytes(),
                packet::CLOCK_SNAPSHOT => clock_buf = v.as_bytes(),
                packet::THREAD_DESCRIPTOR => thread_buf = v.as_bytes(),
                packet::FIRST_PACKET_ON_SEQUENCE => {}
                n => {
                    if let Some(name) = packet::data_field_name(n) {
                        self.skip(ev, 0, n, Some(name));
                    }
                }
            }
        }
        if cleared {
            self.sequences.remove(&seq_id);
        }
        if let Some(b) = defaults_buf {
            self.defaults(seq_id, b)?;
        }
        if let Some(b) = clock_buf {
            self.clock_snapshot(seq_id, b, ev)?;
        }
        if let Some(b) = thread_buf {
            self.thread_descriptor(seq_id, b, ev)?;
        }
        if let Some(b) = interned_buf {
            self.interned(seq_id, b, ev)?;
        }
        // Every timestamped packet advances an incremental clock, not only track events.
        let ts = self.packet_ts(seq_id, ts, clock_id);
        if let Some(b) = track_event_buf {
            let ts = match ts {
                Ok(ts) => ts,
                Err(why) => {
                    ev.diag.skip(why);
                    None
                }
            };
            self.track_event(seq_id, ts, b, ev)?;
        }
        Ok(())
    }

    /// Imports the packets inside a `compressed_packets` field (zlib-deflated `Trace`
    /// bytes); a part that does not inflate or decode is counted corrupt.
    #[cfg(feature = "db")]
    fn compressed(&mut self, buf: &[u8], ev: &mut Events) {
        let inflated =
            match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(buf, MAX_INFLATED) {
                Ok(v) => v,
                Err(e) => {
                    ev.diag.corrupt += 1;
                    ev.diag.note(format!(
                        "compressed_packets do not inflate ({e:?}); skipped"
                    ));
                    return;
                }
            };
        for field in Fields::new(&inflated) {
            match field {
                Ok((trace::PACKET, Value::Bytes(p))) => {
                    if let Err(e) = self.packet(p, ev) {
                        ev.diag.corrupt += 1;
                        ev.diag.note(format!("compressed packet: {e}; skipped"));
                    }
                }
                Ok((n, _)) => ev.diag.skip(&format!("trace:field_{n}")),
                Err(e) => {
                    ev.diag.corrupt += 1;
                    ev.diag
                        .note(format!("compressed_packets: {e}; the rest was skipped"));
                    return;
                }
            }
        }
    }

    /// Without the `db` feature there is no inflater: the packets are counted as skipped.
    #[cfg(not(feature = "db"))]
    fn compressed(&mut self, _buf: &[u8], ev: &mut Events) {
        ev.diag.skip("packet:compressed_packets");
    }

    fn defaults(&mut self, seq_id: u64, buf: &[u8]) -> Result<(), WireError> {
        let seq = self.sequences.entry(seq_id).or_default();
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                defaults::TIMESTAMP_CLOCK_ID => seq.default_clock = v.as_u64(),
                defaults::TRACK_EVENT_DEFAULTS => {
                    let Some(b) = v.as_bytes() else { continue };
                    for f in Fields::new(b) {
                        let (n, v) = f?;
                        if n == defaults::TRACK_UUID {
                            seq.default_track = v.as_u64();
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Reads a `ClockSnapshot` into the clock graph; one it cannot use is counted in
    /// `stats` under the reason.
    fn clock_snapshot(
        &mut self,
        seq_id: u64,
        buf: &[u8],
        ev: &mut Events,
    ) -> Result<(), WireError> {
        let mut clocks = Vec::new();
        let mut primary = None;
        for f in Fields::new(buf) {
            let (n, v) = f?;
            if n == clock::PRIMARY_TRACE_CLOCK {
                primary = v.as_u64();
            }
            if n != clock::CLOCKS {
                continue;
            }
            let Some(b) = v.as_bytes() else { continue };
            let mut c = SnapshotClock {
                id: 0,
                value: 0,
                incremental: false,
                unit_multiplier_ns: 1,
            };
            for f in Fields::new(b) {
                let (n, v) = f?;
                match n {
                    clock::CLOCK_ID => c.id = v.as_u64().unwrap_or(0),
                    clock::TIMESTAMP => c.value = v.as_u64().unwrap_or(0),
                    clock::IS_INCREMENTAL => c.incremental = v.as_u64().unwrap_or(0) != 0,
                    clock::UNIT_MULTIPLIER_NS => c.unit_multiplier_ns = v.as_u64().unwrap_or(1),
                    _ => {}
                }
            }
            clocks.push(c);
        }
        if let Err(why) = self.clocks.snapshot(seq_id, primary, &clocks) {
            ev.diag.skip(why);
        }
        Ok(())
    }

    fn thread_descriptor(
        &mut self,
        seq_id: u64,
        buf: &[u8],
        ev: &mut Events,
    ) -> Result<(), WireError> {
        let (mut pid, mut tid, mut name, mut reference) = (None, None, None, None);
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                thread_descriptor::PID => pid = v.as_i32(),
                thread_descriptor::TID => tid = v.as_i32(),
                thread_descriptor::THREAD_NAME => name = v.as_str(),
                thread_descriptor::REFERENCE_TIMESTAMP_US => reference = v.as_i64(),
                _ => {}
            }
        }
        if let Some(tid) = tid {
            ev.declare_thread(tid, pid, name);
        }
        let seq = self.sequences.entry(seq_id).or_default();
        seq.thread = tid.or(seq.thread);
        seq.reference_us = reference.or(seq.reference_us);
        Ok(())
    }

    /// A packet's timestamp on the trace clock: `timestamp_clock_id`, else the sequence's
    /// default, else the boot clock names its clock. An error is the `stats` kind of a
    /// timestamp no snapshot converts.
    fn packet_ts(
        &mut self,
        seq_id: u64,
        ts: Option<u64>,
        clock_id: Option<u64>,
    ) -> Result<Option<i64>, &'static str> {
        let Some(raw) = ts.map(|t| t as i64) else {
            return Ok(None);
        };
        let clock_id = clock_id
            .or_else(|| self.sequences.get(&seq_id).and_then(|s| s.default_clock))
            .unwrap_or(clock::BOOTTIME);
        self.clocks.to_trace(seq_id, clock_id, raw).map(Some)
    }

    /// An ftrace timestamp (boot clock) on the trace clock.
    fn ftrace_ts(&mut self, raw: i64, ev: &mut Events) -> Option<i64> {
        match self.clocks.to_trace(0, clock::BOOTTIME, raw) {
            Ok(ts) => Some(ts),
            Err(why) => {
                ev.diag.skip(why);
                None
            }
        }
    }

    fn interned(&mut self, seq_id: u64, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
        let seq = self.sequences.entry(seq_id).or_default();
        for f in Fields::new(buf) {
            let (n, v) = f?;
            let map = match n {
                interned::EVENT_NAMES => &mut seq.names,
                interned::EVENT_CATEGORIES => &mut seq.categories,
                _ => continue,
            };
            let Some(b) = v.as_bytes() else { continue };
            let (mut iid, mut name) = (0u64, "");
            for f in Fields::new(b) {
                let (n, v) = f?;
                match n {
                    interned::IID => iid = v.as_u64().unwrap_or(0),
                    interned::NAME => name = text(v)?,
                    _ => {}
                }
            }
            map.insert(iid, ev.strings.intern(name));
        }
        Ok(())
    }

    fn track_event(
        &mut self,
        seq_id: u64,
        ts: Option<i64>,
        buf: &[u8],
        ev: &mut Events,
    ) -> Result<(), WireError> {
        let (mut kind, mut uuid) = (0u64, None);
        let (mut delta_us, mut absolute_us) = (None, None);
        let mut legacy_phase = None;
        let (mut name, mut name_iid, mut cat, mut cat_iid) = (None, None, None, None);
        let mut value = None;
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                track_event::TYPE => kind = v.as_u64().unwrap_or(0),
                track_event::TRACK_UUID => uuid = v.as_u64(),
                track_event::NAME => name = v.as_str(),
                track_event::NAME_IID => name_iid = v.as_u64(),
                track_event::CATEGORIES => cat = cat.or(v.as_str()),
                track_event::CATEGORY_IIDS => {
                    cat_iid = cat_iid.or(Varints::new(v).next().and_then(Result::ok))
                }
                track_event::COUNTER_VALUE => value = v.as_i64().map(|i| i as f64),
                track_event::DOUBLE_COUNTER_VALUE => {
                    value = v.as_u64().map(f64::from_bits);
                }
                track_event::TIMESTAMP_DELTA_US => delta_us = v.as_i64(),
                track_event::LEGACY_EVENT => {
                    for f in Fields::new(v.as_bytes().unwrap_or_default()) {
                        if let (track_event::LEGACY_PHASE, v) = f? {
                            legacy_phase = v.as_u64();
                        }
                    }
                }
                track_event::TIMESTAMP_ABSOLUTE_US => absolute_us = v.as_i64(),
                _ => {}
            }
        }
        let seq = self.sequences.get_mut(&seq_id);
        // Legacy track events carry their own microsecond timestamps, deltas from the
        // sequence's ThreadDescriptor reference.
        let ts = match (absolute_us, delta_us, seq) {
            (Some(abs), _, _) => Some(abs.wrapping_mul(1000)),
            (None, Some(d), Some(s)) if s.reference_us.is_some() => {
                let r = s.reference_us.unwrap_or(0).wrapping_add(d);
                s.reference_us = Some(r);
                Some(r.wrapping_mul(1000))
            }
            _ => ts,
        };
        let Some(ts) = ts else {
            ev.diag.skip("track_event:no_timestamp");
            return Ok(());
        };
        let seq = self.sequences.get(&seq_id);
        let name = match (name, name_iid) {
            (Some(n), _) => Some(ev.strings.intern(n)),
            (None, Some(iid)) => seq.and_then(|s| s.names.get(&iid).copied()),
            (None, None) => None,
        };
        let cat = match (cat, cat_iid) {
            (Some(c), _) => Some(ev.strings.intern(c)),
            (None, Some(iid)) => seq.and_then(|s| s.categories.get(&iid).copied()),
            (None, None) => None,
        };
        // Without a track uuid an event is on the sequence's default track: the defaults'
        // uuid, else the legacy ThreadDescriptor's thread.
        let track = match (uuid, seq) {
            (Some(u), _) => TrackKey::Uuid(u),
            (None, Some(s)) => match (s.default_track, s.thread) {
                (Some(u), _) => TrackKey::Uuid(u),
                (None, Some(tid)) => TrackKey::Thread(tid),
                (None, None) => {
                    ev.diag.skip("track_event:no_track");
                    return Ok(());
                }
            },
            (None, None) => {
                ev.diag.skip("track_event:no_track");
                return Ok(());
            }
        };
        let unnamed = || ev_name_placeholder();
        match kind {
            track_event::TYPE_SLICE_BEGIN => {
                let name = name.unwrap_or_else(|| ev.strings.intern(unnamed()));
                ev.push_slice(ts, track, SliceKind::Begin { name, cat });
            }
            track_event::TYPE_SLICE_END => ev.push_slice(ts, track, SliceKind::End),
            track_event::TYPE_INSTANT => {
                let name = name.unwrap_or_else(|| ev.strings.intern(unnamed()));
                ev.push_slice(ts, track, SliceKind::Instant { name });
            }
            track_event::TYPE_COUNTER => match value {
                Some(value) => ev.push_slice(ts, track, SliceKind::Counter { value }),
                None => ev.diag.skip("track_event:counter_without_value"),
            },
            _ => match legacy_phase.and_then(|p| char::from_u32(p as u32)) {
                // Chrome's legacy async and flow phases (`b`, `e`, `S`, `F`, `(`, ...).
                Some(p) if p.is_ascii_graphic() => {
                    ev.diag.skip(&format!("track_event:legacy_phase_{p}"))
                }
                _ => ev.diag.skip("track_event:unknown_type"),
            },
        }
        Ok(())
    }

    fn bundle(&mut self, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
        // cpu may follow the events on the wire, so find it first.
        let mut cpu = 0u32;
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                bundle::CPU => cpu = v.as_u64().unwrap_or(0) as u32,
                bundle::LOST_EVENTS if v.as_u64().unwrap_or(0) != 0 => {
                    ev.diag.lost_events += 1;
                }
                _ => {}
            }
        }
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match (n, v) {
                (bundle::EVENT, Value::Bytes(b)) => self.ftrace_event(cpu, b, ev)?,
                (bundle::COMPACT_SCHED, Value::Bytes(b)) => self.compact_sched(cpu, b, ev)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn check_order(&mut self, cpu: u32, ts: i64, ev: &mut Events) {
        let i = cpu as usize;
        if i >= self.last_ts.len() {
            // CPU numbers come from the file; cap the table so garbage cannot allocate much.
            if i >= 4096 {
                return;
            }
            self.last_ts.resize(i + 1, i64::MIN);
        }
        if ts < self.last_ts[i] {
            ev.diag.out_of_order += 1;
        } else {
            self.last_ts[i] = ts;
        }
    }

    fn ftrace_event(&mut self, cpu: u32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
        let (mut ts, mut pid) = (0i64, None);
        let mut payload = None;
        for f in Fields::new(buf) {
            let (n, v) = f?;
            match n {
                ftrace::TIMESTAMP => ts = v.as_u64().unwrap_or(0) as i64,
                ftrace::PID => pid = v.as_i32(),
                _ => {
                    if let Value::Bytes(b) = v {
                        payload = Some((n, b));
                    }
                }
            }
        }
        let Some(ts) = self.ftrace_ts(ts, ev) else {
            return Ok(());
        };
        self.check_order(cpu, ts, ev);
        let Some((n, b)) = payload else {
            ev.diag.skip("ftrace:empty_event");
            return Ok(());
        };
        match n {
            ftrace::SCHED_SWITCH => sched_switch(ts, cpu, b, ev),
            ftrace::SCHED_WAKING | ftrace::SCHED_WAKEUP | ftrace::SCHED_WAKEUP_NEW => {
                sched_waking(ts, cpu, pid, n == ftrace::SCHED_WAKEUP, b, ev)
            }
            ftrace::CPU_FREQUENCY | ftrace::CPU_IDLE => {
                let (mut state, mut cpu_id) = (None, None);
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        ftrace::cpu::STATE => state = v.as_u64(),
                        ftrace::cpu::CPU_ID => cpu_id = v.as_u64(),
                        _ => {}
                    }
                }
                match (state, cpu_id) {
                    (Some(state), Some(c)) => {
                        ev.cpu_counter(ts, n == ftrace::CPU_FREQUENCY, c as u32, state)
                    }
                    _ => ev.diag.skip("ftrace:cpu_counter_without_state"),
                }
                Ok(())
            }
            ftrace::SCHED_BLOCKED_REASON => blocked_reason(ts, cpu, b, ev),
            ftrace::PRINT => print(ts, cpu, pid.unwrap_or(0), b, ev),
            ftrace::GENERIC => generic(ts, cpu, b, ev),
            ftrace::BINDER_TRANSACTION | ftrace::BINDER_TRANSACTION_RECEIVED => {
                binder_event(ts, pid, n == ftrace::BINDER_TRANSACTION, b, ev)
            }
            n => {
                self.skip(ev, 1, n, Some(ftrace::event_name(n)));
                Ok(())
            }
        }
    }

    fn compact_sched(&mut self, cpu: u32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
        let mut strings: Vec<&str> = Vec::new();
        let mut sw_ts = Vec::new();
        let mut sw_state = Vec::new();
        let mut sw_pid = Vec::new();
        let mut sw_prio = Vec::new();
        let mut sw_comm = Vec::new();
        let mut wk_ts = Vec::new();
        let mut wk_pid = Vec::new();
        let mut wk_comm = Vec::new();
        for f in Fields::new(buf) {
            let (n, v) = f?;
            let col = match n {
                compact::INTERN_TABLE => {
                    strings.push(v.as_str().unwrap_or(""));
                    continue;
                }
                compact::SWITCH_TIMESTAMP => &mut sw_ts,
                compact::SWITCH_PREV_STATE => &mut sw_state,
                compact::SWITCH_NEXT_PID => &mut sw_pid,
                compact::SWITCH_NEXT_PRIO => &mut sw_prio,
                compact::SWITCH_NEXT_COMM_INDEX => &mut sw_comm,
                compact::WAKING_TIMESTAMP => &mut wk_ts,
                compact::WAKING_PID => &mut wk_pid,
                compact::WAKING_COMM_INDEX => &mut wk_comm,
                compact::WAKING_TARGET_CPU | compact::WAKING_PRIO => continue,
                _ => continue,
            };
            for x in Varints::new(v) {
                col.push(x?);
            }
        }
        let n = sw_ts.len();
        if [sw_state.len(), sw_pid.len(), sw_prio.len(), sw_comm.len()] != [n; 4] {
            ev.diag.corrupt += 1;
            ev.diag
                .note("compact_sched: switch columns differ in length; shortest used");
        }
        let n = n
            .min(sw_state.len())
            .min(sw_pid.len())
            .min(sw_prio.len())
            .min(sw_comm.len());
        // Timestamps are delta-encoded within the bundle.
        let mut ts = 0u64;
        for i in 0..n {
            ts = ts.wrapping_add(sw_ts[i]);
            let Some(tsi) = self.ftrace_ts(ts as i64, ev) else {
                continue;
            };
            self.check_order(cpu, tsi, ev);
            let next_tid = sw_pid[i] as i32;
            if let Some(comm) = strings.get(sw_comm[i] as usize) {
                ev.note_comm(next_tid, comm);
            }
            ev.push_sched(
                tsi,
                cpu,
                SchedKind::Switch {
                    prev_tid: None,
                    prev_state: PrevState::Bits(sw_state[i] as i64),
                    next_tid,
                    next_prio: sw_prio[i] as i32,
                },
            );
        }
        let n = wk_ts.len().min(wk_pid.len());
        let mut ts = 0u64;
        for i in 0..n {
            ts = ts.wrapping_add(wk_ts[i]);
            let Some(tsi) = self.ftrace_ts(ts as i64, ev) else {
                continue;
            };
            let tid = wk_pid[i] as i32;
            if let Some(comm) = wk_comm.get(i).and_then(|&c| strings.get(c as usize)) {
                ev.note_comm(tid, comm);
            }
            ev.push_sched(
                tsi,
                cpu,
                SchedKind::Waking {
                    tid,
                    waker: None,
                    wakeup: false,
                },
            );
        }
        Ok(())
    }
}

fn ev_name_placeholder() -> &'static str {
    "[unnamed]"
}

fn sched_switch(ts: i64, cpu: u32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    use ftrace::switch::*;
    let (mut prev_comm, mut next_comm) = ("", "");
    let (mut prev_tid, mut next_tid, mut next_prio, mut prev_state) = (0, 0, 0, 0i64);
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match n {
            PREV_COMM => prev_comm = text(v)?,
            PREV_PID => prev_tid = v.as_i32().unwrap_or(0),
            PREV_STATE => prev_state = v.as_i64().unwrap_or(0),
            NEXT_COMM => next_comm = text(v)?,
            NEXT_PID => next_tid = v.as_i32().unwrap_or(0),
            NEXT_PRIO => next_prio = v.as_i32().unwrap_or(0),
            _ => {}
        }
    }
    ev.note_comm(prev_tid, prev_comm);
    ev.note_comm(next_tid, next_comm);
    ev.push_sched(
        ts,
        cpu,
        SchedKind::Switch {
            prev_tid: Some(prev_tid),
            prev_state: PrevState::Bits(prev_state),
            next_tid,
            next_prio,
        },
    );
    Ok(())
}

fn sched_waking(
    ts: i64,
    cpu: u32,
    waker: Option<i32>,
    wakeup: bool,
    buf: &[u8],
    ev: &mut Events,
) -> Result<(), WireError> {
    use ftrace::waking::*;
    let (mut comm, mut tid) = ("", 0);
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match n {
            COMM => comm = text(v)?,
            PID => tid = v.as_i32().unwrap_or(0),
            _ => {}
        }
    }
    ev.note_comm(tid, comm);
    ev.push_sched(ts, cpu, SchedKind::Waking { tid, waker, wakeup });
    Ok(())
}

fn blocked_reason(ts: i64, cpu: u32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    use ftrace::blocked::*;
    let (mut tid, mut caller, mut io_wait) = (0, 0u64, false);
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match n {
            PID => tid = v.as_i32().unwrap_or(0),
            CALLER => caller = v.as_u64().unwrap_or(0),
            IO_WAIT => io_wait = v.as_u64().unwrap_or(0) != 0,
            _ => {}
        }
    }
    // Protobuf carries the caller as a kernel address; text ftrace already symbolizes it.
    let function = ev.strings.intern(&format!("{caller:#x}"));
    ev.push_sched(
        ts,
        cpu,
        SchedKind::Blocked {
            tid,
            function,
            io_wait,
        },
    );
    Ok(())
}

fn print(ts: i64, cpu: u32, tid: i32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    let mut text_buf = "";
    for f in Fields::new(buf) {
        let (n, v) = f?;
        if n == ftrace::print::BUF {
            text_buf = text(v)?;
        }
    }
    let line = text_buf.trim_end_matches(['\n', '\0']);
    if superpass::is_superpass(line) {
        superpass::record_line(ev, ts, cpu, line);
    } else if !ev.atrace(ts, tid, line) {
        ev.diag.skip("ftrace:print_not_atrace");
    }
    Ok(())
}

fn generic(ts: i64, cpu: u32, buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    use ftrace::generic::*;
    let mut name = "";
    let mut fields: Vec<(&str, String)> = Vec::new();
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match (n, v) {
            (EVENT_NAME, v) => name = text(v)?,
            (FIELD, Value::Bytes(b)) => {
                let (mut key, mut val) = ("", String::new());
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        FIELD_NAME => key = text(v)?,
                        FIELD_STR => val = text(v)?.to_owned(),
                        FIELD_INT => val = v.as_i64().unwrap_or(0).to_string(),
                        FIELD_UINT => val = v.as_u64().unwrap_or(0).to_string(),
                        _ => {}
                    }
                }
                fields.push((key, val));
            }
            _ => {}
        }
    }
    if superpass::is_superpass(name) {
        let parsed = superpass::parse(name, |k| {
            fields
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.as_str())
        });
        superpass::record(ev, ts, cpu, name, parsed);
    } else {
        ev.diag.skip("ftrace:generic_event");
    }
    Ok(())
}

/// `binder_transaction` (`sent`) or `binder_transaction_received` of thread `tid` (the
/// event's pid). A field the kernel always writes may be absent (0 on the wire); only a
/// missing `debug_id` or thread makes the event malformed ([`binder::record`]).
fn binder_event(
    ts: i64,
    tid: Option<i32>,
    sent: bool,
    buf: &[u8],
    ev: &mut Events,
) -> Result<(), WireError> {
    use ftrace::binder::*;
    let (mut debug_id, mut to_proc, mut to_thread) = (None, 0, 0);
    let (mut reply, mut flags, mut code) = (0, 0, 0);
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match n {
            DEBUG_ID => debug_id = v.as_i32(),
            TO_PROC => to_proc = v.as_i32().unwrap_or(0),
            TO_THREAD => to_thread = v.as_i32().unwrap_or(0),
            REPLY => reply = v.as_i64().unwrap_or(0),
            FLAGS => flags = v.as_u64().unwrap_or(0) as u32,
            CODE => code = v.as_u64().unwrap_or(0) as u32,
            _ => {}
        }
    }
    let kind = debug_id.and_then(|debug_id| match (sent, reply) {
        (false, _) => Some(BinderKind::Received { debug_id }),
        (true, 0 | 1) => Some(BinderKind::Transaction {
            debug_id,
            to_proc,
            to_thread,
            reply: reply == 1,
            flags,
            code,
        }),
        (true, _) => None,
    });
    let name = if sent {
        binder::TRANSACTION
    } else {
        binder::RECEIVED
    };
    binder::record(ev, ts, tid, kind, || {
        format!("Perfetto {name} at {ts} ns (pid {tid:?}, debug_id {debug_id:?}, reply {reply})")
    });
    Ok(())
}

fn process_tree(buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    for f in Fields::new(buf) {
        let (n, v) = f?;
        let Some(b) = v.as_bytes() else { continue };
        match n {
            process_tree::PROCESSES => {
                let (mut pid, mut cmdline) = (None, None);
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        process_tree::PROCESS_PID => pid = v.as_i32(),
                        // The first cmdline element names the process.
                        process_tree::PROCESS_CMDLINE if cmdline.is_none() => cmdline = v.as_str(),
                        _ => {}
                    }
                }
                if let Some(pid) = pid {
                    ev.declare_process(pid, cmdline);
                }
            }
            process_tree::THREADS => {
                let (mut tid, mut tgid, mut name) = (None, None, None);
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        process_tree::THREAD_TID => tid = v.as_i32(),
                        process_tree::THREAD_TGID => tgid = v.as_i32(),
                        process_tree::THREAD_NAME => name = v.as_str(),
                        _ => {}
                    }
                }
                if let Some(tid) = tid {
                    ev.declare_thread(tid, tgid, name);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn track_descriptor(buf: &[u8], ev: &mut Events) -> Result<(), WireError> {
    let mut uuid = None;
    let mut info = TrackInfo::default();
    for f in Fields::new(buf) {
        let (n, v) = f?;
        match n {
            track::UUID => uuid = v.as_u64(),
            track::NAME => info.name = v.as_str().map(str::to_owned),
            track::COUNTER => info.counter = true,
            track::PROCESS => {
                let Some(b) = v.as_bytes() else { continue };
                let (mut pid, mut name) = (None, None);
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        track::PROCESS_PID => pid = v.as_i32(),
                        track::PROCESS_NAME => name = v.as_str(),
                        track::PROCESS_CMDLINE if name.is_none() => name = v.as_str(),
                        _ => {}
                    }
                }
                if let Some(pid) = pid {
                    ev.declare_process(pid, name);
                    info.pid = Some(pid);
                }
            }
            track::THREAD => {
                let Some(b) = v.as_bytes() else { continue };
                let (mut pid, mut tid, mut name) = (None, None, None);
                for f in Fields::new(b) {
                    let (n, v) = f?;
                    match n {
                        track::THREAD_PID => pid = v.as_i32(),
                        track::THREAD_TID => tid = v.as_i32(),
                        track::THREAD_NAME => name = v.as_str(),
                        _ => {}
                    }
                }
                if let Some(tid) = tid {
                    ev.declare_thread(tid, pid, name);
                    info.tid = Some(tid);
                    info.pid = pid;
                }
            }
            _ => {}
        }
    }
    if let Some(uuid) = uuid {
        ev.tracks.insert(uuid, info);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::{FieldValue, TraceWriter};

    fn decode_ok(bytes: &[u8]) -> Events {
        let mut ev = Events::default();
        decode(bytes, &mut ev).unwrap();
        ev
    }

    #[test]
    fn writer_output_decodes() {
        let mut w = TraceWriter::new();
        w.process(10, "app");
        w.thread(10, 11, "ui");
        w.sched_switch(100, 0, "swapper/0", 0, 120, 0, "ui", 11, 110);
        w.sched_waking(150, 0, "bg", 12, 120, 1);
        w.sched_blocked_reason(160, 0, 11, 0xffff_0000_1234, false);
        w.print(170, 0, 11, "B|10|lockwait:l\n");
        w.generic(
            180,
            0,
            11,
            "superpass_block",
            &[
                ("waiter", FieldValue::Int(11)),
                ("blocker", FieldValue::Int(12)),
                ("lock", FieldValue::Uint(0x10)),
                ("kind", FieldValue::Str("mutex")),
            ],
        );
        w.slice_begin(200, 11, "lockhold:l");
        w.slice_end(300, 11);
        let ev = decode_ok(&w.finish());
        assert_eq!(ev.sched.len(), 3);
        assert_eq!(ev.slices.len(), 3);
        assert_eq!(ev.superpass.len(), 1);
        assert_eq!(ev.threads[&11].name.as_deref(), Some("ui"));
        assert_eq!(ev.threads[&11].pid, Some(10));
        assert_eq!(ev.processes[&10].as_deref(), Some("app"));
        assert_eq!(ev.threads[&12].comm.as_deref(), Some("bg"));
        // The waking was emitted while `ui` ran on CPU 0, so the writer names it the waker.
        assert!(matches!(
            ev.sched[1].kind,
            SchedKind::Waking {
                tid: 12,
                waker: Some(11),
                wakeup: false
            }
        ));
        assert_eq!(ev.diag, Default::default());
    }

    #[test]
    fn superpass_generic_and_print_events() {
        use crate::events::SpKind;
        let mut w = TraceWriter::new();
        let queue = [
            ("cpu", FieldValue::Uint(1)),
            ("tid", FieldValue::Int(456)),
            ("run_now", FieldValue::Uint(1)),
        ];
        w.generic(10, 1, 456, "superpass_queue", &queue);
        let throttle = [
            ("cpu", FieldValue::Uint(1)),
            ("for_us", FieldValue::Uint(42)),
        ];
        w.generic(20, 1, 0, "superpass_throttle", &throttle);
        // The struct field: the module's bits, not TP_printk's words.
        w.generic(
            30,
            0,
            0,
            "superpass_probes",
            &[("groups", FieldValue::Uint(3))],
        );
        w.print(40, 0, 7, "superpass_probes: groups=readers\n");
        // Malformed: no run_now; a word that is no probe group.
        w.generic(50, 1, 456, "superpass_queue", &queue[..2]);
        w.print(60, 0, 7, "superpass_probes: groups=writers\n");
        // A newer module's event.
        w.generic(70, 0, 0, "superpass_later", &[("x", FieldValue::Int(1))]);
        let mut ev = decode_ok(&w.finish());
        // The writer bundles events per CPU.
        ev.superpass.sort_by_key(|e| e.ts);
        let kinds: Vec<&SpKind> = ev.superpass.iter().map(|e| &e.kind).collect();
        assert_eq!(
            kinds,
            [
                &SpKind::Queue {
                    cpu: 1,
                    tid: 456,
                    run_now: true
                },
                &SpKind::Throttle {
                    cpu: 1,
                    dur: 42_000
                },
                &SpKind::Probes { groups: 3 },
                &SpKind::Probes { groups: 2 },
            ]
        );
        assert_eq!(ev.diag.skipped.get("superpass:malformed"), Some(&2));
        assert_eq!(ev.diag.skipped.get("ftrace:superpass_later"), Some(&1));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut ev = Events::default();
        assert!(decode(b"hello world", &mut ev).is_err());
        assert!(decode(&[], &mut ev).is_err());
    }

    #[test]
    fn truncated_trace_keeps_whole_packets() {
        let mut w = TraceWriter::new();
        for i in 0..10 {
            w.slice_begin(i * 10, 1, "s");
            w.slice_end(i * 10 + 5, 1);
        }
        let bytes = w.finish();
        let ev = decode_ok(&bytes[..bytes.len() - 3]);
        assert!(ev.diag.truncated);
        assert_eq!(ev.slices.len(), 19);
    }

    #[test]
    fn compact_sched_decodes() {
        use crate::wire::{put_bytes, put_message, put_uint, put_varint};
        let mut out = Vec::new();
        put_message(&mut out, trace::PACKET, |p| {
            put_message(p, packet::FTRACE_EVENTS, |b| {
                put_uint(b, bundle::CPU, 2);
                put_message(b, bundle::COMPACT_SCHED, |c| {
                    put_bytes(c, compact::INTERN_TABLE, b"worker");
                    let col = |c: &mut Vec<u8>, field, vals: &[u64]| {
                        put_message(c, field, |c| vals.iter().for_each(|&v| put_varint(c, v)))
                    };
                    col(c, compact::SWITCH_TIMESTAMP, &[1000, 50]);
                    col(c, compact::SWITCH_PREV_STATE, &[1, 0]);
                    col(c, compact::SWITCH_NEXT_PID, &[42, 0]);
                    col(c, compact::SWITCH_NEXT_PRIO, &[120, 120]);
                    col(c, compact::SWITCH_NEXT_COMM_INDEX, &[0, 0]);
                });
            });
        });
        let ev = decode_ok(&out);
        assert_eq!(ev.sched.len(), 2);
        assert_eq!(ev.sched[1].ts, 1050);
        assert_eq!(ev.sched[1].cpu, 2);
        assert_eq!(ev.threads[&42].comm.as_deref(), Some("worker"));
    }
}
