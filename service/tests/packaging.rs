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
    let bp = read("Android.bp");
    assert!(bp.contains("name: \"superpass-service\""));
    assert!(bp.contains("relative_install_path: \"hw\""));
    assert!(EXEC.ends_with("/hw/superpass-service"));
    for f in ["service/superpass.rc", "service/manifest_superpass.xml"] {
        assert!(bp.contains(&format!("\"{f}\"")), "Android.bp must name {f}");
        assert!(root().join(f).exists(), "{f}");
    }
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
    // AOSP's hash: sha1 of (`sha1sum` of the sorted files, then "latest-version").
    let mut files: Vec<String> = aidl_files()
        .into_iter()
        .map(|f| format!("./vendor/superpass/{f}"))
        .collect();
    files.sort();
    let mut listing = String::new();
    for f in &files {
        let data = std::fs::read(root().join(&v1).join(f)).unwrap();
        listing.push_str(&format!("{}  {f}\n", sha1_smol::Sha1::from(&data).digest()));
    }
    listing.push_str("latest-version\n");
    assert_eq!(
        sha1_smol::Sha1::from(listing.as_bytes())
            .digest()
            .to_string(),
        hash.trim()
    );
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
}
