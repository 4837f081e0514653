//! The `--trace` output decodes against Perfetto's schema and agrees with the run's metrics.

mod common;

use std::collections::HashMap;
use superpass_sim::sim::RunOpts;
use superpass_sim::{run_with, Policy, Scenario};
use superpass_trace::events::{Events, SchedKind, SliceKind, TrackKey};

fn trace_of(scenario: &str, policy: &str, secs: f64) -> (superpass_sim::RunResult, Vec<u8>) {
    let sc = Scenario::builtin(scenario).unwrap();
    let o = RunOpts {
        trace: true,
        check_invariants: false,
        explain: false,
    };
    let (r, b) = run_with(&sc, Policy::parse(policy).unwrap(), 5, secs, &o);
    (r, b.expect("trace requested"))
}

#[test]
fn decodes_with_expected_content() {
    let (r, bytes) = trace_of("scroll-120", "superpass", 0.6);
    let mut ev = Events::default();
    superpass_trace::perfetto::decode(&bytes, &mut ev).expect("decodes");
    assert_eq!(ev.diag.corrupt, 0, "{:?}", ev.diag);
    assert!(!ev.diag.truncated);
    assert_eq!(ev.diag.unmatched_ends, 0, "{:?}", ev.diag);
    // Thread and process names.
    let ui = ev
        .threads
        .values()
        .find(|t| t.name.as_deref() == Some("ui"))
        .expect("ui thread named");
    assert!(ui.pid.is_some());
    assert!(ev
        .processes
        .values()
        .any(|p| p.as_deref() == Some("com.example.feed")));
    // Per-CPU sched_switch and sched_waking.
    let mut cpus = std::collections::BTreeSet::new();
    let (mut switches, mut wakings) = (0, 0);
    for s in &ev.sched {
        match s.kind {
            SchedKind::Switch { .. } => {
                switches += 1;
                cpus.insert(s.cpu);
            }
            SchedKind::Waking { .. } => wakings += 1,
            _ => {}
        }
    }
    assert!(
        switches > 100 && wakings > 100,
        "{switches} switches, {wakings} wakings"
    );
    assert_eq!(cpus.len(), 9, "switches on every CPU: {cpus:?}");
    // Slice names.
    let names = common::begun_slices(&ev);
    for want in [
        "lockwait:",
        "lockhold:",
        "Choreographer#doFrame",
        "DrawFrame",
        "superpass:grant",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(want)),
            "no `{want}` slice"
        );
    }
    assert!(r.frames > 0);
}

/// Lockwait slices of the critical threads give back the run's blocking intervals.
#[test]
fn lockwait_slices_match_blocking_metrics() {
    let (r, bytes) = trace_of("heavy-background", "default", 1.0);
    let mut ev = Events::default();
    superpass_trace::perfetto::decode(&bytes, &mut ev).expect("decodes");
    let crit: Vec<i32> = ev
        .threads
        .iter()
        .filter(|(_, t)| matches!(t.name.as_deref(), Some("ui") | Some("RenderThread")))
        .map(|(&tid, _)| tid)
        .collect();
    let mut open: HashMap<i32, Vec<(i64, String)>> = HashMap::new();
    let mut waits = Vec::new();
    let mut slices = ev.slices.clone();
    slices.sort_by_key(|s| (s.ts, s.seq));
    for s in &slices {
        let tid = match s.track {
            TrackKey::Thread(tid) => tid,
            TrackKey::Uuid(u)
                if u == superpass_trace::writer::thread_track_uuid((u & 0xffff_ffff) as i32) =>
            {
                (u & 0xffff_ffff) as i32
            }
            _ => continue,
        };
        match s.kind {
            SliceKind::Begin { name, .. } => open
                .entry(tid)
                .or_default()
                .push((s.ts, ev.strings.get(name).to_string())),
            SliceKind::End => {
                if let Some((ts, name)) = open.entry(tid).or_default().pop() {
                    if crit.contains(&tid) && name.starts_with("lockwait:") && ts >= 200_000_000 {
                        waits.push((tid, ts as u64, s.ts as u64));
                    }
                }
            }
            _ => {}
        }
    }
    waits.sort();
    let mut want: Vec<(i32, u64, u64)> = r
        .blocking
        .iter()
        .map(|b| (b.tid, b.start_ns, b.end_ns))
        .collect();
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(waits, want);
}

/// If Python's `perfetto` package is installed, its generated schema parses the trace too.
#[test]
fn parses_with_perfetto_python_schema_if_available() {
    let (_, bytes) = trace_of("binder-heavy", "proxy", 0.3);
    let dir = std::env::temp_dir().join(format!("superpass-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.pftrace");
    std::fs::write(&path, &bytes).unwrap();
    let script = r#"
import sys
try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p
except Exception:
    print("skip"); sys.exit(0)
t = p.Trace()
t.ParseFromString(open(sys.argv[1], "rb").read())
sw = sum(len(pk.ftrace_events.event) for pk in t.packet if pk.HasField("ftrace_events"))
te = sum(1 for pk in t.packet if pk.HasField("track_event"))
td = sum(1 for pk in t.packet if pk.HasField("track_descriptor"))
assert sw > 0 and te > 0 and td > 0, (sw, te, td)
print("ok", len(t.packet))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(out) = out else { return }; // no python3: skip
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python schema check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("ok") || stdout.starts_with("skip"),
        "{stdout}"
    );
}
