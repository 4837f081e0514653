//! How callers name threads: a request's TIDs are the caller's, the engine's are the platform's.
//!
//! A kernel names every thread in its initial PID namespace, and its hooks report those TIDs;
//! a caller in a child PID namespace (a container, a sandboxed service) knows the same threads by
//! other numbers. The platform translates at the ioctl boundary, once each way.

use super::super::Tid;

/// The translation between a caller's TIDs and the engine's.
pub trait TidSpace {
    /// The engine's TID for the thread the caller calls `tid`; `None` if the caller sees none.
    fn to_engine(&self, tid: Tid) -> Option<Tid>;
    /// The caller's TID for the engine's `tid`; `None` if the caller cannot see that thread.
    fn to_caller(&self, tid: Tid) -> Option<Tid>;
}

/// Callers and the engine name threads alike: the simulator, the service's in-memory device, and
/// tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct SameSpace;

impl TidSpace for SameSpace {
    fn to_engine(&self, tid: Tid) -> Option<Tid> {
        Some(tid)
    }

    fn to_caller(&self, tid: Tid) -> Option<Tid> {
        Some(tid)
    }
}
