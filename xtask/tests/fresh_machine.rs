//! `cargo xtask kernel` on a machine where dpkg knows a needed package but has not installed it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn kernel_installs_a_package_dpkg_reports_as_unknown_ok_not_installed() {
    let dir = std::env::temp_dir().join(format!("sp-fresh-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let d = dir.display();
    script(&dir, "id", "echo 0");
    // flex, bison and cpio as on a fresh Debian 12 image; everything else is installed.
    script(
        &dir,
        "dpkg-query",
        "case \"$3\" in flex|bison|cpio) printf 'unknown ok not-installed';; \
         *) printf 'install ok installed';; esac",
    );
    // The install "fails" after logging, so the task stops before building anything.
    script(
        &dir,
        "apt-get",
        &format!("echo \"$@\" >> {d}/apt.log\ncase \"$1\" in install) exit 100;; esac"),
    );
    let mut path = dir.clone().into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("kernel")
        .env("PATH", &path)
        .env("SUPERPASS_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("apt-get install failed"), "{stderr}");
    let log = fs::read_to_string(dir.join("apt.log")).unwrap_or_default();
    let install = log
        .lines()
        .find(|l| l.starts_with("install"))
        .unwrap_or_else(|| panic!("apt-get install never ran; log: {log:?}; stderr: {stderr}"));
    for p in ["flex", "bison", "cpio"] {
        assert!(
            install.split(' ').any(|w| w == p),
            "{p} not installed: {install}"
        );
    }
    assert!(!install.contains("make"), "{install}");
    let _ = fs::remove_dir_all(&dir);
}
