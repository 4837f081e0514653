//! Field numbers of the Perfetto trace protos that this crate reads and writes.
//!
//! These are facts from `protos/perfetto/trace/**.proto` (checked against the
//! `perfetto_trace_pb2` descriptors shipped by the `perfetto` Python package).

/// `Trace`.
pub mod trace {
    /// `repeated TracePacket packet = 1`.
    pub const PACKET: u32 = 1;
}

/// `TracePacket`.
pub mod packet {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const TIMESTAMP: u32 = 8;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const INCREMENTAL_STATE_CLEARED: u32 = 41;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const FIRST_PACKET_ON_SEQUENCE: u32 = 87;
    /// `sequence_flags` bit: interned state starts afresh with this packet.
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const THREAD_DESCRIPTOR: u32 = 44;
    /// zlib-deflated `Trace` bytes holding more packets.
    pub const COMPRESSED_PACKETS: u32 = 50;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const TRACE_PACKET_DEFAULTS: u32 = 59;

    /// The name of a `TracePacket` field, for the skipped-data table; `None` for fields that
    /// describe the capture rather than carry trace data (nothing is lost by skipping them).
    pub fn data_field_name(n: u32) -> Option<&'static str> {
        Some(match n {
            // Capture metadata: configuration, statistics, identities, markers.
            3 | 33 | 35 | 36 | 45 | 69 | 79 | 89 | 98 => return None,
            5 => "chrome_events",
            7 => "sys_stats",
            9 => "process_stats",
            34 => "ftrace_stats",
            37 => "profile_packet",
            38 => "battery",
            39 => "android_log",
            40 => "power_rails",
            42 => "previous_packet_dropped",
            43 => "process_descriptor",
            47 => "packages_list",
            48 => "chrome_benchmark_metadata",
            51 => "chrome_metadata",
            52 => "gpu_counter_event",
            66 => "perf_sample",
            70 => "initial_display_state",
            72 => "extension_descriptor",
            73 => "memory_tracker_snapshot",
            77 => "android_energy_estimation_breakdown",
            78 => "ui_state",
            84 => "statsd_atom",
            _ => "other",
        })
    }
}

/// `TracePacketDefaults` and `TrackEventDefaults`.
pub mod defaults {
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const TRACK_EVENT_DEFAULTS: u32 = 11;
    pub const TRACK_UUID: u32 = 11;
}

/// `ClockSnapshot` and its `Clock`.
pub mod clock {
    pub const CLOCKS: u32 = 1;
    pub const PRIMARY_TRACE_CLOCK: u32 = 2;
    pub const CLOCK_ID: u32 = 1;
    pub const TIMESTAMP: u32 = 2;
    pub const IS_INCREMENTAL: u32 = 3;
    pub const UNIT_MULTIPLIER_NS: u32 = 4;
    /// `BUILTIN_CLOCK_BOOTTIME`: the trace's time base unless it says otherwise.
    pub const BOOTTIME: u64 = 6;
    /// Clock ids from here to 127 are scoped to one packet sequence.
    pub const FIRST_SEQUENCE_CLOCK: u64 = 64;
}

/// `ThreadDescriptor` (the legacy per-sequence thread of a track-event writer).
pub mod thread_descriptor {
    pub const PID: u32 = 1;
    pub const TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;
    pub const REFERENCE_TIMESTAMP_US: u32 = 6;
}

/// `FtraceEventBundle`.
pub mod bundle {
    pub const CPU: u32 = 1;
    pub const EVENT: u32 = 2;
    pub const LOST_EVENTS: u32 = 3;
    pub const COMPACT_SCHED: u32 = 4;
}

/// `FtraceEventBundle.CompactSched`: columns of sched_switch and sched_waking.
pub mod compact {
    pub const SWITCH_TIMESTAMP: u32 = 1;
    pub const SWITCH_PREV_STATE: u32 = 2;
    pub const SWITCH_NEXT_PID: u32 = 3;
    pub const SWITCH_NEXT_PRIO: u32 = 4;
    pub const INTERN_TABLE: u32 = 5;
    pub const SWITCH_NEXT_COMM_INDEX: u32 = 6;
    pub const WAKING_TIMESTAMP: u32 = 7;
    pub const WAKING_PID: u32 = 8;
    pub const WAKING_TARGET_CPU: u32 = 9;
    pub const WAKING_PRIO: u32 = 10;
    pub const WAKING_COMM_INDEX: u32 = 11;
}

/// `FtraceEvent` and the event payloads it carries.
pub mod ftrace {
    pub const TIMESTAMP: u32 = 1;
    pub const PID: u32 = 2;
    pub const PRINT: u32 = 3;
    pub const SCHED_SWITCH: u32 = 4;
    pub const SCHED_WAKEUP: u32 = 17;
    pub const SCHED_BLOCKED_REASON: u32 = 18;
    pub const SCHED_WAKING: u32 = 20;
    pub const CPU_FREQUENCY: u32 = 11;
    pub const CPU_IDLE: u32 = 13;
    pub const SCHED_WAKEUP_NEW: u32 = 114;
    pub const GENERIC: u32 = 327;
    pub const BINDER_TRANSACTION: u32 = 50;
    pub const BINDER_TRANSACTION_RECEIVED: u32 = 51;

