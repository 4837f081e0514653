//! The Rust stubs that rsbinder-aidl generates from `aidl/vendor/superpass/*.aidl` (see build.rs).

#![allow(missing_docs, clippy::all, reason = "generated code")]

rsbinder::include_aidl!("superpass_aidl");

pub use vendor::superpass::Counter::Counter;
pub use vendor::superpass::CriticalThread::CriticalThread;
pub use vendor::superpass::HistogramBucket::HistogramBucket;
pub use vendor::superpass::ISuperPass::{BnSuperPass, BpSuperPass, ISuperPass};
pub use vendor::superpass::Registration::Registration;
pub use vendor::superpass::Role::Role;
pub use vendor::superpass::ServiceState::ServiceState;
pub use vendor::superpass::Stats::Stats;
pub use vendor::superpass::Tunable::Tunable;

/// The interface's constants (`ERROR_*`, `MAX_*`, `VERSION`, `HASH`).
pub use vendor::superpass::ISuperPass as consts;
