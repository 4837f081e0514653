//! Shared helpers: a `superpass-service` child on a temp socket, and threads to register.

#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use superpass_service::transport::{Connection, Transport};

/// A service child process serving RPC on a socket in its own temp dir.
pub struct Server {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub sock: PathBuf,
}

impl Server {
    /// Starts `superpass-service --rpc <sock> --memory` with `extra` flags.
    pub fn start(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::start_in(dir, extra)
    }

    /// Like [`start`](Self::start), in a given dir (to restart on the same state file).
    pub fn start_in(dir: tempfile::TempDir, extra: &[&str]) -> Self {
        let sock = dir.path().join("superpass.sock");
        let child = Command::new(env!("CARGO_BIN_EXE_superpass-service"))
            .arg("--rpc")
            .arg(&sock)
            .arg("--memory")
            .args(extra)
            .env("SUPERPASS_LOG", "warn")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn superpass-service");
        let s = Self { child, dir, sock };
        s.wait_ready();
        s
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.sock.exists() {
                if let Ok(c) = Connection::open(&self.transport(), false) {
                    c.close();
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "superpass-service did not come up on {}",
            self.sock.display()
        );
    }

    pub fn transport(&self) -> Transport {
        Transport::Rpc(self.sock.clone())
    }

    /// A plain connection (no incoming connection: cannot pass tokens).
    pub fn connect(&self) -> Connection {
        Connection::open(&self.transport(), false).expect("connect")
    }

    /// A connection that can pass tokens (close it when done).
    pub fn connect_with_callbacks(&self) -> Connection {
        Connection::open(&self.transport(), true).expect("connect with callbacks")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Kills the service and hands back its dir (with the state file).
    pub fn kill(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The calling thread's tid.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// This process's pid.
pub fn pid() -> i32 {
    std::process::id() as i32
}

/// A thread of this process that parks until dropped (a TID to register).
pub struct Parked {
    pub tid: i32,
    stop: Option<mpsc::Sender<()>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Parked {
    pub fn spawn(name: &str) -> Self {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                tid_tx.send(gettid()).unwrap();
                let _ = stop_rx.recv();
            })
            .unwrap();
        Self {
            tid: tid_rx.recv().unwrap(),
            stop: Some(stop_tx),
            handle: Some(handle),
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Polls `f` until it is true or `secs` pass.
pub fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// Writes a fake top-app cpuset listing `pids` under `root`.
pub fn write_top_app(root: &Path, pids: &[i32]) {
    std::fs::create_dir_all(root.join("top-app")).unwrap();
    let s: String = pids.iter().map(|p| format!("{p}\n")).collect();
    std::fs::write(root.join("top-app").join("cgroup.procs"), s).unwrap();
}
