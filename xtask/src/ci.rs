//! `cargo xtask ci`: the README's test command, run by `.ci/run` on a fresh machine.

use crate::kernel::tools_dir;
use crate::util::{cargo, root, run, target_dir, wants_help};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const HELP: &str = "usage: cargo xtask ci [--host-only]

Runs, in order, and stops at the first failure. Unless --host-only, it first
starts `cargo xtask setup --kernels --no-cargo-fuzz` in the background (the
Debian packages, bindgen, rsbinder-tools, then both test kernels, built or
found cached; log: target/ci-setup.log), so that on a fresh machine the
installs and kernel builds share the 2 cores with steps 0-5; step 6 waits for
it, and no guest boots while it runs.
  0. python3 -m pip install perfetto protobuf (Perfetto's own trace schema, so
     the tests that decode our .pftrace output against it run instead of skip)
  1. cargo fmt --check, then rustfmt --check --edition 2021 on module/*.rs (the
     kernel module's crate, which is not a Cargo package; it includes core by path)
  2. cargo clippy --workspace --all-targets -- -D warnings (with the lints of
     [workspace.lints] in Cargo.toml)
  3. cargo doc --workspace --no-deps, with RUSTDOCFLAGS=-D warnings
  4. cargo test --workspace (unit, property and integration tests; with
     SUPERPASS_CORPUS=../shared/corpus when that folder exists, so that the
     tests on third-party traces run and fail if their folder is missing)
  5. fuzz smoke: each fuzz target for 10 s (SUPERPASS_FUZZ_SECS) from its corpus:
     core/fuzz abi_decode, trace/fuzz decode and ftrace_text; cargo-fuzz 0.13.2
     is installed once into $SUPERPASS_CACHE/tools, and RUSTC_BOOTSTRAP=1 lets
     the stable toolchain take its nightly flags (libFuzzer + AddressSanitizer)
  6. wait for the background setup, then cargo xtask kernel and cargo xtask
                           kernel --arch arm64 (cached by then; cold on 2 idle
                           cores the x86_64 kernel takes 8-14 min and the
                           arm64 one 6-10, by the machine)
  6b. module/compat/check-ack-6.6.sh (the scheduler probes compile against
                           android15-6.6's hook prototypes; ~15 s)
  7. cargo xtask module --clippy (superpass.ko built with the kernel's
                           make CLIPPY=1; any clippy or compiler warning fails)
  8. the guest tests on both architectures, as one vm-test run of two lines:
     cargo xtask vm-test --arch arm64 --filter <ARM64_TESTS> (superpass.ko and
                           the guest programs cross-built; the module load,
                           the ABI, the mutex and rwsem inversions, the PI
                           futex inversion and the 2-vCPU overhead loops, on
                           the asymmetric-capacity guest; results in
                           target/vm/arm64/) and
     cargo xtask vm-test --skip <the demo's tests>,=sp-overhead-4cpu (all but
                           sp-load, the mutex and rwsem inversions and
                           sp-frames: step 10 runs those suites, with the same
                           checks, in the demo's VM; the 4-vCPU overhead
                           matrix, which the 2- and 8-vCPU ones bracket, is
                           left to vm-test), both with --secs 5 (5 s a mode,
                           not 6-20 s, for the suites whose programs run a mode
                           on until it has its minimum of waits, and three
                           without a p99.9 bar: the same bars, fewer waits
                           where there were many; vm-test --help lists them).
                           Each line's timed boots run in turn, arm64's
                           first; then the overhead boots of both (icount: one
                           host thread each, figures counted in guest
                           instructions) share one pool of a boot per host
                           CPU, arm64's first, its longest (~5 min), so no CPU
                           idles while the other line's ones run.
  9. cargo xtask symbols --check, for the x86_64 .ko and with --ko
                           target/module/arm64/superpass.ko (the committed
                           module/android/abi_gki_aarch64_superpass is the
                           arm64 module's own imports; prints what a vendor
                           must add to its GKI symbol list)
  10. cargo xtask demo    (the README's main job: its own VM, the inversion
                           scenario off / on / SCHED_FIFO and the trace report;
                           ~6 min)

  --host-only   skip the steps that need the kernel and QEMU (6 to 10)
";

pub const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// The guest tests CI runs on arm64 (`vm-test --filter`): the module's load, the ABI, the
/// kernel mutex and rwsem inversions, the PI futex inversions and the 2-vCPU overhead loops.
pub const ARM64_TESTS: &str =
    "=sp-load,=sp-abi,=sp-inversion-mutex,=sp-inversion-rwsem,=sp-futex-pi,=sp-overhead";
/// Seconds per mode of the timed guest suites that take `vm-test --secs`: about half their
/// defaults, the same bars; their programs run a mode on until it has its minimum of waits.
const MODE_SECS: u32 = 5;
/// The x86_64 suites CI leaves out besides the demo's: the 4-vCPU overhead matrix, which the
/// 2-vCPU one (the same loops and checks) and the 8-vCPU one (many CPUs) bracket; its
/// ~4 CPU-minutes are a tenth of a fresh machine's guest time. `vm-test` runs it.
const X86_SKIPPED: &str = "=sp-overhead-4cpu";
/// How long each fuzz target runs, unless SUPERPASS_FUZZ_SECS says otherwise.
const FUZZ_SECS: u32 = 10;
/// The fuzz targets: (crate directory with a `fuzz/` project, target).
const FUZZ_TARGETS: &[(&str, &str)] = &[
    ("core", "abi_decode"),
    ("trace", "decode"),
    ("trace", "ftrace_text"),
];

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

/// Step durations, printed as a table when CI ends.
#[derive(Default)]
struct Timings(Vec<(String, f64)>);

impl Timings {
    fn step(&mut self, name: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
        let t = Instant::now();
        let r = f();
        self.0.push((name.to_string(), t.elapsed().as_secs_f64()));
        r
    }

    fn print(&self) {
        eprintln!("ci: step times");
        for (name, secs) in &self.0 {
            eprintln!("  {name:<16} {secs:>7.1}s");
        }
    }
}

/// The kernel module's Rust files (module/*.rs), sorted: the crate root and its modules.
fn module_rust_files() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("module");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    v.sort();
    Ok(v)
}

/// `rustfmt --check` on the module's Rust files: Kbuild compiles them, so `cargo fmt` never
/// sees them. rustfmt follows `mod` items, so core's files (included by `#[path]`) are checked
/// through the crate root too.
fn fmt_module() -> Result<(), String> {
    let files = module_rust_files()?;
    run(
        "fmt module",
        Command::new("rustfmt")
            .args(["--check", "--edition", "2021"])
            .args(&files)
            .current_dir(root()),
    )
}

/// Installs cargo-fuzz into the tools directory unless the right version is there; returns the
/// directory to put first on PATH so that `cargo fuzz` finds it.
pub fn ensure_cargo_fuzz() -> Result<PathBuf, String> {
    let bin = tools_dir().join("bin");
    let have = Command::new(bin.join("cargo-fuzz"))
        .arg("--version")
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).trim()
                    == format!("cargo-fuzz {CARGO_FUZZ_VERSION}")
        });
    if !have {
        run(
            "install cargo-fuzz",
            cargo()
                .args([
                    "install",
                    "cargo-fuzz",
                    "--version",
                    CARGO_FUZZ_VERSION,
                    "--locked",
                    "--root",
                ])
                .arg(tools_dir())
                .env_remove("CARGO_TARGET_DIR"),
        )?;
    }
    Ok(bin)
}

/// Runs every fuzz target for a short while. New inputs go to `target/fuzz-corpus/<target>` (the
/// first corpus directory libFuzzer is given), so the committed seeds are only read.
fn fuzz_smoke() -> Result<(), String> {
    let secs: u32 = match std::env::var("SUPERPASS_FUZZ_SECS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("SUPERPASS_FUZZ_SECS={v}: not a number of seconds"))?,
        Err(_) => FUZZ_SECS,
    };
    if secs == 0 {
        eprintln!("==> fuzz: skipped (SUPERPASS_FUZZ_SECS=0)");
        return Ok(());
    }
    let bin = ensure_cargo_fuzz()?;
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    for &(krate, target) in FUZZ_TARGETS {
        let dir = root().join(krate);
        let scratch = target_dir().join("fuzz-corpus").join(target);
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        let seeds = dir.join("fuzz/corpus").join(target);
        let mut cmd = cargo();
        cmd.current_dir(&dir)
            .env("PATH", &path)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", target, "--target-dir"])
            .arg(target_dir().join("fuzz"))
            .arg(&scratch);
        if seeds.is_dir() {
            cmd.arg(&seeds);
        }
        cmd.args(["--", &format!("-max_total_time={secs}")]);
        run(&format!("fuzz {krate}/{target}"), &mut cmd)?;
    }
    Ok(())
}

/// Points the tests at the third-party trace corpus (`../shared/corpus` beside the checkout,
/// never committed) when it is there; with `SUPERPASS_CORPUS` set, a corpus test whose folder
/// is missing fails instead of skipping. Without the corpus those tests skip and say so.
fn corpus_env(cmd: &mut Command) {
    if std::env::var_os("SUPERPASS_CORPUS").is_some() {
        return;
    }
    let corpus = root().join("../shared/corpus");
    match corpus.canonicalize() {
        Ok(dir) if dir.is_dir() => {
            eprintln!("==> test: trace corpus at {}", dir.display());
            cmd.env("SUPERPASS_CORPUS", dir);
        }
        _ => eprintln!(
            "warning: no trace corpus at {}; the corpus tests will skip",
            corpus.display()
        ),
    }
}

fn run_host(t: &mut Timings) -> Result<(), String> {
    t.step("perfetto schema", || {
        install_perfetto_schema();
        Ok(())
    })?;
    t.step("fmt", || {
        run("fmt", cargo().args(["fmt", "--all", "--check"]))
    })?;
    t.step("fmt module", fmt_module)?;
    t.step("clippy", || {
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
        )
    })?;
    t.step("doc", || {
        let mut flags = std::env::var("RUSTDOCFLAGS").unwrap_or_default();
        flags.push_str(" -D warnings");
        run(
            "doc",
            cargo()
                .args(["doc", "--workspace", "--no-deps"])
                .env("RUSTDOCFLAGS", flags.trim()),
        )
    })?;
    t.step("test", || {
        let mut test = cargo();
        test.args(["test", "--workspace"]);
        corpus_env(&mut test);
        run("test", &mut test)
    })?;
    t.step("fuzz", fuzz_smoke)?;
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
    let start = Instant::now();
    let mut t = Timings::default();
    let r = run_ci(&mut t, args.iter().any(|a| a == "--host-only"));
    t.print();
    r?;
    eprintln!("ci: all green in {:.0}s", start.elapsed().as_secs_f64());
    Ok(())
}

/// `cargo xtask setup --kernels --no-cargo-fuzz` in a child process of its own (a process
/// group, so that it can be stopped whole), writing to a log file: the packages, tools and
/// kernels, made ready while the host checks run.
struct Background {
    child: Option<Child>,
    log: PathBuf,
}

impl Background {
    fn spawn() -> Result<Self, String> {
        let log = target_dir().join("ci-setup.log");
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("the xtask binary: {e}"))?;
        let child = Command::new(exe)
            .args(["setup", "--kernels", "--no-cargo-fuzz"])
            .current_dir(root())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the background setup: {e}"))?;
        eprintln!(
            "==> setup --kernels, in the background beside the host checks (log: {})",
            log.display()
        );
        Ok(Self {
            child: Some(child),
            log,
        })
    }

    /// Waits for the setup to end; prints its `[setup]` lines, or its log's end if it failed.
    fn wait(mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        eprintln!("==> setup: waiting for the background setup");
        let st = child.wait().map_err(|e| format!("background setup: {e}"))?;
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        for l in text.lines().filter(|l| l.starts_with("[setup]")) {
            eprintln!("    {l}");
        }
        if st.success() {
            return Ok(());
        }
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        Err(format!(
            "the background setup failed ({st}); the end of {}:\n{tail}",
            self.log.display()
        ))
    }
}

impl Drop for Background {
    /// A CI that stops early stops its setup too: the child's whole process group.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("--")
                .arg(format!("-{}", child.id()))
                .status();
            let _ = child.wait();
        }
    }
}

fn run_ci(t: &mut Timings, host_only: bool) -> Result<(), String> {
    let setup = if host_only {
        None
    } else {
        Some(Background::spawn()?)
    };
    run_host(t)?;
    let Some(setup) = setup else {
        return Ok(());
    };
    // No guest boots before it ends: a build beside a boot would slow the boot's emulated CPUs.
    t.step("setup wait", || setup.wait())?;
    let args = crate::util::strings;
    eprintln!("==> kernel");
    t.step("kernel", || crate::kernel::main(&[]))?;
    eprintln!("==> kernel arm64");
    t.step("kernel arm64", || {
        crate::kernel::main(&args(&["--arch", "arm64"]))
    })?;
    eprintln!("==> compat 6.6");
    t.step("compat 6.6", || {
        let k = crate::kernel::ensure(&crate::kernel::Opts::default())?;
        run(
            "compat 6.6",
            Command::new("sh")
                .arg(root().join("module/compat/check-ack-6.6.sh"))
                .arg(&k.build),
        )
    })?;
    eprintln!("==> module clippy");
    t.step("module clippy", || {
        crate::module::main(&["--clippy".to_string()])
    })?;
    // One run of both lines, so that the overhead boots of both share the host's CPUs; arm64's
    // first, as its overhead boot is the longest. The demo's boot runs the demo's suite files
    // with the same checks, so running them here too would only repeat them.
    eprintln!("==> vm-test (arm64, x86_64)");
    t.step("vm-test", || {
        let secs = MODE_SECS.to_string();
        let arm64 = args(&["--arch", "arm64", "--filter", ARM64_TESTS, "--secs", &secs]);
        let skip = format!("{},{X86_SKIPPED}", crate::demo::skip_filter());
        let x86 = args(&["--skip", &skip, "--secs", &secs]);
        crate::vm::main_many(&[&arm64, &x86])
    })?;
    // After vm-test, which built both superpass.ko: reading one with nm takes a second.
    eprintln!("==> symbols");
    t.step("symbols", || crate::symbols::main(&["--check".to_string()]))?;
    eprintln!("==> symbols arm64");
    t.step("symbols arm64", || {
        let ko = root().join("target/module/arm64/superpass.ko");
        crate::symbols::main(&args(&["--check", "--ko", &ko.to_string_lossy()]))
    })?;
    // The README's main job, so that CI fails when it does (it once lacked a module its tests
    // load, and only a run of the demo itself could show it).
    eprintln!("==> demo");
    t.step("demo", || crate::demo::main(&[]))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Each `name = ...` package of a Cargo.lock with its version.
    fn locked(krate: &str) -> BTreeMap<String, String> {
        let path = root().join(krate).join("fuzz/Cargo.lock");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = BTreeMap::new();
        let mut name = None;
        for l in text.lines() {
            if let Some(n) = l.strip_prefix("name = ") {
                name = Some(n.trim_matches('"').to_string());
            } else if let (Some(v), Some(n)) = (l.strip_prefix("version = "), name.take()) {
                out.insert(n, v.trim_matches('"').to_string());
            }
        }
        out
    }

    /// The fuzz projects share one target directory, where a dependency is built once only if
    /// both lock it at the same version (libFuzzer's C++ build is half a fuzz project's build).
    #[test]
    fn the_fuzz_projects_lock_their_shared_dependencies_alike() {
        let mut crates: Vec<&str> = FUZZ_TARGETS.iter().map(|&(k, _)| k).collect();
        crates.dedup();
        assert!(crates.len() > 1);
        let first = locked(crates[0]);
        assert!(first.contains_key("libfuzzer-sys"));
        for k in &crates[1..] {
            for (name, version) in locked(k) {
                if let Some(v) = first.get(&name) {
                    assert_eq!(
                        v, &version,
                        "{name}: {} locks {v}, {k} locks {version}",
                        crates[0]
                    );
                }
            }
        }
    }
}
