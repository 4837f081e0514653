//! `cargo xtask demo`: SuperPass on a real kernel, in one command.
//!
//! Builds (or reuses) the test kernel and superpass.ko, boots QEMU, loads the module and runs
//! the inversion scenario with a kernel mutex and with an rwsem, each three ways: SuperPass off,
//! SuperPass on, and the critical thread in SCHED_FIFO (Android's RT-UI baseline), then an app's
//! frame loop (sp-frames) the same three ways. Prints the tables, saves the ftrace captures to
//! target/vm/inversion-*.trace, draws the critical thread's wait distributions from them
//! (target/vm/demo/waits.svg), runs superpass-trace's report of each lock, on against off, and
//! ends with sp-frames' figures in the paper's table. The picture and the report read the
//! captures through superpass-trace's database, so they count the same waits.

mod frames;

use crate::cdf_svg::{self, Figure, Panel, Series};
use crate::kernel::{self, Arch, Variant};
use crate::util::{cargo, root, run, target_dir, wants_help};
use crate::vm;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

const HELP: &str = "usage: cargo xtask demo [--secs N] [--arch x86_64|arm64]
       cargo xtask demo --report-only [--traces DIR]

Builds the test kernel (cached after the first run, ~12 min cold) and superpass.ko,
boots QEMU (TCG, 2 vCPUs), loads the module and runs the inversion scenario
(tests/guest/sp-inversion.c) with a kernel mutex and an rwsem: 4 nice-0 hogs, a
nice-19 blocker computing 500 us inside the lock and 100 us outside it, and a
critical thread taking the lock every 1 ms; SuperPass off, on, the critical
thread in SCHED_FIFO, and both (on+fifo). Then, in the same boot, an app's frame
loop (tests/guest/sp-frames.c, suite 71-sp-frames.sh, ~2-4 min): a UI thread and a
RenderThread at nice -10 draw 1000 frames at 60 Hz and 1000 at 120 Hz per mode,
taking locks that nice-10 workers also hold, against 4 nice-0 hogs; off, on,
both threads in SCHED_FIFO (RT-UI), and both of those (on+fifo). Progress lines
say how long it has run.
Prints one table per lock (waits measured in the kernel by the test device) and
the checks, then analyses the ftrace captures with our own superpass-trace (built
first: cargo build -p superpass-trace, the dev build cargo test has made already)
and prints its report:

  target/vm/inversion-<lock>-<mode>.trace  N-2 s (1-8) of ftrace per lock and mode: sched
        events, superpass_* tracepoints, lockwait:spt/lockhold:spt markers
  target/vm/inversion-<lock>-<mode>.db     the same, imported: query it with
        sqlite3 or `superpass-trace query` (docs/trace.md has the schema)
  target/vm/demo/waits.svg   the picture: the critical thread's waits (its
        lockwait:spt slices) as CDFs on a log time axis, off / on / fifo, one
        panel per lock; the y axis is stretched toward the tail (0.9, 0.99,
        0.999 equally spaced); the same waits and percentiles as the report's
        tails (view it in a browser, or: rsvg-convert waits.svg -o waits.png)
  superpass-trace report <lock>-on --baseline <lock>-off, per lock

