//! Foreground discovery without framework changes: watch the `top-app` cpuset.
//!
//! Android's ActivityManager moves the foreground app's processes into the `top-app` cpuset
//! (`/dev/cpuset/top-app/cgroup.procs`). The watcher polls that file, picks the app process
//! that is on top, and reports its UI thread (tid == pid) and its RenderThread (the thread
//! named `RenderThread`). Polling, not inotify: cgroup v1 `cgroup.procs` raises no events.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::procfs::ProcFs;

/// The name Android gives an app's render thread.
pub const RENDER_THREAD: &str = "RenderThread";

/// Android's `FIRST_APPLICATION_UID`: processes below it are not apps.
pub const FIRST_APPLICATION_UID: u32 = 10000;

/// The app on top, as the cpuset shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopApp {
    /// The app's process (and UI thread).
    pub pid: i32,
    /// Its RenderThread, once it has one.
    pub render_tid: Option<i32>,
}

/// Where and how to look.
#[derive(Clone, Debug)]
pub struct Config {
    /// The cpuset hierarchy root (`/dev/cpuset`); the watcher reads `top-app/cgroup.procs`.
    pub cgroup_root: PathBuf,
    /// The procfs view used to read uids, `oom_score_adj` and thread names.
    pub proc: ProcFs,
    /// Processes with a lower uid are ignored (system services also run in top-app).
    pub min_uid: u32,
    /// How often to look.
    pub interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            cgroup_root: PathBuf::from("/dev/cpuset"),
            proc: ProcFs::default(),
            min_uid: FIRST_APPLICATION_UID,
            interval: Duration::from_millis(200),
        }
    }
}

