//! Cross-checks the names that aidl/, Android.bp, the init .rc, the VINTF fragments, ueventd
//! and sepolicy/ must agree on, against each other and against the code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use superpass_service::aidl::consts;
use superpass_service::{DEFAULT_DEVICE, DEFAULT_STATE, SERVICE_NAME};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Lines without `#` comments, trimmed, non-empty.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

fn aidl_files() -> BTreeSet<String> {
    std::fs::read_dir(root().join("aidl/vendor/superpass"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".aidl"))
        .collect()
}

const PACKAGE: &str = "vendor.superpass";
const INSTANCE: &str = "ISuperPass/default";
const EXEC: &str = "/vendor/bin/hw/superpass-service";

#[test]
fn service_name_comes_from_the_aidl() {
    let src = read("aidl/vendor/superpass/ISuperPass.aidl");
    assert!(src.contains(&format!("package {PACKAGE};")));
    assert!(src.contains("@VintfStability"));
    assert!(src.contains("interface ISuperPass {"));
    assert_eq!(SERVICE_NAME, format!("{PACKAGE}.{INSTANCE}"));
    assert!(src.contains(&format!("Service name: {SERVICE_NAME}.")));
    for f in aidl_files() {
        let s = read(&format!("aidl/vendor/superpass/{f}"));
        assert!(s.contains(&format!("package {PACKAGE};")), "{f}");
        assert!(s.contains("@VintfStability"), "{f} must be VINTF-stable");
    }
}

#[test]
fn android_bp_names_the_same_files_and_version() {
    let aidl_bp = read("aidl/Android.bp");
    assert!(aidl_bp.contains(&format!("name: \"{PACKAGE}\"")));
    assert!(aidl_bp.contains("stability: \"vintf\""));
    assert!(aidl_bp.contains("local_include_dir: \".\""));
    let srcs: BTreeSet<String> = aidl_bp
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"vendor/superpass/"))
        .map(|l| l.trim_end_matches(['"', ',']).to_string())
        .collect();
    assert_eq!(
        srcs,
        aidl_files(),
        "aidl/Android.bp srcs vs aidl/vendor/superpass"
    );
    assert!(aidl_bp.contains(&format!("version: \"{}\"", consts::VERSION)));
    assert!(
        aidl_bp.contains("owner: \""),
        "aidl_interface needs an owner"
    );
    assert!(aidl_bp.contains("SPDX-license-identifier-Apache-2.0"));
    // The prebuilt package comes from build-prebuilts.sh, with every file it names.
    let script = read("service/build-prebuilts.sh");
    assert!(script.contains("name: \"superpass-service\""));
    assert!(script.contains("relative_install_path: \"hw\""));
    assert!(EXEC.ends_with("/hw/superpass-service"));
    for f in ["superpass.rc", "manifest_superpass.xml"] {
        assert!(
            script.contains(&format!("\"{f}\"")),
            "the prebuilt package must name {f}"
        );
        assert!(
            script.contains(&format!(" {f}")),
            "build-prebuilts.sh must copy {f}"
        );
        assert!(root().join("service").join(f).exists(), "{f}");
    }
    let ctl = script
        .split("name: \"superpassctl\"")
        .nth(1)
        .expect("a superpassctl module");
    assert!(
        ctl.contains("system_ext_specific: true"),
        "shell may not run vendor binaries"
    );
    // build.rs compiles every file too.
    let build = read("service/build.rs");
    for f in aidl_files() {
        let stem = f.trim_end_matches(".aidl");
        assert!(
            build.contains(&format!("\"{stem}\"")) || build.contains(&format!("\"{f}\"")),
            "build.rs misses {f}"
        );
    }
}

/// Every quoted path in the repository's Android.bp files exists: they parse in a checkout.
#[test]
fn android_bp_names_only_files_that_exist() {
    for bp in ["Android.bp", "aidl/Android.bp"] {
        let dir = root().join(bp).parent().unwrap().to_path_buf();
        let code: String = read(bp)
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        for quoted in code.split('"').skip(1).step_by(2) {
            let looks_like_file = quoted.contains('/') && !quoted.starts_with(':');
            if looks_like_file && !quoted.contains('*') {
                assert!(
                    dir.join(quoted).exists(),
                    "{bp} names {quoted}, which is missing"
                );
            }
        }
        assert!(
            !code.contains("prebuilt/"),
            "{bp} must not name generated prebuilts"
        );
    }
}

