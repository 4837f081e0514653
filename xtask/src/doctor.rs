//! `cargo xtask doctor`: what this machine still lacks for the two README commands, without
//! installing anything.

use crate::kernel::{self, Arch, Variant};
use crate::packages::{Host, APT_PACKAGES, ARM64_APT_PACKAGES};
use crate::util::wants_help;
use std::path::Path;
use std::process::Command;

const HELP: &str = "usage: cargo xtask doctor

Lists what `cargo xtask demo` and `cargo xtask ci` would install or build on this
machine, and installs nothing:
  - the Debian packages they need (with dpkg's status for each missing one),
    including rust-web-clippy for the module's clippy check;
  - the tools they install into $SUPERPASS_CACHE/tools (bindgen-cli,
    rsbinder-tools, cargo-fuzz);
  - whether the test kernel for the current sources is cached (else the next
    run builds it: ~20 min on 2 cores);
  - optional extras: valgrind (cargo xtask insns), Perfetto's Python
    schema (the trace tests that decode our .pftrace against it), and what
    the arm64 kernel (--arch arm64 of kernel, module and vm-test) adds: its
    Debian packages (QEMU for aarch64, the aarch64 cross gcc and glibc) and
    whether it is cached.

Exits 0 when nothing required is missing, 1 otherwise. To install the Debian
packages yourself, run the apt-get line it prints (as root); `cargo xtask setup
--kernels` installs everything listed and builds both kernels.
";

/// One line of the report.
#[derive(Debug, PartialEq, Eq)]
struct Finding {
    what: String,
    ok: bool,
    required: bool,
    note: String,
}

fn finding(what: impl Into<String>, ok: bool, required: bool, note: impl Into<String>) -> Finding {
    Finding {
        what: what.into(),
        ok,
        required,
        note: note.into(),
    }
}

/// The packages of `wanted` that `host` lacks, each as a finding, plus one for the rest.
fn packages(host: &Host, wanted: &[&str]) -> Vec<Finding> {
    let missing = host.missing(wanted);
    let mut out: Vec<Finding> = missing
        .iter()
        .map(|(p, st)| finding(format!("package {p}"), false, true, format!("dpkg: {st}")))
        .collect();
    out.push(finding(
        format!("{} other Debian packages", wanted.len() - missing.len()),
        true,
        true,
        "installed",
    ));
    out
}

fn tool(name: &str, path: &Path, installer: &str) -> Finding {
    let ok = path.exists();
    let note = if ok {
        path.display().to_string()
    } else {
        format!("installed on first use by {installer}")
    };
    finding(name, ok, true, note)
}

fn report(host: &Host) -> Vec<Finding> {
    let mut wanted: Vec<&str> = APT_PACKAGES.to_vec();
    wanted.push(crate::module::CLIPPY_PACKAGE);
    let mut out = packages(host, &wanted);
    let tools = kernel::tools_dir();
    out.push(tool(
        &format!("bindgen-cli {}", kernel::bindgen_version()),
        &kernel::bindgen_path(),
        "cargo xtask kernel",
    ));
    let rsb = crate::guest_service::RSBINDER_TOOLS_VERSION;
    out.push(tool(
        &format!("rsbinder-tools {rsb}"),
        &tools.join(format!("rsbinder-tools-{rsb}/bin/rsb_hub")),
        "cargo xtask vm-test",
    ));
    out.push(tool(
        &format!("cargo-fuzz {}", crate::ci::CARGO_FUZZ_VERSION),
        &tools.join("bin/cargo-fuzz"),
        "cargo xtask ci",
    ));
    out.push(kernel_finding(
        Arch::X86_64,
        "test kernel",
        true,
        "not cached for these sources: the next run builds it (~20 min on 2 cores)",
    ));
    out.extend(arm64(host));
    let has = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
    out.push(finding(
        "valgrind",
        has(Command::new("valgrind").arg("--version")),
        false,
        "for cargo xtask insns",
    ));
    out.push(finding(
        "python3 perfetto",
        has(Command::new("python3").args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])),
        false,
        "installed by cargo xtask ci (pip) for the trace schema checks",
    ));
    out
}

