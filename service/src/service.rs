//! The binder object: `ISuperPass` over a [`Module`], with validation, ownership and persistence.
//!
//! Every mutating call checks the caller's uid, validates its arguments against `/proc`,
//! applies the change to a copy of the [`Registry`], pushes the merged critical set into the
//! module, and commits the copy only if the module accepted it. Registrations made with a
//! client token are dropped when the token's process dies (a death notification). Mode,
//! tunables and RT-UI are saved to the state file after each change and re-applied at start.
//! Every committed change also brings RT-UI ([`crate::rtui`]) in line with the new set.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rsbinder::{BinderResult, DeathRecipient, Interface, SIBinder, WIBinder};
use superpass_core::abi::{self, MECH_NAMES};
use superpass_core::stats::{Histogram, COUNTER_NAMES};
use superpass_core::tunables::{Tunables, TUNABLES};
use superpass_core::Role;

use crate::aidl::{self, consts, ISuperPass};
use crate::caller::CallerPolicy;
use crate::commands::Local;
use crate::device::{DeviceError, Module};
use crate::discovery::{self, TopApp, Watcher};
use crate::persist::Persisted;
use crate::procfs::ProcFs;
use crate::registry::{ClientId, Foreground, Owner, Registry};
use crate::rtui::{self, RtUi, Scheduler, Syscalls};
use crate::status;

/// How the service is set up (the service binary's flags).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Who may change state.
    pub policy: CallerPolicy,
    /// Where mode and tunables are saved; `None` keeps them in memory only.
    pub state_path: Option<PathBuf>,
    /// The procfs view used to validate TIDs.
    pub proc: ProcFs,
    /// Where foreground discovery looks.
    pub discovery: discovery::Config,
    /// Forces foreground discovery on (`Some(true)`) or off at start, over the saved mode.
    pub discover_foreground: Option<bool>,
    /// Forces RT-UI on (`Some(true)`) or off at start, over the saved setting.
    pub fifo: Option<bool>,
}

/// The `vendor.superpass.ISuperPass` implementation; wrap it with `BnSuperPass::new_binder`.
pub struct SuperPass {
    shared: Arc<Shared>,
}

struct Shared {
    me: Weak<Shared>,
    state: Mutex<State>,
    /// Kept apart from `state`: stopping the watcher joins a thread that may wait for `state`.
    watcher: Mutex<Option<Watcher>>,
    policy: CallerPolicy,
    proc: ProcFs,
    state_path: Option<PathBuf>,
    discovery: discovery::Config,
}

struct State {
    module: Module,
    registry: Registry,
    clients: Vec<Client>,
    next_client: ClientId,
    persisted: Persisted,
    abi_version: u32,
    /// The last top app the watcher saw, re-applied when an explicit foreground app goes.
    discovered: Option<TopApp>,
    /// SCHED_FIFO for the critical UI and render threads, synced at every commit.
    rtui: RtUi,
}

struct Client {
    id: ClientId,
    pid: i32,
    token: SIBinder,
    watch: Arc<DeathWatch>,
}

/// Drops a client's registrations when its token dies.
struct DeathWatch {
    shared: Weak<Shared>,
    id: ClientId,
}

