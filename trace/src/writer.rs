//! Writes Perfetto protobuf traces (`.pftrace`) that both Perfetto and this crate import.
//!
//! The layout follows what `traced` itself produces, so the Perfetto UI and trace_processor
//! read it unchanged:
//! - one `TrackDescriptor` per process and per thread (thread tracks parented to their
//!   process), written when [`TraceWriter::process`] / [`TraceWriter::thread`] are called;
//! - sched events in per-CPU `FtraceEventBundle`s, flushed every [`BUNDLE_EVENTS`] events
//!   per CPU and at [`TraceWriter::finish`];
//! - `TrackEvent` slice begin/end packets on one trusted sequence whose first packet clears
//!   incremental state (no interning, so no further state is needed).
//!
//! All timestamps are nanoseconds in one clock domain (Perfetto's default, the boot clock).
//!
//! ```
//! use superpass_trace::writer::TraceWriter;
//! let mut w = TraceWriter::new();
//! w.process(100, "app");
//! w.thread(100, 101, "RenderThread");
//! w.slice_begin(1_000, 101, "lockwait:big_lock");
//! w.slice_end(5_000, 101);
//! let bytes = w.finish();
//! assert_eq!(bytes[0], 0x0a); // Trace.packet, length-delimited
//! ```

use std::collections::HashSet;

use crate::binder::BinderKind;
use crate::proto::{bundle, ftrace, packet, trace, track, track_event};
use crate::wire::{put_bytes, put_int, put_message, put_uint};

/// Events buffered per CPU before a bundle packet is written.
pub const BUNDLE_EVENTS: usize = 1024;

/// Sequence id for track-event packets and descriptors.
const SEQ_TRACK_EVENTS: u64 = 1;
/// Sequence id for ftrace bundles (traced_probes uses its own sequence too).
const SEQ_FTRACE: u64 = 2;

/// Track uuids: a fixed tag in the high bits keeps process and thread tracks apart.
const PROCESS_UUID_TAG: u64 = 0x5350_0000_0000_0000;
const THREAD_UUID_TAG: u64 = 0x5354_0000_0000_0000;

/// The uuid of the track that [`TraceWriter::process`] declares for `pid`.
pub fn process_track_uuid(pid: i32) -> u64 {
    PROCESS_UUID_TAG | u64::from(pid as u32)
}

/// The uuid of the track that [`TraceWriter::thread`] declares for `tid`.
pub fn thread_track_uuid(tid: i32) -> u64 {
    THREAD_UUID_TAG | u64::from(tid as u32)
}

/// A value of a generic ftrace event field (`GenericFtraceEvent.Field`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// `str_value`.
    Str(&'a str),
    /// `int_value`.
    Int(i64),
    /// `uint_value`.
    Uint(u64),
}

#[derive(Default)]
struct CpuBundle {
    events: Vec<u8>,
    count: usize,
    /// The thread the last sched_switch on this CPU switched in.
    current: Option<i32>,
}

/// Builds a Perfetto `Trace` message in memory.
pub struct TraceWriter {
    out: Vec<u8>,
    cpus: Vec<CpuBundle>,
    threads: HashSet<i32>,
    track_seq_started: bool,
}

impl Default for TraceWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceWriter {
    /// Starts an empty trace.
    pub fn new() -> Self {
        TraceWriter {
            out: Vec::with_capacity(1 << 16),
            cpus: Vec::new(),
            threads: HashSet::new(),
            track_seq_started: false,
        }
    }

    /// Declares process `pid` named `name` (a process `TrackDescriptor`).
    pub fn process(&mut self, pid: i32, name: &str) {
        self.track_packet(None, |p| {
            put_message(p, packet::TRACK_DESCRIPTOR, |d| {
                put_uint(d, track::UUID, process_track_uuid(pid));
                put_message(d, track::PROCESS, |pd| {
                    put_int(pd, track::PROCESS_PID, i64::from(pid));
                    put_bytes(pd, track::PROCESS_NAME, name.as_bytes());
                });
            });
        });
    }

