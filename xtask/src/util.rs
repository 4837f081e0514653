//! Small helpers shared by the tasks: running commands with visible progress, and paths.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits inside the workspace")
        .to_path_buf()
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the workspace) or `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => root().join(d),
        None => root().join("target"),
    }
}

/// Runs `cmd`, printing it first and its duration after; a non-zero exit is an error.
pub fn run(step: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("==> {step}: {cmd:?}");
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: cannot start {:?}: {e}", cmd.get_program()))?;
    let secs = start.elapsed().as_secs_f64();
    if status.success() {
        eprintln!("<== {step}: ok in {secs:.1}s");
        Ok(())
    } else {
        Err(format!("{step} failed ({status}) after {secs:.1}s"))
    }
}

/// A `cargo` command run from the workspace root.
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// Owned copies of `a`: an argument list for a task's `main`.
pub fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// True when `args` asks for help.
pub fn wants_help(args: &[String]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-h")
}
