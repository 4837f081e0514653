//! Every ISuperPass method over the RPC transport, bad inputs, and a caller that is not allowed.

mod common;

use common::{pid, Parked, Server};
use rsbinder::ExceptionCode;
use superpass_service::aidl::{consts, CriticalThread, ISuperPass, Role};
use superpass_service::commands::{self, Command};
use superpass_service::token;

fn ct(tid: i32, role: Role) -> CriticalThread {
    CriticalThread { tid, role }
}

fn specific(r: rsbinder::BinderResult<()>) -> i32 {
    let e = r.expect_err("the call must fail");
    assert_eq!(e.exception_code(), ExceptionCode::ServiceSpecific, "{e:?}");
    e.service_specific_error()
}

fn exception(r: rsbinder::BinderResult<()>) -> ExceptionCode {
    r.expect_err("the call must fail").exception_code()
}

fn tids(svc: &dyn ISuperPass) -> Vec<(i32, i32, String)> {
    svc.getState()
        .unwrap()
        .registrations
        .into_iter()
        .map(|r| (r.tid, r.role.0, r.owner))
        .collect()
}

#[test]
fn every_method_round_trips() {
    let server = Server::start(&[]);
    let conn = server.connect_with_callbacks();
    let svc: &dyn ISuperPass = &*conn.service;
    let me = pid();
    let render = Parked::spawn("RenderThread");
    let worker = Parked::spawn("worker");

    assert_eq!(svc.getInterfaceVersion().unwrap(), consts::VERSION);
    assert_eq!(svc.getInterfaceHash().unwrap(), consts::HASH);

    let st = svc.getState().unwrap();
    assert_eq!(st.backend, "memory");
    assert_eq!(st.abiVersion as u32, superpass_core::abi::ABI_VERSION);
    assert!(st.enabled, "a fresh service enables the fast track");
    assert!(st.registrations.is_empty());

    // Foreground app without a token: owned by this caller's uid.
    svc.setForegroundApp(None, me, me, render.tid).unwrap();
    // SAFETY: getuid has no preconditions.
    let owner = format!("foreground:uid:{}", unsafe { libc::getuid() });
    let st = svc.getState().unwrap();
    assert_eq!(st.foregroundPid, me);
    assert_eq!(
        tids(svc),
        vec![
            (me, Role::UI.0, owner.clone()),
            (render.tid, Role::RENDER.0, owner)
        ]
    );
    assert_eq!(svc.getStats().unwrap().criticalThreads, 2);
    svc.clearForegroundApp().unwrap();
    assert!(tids(svc).is_empty());
    assert_eq!(svc.getStats().unwrap().criticalThreads, 0);

    // Set, add, remove without a token.
    svc.setCriticalThreads(None, me, &[ct(worker.tid, Role::OTHER), ct(me, Role::UI)])
        .unwrap();
    assert_eq!(tids(svc).len(), 2);
    svc.addCriticalThread(None, me, &ct(render.tid, Role::RENDER))
        .unwrap();
    assert_eq!(svc.getStats().unwrap().criticalThreads, 3);
    svc.removeCriticalThread(None, worker.tid).unwrap();
    assert_eq!(tids(svc).len(), 2);
    svc.setCriticalThreads(None, me, &[]).unwrap();
    assert!(tids(svc).is_empty());

    // With a token, then released.
    let tok = token::new();
    svc.addCriticalThread(Some(&tok), me, &ct(worker.tid, Role::OTHER))
        .unwrap();
    let st = svc.getState().unwrap();
    assert_eq!(st.clients, 1);
    assert_eq!(st.registrations[0].owner, format!("client:{me}"));
    svc.removeCriticalThread(Some(&tok), worker.tid).unwrap();
    assert_eq!(
        svc.getState().unwrap().clients,
        0,
        "an idle token is forgotten"
    );
    svc.setForegroundApp(Some(&tok), me, me, 0).unwrap();
    svc.addCriticalThread(Some(&tok), me, &ct(worker.tid, Role::OTHER))
        .unwrap();
    assert_eq!(tids(svc).len(), 2);
    svc.releaseClient(&tok).unwrap();
    assert!(tids(svc).is_empty());
    assert_eq!(svc.getState().unwrap().clients, 0);

    // Mode.
    svc.setEnabled(false).unwrap();
    assert!(!svc.getStats().unwrap().enabled);
    assert!(!svc.getState().unwrap().enabled);
    svc.setEnabled(true).unwrap();
    assert!(svc.getStats().unwrap().enabled);

    // Tunables.
    let t = svc.getTunables().unwrap();
    assert_eq!(t.len(), superpass_core::tunables::NUM_TUNABLES);
    let depth = t.iter().find(|t| t.name == "max_depth").unwrap();
    assert_eq!(depth.value, depth.defaultValue);
    svc.setTunable("max_depth", depth.max).unwrap();
    let t = svc.getTunables().unwrap();
    assert_eq!(
        t.iter().find(|t| t.name == "max_depth").unwrap().value,
        depth.max
    );

    // Stats.
    let s = svc.getStats().unwrap();
    assert!(s.counters.iter().any(|c| c.name == "critical_waits"));
    svc.resetStats().unwrap();

    // Discovery on and off (the cpuset path does not exist: it finds nothing).
    svc.setForegroundDiscovery(true).unwrap();
    assert!(svc.getState().unwrap().foregroundDiscovery);
    svc.setForegroundDiscovery(false).unwrap();
    assert!(!svc.getState().unwrap().foregroundDiscovery);

    // The dump commands over the proxy.
    let mut out = Vec::new();
    commands::execute(
        &Command::Set {
            name: "slice_ns".into(),
            value: 1_000_000,
        },
        svc,
        &mut out,
    )
    .unwrap();
    commands::execute(&Command::Show { json: true }, svc, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let json = &text[text.find('{').unwrap()..];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["service"]["name"], superpass_service::SERVICE_NAME);
    assert!(v["tunables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "slice_ns" && t["value"] == 1_000_000));
    conn.close();
}

#[test]
fn bad_inputs_are_refused() {
    let server = Server::start(&[]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    let me = pid();
    let other = Parked::spawn("other");

    // Non-positive ids.
    assert_eq!(
        exception(svc.setForegroundApp(None, -1, me, 0)),
        ExceptionCode::IllegalArgument
    );
    assert_eq!(
        exception(svc.addCriticalThread(None, me, &ct(0, Role::OTHER))),
        ExceptionCode::IllegalArgument
    );
    assert_eq!(
        exception(svc.removeCriticalThread(None, -5)),
        ExceptionCode::IllegalArgument
    );
    // A thread that does not exist, or belongs to another process (pid 1's task list).
    assert_eq!(
        specific(svc.addCriticalThread(None, me, &ct(i32::MAX, Role::OTHER))),
        consts::ERROR_NO_SUCH_THREAD
    );
    assert_eq!(
        specific(svc.addCriticalThread(None, 1, &ct(other.tid, Role::OTHER))),
        consts::ERROR_NO_SUCH_THREAD
    );
    assert_eq!(
        specific(svc.setForegroundApp(None, me, me, i32::MAX - 1)),
        consts::ERROR_NO_SUCH_THREAD
    );
    assert_eq!(
        exception(svc.setForegroundApp(None, me, me, me)),
        ExceptionCode::IllegalArgument
    );
    // Roles.
    assert_eq!(
        specific(svc.addCriticalThread(None, me, &ct(other.tid, Role(7)))),
        consts::ERROR_BAD_ROLE
    );
    assert_eq!(
        specific(svc.setCriticalThreads(None, me, &[ct(other.tid, Role(-1))])),
        consts::ERROR_BAD_ROLE
    );
    // Counts: one call over the bound, duplicates, and the merged set over the bound.
    let many: Vec<CriticalThread> = (0..33).map(|_| ct(me, Role::OTHER)).collect();
    assert_eq!(
        specific(svc.setCriticalThreads(None, me, &many)),
        consts::ERROR_TOO_MANY_THREADS
    );
    assert_eq!(
        exception(svc.setCriticalThreads(
            None,
            me,
            &[ct(other.tid, Role::OTHER), ct(other.tid, Role::UI)]
        )),
        ExceptionCode::IllegalArgument
    );
    let threads: Vec<Parked> = (0..33).map(|i| Parked::spawn(&format!("t{i}"))).collect();
    let list: Vec<CriticalThread> = threads[..32]
        .iter()
        .map(|t| ct(t.tid, Role::OTHER))
        .collect();
    svc.setCriticalThreads(None, me, &list).unwrap();
    assert_eq!(
        specific(svc.addCriticalThread(None, me, &ct(threads[32].tid, Role::OTHER))),
        consts::ERROR_TOO_MANY_THREADS
    );
    assert_eq!(svc.getState().unwrap().registrations.len(), 32);
    // The module's own bound (max_critical) is reported the same way.
    svc.setCriticalThreads(None, me, &[]).unwrap();
    svc.setTunable("max_critical", 1).unwrap();
    svc.setCriticalThreads(None, me, &list[..1]).unwrap();
    assert_eq!(
        specific(svc.setCriticalThreads(None, me, &list[..2])),
        consts::ERROR_TOO_MANY_THREADS
    );
    assert_eq!(svc.getState().unwrap().registrations.len(), 1, "unchanged");
    // Removal of what is not registered.
    assert_eq!(
        specific(svc.removeCriticalThread(None, other.tid)),
        consts::ERROR_NOT_REGISTERED
    );
    // Tunables.
    assert_eq!(
        specific(svc.setTunable("no_such_knob", 1)),
        consts::ERROR_UNKNOWN_TUNABLE
    );
    assert_eq!(
        specific(svc.setTunable("max_depth", 0)),
        consts::ERROR_OUT_OF_RANGE
    );
    assert_eq!(
        specific(svc.setTunable("max_depth", -1)),
        consts::ERROR_OUT_OF_RANGE
    );
    assert_eq!(
        specific(svc.setTunable("slice_ns", 50_000_000)),
        consts::ERROR_OUT_OF_RANGE,
        "above budget_ns: a cross-field rule"
    );
    assert_eq!(
        exception(svc.setTunable(&"x".repeat(65), 1)),
        ExceptionCode::IllegalArgument
    );
    drop(threads);
}

#[test]
fn a_caller_not_allowed_may_read_but_not_change() {
    // The test runs as some uid; allow only one that it is not.
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    let other = if me == 4242 { 4243 } else { 4242 };
    let server = Server::start(&["--allowed-uids", &other.to_string()]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    let p = pid();
    let sec = ExceptionCode::Security;
    assert_eq!(exception(svc.setForegroundApp(None, p, p, 0)), sec);
    assert_eq!(exception(svc.clearForegroundApp()), sec);
    assert_eq!(exception(svc.setCriticalThreads(None, p, &[])), sec);
    assert_eq!(
        exception(svc.addCriticalThread(None, p, &ct(p, Role::UI))),
        sec
    );
    assert_eq!(exception(svc.removeCriticalThread(None, p)), sec);
    assert_eq!(exception(svc.setEnabled(false)), sec);
    assert_eq!(exception(svc.setForegroundDiscovery(true)), sec);
    assert_eq!(exception(svc.resetStats()), sec);
    assert_eq!(exception(svc.setTunable("max_depth", 4)), sec);
    // Reads stay open, and nothing changed.
    assert!(svc.getState().unwrap().enabled);
    assert!(svc.getStats().is_ok());
    assert!(svc
        .getTunables()
        .unwrap()
        .iter()
        .all(|t| t.value == t.defaultValue));
    // The dump commands go through the same check.
    let mut out = Vec::new();
    let e = commands::execute(&Command::Enable(false), svc, &mut out).unwrap_err();
    assert!(e.contains("permission denied"), "{e}");
}
