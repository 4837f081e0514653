//! The HAL service's guest payload: superpass-service, superpassctl, the test helpers
//! `shell-cmd` (a real `cmd` transaction) and `sp-runas` (init's user, group and capabilities),
//! rsb_hub and rsb_device with the shared libraries they link, the rsb_hub policy and the
//! end-to-end script (both in tests/service/).
//!
//! The binaries are the host's own dynamically linked builds (the ones `cargo test` already
//! made), so the VM needs no second, static build: their libraries are copied into the
//! initramfs at the paths the dynamic loader looks for them.

use crate::kernel::tools_dir;
use crate::util::{cargo, root, run, target_dir};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// rsbinder-tools must speak the same binder wire as the rsbinder the service links.
pub const RSBINDER_TOOLS_VERSION: &str = "0.12.0";

/// Puts the service payload into the initramfs staging tree `stage`.
pub fn stage(stage: &Path) -> Result<(), String> {
    run(
        "build superpass-service, superpassctl, shell-cmd, sp-runas",
        cargo().args(["build", "-p", "superpass-service", "--bins", "--examples"]),
    )?;
    let target = target_dir();
    let debug = target.join("debug");
    let ours = [
        debug.join("superpass-service"),
        debug.join("superpassctl"),
        debug.join("examples").join("shell-cmd"),
        debug.join("examples").join("sp-runas"),
    ];
    let theirs = ensure_rsbinder_tools()?;
    let bin = stage.join("bin");
    let mut libs = BTreeSet::new();
    for b in ours.iter().chain(theirs.iter()) {
        let name = b.file_name().unwrap_or_default();
        // Debug info would make the initramfs ~10x larger for nothing the guest reads.
        let st = Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(bin.join(name))
            .arg(b)
            .status()
            .map_err(|e| format!("strip: {e}"))?;
        if !st.success() {
            return Err(format!("strip {} failed", b.display()));
        }
        libs.extend(shared_libs(b)?);
    }
    for l in &libs {
        let dest = stage.join(l.strip_prefix("/").unwrap_or(l));
        fs::create_dir_all(dest.parent().unwrap_or(stage)).map_err(|e| e.to_string())?;
        // Copy the file a symlink names: the loader only needs the path to resolve.
        fs::copy(l, &dest).map_err(|e| format!("copy {}: {e}", l.display()))?;
    }
    let share = stage.join("usr/share/superpass");
    let hub = stage.join("etc/rsbinder/hub.d");
    for d in [&share, &hub] {
        fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let e2e = root().join("tests/service");
    copy(&e2e.join("service-e2e.sh"), &share.join("service-e2e.sh"))?;
    copy(&e2e.join("hub.toml"), &hub.join("10-superpass.toml"))?;
    Ok(())
}

/// rsb_hub and rsb_device from rsbinder-tools, installed into the tools cache once.
pub fn ensure_rsbinder_tools() -> Result<[PathBuf; 2], String> {
    let dir = tools_dir().join(format!("rsbinder-tools-{RSBINDER_TOOLS_VERSION}"));
    let bins = ["rsb_hub", "rsb_device"].map(|b| dir.join("bin").join(b));
    if bins.iter().all(|b| b.exists()) {
        return Ok(bins);
    }
    eprintln!(
        "installing rsbinder-tools {RSBINDER_TOOLS_VERSION} into {} (cargo install, ~3-6 min)",
        dir.display()
    );
    run(
        "cargo install rsbinder-tools",
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "install",
                "rsbinder-tools",
                "--version",
                RSBINDER_TOOLS_VERSION,
            ])
            .args([
                "--locked",
                "--bin",
                "rsb_hub",
                "--bin",
                "rsb_device",
                "--root",
            ])
            .arg(&dir)
            .env_remove("CARGO_TARGET_DIR"),
    )?;
    Ok(bins)
}

/// The shared libraries `bin` loads, as absolute paths (the loader included), from `ldd`.
fn shared_libs(bin: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ldd {} failed: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if let Some(l) = text.lines().find(|l| l.contains("not found")) {
        return Err(format!(
            "{}: a library is missing: {}",
            bin.display(),
            l.trim()
        ));
    }
    Ok(parse_ldd(&text))
}

/// Paths from `ldd` output: `libc.so.6 => /lib/.../libc.so.6 (0x..)` and `/lib64/ld-linux... (0x..)`.
fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, rhs)) => rhs.trim(),
                None => l,
            };
            let path = path.split_whitespace().next()?;
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_gives_the_loader_and_resolved_libraries_only() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f1f)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1e)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f1f7d06a000)\n\
                    \tlibmissing.so => not found\n";
        assert_eq!(
            parse_ldd(text),
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
    }
}
