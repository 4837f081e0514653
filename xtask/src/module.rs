//! `cargo xtask module`: builds `superpass.ko` (module/) against the cached test kernel.
//!
//! The module's Rust crate includes superpass-core by path (`../core/src/lib.rs`), so the build
//! runs in a staging copy that keeps that layout: `target/module/build/{module,core/src}`.
//! [`build`] is also used by `vm-test` (which puts the .ko into the initramfs) and `demo`.
//! [`save_traces`] gathers the captures the inversion tests write to the boot's shared folder
//! (or print as `SPTRACE <tag> <line>` lines) into `target/vm/inversion-<tag>.trace` files for
//! superpass-trace.

use crate::kernel::{self, Arch, Kernel, Variant};
use crate::util::{root, wants_help};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const HELP: &str =
    "usage: cargo xtask module [--arch x86_64|arm64] [--variant default|kasan] [--clippy]

Builds superpass.ko (module/: Rust crate root superpass_main.rs + superpass-core by
path + the C companion) against the cached test kernel (cargo xtask kernel; built
first if needed) and copies it to target/module/superpass.ko.

  --arch arm64  build against the arm64 kernel (cargo xtask kernel --arch arm64)
                into target/module/arm64/superpass.ko, and the test modules
                (vm/test-modules/) into target/module/arm64/test-modules/

  --clippy   instead, build it with the kernel's `make CLIPPY=1` (clippy-driver
             from Debian's rust-web-clippy, the kernel's own lint set) in
             target/module/clippy/ and fail on any warning, listing each
             finding as <file>:<line>:<col>: <message> [lint]

By hand, against any CONFIG_RUST kernel build tree (same toolchain as the kernel):
  make -C module KDIR=<kernel build dir> LLVM=-19
";

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut variant = Variant::Default;
    let mut arch = Arch::X86_64;
    let mut clippy = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--variant" => variant = Variant::parse(it.next().ok_or("--variant needs a value")?)?,
            "--arch" => arch = Arch::parse(it.next().ok_or("--arch needs a value")?)?,
            "--clippy" => clippy = true,
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    let k = kernel::ensure(&kernel::Opts {
        arch,
        variant,
        ..Default::default()
    })?;
    if clippy {
        return run_clippy(&k);
    }
    let ko = build(&k)?;
    println!("{}", ko.display());
    if arch == Arch::Arm64 {
        // The x86 test modules are built by vm-test; for arm64 this is their first check.
        let work = out_dir(arch).join("test-modules");
        for m in crate::vm::module_dirs()? {
            for t in crate::vm::build_module(&k, &m, &work)? {
                println!("{}", t.display());
            }
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let st = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .map_err(|e| e.to_string())?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("copying {} failed", from.display()))
    }
}

/// Copies module/ and core/src/ into `stage` (emptied first) with the layout the crate's
/// `#[path]` include expects; returns the staged module directory.
fn stage_sources(stage: &Path) -> Result<PathBuf, String> {
    if stage.exists() {
        fs::remove_dir_all(stage).map_err(|e| e.to_string())?;
    }
    let mdir = stage.join("module");
    copy_dir(&root().join("module"), &mdir)?;
    copy_dir(&root().join("core/src"), &stage.join("core/src"))?;
    // Objects from a by-hand `make -C module` must not leak into the staged build.
    let _ = Command::new("sh")
        .arg("-c")
        .arg("rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers *.d")
        .current_dir(&mdir)
        .status();
    Ok(mdir)
}

/// Where the module of `arch` is built: target/module (x86_64) or target/module/arm64.
pub fn out_dir(arch: Arch) -> PathBuf {
    let out = root().join("target/module");
    match arch {
        Arch::X86_64 => out,
        Arch::Arm64 => out.join("arm64"),
    }
}

/// Builds superpass.ko against `k`; returns target/module/superpass.ko (arm64:
/// target/module/arm64/superpass.ko).
pub fn build(k: &Kernel) -> Result<PathBuf, String> {
    let out = out_dir(k.arch);
    let mdir = stage_sources(&out.join("build"))?;
    let log = kernel::make_module(&k.build, k.arch, &mdir)
        .map_err(|log| format!("building superpass.ko failed:\n{log}"))?;
    // objtool in 6.12 recognises Rust's panic functions by name, and Debian's newer rustc
    // renamed some (e.g. `copy_from_slice` -> `len_mismatch_fail`), so it reports "falls
    // through to next function" for Rust functions that end in a panic call. Those are
    // known and harmless (docs/module.md); any other warning fails the build.
    let bad: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("warning:"))
        .filter(|l| !(l.contains("objtool: _R") && l.contains("falls through to next function")))
        .collect();
    if !bad.is_empty() {
        eprint!("{log}");
        return Err(format!(
            "superpass.ko built with warnings:\n{}",
            bad.join("\n")
        ));
    }
    let ko = out.join("superpass.ko");
    fs::copy(mdir.join("superpass.ko"), &ko).map_err(|e| format!("superpass.ko: {e}"))?;
    eprintln!("[module] {}", ko.display());
    Ok(ko)
}

