//! `superpass-service`: serves `vendor.superpass.ISuperPass/default` and drives /dev/superpass.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use superpass_service::caller::{self, CallerPolicy};
use superpass_service::device::kernel::KernelDevice;
use superpass_service::device::memory::MemoryDevice;
use superpass_service::device::{Device, Module};
use superpass_service::discovery;
use superpass_service::procfs::ProcFs;
use superpass_service::service::{Options, SuperPass};
use superpass_service::shell::ShellFront;
use superpass_service::status::describe_code;
use superpass_service::transport::{self, Transport};
use superpass_service::{logging, DEFAULT_DEVICE, SERVICE_NAME};

/// The SuperPass HAL service.
///
/// Registers vendor.superpass.ISuperPass/default and is the only writer of /dev/superpass:
/// clients (system_server, superpassctl, or the built-in top-app watcher) declare the
/// latency-critical threads, and the service validates them and pushes them into the kernel
/// module.
///
/// Android (init starts it; see service/superpass.rc):
///   superpass-service --state /data/vendor/superpass/state.json --allow-shell-on-debuggable
///
/// Linux with binderfs and rsb_hub as the service manager:
///   superpass-service --binder /dev/binderfs/binder --state /var/lib/superpass/state.json
///
/// Linux or a dev box without binder (RPC over a Unix socket), without the module:
///   superpass-service --rpc /tmp/superpass.sock --memory
#[derive(Debug, Parser)]
#[command(version, verbatim_doc_comment)]
struct Args {
    /// Serve binder RPC on this Unix socket instead of kernel binder. Clients then use
    /// `superpassctl --rpc <same path>`.
    #[arg(long, value_name = "SOCKET")]
    rpc: Option<PathBuf>,

    /// Kernel binder device (default: the platform's, /dev/binder or /dev/vndbinder on Android).
    #[arg(long, value_name = "DEVICE", conflicts_with = "rpc")]
    binder: Option<PathBuf>,

    /// The SuperPass module's device node.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DEVICE)]
    device: PathBuf,

    /// Use an in-process copy of the module's engine instead of the device (tests, demos).
    #[arg(long, conflicts_with = "device")]
    memory: bool,

    /// JSON file that keeps the mode and tunables across restarts (created if missing).
    /// Without it, changes last until the service exits.
    #[arg(long, value_name = "PATH")]
    state: Option<PathBuf>,

    /// Uids allowed to change state, comma separated: numbers or system, root, shell.
    /// Reads (getStats, getTunables, getState, plain dumps) are open to every caller that
    /// SELinux lets reach the service.
    #[arg(long, value_name = "UIDS", default_value = "system,root", value_parser = CallerPolicy::parse)]
    allowed_uids: CallerPolicy,

    /// Also allow the shell uid (adb shell: dumpsys tuning, superpassctl) on userdebug and
    /// eng builds (ro.debuggable=1). No effect elsewhere.
    #[arg(long)]
    allow_shell_on_debuggable: bool,

    /// Watch the top-app cpuset and register the top app's UI thread and RenderThread, for
    /// devices whose framework does not call setForegroundApp. Overrides the saved mode for
    /// this start; clients can still turn it off with setForegroundDiscovery(false).
    #[arg(long)]
    discover_foreground: bool,

    /// RT-UI: make the critical UI and render threads SCHED_FIFO 1 (needs CAP_SYS_NICE), as
    /// Android's sys.use_fifo_ui=1 does for the top app. Overrides the saved setting for this
    /// start; `cmd vendor.superpass.ISuperPass/default fifo off` can still turn it off.
    #[arg(long)]
    fifo: bool,

    /// Root of the cpuset hierarchy that holds the top-app group.
    #[arg(long, value_name = "DIR", default_value = "/dev/cpuset")]
    cgroup_root: PathBuf,

    /// Root of procfs (TID validation, thread names, uids).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    proc_root: PathBuf,

    /// Foreground discovery ignores processes with a lower uid (Android apps start at 10000).
    #[arg(long, value_name = "UID", default_value_t = discovery::FIRST_APPLICATION_UID)]
    discover_min_uid: u32,

    /// A file that says whether the display is on (`0`/`off` = off); foreground discovery stops
    /// scanning while it is off. On Android: the panel's backlight brightness,
    /// e.g. /sys/class/backlight/panel0-backlight/brightness.
    #[arg(long, value_name = "PATH")]
    display_state: Option<PathBuf>,

    /// How often foreground discovery looks at the top-app cpuset, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    discover_interval_ms: u64,
}

fn main() -> ExitCode {
    logging::init("superpass");
    let args = Args::parse();
    let dev: Box<dyn Device> = if args.memory {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        Box::new(MemoryDevice::new(cpus))
    } else {
        match KernelDevice::open(&args.device) {
            Ok(d) => Box::new(d),
            Err(e) => {
                log::error!(
                    "cannot open {}: {e} (is the superpass module loaded? --memory runs without it)",
                    args.device.display()
                );
                return ExitCode::FAILURE;
            }
        }
    };
    let mut policy = args.allowed_uids;
    if args.allow_shell_on_debuggable && caller::is_debuggable_build() {
        policy.allow(caller::AID_SHELL);
    }
    log::info!("uids allowed to change state: {:?}", policy.uids());
    let proc = ProcFs::new(&args.proc_root);
    let opts = Options {
        policy,
        state_path: args.state,
        discovery: discovery::Config {
            cgroup_root: args.cgroup_root,
            proc: proc.clone(),
            min_uid: args.discover_min_uid,
            interval: Duration::from_millis(args.discover_interval_ms.max(10)),
            display_state: args.display_state,
        },
        proc,
        discover_foreground: args.discover_foreground.then_some(true),
        fifo: args.fifo.then_some(true),
    };
    let svc = match SuperPass::start(Module::new(dev), opts) {
        Ok(s) => s,
        Err(e) => {
            log::error!("the module refused the start-up configuration: {e}");
            return ExitCode::FAILURE;
        }
    };
    let transport = Transport::from_flags(args.rpc, args.binder);
    if let Transport::Rpc(p) = &transport {
        // A socket left by a previous instance would make bind fail.
        if let Err(e) = transport::clear_stale_socket(p) {
            log::error!("--rpc: {e}");
            return ExitCode::FAILURE;
        }
    }
    // The front answers `cmd` and hands every other transaction to the generated stub.
    let binder = ShellFront::new_binder(svc);
    let served = rsbinder::serve(transport.uri()).and_then(|s| s.add(SERVICE_NAME, binder));
    let server = match served {
        Ok(s) => s,
        Err(e) => {
            log::error!("cannot serve on {transport}: {}", describe_code(e));
            return ExitCode::FAILURE;
        }
    };
    log::info!("serving {SERVICE_NAME} on {transport}");
    match server.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("serving stopped: {}", describe_code(e));
            ExitCode::FAILURE
        }
    }
}
