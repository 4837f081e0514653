//! Workloads: scenario files (TOML) describing threads, their scripted programs and shared locks.
//!
//! A thread runs its `program` in a loop. Each op either takes CPU time (`compute`), blocks
//! (`sleep`, `lock`, `wait_vsync`, `wait`, `binder_call`, `binder_serve`) or happens instantly
//! (`unlock`, `signal`, frame markers, `branch`). Ops run only while the thread is on a CPU.

use crate::locks::visibility::FutexOwner;
use crate::platform::Platform;
use serde::{Deserialize, Serialize};

/// A duration in microseconds: a fixed value, a uniform range `[lo, hi]`, or `{ exp = mean }`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Dist {
    /// Always this many microseconds.
    Fixed(f64),
    /// Uniform between the two bounds, in microseconds.
    Range([f64; 2]),
    /// Exponential with this mean, in microseconds (capped at 20 means).
    Exp {
        /// Mean in microseconds.
        exp: f64,
    },
}

/// One step of a thread's program, as written in a scenario file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OpSpec {
    /// Run on a CPU for this much work, in microseconds on a capacity-1024 core.
    Compute {
        /// Work in microseconds at capacity 1024.
        us: Dist,
    },
    /// Sleep (I/O, timers) for this long.
    Sleep {
        /// Sleep time in microseconds.
        us: Dist,
    },
    /// Acquire a lock (write side for an rwsem unless `read`).
    Lock {
        /// Lock name from `[[locks]]`.
        lock: String,
        /// Take an rwsem for reading.
        #[serde(default)]
        read: bool,
    },
    /// Release a lock held by this thread.
    Unlock {
        /// Lock name from `[[locks]]`.
        lock: String,
    },
    /// Block until the next vsync.
    WaitVsync,
    /// Start of `Choreographer#doFrame` (registers a frame against the last vsync).
    DoFrameBegin,
    /// End of `Choreographer#doFrame`.
    DoFrameEnd,
    /// Start of RenderThread's `DrawFrame`.
    DrawFrameBegin,
    /// End of `DrawFrame`: the frame is complete; janky if past its deadline.
    DrawFrameEnd,
    /// Post one token to another thread (by name).
    Signal {
        /// Target thread name.
        target: String,
        /// Block until the target takes the token, as the UI thread blocks in
        /// `DrawFrameTask::postAndWait` (frameworks/base/libs/hwui/renderthread/DrawFrameTask.cpp)
        /// until the RenderThread syncs its frame: the UI thread never runs more than one frame
        /// ahead of the RenderThread.
        #[serde(default)]
        sync: bool,
    },
    /// Block until a token was posted to this thread.
    Wait,
    /// A synchronous binder call into a pool: block until a server thread replies.
    BinderCall {
        /// Binder pool name (server threads declare `pool`).
        pool: String,
    },
    /// Server side: block until a transaction for this thread's pool arrives.
    BinderServe,
    /// Server side: reply to the transaction being served, waking the caller.
    BinderReply,
    /// With probability `p` run the next `skip` ops, otherwise jump over them.
    Branch {
        /// Probability of running the guarded ops.
        p: f64,
        /// How many following ops are guarded.
        skip: u32,
    },
}

/// A lock declared by a scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LockSpec {
    /// Name used by `lock`/`unlock` ops.
    pub name: String,
    /// `mutex`, `rwsem` or `futex`.
    pub kind: LockType,
    /// For a futex, what the kernel can see of its owner: `pi` (a PI futex), `hinted` (an
    /// owner-hinted plain futex) or `none`. Required for futexes, refused for kernel locks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<FutexOwner>,
}

/// The lock families the simulator models.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LockType {
    /// Kernel `struct mutex` with FIFO waiters and handoff to the first waiter.
    Mutex,
    /// Kernel `struct rw_semaphore`: shared readers, exclusive writers, handoff on release.
    Rwsem,
    /// A user-space lock on a futex word. With `owner = "pi"` a PI futex (an `rt_mutex`:
    /// handoff to the top waiter); otherwise a plain unfair lock: release frees it and wakes
    /// one waiter, and arrivals may barge.
    Futex,
}

/// Where the top app's own background-priority threads (nice ≥ 10) may run.
///
/// AOSP keeps them in their process's cpuset: `androidSetThreadPriority` (libutils) and ART's
/// `PaletteSchedSetPriority` apply only `SCHED_SP_BACKGROUND` for nice ≥ 10, whose profiles
/// (`HighEnergySaving`, `LowIoPriority`, `TimerSlackHigh` in task_profiles.json) change the cpu
/// controller group, I/O priority and timer slack, not the cpuset; and when the process moves
/// to top-app, `android_os_Process_setProcessGroup` (frameworks/base
/// core/jni/android_util_Process.cpp) gives its nice ≥ 10 threads `ProcessCapacityMax`, the
/// top-app cpuset (all cores). The cpu controller's background group (its shares or uclamp)
/// is **not modelled**.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// AOSP: the top-app cpuset (every core).
    #[default]
    Aosp,
    /// The simulator's earlier assumption: the `background` cpuset (little cores).
    Little,
}

