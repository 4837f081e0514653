//! Over RPC: a client's death drops its registrations, a restart restores the saved state, and
//! foreground discovery follows a fake top-app cpuset.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{eventually, pid, write_top_app, Parked, Server};
use superpass_service::aidl::{CriticalThread, ISuperPass, Role};

#[test]
fn a_dead_clients_registrations_are_dropped() {
    let server = Server::start(&[]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    let me = pid();
    let worker = Parked::spawn("worker");
    let fg_render = Parked::spawn("fg-render");
    // A registration without a token that must survive the client's death.
    svc.addCriticalThread(
        None,
        me,
        &CriticalThread {
            tid: me,
            role: Role::UI,
        },
    )
    .unwrap();

    // Another process registers with a token, then is killed.
    let ctl = env!("CARGO_BIN_EXE_superpassctl");
    let spawn_holder = |args: &[String]| {
        let mut child = Command::new(ctl)
            .arg("--rpc")
            .arg(&server.sock)
            .args(args)
            .arg("--hold")
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn superpassctl");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("registered"), "superpassctl said {line:?}");
        child
    };
    let mut holder = spawn_holder(&[
        "add-critical".into(),
        me.to_string(),
        worker.tid.to_string(),
        "--role".into(),
        "render".into(),
    ]);
    let mut fg_holder = spawn_holder(&[
        "foreground".into(),
        me.to_string(),
        me.to_string(),
        fg_render.tid.to_string(),
    ]);
    let st = svc.getState().unwrap();
    assert_eq!(st.clients, 2);
    assert_eq!(st.foregroundPid, me);
    assert!(st
        .registrations
        .iter()
        .any(|r| r.tid == worker.tid && r.owner == format!("client:{}", holder.id())));
    assert_eq!(svc.getStats().unwrap().criticalThreads, 3);

    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(
        eventually(10, || {
            let st = svc.getState().unwrap();
            st.clients == 1 && !st.registrations.iter().any(|r| r.tid == worker.tid)
        }),
        "the dead client's thread is still registered: {:?}",
        svc.getState().unwrap()
    );
    // SIGTERM: the holder exits on its own terms; the foreground app it declared goes too.
    // SAFETY: kill on a child pid we own.
    unsafe { libc::kill(fg_holder.id() as i32, libc::SIGTERM) };
    fg_holder.wait().unwrap();
    assert!(
        eventually(10, || svc.getState().unwrap().foregroundPid == 0),
        "the dead client's foreground app is still declared"
    );
    let st = svc.getState().unwrap();
    assert_eq!(st.clients, 0);
    assert_eq!(st.registrations.len(), 1, "the one without a token stays");
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    assert_eq!(st.registrations[0].owner, format!("uid:{uid}"));
    assert_eq!(svc.getStats().unwrap().criticalThreads, 1);
}

#[test]
fn a_restart_restores_mode_and_tunables() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let state_arg = state.to_str().unwrap().to_string();
    let server = Server::start_in(dir, &["--state", &state_arg]);
    {
        let conn = server.connect();
        let svc: &dyn ISuperPass = &*conn.service;
        svc.setTunable("max_depth", 6).unwrap();
        svc.setTunable("budget_ns", 12_000_000).unwrap();
        svc.setEnabled(false).unwrap();
        svc.addCriticalThread(
            None,
            pid(),
            &CriticalThread {
                tid: pid(),
                role: Role::UI,
            },
        )
        .unwrap();
    }
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["tunables"]["max_depth"], 6);
    assert_eq!(saved["enabled"], false);

    let dir = server.kill();
    let server = Server::start_in(dir, &["--state", &state_arg]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    let t = svc.getTunables().unwrap();
    let get = |n: &str| t.iter().find(|t| t.name == n).unwrap().value;
    assert_eq!(get("max_depth"), 6);
    assert_eq!(get("budget_ns"), 12_000_000);
    assert_eq!(
        get("slice_ns"),
        2_000_000,
        "untouched tunables keep defaults"
    );
    assert!(!svc.getStats().unwrap().enabled);
    assert!(!svc.getState().unwrap().enabled);
    // Registrations are not persisted: TIDs die with their processes; owners re-register.
    assert!(svc.getState().unwrap().registrations.is_empty());
}

#[test]
fn a_corrupt_state_file_starts_from_defaults_and_is_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let aside = dir.path().join("state.json.bad");
    std::fs::write(&state, "{ not json").unwrap();
    let server = Server::start_in(dir, &["--state", state.to_str().unwrap()]);
    let conn = server.connect();
    assert!(conn.service.getState().unwrap().enabled);
    // The bad file was kept, not overwritten...
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), "{ not json");
    // ...and the service wrote a fresh one.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["format"], 1);
}

#[test]
fn a_state_file_that_cannot_be_read_is_neither_moved_nor_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    // Reading a directory fails with an I/O error, as a file the service may not read does
    // (which root, running the tests, cannot reproduce with permissions).
    let state = dir.path().join("state.json");
    std::fs::create_dir(&state).unwrap();
    std::fs::write(state.join("keep"), "x").unwrap();
    let server = Server::start_in(dir, &["--state", state.to_str().unwrap()]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    assert!(svc.getState().unwrap().enabled, "defaults");
    svc.setEnabled(false).unwrap();
    assert!(state.is_dir(), "left where it was");
    assert_eq!(std::fs::read_to_string(state.join("keep")).unwrap(), "x");
    assert!(!state.with_extension("json.bad").exists());
}

#[test]
fn discovery_follows_the_top_app_cpuset() {
    let cg = tempfile::tempdir().unwrap();
    let me = pid();
    write_top_app(cg.path(), &[]);
    let server = Server::start(&[
        "--discover-foreground",
        "--cgroup-root",
        cg.path().to_str().unwrap(),
        "--discover-min-uid",
        "0",
        "--discover-interval-ms",
        "10",
    ]);
    let conn = server.connect();
    let svc: &dyn ISuperPass = &*conn.service;
    assert!(svc.getState().unwrap().foregroundDiscovery);
    assert_eq!(svc.getState().unwrap().foregroundPid, 0);

    // This test process comes to the top, with a RenderThread.
    let render = Parked::spawn("RenderThread");
    write_top_app(cg.path(), &[me]);
    assert!(
        eventually(10, || {
            let st = svc.getState().unwrap();
            st.foregroundPid == me && st.registrations.len() == 2
        }),
        "{:?}",
        svc.getState().unwrap()
    );
    let st = svc.getState().unwrap();
    assert_eq!(st.registrations[0].tid, me);
    assert_eq!(st.registrations[0].role, Role::UI);
    assert_eq!(st.registrations[1].tid, render.tid);
    assert_eq!(st.registrations[1].role, Role::RENDER);
    assert_eq!(st.registrations[0].owner, "foreground:discovery");

    // An explicit declaration wins over discovery while it lasts.
    svc.setForegroundApp(None, me, me, 0).unwrap();
    assert_eq!(svc.getState().unwrap().registrations.len(), 1);

    // The app leaves the top.
    svc.clearForegroundApp().unwrap();
    write_top_app(cg.path(), &[]);
    assert!(eventually(10, || svc.getState().unwrap().foregroundPid == 0));

    // Discovery off: the cpuset is no longer followed.
    svc.setForegroundDiscovery(false).unwrap();
    write_top_app(cg.path(), &[me]);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(svc.getState().unwrap().foregroundPid, 0);
}