and ends with the paper's table from sp-frames' metrics, per rate: p99.9 blocking,
blocking count (waits >= 1 ms), janky frames and CPU, SuperPass on, RT-UI and
both each as a change against off, beside the paper's Pixel 8 figures; under each
row the off / on / fifo / on+fifo values it comes from, the samples (frames,
waits), the max wait and the frames late by more than a frame, and on+fifo's
janky share against the better of on and fifo. A metric the run did not report is named as
missing. (sp-frames' own tables are its [sp-frames] lines in the guest log.)
sp-frames' checks are the demo's too: at both rates, 1000 frames a mode, on cuts
janky frames by >= 29.2% and the p99.9 by >= 72% against off, has no more
janky frames than fifo beyond sampling noise and no more frames late by more
than a frame than fifo; on+fifo cuts the p99.9 by >= 72% against off and has at
most 10 waits over 16 ms. The guest keeps real time while TCG emulates its CPUs, so
a busy host (a build beside the demo) slows every mode and skews the figures:
run it on an otherwise idle machine.

Logs: target/vm/demo/{guest,kernel}.log; target/vm/results.json is not touched.

  --secs N        seconds per mode (default 10; each mode's trace window is N-2 s, 1 to 8)
  --arch A        x86_64 (default) or arm64: the arm64 test kernel (cargo xtask kernel
                  --arch arm64, a few minutes cold) under qemu-system-aarch64 on QEMU's
                  virt machine, whose device tree gives CPU 0 a big core's capacity and
                  CPU 1 a little one's (cargo xtask vm-test --help)
  --report-only   skip the kernel, the module and the VM: re-analyse the captures
                  already in target/vm (from the last demo or vm-test run) and
                  redraw the picture; prints the guest tables and the paper's
                  table again if target/vm/demo/guest.log is there
  --traces DIR    with --report-only: analyse DIR/inversion-*.trace instead
                  (the picture goes to DIR/demo/waits.svg)
";

const TESTS: [&str; 4] = [
    "50-sp-load.sh",
    "52-sp-inversion-mutex.sh",
    "53-sp-inversion-rwsem.sh",
    frames::TEST,
];

/// The test modules (directories of vm/test-modules/) the demo's tests load beside
/// superpass.ko: the lock device the inversion scenario contends on.
const TEST_MODULES: [&str; 1] = ["sp-testdev"];

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut secs = 10u32;
    let mut arch = Arch::X86_64;
    let mut report_only = false;
    let mut traces: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--secs" => {
                secs = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--secs needs a positive number")?
            }
            "--arch" => arch = Arch::parse(it.next().ok_or("--arch needs x86_64 or arm64")?)?,
            "--report-only" => report_only = true,
            "--traces" => traces = Some(it.next().ok_or("--traces needs a directory")?.into()),
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    if traces.is_some() && !report_only {
        return Err("--traces only goes with --report-only".into());
    }
    if report_only {
        let dir = traces.unwrap_or_else(vm::out_dir);
        let tool = build_trace_tool()?;
        let log = dir.join("demo/guest.log");
        let console: Option<Vec<String>> = fs::read_to_string(&log)
            .ok()
            .map(|text| text.lines().map(str::to_string).collect());
        if let Some(console) = &console {
            println!("(guest tables from {})", log.display());
            if newer_trace_than(&dir, &log) {
                println!("(the captures are newer: that log is from another run, e.g. vm-test)");
            }
            print_guest_tables(console);
        }
        let analysed = analyse(&tool, &dir);
        if let Some(console) = console {
            // The log's results, read as a boot's are; only sp-frames' is used.
            let b = vm::BootResult {
                console,
                kernel: Vec::new(),
                timed_out: false,
                elapsed: Duration::ZERO,
            };
            let mut report = vm::Report {
                results: Vec::new(),
            };
            report.add_boot(&b, &[], "kernel-log/demo");
            println!("(from {})", log.display());
            print!("{}", frames::table(frames_result(&report)));
        }
        return analysed;
    }
    // Built before the VM so that its compile neither steals CPU from the measured guest nor
    // fails after a 20-minute kernel build.
    eprintln!("[demo] superpass-trace (analyses the captures at the end)");
    let tool = build_trace_tool()?;
    eprintln!("[demo] kernel (cached after the first build)");
    let k = kernel::ensure(&kernel::Opts {
        arch,
        variant: Variant::Default,
        ..Default::default()
    })?;
    eprintln!("[demo] superpass.ko");
    let ko = crate::module::build(&k)?;
    let out = vm::out_dir();
    let stage = out.join("demo-initramfs");
    if stage.exists() {
        fs::remove_dir_all(&stage).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(stage.join("bin")).map_err(|e| e.to_string())?;
    let moddir = stage.join("lib/modules/sp");
    fs::create_dir_all(&moddir).map_err(|e| e.to_string())?;
    fs::copy(&ko, moddir.join("superpass.ko")).map_err(|e| e.to_string())?;
    eprintln!("[demo] test modules");
    for m in TEST_MODULES {
        let src = root().join("vm/test-modules").join(m);
        for t in vm::build_module(&k, &src, &out.join("demo-modules"))? {
            let name = t.file_name().unwrap_or_default();
            fs::copy(&t, moddir.join(name)).map_err(|e| format!("{}: {e}", t.display()))?;
        }
    }
    eprintln!("[demo] guest programs");
    vm::build_guest_programs(&root().join(vm::GUEST_DIR), &stage.join("bin"), k.arch)?;
    let tests: Vec<String> = TESTS.iter().map(|s| s.to_string()).collect();
    let initrd = vm::build_initramfs(&k, &stage, &tests, &out.join("initramfs-demo.cpio.gz"))?;
    let logs = out.join("demo");
    fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    remove_old_captures(&out);
    eprintln!(
        "[demo] booting QEMU: mutex and rwsem scenarios, 6 modes x {secs} s each (off, on, fifo, \
         on+fifo, and off and on with the critical thread at nice -10), longer for a mode short \
         of 1000 waits (~{} s); then sp-frames, off, on, fifo and on+fifo at 60 and 120 Hz \
         (~2-4 min)",
        12 * secs + 30
    );
    // A guest.log of an earlier run would show the progress watcher a finished sp-frames.
    let guest_log = logs.join("guest.log");
    let _ = fs::remove_file(&guest_log);
    let (stop_progress, stopped) = mpsc::channel::<()>();
    let b = std::thread::scope(|s| {
        s.spawn(|| frames::progress(&guest_log, stopped, Duration::from_secs(20)));
        let b = vm::boot(
            &k,
            &vm::Machine::default(),
            &initrd,
            // The inversion scripts read SP_SECS from their environment (the kernel hands init
            // a KEY=value it does not know) and sp.trace from the kernel command line; the
            // trace covers most of each mode (the program settles for 1 s first), so the
            // picture and the report see the rare long waits the tables count.
            &format!(
                "sptest.timeout={} SP_SECS={secs} sp.trace={}",
                // Up to 3 x secs for each of 6 modes: sp-inversion runs a mode on until it has
                // 1000 waits. sp-frames' own bound holds whatever --secs is.
                (24 * secs + 120).max(frames::TIMEOUT_SECS),
                secs.saturating_sub(2).clamp(1, 8)
            ),
            Duration::from_secs(72 * secs as u64 + 300 + u64::from(frames::TIMEOUT_SECS)),
            &logs,
            false,
        );
        drop(stop_progress);
        b
    })?;
    let mut report = vm::Report {
        results: Vec::new(),
    };
    let names = test_names();
    report.add_boot(&b, &names, "kernel-log/demo");

    print_guest_tables(&b.console);
    println!();
    report.print_table();
    let traces = crate::module::save_traces(&b.console, &vm::share_dir(&logs), &out);
    println!();
    for t in &traces {
        println!("trace: {}", t.display());
    }
    let analysed = analyse(&tool, &out);
    print!("{}", frames::table(frames_result(&report)));
    if report.failed() > 0 {
        if let Err(e) = &analysed {
            eprintln!("[demo] {e}");
        }
        return Err(format!(
            "{} check(s) failed; logs in {}",
            report.failed(),
            logs.display()
        ));
    }
    analysed
}

/// A test's name as its console prefix and result show it (`50-sp-load.sh` -> `sp-load`).
fn test_name(file: &str) -> String {
    let stem = file.trim_end_matches(".sh");
    stem.get(3..).unwrap_or(stem).to_string()
}

/// The demo's tests' names.
fn test_names() -> Vec<String> {
    TESTS.iter().map(|t| test_name(t)).collect()
}

/// A `vm-test --skip` value naming exactly the demo's tests (`=sp-load,=sp-inversion-mutex,..`).
pub fn skip_filter() -> String {
    test_names()
        .iter()
        .map(|n| format!("={n}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// sp-frames' result among a boot's.
fn frames_result(report: &vm::Report) -> Option<&serde_json::Value> {
    let name = frames::name();
    report.results.iter().find(|r| r["name"] == name.as_str())
}

/// Whether an inversion capture in `dir` was written more than a minute after `log`.
fn newer_trace_than(dir: &Path, log: &Path) -> bool {
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(l) = mtime(log) else {
        return false;
    };
    LOCKS
        .iter()
        .flat_map(|lock| MODES.map(|m| (lock, m)))
        .any(|(lock, mode)| {
            mtime(&dir.join(format!("inversion-{lock}-{mode}.trace")))
                .and_then(|t| t.duration_since(l).ok())
                .is_some_and(|d| d > Duration::from_secs(60))
        })
}

/// Prints the inversion scenario's tables as the guest program printed them (its own,
/// kernel-measured waits); sp-frames' figures come as the paper's table instead.
fn print_guest_tables(console: &[String]) {
    println!();
    for name in test_names()
        .iter()
        .filter(|n| n.starts_with("sp-inversion"))
    {
        let prefix = format!("[{name}] ");
        for l in console {
            if let Some(rest) = l.strip_prefix(&prefix) {
                if !rest.starts_with("SPTRACE ") {
                    println!("{rest}");
                }
            }
        }
    }
}

/// The locks and modes the scenario runs, in the order the picture and tables show them.
const LOCKS: [&str; 2] = ["mutex", "rwsem"];
const MODES: [&str; 3] = ["off", "on", "fifo"];

/// The critical thread's waits: its ended `lockwait:*` slices, exactly the set the report's
/// tails are computed from (the blockers only write `lockhold:*`).
const WAITS_SQL: &str =
    "SELECT dur FROM thread_slice WHERE name GLOB 'lockwait:*' AND dur >= 0 ORDER BY dur";

/// How long the capture runs, from its first event to its last.
const WINDOW_SQL: &str = "SELECT end_ts - start_ts FROM trace_bounds";

/// Builds superpass-trace and returns the binary: the dev build, most of which `cargo test
/// --workspace` has made already (a release build of it and SQLite took 2.5 min in CI), and
/// fast enough for captures of a few MB.
pub fn build_trace_tool() -> Result<PathBuf, String> {
    run(
        "build superpass-trace",
        cargo().args(["build", "-p", "superpass-trace"]),
    )?;
    let bin = target_dir().join("debug/superpass-trace");
    if bin.exists() {
        Ok(bin)
    } else {
        Err(format!("{} missing after the build", bin.display()))
    }
}

/// Removes the previous run's captures, databases and picture, so that a mode this run does
/// not capture cannot be analysed from stale files.
fn remove_old_captures(out: &Path) {
    for lock in LOCKS {
        for mode in MODES {
            for ext in ["trace", "db"] {
                let _ = fs::remove_file(out.join(format!("inversion-{lock}-{mode}.{ext}")));
            }
        }
    }
    let _ = fs::remove_file(out.join("demo/waits.svg"));
}

/// `path` relative to the workspace when it is inside it (shorter commands to copy).
fn short(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Runs `tool` with `args`; its stdout, or its stderr as the error.
fn tool_output(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    let o = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", tool.display()))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&o.stderr);
        Err(err.trim().lines().last().unwrap_or("failed").to_string())
    }
}

/// The integers of the first column of `superpass-trace query` output (a header line, then
/// tab-separated rows).
fn parse_column(tsv: &str) -> Result<Vec<u64>, String> {
    tsv.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cell = l.split('\t').next().unwrap_or("");
            cell.parse()
                .map_err(|_| format!("not a duration in ns: {cell:?}"))
        })
        .collect()
}

/// One capture read through superpass-trace: imported to `<trace>.db`, then queried.
struct Capture {
    db: PathBuf,
    waits: Vec<u64>,
    window_ns: u64,
}

/// Imports `trace` next to itself as a database and reads the critical thread's waits.
fn read_capture(tool: &Path, trace: &Path) -> Result<Capture, String> {
    if !trace.exists() {
        return Err(format!("{} not captured", short(trace)));
    }
    let db = trace.with_extension("db");
    tool_output(
        tool,
        &[
            "import".as_ref(),
            trace.as_os_str(),
            "-o".as_ref(),
            db.as_os_str(),
        ],
    )
    .map_err(|e| format!("importing {}: {e}", short(trace)))?;
    let query = |sql: &str| {
        tool_output(tool, &["query".as_ref(), db.as_os_str(), sql.as_ref()])
            .and_then(|out| parse_column(&out))
            .map_err(|e| format!("querying {}: {e}", short(&db)))
    };
    let waits = query(WAITS_SQL)?;
    let window_ns = query(WINDOW_SQL)?.first().copied().unwrap_or(0);
    Ok(Capture {
        db,
        waits,
        window_ns,
    })
}

/// Reads every capture in `dir`, prints the waits per lock and mode, draws
/// `dir/demo/waits.svg`, then runs superpass-trace's report of each lock, on against off.
fn analyse(tool: &Path, dir: &Path) -> Result<(), String> {
    println!(
        "\nThe critical thread's waits in the traces (lockwait:spt slices: from the request to \
         the ioctl's return,\nso each includes the 10 us hold; read with superpass-trace):"
    );
    println!(
        "{:<6} {:<5} {:>7} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "lock", "mode", "waits", "p50", "p99", "p99.9", "max", "window"
    );
    let mut panels = Vec::new();
    // Databases of the captures that hold waits: a report against a capture without any
    // would compare against nothing.
    let mut dbs = Vec::new();
    let mut captured = 0;
    for lock in LOCKS {
        let mut series = Vec::new();
        for mode in MODES {
            let trace = dir.join(format!("inversion-{lock}-{mode}.trace"));
            let (waits, missing) = match read_capture(tool, &trace) {
                Ok(c) => {
                    let window = format!("{:.1} s", c.window_ns as f64 / 1e9);
                    match cdf_svg::summarize(&c.waits) {
                        Some(m) => println!(
                            "{lock:<6} {mode:<5} {:>7} {:>10} {:>10} {:>10} {:>10} {window:>8}",
                            m.n,
                            cdf_svg::fmt_ns(m.p50, true),
                            cdf_svg::fmt_ns(m.p99, true),
                            cdf_svg::fmt_ns(m.p999, true),
                            cdf_svg::fmt_ns(m.max, true),
                        ),
                        None => println!(
                            "{lock:<6} {mode:<5} no samples: no lockwait slice in {} ({window})",
                            short(&trace)
                        ),
                    }
                    captured += 1;
                    if !c.waits.is_empty() {
                        dbs.push(((lock, mode), c.db));
                    }
                    let missing = format!("no lockwait slice in the {window} capture");
                    (c.waits, missing)
                }
                Err(e) => {
                    println!("{lock:<6} {mode:<5} no samples: {e}");
                    // The picture's legend has room for a few words only.
                    let why = if trace.exists() {
                        "the capture could not be read (see the console)"
                    } else {
                        "not captured"
                    };
                    (Vec::new(), why.to_string())
                }
            };
            series.push(Series {
                label: mode.to_string(),
                waits_ns: waits,
                missing,
            });
        }
        panels.push(Panel {
            title: format!("kernel {lock}"),
            series,
        });
    }
    if captured == 0 {
        return Err(format!(
            "no captures in {} (inversion-<lock>-<mode>.trace; `cargo xtask demo` and \
             `cargo xtask vm-test` write them)",
            dir.display()
        ));
    }
    let fig = Figure {
        title: "The critical thread's lock waits: SuperPass off, on, and the critical thread \
                in SCHED_FIFO"
            .into(),
        panels,
        notes: vec![
            format!(
                "Samples: the critical thread's lockwait:spt slices in {}/inversion-<lock>-<mode>.trace \
                 (one ftrace window per mode), read with superpass-trace (SQL on its database).",
                short(dir)
            ),
            "A wait spans the lock request to the ioctl's return, so it includes the 10 µs \
             hold; the guest's own table times the kernel wait alone, over the whole mode."
                .into(),
            "The y axis is stretched toward the tail (0.9, 0.99, 0.999 equally spaced); each \
             curve reaches 1 at its longest wait. Percentiles as `superpass-trace report` computes them."
                .into(),
        ],
    };
    let svg_path = dir.join("demo/waits.svg");
    fs::create_dir_all(dir.join("demo")).map_err(|e| format!("{}: {e}", dir.display()))?;
    fs::write(&svg_path, cdf_svg::render(&fig))
        .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    println!("\npicture: {}", svg_path.display());

    let mut failed = Vec::new();
    for lock in LOCKS {
        let db = |mode: &str| dbs.iter().find(|(k, _)| *k == (lock, mode)).map(|(_, d)| d);
        let (Some(on), Some(off)) = (db("on"), db("off")) else {
            println!(
                "\n(no report for the {lock} scenario: it needs waits in its on and off captures)"
            );
            continue;
        };
        println!(
            "\n== superpass-trace report: {lock}, SuperPass on against off ==\n$ {} report {} --baseline {}",
            short(tool),
            short(on),
            short(off)
        );
        let ok = Command::new(tool)
            .arg("report")
            .arg(on)
            .arg("--baseline")
            .arg(off)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            failed.push(lock);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "superpass-trace report failed for {}",
            failed.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_output_parses_to_durations() {
        assert_eq!(parse_column("dur\n12\n3400\n").unwrap(), [12, 3400]);
        assert_eq!(parse_column("dur\n").unwrap(), Vec::<u64>::new());
        assert_eq!(parse_column("a\tb\n5\tx\n").unwrap(), [5]);
        assert!(parse_column("dur\nNULL\n").unwrap_err().contains("NULL"));
    }

    /// The `.ko` files a shell script loads from the guest's /lib/modules/sp/.
    fn loaded_modules(script: &str) -> Vec<String> {
        let key = "/lib/modules/sp/";
        script
            .match_indices(key)
            .filter_map(|(i, _)| {
                let rest = &script[i + key.len()..];
                let end = rest.find(".ko")?;
                Some(rest[..end].to_string())
            })
            .collect()
    }

    /// The modules a test-module directory's Kbuild builds (`obj-m := a.o b.o`).
    fn built_modules(dir: &str) -> Vec<String> {
        let kbuild = root().join("vm/test-modules").join(dir).join("Kbuild");
        let text =
            fs::read_to_string(&kbuild).unwrap_or_else(|e| panic!("{}: {e}", kbuild.display()));
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("obj-m"))
            .flat_map(|l| {
                l.trim_start_matches([' ', ':', '+', '='])
                    .split_whitespace()
            })
            .filter_map(|o| o.strip_suffix(".o").map(str::to_string))
            .collect()
    }

    #[test]
    fn the_skip_filter_leaves_out_exactly_the_demos_suites() {
        let all = vm::select_tests(None).unwrap();
        let skip = skip_filter();
        let left_out: Vec<String> = all
            .iter()
            .filter(|t| vm::skipped(&t.name, &skip))
            .map(|t| t.file.clone())
            .collect();
        assert_eq!(left_out, TESTS, "the demo's suites and no other");
    }

    #[test]
    fn every_module_the_demo_loads_is_packed() {
        let mut packed: Vec<String> = vec!["superpass".into()];
        for m in TEST_MODULES {
            packed.extend(built_modules(m));
        }
        for t in TESTS {
            let path = root().join(vm::SUITES_DIR).join(t);
            let script =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let loads = loaded_modules(&script);
            assert!(!loads.is_empty(), "{t} loads no module: the scan is broken");
            for m in loads {
                assert!(
                    packed.contains(&m),
                    "{t} loads {m}.ko, which the demo does not pack"
                );
            }
        }
    }

    #[test]
    fn module_scans_read_scripts_and_kbuild() {
        assert_eq!(
            loaded_modules("insmod /lib/modules/sp/a.ko || x\ninsmod /lib/modules/sp/b_c.ko"),
            ["a", "b_c"]
        );
        assert_eq!(built_modules("sp-testdev"), ["sp_testdev"]);
    }

    #[test]
    fn help_documents_report_only() {
        assert!(HELP.contains("--report-only") && HELP.contains("--traces DIR"));
        assert!(HELP.contains("waits.svg"));
    }
}
