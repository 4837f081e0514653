//! A `sync` signal keeps the UI thread from running ahead of a slow RenderThread.

mod common;

use superpass_sim::sim::RunOpts;
use superpass_sim::{run_with, Policy, Scenario};
use superpass_trace::events::Events;

/// A 60 Hz app whose RenderThread needs 30 ms of a big core per frame: it cannot keep up.
fn scenario(sync: bool) -> Scenario {
    Scenario::from_toml(&format!(
        r#"
name = "slow-render"
description = "test"
source = "test"
vsync_hz = 60.0

[[threads]]
name = "ui"
process = "app"
nice = -10
role = "ui"
program = [
  {{ op = "wait_vsync" }},
  {{ op = "do_frame_begin" }},
  {{ op = "compute", us = 1000 }},
  {{ op = "do_frame_end" }},
  {{ op = "signal", target = "RenderThread", sync = {sync} }},
]

[[threads]]
name = "RenderThread"
process = "app"
nice = -10
role = "render"
program = [
  {{ op = "wait" }},
  {{ op = "draw_frame_begin" }},
  {{ op = "compute", us = 30000 }},
  {{ op = "draw_frame_end" }},
]
"#
    ))
    .unwrap()
}

/// Frames the UI thread began and frames the RenderThread began, from the run's trace.
fn frames_begun(sync: bool) -> (usize, usize) {
    let o = RunOpts {
        trace: true,
        check_invariants: true,
        explain: false,
    };
    let (_, bytes) = run_with(
        &scenario(sync),
        Policy::parse("default").unwrap(),
        1,
        1.0,
        &o,
    );
    let mut ev = Events::default();
    superpass_trace::perfetto::decode(&bytes.expect("trace"), &mut ev).expect("decodes");
    let names = common::begun_slices(&ev);
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    (count("Choreographer#doFrame"), count("DrawFrame"))
}

#[test]
fn the_ui_thread_waits_for_the_render_thread_to_take_its_frame() {
    let (ui, rt) = frames_begun(true);
    assert!(rt >= 5, "the RenderThread drew {rt} frames in 1 s");
    assert!(
        ui <= rt + 2,
        "sync: the UI began {ui} frames, RenderThread {rt}"
    );
}

#[test]
fn without_sync_the_ui_thread_runs_ahead() {
    let (ui, rt) = frames_begun(false);
    assert!(
        ui > rt + 20,
        "no sync: the UI began {ui} frames, RenderThread {rt}"
    );
}