impl DeathRecipient for DeathWatch {
    fn binder_died(&self, _who: &WIBinder) {
        if let Some(s) = self.shared.upgrade() {
            log::info!("client {} died: dropping its registrations", self.id);
            s.drop_owner(Owner::Client(self.id));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SuperPass {
    /// Starts the service on `module`: re-applies the saved mode and tunables, clears any
    /// critical set a previous instance left, and starts discovery if it is on.
    pub fn start(module: Module, opts: Options) -> Result<Self, DeviceError> {
        Self::start_with(module, opts, Box::new(Syscalls))
    }

    /// [`start`](Self::start) with RT-UI over `sched` instead of the real system calls.
    pub fn start_with(
        mut module: Module,
        opts: Options,
        sched: Box<dyn Scheduler>,
    ) -> Result<Self, DeviceError> {
        let version = module.version()?;
        log::info!(
            "superpass module: ABI {}, {} critical slots, active mask {:#x} ({})",
            version.abi,
            version.max_critical,
            version.active_mask,
            module.kind()
        );
        let mut state_path = opts.state_path.clone();
        let mut persisted = match opts.state_path.as_deref().map(Persisted::load) {
            Some(Ok(Some(p))) => p,
            Some(Err(e)) if e.kind() != std::io::ErrorKind::InvalidData => {
                // The file may be fine and only unreadable to us now (permissions, I/O): it is
                // neither renamed nor saved over this run.
                let path = opts.state_path.as_deref().expect("a load needs a path");
                log::error!(
                    "{}: cannot read the saved state ({e}); starting from defaults and not \
                     saving this run, so the file is left as it is",
                    path.display()
                );
                state_path = None;
                Persisted::initial()
            }
            Some(Err(e)) => {
                let path = opts.state_path.as_deref().expect("a load needs a path");
                match Persisted::set_aside(path) {
                    Ok(aside) => log::error!(
                        "{}: unreadable state ({e}); kept as {} and starting from defaults",
                        path.display(),
                        aside.display()
                    ),
                    Err(e2) => log::error!(
                        "{}: unreadable state ({e}), and it could not be set aside ({e2}); \
                         starting from defaults",
                        path.display()
                    ),
                }
                Persisted::initial()
            }
            _ => Persisted::initial(),
        };
        let mut t = module.tunables()?;
        persisted.tunables.retain(|k, v| match t.set(k, *v) {
            Ok(()) => true,
            Err(e) => {
                log::warn!("dropping saved tunable {k}={v}: {e}");
                false
            }
        });
        module.set_tunables(&t)?;
        module.set_enabled(persisted.enabled)?;
        module.set_critical(&[])?;
        if let Some(on) = opts.discover_foreground {
            persisted.foreground_discovery = on;
        }
        if let Some(on) = opts.fifo {
            persisted.fifo = on;
        }
        let discover = persisted.foreground_discovery;
        let rtui = RtUi::new(sched, persisted.fifo);
        let shared = Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            state: Mutex::new(State {
                module,
                registry: Registry::new(),
                clients: Vec::new(),
                next_client: 1,
                persisted,
                abi_version: version.abi,
                discovered: None,
                rtui,
            }),
            watcher: Mutex::new(None),
            policy: opts.policy,
            proc: opts.proc,
            state_path,
            discovery: opts.discovery,
        });
        shared.save(&lock(&shared.state));
        if discover {
            shared.start_watcher();
        }
        Ok(Self { shared })
    }

    /// Stops foreground discovery (its thread holds a reference to the service).
    pub fn shutdown(&self) {
        let w = lock(&self.shared.watcher).take();
        drop(w);
    }

    /// The service's own settings, for the shell front: [`Local`] without the binder stub.
    pub fn local(&self) -> Arc<dyn Local + Send + Sync> {
        self.shared.clone()
    }
}

impl Drop for SuperPass {
    fn drop(&mut self) {
        self.shutdown();
        // The threads RT-UI promoted must not stay real-time after the service that would
        // put them back is gone.
        lock(&self.shared.state).rtui.release();
    }
}

impl Shared {
    fn check_caller(&self) -> BinderResult<()> {
        let uid = rsbinder::get_calling_uid();
        if self.policy.permits(uid) {
            return Ok(());
        }
        log::warn!("refused a change from uid {uid}");
        Err(status::security(&format!(
            "uid {uid} may not change SuperPass state (allowed: {:?})",
            self.policy.uids()
        )))
    }

    fn check_thread(&self, pid: i32, tid: i32) -> BinderResult<()> {
        if pid <= 0 || tid <= 0 {
            return Err(status::illegal(&format!(
                "pid {pid} and tid {tid} must be positive"
            )));
        }
        if !self.proc.thread_belongs(pid, tid) {
            return Err(status::specific(
                consts::ERROR_NO_SUCH_THREAD,
                format!("thread {tid} does not exist in process {pid}"),
            ));
        }
        if self.proc.is_kernel_thread(pid) {
            return Err(status::illegal(&format!(
                "{pid} is a kernel thread: only user threads can be critical"
            )));
        }
        if pid == std::process::id() as i32 {
            // Its binder threads would boost themselves on every call that boosts others.
            return Err(status::illegal(&format!(
                "{pid} is the SuperPass service itself: its threads cannot be critical"
            )));
        }
        Ok(())
    }

