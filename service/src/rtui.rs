//! RT-UI: the critical UI threads and RenderThreads as SCHED_FIFO 1, a setting off by default.
//!
//! With `sys.use_fifo_ui=1`, Android's ActivityManager runs the top app's UI thread and
//! RenderThread as SCHED_FIFO at priority 1 (with `SCHED_RESET_ON_FORK`) and puts them back
//! to SCHED_OTHER when the app leaves the top. The service offers the same for the threads
//! registered with it, on devices whose framework does not: while the setting is on, every
//! critical thread with the UI or RENDER role is made SCHED_FIFO 1; when it leaves the
//! critical set or the setting goes off, it gets back the policy it had, at the nice value it
//! had (Android runs these threads at nice -10) unless someone else changed that meanwhile.
//! SuperPass and RT-UI cut different waits (docs/deploy.md): the fast track runs fair lock
//! holders, FIFO gives the frame threads their own CPU.
//!
//! [`RtUi`] decides which threads change, over a [`Scheduler`]; [`Syscalls`] is the real one.
//! Only threads this service promoted are ever put back: a thread that was real-time already
//! (the framework's RT-UI, an app's own choice) is left as it is, and so is one whose policy
//! someone else changed while it was promoted.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use superpass_core::{Role, Tid};

/// The SCHED_FIFO priority RT-UI uses, the lowest (Android's RT-UI uses 1 too).
pub const FIFO_PRIORITY: i32 = 1;

/// `SCHED_DEADLINE`, which the libc crate does not name.
const SCHED_DEADLINE: i32 = 6;

/// A positive errno.
pub type Errno = i32;

/// A thread's scheduling policy, real-time priority and nice value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sched {
    /// The policy as `sched_getscheduler` returns it, `SCHED_RESET_ON_FORK` included.
    pub policy: i32,
    /// The real-time priority (0 under a fair policy).
    pub rt_priority: i32,
    /// The nice value (kept by the kernel while the thread is real-time).
    pub nice: i32,
}

impl Sched {
    /// A fair thread: `policy` (SCHED_OTHER, SCHED_BATCH or SCHED_IDLE) at `nice`.
    pub const fn fair(policy: i32, nice: i32) -> Self {
        Self {
            policy,
            rt_priority: 0,
            nice,
        }
    }

    /// What RT-UI makes a thread: SCHED_FIFO 1 at the nice value it keeps from before.
    pub const fn fifo(nice: i32) -> Self {
        Self {
            policy: libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK,
            rt_priority: FIFO_PRIORITY,
            nice,
        }
    }

    /// The policy without `SCHED_RESET_ON_FORK`.
    pub const fn base_policy(&self) -> i32 {
        self.policy & !libc::SCHED_RESET_ON_FORK
    }

    /// True under SCHED_FIFO, SCHED_RR or SCHED_DEADLINE.
    pub const fn is_real_time(&self) -> bool {
        matches!(
            self.base_policy(),
            libc::SCHED_FIFO | libc::SCHED_RR | SCHED_DEADLINE
        )
    }

    /// True if the thread is as RT-UI left it: SCHED_FIFO at [`FIFO_PRIORITY`].
    const fn is_rt_ui(&self) -> bool {
        self.base_policy() == libc::SCHED_FIFO && self.rt_priority == FIFO_PRIORITY
    }
}

/// Reads and changes threads' scheduling; [`Syscalls`] on a device, a recording fake in tests.
pub trait Scheduler: Send {
    /// The thread's policy, priority and nice value.
    fn get(&self, tid: Tid) -> Result<Sched, Errno>;

    /// Makes the thread SCHED_FIFO at [`FIFO_PRIORITY`], reset on fork.
    fn set_fifo(&self, tid: Tid) -> Result<(), Errno>;

    /// Puts the thread back under the fair `policy` at `nice`.
    fn set_fair(&self, tid: Tid, policy: i32, nice: i32) -> Result<(), Errno>;
}

/// The real [`Scheduler`]: `sched_getscheduler`, `sched_getparam`, `getpriority`,
/// `sched_setscheduler` and `setpriority` on the thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Syscalls;

