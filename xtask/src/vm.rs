//! `cargo xtask vm-test`: boots the SuperPass test kernel in QEMU (TCG) and
//! runs the guest tests.
//!
//! Reusable pieces for later tasks: [`build_guest_programs`],
//! [`build_module`], [`build_initramfs`], [`boot`] and [`Report`].

use crate::kernel::{self, Arch, Kernel, Variant};
use crate::util::{root, wants_help};
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const HELP: &str =
    "usage: cargo xtask vm-test [--filter NAME] [--skip NAME] [--arch x86_64|arm64]
                           [--variant default|kasan] [--secs N] [--timeout SECS]
                           [--test-timeout SECS] [--verbose] [--list] [--and OPTIONS...]

Boots the SuperPass test kernel in QEMU and runs the guest tests:
  1. builds or reuses the cached kernel (cargo xtask kernel);
  2. compiles the guest programs tests/guest/*.c (gcc -static, against the
     generated UAPI header module/uapi/) and the test modules
     vm/test-modules/<name>/ (make -C <kernel build> M=...);
  3. packs an initramfs: busybox-static, tests/guest/init.sh as /init, the
     suites tests/guest/suites/*.sh, the programs, the test modules (/lib/modules/sp/)
     and the kernel's own modules (/lib/modules/<release>/, for modprobe);
     for sp-service also superpass-service, superpassctl, rsb_hub, rsb_device
     (cargo install rsbinder-tools into the tools cache, once), the libraries
     they link, rsb_hub's policy and the end-to-end script from tests/service/
     (xtask/src/guest_service.rs);
  4. boots qemu-system-x86_64 -accel tcg -smp 2 (or the group's #@machine) -m 1024 with two serial
     ports: ttyS0 is the kernel console (-> target/vm/<group>/kernel.log), ttyS1 the
     test output (-> target/vm/<group>/guest.log); one line per test:
       SPTEST {\"name\":..,\"status\":\"pass|fail|skip\",\"duration_ms\":..,\"metrics\":{..}}
  5. scans the whole kernel log for kernel errors (Oops, WARNING:, BUG:,
     lockdep reports, panics): any one fails the run (`kernel-log/<group>`);
  6. saves the guests' ftrace captures as target/vm/inversion-<tag>.trace: each boot
     shares target/vm/<group>/share with its guest (virtio-9p, mounted at /sptrace),
     where the inversion programs write them (SPTRACE console lines where it is absent);
     with SuperPass on, the inversion programs capture every wait over 16 ms (a 60 Hz
     frame), and `superpass-trace report --long-ms 16 --long-only` itemizes each one
     (the waiter's and holders' states, SuperPass's events in it), printed and appended
     to the boot's guest.log;
  7. writes target/vm/results.json (array of {name,status,duration_ms,metrics}; each
     kernel-log/<group> entry's metrics carry the guest's arch, aarch64 or x86_64),
     prints a table, exits non-zero on any failure.

A test that prints no result (guest crash, hang, timeout) counts as failed.
Tests run in boot groups: a script with a line `#@boot NAME` runs in VM NAME
(default `main`), one fresh VM per group, e.g. because a test module pins
the restricted hooks. A line `#@machine cpus=N [icount]` sets the group's
vCPUs (default 2) and turns on QEMU's deterministic instruction counting,
under which guest time measures executed instructions (overhead ratios).
Groups run one after another, except the icount groups: they run last, up to
one per host CPU at a time (each is a single QEMU thread, and its figures count
guest instructions, so a neighbour cannot change them). Every boot's
progress lines name its group: [vm <group> <seconds>s].
Shell code suites share lives in tests/guest/lib/*.sh (/lib/sptest/ in the guest). Logs: target/vm/<group>/{kernel,guest}.log; each group
adds a `kernel-log/<group>` result.

Adding tests: drop a script into tests/guest/suites/NN-name.sh (see the
contract at the top of tests/guest/init.sh), a C program into tests/guest/
(available as /bin/<name> in the guest; #include \"superpass_uapi.h\" for the
/dev/superpass ABI, \"superpass_testdev.h\" for /dev/superpass-test), or a module
directory with a Kbuild file into vm/test-modules/ (its .ko files land in
/lib/modules/sp/).

Options:
  --filter NAME[,NAME] run only the tests whose name contains one of the NAMEs
                       (^NAME: whose name starts with NAME; =NAME: named NAME)
  --skip NAME[,NAME]   leave out the tests that NAME matches, as for --filter (CI
                       leaves out the demo's tests, which its demo step runs)
  --arch A             x86_64 (default) or arm64: the arm64 kernel (cargo xtask kernel
                       --arch arm64) under qemu-system-aarch64 -M virt -cpu max (TCG);
                       guest programs cross-compiled static (aarch64-linux-gnu-gcc),
                       busybox from Debian's arm64 busybox-static (extracted into the
                       tools cache); the kernel console is ttyAMA0 and the test output
                       a virtio console (hvc0). The guest boots QEMU's own virt device
                       tree with capacity-dmips-mhz added (dtc): CPU 0 big (1024), the
                       others little (512), so the kernel's capacities are asymmetric,
                       as on a phone. sp-service is x86_64 only for now. Logs,
                       captures and results.json go to target/vm/arm64/.
  --variant V          kernel variant: default or kasan (KASAN + lockdep)
  --secs N             seconds per mode of the timed suites whose programs run a
                       mode on until it has its minimum of waits (sp-inversion with
                       a p99.9 bar, sp-futex, sp-pcpu: the inversion, misfit,
                       rvh-shared, futex hint/pi and percpu-rwsem suites), and of
                       sp-readers, sp-locktorture and sp-service: SP_SECS=N in the
                       guest's environment, each suite's own default (6-20 s)
                       otherwise. CI uses 5: the same bars, fewer waits in the
                       modes that had many. The others keep their lengths: the
                       sp-follow and binder suites (their modes do not run on, and
                       at 5 s an off mode fell short of 1000 waits), the suites
                       that wait for a rare race, sp-futex-plain (its p99.9 falls
                       among 1% of rare inversions), sp-churn, sp-pidns, sp-push
                       and the overhead suites
  --timeout SECS       whole-VM timeout (default 1800: the superpass boot runs every
                       inversion test twice, critical thread at nice 0 and -10)
  --test-timeout SECS  per-test timeout inside the guest (default 300)
  --verbose            echo the whole console while it runs
  --list               list the tests and exit
  --and                starts another line of options, run with this one: each
                       line's timed boots in turn, then the icount boots of all
                       of them in one pool, so that one line's fill the host CPUs
                       another's leave idle. CI runs --arch arm64 --filter
                       <its arm64 subset> --and --skip <the demo's tests>
";

/// Lines that mean the kernel is unhealthy.
pub const BAD_PATTERNS: &[&str] = &[
    "Oops",
    "WARNING:",
    "BUG:",
    "possible circular locking",
    "INFO: possible",
    "general protection fault",
    "Kernel panic",
    "UBSAN:",
    "Call Trace:",
];

/// The guest programs (`*.c`, one `/bin/<name>` each) and the guest's `/init`.
pub const GUEST_DIR: &str = "tests/guest";
/// The guest test scripts, `NN-name.sh`.
pub const SUITES_DIR: &str = "tests/guest/suites";
/// The generated `/dev/superpass` UAPI header (`cargo xtask gen-headers`).
pub const UAPI_DIR: &str = "module/uapi";
/// Where the test lock device's ABI header (`superpass_testdev.h`) lives.
pub const TESTDEV_DIR: &str = "vm/test-modules/sp-testdev";

/// Where vm-test writes: `<workspace>/target/vm` (not CARGO_TARGET_DIR).
pub fn out_dir() -> PathBuf {
    root().join("target/vm")
}

struct Opts {
    filter: Option<String>,
    skip: Option<String>,
    arch: Arch,
    variant: Variant,
    secs: Option<u32>,
    timeout: u64,
    test_timeout: u64,
    verbose: bool,
    list: bool,
}

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let lines: Vec<&[String]> = args.split(|a| a == "--and").collect();
    if lines.iter().skip(1).any(|l| l.is_empty()) {
        return Err(format!("--and needs options after it\n\n{HELP}"));
    }
    main_many(&lines)
}

/// Runs several vm-test command lines (CI: one per architecture) as one: the timed boots of
/// each, in the order given, then the icount boots of all of them in one pool, so that one
/// architecture's counted boots use the host CPUs another's leave idle. Each writes its own
/// results and table; an error names every line that had a failed test.
pub fn main_many(lines: &[&[String]]) -> Result<(), String> {
    let mut runs = Vec::new();
    for args in lines {
        let o = parse(args)?;
        if let Some(r) = Run::prepare(o)? {
            runs.push(r);
        }
    }
    for r in &mut runs {
        r.run_timed()?;
    }
    // (run, plan) of every icount boot, the runs' in the order given.
    let counted: Vec<(usize, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.counted.len()).map(move |k| (i, k)))
        .collect();
    for &(i, k) in &counted {
        let r = &runs[i];
        r.counted[k].prepare(&r.k, &r.stage, &r.work)?;
    }
    // Each icount VM is one host thread and its guest clock counts instructions, so running
    // them side by side changes their wall time, not their figures: a pool of one per host CPU.
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    let side_by_side = width > 1 && counted.len() > 1;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, Result<BootResult, String>)>> = Default::default();
    std::thread::scope(|s| {
        for _ in 0..width.min(counted.len()) {
            s.spawn(|| loop {
                let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(i, k)) = counted.get(j) else { break };
                let (r, p) = (&runs[i], &runs[i].counted[k]);
                p.announce(
                    r.o.arch,
                    r.o.timeout,
                    if side_by_side { " (side by side)" } else { "" },
                );
                let b = r.boot(p);
                if let Ok(mut d) = done.lock() {
                    d.push((j, b));
                }
            });
        }
    });
    let mut done = done.into_inner().map_err(|_| "a boot thread panicked")?;
    done.sort_by_key(|(j, _)| *j);
    if done.len() != counted.len() {
        return Err("a boot thread ended without a result".into());
    }
    for (&(i, k), (_, b)) in counted.iter().zip(done) {
        let r = &mut runs[i];
        finish(&mut r.report, &r.out, &r.counted[k], &b?);
    }
    let mut failed = Vec::new();
    for r in &runs {
        let n = r.write()?;
        if n > 0 {
            failed.push(format!("{n} test(s) failed ({})", r.o.arch.name()));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join(", "))
    }
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        filter: None,
        skip: None,
        arch: Arch::X86_64,
        variant: Variant::Default,
        secs: None,
        timeout: 1800,
        test_timeout: 300,
        verbose: false,
        list: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--filter" => o.filter = Some(val()?),
            "--skip" => o.skip = Some(val()?),
            "--arch" => o.arch = Arch::parse(&val()?)?,
            "--variant" => o.variant = Variant::parse(&val()?)?,
            "--secs" => {
                o.secs = Some(
                    val()?
                        .parse()
                        .ok()
                        .filter(|s| (1..=120).contains(s))
                        .ok_or("--secs: a whole number of seconds, 1 to 120")?,
                )
            }
            "--timeout" => o.timeout = val()?.parse().map_err(|_| "--timeout: not a number")?,
            "--test-timeout" => {
                o.test_timeout = val()?.parse().map_err(|_| "--test-timeout: not a number")?
            }
            "--verbose" | "-v" => o.verbose = true,
            "--list" => o.list = true,
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    Ok(o)
}

/// One vm-test command line, built and planned: its kernel, initramfs stage and boots.
struct Run {
    o: Opts,
    k: Kernel,
    /// Where its logs, captures and results go: `target/vm`, or `target/vm/<arch>` for an
    /// architecture other than x86_64, so that the two can share a run.
    out: PathBuf,
    work: PathBuf,
    stage: PathBuf,
    cmdline: String,
    timed: Vec<BootPlan>,
    counted: Vec<BootPlan>,
    report: Report,
    t0: Instant,
}

impl Run {
    /// Selects the tests, builds what they need and plans their boots; `None` for `--list`,
    /// which prints them instead.
    fn prepare(o: Opts) -> Result<Option<Run>, String> {
        let tests = select_tests(o.filter.as_deref())?;
        let tests: Vec<TestFile> = match o.skip.as_deref() {
            Some(skip) => tests
                .into_iter()
                .filter(|t| !skipped(&t.name, skip))
                .collect(),
            None => tests,
        };
        if o.list {
            for t in &tests {
                println!("{:<20} boot {:<10} {SUITES_DIR}/{}", t.name, t.boot, t.file);
            }
            return Ok(None);
        }
        if tests.is_empty() {
            return Err(format!(
                "no test matches --filter {} --skip {}",
                o.filter.unwrap_or_default(),
                o.skip.unwrap_or_default()
            ));
        }
        if o.arch != Arch::X86_64 {
            if let Some(t) = tests.iter().find(|t| t.name.starts_with("sp-service")) {
                return Err(format!(
                    "{} needs the HAL service built for the guest, which is x86_64 only so far",
                    t.name
                ));
            }
        }
        let t0 = Instant::now();
        let k = kernel::ensure(&kernel::Opts {
            arch: o.arch,
            variant: o.variant,
            ..Default::default()
        })?;
        let out = match o.arch {
            Arch::X86_64 => out_dir(),
            a => out_dir().join(a.name()),
        };
        fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        // Scratch space of this run only: several vm-test runs may share the checkout.
        let work = run_dir(&out)?;
        let stage = work.join("initramfs");
        fs::create_dir_all(stage.join("bin")).map_err(|e| e.to_string())?;
        step("guest programs");
        build_guest_programs(&root().join(GUEST_DIR), &stage.join("bin"), k.arch)?;
        step("test modules");
        let moddir = stage.join("lib/modules/sp");
        fs::create_dir_all(&moddir).map_err(|e| e.to_string())?;
        for m in module_dirs()? {
            for ko in build_module(&k, &m, &work.join("modules"))? {
                copy(&ko, &moddir.join(ko.file_name().unwrap_or_default()))?;
            }
        }
        // The product module, superpass.ko (module/), for the sp-* guest tests
        // (only built when one of them is selected).
        if tests.iter().any(|t| t.name.starts_with("sp-")) {
            step("superpass.ko");
            let ko = crate::module::build(&k)?;
            copy(&ko, &moddir.join("superpass.ko"))?;
        }
        // The HAL service over binderfs, for the sp-service guest test.
        if tests.iter().any(|t| t.name.starts_with("sp-service")) {
            step("superpass-service, superpassctl, rsb_hub");
            crate::guest_service::stage(&stage)?;
        }
        // One boot per group, in the order the groups first appear; the icount groups last.
        let mut groups: Vec<String> = Vec::new();
        for t in &tests {
            if !groups.contains(&t.boot) {
                groups.push(t.boot.clone());
            }
        }
        let mut plans = Vec::new();
        for g in &groups {
            let members: Vec<&TestFile> = tests.iter().filter(|t| &t.boot == g).collect();
            let machine = members[0].machine;
            if let Some(t) = members.iter().find(|t| t.machine != machine) {
                return Err(format!(
                    "boot `{g}`: {SUITES_DIR}/{} asks for a different #@machine than {SUITES_DIR}/{}",
                    t.file, members[0].file
                ));
            }
            plans.push(BootPlan {
                group: g.clone(),
                machine,
                files: members.iter().map(|t| t.file.clone()).collect(),
                names: members.iter().map(|t| t.name.clone()).collect(),
            });
        }
        let (counted, timed): (Vec<BootPlan>, Vec<BootPlan>) =
            plans.into_iter().partition(|p| p.machine.icount);
        let secs = o.secs.map(|s| format!(" SP_SECS={s}")).unwrap_or_default();
        let cmdline = format!("sptest.timeout={}{secs}{}", o.test_timeout, guest_env()?);
        Ok(Some(Run {
            o,
            k,
            out,
            work,
            stage,
            cmdline,
            timed,
            counted,
            report: Report {
                results: Vec::new(),
            },
            t0,
        }))
    }

    /// Boots the timed groups one after another (each needs the host's CPUs to itself).
    fn run_timed(&mut self) -> Result<(), String> {
        for p in &self.timed {
            p.prepare(&self.k, &self.stage, &self.work)?;
            p.announce(self.o.arch, self.o.timeout, "");
            let b = self.boot(p)?;
            finish(&mut self.report, &self.out, p, &b);
        }
        Ok(())
    }

    fn boot(&self, p: &BootPlan) -> Result<BootResult, String> {
        let initrd = self.work.join(format!("initramfs-{}.cpio.gz", p.group));
        let logs = self.out.join(&p.group);
        fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        boot(
            &self.k,
            &p.machine,
            &initrd,
            &self.cmdline,
            Duration::from_secs(self.o.timeout),
            &logs,
            self.o.verbose,
        )
    }

    /// Writes results.json, prints the table, and returns how many tests failed.
    fn write(&self) -> Result<usize, String> {
        let results = self.out.join("results.json");
        self.report.write(&results)?;
        self.report.print_table();
        eprintln!(
            "results: {}  logs: {}/<boot>/{{guest,kernel}}.log  (total {:.0}s)",
            results.display(),
            self.out.display(),
            self.t0.elapsed().as_secs_f64()
        );
        Ok(self.report.failed())
    }
}

/// Adds a boot's results to `report`, saves its ftrace captures (the inversion programs'
/// files in the boot's shared folder, or their SPTRACE lines) as `<out>/inversion-*.trace`
/// for superpass-trace, and itemizes their long waits into the boot's guest.log.
fn finish(report: &mut Report, out: &Path, p: &BootPlan, b: &BootResult) {
    report.add_boot(b, &p.names, &format!("kernel-log/{}", p.group));
    let share = share_dir(&out.join(&p.group));
    let traces = crate::module::save_traces(&b.console, &share, out);
    itemize_long_waits(&traces, &out.join(&p.group).join("guest.log"));
}

/// One boot group's VM and tests.
struct BootPlan {
    group: String,
    machine: Machine,
    files: Vec<String>,
    names: Vec<String>,
}

impl BootPlan {
    /// Packs the group's initramfs (`<work>/initramfs-<group>.cpio.gz`).
    fn prepare(&self, k: &Kernel, stage: &Path, work: &Path) -> Result<(), String> {
        step(&format!("initramfs for boot `{}`", self.group));
        build_initramfs(
            k,
            stage,
            &self.files,
            &work.join(format!("initramfs-{}.cpio.gz", self.group)),
        )?;
        Ok(())
    }

    fn announce(&self, arch: Arch, timeout: u64, how: &str) {
        step(&format!(
            "boot `{}`: QEMU ({} {}){how}, {} test(s): {}; timeout {timeout}s",
            self.group,
            arch.name(),
            self.machine.describe(),
            self.names.len(),
            self.names.join(" "),
        ));
    }
}

/// Creates `target/vm/run-<pid>` for this run's build products, after removing
/// the directories of earlier runs that are no longer alive.
fn run_dir(out: &Path) -> Result<PathBuf, String> {
    if let Ok(rd) = fs::read_dir(out) {
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(pid) = name.strip_prefix("run-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let dir = out.join(format!("run-{}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Whether a capture (`inversion-<tag>.trace`) is of a mode with SuperPass on: a dash-separated
/// word of its tag is `on`, `ext` or `onfifo` (on+fifo: SuperPass on and the critical thread
/// SCHED_FIFO), either variant (`mutex-on`, `sp-chain-on_n10-w2`, `mutex-onfifo-w1`).
fn superpass_on_capture(trace: &Path) -> bool {
    let stem = trace.file_stem().unwrap_or_default().to_string_lossy();
    let tag = stem.strip_prefix("inversion-").unwrap_or(&stem);
    tag.split('-').any(|w| {
        ["on", "ext", "onfifo"]
            .iter()
            .any(|m| w == *m || w.strip_prefix(m).is_some_and(|s| s.starts_with("_n")))
    })
}

/// Extra environment for the guest's tests, from the host's `SUPERPASS_GUEST_ENV` (`KEY=value`
/// words, e.g. `SP_STALLWATCH=1`): words of the kernel command line the kernel does not know
/// reach /init's environment, and so every test's.
fn guest_env() -> Result<String, String> {
    let Ok(env) = std::env::var("SUPERPASS_GUEST_ENV") else {
        return Ok(String::new());
    };
    let mut out = String::new();
    for word in env.split_whitespace() {
        match word.split_once('=') {
            Some((k, _))
                if !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
            {
                out.push(' ');
                out.push_str(word);
            }
            _ => {
                return Err(format!(
                    "SUPERPASS_GUEST_ENV: `{word}` is not KEY=value with an upper-case KEY"
                ))
            }
        }
    }
    Ok(out)
}

/// Itemizes every wait over 16 ms (a 60 Hz frame) in the captures of SuperPass-on modes with
/// `superpass-trace report --long-ms 16 --long-only`, printed and appended to `log` (the
/// boot's guest.log). Reporting only: a failure to itemize is printed, not a test failure.
fn itemize_long_waits(traces: &[PathBuf], log: &Path) {
    let on: Vec<&PathBuf> = traces.iter().filter(|t| superpass_on_capture(t)).collect();
    if on.is_empty() {
        return;
    }
    let tool = match crate::demo::build_trace_tool() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("[vm] cannot itemize the long waits: {e}");
            return;
        }
    };
    let mut text =
        String::from("\n== waits over 16 ms with SuperPass on, itemized from the captures ==\n");
    for t in on {
        let o = Command::new(&tool)
            .arg("report")
            .arg(t)
            .args(["--long-ms", "16", "--top", "20", "--long-only"])
            .output();
        text.push_str(&format!(
            "\n$ superpass-trace report {} --long-ms 16 --long-only\n",
            t.display()
        ));
        match o {
            Ok(o) if o.status.success() => text.push_str(&String::from_utf8_lossy(&o.stdout)),
            Ok(o) => text.push_str(&format!(
                "failed: {}\n",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => text.push_str(&format!("failed: {e}\n")),
        }
    }
    print!("{text}");
    let appended = fs::OpenOptions::new()
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = appended {
        eprintln!("[vm] {}: {e}", log.display());
    }
}

fn step(s: &str) {
    eprintln!("[vm] {s}");
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
}

/// A guest test script.
pub struct TestFile {
    /// File name in [`SUITES_DIR`] (`NN-name.sh`).
    pub file: String,
    /// Test name: the file name without the `NN-` prefix and `.sh`.
    pub name: String,
    /// Boot group (`#@boot NAME` line in the script; default `main`). Each
    /// group gets its own fresh VM, e.g. for tests that pin restricted hooks.
    pub boot: String,
    /// The VM the group needs (`#@machine cpus=N [icount]`; default 2 vCPUs).
    pub machine: Machine,
}

/// The QEMU machine of a boot group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Virtual CPUs.
    pub cpus: u32,
    /// Deterministic instruction counting (`-icount shift=0`): the guest clock advances one
    /// nanosecond per executed instruction, so a guest-timed loop measures instructions and
    /// the host's load cannot move it. For overhead ratios, not for latency tests.
    pub icount: bool,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            cpus: 2,
            icount: false,
        }
    }
}

impl Machine {
    /// Parses `cpus=N [icount]`.
    pub fn parse(spec: &str) -> Result<Machine, String> {
        let mut m = Machine::default();
        for w in spec.split_whitespace() {
            if w == "icount" {
                m.icount = true;
            } else if let Some(n) = w.strip_prefix("cpus=") {
                m.cpus = n
                    .parse()
                    .ok()
                    .filter(|n| (1..=8).contains(n))
                    .ok_or_else(|| format!("#@machine: cpus must be 1 to 8, not `{n}`"))?;
            } else {
                return Err(format!(
                    "#@machine: unknown word `{w}` (expected cpus=N or icount)"
                ));
            }
        }
        Ok(m)
    }

    /// What the progress line says about it.
    pub fn describe(&self) -> String {
        format!(
            "TCG, {} vCPUs{}",
            self.cpus,
            if self.icount { ", icount" } else { "" }
        )
    }
}

/// Whether `--skip skip` leaves test `name` out.
pub fn skipped(name: &str, skip: &str) -> bool {
    skip.split(',').any(|f| name_matches(name, f))
}

/// Whether test `name` matches one `--filter`/`--skip` word: contains it, starts with it
/// (`^name`) or is it (`=name`).
fn name_matches(name: &str, f: &str) -> bool {
    if let Some(prefix) = f.strip_prefix('^') {
        name.starts_with(prefix)
    } else if let Some(exact) = f.strip_prefix('=') {
        name == exact
    } else {
        name.contains(f)
    }
}

/// The tests of [`SUITES_DIR`]`/*.sh`, sorted by file name, whose name matches one of the
/// comma-separated `filter`s: contains it, starts with it (`^name`) or is it (`=name`).
pub fn select_tests(filter: Option<&str>) -> Result<Vec<TestFile>, String> {
    let dir = root().join(SUITES_DIR);
    let mut v: Vec<TestFile> = Vec::new();
    for e in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let file = e.file_name().to_string_lossy().to_string();
        let Some(stem) = file.strip_suffix(".sh") else {
            continue;
        };
        let name = match stem.split_once('-') {
            Some((p, rest)) if p.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => stem,
        }
        .to_string();
        if filter.is_some_and(|f| !f.split(',').any(|f| name_matches(&name, f))) {
            continue;
        }
        let text = fs::read_to_string(e.path()).map_err(|e| e.to_string())?;
        let boot = text
            .lines()
            .find_map(|l| l.strip_prefix("#@boot "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("main")
            .to_string();
        let machine = match text.lines().find_map(|l| l.strip_prefix("#@machine ")) {
            Some(spec) => Machine::parse(spec).map_err(|e| format!("{SUITES_DIR}/{file}: {e}"))?,
            None => Machine::default(),
        };
        v.push(TestFile {
            file,
            name,
            boot,
            machine,
        });
    }
    v.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(v)
}

/// The C compiler of the guest programs for `arch`: the host's gcc, or Debian's aarch64 cross
/// gcc (package gcc-aarch64-linux-gnu, with libc6-dev-arm64-cross for the static glibc).
pub fn guest_cc(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "gcc",
        Arch::Arm64 => "aarch64-linux-gnu-gcc",
    }
}

/// Compiles every `*.c` of `src` (the guest programs, [`GUEST_DIR`]) into a static binary for
/// `arch` in `bin`, with the generated UAPI header ([`UAPI_DIR`]) and the test device's header
/// ([`TESTDEV_DIR`]) on the include path.
pub fn build_guest_programs(src: &Path, bin: &Path, arch: Arch) -> Result<(), String> {
    let mut srcs: Vec<PathBuf> = fs::read_dir(src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    srcs.sort();
    let cc = guest_cc(arch);
    // One compiler per host CPU: each program is one file, and a cold CI run has no CPU to spare.
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    for batch in srcs.chunks(width) {
        let mut children = Vec::new();
        for s in batch {
            let child = Command::new(cc)
                .args(["-static", "-O2", "-Wall", "-Werror", "-pthread", "-I"])
                .arg(root().join(UAPI_DIR))
                .arg("-I")
                .arg(root().join(TESTDEV_DIR))
                .arg("-o")
                .arg(bin.join(s.file_stem().unwrap_or_default()))
                .arg(s)
                .spawn()
                .map_err(|e| format!("{cc}: {e}"))?;
            children.push((s, child));
        }
        let mut failed = Vec::new();
        for (s, mut child) in children {
            if !child.wait().map_err(|e| format!("{cc}: {e}"))?.success() {
                failed.push(s.display().to_string());
            }
        }
        if !failed.is_empty() {
            return Err(format!("{cc} failed on {}", failed.join(", ")));
        }
    }
    Ok(())
}

/// The directories of vm/test-modules/ that hold a Kbuild or Makefile.
pub fn module_dirs() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("vm/test-modules");
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Kbuild").exists() || p.join("Makefile").exists())
        .collect();
    v.sort();
    Ok(v)
}

/// Builds the out-of-tree module in `src` against `k` (in a copy under
/// `work`, so the source tree stays clean) and returns its .ko files.
pub fn build_module(k: &Kernel, src: &Path, work: &Path) -> Result<Vec<PathBuf>, String> {
    let name = src.file_name().unwrap_or_default();
    let dst = work.join(name);
    if dst.exists() {
        fs::remove_dir_all(&dst).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&dst).map_err(|e| e.to_string())?;
    let st = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(&dst)
        .status()
        .map_err(|e| e.to_string())?;
    if !st.success() {
        return Err(format!("copying {} failed", src.display()));
    }
    let log = kernel::make_module(&k.build, k.arch, &dst)
        .map_err(|log| format!("building module {}:\n{log}", src.display()))?;
    if log.contains("warning:") {
        eprint!("{log}");
        return Err(format!("module {} built with warnings", src.display()));
    }
    let mut kos: Vec<PathBuf> = fs::read_dir(&dst)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ko"))
        .collect();
    kos.sort();
    eprintln!(
        "[vm]   {}: {}",
        name.to_string_lossy(),
        kos.iter()
            .map(|p| p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(kos)
}

/// Packs `stage` (already holding bin/ and lib/modules/sp/) plus busybox,
/// /init, the tests in `tests` (file names in [`SUITES_DIR`]) and the
/// kernel's modules into a gzip'd newc cpio at `out`.
pub fn build_initramfs(
    k: &Kernel,
    stage: &Path,
    tests: &[String],
    out: &Path,
) -> Result<PathBuf, String> {
    for d in [
        "dev", "proc", "sys", "tmp", "etc", "tests", "sbin", "usr/bin", "root",
    ] {
        fs::create_dir_all(stage.join(d)).map_err(|e| e.to_string())?;
    }
    let busybox = match k.arch {
        Arch::X86_64 => PathBuf::from("/bin/busybox"),
        Arch::Arm64 => crate::packages::arm64_busybox(false)?,
    };
    copy(&busybox, &stage.join("bin/busybox"))?;
    copy(&root().join(GUEST_DIR).join("init.sh"), &stage.join("init"))?;
    // Shell code several suites share: tests/guest/lib/*.sh -> /lib/sptest/.
    let lib = root().join(GUEST_DIR).join("lib");
    if lib.is_dir() {
        fs::create_dir_all(stage.join("lib/sptest")).map_err(|e| e.to_string())?;
        for e in fs::read_dir(&lib).map_err(|e| format!("{}: {e}", lib.display()))? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.extension().is_some_and(|x| x == "sh") {
                copy(
                    &p,
                    &stage
                        .join("lib/sptest")
                        .join(p.file_name().unwrap_or_default()),
                )?;
            }
        }
    }
    let suites = root().join(SUITES_DIR);
    for t in tests {
        copy(&suites.join(t), &stage.join("tests").join(t))?;
    }
    fs::write(stage.join("etc/sptest.list"), tests.join("\n") + "\n").map_err(|e| e.to_string())?;
    let kmods = k.modroot.join("lib/modules");
    if kmods.exists() {
        let st = Command::new("cp")
            .arg("-a")
            .arg(&kmods)
            .arg(stage.join("lib/"))
            .status()
            .map_err(|e| e.to_string())?;
        if !st.success() {
            return Err("copying kernel modules failed".into());
        }
    }
    let st = Command::new("chmod")
        .args(["-R", "a+rX,u+w"])
        .arg(stage)
        .status()
        .map_err(|e| e.to_string())?;
    if !st.success() {
        return Err("chmod failed".into());
    }
    let _ = Command::new("chmod")
        .arg("755")
        .arg(stage.join("init"))
        .status();
    let script = format!(
        "set -e; cd '{}'; find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1 > '{}'",
        stage.display(),
        out.display()
    );
    let st = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .status()
        .map_err(|e| e.to_string())?;
    if !st.success() {
        return Err("packing the initramfs failed".into());
    }
    Ok(out.to_path_buf())
}

/// What a boot produced.
pub struct BootResult {
    /// Lines the guest wrote to ttyS1 (arm64: hvc0), the test output and SPTEST lines.
    pub console: Vec<String>,
    /// The kernel console (ttyS0; arm64: ttyAMA0).
    pub kernel: Vec<String>,
    pub timed_out: bool,
    pub elapsed: Duration,
}

/// The folder a boot with logs in `out` shares with its guest: virtio-9p, mount tag `sptrace`,
/// mounted at /sptrace by tests/guest/init.sh. The inversion programs write their ftrace
/// captures there (`<tag>.trace`); a serial port under TCG carries about 150 KB/s, and the
/// demo's captures are 16 MB.
pub fn share_dir(out: &Path) -> PathBuf {
    out.join("share")
}

/// Boots `k` with `initrd` under QEMU TCG (2 vCPUs, 1 GiB) and kills QEMU
/// after `timeout`. The kernel console (ttyS0) goes to `out`/kernel.log, the
/// guest's test output (ttyS1) is streamed into `out`/guest.log; the progress lines it
/// prints start `[vm <out's name> <seconds>s]`.
pub fn boot(
    k: &Kernel,
    machine: &Machine,
    initrd: &Path,
    extra_cmdline: &str,
    timeout: Duration,
    out: &Path,
    verbose: bool,
) -> Result<BootResult, String> {
    // Boots may run side by side: each progress line names its log directory under target/vm
    // (the group, after the architecture's folder for one other than x86_64: arm64/sp-overhead).
    let tag = out
        .strip_prefix(out_dir())
        .ok()
        .filter(|rel| rel.components().count() > 0)
        .or_else(|| out.file_name().map(Path::new))
        .map(|n| format!(" {}", n.display()))
        .unwrap_or_default();
    let klog = out.join("kernel.log");
    let log = &out.join("guest.log");
    let _ = fs::remove_file(&klog);
    // Empty, so that the captures in it after the boot are this boot's.
    let share = share_dir(out);
    let _ = fs::remove_dir_all(&share);
    fs::create_dir_all(&share).map_err(|e| format!("{}: {e}", share.display()))?;
    let mut qemu = qemu_command(
        k.arch,
        machine,
        &k.bzimage,
        initrd,
        extra_cmdline,
        &klog,
        &share,
    );
    if k.arch == Arch::Arm64 {
        qemu.arg("-dtb").arg(arm64_dtb(machine, out)?);
    }
    let mut child = qemu
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{:?}: {e}", qemu.get_program()))?;
    let t0 = Instant::now();
    let (tx, rx) = mpsc::channel::<String>();
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let tx2 = tx.clone();
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(out).split(b'\n').map_while(Result::ok) {
            let s = String::from_utf8_lossy(&l)
                .trim_end_matches('\r')
                .to_string();
            if tx.send(s).is_err() {
                break;
            }
        }
    });
    let ereader = std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if tx2.send(format!("[qemu] {l}")).is_err() {
                break;
            }
        }
    });
    let mut logf = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut console = Vec::new();
    let mut timed_out = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let _ = writeln!(logf, "{line}");
                if verbose || show_line(&line) {
                    eprintln!("[vm{tag} {:>5.1}s] {line}", t0.elapsed().as_secs_f64());
                }
                console.push(line);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if t0.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            let _ = writeln!(
                logf,
                "[xtask] timeout after {}s: QEMU killed",
                timeout.as_secs()
            );
            eprintln!(
                "[vm{tag}] timeout after {}s: QEMU killed",
                timeout.as_secs()
            );
            break;
        }
    }
    let _ = child.wait();
    let _ = reader.join();
    let _ = ereader.join();
    while let Ok(line) = rx.try_recv() {
        let _ = writeln!(logf, "{line}");
        console.push(line);
    }
    let kbytes = fs::read(&klog).unwrap_or_default();
    let kernel: Vec<String> = String::from_utf8_lossy(&kbytes)
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect();
    Ok(BootResult {
        console,
        kernel,
        timed_out,
        elapsed: t0.elapsed(),
    })
}

/// The QEMU command line of a boot. x86_64: two 8250 ports, ttyS0 (kernel console, to `klog`)
/// and ttyS1 (test output, stdout). arm64: the virt machine's one PL011 is the kernel console
/// (ttyAMA0, to `klog`) and a virtio console on PCI (hvc0, stdout) carries the test output;
/// `-cpu max` with the implementation-defined pointer-auth algorithm, which TCG runs much faster
/// than the architected QARMA. Both share the folder `share` with the guest (virtio-9p, mount
/// tag `sptrace`; see [`share_dir`]).
pub fn qemu_command(
    arch: Arch,
    machine: &Machine,
    image: &Path,
    initrd: &Path,
    extra_cmdline: &str,
    klog: &Path,
    share: &Path,
) -> Command {
    let console = match arch {
        Arch::X86_64 => "ttyS0",
        Arch::Arm64 => "ttyAMA0",
    };
    let append =
        format!("console={console} panic=-1 oops=panic loglevel=7 printk.time=1 {extra_cmdline}");
    let mut qemu = match arch {
        Arch::X86_64 => Command::new("qemu-system-x86_64"),
        Arch::Arm64 => {
            let mut c = Command::new("qemu-system-aarch64");
            c.args(["-M", "virt", "-cpu", "max,pauth-impdef=on"]);
            c
        }
    };
    qemu.args(["-accel", "tcg", "-smp"])
        .arg(machine.cpus.to_string())
        .args(["-m", "1024"]);
    if machine.icount {
        // sleep=on (QEMU's default): while every vCPU idles, virtual time runs with real
        // time, as a guest's timers expect; sleep=off would jump to the next timer instead.
        qemu.args(["-icount", "shift=0,sleep=on"]);
    }
    qemu.arg("-kernel")
        .arg(image)
        .arg("-initrd")
        .arg(initrd)
        .arg("-append")
        .arg(&append)
        .args(["-nographic", "-no-reboot", "-nodefaults", "-serial"])
        .arg(format!("file:{}", klog.display()))
        .arg("-fsdev")
        // QEMU's option syntax: a comma in a value is written twice.
        .arg(format!(
            "local,id=sptrace,security_model=none,path={}",
            share.display().to_string().replace(',', ",,")
        ))
        .args(["-device", "virtio-9p-pci,fsdev=sptrace,mount_tag=sptrace"]);
    match arch {
        Arch::X86_64 => {
            qemu.args(["-serial", "stdio"]);
        }
        Arch::Arm64 => {
            qemu.args([
                "-device",
                "virtio-serial-pci",
                "-chardev",
                "stdio,id=sptest",
                "-device",
                "virtconsole,chardev=sptest",
            ]);
        }
    }
    qemu
}

/// The capacity (`capacity-dmips-mhz`) of CPU `cpu` in the arm64 guest's device tree: CPU 0 is
/// the big core, the others are little cores of half its capacity, as a phone's device tree
/// makes them (`arch_scale_cpu_capacity()` 1024 and 512 once the kernel normalizes them).
pub fn arm64_capacity(cpu: u32) -> u32 {
    if cpu == 0 {
        1024
    } else {
        512
    }
}

/// `dts` (QEMU's virt device tree, decompiled) with a `capacity-dmips-mhz` in every `cpu@N`
/// node, from [`arm64_capacity`]. The kernel ignores the property unless every CPU has it.
pub fn with_capacities(dts: &str) -> Result<String, String> {
    let mut out = String::with_capacity(dts.len() + 256);
    let mut cpus = 0;
    for line in dts.lines() {
        out.push_str(line);
        out.push('\n');
        let t = line.trim();
        if let Some(n) = t.strip_prefix("cpu@").and_then(|r| r.strip_suffix(" {")) {
            let cpu = u32::from_str_radix(n, 16).map_err(|e| format!("cpu node {t:?}: {e}"))?;
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(&format!(
                "{indent}\tcapacity-dmips-mhz = <{}>;\n",
                arm64_capacity(cpu)
            ));
            cpus += 1;
        }
    }
    if cpus == 0 {
        return Err("QEMU's device tree has no cpu@N node".into());
    }
    Ok(out)
}

/// The device tree the arm64 guest boots with, in `out`: QEMU's own for this machine (dumped
/// with `-M virt,dumpdtb=`) with asymmetric CPU capacities ([`with_capacities`]), so that
/// placement and misfit run against real `arch_scale_cpu_capacity()` values.
fn arm64_dtb(machine: &Machine, out: &Path) -> Result<PathBuf, String> {
    let run = |c: &mut Command, what: &str| -> Result<Vec<u8>, String> {
        let o = c
            .output()
            .map_err(|e| format!("{what}: {e} (cargo xtask doctor lists the arm64 packages)"))?;
        if !o.status.success() {
            return Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(o.stdout)
    };
    let virt = out.join("virt.dtb");
    let dtb = out.join("guest.dtb");
    let _ = fs::remove_file(&virt);
    run(
        Command::new("qemu-system-aarch64")
            .arg("-M")
            .arg(format!("virt,dumpdtb={}", virt.display()))
            .args(["-cpu", "max,pauth-impdef=on", "-accel", "tcg", "-smp"])
            .arg(machine.cpus.to_string())
            .args(["-m", "1024", "-nographic", "-nodefaults"]),
        "qemu-system-aarch64 dumpdtb",
    )?;
    let dts = run(
        Command::new("dtc")
            .args(["-q", "-I", "dtb", "-O", "dts"])
            .arg(&virt),
        "dtc -I dtb",
    )?;
    let dts = with_capacities(&String::from_utf8_lossy(&dts))?;
    let src = out.join("guest.dts");
    fs::write(&src, dts).map_err(|e| format!("{}: {e}", src.display()))?;
    run(
        Command::new("dtc")
            .args(["-q", "-I", "dts", "-O", "dtb", "-o"])
            .arg(&dtb)
            .arg(&src),
        "dtc -O dtb",
    )?;
    Ok(dtb)
}

fn show_line(l: &str) -> bool {
    ["SPGUEST", "SPRUN", "SPTEST", "[qemu]"]
        .iter()
        .any(|p| l.starts_with(p))
}

/// The per-test results of one run.
pub struct Report {
    pub results: Vec<Value>,
}

impl Report {
    /// Adds the results of one boot: its SPTEST lines, a failed entry for
    /// every expected test without a result, and an entry `log_name` for the
    /// kernel-log scan.
    pub fn add_boot(&mut self, b: &BootResult, expected: &[String], log_name: &str) {
        let results = &mut self.results;
        for l in &b.console {
            let Some(i) = l.find("SPTEST {") else {
                continue;
            };
            let text = &l[i + "SPTEST ".len()..];
            match serde_json::from_str::<Value>(text) {
                Ok(mut v) if v.get("name").is_some_and(Value::is_string) => {
                    if v["status"] == "fail" {
                        note_fail_lines(&mut v, &b.console);
                    }
                    results.push(v)
                }
                _ => results.push(json!({
                    "name": "unparsable-result",
                    "status": "fail",
                    "duration_ms": 0,
                    "metrics": {"line": l},
                })),
            }
        }
        for name in expected {
            if !results.iter().any(|r| r["name"] == name.as_str()) {
                let why = if b.timed_out {
                    "no result: VM timed out"
                } else {
                    "no result: guest crashed or stopped early"
                };
                results.push(json!({"name": name, "status": "fail", "duration_ms": 0,
                                    "metrics": {"error": why}}));
            }
        }
        let bad: Vec<&String> = b
            .kernel
            .iter()
            .filter(|l| BAD_PATTERNS.iter().any(|p| l.contains(p)))
            .collect();
        let done = b.console.iter().any(|l| l.starts_with("SPGUEST done"));
        let booted = b.console.iter().find(|l| l.starts_with("SPGUEST boot"));
        let mut metrics = json!({
            "bad_lines": bad.len(),
            "vm_seconds": (b.elapsed.as_secs_f64() * 10.0).round() / 10.0,
            "guest_finished": done,
        });
        if let Some(first) = bad.first() {
            metrics["first_bad_line"] = json!(first);
        }
        if let Some(bl) = booted {
            metrics["boot"] = json!(bl.trim_start_matches("SPGUEST boot "));
            // The guest's own word for its architecture (uname -m): aarch64 or x86_64.
            if let Some(arch) = bl.split(' ').find_map(|w| w.strip_prefix("arch=")) {
                metrics["arch"] = json!(arch);
            }
        }
        metrics["kernel_log_lines"] = json!(b.kernel.len());
        let ok = bad.is_empty() && done && !b.timed_out && !b.kernel.is_empty();
        results.push(json!({
            "name": log_name,
            "status": if ok { "pass" } else { "fail" },
            "duration_ms": b.elapsed.as_millis() as u64,
            "metrics": metrics,
        }));
    }

    pub fn failed(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r["status"] != "pass" && r["status"] != "skip")
            .count()
    }

    /// Writes the results as a JSON array, one object per test with its
    /// keys in the order name, status, duration_ms, metrics.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let mut s = String::from("[\n");
        for (i, r) in self.results.iter().enumerate() {
            let metrics = serde_json::to_string_pretty(&r["metrics"]).map_err(|e| e.to_string())?;
            s.push_str(&format!(
                "  {{\"name\": {}, \"status\": {}, \"duration_ms\": {}, \"metrics\": {}}}{}\n",
                r["name"],
                r["status"],
                r["duration_ms"],
                metrics.replace('\n', "\n    "),
                if i + 1 < self.results.len() { "," } else { "" }
            ));
        }
        s.push_str("]\n");
        debug_assert!(serde_json::from_str::<Value>(&s).is_ok());
        fs::write(path, s).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn print_table(&self) {
        println!();
        println!("{:<22} {:<6} {:>10}  details", "test", "status", "ms");
        println!("{}", "-".repeat(78));
        for r in &self.results {
            let name = r["name"].as_str().unwrap_or("?");
            let status = r["status"].as_str().unwrap_or("?");
            let ms = r["duration_ms"].as_u64().unwrap_or(0);
            let details = summarize(&r["metrics"]);
            println!("{name:<22} {status:<6} {ms:>10}  {details}");
        }
        println!("{}", "-".repeat(78));
        let pass = self
            .results
            .iter()
            .filter(|r| r["status"] == "pass")
            .count();
        let skip = self
            .results
            .iter()
            .filter(|r| r["status"] == "skip")
            .count();
        println!(
            "{} passed, {} failed, {} skipped",
            pass,
            self.failed(),
            skip
        );
    }
}

/// Puts a failed test's own "FAIL ..." lines first among its metrics (as
/// `fail`), so that the table CI prints says why it failed.
fn note_fail_lines(v: &mut Value, console: &[String]) {
    let prefix = format!("[{}] FAIL", v["name"].as_str().unwrap_or(""));
    let why: Vec<&str> = console
        .iter()
        .filter_map(|l| l.find(&prefix).map(|i| &l[i + prefix.len() - 4..]))
        .collect();
    if why.is_empty() {
        return;
    }
    let mut m = serde_json::Map::new();
    m.insert("fail".into(), json!(why.join(" | ")));
    if let Some(old) = v["metrics"].as_object() {
        m.extend(old.iter().map(|(k, x)| (k.clone(), x.clone())));
    }
    v["metrics"] = Value::Object(m);
}

fn summarize(m: &Value) -> String {
    let Some(obj) = m.as_object() else {
        return String::new();
    };
    let mut s = String::new();
    for (k, v) in obj {
        let v = match v {
            Value::String(x) => x.clone(),
            other => other.to_string(),
        };
        let item = format!("{k}={v}");
        if k != "fail" && s.len() + item.len() > 200 {
            s.push_str(" ...");
            break;
        }
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&item);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &Command) -> Vec<String> {
        c.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn x86_qemu_command_is_the_one_it_always_was() {
        let m = Machine::default();
        let c = qemu_command(
            Arch::X86_64,
            &m,
            Path::new("/k/bzImage"),
            Path::new("/i.cpio.gz"),
            "sptest.timeout=300",
            Path::new("/o/kernel.log"),
            Path::new("/o/sh,are"),
        );
        assert_eq!(c.get_program(), "qemu-system-x86_64");
        assert_eq!(
            args(&c).join(" "),
            "-accel tcg -smp 2 -m 1024 -kernel /k/bzImage -initrd /i.cpio.gz -append \
             console=ttyS0 panic=-1 oops=panic loglevel=7 printk.time=1 sptest.timeout=300 \
             -nographic -no-reboot -nodefaults -serial file:/o/kernel.log \
             -fsdev local,id=sptrace,security_model=none,path=/o/sh,,are \
             -device virtio-9p-pci,fsdev=sptrace,mount_tag=sptrace -serial stdio"
        );
    }

    #[test]
    fn the_arm64_device_tree_gets_a_big_cpu_and_little_ones() {
        let dts = "/ {\n\tcpus {\n\t\tcpu@0 {\n\t\t\treg = <0x00>;\n\t\t};\n\t\tcpu@1 {\n\t\t\treg = <0x01>;\n\t\t};\n\t};\n};\n";
        let out = with_capacities(dts).unwrap();
        assert!(out.contains("cpu@0 {\n\t\t\tcapacity-dmips-mhz = <1024>;\n"));
        assert!(out.contains("cpu@1 {\n\t\t\tcapacity-dmips-mhz = <512>;\n"));
        assert_eq!(out.matches("capacity-dmips-mhz").count(), 2);
        assert!(with_capacities("/ { };\n").is_err());
    }

    #[test]
    fn arm64_qemu_command_boots_virt_with_a_virtio_results_console() {
        let m = Machine {
            cpus: 2,
            icount: true,
        };
        let c = qemu_command(
            Arch::Arm64,
            &m,
            Path::new("/k/Image"),
            Path::new("/i.cpio.gz"),
            "x=1",
            Path::new("/o/kernel.log"),
            Path::new("/o/share"),
        );
        assert_eq!(c.get_program(), "qemu-system-aarch64");
        let a = args(&c).join(" ");
        for want in [
            "-M virt -cpu max,pauth-impdef=on -accel tcg -smp 2 -m 1024",
            "-icount shift=0,sleep=on",
            "-kernel /k/Image",
            "console=ttyAMA0 panic=-1",
            "-serial file:/o/kernel.log",
            "-device virtio-serial-pci -chardev stdio,id=sptest -device virtconsole,chardev=sptest",
            "-device virtio-9p-pci,fsdev=sptrace,mount_tag=sptrace",
        ] {
            assert!(a.contains(want), "{want:?} not in {a}");
        }
        assert!(!a.contains("-serial stdio"), "{a}");
        assert_eq!(guest_cc(Arch::Arm64), "aarch64-linux-gnu-gcc");
        assert_eq!(guest_cc(Arch::X86_64), "gcc");
    }

    fn boot_result(console: &[&str], kernel: &[&str]) -> BootResult {
        BootResult {
            console: console.iter().map(|s| s.to_string()).collect(),
            kernel: kernel.iter().map(|s| s.to_string()).collect(),
            timed_out: false,
            elapsed: Duration::from_secs(3),
        }
    }

    #[test]
    fn parses_results_and_flags_missing_tests() {
        let b = boot_result(
            &[
                "SPGUEST boot cpus=2 release=6.12 uptime_ms=5 arch=aarch64 capacities=1024,512",
                r#"SPTEST {"name":"a","status":"pass","duration_ms":5,"metrics":{"x":1}}"#,
                "SPGUEST done",
            ],
            &["[    0.000000] Linux version 6.12"],
        );
        let mut r = Report { results: vec![] };
        r.add_boot(&b, &["a".into(), "b".into()], "kernel-log/main");
        assert_eq!(r.results.len(), 3);
        assert_eq!(r.results[2]["metrics"]["arch"], "aarch64");
        assert_eq!(r.results[0]["metrics"]["x"], 1);
        assert_eq!(r.results[1]["name"], "b");
        assert_eq!(r.results[1]["status"], "fail");
        assert_eq!(r.results[2]["name"], "kernel-log/main");
        assert_eq!(r.results[2]["status"], "pass");
        assert_eq!(r.failed(), 1);
    }

    #[test]
    fn a_failed_test_says_why_in_the_table() {
        let b = boot_result(
            &[
                "[t] p99.9 wait: off 1.0 us",
                "[t] FAIL too few waits for a p99.9",
                "[u] FAIL not this test's",
                r#"SPTEST {"name":"t","status":"fail","duration_ms":5,"metrics":{"exit_code":1,"z":"y"}}"#,
                r#"SPTEST {"name":"u","status":"pass","duration_ms":5,"metrics":{}}"#,
                "SPGUEST done",
            ],
            &["ok"],
        );
        let mut r = Report { results: vec![] };
        r.add_boot(&b, &["t".into(), "u".into()], "kernel-log/main");
        assert_eq!(
            r.results[0]["metrics"]["fail"],
            "FAIL too few waits for a p99.9"
        );
        assert_eq!(r.results[0]["metrics"]["z"], "y");
        assert!(r.results[1]["metrics"].get("fail").is_none());
        let long = json!({"a": "x".repeat(190), "fail": "FAIL why", "zz": "x".repeat(50)});
        assert!(summarize(&long).contains("fail=FAIL why"));
    }

    #[test]
    fn results_json_is_an_array_of_tests() {
        let b = boot_result(
            &[
                r#"SPTEST {"name":"a","status":"skip","duration_ms":5,"metrics":{"k":"v \"q\""}}"#,
                "SPGUEST done",
            ],
            &["ok"],
        );
        let mut r = Report { results: vec![] };
        r.add_boot(&b, &["a".into()], "kernel-log/main");
        let path = std::env::temp_dir().join(format!("sp-results-{}.json", std::process::id()));
        r.write(&path).unwrap();
        let v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let _ = fs::remove_file(&path);
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), 2);
        assert_eq!(arr[0]["status"], "skip");
        assert_eq!(arr[0]["metrics"]["k"], "v \"q\"");
        for t in arr {
            for k in ["name", "status", "duration_ms", "metrics"] {
                assert!(t.get(k).is_some(), "{k}");
            }
        }
    }

    #[test]
    fn kernel_warnings_fail_the_run() {
        for bad in [
            "[    1.0] WARNING: CPU: 0 PID: 1 at kernel/foo.c:1 bar",
            "[    1.0] BUG: sleeping function called from invalid context",
            "[    1.0] Oops: general protection fault",
            "[    1.0] WARNING: possible circular locking dependency detected",
        ] {
            let b = boot_result(&["SPGUEST done"], &[bad]);
            let mut r = Report { results: vec![] };
            r.add_boot(&b, &[], "kernel-log/main");
            assert_eq!(r.results[0]["status"], "fail", "{bad}");
        }
    }

    #[test]
    fn unfinished_guest_fails() {
        let b = boot_result(&["SPGUEST boot"], &["[ 0.1] ok"]);
        let mut r = Report { results: vec![] };
        r.add_boot(&b, &[], "kernel-log/main");
        assert_eq!(r.results[0]["status"], "fail");
    }

    #[test]
    fn machine_specs_parse_and_refuse_nonsense() {
        assert_eq!(Machine::parse("").unwrap(), Machine::default());
        assert_eq!(
            Machine::parse("cpus=4 icount").unwrap(),
            Machine {
                cpus: 4,
                icount: true
            }
        );
        assert!(Machine::parse("cpus=0").is_err());
        assert!(Machine::parse("cpus=four").is_err());
        assert!(Machine::parse("kvm").unwrap_err().contains("kvm"));
    }

    #[test]
    fn secs_take_whole_seconds_within_bounds() {
        let secs = |v: &str| parse(&crate::util::strings(&["--secs", v])).map(|o| o.secs);
        assert_eq!(secs("5").unwrap(), Some(5));
        assert_eq!(parse(&[]).unwrap().secs, None);
        for bad in ["0", "121", "2.5", "five", "-1"] {
            assert!(secs(bad).unwrap_err().contains("1 to 120"), "{bad}");
        }
    }

    #[test]
    fn captures_of_superpass_on_modes_are_itemized() {
        for on in [
            "inversion-mutex-on.trace",
            "inversion-sp-chain-on-w1.trace",
            "inversion-sp-owner-change-on_n10-w3.trace",
            "inversion-sp-service-ext-w1.trace",
            "inversion-sp-inversion-mutex-onfifo-w2.trace",
            "inversion-sp-inversion-rwsem-onfifo_n10-w1.trace",
        ] {
            assert!(superpass_on_capture(Path::new(on)), "{on}");
        }
        for off in [
            "inversion-mutex-off.trace",
            "inversion-mutex-fifo.trace",
            "inversion-sp-owner-change-off_n10.trace",
            "inversion-mutex-fifo_n10.trace",
        ] {
            assert!(!superpass_on_capture(Path::new(off)), "{off}");
        }
    }

    #[test]
    fn tests_have_names_and_boot_groups() {
        let all = select_tests(None).unwrap();
        assert!(all.iter().any(|t| t.name == "boot" && t.boot == "main"));
        assert!(all
            .iter()
            .any(|t| t.name == "hooks-fire" && t.boot == "hooktest"));
        let some = select_tests(Some("binderfs")).unwrap();
        assert_eq!(some.len(), 1);
        let names = |f| -> Vec<String> {
            select_tests(Some(f))
                .unwrap()
                .into_iter()
                .map(|t| t.name)
                .collect()
        };
        assert!(
            names("sp-overhead").len() >= 3,
            "the 2-, 4- and 8-vCPU suites"
        );
        assert_eq!(names("=sp-overhead"), ["sp-overhead"]);
        assert_eq!(names("=sp-load,^sp-abi"), ["sp-load", "sp-abi"]);
    }
}
