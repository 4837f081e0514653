//! Generates the Rust stubs of `aidl/vendor/superpass/*.aidl` with rsbinder-aidl.

use std::path::Path;

/// Parcelables and enums first, the interface last: `.version()` stamps the last source added.
const PARCELABLES: &[&str] = &[
    "Role",
    "CriticalThread",
    "Registration",
    "Tunable",
    "Counter",
    "HistogramBucket",
    "Stats",
    "ServiceState",
];

/// The frozen interface version this service serves (aidl/aidl_api/vendor.superpass/<N>).
const VERSION: i32 = 2;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("..").join("aidl");
    let dir = root.join("vendor").join("superpass");
    let api = root
        .join("aidl_api")
        .join("vendor.superpass")
        .join(VERSION.to_string());
    let hash = std::fs::read_to_string(api.join(".hash"))
        .unwrap_or_else(|e| panic!("{}: {e}", api.join(".hash").display()))
        .trim()
        .to_string();
    println!("cargo:rerun-if-changed={}", root.display());
    let mut b = rsbinder_aidl::Builder::new();
    for p in PARCELABLES {
        b = b.source(dir.join(format!("{p}.aidl")));
    }
    let r = b
        .source(dir.join("ISuperPass.aidl"))
        .version(VERSION)
        .hash(hash)
        .output("superpass_aidl.rs")
        .generate();
    if let Err(e) = r {
        eprintln!("rsbinder-aidl: {e:?}");
        std::process::exit(1);
    }
    // The platform's result receiver, which `cmd` hands to a shell command (src/shell.rs).
    let receiver = Path::new(&manifest)
        .join("aidl")
        .join("com/android/internal/os/IResultReceiver.aidl");
    println!("cargo:rerun-if-changed={}", receiver.display());
    let r = rsbinder_aidl::Builder::new()
        .source(receiver)
        .output("result_receiver.rs")
        .generate();
    if let Err(e) = r {
        eprintln!("rsbinder-aidl: {e:?}");
        std::process::exit(1);
    }
}