impl Scheduler for Syscalls {
    fn get(&self, tid: Tid) -> Result<Sched, Errno> {
        Ok(Sched {
            policy: sys::policy(tid)?,
            rt_priority: sys::rt_priority(tid)?,
            nice: sys::nice(tid)?,
        })
    }

    fn set_fifo(&self, tid: Tid) -> Result<(), Errno> {
        sys::set_policy(
            tid,
            libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK,
            FIFO_PRIORITY,
        )
    }

    fn set_fair(&self, tid: Tid, policy: i32, nice: i32) -> Result<(), Errno> {
        sys::set_policy(tid, policy, 0)?;
        sys::set_nice(tid, nice)
    }
}

/// The system calls behind [`Syscalls`]: the only unsafe code of RT-UI.
mod sys {
    use super::{Errno, Tid};

    fn last_errno() -> Errno {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)
    }

    fn check(rc: libc::c_int) -> Result<libc::c_int, Errno> {
        if rc < 0 {
            Err(last_errno())
        } else {
            Ok(rc)
        }
    }

    pub(super) fn policy(tid: Tid) -> Result<i32, Errno> {
        // SAFETY: takes a thread id by value and touches no memory of ours; a tid that names
        // no thread only makes it fail with ESRCH.
        check(unsafe { libc::sched_getscheduler(tid) })
    }

    pub(super) fn rt_priority(tid: Tid) -> Result<i32, Errno> {
        let mut p = libc::sched_param { sched_priority: 0 };
        // SAFETY: `p` is a valid, initialised `sched_param` the call writes into and nothing
        // else refers to; a tid that names no thread only makes it fail.
        check(unsafe { libc::sched_getparam(tid, &mut p) })?;
        Ok(p.sched_priority)
    }

    pub(super) fn nice(tid: Tid) -> Result<i32, Errno> {
        // The raw system call answers 20 - nice (1 to 40), so unlike libc's getpriority() its
        // -1 can only be an error.
        // SAFETY: getpriority takes two integers and touches no memory of ours.
        let r = unsafe { libc::syscall(libc::SYS_getpriority, libc::PRIO_PROCESS, tid) };
        if r < 0 {
            return Err(last_errno());
        }
        Ok(20 - r as i32)
    }

    pub(super) fn set_policy(tid: Tid, policy: i32, priority: i32) -> Result<(), Errno> {
        let p = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: `p` is a valid `sched_param` the call only reads; a tid that names no thread
        // only makes it fail.
        check(unsafe { libc::sched_setscheduler(tid, policy, &p) }).map(drop)
    }

    pub(super) fn set_nice(tid: Tid, nice: i32) -> Result<(), Errno> {
        let who = libc::id_t::try_from(tid).map_err(|_| libc::ESRCH)?;
        // SAFETY: setpriority takes integers and touches no memory of ours.
        check(unsafe { libc::setpriority(libc::PRIO_PROCESS, who, nice) }).map(drop)
    }
}

/// Why a thread RT-UI wants is not SCHED_FIFO by this service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// It was real-time already: someone else's, left as it is.
    RealTime,
    /// Reading or changing its scheduling failed.
    Failed(Errno),
}

/// The RT-UI state: whether it is on, and which threads it promoted from what.
pub struct RtUi {
    sched: Box<dyn Scheduler>,
    on: bool,
    /// The UI and render threads of the critical set at the last sync (none while off).
    wanted: BTreeSet<Tid>,
    /// Threads this service made SCHED_FIFO, with what they had before.
    promoted: BTreeMap<Tid, Sched>,
    /// Wanted threads that are not promoted, and why.
    refused: BTreeMap<Tid, Refusal>,
    /// Promoted threads that left but could not be put back (retried at every sync).
    not_restored: BTreeMap<Tid, Errno>,
}

impl RtUi {
    /// RT-UI over `sched`, on or off; nothing changes until the first [`sync`](Self::sync).
    pub fn new(sched: Box<dyn Scheduler>, on: bool) -> Self {
        Self {
            sched,
            on,
            wanted: BTreeSet::new(),
            promoted: BTreeMap::new(),
            refused: BTreeMap::new(),
            not_restored: BTreeMap::new(),
        }
    }