    /// Declares thread `tid` of process `pid` named `name` (a thread `TrackDescriptor`).
    pub fn thread(&mut self, pid: i32, tid: i32, name: &str) {
        self.threads.insert(tid);
        self.track_packet(None, |p| {
            put_message(p, packet::TRACK_DESCRIPTOR, |d| {
                put_uint(d, track::UUID, thread_track_uuid(tid));
                put_uint(d, track::PARENT_UUID, process_track_uuid(pid));
                put_message(d, track::THREAD, |td| {
                    put_int(td, track::THREAD_PID, i64::from(pid));
                    put_int(td, track::THREAD_TID, i64::from(tid));
                    put_bytes(td, track::THREAD_NAME, name.as_bytes());
                });
            });
        });
    }

    /// Records a `sched_switch` on `cpu`; `prev_state` is the kernel's reported task state
    /// (0 runnable, 1 S, 2 D, 0x100 preempted).
    #[expect(clippy::too_many_arguments, reason = "mirrors sched_switch's fields")]
    pub fn sched_switch(
        &mut self,
        ts_ns: u64,
        cpu: u32,
        prev_comm: &str,
        prev_tid: i32,
        prev_prio: i32,
        prev_state: i64,
        next_comm: &str,
        next_tid: i32,
        next_prio: i32,
    ) {
        self.ftrace_event(ts_ns, cpu, prev_tid, |e| {
            put_message(e, ftrace::SCHED_SWITCH, |s| {
                use ftrace::switch::*;
                put_bytes(s, PREV_COMM, prev_comm.as_bytes());
                put_int(s, PREV_PID, i64::from(prev_tid));
                put_int(s, PREV_PRIO, i64::from(prev_prio));
                put_int(s, PREV_STATE, prev_state);
                put_bytes(s, NEXT_COMM, next_comm.as_bytes());
                put_int(s, NEXT_PID, i64::from(next_tid));
                put_int(s, NEXT_PRIO, i64::from(next_prio));
            });
        });
        self.cpus[cpu as usize].current = Some(next_tid);
    }

    /// Records a `sched_waking` of `tid`, emitted on `cpu` (the waker's CPU).
    ///
    /// The waker (`FtraceEvent.pid`, as the kernel records it) is the thread that the last
    /// [`TraceWriter::sched_switch`] on `cpu` switched in; use
    /// [`TraceWriter::sched_waking_by`] to name it explicitly.
    pub fn sched_waking(
        &mut self,
        ts_ns: u64,
        cpu: u32,
        comm: &str,
        tid: i32,
        prio: i32,
        target_cpu: i32,
    ) {
        let waker = self.cpus.get(cpu as usize).and_then(|c| c.current);
        self.sched_waking_by(ts_ns, cpu, waker, comm, tid, prio, target_cpu);
    }

    /// Records a `sched_waking` whose `FtraceEvent.pid` (the current task, the waker) is
    /// `waker_tid` when given.
    #[expect(clippy::too_many_arguments, reason = "mirrors sched_waking's fields")]
    pub fn sched_waking_by(
        &mut self,
        ts_ns: u64,
        cpu: u32,
        waker_tid: Option<i32>,
        comm: &str,
        tid: i32,
        prio: i32,
        target_cpu: i32,
    ) {
        let body = |e: &mut Vec<u8>| {
            put_message(e, ftrace::SCHED_WAKING, |s| {
                use ftrace::waking::*;
                put_bytes(s, COMM, comm.as_bytes());
                put_int(s, PID, i64::from(tid));
                put_int(s, PRIO, i64::from(prio));
                put_int(s, TARGET_CPU, i64::from(target_cpu));
            });
        };
        match waker_tid {
            Some(w) => self.ftrace_event(ts_ns, cpu, w, body),
            None => self.ftrace_event_no_pid(ts_ns, cpu, body),
        }
    }