impl Placement {
    /// Parses `aosp` or `little`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "aosp" => Ok(Placement::Aosp),
            "little" => Ok(Placement::Little),
            _ => Err(format!("unknown placement `{s}`; placements: aosp, little")),
        }
    }

    /// The name `parse` accepts.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Aosp => "aosp",
            Placement::Little => "little",
        }
    }

    /// The cpuset group a top-app thread at nice ≥ 10 runs in.
    pub fn group(self) -> &'static str {
        match self {
            Placement::Aosp => "top-app",
            Placement::Little => "background",
        }
    }
}

/// Which critical role a thread has for the policies.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ThreadRole {
    /// The app's UI (main) thread.
    Ui,
    /// The app's RenderThread.
    Render,
    /// Anything else.
    #[default]
    Other,
}

/// A thread (or `count` identical threads) in a scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThreadSpec {
    /// Thread name (`-N` is appended when `count` > 1).
    pub name: String,
    /// Process name; threads with the same process share a pid.
    pub process: String,
    /// cpuset group name.
    #[serde(default = "default_group")]
    pub group: String,
    /// Nice value for SCHED_OTHER.
    #[serde(default)]
    pub nice: i32,
    /// SCHED_FIFO priority (1..99); 0 means SCHED_OTHER.
    #[serde(default)]
    pub rt_prio: u32,
    /// Role: `ui` and `render` threads are the critical threads.
    #[serde(default)]
    pub role: ThreadRole,
    /// Prefer high-capacity CPUs at wakeup (uclamp.min / prefer-idle, as top-app gets).
    #[serde(default)]
    pub prefer_big: bool,
    /// Number of identical threads.
    #[serde(default = "one")]
    pub count: u32,
    /// Binder pool this thread serves, if it is a binder server thread.
    #[serde(default)]
    pub pool: Option<String>,
    /// Delay before the first op, in microseconds.
    #[serde(default)]
    pub start_us: Option<Dist>,
    /// The program, run in a loop.
    pub program: Vec<OpSpec>,
}

fn default_group() -> String {
    "top-app".into()
}
fn one() -> u32 {
    1
}

/// A whole scenario file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    /// Scenario name (what `--scenario` matches).
    pub name: String,
    /// One-paragraph description.
    #[serde(default)]
    pub description: String,
    /// Where the situation is documented (citation).
    #[serde(default)]
    pub source: String,
    /// Display refresh rate; `None` for no vsync.
    #[serde(default)]
    pub vsync_hz: Option<f64>,
    /// A frame's deadline, in vsync periods after its vsync.
    #[serde(default = "one_f")]
    pub deadline_periods: f64,
    /// Simulated time excluded from metrics at the start, in milliseconds.
    #[serde(default = "warmup")]
    pub warmup_ms: f64,
    /// Platform; the Pixel 8-like default when absent.
    #[serde(default)]
    pub platform: Platform,
    /// Where the foreground app's background-priority threads may run.
    #[serde(default)]
    pub placement: Placement,
    /// Locks.
    #[serde(default)]
    pub locks: Vec<LockSpec>,
    /// Threads.
    pub threads: Vec<ThreadSpec>,
}

fn one_f() -> f64 {
    1.0
}
fn warmup() -> f64 {
    200.0
}

const SCROLL: &str = include_str!("../scenarios/scroll.toml");
const LAUNCH: &str = include_str!("../scenarios/app-launch.toml");
const HEAVY: &str = include_str!("../scenarios/heavy-background.toml");
const BINDER: &str = include_str!("../scenarios/binder-heavy.toml");
const BINDER_POOL: &str = include_str!("../scenarios/binder-pool.toml");
const STORM: &str = include_str!("../scenarios/rwsem-storm.toml");
const PAPER: &str = include_str!("../scenarios/paper-scroll.toml");
const FRAMES_60: &str = include_str!("../scenarios/frames-60.toml");
const FRAMES_120: &str = include_str!("../scenarios/frames-120.toml");

/// Names of the built-in scenarios, in report order.
pub const SCENARIOS: &[&str] = &[
    "scroll-60",
    "scroll-90",
    "scroll-120",
    "app-launch",
    "heavy-background",
    "binder-heavy",
    "binder-pool",
    "rwsem-storm",
    "paper-scroll-60",
    "paper-scroll-120",
    "frames-60",
    "frames-120",
];