    fn check_role(role: aidl::Role) -> BinderResult<Role> {
        u32::try_from(role.0)
            .ok()
            .and_then(Role::from_u32)
            .ok_or_else(|| {
                status::specific(
                    consts::ERROR_BAD_ROLE,
                    format!("role {} is not UI, RENDER or OTHER", role.0),
                )
            })
    }

    /// The owner a token stands for, watching it for death the first time it is seen.
    fn owner_of(&self, st: &mut State, token: Option<&SIBinder>) -> BinderResult<Owner> {
        let Some(token) = token else {
            return Ok(Owner::Uid(rsbinder::get_calling_uid()));
        };
        if let Some(c) = st.clients.iter().find(|c| &c.token == token) {
            return Ok(Owner::Client(c.id));
        }
        let id = st.next_client;
        let watch = Arc::new(DeathWatch {
            shared: self.me.clone(),
            id,
        });
        if let Err(e) = token.link_to_death_arc(&watch) {
            log::warn!("cannot watch a client token ({e:?})");
            return Err(status::illegal(
                "token must be a live binder of the calling process",
            ));
        }
        st.next_client += 1;
        st.clients.push(Client {
            id,
            pid: rsbinder::get_calling_pid(),
            token: token.clone(),
            watch,
        });
        Ok(Owner::Client(id))
    }

    /// Applies `f` to a copy of the registry, pushes the result, and commits it if the module
    /// accepted it.
    fn update(
        &self,
        st: &mut State,
        f: impl FnOnce(&mut Registry) -> BinderResult<()>,
    ) -> BinderResult<()> {
        let mut next = st.registry.clone();
        let r = f(&mut next);
        let r = r.and_then(|()| self.commit(st, next));
        self.forget_idle_clients(st);
        r
    }

    fn commit(&self, st: &mut State, mut next: Registry) -> BinderResult<()> {
        next.retain_alive(|pid, tid| self.proc.thread_belongs(pid, tid));
        if next.foreground().is_none() && discovery_on(st) {
            if let Some(top) = st.discovered {
                if self.proc.thread_belongs(top.pid, top.pid) {
                    next.set_foreground(foreground_of(top));
                }
            }
        }
        if !next.fits() {
            return Err(status::specific(
                consts::ERROR_TOO_MANY_THREADS,
                format!(
                    "more than {} critical threads over all clients",
                    Registry::MAX
                ),
            ));
        }
        let set = next.critical_set();
        if set != st.registry.critical_set() {
            st.module.set_critical(&set).map_err(status::device)?;
        }
        st.registry = next;
        st.rtui.sync(&set);
        Ok(())
    }

    /// Stops watching tokens that no longer own anything.
    fn forget_idle_clients(&self, st: &mut State) {
        let reg = &st.registry;
        st.clients.retain(|c| {
            let keep = reg.owns_anything(Owner::Client(c.id));
            if !keep {
                let _ = c.token.unlink_to_death_arc(&c.watch);
            }
            keep
        });
    }

    fn drop_owner(&self, owner: Owner) {
        let mut st = lock(&self.state);
        let r = self.update(&mut st, |r| {
            r.drop_owner(owner);
            Ok(())
        });
        if let Err(e) = r {
            log::error!("dropping {owner:?}: {}", status::describe(&e));
        }
    }

    fn on_top_app(&self, top: Option<TopApp>) {
        let mut st = lock(&self.state);
        st.discovered = top;
        log::info!("top app: {top:?}");
        let r = self.update(&mut st, |r| {
            let explicit = r.foreground().is_some_and(|f| f.owner != Owner::Discovery);
            if !explicit {
                match top {
                    Some(t) => r.set_foreground(foreground_of(t)),
                    None => r.clear_foreground(),
                }
            }
            Ok(())
        });
        if let Err(e) = r {
            log::warn!("top app {top:?} not applied: {}", status::describe(&e));
        }
    }

    fn start_watcher(&self) {
        lock(&self.state).persisted.foreground_discovery = true;
        let me = self.me.clone();
        let w = Watcher::start(self.discovery.clone(), move |top| {
            if let Some(s) = me.upgrade() {
                s.on_top_app(top);
            }
        });
        let old = lock(&self.watcher).replace(w);
        drop(old);
    }

