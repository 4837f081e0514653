//! Binder transactions: the kernel's `binder_transaction` and `binder_transaction_received`
//! events, and the synchronous calls they make into waits whose blocker is the server.
//!
//! The events (`drivers/android/binder_trace.h`), both in the context of the current thread:
//!
//! ```text
//! binder_transaction: transaction=11053226 dest_node=10330411 dest_proc=990 dest_thread=0 reply=0 flags=0x10 code=0x3
//! binder_transaction_received: transaction=11053226
//! ```
//!
//! In Perfetto they are `FtraceEvent` fields 50 (`debug_id`, `target_node`, `to_proc`,
//! `to_thread`, `reply`, `code`, `flags`) and 51 (`debug_id`), the current thread in
//! `FtraceEvent.pid`.
//!
//! A synchronous call (reply 0, flags without [`TF_ONE_WAY`]) by client T is a wait of T
//! ([`waits`]): from T's `binder_transaction` until T's `binder_transaction_received` of the
//! reply, as Perfetto's `binder transaction` slice and the simulator's binder round trip end.
//! Its server S is the thread that received the call; the reply is the `binder_transaction`
//! with reply 1 that S sends to T (`dest_thread` = T), and the kernel sends a reply to the
//! innermost call its target is blocked in. One-way calls are not waits. A call or reply
//! whose other end is not in the trace is dropped and counted in `stats` (`binder:*`), never
//! guessed.

use crate::events::{Diagnostics, Events, FastMap};
use crate::superpass::{key_values, parse_int};

/// `TF_ONE_WAY`: the caller does not wait for a reply.
pub const TF_ONE_WAY: u32 = 0x01;

/// The sending event's name, in text ftrace.
pub const TRANSACTION: &str = "binder_transaction";
/// The receiving event's name, in text ftrace.
pub const RECEIVED: &str = "binder_transaction_received";

/// `stats` kind of a binder event with a missing or bad field.
pub const MALFORMED: &str = "binder:malformed";
/// `stats` kind of a synchronous call still waiting for its reply when the trace ends.
pub const CALL_UNENDED: &str = "binder:call_unended";
/// `stats` kind of a call its client left without a reply in the trace (it made another
/// call at the same nesting level: the call failed, or events were lost).
pub const CALL_SUPERSEDED: &str = "binder:call_superseded";
/// `stats` kind of a reply whose call is not in the trace (it began before the trace).
pub const REPLY_WITHOUT_CALL: &str = "binder:reply_without_call";
/// `stats` kind of a reply sent or received by a thread other than the call's (events lost).
pub const REPLY_MISMATCH: &str = "binder:reply_mismatch";

/// Every `stats` kind this module counts, with what it means (for the `stats` table).
pub const STATS: [(&str, &str); 5] = [
    (
        MALFORMED,
        "binder events with a missing or malformed field (skipped)",
    ),
    (
        CALL_UNENDED,
        "synchronous binder calls still waiting for the reply at the trace end (no wait)",
    ),
    (
        CALL_SUPERSEDED,
        "synchronous binder calls left without a reply in the trace: the client called again \
         at the same nesting level (the call failed, or events were lost; no wait)",
    ),
    (
        REPLY_WITHOUT_CALL,
        "binder replies whose call is not in the trace: it began before the trace (no wait)",
    ),
    (
        REPLY_MISMATCH,
        "binder replies sent or received by a thread other than the call's: events were lost \
         (no wait)",
    ),
];

/// What a binder event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinderKind {
    /// `binder_transaction`: the current thread sends a call (`reply` false) or a reply.
    Transaction {
        /// The transaction's id (`debug_id`, text `transaction=`).
        debug_id: i32,
        /// The target process (`to_proc`, text `dest_proc=`).
        to_proc: i32,
        /// The target thread (`to_thread`, text `dest_thread=`): for a reply the caller,
        /// for a call 0 unless the kernel chose a thread (a nested call).
        to_thread: i32,
        /// Whether this is a reply.
        reply: bool,
        /// `TF_*` flags.
        flags: u32,
        /// The call's method code.
        code: u32,
    },
    /// `binder_transaction_received`: the current thread took transaction `debug_id` (a
    /// call, as its server, or a reply, as its caller).
    Received {
        /// The transaction's id.
        debug_id: i32,
    },
}

/// A binder event of a thread at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinderEvent {
    /// Nanoseconds.
    pub ts: i64,
    /// File order.
    pub seq: u32,
    /// The current thread: the sender of a transaction, the receiver of a received.
    pub tid: i32,
    /// What happened.
    pub kind: BinderKind,
}

