//! The demo's last part: an app's frame loop on the real kernel (tests/guest/sp-frames.c, run by
//! its suite at 60 and then 120 Hz, off / on / fifo / on+fifo) and its metrics set out as the
//! paper's table, each figure a change against SuperPass off, with the samples and the worst
//! cases beside it.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The suite the demo runs after the inversion scenario; it prefixes its metrics `hz60_` and
/// `hz120_`.
pub const TEST: &str = "71-sp-frames.sh";

/// Seconds the suite may take in the guest. It draws 1000 frames a mode, 8 modes in all (100 s
/// at the vsync rates; 6 of them took 95-145 s on 2 TCG vCPUs), and sp-frames gives a mode up
/// after three times its frames' time: 300 s at worst, plus setup.
pub const TIMEOUT_SECS: u32 = 420;

/// The rates the suite draws at.
const RATES: [u32; 2] = [60, 120];

/// The legend's line width.
const WIDTH: usize = 100;

/// The modes, in the order the table's detail lines give them: as people read them, and as
/// their metrics name them (`hz<rate>_<key>_...`).
const MODES: [(&str, &str); 4] = [
    ("off", "off"),
    ("on", "on"),
    ("fifo", "fifo"),
    ("on+fifo", "onfifo"),
];

/// The modes' names as the detail lines give them, `off / on / fifo / on+fifo`.
fn mode_names() -> String {
    MODES.map(|(name, _)| name).join(" / ")
}

/// The paper's Pixel 8 results, as sim/src/report.rs's `PAPER` holds them: p99.9 blocking,
/// blocking count and janky frames (relative changes, %) and CPU (percentage points). A
/// reference printed beside the run, never a figure of it.
const PAPER: [&str; 4] = ["-72.0%", "-47.7%", "-29.2%", "+0.74 pp"];

/// How a row compares a mode with off.
#[derive(Clone, Copy)]
enum Change {
    /// Relative change, in percent.
    Relative,
    /// Difference, in percentage points (the metric is itself a share).
    Points,
}