    /// Whether the setting is on.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Turns the setting on or off and applies it to the critical set `set`.
    pub fn set_on(&mut self, on: bool, set: &[(Tid, Role)]) {
        self.on = on;
        self.sync(set);
    }

    /// Brings the threads in line with `set`, the merged critical set: while on, its UI and
    /// render threads are promoted; every promoted thread no longer among them is put back.
    /// A thread that is gone (ESRCH) is simply forgotten.
    pub fn sync(&mut self, set: &[(Tid, Role)]) {
        self.wanted = if self.on {
            set.iter()
                .filter(|(_, role)| matches!(role, Role::Ui | Role::Render))
                .map(|&(tid, _)| tid)
                .collect()
        } else {
            BTreeSet::new()
        };
        let leaving: Vec<Tid> = self
            .promoted
            .keys()
            .copied()
            .filter(|t| !self.wanted.contains(t))
            .collect();
        for tid in leaving {
            match self.restore(tid) {
                Ok(()) | Err(libc::ESRCH) => {
                    self.promoted.remove(&tid);
                    self.not_restored.remove(&tid);
                }
                Err(e) => {
                    if self.not_restored.insert(tid, e) != Some(e) {
                        log::warn!("RT-UI: cannot put tid {tid} back: {}", errno_text(e));
                    }
                }
            }
        }
        let mut refused = BTreeMap::new();
        let wanted: Vec<Tid> = self.wanted.iter().copied().collect();
        for tid in wanted {
            if self.promoted.contains_key(&tid) {
                continue;
            }
            match self.promote(tid) {
                Ok(Some(prior)) => {
                    log::info!(
                        "RT-UI: tid {tid} SCHED_FIFO {FIFO_PRIORITY} (was policy {} nice {})",
                        prior.base_policy(),
                        prior.nice
                    );
                    self.promoted.insert(tid, prior);
                }
                Ok(None) => {}
                Err(r) => {
                    if self.refused.get(&tid) != Some(&r) {
                        match r {
                            Refusal::RealTime => {
                                log::info!("RT-UI: tid {tid} is real-time already: left as it is")
                            }
                            Refusal::Failed(e) => log::warn!(
                                "RT-UI: cannot make tid {tid} SCHED_FIFO: {}",
                                errno_text(e)
                            ),
                        }
                    }
                    refused.insert(tid, r);
                }
            }
        }
        self.refused = refused;
    }

    /// Promotes `tid`; `Ok(None)` if it is gone.
    fn promote(&self, tid: Tid) -> Result<Option<Sched>, Refusal> {
        let prior = match self.sched.get(tid) {
            Ok(s) => s,
            Err(libc::ESRCH) => return Ok(None),
            Err(e) => return Err(Refusal::Failed(e)),
        };
        if prior.is_real_time() {
            return Err(Refusal::RealTime);
        }
        match self.sched.set_fifo(tid) {
            Ok(()) => Ok(Some(prior)),
            Err(libc::ESRCH) => Ok(None),
            Err(e) => Err(Refusal::Failed(e)),
        }
    }

    /// Puts a promoted `tid` back, unless someone else changed its policy since.
    fn restore(&self, tid: Tid) -> Result<(), Errno> {
        let Some(prior) = self.promoted.get(&tid).copied() else {
            return Ok(());
        };
        let now = self.sched.get(tid)?;
        if !now.is_rt_ui() {
            log::info!("RT-UI: tid {tid} was rescheduled by someone else: left as it is");
            return Ok(());
        }
        // The kernel keeps a FIFO thread's nice value, so `now.nice` is the one recorded unless
        // someone with a say changed it meanwhile (the framework moving the app off the top):
        // theirs wins.
        if now.nice != prior.nice {
            log::info!(
                "RT-UI: tid {tid}'s nice went from {} to {} while FIFO: keeping {}",
                prior.nice,
                now.nice,
                now.nice
            );
        }
        self.sched.set_fair(tid, prior.policy, now.nice)?;
        log::info!(
            "RT-UI: tid {tid} back to policy {} nice {}",
            prior.base_policy(),
            now.nice
        );
        Ok(())
    }

