//! SuperPass's trace toolkit: Perfetto and ftrace traces as a SQLite database of blocking.
//!
//! - [`writer`] emits Perfetto `.pftrace` files (used by the simulator); no dependencies.
//! - [`wire`] and [`perfetto`] decode Perfetto protobuf without panicking on any input.
//! - [`ftrace_text`] reads the tracefs `trace` file.
//! - With the `db` feature (default): [`import`] builds trace_processor-shaped tables in
//!   SQLite and [`report`] answers the lock-blocking questions; see `docs/trace.md`.

pub mod art;
pub mod binder;
pub mod clocks;
pub mod events;
pub mod ftrace_text;
pub mod perfetto;
pub mod process_dump;
pub mod proto;
pub mod superpass;
pub mod synth;
pub mod wire;
pub mod writer;

#[cfg(feature = "db")]
pub mod art_owner;
#[cfg(feature = "db")]
pub mod db_writer;
#[cfg(feature = "db")]
pub mod format;
#[cfg(feature = "db")]
pub mod import;
#[cfg(feature = "db")]
pub mod model;
#[cfg(feature = "db")]
pub mod monitor_contention;
#[cfg(feature = "db")]
pub mod query;
#[cfg(feature = "db")]
pub mod report;
#[cfg(feature = "db")]
mod report_binder;
#[cfg(feature = "db")]
pub mod report_text;
#[cfg(feature = "db")]
mod report_wait_superpass;
#[cfg(feature = "db")]
pub mod schema;
#[cfg(feature = "db")]
pub mod stats;
