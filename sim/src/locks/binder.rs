//! Binder-style synchronous calls: a caller queues a transaction on a server pool and sleeps
//! until a server thread replies.
//!
//! Server threads inherit the caller's nice for the transaction (binder's default priority
//! inheritance for synchronous calls); RT callers do not pass on RT (`inherit_rt` off).

use super::TaskIdx;
use std::collections::VecDeque;

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