/// The Debian package with the clippy-driver that matches the kernel's rustc (`/usr/bin/rustc`).
pub const CLIPPY_PACKAGE: &str = "rust-web-clippy";
const CLIPPY_DRIVER: &str = "/usr/bin/clippy-driver";

/// Builds superpass.ko against `k` with `make CLIPPY=1`: Kbuild then compiles the Rust crate
/// with clippy-driver and the kernel's own lint flags (`-Wclippy::all` and a few more, all
/// warnings, not errors, in 6.12), so any warning in the output fails this check.
pub fn run_clippy(k: &Kernel) -> Result<(), String> {
    crate::packages::Host::default().ensure(&[CLIPPY_PACKAGE], false)?;
    let stage = out_dir(k.arch).join("clippy");
    let mdir = stage_sources(&stage)?;
    let logf = mdir.join("build.log");
    let f = fs::File::create(&logf).map_err(|e| e.to_string())?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    let t = std::time::Instant::now();
    let st = kernel::make(&k.build, k.arch)
        // `cargo xtask` runs with Cargo's CARGO_PKG_* variables of the xtask package, and
        // clippy-driver would take xtask's rust-version for the module's MSRV; the kernel's
        // .clippy.toml (its CLIPPY_CONF_DIR) is what applies.
        .env_remove("CARGO_PKG_RUST_VERSION")
        .arg(format!("M={}", mdir.display()))
        .arg("CLIPPY=1")
        .arg(format!("CLIPPY_DRIVER={CLIPPY_DRIVER}"))
        .arg("modules")
        .stdout(f)
        .stderr(f2)
        .status()
        .map_err(|e| format!("make: {e}"))?;
    let log = fs::read_to_string(&logf).unwrap_or_default();
    if !st.success() {
        eprint!("{log}");
        return Err(format!(
            "make CLIPPY=1 failed ({st}); log: {}",
            logf.display()
        ));
    }
    // Proof that clippy ran: Kbuild prints `CLIPPY` instead of `RUSTC` for a clippy build.
    if !log.lines().any(|l| l.trim_start().starts_with("CLIPPY")) {
        eprint!("{log}");
        return Err("make CLIPPY=1 did not run clippy-driver on the module".into());
    }
    let findings = warnings(&log, &stage);
    if findings.is_empty() {
        eprintln!(
            "[module] clippy: no warnings ({:.0}s)",
            t.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    eprint!("{log}");
    Err(format!(
        "clippy found {} warning(s) in superpass.ko (log: {}):\n  {}",
        findings.len(),
        logf.display(),
        findings.join("\n  ")
    ))
}

/// The warnings of a Kbuild log, one line each: `<file>:<line>:<col>: <message> [lint]` for a
/// compiler or clippy diagnostic (paths under the staging directory `stage` are shown relative
/// to it, i.e. as `module/...` or `core/src/...`), the line itself for anything else.
/// objtool's known "falls through" reports for Rust panic paths (see [`build`]) and rustc's
/// "N warnings emitted" summaries are not findings.
fn warnings(log: &str, stage: &Path) -> Vec<String> {
    let lines: Vec<&str> = log.lines().collect();
    let prefix = format!("{}/", stage.display());
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(msg) = l.strip_prefix("warning: ") else {
            if l.contains("warning:")
                && !(l.contains("objtool: _R") && l.contains("falls through to next function"))
            {
                out.push(l.trim().to_string());
            }
            continue;
        };
        if msg.ends_with("warning emitted") || msg.ends_with("warnings emitted") {
            continue;
        }
        // The diagnostic's body runs to the next blank line.
        let body = lines[i + 1..].iter().take_while(|b| !b.trim().is_empty());
        let mut at = None;
        let mut lint = None;
        for b in body {
            let b = b.trim_start();
            if let Some(loc) = b.strip_prefix("--> ") {
                at.get_or_insert_with(|| {
                    let loc = loc.trim();
                    let loc = loc.strip_prefix(prefix.as_str()).unwrap_or(loc);
                    loc.replace("module/../core/", "core/")
                });
            } else if let Some(u) = b.split("index.html#").nth(1) {
                lint.get_or_insert_with(|| format!("clippy::{}", u.trim()));
            } else if let Some(n) = b.split("`#[warn(").nth(1) {
                lint.get_or_insert_with(|| n.split(")]").next().unwrap_or(n).to_string());
            }
        }
        let mut f = match at {
            Some(at) => format!("{at}: {msg}"),
            None => msg.to_string(),
        };
        if let Some(lint) = lint {
            f.push_str(&format!(" [{lint}]"));
        }
        out.push(f);
    }
    out
}

/// Writes a boot's ftrace captures to `<dir>/inversion-<tag>.trace` (one file per tag): the
/// files `<tag>.trace` the guest wrote to its shared folder `share` ([`crate::vm::share_dir`]),
/// and the `SPTRACE <tag> <ftrace line>` lines of its console, which a guest program prints
/// where no folder is shared. Returns the files written.
pub fn save_traces(console: &[String], share: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut traces: BTreeMap<String, String> = BTreeMap::new();
    for l in console {
        let Some(i) = l.find("SPTRACE ") else {
            continue;
        };
        let rest = &l[i + "SPTRACE ".len()..];
        let Some((tag, line)) = rest.split_once(' ') else {
            continue;
        };
        let t = traces.entry(tag.to_string()).or_default();
        t.push_str(line);
        t.push('\n');
    }
    let mut files = Vec::new();
    for (tag, text) in traces {
        let p = dir.join(format!("inversion-{tag}.trace"));
        if fs::write(&p, text).is_ok() {
            files.push(p);
        }
    }
    let mut shared: Vec<PathBuf> = fs::read_dir(share)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    shared.sort();
    for f in shared {
        let Some(tag) = f.file_stem().map(|t| t.to_string_lossy().into_owned()) else {
            continue;
        };
        let p = dir.join(format!("inversion-{tag}.trace"));
        if fs::rename(&f, &p).is_ok() || fs::copy(&f, &p).is_ok() {
            files.push(p);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clippy_warnings_are_located_and_named() {
        let stage = Path::new("/w/target/module/clippy");
        let log = "\
  CLIPPY [M] /w/target/module/clippy/module/superpass_main.o
warning: this `if` has identical blocks
   --> /w/target/module/clippy/module/superpass_main.rs:10:5
    |
10  |     if a { 1 } else { 1 }
    |
    = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#if_same_then_else
    = note: `-W clippy::if-same-then-else` implied by `-W clippy::all`

warning: unused variable: `x`
  --> /w/target/module/clippy/module/../core/src/abi.rs:3:9
   |
   = note: `#[warn(unused_variables)]` on by default

warning: 2 warnings emitted

vmlinux.o: warning: objtool: _RNvXs_foo() falls through to next function _RNvbar()
superpass.o: warning: objtool: sp_probe_tick() unreachable instruction
";
        assert_eq!(
            warnings(log, stage),
            [
                "module/superpass_main.rs:10:5: this `if` has identical blocks [clippy::if_same_then_else]",
                "core/src/abi.rs:3:9: unused variable: `x` [unused_variables]",
                "superpass.o: warning: objtool: sp_probe_tick() unreachable instruction",
            ]
        );
        assert!(warnings("  CLIPPY [M] x.o\n  LD [M] superpass.ko\n", stage).is_empty());
    }

    #[test]
    fn traces_are_split_by_tag() {
        let dir = std::env::temp_dir().join(format!("sp-traces-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let console: Vec<String> = [
            "[inversion-mutex] SPTRACE mutex-off # tracer: nop",
            "[inversion-mutex] SPTRACE mutex-on  t-1 [000] 1.0: superpass_pick: cpu=0 tid=5",
            "[inversion-mutex] other",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let share = dir.join("share");
        fs::create_dir_all(&share).unwrap();
        fs::write(
            share.join("rwsem-on-w1.trace"),
            "t-2 [001] 2.0: sched_switch\n",
        )
        .unwrap();
        fs::write(share.join("notes.txt"), "not a capture").unwrap();
        let files = save_traces(&console, &share, &dir);
        assert_eq!(files.len(), 3);
        let on = fs::read_to_string(dir.join("inversion-mutex-on.trace")).unwrap();
        assert!(on.contains("superpass_pick"));
        let shared = fs::read_to_string(dir.join("inversion-rwsem-on-w1.trace")).unwrap();
        assert_eq!(shared, "t-2 [001] 2.0: sched_switch\n");
        assert!(
            !share.join("rwsem-on-w1.trace").exists(),
            "moved, not copied"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