/// A row of the paper's table: its name, the metric (after `hz<rate>_<mode>_`), what it
/// counts (for the legend), and the lines printed under it.
struct Row {
    name: &'static str,
    key: &'static str,
    change: Change,
    meaning: &'static str,
    beside: fn(&Metrics<'_>, u32) -> Vec<String>,
}

const ROWS: [Row; 4] = [
    Row {
        name: "p99.9 blocking",
        key: "wait_p999_us",
        change: Change::Relative,
        beside: beside_p999,
        meaning: "the p99.9 of the UI thread's and RenderThread's lock waits: every call on \
                  the kernel mutex, the rwsem, mmap_lock (mmap and munmap), the futex lock \
                  and the PI mutex, uncontended ones too",
    },
    Row {
        name: "blocking count",
        key: "waits_over_1ms",
        change: Change::Relative,
        beside: beside_count,
        meaning: "those waits >= 1 ms (the count of all of them is fixed by the frames drawn)",
    },
    Row {
        name: "janky frames",
        key: "janky_pct",
        change: Change::Relative,
        beside: beside_janky,
        meaning: "frames that ended after the next vsync, as a share of the frames drawn",
    },
    Row {
        name: "CPU",
        key: "cpu_busy_pct",
        change: Change::Points,
        beside: beside_cpu,
        meaning: "busy share of both vCPUs (/proc/stat), in percentage points; the hogs \
                  saturate them in every mode, so it cannot show SuperPass's own cost \
                  (sp-overhead measures that)",
    },
];

/// The suite's name as its console prefix and result show it (`sp-frames`).
pub fn name() -> String {
    super::test_name(TEST)
}

/// Prints how long the suite has run, every `every`, until `stop` is signalled or dropped or
/// the suite's result is in `log` (the boot's guest.log, written as the guest prints). The
/// guest shows a test's output only when it ends, and this one runs for minutes.
pub fn progress(log: &Path, stop: Receiver<()>, every: Duration) {
    let started = format!("SPRUN {}", name());
    let ended = format!("SPTEST {{\"name\":\"{}\"", name());
    let mut seen = 0u64;
    let mut partial = String::new();
    let mut since: Option<Instant> = None;
    let mut last = Instant::now();
    loop {
        match stop.recv_timeout(Duration::from_secs(2)) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        for line in new_lines(log, &mut seen, &mut partial) {
            if line.starts_with(&started) {
                eprintln!(
                    "[demo] sp-frames: 60 Hz, then 120 Hz; off, on, fifo, on+fifo; 1000 frames \
                     each (the guest prints its result at the end)"
                );
                since = Some(Instant::now());
                last = Instant::now();
            } else if line.contains(&ended) {
                return;
            }
        }
        if let Some(t0) = since {
            if last.elapsed() >= every {
                last = Instant::now();
                eprintln!(
                    "[demo] sp-frames: {:.0} s in, of ~2-4 min",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
}

/// The whole lines written to `path` since byte `seen`; `partial` keeps an unfinished last
/// line for the next call. A file that shrank was written anew: it is read from its start.
fn new_lines(path: &Path, seen: &mut u64, partial: &mut String) -> Vec<String> {
    let Ok(mut f) = fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < *seen {
        *seen = 0;
        partial.clear();
    }
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(*seen)).is_err() || f.read_to_end(&mut buf).is_err() {
        return Vec::new();
    }
    *seen += buf.len() as u64;
    partial.push_str(&String::from_utf8_lossy(&buf));
    let Some(end) = partial.rfind('\n') else {
        return Vec::new();
    };
    let lines = partial[..end].lines().map(str::to_string).collect();
    partial.drain(..=end);
    lines
}

/// sp-frames' metrics, and those the table asked for that the run did not report.
struct Metrics<'a> {
    m: &'a Map<String, Value>,
    missing: RefCell<Vec<String>>,
}

impl Metrics<'_> {
    /// One mode's metric at one rate, when the run reported it as a number.
    fn get(&self, hz: u32, mode: &str, key: &str) -> Option<f64> {
        let name = format!("hz{hz}_{mode}_{key}");
        let v = self.m.get(&name).and_then(Value::as_f64);
        let mut missing = self.missing.borrow_mut();
        if v.is_none() && !missing.contains(&name) {
            missing.push(name);
        }
        v
    }
}

/// `mode` against `off` for `row` at `hz`.
fn figure(m: &Metrics<'_>, hz: u32, mode: &str, row: &Row) -> String {
    let (Some(x), Some(off)) = (m.get(hz, mode, row.key), m.get(hz, "off", row.key)) else {
        return "missing".into();
    };
    match row.change {
        Change::Points => format!("{:+.2} pp", x - off),
        Change::Relative if off == 0.0 => "n/a (off is 0)".into(),
        Change::Relative => format!("{:+.1}%", 100.0 * (x - off) / off),
    }
}

/// `key` for off / on / fifo / on+fifo, formatted by `f`, "?" where the run did not report it.
fn per_mode(m: &Metrics<'_>, hz: u32, key: &str, f: impl Fn(f64) -> String) -> String {
    MODES
        .map(|(_, mode)| m.get(hz, mode, key).map_or("?".into(), &f))
        .join(" / ")
}

/// on+fifo's janky share against the better of on's and fifo's, in percentage points (the
/// issue's bar for shipping both: no more janky frames than either alone).
fn onfifo_against_best(m: &Metrics<'_>, hz: u32) -> String {
    let [Some(on), Some(fifo), Some(both)] =
        ["on", "fifo", "onfifo"].map(|mode| m.get(hz, mode, "janky_pct"))
    else {
        return "on+fifo against the better of on and fifo: missing".into();
    };
    let best = on.min(fifo);
    format!(
        "on+fifo against the better of on and fifo ({}): {:+.2} pp, {}",
        if on <= fifo { "on" } else { "fifo" },
        both - best,
        if both <= best {
            "no more janky frames"
        } else {
            "more janky frames"
        }
    )
}

fn ms_from_us(us: f64) -> String {
    crate::cdf_svg::fmt_ns((us * 1e3).max(0.0) as u64, true)
}

fn ms(v: f64) -> String {
    ms_from_us(v * 1e3)
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

// What each row shows under its figures, off / on / fifo / on+fifo: the samples they come from
// and, as
// the project reports beside every p99.9, the max and what went over a frame.

fn beside_p999(m: &Metrics<'_>, hz: u32) -> Vec<String> {
    vec![
        format!(
            "{} of {} waits",
            per_mode(m, hz, "wait_p999_us", ms_from_us),
            per_mode(m, hz, "waits", count)
        ),
        format!(
            "max {}, {} over a frame (16 ms)",
            per_mode(m, hz, "wait_max_us", ms_from_us),
            per_mode(m, hz, "waits_over_16ms", count)
        ),
    ]
}

fn beside_count(m: &Metrics<'_>, hz: u32) -> Vec<String> {
    vec![format!(
        "{} of {} waits",
        per_mode(m, hz, "waits_over_1ms", count),
        per_mode(m, hz, "waits", count)
    )]
}

fn beside_janky(m: &Metrics<'_>, hz: u32) -> Vec<String> {
    vec![
        format!(
            "{} of {} frames ({}%)",
            per_mode(m, hz, "janky", count),
            per_mode(m, hz, "frames", count),
            per_mode(m, hz, "janky_pct", |v| format!("{v:.1}"))
        ),
        format!(
            "{} late by more than a frame, worst {} late",
            per_mode(m, hz, "late_over_frame", count),
            per_mode(m, hz, "worst_late_ms", ms)
        ),
        onfifo_against_best(m, hz),
    ]
}

fn beside_cpu(m: &Metrics<'_>, hz: u32) -> Vec<String> {
    vec![format!(
        "{}% busy",
        per_mode(m, hz, "cpu_busy_pct", |v| format!("{v:.2}"))
    )]
}

/// `text` in lines of at most `width` characters (a longer word keeps its own line), each
/// after `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            out.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{indent}{line}\n"));
    }
    out
}

/// The paper's table for each rate from sp-frames' result (`None`: the run gave none), then
/// which metric feeds each row.
pub fn table(result: Option<&Value>) -> String {
    let mut s = String::from("\n== sp-frames: the paper's table on this kernel ==\n");
    let Some(r) = result else {
        s.push_str("no sp-frames result in this run's log: no figures\n");
        return s;
    };
    let status = r["status"].as_str().unwrap_or("?");
    let empty = Map::new();
    let metrics = r["metrics"].as_object().unwrap_or(&empty);
    let m = &Metrics {
        m: metrics,
        missing: RefCell::default(),
    };
    let secs = r["duration_ms"].as_f64().unwrap_or(0.0) / 1e3;
    s.push_str(&format!(
        "sp-frames {status}{}{}\n",
        if secs > 0.0 {
            format!(" in {secs:.0} s")
        } else {
            String::new()
        },
        match metrics.get("fail").or_else(|| metrics.get("error")) {
            Some(Value::String(why)) => format!(": {why}"),
            _ => String::new(),
        }
    ));
    for hz in RATES {
        s.push_str(&format!(
            "\n{hz} Hz, each a change against SuperPass off (under each row: {})\n\
             {:<16}  {:<16}  {:<26}  {:<14}  {}\n",
            mode_names(),
            "",
            "paper (Pixel 8)",
            "this kernel, SuperPass on",
            "RT-UI (fifo)",
            "both (on+fifo)"
        ));
        for (row, paper) in ROWS.iter().zip(PAPER) {
            s.push_str(&format!(
                "{:<16}  {paper:<16}  {:<26}  {:<14}  {}\n",
                row.name,
                figure(m, hz, "on", row),
                figure(m, hz, "fifo", row),
                figure(m, hz, "onfifo", row),
            ));
            for l in (row.beside)(m, hz) {
                s.push_str(&format!("{:<16}  {l}\n", ""));
            }
        }
    }
    s.push('\n');
    s.push_str(&wrap(
        "Every figure is from the run's sp-frames metrics, hz<rate>_<mode>_<metric> in its \
         result (the guest's own tables are its [sp-frames] lines in the guest log):",
        WIDTH,
        "",
    ));
    for row in &ROWS {
        let text = wrap(
            &format!("{}: {}", row.key, row.meaning),
            WIDTH - 18,
            &" ".repeat(18),
        );
        s.push_str(&format!("  {:<16}{}", row.name, &text[18..]));
    }
    let missing = m.missing.borrow();
    if !missing.is_empty() {
        s.push_str(&wrap(
            &format!(
                "Not in the run's metrics (missing, ?): {}",
                missing.join(", ")
            ),
            WIDTH,
            "",
        ));
    }
    s.push_str(&wrap(
        "The paper measured a Pixel 8; this is another workload on 2 vCPUs under QEMU TCG \
         (docs/frames.md).",
        WIDTH,
        "",
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(metrics: Value) -> Value {
        json!({"name": "sp-frames", "status": "pass", "duration_ms": 97590, "metrics": metrics})
    }

    #[test]
    fn every_figure_comes_from_the_metrics() {
        let mut m = json!({});
        for (mode, p999, over, janky, busy) in [
            ("off", 71955.4, 449, 23.10, 98.99),
            ("on", 7274.1, 94, 0.80, 100.00),
            ("fifo", 49030.2, 354, 15.50, 99.93),
            ("onfifo", 3600.0, 40, 0.50, 99.95),
        ] {
            for hz in RATES {
                let k = |key: &str| format!("hz{hz}_{mode}_{key}");
                m[k("wait_p999_us")] = json!(p999);
                m[k("waits_over_1ms")] = json!(over);
                m[k("janky_pct")] = json!(janky);
                m[k("cpu_busy_pct")] = json!(busy);
                m[k("waits")] = json!(7000);
                m[k("frames")] = json!(1000);
            }
        }
        let t = table(Some(&result(m)));
        assert!(t.contains("sp-frames pass in 98 s"), "{t}");
        for want in [
            "-89.9%", "-79.1%", "-96.5%", "+1.01 pp", "-31.9%", "-32.9%", "+0.94 pp", "-95.0%",
            "-91.1%", "-97.8%", "+0.96 pp",
        ] {
            assert_eq!(t.matches(want).count(), 2, "{want} once a rate:\n{t}");
        }
        assert!(
            t.contains("72.0 ms / 7.27 ms / 49.0 ms / 3.60 ms of 7000 / 7000 / 7000 / 7000 waits"),
            "{t}"
        );
        // Reported nowhere in this result: shown as unknown, not made up.
        assert!(t.contains("max ? / ? / ? / ?"), "{t}");
        assert!(t.contains("-72.0%") && t.contains("+0.74 pp"));
    }

    #[test]
    fn a_missing_metric_is_named_not_invented() {
        let m = json!({"hz60_off_janky_pct": 20.0, "hz60_on_janky_pct": 2.0,
                       "hz60_off_waits_over_1ms": 0, "hz60_on_waits_over_1ms": 3});
        let t = table(Some(&result(m)));
        assert!(t.contains("-90.0%"), "{t}");
        let missing = &t[t.find("Not in the run's metrics").unwrap()..];
        assert!(missing.contains("hz60_fifo_janky_pct,"), "{t}");
        assert!(missing.contains("hz60_onfifo_janky_pct,"), "{t}");
        assert!(
            t.contains("on+fifo against the better of on and fifo: missing"),
            "{t}"
        );
        assert!(missing.contains("hz120_off_wait_p999_us,"), "{t}");
        assert_eq!(t.matches("hz60_fifo_janky_pct").count(), 1, "{t}");
        assert!(t.contains("n/a (off is 0)"), "{t}");
        assert!(table(None).contains("no sp-frames result"));
    }

    #[test]
    fn on_fifo_is_a_column_and_set_against_the_better_of_on_and_fifo() {
        let m = json!({
            "hz60_off_janky_pct": 20.0, "hz60_on_janky_pct": 2.0, "hz60_fifo_janky_pct": 10.0,
            "hz60_onfifo_janky_pct": 1.5,
            "hz120_off_janky_pct": 30.0, "hz120_on_janky_pct": 5.0, "hz120_fifo_janky_pct": 2.5,
            "hz120_onfifo_janky_pct": 3.0,
            "hz60_onfifo_wait_p999_us": 2000.0, "hz60_off_wait_p999_us": 40000.0,
        });
        let t = table(Some(&result(m)));
        assert_eq!(t.matches("both (on+fifo)").count(), 2, "{t}");
        assert_eq!(
            t.matches("(under each row: off / on / fifo / on+fifo)")
                .count(),
            2
        );
        // 60 Hz: on+fifo's figures in a column of their own, after on's and fifo's.
        let janky = format!("-90.0%{}-50.0%{}-92.5%", " ".repeat(22), " ".repeat(10));
        assert!(t.contains(&janky), "{t}");
        assert!(t.contains("-95.0%"), "{t}");
        assert!(t.contains("frames (20.0 / 2.0 / 10.0 / 1.5%)"), "{t}");
        assert!(
            t.contains("on+fifo against the better of on and fifo (on): -0.50 pp, no more janky"),
            "{t}"
        );
        assert!(
            t.contains("on+fifo against the better of on and fifo (fifo): +0.50 pp, more janky"),
            "{t}"
        );
    }

    #[test]
    fn a_failed_run_says_why() {
        let r = json!({"name": "sp-frames", "status": "fail", "duration_ms": 0,
                       "metrics": {"error": "no result: VM timed out"}});
        assert!(table(Some(&r)).contains("sp-frames fail: no result: VM timed out"));
    }

    #[test]
    fn the_legend_wraps_with_a_hanging_indent() {
        assert_eq!(wrap("aa bb cc", 5, "> "), "> aa bb\n> cc\n");
        assert_eq!(wrap("toolongword x", 4, ""), "toolongword\nx\n");
        assert_eq!(wrap("", 4, ""), "");
    }

    #[test]
    fn log_lines_are_read_as_they_are_written() {
        let dir = std::env::temp_dir().join(format!("sp-demo-frames-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("guest.log");
        let (mut seen, mut partial) = (0, String::new());
        assert!(new_lines(&log, &mut seen, &mut partial).is_empty());
        fs::write(&log, "a\nb").unwrap();
        assert_eq!(new_lines(&log, &mut seen, &mut partial), ["a"]);
        fs::write(&log, "a\nbc\nd\n").unwrap();
        assert_eq!(new_lines(&log, &mut seen, &mut partial), ["bc", "d"]);
        fs::write(&log, "new\n").unwrap();
        assert_eq!(new_lines(&log, &mut seen, &mut partial), ["new"]);
        let _ = fs::remove_dir_all(&dir);
    }
}
