//! `cargo xtask insns`: callgrind instruction counts of superpass-core's hot paths.
//!
//! Instruction counts, unlike times, are repeatable on a shared 2-core machine, so they are the
//! figures docs/performance.md quotes. Each hot path runs N times in its own `#[inline(never)]`
//! function; its inclusive instruction count divided by N is the cost of one call, including the
//! call itself.

use crate::util::{cargo, run, target_dir, wants_help};
use std::process::Command;

const HELP: &str = "usage: cargo xtask insns [--iterations N]

Builds core/examples/hotpath_insns (release), runs every hot path under
`valgrind --tool=callgrind`, and prints instructions per call. Needs valgrind.
The goal: <= 100 instructions per hot-path call, <= 20 on the non-critical
path, because the hooks run on every lock wait and scheduler event of every
task (docs/performance.md).
";

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut n: u64 = 100_000;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--iterations" => {
                n = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&v| v > 0)
                    .ok_or("--iterations needs a positive integer")?
            }
            _ => return Err(format!("unknown option `{a}`\n{HELP}")),
        }
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("valgrind not found: apt-get install valgrind".into());
    }
    run(
        "build",
        cargo().args([
            "build",
            "--release",
            "-p",
            "superpass-core",
            "--example",
            "hotpath_insns",
        ]),
    )?;
    let bin = target_dir().join("release/examples/hotpath_insns");
    let list = Command::new(&bin)
        .arg("list")
        .output()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let names = String::from_utf8_lossy(&list.stdout).to_string();
    let dir = std::env::temp_dir().join("superpass-insns");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    println!("{:<24} {:>12}", "hot path", "instr/call");
    for name in names.lines() {
        let out = dir.join(format!("callgrind.{name}"));
        let st = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&bin)
            .args([name, &n.to_string()])
            .output()
            .map_err(|e| e.to_string())?;
        if !st.status.success() {
            return Err(format!("callgrind failed on {name}"));
        }
        let ann = Command::new("callgrind_annotate")
            .args(["--inclusive=yes"])
            .arg(&out)
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&ann.stdout);
        let needle = format!("hotpath_insns::common::{name} ");
        // The inclusive cost is the largest figure callgrind prints next to the function
        // (its own line, or the `=> name (Nx)` call line, depending on the working directory).
        let total: u64 = text
            .lines()
            .filter(|l| l.contains(&needle) && l.contains("common/mod.rs:"))
            .filter_map(|l| {
                l.split_whitespace()
                    .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            })
            .filter_map(|v| v.replace(',', "").parse().ok())
            .max()
            .ok_or_else(|| format!("no callgrind entry for {name}"))?;
        println!("{:<24} {:>12.1}", name, total as f64 / n as f64);
    }
    Ok(())
}
