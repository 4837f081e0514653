//! `cargo xtask ci`: the README's test command, run by `.ci/run` on a fresh machine.

use crate::util::{cargo, run, wants_help};
use std::time::Instant;

const HELP: &str = "usage: cargo xtask ci [--host-only]

Runs, in order, and stops at the first failure:
  1. cargo fmt --check
  2. cargo clippy --workspace --all-targets -- -D warnings
  3. cargo test --workspace (unit, property and integration tests)
  4. cargo xtask kernel   (installs packages and bindgen, builds or reuses
                           the cached test kernel; ~15 min cold, seconds warm)
  5. cargo xtask vm-test  (boots it in QEMU and runs the guest tests)

  --host-only   skip the steps that need the kernel and QEMU (4 and 5)
";

pub fn run_host() -> Result<(), String> {
    run("fmt", cargo().args(["fmt", "--all", "--check"]))?;
    run(
        "clippy",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run("test", cargo().args(["test", "--workspace"]))?;
    Ok(())
}

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    for a in args {
        if a != "--host-only" {
            return Err(format!("unknown option `{a}`\n{HELP}"));
        }
    }
    let t = Instant::now();
    run_host()?;
    if args.iter().any(|a| a == "--host-only") {
        return Ok(());
    }
    eprintln!("==> kernel");
    crate::kernel::main(&[])?;
    eprintln!("==> vm-test");
    crate::vm::main(&[])?;
    eprintln!("ci: all green in {:.0}s", t.elapsed().as_secs_f64());
    Ok(())
}