/// AIDL files are Apache-2.0: their stubs are linked into system_server.
#[test]
fn aidl_files_are_apache_licensed() {
    for f in aidl_files() {
        let s = read(&format!("aidl/vendor/superpass/{f}"));
        assert!(
            s.lines()
                .take(3)
                .any(|l| l.contains("SPDX-License-Identifier: Apache-2.0")),
            "{f}"
        );
    }
}

/// The ioctl allow-list is exactly the ABI's commands, as SELinux numbers them.
#[test]
fn ioctl_allow_list_is_the_abi() {
    let te = read("sepolicy/vendor/hal_superpass_default.te");
    let line = te
        .lines()
        .find(|l| l.starts_with("allowxperm hal_superpass_default superpass_device:chr_file ioctl"))
        .expect("an allowxperm line for /dev/superpass");
    let listed: Vec<u32> = line
        .split(['{', '}'])
        .nth(1)
        .unwrap()
        .split_whitespace()
        .map(|n| u32::from_str_radix(n.trim_start_matches("0x"), 16).unwrap())
        .collect();
    let abi: Vec<u32> = superpass_core::abi::COMMANDS
        .iter()
        .map(|&(_, cmd)| cmd & 0xffff)
        .collect();
    assert_eq!(
        listed, abi,
        "sepolicy ioctl list vs superpass_core::abi::COMMANDS"
    );
    for (name, _) in superpass_core::abi::COMMANDS {
        assert!(te.contains(name), "the comment names {name}");
    }
}

#[test]
fn frozen_api_matches_the_sources_and_the_hash() {
    let v1 = format!("aidl/aidl_api/{PACKAGE}/{}", consts::VERSION);
    let hash = read(&format!("{v1}/.hash"));
    assert_eq!(hash.trim(), consts::HASH, "build.rs stamps the frozen hash");
    // Each snapshot is the source without its license header, after AOSP's notice.
    for f in aidl_files() {
        let src = read(&format!("aidl/vendor/superpass/{f}"));
        let body: String = src.lines().skip(3).collect::<Vec<_>>().join("\n");
        let snap = read(&format!("{v1}/vendor/superpass/{f}"));
        assert!(
            snap.trim_end().ends_with(body.trim()),
            "{f} changed since version {}: add a new version (aidl/freeze-api.sh)",
            consts::VERSION
        );
    }
    // AOSP's hash of every frozen version: sha1 of (`sha1sum` of the sorted files, then
    // "latest-version").
    for v in 1..=consts::VERSION {
        let dir = root().join(format!("aidl/aidl_api/{PACKAGE}/{v}"));
        let mut files: Vec<String> = std::fs::read_dir(dir.join("vendor/superpass"))
            .unwrap()
            .map(|e| {
                format!(
                    "./vendor/superpass/{}",
                    e.unwrap().file_name().to_string_lossy()
                )
            })
            .collect();
        files.sort();
        let mut listing = String::new();
        for f in &files {
            let data = std::fs::read(dir.join(f)).unwrap();
            listing.push_str(&format!("{}  {f}\n", sha1_smol::Sha1::from(&data).digest()));
        }
        listing.push_str("latest-version\n");
        let want = std::fs::read_to_string(dir.join(".hash")).unwrap();
        assert_eq!(
            sha1_smol::Sha1::from(listing.as_bytes())
                .digest()
                .to_string(),
            want.trim(),
            "version {v}"
        );
    }
    // The new version adds a oneway method for the framework's foreground changes.
    let iface = read("aidl/vendor/superpass/ISuperPass.aidl");
    assert!(iface.contains("oneway void notifyForegroundApp("));
}

#[test]
fn init_rc_starts_what_android_bp_installs() {
    let rc = read("service/superpass.rc");
    let l = lines(&rc);
    let svc = l
        .iter()
        .find(|l| l.starts_with("service vendor.superpass "))
        .expect("service line");
    assert!(svc.contains(&format!(" {EXEC} ")), "{svc}");
    assert!(svc.contains(&format!("--state {DEFAULT_STATE}")), "{svc}");
    assert!(l.contains(&format!("interface aidl {SERVICE_NAME}")));
    assert!(l.contains(&"class hal".to_string()));
    assert!(l.contains(&"user system".to_string()));
    let state_dir = Path::new(DEFAULT_STATE).parent().unwrap().to_str().unwrap();
    assert!(
        l.iter()
            .any(|x| x.starts_with(&format!("mkdir {state_dir} ")) && x.ends_with("system system")),
        "the .rc creates {state_dir} for user system"
    );
    // Every flag the .rc passes exists in the binary.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_superpass-service"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in svc.split_whitespace().filter(|w| w.starts_with("--")) {
        assert!(help.contains(flag), "superpass-service has no {flag}");
    }
    // ueventd gives the device to the user the service runs as.
    let ue = lines(&read("service/ueventd.superpass.rc"));
    assert_eq!(
        ue[0].split_whitespace().collect::<Vec<_>>(),
        [DEFAULT_DEVICE, "0660", "system", "system"]
    );
}

