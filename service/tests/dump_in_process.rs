//! The service's `dump` (what dumpsys calls), on an in-process service over the memory engine.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rsbinder::Interface;
use superpass_service::caller::CallerPolicy;
use superpass_service::device::memory::MemoryDevice;
use superpass_service::device::Module;
use superpass_service::rtui::{Errno, Sched, Scheduler};
use superpass_service::service::{Options, SuperPass};

fn options() -> Options {
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    Options {
        policy: CallerPolicy::new(vec![me]),
        ..Options::default()
    }
}

fn service() -> SuperPass {
    SuperPass::start(Module::new(Box::new(MemoryDevice::new(4))), options()).unwrap()
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
    let code = superpass_service::commands::run_shell(svc, Some(svc), &args, &mut out, &mut err);
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
    let (mut child, pid) = sleeping_child();
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

/// A kernel stand-in for RT-UI: which threads are FIFO, every change, an errno to fail with.
#[derive(Default)]
struct Kernel {
    fifo: BTreeSet<i32>,
    calls: Vec<String>,
    fail: Option<Errno>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Kernel>>);

impl Recorder {
    fn calls(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap().calls)
    }
    fn fail_with(&self, e: Option<Errno>) {
        self.0.lock().unwrap().fail = e;
    }
}

impl Scheduler for Recorder {
    fn get(&self, tid: i32) -> Result<Sched, Errno> {
        let k = self.0.lock().unwrap();
        Ok(if k.fifo.contains(&tid) {
            Sched::fifo(-10)
        } else {
            Sched::fair(libc::SCHED_OTHER, -10)
        })
    }
    fn set_fifo(&self, tid: i32) -> Result<(), Errno> {
        let mut k = self.0.lock().unwrap();
        if let Some(e) = k.fail {
            return Err(e);
        }
        k.fifo.insert(tid);
        k.calls.push(format!("fifo {tid}"));
        Ok(())
    }
    fn set_fair(&self, tid: i32, policy: i32, nice: i32) -> Result<(), Errno> {
        let mut k = self.0.lock().unwrap();
        if let Some(e) = k.fail {
            return Err(e);
        }
        k.fifo.remove(&tid);
        k.calls.push(format!("fair {tid} {policy} {nice}"));
        Ok(())
    }
}

#[test]
fn fifo_follows_the_critical_set_and_reports_failures() {
    use superpass_service::aidl::ISuperPass;
    let rec = Recorder::default();
    let module = Module::new(Box::new(MemoryDevice::new(4)));
    let svc = SuperPass::start_with(module, options(), Box::new(rec.clone())).unwrap();
    let (mut child, pid) = sleeping_child();

    // Off by default, and shown so.
    assert!(dump(&svc, &[]).contains("RT-UI (fifo): off"));
    let v: serde_json::Value = serde_json::from_str(&dump(&svc, &["--json"])).unwrap();
    assert_eq!(v["service"]["fifo"]["on"], false);
    svc.setForegroundApp(None, pid, pid, 0).unwrap();
    assert_eq!(rec.calls(), Vec::<String>::new(), "nothing while off");

    // A client's proxy has no way to the setting, and says where it is.
    let mut out = Vec::new();
    let e = superpass_service::commands::execute(
        &superpass_service::commands::Command::Fifo(Some(true)),
        &svc,
        &mut out,
    )
    .unwrap_err();
    assert!(e.contains("setting of the service itself"), "{e}");

    // Bad input names the problem and teaches the command.
    let (code, out, err) = shell(&svc, &["fifo", "maybe"]);
    assert_eq!((code, out.as_str()), (-1, ""));
    assert!(err.contains("fifo takes on or off, not `maybe`"), "{err}");
    assert!(err.contains("fifo on|off"), "{err}");

    // On: the registered UI thread is promoted; the report says so.
    assert_eq!(
        shell(&svc, &["fifo", "on"]),
        (
            0,
            "fifo: on, 1 of 1 UI and render threads SCHED_FIFO 1\n".into(),
            String::new()
        )
    );
    assert_eq!(rec.calls(), [format!("fifo {pid}")]);
    let v: serde_json::Value = serde_json::from_str(&dump(&svc, &["--json"])).unwrap();
    assert_eq!(v["service"]["fifo"]["fifo"], 1);
    assert_eq!(v["service"]["fifo"]["threads"], 1);

    // The thread leaves the set: back to SCHED_OTHER at its nice value.
    svc.clearForegroundApp().unwrap();
    assert_eq!(
        rec.calls(),
        [format!("fair {pid} {} -10", libc::SCHED_OTHER)]
    );

    // Without the privilege: reported, and the registration stays.
    rec.fail_with(Some(libc::EPERM));
    svc.setForegroundApp(None, pid, pid, 0).unwrap();
    assert_eq!(svc.getState().unwrap().registrations.len(), 1);
    let text = dump(&svc, &[]);
    assert!(
        text.contains(&format!(
            "RT-UI (fifo): on, 0 of 1 UI and render threads SCHED_FIFO 1; failed for tid {pid}: \
             EPERM (the service needs CAP_SYS_NICE)"
        )),
        "{text}"
    );
    let (code, out, _) = shell(&svc, &["fifo"]);
    assert_eq!(code, 0);
    assert!(out.contains("EPERM"), "{out}");
    assert_eq!(
        svc.getStats().unwrap().criticalThreads,
        1,
        "the module holds it"
    );

    // Granted again: the next change promotes it; off puts it back.
    rec.fail_with(None);
    let (code, out, _) = shell(&svc, &["fifo", "on"]);
    assert_eq!((code, out.contains("1 of 1")), (0, true), "{out}");
    assert_eq!(shell(&svc, &["fifo", "off"]).1, "fifo: off\n");
    assert_eq!(
        rec.calls(),
        [
            format!("fifo {pid}"),
            format!("fair {pid} {} -10", libc::SCHED_OTHER)
        ]
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn the_service_going_away_puts_its_fifo_threads_back() {
    use superpass_service::aidl::ISuperPass;
    let rec = Recorder::default();
    let module = Module::new(Box::new(MemoryDevice::new(4)));
    let opts = Options {
        fifo: Some(true),
        ..options()
    };
    let svc = SuperPass::start_with(module, opts, Box::new(rec.clone())).unwrap();
    let (mut child, pid) = sleeping_child();
    svc.setForegroundApp(None, pid, pid, 0).unwrap();
    assert_eq!(rec.calls(), [format!("fifo {pid}")], "--fifo turns it on");
    drop(svc);
    assert_eq!(
        rec.calls(),
        [format!("fair {pid} {} -10", libc::SCHED_OTHER)]
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A child process that sleeps for 30 s, standing for an app, and its pid.
fn sleeping_child() -> (std::process::Child, i32) {
    let child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    (child, pid)
}