    fn stop_watcher(&self) {
        let w = lock(&self.watcher).take();
        drop(w);
        let mut st = lock(&self.state);
        st.persisted.foreground_discovery = false;
        st.discovered = None;
        let r = self.update(&mut st, |r| {
            r.drop_owner(Owner::Discovery);
            Ok(())
        });
        if let Err(e) = r {
            log::error!("stopping discovery: {}", status::describe(&e));
        }
    }

    fn save(&self, st: &State) {
        if let Some(p) = &self.state_path {
            if let Err(e) = st.persisted.save(p) {
                log::error!("cannot save state to {}: {e}", p.display());
            }
        }
    }

    /// Prunes dead threads and brings RT-UI in line with what is left.
    fn refresh(&self, st: &mut State) {
        if let Err(e) = self.update(st, |_| Ok(())) {
            log::warn!("pruning dead threads: {}", status::describe(&e));
        }
    }

    fn owner_label(st: &State, owner: Owner) -> String {
        match owner {
            Owner::Uid(uid) => format!("uid:{uid}"),
            Owner::Discovery => "discovery".into(),
            Owner::Client(id) => match st.clients.iter().find(|c| c.id == id) {
                Some(c) => format!("client:{}", c.pid),
                None => format!("client#{id}"),
            },
        }
    }
}

impl Local for Shared {
    fn set_fifo(&self, on: bool) -> BinderResult<rtui::Status> {
        self.check_caller()?;
        let mut st = lock(&self.state);
        self.refresh(&mut st);
        let st = &mut *st;
        st.rtui.set_on(on, &st.registry.critical_set());
        st.persisted.fifo = on;
        self.save(st);
        let status = st.rtui.status();
        log::info!("RT-UI (fifo): {}", status.summary());
        Ok(status)
    }

    fn fifo(&self) -> rtui::Status {
        let mut st = lock(&self.state);
        self.refresh(&mut st);
        st.rtui.status()
    }
}

impl Local for SuperPass {
    fn set_fifo(&self, on: bool) -> BinderResult<rtui::Status> {
        self.shared.set_fifo(on)
    }

    fn fifo(&self) -> rtui::Status {
        self.shared.fifo()
    }
}

/// Discovery is on when the saved mode says so (the watcher sets it when it starts).
fn discovery_on(st: &State) -> bool {
    st.persisted.foreground_discovery
}

fn foreground_of(t: TopApp) -> Foreground {
    Foreground {
        pid: t.pid,
        ui_tid: t.pid,
        render_tid: t.render_tid,
        owner: Owner::Discovery,
    }
}

impl Interface for SuperPass {
    fn dump(&self, writer: &mut dyn std::io::Write, args: &[String]) -> rsbinder::Result<()> {
        crate::commands::run_dump(self, Some(self), args, writer);
        Ok(())
    }
}

impl ISuperPass for SuperPass {
    fn setForegroundApp(
        &self,
        token: Option<&SIBinder>,
        pid: i32,
        ui_tid: i32,
        render_tid: i32,
    ) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        s.check_thread(pid, ui_tid)?;
        let render = match render_tid {
            0 => None,
            t if t == ui_tid => {
                return Err(status::illegal("renderTid must differ from uiTid"));
            }
            t => {
                s.check_thread(pid, t)?;
                Some(t)
            }
        };
        let mut st = lock(&s.state);
        let owner = s.owner_of(&mut st, token)?;
        s.update(&mut st, |r| {
            r.set_foreground(Foreground {
                pid,
                ui_tid,
                render_tid: render,
                owner,
            });
            Ok(())
        })
    }

    fn notifyForegroundApp(
        &self,
        token: Option<&SIBinder>,
        pid: i32,
        ui_tid: i32,
        render_tid: i32,
    ) -> BinderResult<()> {
        // Oneway: the caller is not waiting, so a refusal can only be logged.
        if let Err(e) = self.setForegroundApp(token, pid, ui_tid, render_tid) {
            log::warn!(
                "notifyForegroundApp(pid {pid}, ui {ui_tid}, render {render_tid}) refused: {}",
                status::describe(&e)
            );
        }
        Ok(())
    }

