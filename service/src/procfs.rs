//! What the service reads from `/proc`: thread ownership, thread names, app uids.
//!
//! The root is a parameter so tests can lay out a fake tree in a temp dir.

use std::path::{Path, PathBuf};

/// The pid of kthreadd, the parent of every kernel thread.
pub const KTHREADD_PID: i32 = 2;

/// A view of a procfs tree rooted at `root` (normally `/proc`).
#[derive(Clone, Debug)]
pub struct ProcFs {
    root: PathBuf,
}

impl Default for ProcFs {
    fn default() -> Self {
        Self::new("/proc")
    }
}

impl ProcFs {
    /// A view rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True if thread `tid` exists and belongs to process `pid`.
    pub fn thread_belongs(&self, pid: i32, tid: i32) -> bool {
        pid > 0
            && tid > 0
            && self
                .root
                .join(pid.to_string())
                .join("task")
                .join(tid.to_string())
                .is_dir()
    }

    /// The threads of process `pid`, in ascending order (empty if it is gone).
    pub fn threads(&self, pid: i32) -> Vec<i32> {
        let dir = self.root.join(pid.to_string()).join("task");
        let mut tids: Vec<i32> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        tids.sort_unstable();
        tids
    }

    /// The name (`comm`) of thread `tid` of process `pid`.
    pub fn thread_name(&self, pid: i32, tid: i32) -> Option<String> {
        let p = self
            .root
            .join(pid.to_string())
            .join("task")
            .join(tid.to_string())
            .join("comm");
        let s = std::fs::read_to_string(p).ok()?;
        Some(s.trim_end_matches('\n').to_string())
    }

    /// The real uid of process `pid`, from the `Uid:` line of its status.
    pub fn uid(&self, pid: i32) -> Option<u32> {
        let s = std::fs::read_to_string(self.root.join(pid.to_string()).join("status")).ok()?;
        let line = s.lines().find(|l| l.starts_with("Uid:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The `oom_score_adj` of process `pid` (the top app has 0 on Android).
    pub fn oom_score_adj(&self, pid: i32) -> Option<i32> {
        let s =
            std::fs::read_to_string(self.root.join(pid.to_string()).join("oom_score_adj")).ok()?;
        s.trim().parse().ok()
    }

    /// True if `pid` is a kernel thread: `PF_KTHREAD` in its stat flags, or kthreadd (pid 2)
    /// or one of its children. A kernel thread holds no user locks worth a fast track, and
    /// boosting one would take CPU from the work the module exists for.
    pub fn is_kernel_thread(&self, pid: i32) -> bool {
        /// `PF_KTHREAD` in `task_struct::flags`.
        const PF_KTHREAD: u64 = 0x0020_0000;
        if pid == KTHREADD_PID {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(self.root.join(pid.to_string()).join("stat")) else {
            return false;
        };
        // Fields after the command name, which may itself hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ppid = f.get(1).and_then(|v| v.parse::<i32>().ok());
        let flags = f.get(6).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        flags & PF_KTHREAD != 0 || ppid == Some(KTHREADD_PID)
    }

    /// The first thread of `pid` named `name`, if any.
    pub fn find_thread(&self, pid: i32, name: &str) -> Option<i32> {
        self.threads(pid)
            .into_iter()
            .find(|&t| self.thread_name(pid, t).as_deref() == Some(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_own_threads() {
        let p = ProcFs::default();
        let pid = std::process::id() as i32;
        assert!(p.thread_belongs(pid, pid));
        assert!(!p.thread_belongs(pid, 0));
        assert!(!p.thread_belongs(1, pid) || pid == 1);
        assert!(p.threads(pid).contains(&pid));
        assert!(p.uid(pid).is_some());
        assert!(p.oom_score_adj(pid).is_some());
        assert!(!p.is_kernel_thread(pid));
    }

    #[test]
    fn tells_kernel_threads_from_processes() {
        let dir = tempfile::tempdir().unwrap();
        let stat = |pid: i32, text: &str| {
            let d = dir.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("stat"), text).unwrap();
        };
        stat(10, "10 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0");
        stat(11, "11 (weird) name)) S 1 11 11 0 -1 2097216 0 0");
        stat(12, "12 (app) S 1 12 12 0 -1 4194560 0 0");
        let p = ProcFs::new(dir.path());
        assert!(p.is_kernel_thread(KTHREADD_PID));
        assert!(p.is_kernel_thread(10), "a child of kthreadd");
        assert!(p.is_kernel_thread(11), "PF_KTHREAD, whatever its name");
        assert!(!p.is_kernel_thread(12));
        assert!(!p.is_kernel_thread(13), "gone");
        if std::path::Path::new("/proc/2/stat").exists() {
            assert!(ProcFs::default().is_kernel_thread(2));
        }
    }
}