/// The arm64 extras: optional, since the README commands build and boot x86_64 only.
fn arm64(host: &Host) -> Vec<Finding> {
    let mut out: Vec<Finding> = host
        .missing(ARM64_APT_PACKAGES)
        .into_iter()
        .map(|(p, st)| {
            finding(
                format!("package {p}"),
                false,
                false,
                format!("for --arch arm64; dpkg: {st}"),
            )
        })
        .collect();
    if out.is_empty() {
        out.push(finding(
            format!("{} arm64 Debian packages", ARM64_APT_PACKAGES.len()),
            true,
            false,
            format!("installed ({})", ARM64_APT_PACKAGES.join(" ")),
        ));
    }
    out.push(kernel_finding(
        Arch::Arm64,
        "arm64 test kernel",
        false,
        "not cached: cargo xtask kernel --arch arm64 builds it",
    ));
    out
}

/// Whether `arch`'s default test kernel is cached for the current sources; `missing` says
/// what happens when it is not.
fn kernel_finding(arch: Arch, name: &str, required: bool, missing: &str) -> Finding {
    match kernel::cached(arch, Variant::Default) {
        Ok(Some(dir)) => finding(name, true, required, dir.display().to_string()),
        Ok(None) => finding(name, false, required, missing),
        Err(e) => finding(name, false, required, format!("cannot tell yet: {e}")),
    }
}

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    if let Some(a) = args.first() {
        return Err(format!("unknown option `{a}`\n\n{HELP}"));
    }
    let findings = report(&Host::default());
    for f in &findings {
        let mark = match (f.ok, f.required) {
            (true, _) => "ok     ",
            (false, true) => "MISSING",
            (false, false) => "absent ",
        };
        println!("{mark}  {:<34} {}", f.what, f.note);
    }
    for (required, what) in [(true, "the packages"), (false, "the arm64 packages")] {
        let pkgs: Vec<&str> = findings
            .iter()
            .filter(|f| !f.ok && f.required == required)
            .filter_map(|f| f.what.strip_prefix("package "))
            .collect();
        if !pkgs.is_empty() {
            println!(
                "\nto install {what}: sudo apt-get install -y --no-install-recommends {}",
                pkgs.join(" ")
            );
        }
    }
    let missing = findings.iter().filter(|f| f.required && !f.ok).count();
    if missing == 0 {
        println!("\nnothing required is missing");
        Ok(())
    } else {
        Err(format!(
            "{missing} required item(s) missing (the README commands install them, or run `cargo xtask setup`)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn missing_packages_are_listed_and_nothing_is_installed() {
        let dir = std::env::temp_dir().join(format!("sp-doctor-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let script = |name: &str, body: &str| {
            let p = dir.join(name);
            fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        };
        script(
            "dpkg-query",
            "case \"$3\" in flex) printf 'unknown ok not-installed';; *) printf 'install ok installed';; esac",
        );
        script("apt-get", &format!("touch {}/apt-ran", dir.display()));
        script("id", "echo 0");
        let mut path = dir.clone().into_os_string();
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let host = Host::with_path(path);
        let f = packages(&host, &["make", "flex", "bison"]);
        assert_eq!(
            f[0],
            finding(
                "package flex",
                false,
                true,
                "dpkg: unknown ok not-installed"
            )
        );
        assert_eq!(f[1].what, "2 other Debian packages");
        assert!(!dir.join("apt-ran").exists(), "doctor must not install");
        // A missing arm64 package is listed, but as optional: x86 runs do not need it.
        let a = arm64(&host);
        assert!(a.iter().all(|f| !f.required), "{a:?}");
        assert!(
            a.iter().any(|f| f.what.starts_with("arm64 test kernel")),
            "{a:?}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
