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

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("..").join("aidl");
    let dir = root.join("vendor").join("superpass");
    let api = root.join("aidl_api").join("vendor.superpass").join("1");
    let hash = std::fs::read_to_string(api.join(".hash"))
        .expect("aidl/aidl_api/vendor.superpass/1/.hash")
        .trim()
        .to_string();
    println!("cargo:rerun-if-changed={}", root.display());
    let mut b = rsbinder_aidl::Builder::new();
    for p in PARCELABLES {
        b = b.source(dir.join(format!("{p}.aidl")));
    }
    let r = b
        .source(dir.join("ISuperPass.aidl"))
        .version(1)
        .hash(hash)
        .output("superpass_aidl.rs")
        .generate();
    if let Err(e) = r {
        eprintln!("rsbinder-aidl: {e:?}");
        std::process::exit(1);
    }
}