    /// How RT-UI stands after the last sync.
    pub fn status(&self) -> Status {
        Status {
            on: self.on,
            threads: self.wanted.len(),
            fifo: self
                .wanted
                .iter()
                .filter(|&t| self.promoted.contains_key(t))
                .count(),
            already_real_time: self
                .refused
                .iter()
                .filter(|(_, r)| **r == Refusal::RealTime)
                .map(|(&t, _)| t)
                .collect(),
            failed: thread_errors(self.refused.iter().filter_map(|(&t, r)| match r {
                Refusal::Failed(e) => Some((t, *e)),
                Refusal::RealTime => None,
            })),
            not_restored: thread_errors(self.not_restored.iter().map(|(&t, &e)| (t, e))),
        }
    }

    /// Puts back every thread this service promoted, keeping the setting (the service is
    /// going away).
    pub fn release(&mut self) {
        let on = self.on;
        self.on = false;
        self.sync(&[]);
        self.on = on;
    }

    /// The threads this service holds at SCHED_FIFO right now.
    pub fn promoted(&self) -> Vec<Tid> {
        self.promoted.keys().copied().collect()
    }
}

/// How RT-UI stands: what `fifo` prints and the report shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    /// Whether the setting is on.
    pub on: bool,
    /// Critical threads with the UI or RENDER role (none while off).
    pub threads: usize,
    /// Of those, the ones this service made SCHED_FIFO.
    pub fifo: usize,
    /// Of those, the ones already real-time, left as they are.
    pub already_real_time: Vec<Tid>,
    /// Of those, the ones that could not be made SCHED_FIFO (tried again at every change).
    pub failed: Vec<ThreadError>,
    /// Threads that left but are still SCHED_FIFO: putting them back failed (tried again at
    /// every change).
    pub not_restored: Vec<ThreadError>,
}

/// A thread and what went wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadError {
    /// The thread.
    pub tid: Tid,
    /// The errno, by name, with what it means here.
    pub error: String,
}

impl Status {
    /// One line: `on, 2 of 2 UI and render threads SCHED_FIFO 1`, with any failure by errno.
    pub fn summary(&self) -> String {
        let mut s = if self.on {
            format!(
                "on, {} of {} UI and render threads SCHED_FIFO {FIFO_PRIORITY}",
                self.fifo, self.threads
            )
        } else {
            "off".to_string()
        };
        if !self.already_real_time.is_empty() {
            s += &format!(
                ", {} real-time already (left as {}): {}",
                self.already_real_time.len(),
                if self.already_real_time.len() == 1 {
                    "it is"
                } else {
                    "they are"
                },
                tids(self.already_real_time.iter().copied())
            );
        }
        for (error, list) in by_error(&self.failed) {
            s += &format!("; failed for {list}: {error}");
        }
        for (error, list) in by_error(&self.not_restored) {
            s += &format!("; still SCHED_FIFO after leaving, {list}: {error}");
        }
        s
    }
}

fn thread_errors(errors: impl Iterator<Item = (Tid, Errno)>) -> Vec<ThreadError> {
    errors
        .map(|(tid, e)| ThreadError {
            tid,
            error: errno_text(e),
        })
        .collect()
}

fn tids(t: impl Iterator<Item = Tid>) -> String {
    let v: Vec<String> = t.map(|t| t.to_string()).collect();
    format!(
        "tid{} {}",
        if v.len() == 1 { "" } else { "s" },
        v.join(", ")
    )
}

/// Failures grouped by error, in order of first appearance.
fn by_error(errors: &[ThreadError]) -> Vec<(String, String)> {
    let mut groups: Vec<(String, Vec<Tid>)> = Vec::new();
    for e in errors {
        match groups.iter_mut().find(|(err, _)| *err == e.error) {
            Some((_, v)) => v.push(e.tid),
            None => groups.push((e.error.clone(), vec![e.tid])),
        }
    }
    groups
        .into_iter()
        .map(|(err, v)| (err, tids(v.into_iter())))
        .collect()
}

