//! Debian packages the kernel build, the guest programs and QEMU need: which are missing, and
//! installing them.

use std::ffi::OsString;
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

/// Installs the missing Debian packages of [`APT_PACKAGES`] (root) or says exactly what is
/// missing.
pub fn ensure_packages(quiet: bool) -> Result<(), String> {
    Host::default().ensure(APT_PACKAGES, quiet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

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
