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
    assert_eq!(v["service"]["interface_version"], 2);
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

fn shell(svc: &SuperPass, args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = superpass_service::commands::run_shell(svc, &args, &mut out, &mut err);
    let s = |v: Vec<u8>| String::from_utf8(v).unwrap();
    (code, s(out), s(err))
}

#[test]
fn shell_commands_share_the_table_and_split_errors_from_output() {
    let svc = service();
    assert_eq!(
        shell(&svc, &["set", "max_depth", "6"]),
        (0, "max_depth = 6\n".into(), String::new())
    );
    assert_eq!(shell(&svc, &["get", "max_depth"]).1, "6\n");
    let (code, out, err) = shell(&svc, &["set", "max_depth", "99"]);
    assert_eq!((code, out.as_str()), (-1, ""));
    assert!(err.contains("ERROR_OUT_OF_RANGE"), "{err}");
    let (code, _, err) = shell(&svc, &["frobnicate"]);
    assert_eq!(code, -1);
    assert!(err.contains("unknown arguments"), "{err}");
}

#[test]
fn a_dead_foreground_app_leaves_the_state() {
    use superpass_service::aidl::ISuperPass;
    let svc = service();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    svc.setForegroundApp(None, pid, pid, 0).unwrap();
    assert_eq!(svc.getState().unwrap().foregroundPid, pid);
    child.kill().unwrap();
    child.wait().unwrap();
    let st = svc.getState().unwrap();
    assert_eq!(st.foregroundPid, 0, "the dead app is gone");
    assert!(st.registrations.is_empty());
    assert_eq!(
        svc.getStats().unwrap().criticalThreads,
        0,
        "and out of the module"
    );
}
