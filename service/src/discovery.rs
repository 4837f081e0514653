//! Foreground discovery without framework changes: watch the `top-app` cpuset.
//!
//! Android's ActivityManager moves the foreground app's processes into the `top-app` cpuset
//! (`/dev/cpuset/top-app/cgroup.procs`). The watcher polls that file, picks the app process
//! that is on top, and reports its UI thread (tid == pid) and its RenderThread (the thread
//! named `RenderThread`). Polling, not inotify: cgroup v1 `cgroup.procs` raises no events.
//!
//! Three rules keep the polling cheap and right on a phone:
//! - Persistent system UI (SystemUI's shade and keyguard, at `oom_score_adj` -800) enters
//!   top-app while it is shown; processes below adj 0 are picked only when no ordinary app is
//!   on top.
//! - While the display is off nothing is on screen to keep smooth, so the watcher stops
//!   scanning and only reads the display-state file ([`Config::display_state`]), once a second.
//! - An app that just came to the top starts its RenderThread a little later, so after every
//!   switch the watcher looks every 20 ms for a second until it has one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
    /// A file whose content says whether the display is on: `0`, `off` or `OFF` mean off,
    /// anything else (or no file) on. On Android: the panel's backlight brightness,
    /// `/sys/class/backlight/<panel>/brightness`, which is 0 while the screen is off.
    pub display_state: Option<PathBuf>,
}

/// How often the watcher looks right after a switch, until the app has a RenderThread.
pub const FAST_INTERVAL: Duration = Duration::from_millis(20);

/// How long the fast looks last after a switch.
pub const FAST_WINDOW: Duration = Duration::from_secs(1);

/// How often the display-state file is read while the display is off.
pub const DISPLAY_OFF_INTERVAL: Duration = Duration::from_secs(1);

/// The `oom_score_adj` of ordinary foreground apps; persistent system UI sits below it.
pub const FOREGROUND_APP_ADJ: i32 = 0;

/// True unless the display-state file says the display is off.
pub fn display_on(path: Option<&Path>) -> bool {
    let Some(p) = path else { return true };
    match std::fs::read_to_string(p) {
        Ok(s) => !matches!(s.trim(), "0" | "off" | "OFF"),
        Err(_) => true,
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            cgroup_root: PathBuf::from("/dev/cpuset"),
            proc: ProcFs::default(),
            min_uid: FIRST_APPLICATION_UID,
            interval: Duration::from_millis(200),
            display_state: None,
        }
    }
}