    fn clearForegroundApp(&self) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        let mut st = lock(&s.state);
        // An explicit clear also hides what discovery saw until the top app changes.
        st.discovered = None;
        s.update(&mut st, |r| {
            r.clear_foreground();
            Ok(())
        })
    }

    fn setCriticalThreads(
        &self,
        token: Option<&SIBinder>,
        pid: i32,
        threads: &[aidl::CriticalThread],
    ) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        if threads.len() > Registry::MAX {
            return Err(status::specific(
                consts::ERROR_TOO_MANY_THREADS,
                format!(
                    "{} threads given, at most {} fit",
                    threads.len(),
                    Registry::MAX
                ),
            ));
        }
        let mut list = Vec::with_capacity(threads.len());
        for t in threads {
            s.check_thread(pid, t.tid)?;
            let role = Shared::check_role(t.role)?;
            if list.iter().any(|&(tid, _)| tid == t.tid) {
                return Err(status::illegal(&format!("tid {} is listed twice", t.tid)));
            }
            list.push((t.tid, role));
        }
        let mut st = lock(&s.state);
        let owner = s.owner_of(&mut st, token)?;
        s.update(&mut st, |r| {
            r.set_threads(owner, pid, &list);
            Ok(())
        })
    }

    fn addCriticalThread(
        &self,
        token: Option<&SIBinder>,
        pid: i32,
        thread: &aidl::CriticalThread,
    ) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        s.check_thread(pid, thread.tid)?;
        let role = Shared::check_role(thread.role)?;
        let mut st = lock(&s.state);
        let owner = s.owner_of(&mut st, token)?;
        s.update(&mut st, |r| {
            r.add_thread(owner, pid, thread.tid, role);
            Ok(())
        })
    }

    fn removeCriticalThread(&self, token: Option<&SIBinder>, tid: i32) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        if tid <= 0 {
            return Err(status::illegal(&format!("tid {tid} must be positive")));
        }
        let mut st = lock(&s.state);
        let owner = match token {
            None => Owner::Uid(rsbinder::get_calling_uid()),
            Some(t) => match st.clients.iter().find(|c| &c.token == t) {
                Some(c) => Owner::Client(c.id),
                None => {
                    return Err(status::specific(
                        consts::ERROR_NOT_REGISTERED,
                        "this token registered nothing",
                    ))
                }
            },
        };
        s.update(&mut st, |r| {
            if r.remove_thread(owner, tid) {
                Ok(())
            } else {
                Err(status::specific(
                    consts::ERROR_NOT_REGISTERED,
                    format!("tid {tid} is not registered by this owner"),
                ))
            }
        })
    }

    fn releaseClient(&self, token: &SIBinder) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        let id = lock(&s.state)
            .clients
            .iter()
            .find(|c| &c.token == token)
            .map(|c| c.id);
        if let Some(id) = id {
            s.drop_owner(Owner::Client(id));
        }
        Ok(())
    }

    fn setEnabled(&self, enabled: bool) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        let mut st = lock(&s.state);
        st.module.set_enabled(enabled).map_err(status::device)?;
        st.persisted.enabled = enabled;
        s.save(&st);
        log::info!(
            "fast track {}",
            if enabled { "enabled" } else { "disabled" }
        );
        Ok(())
    }

    fn setForegroundDiscovery(&self, enabled: bool) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        let running = lock(&s.watcher).is_some();
        match (enabled, running) {
            (true, false) => s.start_watcher(),
            (false, true) => s.stop_watcher(),
            _ => {}
        }
        let st = lock(&s.state);
        s.save(&st);
        Ok(())
    }

    fn getStats(&self) -> BinderResult<aidl::Stats> {
        let m = lock(&self.shared.state)
            .module
            .stats()
            .map_err(status::device)?;
        Ok(stats_of(&m))
    }

    fn resetStats(&self) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        lock(&s.state).module.reset_stats().map_err(status::device)
    }

    fn getTunables(&self) -> BinderResult<Vec<aidl::Tunable>> {
        let t = lock(&self.shared.state)
            .module
            .tunables()
            .map_err(status::device)?;
        Ok(tunables_of(&t))
    }

    fn setTunable(&self, name: &str, value: i64) -> BinderResult<()> {
        let s = &self.shared;
        s.check_caller()?;
        if name.len() > consts::MAX_NAME_LENGTH as usize {
            return Err(status::illegal("tunable name too long"));
        }
        let Some(desc) = TUNABLES.iter().find(|d| d.name == name) else {
            return Err(status::specific(
                consts::ERROR_UNKNOWN_TUNABLE,
                format!("no tunable named `{name}`"),
            ));
        };
        let out_of_range = || {
            status::specific(
                consts::ERROR_OUT_OF_RANGE,
                format!(
                    "{name}={value} is outside [{}, {}] {} or conflicts with another tunable",
                    desc.min, desc.max, desc.unit
                ),
            )
        };
        let v = u64::try_from(value).map_err(|_| out_of_range())?;
        let mut st = lock(&s.state);
        let mut t = st.module.tunables().map_err(status::device)?;
        t.set(name, v).map_err(|_| out_of_range())?;
        st.module.set_tunables(&t).map_err(status::device)?;
        st.persisted.tunables.insert(name.to_string(), v);
        s.save(&st);
        log::info!("tunable {name} = {v}");
        Ok(())
    }

    fn getState(&self) -> BinderResult<aidl::ServiceState> {
        let s = &self.shared;
        let discovering = lock(&s.watcher).is_some();
        let mut st = lock(&s.state);
        // A foreground app or thread that died since the last change must not show as held.
        s.refresh(&mut st);
        let enabled = st.module.stats().map_err(status::device)?.enabled == 1;
        let registrations = st
            .registry
            .entries()
            .iter()
            .map(|e| {
                let label = Shared::owner_label(&st, e.owner);
                aidl::Registration {
                    pid: e.pid,
                    tid: e.tid,
                    role: aidl::Role(e.role as i32),
                    owner: if e.foreground {
                        format!("foreground:{label}")
                    } else {
                        label
                    },
                }
            })
            .collect();
        Ok(aidl::ServiceState {
            abiVersion: st.abi_version as i32,
            backend: st.module.kind().to_string(),
            enabled,
            foregroundDiscovery: discovering,
            foregroundPid: st.registry.foreground().map_or(0, |f| f.pid),
            registrations,
            clients: st.clients.len() as i32,
        })
    }
}