    /// Records a `sched_blocked_reason` for `tid`; `caller` is the kernel address it slept in.
    pub fn sched_blocked_reason(
        &mut self,
        ts_ns: u64,
        cpu: u32,
        tid: i32,
        caller: u64,
        io_wait: bool,
    ) {
        self.ftrace_event(ts_ns, cpu, tid, |e| {
            put_message(e, ftrace::SCHED_BLOCKED_REASON, |s| {
                use ftrace::blocked::*;
                put_int(s, PID, i64::from(tid));
                put_uint(s, CALLER, caller);
                put_uint(s, IO_WAIT, u64::from(io_wait));
            });
        });
    }

    /// Records an ftrace `print` event by `tid`, e.g. atrace's `B|pid|name`, `E|pid`,
    /// `C|pid|name|value`.
    pub fn print(&mut self, ts_ns: u64, cpu: u32, tid: i32, text: &str) {
        self.ftrace_event(ts_ns, cpu, tid, |e| {
            put_message(e, ftrace::PRINT, |s| {
                put_bytes(s, ftrace::print::BUF, text.as_bytes());
            });
        });
    }

    /// Records an ftrace event of a type Perfetto has no proto for (`GenericFtraceEvent`),
    /// such as SuperPass's `superpass_block`.
    pub fn generic(
        &mut self,
        ts_ns: u64,
        cpu: u32,
        tid: i32,
        event_name: &str,
        fields: &[(&str, FieldValue<'_>)],
    ) {
        self.ftrace_event(ts_ns, cpu, tid, |e| {
            put_message(e, ftrace::GENERIC, |g| {
                use ftrace::generic::*;
                put_bytes(g, EVENT_NAME, event_name.as_bytes());
                for (name, value) in fields {
                    put_message(g, FIELD, |f| {
                        put_bytes(f, FIELD_NAME, name.as_bytes());
                        match *value {
                            FieldValue::Str(s) => put_bytes(f, FIELD_STR, s.as_bytes()),
                            FieldValue::Int(i) => put_int(f, FIELD_INT, i),
                            FieldValue::Uint(u) => put_uint(f, FIELD_UINT, u),
                        }
                    });
                }
            });
        });
    }

    /// Records binder event `ev` of thread `tid`: a `binder_transaction` it sends (a call,
    /// one-way with `TF_ONE_WAY` = 1 in its flags, or a reply to its `to_thread`), or a
    /// `binder_transaction_received` (it took a call, as its server, or a reply, as its caller).
    pub fn binder(&mut self, ts_ns: u64, cpu: u32, tid: i32, ev: &BinderKind) {
        self.ftrace_event(ts_ns, cpu, tid, |e| match *ev {
            BinderKind::Transaction {
                debug_id,
                to_proc,
                to_thread,
                reply,
                flags,
                code,
            } => put_message(e, ftrace::BINDER_TRANSACTION, |b| {
                use ftrace::binder::*;
                put_int(b, DEBUG_ID, i64::from(debug_id));
                put_int(b, TARGET_NODE, 0);
                put_int(b, TO_PROC, i64::from(to_proc));
                put_int(b, TO_THREAD, i64::from(to_thread));
                put_int(b, REPLY, i64::from(reply));
                put_uint(b, CODE, u64::from(code));
                put_uint(b, FLAGS, u64::from(flags));
            }),
            BinderKind::Received { debug_id } => {
                put_message(e, ftrace::BINDER_TRANSACTION_RECEIVED, |b| {
                    put_int(b, ftrace::binder::DEBUG_ID, i64::from(debug_id));
                })
            }
        });
    }

    /// Begins a track-event slice named `name` on thread `tid`'s track.
    pub fn slice_begin(&mut self, ts_ns: u64, tid: i32, name: &str) {
        self.ensure_thread(tid);
        self.track_packet(Some(ts_ns), |p| {
            put_message(p, packet::TRACK_EVENT, |e| {
                put_uint(e, track_event::TYPE, track_event::TYPE_SLICE_BEGIN);
                put_uint(e, track_event::TRACK_UUID, thread_track_uuid(tid));
                put_bytes(e, track_event::NAME, name.as_bytes());
            });
        });
    }

    /// Ends the innermost open slice on thread `tid`'s track.
    pub fn slice_end(&mut self, ts_ns: u64, tid: i32) {
        self.ensure_thread(tid);
        self.track_packet(Some(ts_ns), |p| {
            put_message(p, packet::TRACK_EVENT, |e| {
                put_uint(e, track_event::TYPE, track_event::TYPE_SLICE_END);
                put_uint(e, track_event::TRACK_UUID, thread_track_uuid(tid));
            });
        });
    }

    /// Bytes written so far, not counting events still buffered per CPU.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether nothing has been written yet.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty() && self.cpus.iter().all(|c| c.count == 0)
    }

    /// Flushes buffered sched events and returns the complete `Trace` message.
    pub fn finish(mut self) -> Vec<u8> {
        for cpu in 0..self.cpus.len() {
            self.flush_cpu(cpu);
        }
        self.out
    }

    /// Threads used by slices without a [`TraceWriter::thread`] call get a descriptor with
    /// `pid = tid`, so the slices still land on a thread track.
    fn ensure_thread(&mut self, tid: i32) {
        if !self.threads.contains(&tid) {
            self.thread(tid, tid, "");
        }
    }

    fn track_packet(&mut self, ts: Option<u64>, body: impl FnOnce(&mut Vec<u8>)) {
        let first = !self.track_seq_started;
        self.track_seq_started = true;
        put_message(&mut self.out, trace::PACKET, |p| {
            if let Some(ts) = ts {
                put_uint(p, packet::TIMESTAMP, ts);
            }
            put_uint(p, packet::TRUSTED_PACKET_SEQUENCE_ID, SEQ_TRACK_EVENTS);
            if first {
                put_uint(
                    p,
                    packet::SEQUENCE_FLAGS,
                    packet::SEQ_INCREMENTAL_STATE_CLEARED,
                );
                put_uint(p, packet::FIRST_PACKET_ON_SEQUENCE, 1);
            }
            body(p);
        });
    }

    fn ftrace_event(&mut self, ts: u64, cpu: u32, pid: i32, body: impl FnOnce(&mut Vec<u8>)) {
        self.ftrace_event_inner(ts, cpu, Some(pid), body);
    }

    fn ftrace_event_no_pid(&mut self, ts: u64, cpu: u32, body: impl FnOnce(&mut Vec<u8>)) {
        self.ftrace_event_inner(ts, cpu, None, body);
    }

    fn ftrace_event_inner(
        &mut self,
        ts: u64,
        cpu: u32,
        pid: Option<i32>,
        body: impl FnOnce(&mut Vec<u8>),
    ) {
        let idx = cpu as usize;
        if self.cpus.len() <= idx {
            self.cpus.resize_with(idx + 1, CpuBundle::default);
        }
        let b = &mut self.cpus[idx];
        put_message(&mut b.events, bundle::EVENT, |e| {
            put_uint(e, ftrace::TIMESTAMP, ts);
            if let Some(pid) = pid {
                put_uint(e, ftrace::PID, u64::from(pid as u32));
            }
            body(e);
        });
        b.count += 1;
        if b.count >= BUNDLE_EVENTS {
            self.flush_cpu(idx);
        }
    }

    fn flush_cpu(&mut self, cpu: usize) {
        let b = &mut self.cpus[cpu];
        if b.count == 0 {
            return;
        }
        let events = std::mem::take(&mut b.events);
        b.count = 0;
        put_message(&mut self.out, trace::PACKET, |p| {
            put_uint(p, packet::TRUSTED_PACKET_SEQUENCE_ID, SEQ_FTRACE);
            put_message(p, packet::FTRACE_EVENTS, |fb| {
                put_uint(fb, bundle::CPU, cpu as u64);
                fb.extend_from_slice(&events);
            });
        });
        // Reuse the allocation for the next bundle.
        let b = &mut self.cpus[cpu];
        b.events = events;
        b.events.clear();
    }
}
