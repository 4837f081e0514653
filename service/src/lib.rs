//! The SuperPass HAL service: `vendor.superpass.ISuperPass/default` over rsbinder.
//!
//! The service is the only writer of `/dev/superpass`. Framework clients (or the built-in
//! foreground discovery) tell it which threads are latency critical; it validates every call,
//! merges what all its clients registered into one critical set, and pushes that set, the mode
//! and the tunables into the kernel module through the ioctls that `superpass_core::abi`
//! defines. Registrations made with a client token die with the client; tunables and the mode
//! are persisted as JSON and re-applied at start.
//!
//! Layout: [`aidl`] holds the generated stubs, [`device`] the backends (kernel and in-memory)
//! behind one trait, [`registry`] the pure bookkeeping of who registered what, [`service`] the
//! binder object, [`shell`] the front that answers `cmd`, [`dump`] the text and JSON views,
//! [`commands`] the tuning commands that `dumpsys` arguments, `cmd` and `superpassctl` share,
//! and [`rtui`] the optional SCHED_FIFO for the critical UI and render threads. docs/service.md is the user guide.

pub mod aidl;
pub mod caller;
pub mod commands;
pub mod device;
pub mod discovery;
pub mod dump;
pub mod logging;
pub mod persist;
pub mod procfs;
pub mod registry;
pub mod result_receiver;
pub mod rtui;
pub mod service;
pub mod shell;
pub mod status;
pub mod token;
pub mod transport;

/// The name the service registers with the service manager (and the RPC directory).
pub const SERVICE_NAME: &str = "vendor.superpass.ISuperPass/default";

/// Where the kernel module's device node lives.
pub const DEFAULT_DEVICE: &str = "/dev/superpass";

/// Where the service keeps its state on Android.
pub const DEFAULT_STATE: &str = "/data/vendor/superpass/state.json";