/// The pids listed in `<root>/top-app/cgroup.procs`.
pub fn top_app_pids(cgroup_root: &Path) -> Vec<i32> {
    std::fs::read_to_string(cgroup_root.join("top-app").join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Picks the top app: among app processes in the cpuset, ordinary apps (`oom_score_adj` >= 0)
/// before persistent system UI (below 0), then the lowest `oom_score_adj` (the activity on top
/// has 0; bound services and the IME rank higher), then one that has a RenderThread, then the
/// newest (highest pid).
pub fn scan(cfg: &Config) -> Option<TopApp> {
    let mut best: Option<(bool, i32, bool, i32, Option<i32>)> = None;
    for pid in top_app_pids(&cfg.cgroup_root) {
        if pid <= 0 || cfg.proc.uid(pid).is_none_or(|u| u < cfg.min_uid) {
            continue;
        }
        let adj = cfg.proc.oom_score_adj(pid).unwrap_or(i32::MAX);
        let render = cfg.proc.find_thread(pid, RENDER_THREAD);
        // An ordinary app, then lower adj, then having a RenderThread, then higher pid wins.
        let key = (adj < FOREGROUND_APP_ADJ, adj, render.is_none(), -pid);
        if best.is_none_or(|(s, a, n, p, _)| key < (s, a, n, p)) {
            best = Some((key.0, key.1, key.2, key.3, render));
        }
    }
    best.map(|(_, _, _, neg_pid, render_tid)| TopApp {
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
    /// RenderThread) changes, including the first look. While the display is off it reports
    /// nothing; the first look after it comes back on reports the app then on top.
    pub fn start(cfg: Config, on_change: impl Fn(Option<TopApp>) + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("superpass-topapp".into())
            .spawn(move || {
                let mut last: Option<Option<TopApp>> = None;
                let mut fast_until: Option<Instant> = None;
                while !flag.load(Ordering::Relaxed) {
                    if !display_on(cfg.display_state.as_deref()) {
                        std::thread::park_timeout(DISPLAY_OFF_INTERVAL);
                        continue;
                    }
                    let now = scan(&cfg);
                    if last != Some(now) {
                        let switched = last.flatten().map(|a| a.pid) != now.map(|a| a.pid);
                        if switched {
                            fast_until = Some(Instant::now() + FAST_WINDOW);
                        }
                        on_change(now);
                        last = Some(now);
                    }
                    let waiting_for_render = now.is_some_and(|a| a.render_tid.is_none());
                    let fast = waiting_for_render && fast_until.is_some_and(|t| Instant::now() < t);
                    let wait = if fast {
                        FAST_INTERVAL.min(cfg.interval)
                    } else {
                        cfg.interval
                    };
                    std::thread::park_timeout(wait);
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
                display_state: None,
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
            // Whole, as the kernel shows it: a watcher must never read a half-written list.
            let tmp = self.dir.path().join("cpuset/top-app/.procs.tmp");
            std::fs::write(&tmp, s).unwrap();
            std::fs::rename(tmp, self.dir.path().join("cpuset/top-app/cgroup.procs")).unwrap();
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
    fn persistent_system_ui_only_when_nothing_else_is_on_top() {
        let t = Tree::new();
        t.process(300, 10030, -800, &[(300, "systemui"), (301, RENDER_THREAD)]);
        t.process(700, 10123, 0, &[(700, "app"), (705, RENDER_THREAD)]);
        t.set_top(&[300, 700]);
        assert_eq!(
            scan(&t.cfg()).map(|a| a.pid),
            Some(700),
            "the app, not the shade"
        );
        t.set_top(&[300]);
        assert_eq!(
            scan(&t.cfg()).map(|a| a.pid),
            Some(300),
            "only the shade is on top"
        );
    }

    #[test]
    fn display_state_file_says_off() {
        let t = Tree::new();
        let f = t.dir.path().join("brightness");
        assert!(display_on(None));
        assert!(display_on(Some(&f)), "no file: on");
        for (text, on) in [
            ("0\n", false),
            ("off", false),
            ("OFF", false),
            ("128\n", true),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(display_on(Some(&f)), on, "{text:?}");
        }
    }

    #[test]
    fn no_reports_while_the_display_is_off() {
        let t = Tree::new();
        let f = t.dir.path().join("brightness");
        std::fs::write(&f, "0").unwrap();
        t.process(700, 10123, 0, &[(700, "app")]);
        t.set_top(&[700]);
        let mut cfg = t.cfg();
        cfg.display_state = Some(f.clone());
        let (tx, rx) = mpsc::channel();
        let _w = Watcher::start(cfg, move |a| tx.send(a).unwrap());
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        std::fs::write(&f, "255").unwrap();
        let seen = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(seen.map(|a| a.pid), Some(700));
    }

    #[test]
    fn render_thread_is_found_fast_after_a_switch() {
        let t = Tree::new();
        t.process(700, 10123, 0, &[(700, "app")]);
        t.set_top(&[700]);
        let mut cfg = t.cfg();
        // Far longer than the test waits: only the fast rescan can find the RenderThread.
        cfg.interval = Duration::from_secs(30);
        let (tx, rx) = mpsc::channel();
        let _w = Watcher::start(cfg, move |a| tx.send(a).unwrap());
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(first.and_then(|a| a.render_tid), None);
        std::thread::sleep(Duration::from_millis(100));
        t.process(700, 10123, 0, &[(706, RENDER_THREAD)]);
        let next = rx.recv_timeout(Duration::from_millis(800)).unwrap();
        assert_eq!(next.and_then(|a| a.render_tid), Some(706));
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
