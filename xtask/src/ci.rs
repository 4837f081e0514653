//! `cargo xtask ci`: the README's test command, run by `.ci/run` on a fresh machine.

use crate::util::{cargo, run, wants_help};
use std::time::Instant;

const HELP: &str = "usage: cargo xtask ci [--host-only]

Runs, in order, and stops at the first failure:
  0. python3 -m pip install perfetto protobuf (Perfetto's own trace schema, so
     the tests that decode our .pftrace output against it run instead of skip)
  1. cargo fmt --check
  2. cargo clippy --workspace --all-targets -- -D warnings
  3. cargo test --workspace (unit, property and integration tests)
  4. cargo xtask kernel   (installs packages and bindgen, builds or reuses
                           the cached test kernel; ~15 min cold, seconds warm)
  5. cargo xtask vm-test  (boots it in QEMU and runs the guest tests)

  --host-only   skip the steps that need the kernel and QEMU (4 and 5)
";

/// Installs Perfetto's Python schema package, which the trace-decoding tests use when present.
fn install_perfetto_schema() {
    let have = std::process::Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if have {
        return;
    }
    let mut pip = std::process::Command::new("python3");
    pip.args(["-m", "pip", "install", "--quiet", "perfetto", "protobuf"]);
    // Not fatal: without it those tests say they skipped, and everything else still runs.
    if let Err(e) = run("pip perfetto", &mut pip) {
        eprintln!("warning: {e}; the Perfetto-schema checks will be skipped");
    }
}

pub fn run_host() -> Result<(), String> {
    install_perfetto_schema();
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
