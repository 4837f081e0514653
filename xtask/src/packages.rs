//! Debian packages the kernel build, the guest programs and QEMU need: which are missing, and
//! installing them.

use crate::kernel::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Debian packages the kernel build, the guest programs and QEMU need.
pub const APT_PACKAGES: &[&str] = &[
    "linux-source-6.12",
    "rustc-web",
    "rust-web-src",
    "clang-19",
    "llvm-19",
    "lld-19",
    "libclang-19-dev",
    "qemu-system-x86",
    "busybox-static",
    "libelf-dev",
    "bc",
    "flex",
    "bison",
    "libssl-dev",
    "cpio",
    "make",
    "gcc",
    "libc6-dev",
    "linux-libc-dev",
    "xz-utils",
    "kmod",
    "patch",
    "gzip",
];

/// Whether a `dpkg-query -W -f='${Status}'` answer means the package's files are on disk.
///
/// The status is three words: want (`install`, `hold`, `deinstall`, `purge`, `unknown`), error
/// flag (`ok` or `reinstreq`) and state. Only the state `installed` with the flag `ok` means a
/// complete install; the want word is only what the admin asked for next (a held or
/// to-be-removed package is still installed). `unknown ok not-installed` (a package dpkg knows
/// of but never installed) also ends in "installed", which is why the words are compared whole.
pub fn status_is_installed(status: &str) -> bool {
    let w: Vec<&str> = status.split_whitespace().collect();
    matches!(w.as_slice(), [_, "ok", "installed"])
}

/// Where the package tools are looked up: the process's own `PATH`, or another one (tests put
/// fake `dpkg-query`, `apt-get` and `id` first on it).
#[derive(Default)]
pub struct Host {
    path: Option<OsString>,
}

impl Host {
    #[cfg(test)]
    pub fn with_path(path: OsString) -> Host {
        Host { path: Some(path) }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        if let Some(p) = &self.path {
            // With PATH set on the command, std also resolves `program` through it.
            c.env("PATH", p);
        }
        c
    }

    fn capture(&self, program: &str, args: &[&str]) -> Option<String> {
        let o = self
            .cmd(program)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    }

    fn is_root(&self) -> bool {
        self.capture("id", &["-u"]).is_some_and(|u| u == "0")
    }

