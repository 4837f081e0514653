//! `cargo xtask`: the one entry point that builds, tests and demonstrates SuperPass.
//!
//! Each task lives in its own file; this root only parses the command line and dispatches.

mod cdf_svg;
mod ci;
mod demo;
mod doctor;
mod ffi_header;
mod gen_headers;
mod guest_service;
mod insns;
mod kernel;
mod module;
mod packages;
mod setup;
mod symbols;
mod util;
mod vm;

use std::process::ExitCode;

/// A task that `cargo xtask <name>` can run.
struct Task {
    name: &'static str,
    about: &'static str,
    run: fn(&[String]) -> Result<(), String>,
}

const TASKS: &[Task] = &[
    Task {
        name: "ci",
        about:
            "Everything CI checks: fmt, clippy, docs, tests, fuzz smoke, then the module's clippy and the guest tests",
        run: ci::main,
    },
    Task {
        name: "demo",
        about: "Build kernel + superpass.ko, boot, run the inversion scenario off/on/FIFO; tables, waits picture, trace report",
        run: demo::main,
    },
    Task {
        name: "doctor",
        about: "List what this machine lacks for the README commands (packages, tools, kernel); installs nothing",
        run: doctor::main,
    },
    Task {
        name: "gen-headers",
        about: "Write the C ABI headers (module/uapi/, module/) from superpass-core; --check",
        run: gen_headers::main,
    },
    Task {
        name: "insns",
        about: "Callgrind instruction counts of superpass-core's hot paths (docs/performance.md)",
        run: insns::main,
    },
    Task {
        name: "kernel",
        about: "Build (or reuse from the cache) the Linux 6.12 test kernel with vendor hooks",
        run: kernel::main,
    },
    Task {
        name: "module",
        about: "Build superpass.ko (module/) against the cached test kernel",
        run: module::main,
    },
    Task {
        name: "setup",
        about: "Install the packages and tools the README's commands need; --kernels builds both test kernels",
        run: setup::main,
    },
    Task {
        name: "symbols",
        about: "superpass.ko's kernel imports as an ACK symbol list, against the stock GKI lists; --check",
        run: symbols::main,
    },
    Task {
        name: "vm-test",
        about:
            "Boot the test kernel in QEMU and run the guest tests; writes target/vm/results.json",
        run: vm::main,
    },
];

fn usage() -> String {
    let mut s =
        String::from("usage: cargo xtask <task> [args]\n\nSuperPass project automation. Tasks:\n");
    for t in TASKS {
        s.push_str(&format!("  {:<11} {}\n", t.name, t.about));
    }
    s.push_str("\nRun `cargo xtask <task> --help` for a task's own options.\n");
    s
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    if name == "help" || name == "--help" || name == "-h" {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some(task) = TASKS.iter().find(|t| t.name == name) else {
        eprintln!("xtask: unknown task `{name}`\n");
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    match (task.run)(&args[1..]) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {}: error: {e}", task.name);
            ExitCode::FAILURE
        }
    }
}