/// The pids listed in `<root>/top-app/cgroup.procs`.
pub fn top_app_pids(cgroup_root: &Path) -> Vec<i32> {
    std::fs::read_to_string(cgroup_root.join("top-app").join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Picks the top app: among app processes in the cpuset, the one with the lowest
/// `oom_score_adj` (the activity on top has 0; bound services and the IME rank higher), then
/// one that has a RenderThread, then the newest (highest pid).
pub fn scan(cfg: &Config) -> Option<TopApp> {
    let mut best: Option<(i32, bool, i32, Option<i32>)> = None;
    for pid in top_app_pids(&cfg.cgroup_root) {
        if pid <= 0 || cfg.proc.uid(pid).is_none_or(|u| u < cfg.min_uid) {
            continue;
        }
        let adj = cfg.proc.oom_score_adj(pid).unwrap_or(i32::MAX);
        let render = cfg.proc.find_thread(pid, RENDER_THREAD);
        // Lower adj, then having a RenderThread, then higher pid wins.
        let key = (adj, render.is_none(), -pid);
        if best.is_none_or(|(a, n, p, _)| key < (a, n, p)) {
            best = Some((key.0, key.1, key.2, render));
        }
    }
    best.map(|(_, _, neg_pid, render_tid)| TopApp {
        pid: -neg_pid,
        render_tid,
    })
}

/// A running watcher; dropping it stops the thread.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Starts polling; `on_change` runs on the watcher thread whenever the top app (or its
    /// RenderThread) changes, including the first look.
    pub fn start(cfg: Config, on_change: impl Fn(Option<TopApp>) + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("superpass-topapp".into())
            .spawn(move || {
                let mut last: Option<Option<TopApp>> = None;
                while !flag.load(Ordering::Relaxed) {
                    let now = scan(&cfg);
                    if last != Some(now) {
                        on_change(now);
                        last = Some(now);
                    }
                    std::thread::park_timeout(cfg.interval);
                }
            })
            .expect("spawn the top-app watcher");
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A fake `/proc` and cpuset tree.
    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new() -> Self {
            let t = Self {
                dir: tempfile::tempdir().unwrap(),
            };
            std::fs::create_dir_all(t.dir.path().join("cpuset/top-app")).unwrap();
            t.set_top(&[]);
            t
        }
        fn cfg(&self) -> Config {
            Config {
                cgroup_root: self.dir.path().join("cpuset"),
                proc: ProcFs::new(self.dir.path().join("proc")),
                min_uid: FIRST_APPLICATION_UID,
                interval: Duration::from_millis(5),
            }
        }
        fn process(&self, pid: i32, uid: u32, adj: i32, threads: &[(i32, &str)]) {
            let p = self.dir.path().join("proc").join(pid.to_string());
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(
                p.join("status"),
                format!("Name:\tapp\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
            )
            .unwrap();
            std::fs::write(p.join("oom_score_adj"), format!("{adj}\n")).unwrap();
            for &(tid, name) in threads {
                let t = p.join("task").join(tid.to_string());
                std::fs::create_dir_all(&t).unwrap();
                std::fs::write(t.join("comm"), format!("{name}\n")).unwrap();
            }
        }
        fn set_top(&self, pids: &[i32]) {
            let s: String = pids.iter().map(|p| format!("{p}\n")).collect();
            std::fs::write(self.dir.path().join("cpuset/top-app/cgroup.procs"), s).unwrap();
        }
    }

    #[test]
    fn picks_the_app_on_top_with_its_render_thread() {
        let t = Tree::new();
        t.process(500, 1000, -900, &[(500, "system_server")]); // not an app
        t.process(600, 10061, 200, &[(600, "ime"), (601, RENDER_THREAD)]); // a bound IME
        t.process(
            700,
            10123,
            0,
            &[(700, "app.main"), (702, "binder"), (705, RENDER_THREAD)],
        );
        t.set_top(&[500, 600, 700]);
        assert_eq!(
            scan(&t.cfg()),
            Some(TopApp {
                pid: 700,
                render_tid: Some(705)
            })
        );
    }

    #[test]
    fn no_app_or_no_cpuset_means_none() {
        let t = Tree::new();
        assert_eq!(scan(&t.cfg()), None);
        t.process(500, 1000, 0, &[(500, "system_server")]);
        t.set_top(&[500]);
        assert_eq!(scan(&t.cfg()), None);
        let mut cfg = t.cfg();
        cfg.cgroup_root = t.dir.path().join("missing");
        assert_eq!(scan(&cfg), None);
    }

    #[test]
    fn prefers_render_thread_then_newest_on_ties() {
        let t = Tree::new();
        t.process(800, 10100, 0, &[(800, "a")]);
        t.process(801, 10101, 0, &[(801, "b"), (802, RENDER_THREAD)]);
        t.process(900, 10102, 0, &[(900, "c"), (903, RENDER_THREAD)]);
        t.set_top(&[800, 801, 900]);
        assert_eq!(scan(&t.cfg()).map(|a| a.pid), Some(900));
    }

    #[test]
    fn watcher_reports_changes_only() {
        let t = Tree::new();
        t.process(700, 10123, 0, &[(700, "app")]);
        t.set_top(&[700]);
        let (tx, rx) = mpsc::channel();
        let w = Watcher::start(t.cfg(), move |a| tx.send(a).unwrap());
        let wait =
            |rx: &mpsc::Receiver<Option<TopApp>>| rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(
            wait(&rx),
            Some(TopApp {
                pid: 700,
                render_tid: None
            })
        );
        // The app starts its RenderThread: reported.
        t.process(700, 10123, 0, &[(704, RENDER_THREAD)]);
        assert_eq!(
            wait(&rx),
            Some(TopApp {
                pid: 700,
                render_tid: Some(704)
            })
        );
        // Another app comes to the top.
        t.process(710, 10124, 0, &[(710, "other")]);
        t.set_top(&[710]);
        assert_eq!(
            wait(&rx),
            Some(TopApp {
                pid: 710,
                render_tid: None
            })
        );
        t.set_top(&[]);
        assert_eq!(wait(&rx), None);
        drop(w);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    }
}