    /// The packages of `wanted` that are not installed, with the status dpkg gave each.
    pub fn missing<'a>(&self, wanted: &[&'a str]) -> Vec<(&'a str, String)> {
        wanted
            .iter()
            .filter_map(|&p| {
                let st = self
                    .capture("dpkg-query", &["-W", "-f=${Status}", p])
                    .unwrap_or_else(|| "unknown to dpkg".into());
                (!status_is_installed(&st)).then_some((p, st))
            })
            .collect()
    }

    fn run(&self, step: &str, program: &str, args: &[&str]) -> Result<(), String> {
        let st = self
            .cmd(program)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(args)
            .status()
            .map_err(|e| format!("{step}: cannot start {program}: {e}"))?;
        if st.success() {
            Ok(())
        } else {
            Err(format!("{step} failed ({st})"))
        }
    }

    /// Installs the missing packages of `wanted` (as root), or says exactly what to run.
    pub fn ensure(&self, wanted: &[&str], quiet: bool) -> Result<(), String> {
        let missing: Vec<&str> = self.missing(wanted).into_iter().map(|(p, _)| p).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let list = missing.join(" ");
        if !self.is_root() {
            return Err(format!(
                "missing Debian packages: {list}\n\
                 not running as root, so they cannot be installed here. Run:\n  \
                 sudo apt-get update && sudo apt-get install -y --no-install-recommends {list}\n\
                 then run this command again."
            ));
        }
        if !quiet {
            eprintln!("[packages] installing Debian packages: {list}");
        }
        let t = Instant::now();
        self.run("apt-get update", "apt-get", &["update", "-q"])?;
        let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
        args.extend(&missing);
        self.run("apt-get install", "apt-get", &args)?;
        let still: Vec<&str> = self.missing(&missing).into_iter().map(|(p, _)| p).collect();
        if !still.is_empty() {
            return Err(format!(
                "apt-get install succeeded but these packages are still not installed: {}",
                still.join(" ")
            ));
        }
        if !quiet {
            eprintln!("[packages] installed in {:.0}s", t.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

/// What building and booting an arm64 kernel needs on top of [`APT_PACKAGES`]: the kernel and
/// the module cross-build with the same clang/ld.lld and rustc (no cross binutils); QEMU's
/// `qemu-system-aarch64` comes in `qemu-system-arm`, and the guest programs are cross-compiled
/// static with Debian's aarch64 gcc and glibc.
pub const ARM64_APT_PACKAGES: &[&str] = &[
    "qemu-system-arm",
    "gcc-aarch64-linux-gnu",
    "libc6-dev-arm64-cross",
    // dtc: the guest's device tree gains asymmetric CPU capacities (vm::arm64_dtb).
    "device-tree-compiler",
];

/// The Debian packages a kernel of `arch` (and the guest tests on it) need.
pub fn apt_packages(arch: Arch) -> Vec<&'static str> {
    let mut v = APT_PACKAGES.to_vec();
    if arch == Arch::Arm64 {
        v.extend_from_slice(ARM64_APT_PACKAGES);
    }
    v
}

/// Installs the missing Debian packages of [`apt_packages`] for `arch` (root) or says exactly
/// what is missing.
pub fn ensure_packages(arch: Arch, quiet: bool) -> Result<(), String> {
    Host::default().ensure(&apt_packages(arch), quiet)
}

/// The Debian package whose aarch64 `/bin/busybox` the arm64 guest runs.
const ARM64_BUSYBOX_PKG: &str = "busybox-static";

/// Whether `path` is an ELF executable for aarch64 (e_machine 183).
pub fn is_aarch64_elf(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| {
        b.len() > 20 && b.starts_with(b"\x7fELF") && u16::from_le_bytes([b[18], b[19]]) == 183
    })
}

/// apt options that make apt-get see only Debian's arm64 packages, with its own lists, cache
/// and an empty dpkg status under `state`: the host's dpkg architectures and apt state stay as
/// they are (adding arm64 with `dpkg --add-architecture` would also make `busybox-static:arm64`
/// replace the host's own busybox-static on install).
fn arm64_apt_options(state: &Path) -> Vec<String> {
    let d = state.display();
    vec![
        "-o".into(),
        "APT::Architecture=arm64".into(),
        "-o".into(),
        "APT::Architectures=arm64".into(),
        "-o".into(),
        format!("Dir::State::Lists={d}/lists"),
        "-o".into(),
        format!("Dir::State::status={d}/status"),
        "-o".into(),
        format!("Dir::Cache={d}/cache"),
        "-o".into(),
        "Dir::Cache::pkgcache=".into(),
        "-o".into(),
        "Dir::Cache::srcpkgcache=".into(),
    ]
}

/// An aarch64 busybox for the arm64 guest's initramfs: Debian's arm64 `busybox-static`,
/// downloaded once with `apt-get download` (through a private arm64-only apt state, see
/// [`arm64_apt_options`]) and extracted into `$SUPERPASS_CACHE/tools/busybox-arm64/`.
pub fn arm64_busybox(quiet: bool) -> Result<PathBuf, String> {
    let dir = crate::kernel::tools_dir().join("busybox-arm64");
    let bin = dir.join("bin/busybox");
    if is_aarch64_elf(&bin) {
        return Ok(bin);
    }
    if !quiet {
        eprintln!(
            "[packages] fetching Debian's arm64 {ARM64_BUSYBOX_PKG} into {}",
            dir.display()
        );
    }
    let state = dir.join("apt");
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["lists/partial", "cache/archives/partial", "deb"] {
        std::fs::create_dir_all(state.join(d)).map_err(|e| format!("{}: {e}", state.display()))?;
    }
    std::fs::write(state.join("status"), "").map_err(|e| e.to_string())?;
    let opts = arm64_apt_options(&state);
    let host = Host::default();
    let mut args: Vec<&str> = opts.iter().map(String::as_str).collect();
    args.extend(["update", "-q"]);
    host.run("apt-get update (arm64 lists)", "apt-get", &args)?;
    let mut args: Vec<&str> = opts.iter().map(String::as_str).collect();
    args.extend(["download", ARM64_BUSYBOX_PKG]);
    let st = host
        .cmd("apt-get")
        .args(&args)
        .current_dir(state.join("deb"))
        .status()
        .map_err(|e| format!("apt-get download: {e}"))?;
    if !st.success() {
        return Err(format!(
            "apt-get download {ARM64_BUSYBOX_PKG} (arm64) failed ({st})"
        ));
    }
    let deb = std::fs::read_dir(state.join("deb"))
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download left no .deb")?;
    host.run(
        "dpkg-deb -x",
        "dpkg-deb",
        &[
            "-x",
            &deb.to_string_lossy(),
            &dir.join("root").to_string_lossy(),
        ],
    )?;
    std::fs::create_dir_all(dir.join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy(dir.join("root/bin/busybox"), &bin)
        .map_err(|e| format!("{}: {e}", dir.join("root/bin/busybox").display()))?;
    // Only the binary is kept; the lists are 26 MB.
    let _ = std::fs::remove_dir_all(&state);
    let _ = std::fs::remove_dir_all(dir.join("root"));
    if !is_aarch64_elf(&bin) {
        return Err(format!("{} is not an aarch64 executable", bin.display()));
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn every_dpkg_status_form_is_classified() {
        let installed = [
            "install ok installed",
            "hold ok installed",
            "deinstall ok installed",
        ];
        let not_installed = [
            "unknown ok not-installed",
            "deinstall ok config-files",
            "purge ok not-installed",
            "install ok half-installed",
            "install ok unpacked",
            "install ok half-configured",
            "install ok triggers-awaited",
            "install ok triggers-pending",
            "install reinstreq half-installed",
            "install reinstreq installed",
            "",
            "unknown to dpkg",
        ];
        for s in installed {
            assert!(status_is_installed(s), "{s:?} should count as installed");
        }
        for s in not_installed {
            assert!(!status_is_installed(s), "{s:?} should count as missing");
        }
    }

    fn script(dir: &Path, name: &str, body: &str) {
        let p = dir.join(name);
        fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A fake host: `flex` is known to dpkg but not installed until the fake apt-get runs.
    fn fake_host(tag: &str, uid: u32) -> (std::path::PathBuf, Host) {
        let dir = std::env::temp_dir().join(format!("sp-pkg-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let d = dir.display();
        script(&dir, "id", &format!("echo {uid}"));
        script(
            &dir,
            "dpkg-query",
            &format!(
                "pkg=\"$3\"\n\
                 if [ \"$pkg\" = flex ] && [ ! -e {d}/flex.done ]; then printf 'unknown ok not-installed'; \
                 elif [ \"$pkg\" = nosuch ]; then echo \"dpkg-query: no packages found matching $pkg\" >&2; exit 1; \
                 else printf 'install ok installed'; fi"
            ),
        );
        script(
            &dir,
            "apt-get",
            &format!(
                "echo \"$@\" >> {d}/apt.log\n\
                 case \"$*\" in *flex*) touch {d}/flex.done;; esac"
            ),
        );
        let mut path = dir.clone().into_os_string();
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let host = Host::with_path(path);
        (dir, host)
    }

    #[test]
    fn a_known_but_not_installed_package_is_installed() {
        let (dir, host) = fake_host("root", 0);
        let missing = host.missing(&["make", "flex", "nosuch"]);
        let names: Vec<&str> = missing.iter().map(|(p, _)| *p).collect();
        assert_eq!(names, ["flex", "nosuch"]);
        assert_eq!(missing[0].1, "unknown ok not-installed");

        host.ensure(&["make", "flex"], true).unwrap();
        let log = fs::read_to_string(dir.join("apt.log")).unwrap();
        assert!(log.contains("update"), "{log}");
        assert!(
            log.lines()
                .any(|l| l.starts_with("install") && l.split(' ').any(|w| w == "flex")),
            "{log}"
        );
        assert!(
            !log.contains("make"),
            "an installed package was reinstalled: {log}"
        );
        // Installed now: a second run does nothing.
        fs::remove_file(dir.join("apt.log")).unwrap();
        host.ensure(&["make", "flex"], true).unwrap();
        assert!(!dir.join("apt.log").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn arm64_adds_its_qemu_and_cross_packages_and_x86_is_unchanged() {
        assert_eq!(apt_packages(Arch::X86_64), APT_PACKAGES);
        let arm = apt_packages(Arch::Arm64);
        assert_eq!(&arm[..APT_PACKAGES.len()], APT_PACKAGES);
        for p in [
            "qemu-system-arm",
            "gcc-aarch64-linux-gnu",
            "libc6-dev-arm64-cross",
            "device-tree-compiler",
        ] {
            assert!(arm.contains(&p), "{p} missing from {arm:?}");
            assert!(
                !APT_PACKAGES.contains(&p),
                "{p} would be installed for x86 too"
            );
        }
        let mut dedup = arm.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), arm.len(), "a package is listed twice: {arm:?}");
    }

    #[test]
    fn arm64_installs_only_its_missing_extras() {
        // On a host with everything but the arm64 extras, an x86 run installs nothing and an
        // arm64 run installs exactly the extras.
        let (dir, host) = fake_host("arm64", 0);
        let d = dir.display();
        script(
            &dir,
            "dpkg-query",
            &format!(
                "pkg=\"$3\"\n\
                 case \"$pkg\" in qemu-system-arm|gcc-aarch64-linux-gnu|libc6-dev-arm64-cross|device-tree-compiler) \
                   if [ -e {d}/arm.done ]; then printf 'install ok installed'; \
                   else printf 'unknown ok not-installed'; fi;; \
                 *) printf 'install ok installed';; esac"
            ),
        );
        script(
            &dir,
            "apt-get",
            &format!(
                "echo \"$@\" >> {d}/apt.log\ncase \"$*\" in install*) touch {d}/arm.done;; esac"
            ),
        );
        host.ensure(&apt_packages(Arch::X86_64), true).unwrap();
        assert!(!dir.join("apt.log").exists(), "x86 installed something");
        host.ensure(&apt_packages(Arch::Arm64), true).unwrap();
        let log = fs::read_to_string(dir.join("apt.log")).unwrap();
        let install = log.lines().find(|l| l.starts_with("install")).unwrap();
        let pkgs: Vec<&str> = install
            .split(' ')
            .filter(|w| !w.starts_with('-') && *w != "install")
            .collect();
        assert_eq!(pkgs, ARM64_APT_PACKAGES, "{log}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// Downloads for real (Debian's archive): `cargo test -p xtask -- --ignored arm64_busybox`.
    #[test]
    #[ignore]
    fn arm64_busybox_is_fetched_and_is_aarch64() {
        let bin = arm64_busybox(false).unwrap();
        assert!(is_aarch64_elf(&bin), "{}", bin.display());
    }

    #[test]
    fn aarch64_elf_is_told_from_others() {
        let dir = std::env::temp_dir().join(format!("sp-elf-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut hdr = vec![0u8; 64];
        hdr[..4].copy_from_slice(b"\x7fELF");
        hdr[18] = 183;
        fs::write(dir.join("arm"), &hdr).unwrap();
        hdr[18] = 62;
        fs::write(dir.join("x86"), &hdr).unwrap();
        assert!(is_aarch64_elf(&dir.join("arm")));
        assert!(!is_aarch64_elf(&dir.join("x86")));
        assert!(!is_aarch64_elf(&dir.join("none")));
        assert!(!is_aarch64_elf(Path::new("/bin/sh")) || cfg!(target_arch = "aarch64"));
        let o = arm64_apt_options(Path::new("/s")).join(" ");
        assert!(o.contains("APT::Architectures=arm64"), "{o}");
        assert!(o.contains("Dir::State::status=/s/status"), "{o}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_package_apt_did_not_install_is_an_error() {
        let (dir, host) = fake_host("stuck", 0);
        let err = host.ensure(&["nosuch"], true).unwrap_err();
        assert!(err.contains("still not installed: nosuch"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_root_the_error_names_the_command_to_run() {
        let (dir, host) = fake_host("user", 1000);
        let err = host.ensure(&["flex", "make"], true).unwrap_err();
        assert!(err.contains("missing Debian packages: flex\n"), "{err}");
        assert!(
            err.contains("sudo apt-get install -y --no-install-recommends flex"),
            "{err}"
        );
        assert!(!dir.join("apt.log").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
