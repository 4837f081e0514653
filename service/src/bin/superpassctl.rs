//! `superpassctl`: a command-line client of vendor.superpass.ISuperPass/default.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use superpass_service::aidl::{CriticalThread, ISuperPass, Role};
use superpass_service::commands::{self, Command};
use superpass_service::dump::Report;
use superpass_service::status::{describe, describe_code};
use superpass_service::transport::{Connection, Transport};
use superpass_service::{logging, token};

/// Talk to the SuperPass HAL service: register critical threads, tune, read stats.
///
/// Every subcommand is one ISuperPass call (dump, set and get are built from them).
/// Examples:
///   superpassctl dump                       state, hooks, stats, tunables
///   superpassctl set slice_ns 2ms           tune (saved across service restarts)
///   superpassctl foreground 4242 4242 4301  declare the foreground app
///   superpassctl add-critical 4242 4250 --role other --hold
///                                           register while this command runs
///   superpassctl --rpc /tmp/superpass.sock stats --json
///
/// Registrations without --hold stay until removed; with --hold they are tied to this
/// process and dropped by the service when it exits or is killed.
#[derive(Debug, Parser)]
#[command(version, verbatim_doc_comment)]
struct Args {
    /// Connect over binder RPC on this Unix socket (the service's --rpc) instead of kernel
    /// binder.
    #[arg(long, global = true, value_name = "SOCKET")]
    rpc: Option<PathBuf>,