/// Parses a text ftrace binder event's fields; `None` when a field it needs is missing or
/// bad (`dest_node` and `code` may be missing).
pub fn parse_text(event: &str, args: &str) -> Option<BinderKind> {
    let field = |k: &str| {
        key_values(args)
            .find(|(key, _)| *key == k)
            .and_then(|(_, v)| parse_int(v))
    };
    let int = |k: &str| field(k).and_then(|v| i32::try_from(v).ok());
    match event {
        TRANSACTION => Some(BinderKind::Transaction {
            debug_id: int("transaction")?,
            to_proc: int("dest_proc")?,
            to_thread: int("dest_thread")?,
            reply: match field("reply")? {
                0 => false,
                1 => true,
                _ => return None,
            },
            flags: u32::try_from(field("flags")?).ok()?,
            code: field("code")
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(0),
        }),
        RECEIVED => Some(BinderKind::Received {
            debug_id: int("transaction")?,
        }),
        _ => None,
    }
}

/// Records a binder event of thread `tid` (`None`: the trace did not say which thread ran
/// it), or counts it as [`MALFORMED`] with a note quoting `what`: no thread, no event
/// (`kind` `None`: a field missing), or a reply to no thread.
pub fn record(
    ev: &mut Events,
    ts: i64,
    tid: Option<i32>,
    kind: Option<BinderKind>,
    what: impl FnOnce() -> String,
) {
    let bad_reply = matches!(
        kind,
        Some(BinderKind::Transaction {
            reply: true,
            to_thread,
            ..
        }) if to_thread <= 0
    );
    match (tid, kind) {
        (Some(tid), Some(kind)) if tid > 0 && !bad_reply => ev.push_binder(ts, tid, kind),
        _ => {
            let first = !ev.diag.skipped.contains_key(MALFORMED);
            ev.diag.skip(MALFORMED);
            if first {
                ev.diag.note(format!(
                    "binder: malformed event skipped (and any more counted as {MALFORMED} in \
                     `stats`): {}",
                    what()
                ));
            }
        }
    }
}

/// A synchronous binder call matched to its reply: a wait of `client` on `server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// The client sent the call.
    pub ts: i64,
    /// The client received the reply.
    pub end: i64,
    /// The calling thread.
    pub client: i32,
    /// The thread that served the call: it received it (or, when its receipt is not in the
    /// trace, sent the reply, which only the serving thread can).
    pub server: i32,
    /// The call's transaction id.
    pub debug_id: i32,
    /// The reply's transaction id.
    pub reply_debug_id: i32,
    /// The server took the call; `None` when that is not in the trace.
    pub received_ts: Option<i64>,
    /// The server sent the reply.
    pub reply_ts: i64,
    /// The call's method code.
    pub code: u32,
    /// The call's `TF_*` flags.
    pub flags: u32,
    /// The call the client was serving when it made this one (a server calling out), by
    /// transaction id; `None` when it was serving none that the trace shows.
    pub serving: Option<i32>,
}

/// Binder transactions read, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Synchronous calls (each a wait, or dropped and counted in `stats`).
    pub sync_calls: u64,
    /// One-way calls (no wait).
    pub oneway_calls: u64,
    /// Replies.
    pub replies: u64,
}

/// A synchronous call in flight.
#[derive(Debug, Clone, Copy)]
struct Call {
    debug_id: i32,
    ts: i64,
    code: u32,
    flags: u32,
    serving: Option<i32>,
    /// Who took it, when.
    received: Option<(i32, i64)>,
    /// The reply: its id, when it was sent, by whom.
    reply: Option<(i32, i64, i32)>,
}

/// Matching state: the calls in flight per client, the calls served per server.
#[derive(Default)]
struct Matcher {
    /// Per client: its calls waiting for a reply, innermost last.
    outstanding: FastMap<i32, Vec<Call>>,
    /// Per server: the calls it took and has not replied to, innermost last.
    serving: FastMap<i32, Vec<i32>>,
    /// Calls sent and not yet taken: debug_id -> client.
    untaken: FastMap<i32, i32>,
    /// Replies sent and not yet received: debug_id -> client.
    replies: FastMap<i32, i32>,
    counts: Counts,
    waits: Vec<Wait>,
    dropped: FastMap<&'static str, u64>,
}

impl Matcher {
    fn drop_call(&mut self, c: &Call, why: &'static str) {
        self.untaken.remove(&c.debug_id);
        if let Some((r, _, _)) = c.reply {
            self.replies.remove(&r);
        }
        *self.dropped.entry(why).or_insert(0) += 1;
    }