/// The `Stats` parcelable of a `GET_STATS` reply.
pub fn stats_of(m: &abi::StatsMsg) -> aidl::Stats {
    let h: Histogram = m.histogram();
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    aidl::Stats {
        enabled: m.enabled == 1,
        criticalThreads: m.ncritical as i32,
        generation: as_i64(m.generation),
        boosted: as_i64(m.boosted),
        activeMask: m.active_mask as i64,
        activeMechanisms: MECH_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| m.active_mask & (1 << i) != 0)
            .map(|(_, n)| n.to_string())
            .collect(),
        counters: COUNTER_NAMES
            .iter()
            .zip(m.counters)
            .filter(|(n, _)| !n.is_empty())
            .map(|(n, v)| aidl::Counter {
                name: n.to_string(),
                value: as_i64(v),
            })
            .collect(),
        blockedSamples: as_i64(h.count()),
        blockedMinNs: as_i64(h.min()),
        blockedP50Ns: as_i64(h.percentile(500_000)),
        blockedP90Ns: as_i64(h.percentile(900_000)),
        blockedP99Ns: as_i64(h.percentile(990_000)),
        blockedMaxNs: as_i64(h.max()),
        blockedHistogram: h
            .buckets()
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .map(|(i, &c)| {
                let (lo, w) = Histogram::bucket_range(i);
                aidl::HistogramBucket {
                    lowNs: as_i64(lo),
                    widthNs: as_i64(w),
                    count: as_i64(c),
                }
            })
            .collect(),
    }
}

/// The `Tunable` parcelables for `t`, in the module's order.
pub fn tunables_of(t: &Tunables) -> Vec<aidl::Tunable> {
    TUNABLES
        .iter()
        .zip(t.to_array())
        .map(|(d, v)| aidl::Tunable {
            name: d.name.to_string(),
            value: v as i64,
            defaultValue: d.default as i64,
            min: d.min as i64,
            max: d.max as i64,
            unit: d.unit.to_string(),
            doc: d.doc.to_string(),
        })
        .collect()
}