#[test]
fn vintf_fragments_declare_the_instance() {
    for f in [
        "service/manifest_superpass.xml",
        "service/compatibility_matrix_superpass.xml",
    ] {
        let x = read(f);
        assert!(x.contains("<hal format=\"aidl\""), "{f}");
        assert!(x.contains(&format!("<name>{PACKAGE}</name>")), "{f}");
        assert!(
            x.contains(&format!("<version>{}</version>", consts::VERSION)),
            "{f}"
        );
    }
    assert!(
        read("service/manifest_superpass.xml").contains(&format!("<fqname>{INSTANCE}</fqname>"))
    );
    let m = read("service/compatibility_matrix_superpass.xml");
    assert!(m.contains("<name>ISuperPass</name>") && m.contains("<instance>default</instance>"));
}

#[test]
fn sepolicy_labels_and_declares_every_name() {
    let sc = lines(&read("sepolicy/vendor/service_contexts"));
    assert_eq!(
        sc[0].split_whitespace().collect::<Vec<_>>(),
        [SERVICE_NAME, "u:object_r:hal_superpass_service:s0"]
    );
    let fc = lines(&read("sepolicy/vendor/file_contexts"));
    let label = |path: &str| {
        fc.iter()
            .find(|l| l.split_whitespace().next() == Some(path))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_else(|| panic!("file_contexts has no {path}"))
            .to_string()
    };
    assert_eq!(label(EXEC), "u:object_r:hal_superpass_default_exec:s0");
    assert_eq!(label(DEFAULT_DEVICE), "u:object_r:superpass_device:s0");
    assert_eq!(
        label(&format!(
            "{}(/.*)?",
            Path::new(DEFAULT_STATE).parent().unwrap().display()
        )),
        "u:object_r:superpass_vendor_data_file:s0"
    );

    let mut te = String::new();
    for dir in ["system_ext/public", "system_ext/private", "vendor"] {
        for e in std::fs::read_dir(root().join("sepolicy").join(dir)).unwrap() {
            let p = e.unwrap().path();
            te.push_str(&std::fs::read_to_string(&p).unwrap());
            te.push('\n');
        }
    }
    for decl in [
        "hal_attribute(superpass);",
        "type hal_superpass_service, hal_service_type",
        "type hal_superpass_default, domain;",
        "hal_server_domain(hal_superpass_default, hal_superpass)",
        "type hal_superpass_default_exec, exec_type, vendor_file_type, file_type;",
        "init_daemon_domain(hal_superpass_default)",
        "type superpass_device, dev_type;",
        "type superpass_vendor_data_file, file_type, data_file_type;",
        "hal_attribute_service(hal_superpass, hal_superpass_service)",
        "allow hal_superpass_default superpass_device:chr_file rw_file_perms;",
        "hal_client_domain(system_server, hal_superpass)",
        "binder_call(shell, hal_superpass_server)",
        "binder_call(hal_superpass_default, shell)",
        "userdebug_or_eng(",
    ] {
        assert!(te.contains(decl), "sepolicy lacks `{decl}`");
    }
    // Every type used in a context file is declared.
    for ctx in fc.iter().chain(&sc) {
        let ty = ctx.split(':').nth(2).unwrap();
        assert!(
            te.contains(&format!("type {ty},")),
            "type {ty} is not declared"
        );
    }
    // The .rc grants the capability the policy allows.
    assert!(read("service/superpass.rc").contains("capabilities SYS_NICE"));
    assert!(te.contains("self:global_capability_class_set sys_nice"));
    // RT-UI reads and sets app threads' scheduling.
    assert!(te.contains("allow hal_superpass_default appdomain:process { getsched setsched };"));
}
