//! Binder-style synchronous calls: a caller queues a transaction on a server pool and sleeps
//! until a server thread replies.
//!
//! Server threads inherit the caller's nice for the transaction when it is more urgent than
//! their own (binder's priority inheritance for synchronous calls, with the node's default
//! minimum priority of nice 0 as the floor: `binder_transaction_priority()`); RT callers do
//! not pass on RT (`inherit_rt` off).

use super::TaskIdx;
use std::collections::VecDeque;

/// A synchronous call in flight, as its caller records it from the moment binder queues it
/// until the caller has read the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The call's number, unique in the run (binder's `debug_id`, which never repeats).
    pub id: u32,
    /// When the caller made it.
    pub since: u64,
    /// Whether the server has replied (the reply woke the caller, which has yet to read it).
    pub replied: bool,
}

/// A binder thread pool.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    /// Name, for traces.
    pub name: String,
    /// Transactions not yet picked up: the caller's index.
    pub pending: VecDeque<TaskIdx>,
    /// Server threads blocked in `binder_serve`.
    pub idle: VecDeque<TaskIdx>,
}

impl Pool {
    /// Queues a call from `caller`; returns an idle server to wake, if one is waiting.
    pub fn call(&mut self, caller: TaskIdx) -> Option<TaskIdx> {
        self.pending.push_back(caller);
        self.idle.pop_front()
    }

    /// A server looks for work: returns the caller to serve, or parks the server.
    pub fn serve(&mut self, server: TaskIdx) -> Option<TaskIdx> {
        let c = self.pending.pop_front();
        if c.is_none() {
            self.idle.push_back(server);
        }
        c
    }
}