    /// `client` calls: first drop its calls that can no longer be answered. A thread waits
    /// in one call per call it serves, plus the one it makes; more outstanding calls than
    /// that were left without a reply.
    fn call(&mut self, ts: i64, client: i32, debug_id: i32, flags: u32, code: u32) {
        let serving = self.serving.get(&client);
        let depth = serving.map_or(0, Vec::len);
        let serving = serving.and_then(|s| s.last().copied());
        let mut stale = Vec::new();
        if let Some(out) = self.outstanding.get_mut(&client) {
            while out.len() > depth {
                stale.extend(out.pop());
            }
        }
        for c in &stale {
            self.drop_call(c, CALL_SUPERSEDED);
        }
        self.outstanding.entry(client).or_default().push(Call {
            debug_id,
            ts,
            code,
            flags,
            serving,
            received: None,
            reply: None,
        });
        self.untaken.insert(debug_id, client);
    }

    /// `server` sends reply `debug_id` to `client`: it answers the client's innermost call,
    /// which must be the server's innermost served call.
    fn reply(&mut self, ts: i64, server: i32, client: i32, debug_id: i32) {
        let served = self.serving.get_mut(&server).and_then(Vec::pop);
        let Some(out) = self.outstanding.get_mut(&client) else {
            *self.dropped.entry(REPLY_WITHOUT_CALL).or_insert(0) += 1;
            return;
        };
        let Some(call) = out.last_mut().filter(|c| c.reply.is_none()) else {
            *self.dropped.entry(REPLY_WITHOUT_CALL).or_insert(0) += 1;
            return;
        };
        let taken_by_other = call.received.is_some_and(|(s, _)| s != server);
        let other_served = served.is_some_and(|id| id != call.debug_id);
        if taken_by_other || other_served {
            let c = out.pop().expect("the call just looked at");
            self.drop_call(&c, REPLY_MISMATCH);
            return;
        }
        call.reply = Some((debug_id, ts, server));
        self.replies.insert(debug_id, client);
    }

    /// Thread `tid` took transaction `debug_id`: a call (it serves it) or a reply (its
    /// call's wait ends). Anything else (a one-way call, a call from before the trace) is
    /// no part of a wait.
    fn received(&mut self, ts: i64, tid: i32, debug_id: i32) {
        if let Some(client) = self.untaken.remove(&debug_id) {
            let call = self
                .outstanding
                .get_mut(&client)
                .and_then(|out| out.iter_mut().rev().find(|c| c.debug_id == debug_id));
            if let Some(c) = call {
                c.received = Some((tid, ts));
                self.serving.entry(tid).or_default().push(debug_id);
            }
            return;
        }
        let Some(client) = self.replies.remove(&debug_id) else {
            return;
        };
        let Some(out) = self.outstanding.get_mut(&client) else {
            return;
        };
        let Some(i) = out
            .iter()
            .rposition(|c| c.reply.is_some_and(|(r, _, _)| r == debug_id))
        else {
            return;
        };
        // Calls above it were made after it and can no longer be answered.
        let stale = out.split_off(i + 1);
        let call = out.pop().expect("found at i");
        for c in &stale {
            self.drop_call(c, CALL_SUPERSEDED);
        }
        if tid != client {
            self.drop_call(&call, REPLY_MISMATCH);
            return;
        }
        let (reply_debug_id, reply_ts, sender) = call.reply.expect("matched by its reply");
        self.waits.push(Wait {
            ts: call.ts,
            end: ts,
            client,
            server: call.received.map_or(sender, |(s, _)| s),
            debug_id: call.debug_id,
            reply_debug_id,
            received_ts: call.received.map(|(_, t)| t),
            reply_ts,
            code: call.code,
            flags: call.flags,
            serving: call.serving,
        });
    }
}

/// The waits of the synchronous calls in `events` (any order; sorted here by time, then
/// file order), in call order, and the transactions read; calls and replies that do not
/// match are counted in `diag` under the `binder:*` kinds of [`STATS`].
pub fn waits(mut events: Vec<BinderEvent>, diag: &mut Diagnostics) -> (Vec<Wait>, Counts) {
    events.sort_unstable_by_key(|e| (e.ts, e.seq));
    let mut m = Matcher::default();
    for e in &events {
        match e.kind {
            BinderKind::Transaction {
                debug_id,
                reply: false,
                flags,
                code,
                ..
            } => {
                if flags & TF_ONE_WAY != 0 {
                    m.counts.oneway_calls += 1;
                } else {
                    m.counts.sync_calls += 1;
                    m.call(e.ts, e.tid, debug_id, flags, code);
                }
            }
            BinderKind::Transaction {
                debug_id,
                reply: true,
                to_thread,
                ..
            } => {
                m.counts.replies += 1;
                m.reply(e.ts, e.tid, to_thread, debug_id);
            }
            BinderKind::Received { debug_id } => m.received(e.ts, e.tid, debug_id),
        }
    }
    let unended: usize = m.outstanding.values().map(Vec::len).sum();
    if unended > 0 {
        *m.dropped.entry(CALL_UNENDED).or_insert(0) += unended as u64;
    }
    for (kind, _) in STATS {
        if let Some(&n) = m.dropped.get(kind) {
            diag.skip_n(kind, n);
        }
    }
    m.waits.sort_unstable_by_key(|w| (w.ts, w.debug_id));
    (m.waits, m.counts)
}