    /// The name of an `FtraceEvent` payload field this importer does not read, for the
    /// skipped-data table.
    pub fn event_name(n: u32) -> &'static str {
        match n {
            12 => "cpu_frequency_limits",
            24 => "softirq_entry",
            36 => "irq_handler_entry",
            52 => "binder_set_priority",
            323 => "binder_transaction_alloc_buf",
            113 => "suspend_resume",
            235 => "task_newtask",
            236 => "task_rename",
            238 => "sched_process_exit",
            240 => "sched_process_free",
            326 => "oom_score_adj_update",
            _ => "other",
        }
    }

    /// `CpuFrequencyFtraceEvent` and `CpuIdleFtraceEvent` (same layout).
    pub mod cpu {
        pub const STATE: u32 = 1;
        pub const CPU_ID: u32 = 2;
    }

    /// `SchedSwitchFtraceEvent`.
    pub mod switch {
        pub const PREV_COMM: u32 = 1;
        pub const PREV_PID: u32 = 2;
        pub const PREV_PRIO: u32 = 3;
        pub const PREV_STATE: u32 = 4;
        pub const NEXT_COMM: u32 = 5;
        pub const NEXT_PID: u32 = 6;
        pub const NEXT_PRIO: u32 = 7;
    }

    /// `SchedWakingFtraceEvent` and `SchedWakeupFtraceEvent` (same layout).
    pub mod waking {
        pub const COMM: u32 = 1;
        pub const PID: u32 = 2;
        pub const PRIO: u32 = 3;
        pub const TARGET_CPU: u32 = 5;
    }

    /// `SchedBlockedReasonFtraceEvent`.
    pub mod blocked {
        pub const PID: u32 = 1;
        pub const CALLER: u32 = 2;
        pub const IO_WAIT: u32 = 3;
    }

    /// `BinderTransactionFtraceEvent` and `BinderTransactionReceivedFtraceEvent` (`debug_id`
    /// only).
    pub mod binder {
        pub const DEBUG_ID: u32 = 1;
        pub const TARGET_NODE: u32 = 2;
        pub const TO_PROC: u32 = 3;
        pub const TO_THREAD: u32 = 4;
        pub const REPLY: u32 = 5;
        pub const CODE: u32 = 6;
        pub const FLAGS: u32 = 7;
    }

    /// `PrintFtraceEvent`.
    pub mod print {
        pub const BUF: u32 = 2;
    }

    /// `GenericFtraceEvent` and its `Field`.
    pub mod generic {
        pub const EVENT_NAME: u32 = 1;
        pub const FIELD: u32 = 2;
        pub const FIELD_NAME: u32 = 1;
        pub const FIELD_STR: u32 = 3;
        pub const FIELD_INT: u32 = 4;
        pub const FIELD_UINT: u32 = 5;
    }
}

/// `ProcessTree` with its `Process` and `Thread`.
pub mod process_tree {
    pub const PROCESSES: u32 = 1;
    pub const THREADS: u32 = 2;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_CMDLINE: u32 = 3;
    pub const THREAD_TID: u32 = 1;
    pub const THREAD_NAME: u32 = 2;
    pub const THREAD_TGID: u32 = 3;
}

/// `TrackDescriptor`, `ProcessDescriptor`, `ThreadDescriptor`.
pub mod track {
    pub const UUID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const PROCESS: u32 = 3;
    pub const THREAD: u32 = 4;
    pub const PARENT_UUID: u32 = 5;
    pub const COUNTER: u32 = 8;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_CMDLINE: u32 = 2;
    pub const PROCESS_NAME: u32 = 6;
    pub const THREAD_PID: u32 = 1;
    pub const THREAD_TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;
}

/// `TrackEvent`.
pub mod track_event {
    pub const CATEGORY_IIDS: u32 = 3;
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const CATEGORIES: u32 = 22;
    pub const NAME: u32 = 23;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const TIMESTAMP_DELTA_US: u32 = 1;
    pub const TIMESTAMP_ABSOLUTE_US: u32 = 16;
    /// `LegacyEvent legacy_event = 6`, with `phase = 2` (a Chrome JSON phase letter).
    pub const LEGACY_EVENT: u32 = 6;
    pub const LEGACY_PHASE: u32 = 2;
    pub const TYPE_SLICE_BEGIN: u64 = 1;
    pub const TYPE_SLICE_END: u64 = 2;
    pub const TYPE_INSTANT: u64 = 3;
    pub const TYPE_COUNTER: u64 = 4;
}

/// `InternedData` with `EventName` / `EventCategory` (both `iid = 1, name = 2`).
pub mod interned {
    pub const EVENT_CATEGORIES: u32 = 1;
    pub const EVENT_NAMES: u32 = 2;
    pub const IID: u32 = 1;
    pub const NAME: u32 = 2;
}
