//! The service's `dump` (what dumpsys calls), on an in-process service over the memory engine.

use rsbinder::Interface;
use superpass_service::caller::CallerPolicy;
use superpass_service::device::memory::MemoryDevice;
use superpass_service::device::Module;
use superpass_service::service::{Options, SuperPass};

fn service() -> SuperPass {
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    let opts = Options {
        policy: CallerPolicy::new(vec![me]),
        ..Options::default()
    };
    SuperPass::start(Module::new(Box::new(MemoryDevice::new(4))), opts).unwrap()
}

fn dump(svc: &SuperPass, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    svc.dump(&mut out, &args).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn dump_prints_state_hooks_stats_and_tunables() {
    let svc = service();
    let text = dump(&svc, &[]);
    for needle in [
        "vendor.superpass.ISuperPass/default",
        "backend memory",
        "Critical threads (0/32)",
        "Active hooks",
        "critical_waits",
        "max_depth",
    ] {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
    let v: serde_json::Value = serde_json::from_str(&dump(&svc, &["--json"])).unwrap();
    assert_eq!(v["service"]["backend"], "memory");
    assert_eq!(v["service"]["interface_version"], 1);
}

#[test]
fn dump_arguments_tune_and_report_errors() {
    let svc = service();
    assert_eq!(dump(&svc, &["set", "max_depth", "5"]), "max_depth = 5\n");
    assert_eq!(dump(&svc, &["get", "max_depth"]), "5\n");
    assert_eq!(dump(&svc, &["disable"]), "disabled\n");
    assert!(dump(&svc, &["--json"]).contains("\"enabled\": false"));
    assert!(dump(&svc, &["set", "max_depth", "99"]).contains("ERROR_OUT_OF_RANGE"));
    assert!(dump(&svc, &["set", "nope", "1"]).contains("ERROR_UNKNOWN_TUNABLE"));
    let bad = dump(&svc, &["frobnicate"]);
    assert!(bad.starts_with("error: unknown arguments") && bad.contains("set <name> <value>"));
    assert!(dump(&svc, &["help"]).contains("reset-stats"));
}