/// The lock id SuperPass's module gives transaction `debug_id` in `superpass_block` and
/// `superpass_grant` (superpass-core's [`binder_txn_lock`](superpass_core::binder_txn_lock)).
pub fn txn_lock(debug_id: i32) -> u64 {
    superpass_core::binder_txn_lock(debug_id as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ts: i64, tid: i32, id: i32, flags: u32) -> BinderEvent {
        BinderEvent {
            ts,
            seq: ts as u32,
            tid,
            kind: BinderKind::Transaction {
                debug_id: id,
                to_proc: 1,
                to_thread: 0,
                reply: false,
                flags,
                code: 7,
            },
        }
    }

    fn reply(ts: i64, tid: i32, id: i32, to: i32) -> BinderEvent {
        BinderEvent {
            ts,
            seq: ts as u32,
            tid,
            kind: BinderKind::Transaction {
                debug_id: id,
                to_proc: 1,
                to_thread: to,
                reply: true,
                flags: 0,
                code: 0,
            },
        }
    }

    fn recv(ts: i64, tid: i32, id: i32) -> BinderEvent {
        BinderEvent {
            ts,
            seq: ts as u32,
            tid,
            kind: BinderKind::Received { debug_id: id },
        }
    }

    #[test]
    fn text_fields_parse_and_bad_ones_do_not() {
        let t =
            "transaction=11 dest_node=3 dest_proc=990 dest_thread=0 reply=0 flags=0x11 code=0x3";
        assert_eq!(
            parse_text(TRANSACTION, t),
            Some(BinderKind::Transaction {
                debug_id: 11,
                to_proc: 990,
                to_thread: 0,
                reply: false,
                flags: 0x11,
                code: 3
            })
        );
        assert_eq!(
            parse_text(RECEIVED, "transaction=11"),
            Some(BinderKind::Received { debug_id: 11 })
        );
        for bad in [
            "transaction=11 dest_proc=990 dest_thread=0 reply=2 flags=0x10",
            "transaction=11 dest_proc=990 dest_thread=0 reply=0",
            "transaction=x dest_proc=990 dest_thread=0 reply=0 flags=0",
            "transaction=99999999999 dest_proc=990 dest_thread=0 reply=0 flags=0",
        ] {
            assert_eq!(parse_text(TRANSACTION, bad), None, "{bad}");
        }
        assert_eq!(parse_text(RECEIVED, "debug_id=4"), None);
    }

    #[test]
    fn a_call_the_client_abandons_is_superseded_not_matched_to_the_next_reply() {
        let mut d = Diagnostics::default();
        let ev = vec![
            call(10, 1, 100, 0),
            recv(11, 2, 100),
            // No reply to 100 (the server died): the client calls again.
            call(20, 1, 102, 0),
            recv(21, 3, 102),
            reply(25, 3, 103, 1),
            recv(26, 1, 103),
        ];
        let (w, c) = waits(ev, &mut d);
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].debug_id, w[0].server, w[0].ts, w[0].end),
            (102, 3, 20, 26)
        );
        assert_eq!(c.sync_calls, 2);
        assert_eq!(d.skipped.get(CALL_SUPERSEDED), Some(&1));
    }

    #[test]
    fn a_reply_from_a_thread_that_did_not_take_the_call_is_no_wait() {
        let mut d = Diagnostics::default();
        let ev = vec![
            call(10, 1, 100, 0),
            recv(11, 2, 100),
            reply(15, 4, 101, 1),
            recv(16, 1, 101),
        ];
        let (w, _) = waits(ev, &mut d);
        assert!(w.is_empty());
        assert_eq!(d.skipped.get(REPLY_MISMATCH), Some(&1));
        assert_eq!(d.skipped.len(), 1, "{:?}", d.skipped);
    }

    #[test]
    fn lock_ids_are_superpass_s() {
        assert_eq!(txn_lock(0x42), 0x5350_4244_0000_0042);
    }
}
