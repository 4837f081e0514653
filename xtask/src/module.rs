//! `cargo xtask module`: builds `superpass.ko` (module/) against the cached test kernel.
//!
//! The module's Rust crate includes superpass-core by path (`../core/src/lib.rs`), so the build
//! runs in a staging copy that keeps that layout: `target/module/build/{module,core/src}`.
//! [`build`] is also used by `vm-test` (which puts the .ko into the initramfs) and `demo`.
//! [`save_traces`] turns the `SPTRACE <tag> <line>` lines the inversion test prints into
//! `target/vm/inversion-<tag>.trace` files for superpass-trace.

use crate::kernel::{self, Kernel, Variant};
use crate::util::{root, wants_help};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const HELP: &str = "usage: cargo xtask module [--variant default|kasan]

Builds superpass.ko (module/: Rust crate root superpass_main.rs + superpass-core by
path + the C companion) against the cached test kernel (cargo xtask kernel; built
first if needed) and copies it to target/module/superpass.ko.

By hand, against any CONFIG_RUST kernel build tree (same toolchain as the kernel):
  make -C module KDIR=<kernel build dir> LLVM=-19
";

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut variant = Variant::Default;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--variant" => variant = Variant::parse(it.next().ok_or("--variant needs a value")?)?,
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    let k = kernel::ensure(&kernel::Opts {
        variant,
        ..Default::default()
    })?;
    let ko = build(&k)?;
    println!("{}", ko.display());
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

/// Builds superpass.ko against `k`; returns target/module/superpass.ko.
pub fn build(k: &Kernel) -> Result<PathBuf, String> {
    let out = root().join("target/module");
    let stage = out.join("build");
    if stage.exists() {
        fs::remove_dir_all(&stage).map_err(|e| e.to_string())?;
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
    let log = kernel::make_module(&k.build, &mdir)
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

/// Writes the `SPTRACE <tag> <ftrace line>` lines of a guest console into
/// `<dir>/inversion-<tag>.trace` (one file per tag); returns the files written.
pub fn save_traces(console: &[String], dir: &Path) -> Vec<PathBuf> {
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
    files
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let files = save_traces(&console, &dir);
        assert_eq!(files.len(), 2);
        let on = fs::read_to_string(dir.join("inversion-mutex-on.trace")).unwrap();
        assert!(on.contains("superpass_pick"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
