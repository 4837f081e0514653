//! `cargo xtask demo`: SuperPass on a real kernel, in one command.
//!
//! Builds (or reuses) the test kernel and superpass.ko, boots QEMU, loads the module and runs
//! the inversion scenario with a kernel mutex and with an rwsem, each three ways: SuperPass off,
//! SuperPass on, and the critical thread in SCHED_FIFO (Android's RT-UI baseline). Prints the
//! tables; saves the ftrace captures to target/vm/inversion-*.trace and, if the superpass-trace
//! binary is built, runs its report on them.

use crate::kernel::{self, Variant};
use crate::util::{root, target_dir, wants_help};
use crate::vm;
use std::fs;
use std::process::Command;
use std::time::Duration;

const HELP: &str = "usage: cargo xtask demo [--secs N]

Builds the test kernel (cached after the first run, ~12 min cold) and superpass.ko,
boots QEMU (TCG, 2 vCPUs), loads the module and runs the inversion scenario
(vm/guest/sp-inversion.c) with a kernel mutex and an rwsem: 4 nice-0 hogs, a
nice-19 blocker computing 500 us inside the lock, and a critical thread taking
the lock every 1 ms; SuperPass off, on, and the critical thread in SCHED_FIFO.
Prints one table per lock. Logs and results: target/vm/demo/, target/vm/results.json
is not touched. Traces: target/vm/inversion-<lock>-<mode>.trace.

  --secs N   seconds per mode (default 10)
";

const TESTS: [&str; 3] = [
    "50-sp-load.sh",
    "52-sp-inversion-mutex.sh",
    "53-sp-inversion-rwsem.sh",
];

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut secs = 10u32;
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
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    eprintln!("[demo] kernel (cached after the first build)");
    let k = kernel::ensure(&kernel::Opts {
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
    eprintln!("[demo] guest programs");
    vm::build_guest_programs(&root().join("vm/guest"), &stage.join("bin"))?;
    let tests: Vec<String> = TESTS.iter().map(|s| s.to_string()).collect();
    let initrd = vm::build_initramfs(&k, &stage, &tests, &out.join("initramfs-demo.cpio.gz"))?;
    let logs = out.join("demo");
    fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    eprintln!(
        "[demo] booting QEMU: mutex and rwsem scenarios, 3 modes x {secs} s each (~{} s)",
        6 * secs + 30
    );
    let b = vm::boot(
        &k,
        &initrd,
        // The inversion scripts read sp.secs from the kernel command line.
        &format!("sptest.timeout={} sp.secs={secs}", 12 * secs + 120),
        Duration::from_secs(20 * secs as u64 + 300),
        &logs,
        false,
    )?;
    let mut report = vm::Report {
        results: Vec::new(),
    };
    let names: Vec<String> = TESTS
        .iter()
        .map(|t| t.trim_end_matches(".sh")[3..].to_string())
        .collect();
    report.add_boot(&b, &names, "kernel-log/demo");

    println!();
    for name in &names[1..] {
        let prefix = format!("[{name}] ");
        for l in &b.console {
            if let Some(rest) = l.strip_prefix(&prefix) {
                if !rest.starts_with("SPTRACE ") {
                    println!("{rest}");
                }
            }
        }
    }
    let traces = crate::module::save_traces(&b.console, &out);
    for t in &traces {
        println!("trace: {}", t.display());
    }
    run_trace_report(&out);
    report.print_table();
    if report.failed() > 0 {
        return Err(format!(
            "{} check(s) failed; logs in {}",
            report.failed(),
            logs.display()
        ));
    }
    Ok(())
}

/// Runs `superpass-trace report <on> --baseline <off>` if the binary is built.
fn run_trace_report(out: &std::path::Path) {
    let bin = ["release", "debug"]
        .map(|p| target_dir().join(p).join("superpass-trace"))
        .into_iter()
        .find(|p| p.exists());
    for lock in ["mutex", "rwsem"] {
        let on = out.join(format!("inversion-{lock}-on.trace"));
        let off = out.join(format!("inversion-{lock}-off.trace"));
        if !on.exists() || !off.exists() {
            continue;
        }
        match &bin {
            Some(bin) => {
                println!("\nsuperpass-trace report ({lock}, on vs off):");
                let _ = Command::new(bin)
                    .arg("report")
                    .arg(&on)
                    .arg("--baseline")
                    .arg(&off)
                    .status();
            }
            None => println!(
                "(build superpass-trace to analyze: cargo run -p superpass-trace --release -- report {} --baseline {})",
                on.display(),
                off.display()
            ),
        }
    }
}