impl Scenario {
    /// Parses a scenario from TOML text.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| e.to_string())?;
        s.validate()?;
        Ok(s)
    }

    /// A built-in scenario by name (`scroll-60`, `scroll-90`, `scroll-120`, ...).
    pub fn builtin(name: &str) -> Result<Self, String> {
        let (text, hz) = match name {
            "scroll-60" => (SCROLL, Some(60.0)),
            "scroll-90" => (SCROLL, Some(90.0)),
            "scroll-120" | "scroll" => (SCROLL, Some(120.0)),
            "app-launch" => (LAUNCH, None),
            "heavy-background" => (HEAVY, None),
            "binder-heavy" => (BINDER, None),
            "binder-pool" => (BINDER_POOL, None),
            "rwsem-storm" => (STORM, None),
            "paper-scroll-60" => (PAPER, Some(60.0)),
            "paper-scroll-120" => (PAPER, Some(120.0)),
            "frames-60" => (FRAMES_60, None),
            "frames-120" => (FRAMES_120, None),
            _ => {
                return Err(format!(
                    "unknown scenario `{name}`; built-in scenarios: {}",
                    SCENARIOS.join(", ")
                ))
            }
        };
        let mut s = Self::from_toml(text)?;
        if let Some(hz) = hz {
            s.vsync_hz = Some(hz);
            s.name = name.into();
        }
        Ok(s)
    }

    /// The scenario's TOML text for a built-in name, for `--dump`.
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        Some(match name {
            "scroll-60" | "scroll-90" | "scroll-120" | "scroll" => SCROLL,
            "app-launch" => LAUNCH,
            "heavy-background" => HEAVY,
            "binder-heavy" => BINDER,
            "binder-pool" => BINDER_POOL,
            "rwsem-storm" => STORM,
            "paper-scroll-60" | "paper-scroll-120" => PAPER,
            "frames-60" => FRAMES_60,
            "frames-120" => FRAMES_120,
            _ => return None,
        })
    }

    /// Checks names and program shapes.
    pub fn validate(&self) -> Result<(), String> {
        let p = &self.platform;
        if p.nr_cpus() == 0 || p.nr_cpus() > 64 {
            return Err("platform needs 1..=64 CPUs".into());
        }
        let names: Vec<String> = self.expanded_names();
        for l in &self.locks {
            match (l.kind, l.owner) {
                (LockType::Futex, None) => {
                    return Err(format!(
                        "lock `{}`: a futex needs `owner = \"pi\" | \"hinted\" | \"none\"` (what the kernel can see)",
                        l.name
                    ))
                }
                (LockType::Mutex | LockType::Rwsem, Some(_)) => {
                    return Err(format!(
                        "lock `{}`: `owner` is for futexes (the kernel sees a kernel lock's owner)",
                        l.name
                    ))
                }
                _ => {}
            }
        }
        for t in &self.threads {
            if p.group_index(&t.group).is_none() {
                return Err(format!("thread `{}`: unknown group `{}`", t.name, t.group));
            }
            if t.rt_prio > 99 {
                return Err(format!("thread `{}`: rt_prio must be 0..=99", t.name));
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(format!("thread `{}`: nice must be -20..=19", t.name));
            }
            if !t.program.iter().any(|o| {
                matches!(
                    o,
                    OpSpec::Compute { .. }
                        | OpSpec::Sleep { .. }
                        | OpSpec::WaitVsync
                        | OpSpec::Wait
                        | OpSpec::BinderServe
                )
            }) {
                return Err(format!(
                    "thread `{}`: program needs an op that takes time or blocks",
                    t.name
                ));
            }
            for o in &t.program {
                match o {
                    OpSpec::Lock { lock, .. } | OpSpec::Unlock { lock }
                        if !self.locks.iter().any(|l| &l.name == lock) =>
                    {
                        return Err(format!("thread `{}`: unknown lock `{lock}`", t.name));
                    }
                    OpSpec::Signal { target, .. } if !names.contains(target) => {
                        return Err(format!("thread `{}`: unknown target `{target}`", t.name));
                    }
                    // A target keeps one waiting sender: a second would never be woken.
                    OpSpec::Signal { target, sync: true } if t.count > 1 => {
                        return Err(format!(
                            "thread `{}`: a `sync` signal needs count = 1 (it waits for `{target}` alone)",
                            t.name
                        ));
                    }
                    OpSpec::Signal { target, sync: true }
                        if self.threads.iter().any(|o| {
                            o.name != t.name
                                && o.program.iter().any(|p| {
                                    matches!(p, OpSpec::Signal { target: x, sync: true } if x == target)
                                })
                        }) =>
                    {
                        return Err(format!(
                            "thread `{}`: another thread also sends `sync` signals to `{target}`; only one may",
                            t.name
                        ));
                    }
                    OpSpec::BinderCall { pool }
                        if !self.threads.iter().any(|s| s.pool.as_ref() == Some(pool)) =>
                    {
                        return Err(format!("thread `{}`: no server for pool `{pool}`", t.name));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Whether `t` is one of the top app's own background-priority threads, whose CPUs
    /// follow [`Scenario::placement`]: a fair-class thread at nice ≥ 10 in a process that has
    /// a UI thread or RenderThread.
    pub fn app_background(&self, t: &ThreadSpec) -> bool {
        t.rt_prio == 0
            && t.nice >= 10
            && self
                .threads
                .iter()
                .any(|o| o.process == t.process && o.role != ThreadRole::Other)
    }

    /// Thread names after `count` expansion, in creation order.
    pub fn expanded_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for t in &self.threads {
            for i in 0..t.count {
                v.push(if t.count > 1 {
                    format!("{}-{}", t.name, i)
                } else {
                    t.name.clone()
                });
            }
        }
        v
    }
}