    /// Kernel binder device (default: the platform's).
    #[arg(long, global = true, value_name = "DEVICE")]
    binder: Option<PathBuf>,

    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoleArg {
    Ui,
    Render,
    Other,
}

impl RoleArg {
    fn aidl(self) -> Role {
        match self {
            Self::Ui => Role::UI,
            Self::Render => Role::RENDER,
            Self::Other => Role::OTHER,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Print state, critical threads, active hooks, stats and tunables (what dumpsys shows).
    Dump {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Send a real dump transaction, as `dumpsys` does, with these arguments (kernel binder
    /// only; e.g. `dumpsys set max_depth 4`).
    Dumpsys {
        /// Dump arguments (see `dumpsys help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the statistics: active hooks, counters, blocking percentiles (getStats).
    Stats {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Print the tunables with ranges (getTunables).
    Tunables,
    /// Print one tunable's value.
    Get {
        /// Tunable name (see `tunables`).
        name: String,
    },
    /// Set a tunable (setTunable); values take _ separators, the *_ns ones ns/us/ms/s suffixes.
    Set {
        /// Tunable name (see `tunables`).
        name: String,
        /// New value, e.g. 4, 2_000_000, 2ms.
        value: String,
    },
    /// Turn the fast track on (setEnabled(true)).
    Enable,
    /// Turn the fast track off (setEnabled(false)).
    Disable,
    /// Turn foreground discovery (the top-app cpuset watcher) on or off.
    Discovery {
        /// on or off.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    /// Zero the module's counters and histogram (resetStats).
    ResetStats,
    /// Declare the foreground app (setForegroundApp).
    Foreground {
        /// The app's pid.
        pid: i32,
        /// Its UI thread (normally the pid).
        ui_tid: i32,
        /// Its RenderThread (0 or omitted: none yet).
        #[arg(default_value_t = 0)]
        render_tid: i32,
        /// Tie the registration to this process and wait until killed.
        #[arg(long)]
        hold: bool,
    },
    /// Forget the foreground app (clearForegroundApp).
    ClearForeground,
    /// Replace the threads registered without a token (or, with --hold, by this process) with
    /// these (setCriticalThreads).
    SetCritical {
        /// The process the threads belong to.
        pid: i32,
        /// Threads as TID or TID:ROLE (role ui, render or other; default other).
        #[arg(value_name = "TID[:ROLE]")]
        threads: Vec<String>,
        /// Tie the registration to this process and wait until killed.
        #[arg(long)]
        hold: bool,
    },
    /// Register one critical thread (addCriticalThread).
    AddCritical {
        /// The process the thread belongs to.
        pid: i32,
        /// The thread.
        tid: i32,
        /// Its role.
        #[arg(long, value_enum, default_value = "other")]
        role: RoleArg,
        /// Tie the registration to this process and wait until killed.
        #[arg(long)]
        hold: bool,
    },
    /// Unregister a thread registered without a token (removeCriticalThread).
    RemoveCritical {
        /// The thread.
        tid: i32,
    },
    /// Print what the service holds: mode, foreground app, critical threads (getState).
    State {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Print the interface version and hash.
    Version,
}

fn role_of(s: &str) -> Result<Role, String> {
    match s {
        "ui" => Ok(Role::UI),
        "render" => Ok(Role::RENDER),
        "other" => Ok(Role::OTHER),
        n => n
            .parse::<i32>()
            .map(Role)
            .map_err(|_| format!("bad role `{s}`: ui, render or other")),
    }
}

fn thread_of(s: &str) -> Result<CriticalThread, String> {
    let (tid, role) = match s.split_once(':') {
        Some((t, r)) => (t, role_of(r)?),
        None => (s, Role::OTHER),
    };
    let tid = tid.parse().map_err(|_| format!("bad tid `{tid}`"))?;
    Ok(CriticalThread { tid, role })
}

/// Blocks SIGINT and SIGTERM in this thread and every thread started after it.
fn block_signals() -> libc::sigset_t {
    // SAFETY: a zeroed sigset is valid input to sigemptyset/sigaddset, which initialise it;
    // changing the calling thread's mask touches no other state.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Waits for one of the signals in `set` (blocked by [`block_signals`]).
fn wait_for_signal(set: &libc::sigset_t) {
    let mut sig = 0;
    // SAFETY: `set` was initialised by `block_signals`; `sig` is a valid out pointer.
    unsafe { libc::sigwait(set, &mut sig) };
}

fn run(args: Args) -> Result<(), String> {
    let hold = matches!(
        args.cmd,
        Cmd::Foreground { hold: true, .. }
            | Cmd::SetCritical { hold: true, .. }
            | Cmd::AddCritical { hold: true, .. }
    );
    // Before any binder thread starts, so that none of them takes the signal instead.
    let signals = hold.then(block_signals);
    let transport = Transport::from_flags(args.rpc, args.binder);
    let conn = Connection::open(&transport, hold).map_err(|e| {
        format!(
            "cannot reach {} over {transport}: {}",
            superpass_service::SERVICE_NAME,
            describe_code(e)
        )
    })?;
    let svc: &dyn ISuperPass = &*conn.service;
    let tok = hold.then(token::new);
    let e = |s: rsbinder::Status| describe(&s);
    let mut out = std::io::stdout();
    let result = match args.cmd {
        Cmd::Dump { json } => commands::execute(&Command::Show { json }, svc, &mut out),
        Cmd::Dumpsys { args } => {
            use rsbinder::Interface;
            let binder = conn.service.as_binder();
            let proxy = binder
                .as_proxy()
                .ok_or("dumpsys needs kernel binder (over RPC use `dump`, `set`, `get`)")?;
            let fd = std::os::fd::AsFd::as_fd(&std::io::stdout())
                .try_clone_to_owned()
                .map_err(|e| e.to_string())?;
            proxy
                .dump(fd, &args)
                .map_err(|s| format!("dump: {}", describe_code(s)))
        }
        Cmd::Stats { json } => {
            let r = Report::collect(svc).map_err(e)?;
            if json {
                println!("{}", r.stats_json());
            } else {
                print!("{}", r.stats_text());
            }
            Ok(())
        }
        Cmd::Tunables => {
            for t in svc.getTunables().map_err(e)? {
                println!(
                    "{:<20} {:>12}  default {:<12} [{}, {}] {}  {}",
                    t.name, t.value, t.defaultValue, t.min, t.max, t.unit, t.doc
                );
            }
            Ok(())
        }
        Cmd::Get { name } => commands::execute(&Command::Get { name }, svc, &mut out),
        Cmd::Set { name, value } => {
            let value = commands::parse_tunable_value(&name, &value)?;
            commands::execute(&Command::Set { name, value }, svc, &mut out)
        }
        Cmd::Enable => commands::execute(&Command::Enable(true), svc, &mut out),
        Cmd::Disable => commands::execute(&Command::Enable(false), svc, &mut out),
        Cmd::Discovery { state } => {
            commands::execute(&Command::Discovery(state == "on"), svc, &mut out)
        }
        Cmd::ResetStats => commands::execute(&Command::ResetStats, svc, &mut out),
        Cmd::Foreground {
            pid,
            ui_tid,
            render_tid,
            ..
        } => svc
            .setForegroundApp(tok.as_ref(), pid, ui_tid, render_tid)
            .map_err(e),
        Cmd::ClearForeground => svc.clearForegroundApp().map_err(e),
        Cmd::SetCritical { pid, threads, .. } => {
            let list = threads
                .iter()
                .map(|s| thread_of(s))
                .collect::<Result<Vec<_>, _>>()?;
            svc.setCriticalThreads(tok.as_ref(), pid, &list).map_err(e)
        }
        Cmd::AddCritical { pid, tid, role, .. } => svc
            .addCriticalThread(
                tok.as_ref(),
                pid,
                &CriticalThread {
                    tid,
                    role: role.aidl(),
                },
            )
            .map_err(e),
        Cmd::RemoveCritical { tid } => svc.removeCriticalThread(None, tid).map_err(e),
        Cmd::State { json } => {
            let r = Report::collect(svc).map_err(e)?;
            if json {
                println!("{}", r.state_json());
            } else {
                print!("{}", r.state_text());
            }
            Ok(())
        }
        Cmd::Version => {
            println!(
                "interface version {} hash {}",
                svc.getInterfaceVersion().map_err(e)?,
                svc.getInterfaceHash().map_err(e)?
            );
            Ok(())
        }
    };
    if let (Ok(()), Some(set)) = (&result, &signals) {
        println!("registered; holding until SIGINT or SIGTERM");
        wait_for_signal(set);
    }
    conn.close();
    result
}

fn main() -> ExitCode {
    // Like other CLIs, end quietly when the reader of stdout goes away (`| grep -q`) instead
    // of panicking on the failed print.
    // SAFETY: restoring the default action of SIGPIPE, before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    logging::init("superpassctl");
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("superpassctl: {msg}");
            ExitCode::FAILURE
        }
    }
}
