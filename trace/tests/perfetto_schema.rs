//! Checks that [`TraceWriter`] output decodes against Perfetto's real schema.
//!
//! Uses `perfetto_trace_pb2` from the `perfetto` Python package
//! (`pip install perfetto protobuf`); skipped, with a message, where it is not installed.

use std::process::Command;

use superpass_trace::binder::BinderKind;
use superpass_trace::writer::{FieldValue, TraceWriter};

fn sample_trace() -> Vec<u8> {
    let mut w = TraceWriter::new();
    w.process(100, "app");
    w.thread(100, 100, "app");
    w.thread(100, 101, "RenderThread");
    w.sched_switch(1_000, 0, "swapper/0", 0, 120, 0, "RenderThread", 101, 110);
    w.sched_waking(1_500, 0, "bg", 102, 130, 1);
    w.sched_switch(2_000, 0, "RenderThread", 101, 110, 2, "swapper/0", 0, 120);
    w.sched_blocked_reason(2_000, 0, 101, 0xffff_ffff_8100_0000, false);
    w.print(2_100, 1, 102, "B|100|lockhold:big\n");
    w.generic(
        2_200,
        1,
        102,
        "superpass_grant",
        &[
            ("blocker", FieldValue::Int(102)),
            ("waiter", FieldValue::Int(101)),
            ("root", FieldValue::Int(101)),
            ("lock", FieldValue::Uint(0xffff_8880_0000_1000)),
            ("depth", FieldValue::Int(1)),
        ],
    );
    // A synchronous binder call of the RenderThread to 201, and the reply.
    let call = BinderKind::Transaction {
        debug_id: 7,
        to_proc: 200,
        to_thread: 0,
        reply: false,
        flags: 0x10,
        code: 3,
    };
    w.binder(2_300, 0, 101, &call);
    w.binder(2_400, 1, 201, &BinderKind::Received { debug_id: 7 });
    let reply = BinderKind::Transaction {
        debug_id: 8,
        to_proc: 100,
        to_thread: 101,
        reply: true,
        flags: 0,
        code: 0,
    };
    w.binder(2_500, 1, 201, &reply);
    w.binder(2_600, 0, 101, &BinderKind::Received { debug_id: 8 });
    w.slice_begin(1_100, 101, "lockwait:big");
    w.slice_end(3_000, 101);
    w.finish()
}

#[test]
fn writer_output_matches_perfetto_schema() {
    let dir = std::env::temp_dir().join(format!("sp-trace-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sample.pftrace");
    std::fs::write(&path, sample_trace()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check_pftrace.py");
    let out = match Command::new("python3").arg(script).arg(&path).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIPPED writer_output_matches_perfetto_schema: no python3 ({e})");
            return;
        }
    };
    if out.status.code() == Some(2) {
        eprintln!(
            "SKIPPED writer_output_matches_perfetto_schema: {} (pip install perfetto protobuf)",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schema check failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "\"sched_switch\": 2",
        "\"sched_waking\": 1",
        "\"sched_blocked_reason\": 1",
        "\"print\": 1",
        "\"generic\": 1",
        "\"binder_transaction\": 2",
        "\"binder_transaction_received\": 2",
        "\"slice_begin\": 1",
        "\"slice_end\": 1",
        "\"thread_descriptors\": 2",
        "\"process_descriptors\": 1",
        "\"first_packet_flags\": {\"1\": 1, \"2\": 0}",
        "\"unknown_fields\": []",
    ] {
        assert!(stdout.contains(expected), "missing {expected} in {stdout}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