/// An errno by name, with what it means for RT-UI.
pub fn errno_text(e: Errno) -> String {
    match e {
        libc::EPERM => "EPERM (the service needs CAP_SYS_NICE)".into(),
        libc::EACCES => "EACCES (SELinux denies the service setsched on the thread)".into(),
        libc::EINVAL => "EINVAL (the kernel refused SCHED_FIFO)".into(),
        libc::ESRCH => "ESRCH (no such thread)".into(),
        e => {
            let text = std::io::Error::from_raw_os_error(e).to_string();
            let words = text.split(" (os error").next().unwrap_or(&text);
            format!("errno {e} ({words})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the fake saw, in order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Call {
        Fifo(Tid),
        Fair(Tid, i32, i32),
    }

    /// A fake kernel: threads by tid, calls recorded, errors injected per tid.
    #[derive(Default)]
    struct World {
        threads: BTreeMap<Tid, Sched>,
        calls: Vec<Call>,
        fail_set: BTreeMap<Tid, Errno>,
    }

    #[derive(Clone, Default)]
    struct Fake(Arc<Mutex<World>>);

    impl Fake {
        fn with(threads: &[(Tid, Sched)]) -> Self {
            let f = Self::default();
            f.world().threads = threads.iter().copied().collect();
            f
        }
        fn world(&self) -> std::sync::MutexGuard<'_, World> {
            self.0.lock().unwrap()
        }
        fn calls(&self) -> Vec<Call> {
            std::mem::take(&mut self.world().calls)
        }
        fn sched(&self, tid: Tid) -> Sched {
            self.world().threads[&tid]
        }
    }

    impl Scheduler for Fake {
        fn get(&self, tid: Tid) -> Result<Sched, Errno> {
            self.world().threads.get(&tid).copied().ok_or(libc::ESRCH)
        }
        fn set_fifo(&self, tid: Tid) -> Result<(), Errno> {
            let mut w = self.world();
            if let Some(&e) = w.fail_set.get(&tid) {
                return Err(e);
            }
            let t = w.threads.get_mut(&tid).ok_or(libc::ESRCH)?;
            *t = Sched::fifo(t.nice);
            w.calls.push(Call::Fifo(tid));
            Ok(())
        }
        fn set_fair(&self, tid: Tid, policy: i32, nice: i32) -> Result<(), Errno> {
            let mut w = self.world();
            if let Some(&e) = w.fail_set.get(&tid) {
                return Err(e);
            }
            let t = w.threads.get_mut(&tid).ok_or(libc::ESRCH)?;
            *t = Sched::fair(policy, nice);
            w.calls.push(Call::Fair(tid, policy, nice));
            Ok(())
        }
    }

    const OTHER: i32 = libc::SCHED_OTHER;
    const UI: Role = Role::Ui;
    const RENDER: Role = Role::Render;

    fn rtui(fake: &Fake, on: bool) -> RtUi {
        RtUi::new(Box::new(fake.clone()), on)
    }

    #[test]
    fn off_by_default_changes_nothing() {
        let fake = Fake::with(&[(100, Sched::fair(OTHER, -10))]);
        let mut r = rtui(&fake, false);
        r.sync(&[(100, UI)]);
        assert!(fake.calls().is_empty());
        assert_eq!(r.status().summary(), "off");
    }

    #[test]
    fn promotes_ui_and_render_threads_only_and_restores_them() {
        let fake = Fake::with(&[
            (100, Sched::fair(OTHER, -10)),
            (101, Sched::fair(libc::SCHED_BATCH, -4)),
            (102, Sched::fair(OTHER, 0)),
        ]);
        let mut r = rtui(&fake, false);
        let set = [(100, UI), (101, RENDER), (102, Role::Other)];
        r.set_on(true, &set);
        assert_eq!(fake.calls(), [Call::Fifo(100), Call::Fifo(101)]);
        assert_eq!(fake.sched(100), Sched::fifo(-10));
        assert_eq!(fake.sched(102), Sched::fair(OTHER, 0), "OTHER stays fair");
        assert_eq!(
            r.status().summary(),
            "on, 2 of 2 UI and render threads SCHED_FIFO 1"
        );
        // The same set again: nothing to do.
        r.sync(&set);
        assert!(fake.calls().is_empty());
        // Off: both back, each to its own policy and nice.
        r.set_on(false, &set);
        assert_eq!(
            fake.calls(),
            [
                Call::Fair(100, OTHER, -10),
                Call::Fair(101, libc::SCHED_BATCH, -4)
            ]
        );
        assert!(r.promoted().is_empty());
        assert_eq!(r.status().summary(), "off");
    }

    #[test]
    fn an_app_switch_restores_the_old_app_and_promotes_the_new() {
        let fake = Fake::with(&[
            (100, Sched::fair(OTHER, -10)),
            (101, Sched::fair(OTHER, -10)),
            (200, Sched::fair(OTHER, -10)),
            (201, Sched::fair(OTHER, -10)),
        ]);
        let mut r = rtui(&fake, true);
        r.sync(&[(100, UI), (101, RENDER)]);
        fake.calls();
        r.sync(&[(200, UI), (201, RENDER)]);
        assert_eq!(
            fake.calls(),
            [
                Call::Fair(100, OTHER, -10),
                Call::Fair(101, OTHER, -10),
                Call::Fifo(200),
                Call::Fifo(201)
            ]
        );
        assert_eq!(r.promoted(), [200, 201]);
        // Unregistering the RenderThread puts it back; the UI thread stays.
        r.sync(&[(200, UI)]);
        assert_eq!(fake.calls(), [Call::Fair(201, OTHER, -10)]);
        // A role change to OTHER takes it out of RT-UI as well.
        r.sync(&[(200, Role::Other)]);
        assert_eq!(fake.calls(), [Call::Fair(200, OTHER, -10)]);
    }

    #[test]
    fn a_thread_gone_is_forgotten_without_error() {
        let fake = Fake::with(&[(100, Sched::fair(OTHER, -10))]);
        let mut r = rtui(&fake, true);
        r.sync(&[(100, UI), (555, RENDER)]);
        assert_eq!(fake.calls(), [Call::Fifo(100)]);
        assert!(r.status().failed.is_empty(), "ESRCH is no failure");
        fake.world().threads.remove(&100);
        r.sync(&[]);
        assert!(fake.calls().is_empty());
        assert!(r.promoted().is_empty());
        assert!(r.status().not_restored.is_empty());
    }

    #[test]
    fn eperm_is_reported_and_retried() {
        let fake = Fake::with(&[
            (100, Sched::fair(OTHER, -10)),
            (101, Sched::fair(OTHER, -10)),
        ]);
        fake.world().fail_set = [(100, libc::EPERM), (101, libc::EPERM)].into();
        let mut r = rtui(&fake, true);
        let set = [(100, UI), (101, RENDER)];
        r.sync(&set);
        assert!(fake.calls().is_empty());
        let s = r.status();
        assert_eq!((s.on, s.threads, s.fifo, s.failed.len()), (true, 2, 0, 2));
        assert_eq!(
            s.summary(),
            "on, 0 of 2 UI and render threads SCHED_FIFO 1; failed for tids 100, 101: \
             EPERM (the service needs CAP_SYS_NICE)"
        );
        // Granted later: the next change promotes them.
        fake.world().fail_set.clear();
        r.sync(&set);
        assert_eq!(fake.calls(), [Call::Fifo(100), Call::Fifo(101)]);
        assert!(r.status().failed.is_empty());
    }

    #[test]
    fn real_time_threads_are_left_alone() {
        let rr = Sched {
            policy: libc::SCHED_RR,
            rt_priority: 3,
            nice: 0,
        };
        let fake = Fake::with(&[(100, Sched::fifo(-10)), (101, rr)]);
        let mut r = rtui(&fake, true);
        r.sync(&[(100, UI), (101, RENDER)]);
        r.set_on(false, &[(100, UI), (101, RENDER)]);
        assert!(fake.calls().is_empty(), "never promoted, so never put back");
        assert_eq!(fake.sched(100), Sched::fifo(-10));
        r.set_on(true, &[(100, UI)]);
        assert_eq!(
            r.status().summary(),
            "on, 0 of 1 UI and render threads SCHED_FIFO 1, 1 real-time already (left as it \
             is): tid 100"
        );
    }

    #[test]
    fn someone_elses_change_wins() {
        let fake = Fake::with(&[
            (100, Sched::fair(OTHER, -10)),
            (101, Sched::fair(OTHER, -10)),
        ]);
        let mut r = rtui(&fake, true);
        r.sync(&[(100, UI), (101, RENDER)]);
        fake.calls();
        // The framework moved 100 back to fair itself, and lowered 101's nice while FIFO.
        fake.world().threads.insert(100, Sched::fair(OTHER, 0));
        fake.world().threads.insert(101, Sched::fifo(0));
        r.sync(&[]);
        assert_eq!(fake.calls(), [Call::Fair(101, OTHER, 0)]);
        assert_eq!(fake.sched(100), Sched::fair(OTHER, 0));
    }

    #[test]
    fn a_failed_restore_is_reported_and_retried() {
        let fake = Fake::with(&[(100, Sched::fair(OTHER, -10))]);
        let mut r = rtui(&fake, true);
        r.sync(&[(100, UI)]);
        fake.calls();
        fake.world().fail_set.insert(100, libc::EACCES);
        r.set_on(false, &[(100, UI)]);
        assert!(fake.calls().is_empty());
        assert_eq!(r.promoted(), [100]);
        let s = r.status().summary();
        assert!(
            s.starts_with("off; still SCHED_FIFO after leaving, tid 100: EACCES"),
            "{s}"
        );
        fake.world().fail_set.clear();
        r.sync(&[(100, UI)]);
        assert_eq!(fake.calls(), [Call::Fair(100, OTHER, -10)]);
        assert_eq!(r.status().summary(), "off");
    }

    #[test]
    fn errnos_read_as_names() {
        assert!(errno_text(libc::EPERM).contains("CAP_SYS_NICE"));
        assert!(errno_text(libc::EACCES).contains("SELinux"));
        let other = errno_text(libc::EIO);
        assert!(
            other.starts_with("errno 5 (") && !other.contains("os error"),
            "{other}"
        );
    }

    /// Fields of /proc/self/task/<tid>/stat after the command name: 19 nice, 40 rt_priority,
    /// 41 policy (counted from 1, as in proc(5)).
    fn proc_stat(tid: Tid) -> (i32, i32, i32) {
        let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        let f: Vec<i32> = s
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        (f[19 - 3], f[40 - 3], f[41 - 3])
    }

    /// The real system calls on a thread of this test: promoted, checked in /proc, put back.
    #[test]
    fn real_syscalls_promote_and_restore_a_thread() {
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid takes no arguments and cannot fail.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as Tid;
            tid_tx.send(tid).unwrap();
            let _ = done_rx.recv();
        });
        let tid = tid_rx.recv().unwrap();
        // A nice value of our own to restore (raising it needs no privilege).
        let nice = sys::nice(tid).unwrap().max(5);
        sys::set_nice(tid, nice).unwrap();
        let before = Syscalls.get(tid).unwrap();
        assert_eq!(before, Sched::fair(OTHER, nice));
        let mut r = RtUi::new(Box::new(Syscalls), true);
        r.sync(&[(tid, UI)]);
        let s = r.status();
        if s.failed.iter().any(|f| f.error.starts_with("EPERM")) {
            println!("skipped: this process may not use SCHED_FIFO (no CAP_SYS_NICE): {s:?}");
            done_tx.send(()).unwrap();
            t.join().unwrap();
            return;
        }
        assert_eq!(s.fifo, 1, "{s:?}");
        assert_eq!(
            proc_stat(tid),
            (nice, FIFO_PRIORITY, libc::SCHED_FIFO),
            "SCHED_FIFO 1, the nice value kept"
        );
        assert_ne!(sys::policy(tid).unwrap() & libc::SCHED_RESET_ON_FORK, 0);
        r.sync(&[]);
        assert_eq!(proc_stat(tid), (nice, 0, libc::SCHED_OTHER));
        assert_eq!(Syscalls.get(tid).unwrap(), before);
        done_tx.send(()).unwrap();
        t.join().unwrap();
        // A thread that is gone: ESRCH, which RT-UI takes for "forget it". The kernel clears
        // the tid join waits for a little before the exiting thread is unhashed.
        let gone = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Syscalls.get(tid).err() == Some(libc::ESRCH)
        });
        assert!(gone, "tid {tid} still answers after join");
    }
}
