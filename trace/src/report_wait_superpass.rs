//! What SuperPass did inside one long wait (the report's `long_waits.worst[].superpass`).
//!
//! - the `superpass_*` events of the window that concern its waiter: blocks naming it,
//!   grants on its behalf (directly or down its chain), and the revokes, picks and runqueue
//!   joins (`superpass_queue`) of those blockers and of the waiter itself (its wake turn);
//!   a *budget regrant* is a grant to a task whose previous revoke was for its budget;
//! - the throttles of any CPU that overlap the window: a throttled CPU runs no boosted task
//!   ahead of the stock choice, whichever wait the task serves;
//! - the probe groups attached at the wait's start and each change during it: a wait whose
//!   lock operations no attached group probes is not seen.
//!
//! A kind the trace holds no event of at all is `null` (the tracepoint was off, or the
//! module predates it), not an empty list: "none in the window" and "not traced" differ.

use rusqlite::Connection;
use serde_json::{json, Value};

/// Whether the database has table `name`: one an older import wrote lacks the newer
/// `superpass_*` tables, and reads as a trace without those events.
pub(crate) fn has_table(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// One `superpass_*` event that concerns a waiter, its threads as utids.
#[derive(Debug, Clone)]
enum Event {
    Block {
        waiter: u32,
        blocker: u32,
    },
    Grant {
        blocker: u32,
        waiter: u32,
        root: u32,
    },
    Revoke {
        blocker: u32,
        reason: String,
    },
    Pick {
        utid: u32,
    },
    Queue {
        utid: u32,
        cpu: i64,
        run_now: bool,
    },
}

/// A `superpass_throttle`: `cpu` throttled over `[ts, ts + dur)`.
#[derive(Debug, Clone, Copy)]
struct Throttle {
    ts: i64,
    cpu: i64,
    dur: i64,
}

/// SuperPass's events of a whole trace, in ts order, loaded once for all the long waits.
pub(crate) struct Timeline {
    events: Vec<(i64, Event)>,
    /// Whether any `superpass_queue` is in `events`.
    queued: bool,
    throttles: Vec<Throttle>,
    /// The longest throttle: only throttles starting that long before a window can reach it.
    longest_throttle: i64,
    /// `superpass_probes`: (ts, groups attached from then on).
    probes: Vec<(i64, String)>,
}

impl Timeline {
    pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Timeline> {
        let mut events = Vec::new();
        let queue_sql = if has_table(conn, "superpass_queue")? {
            "UNION ALL SELECT ts, 4, COALESCE(cpu, -1), utid, run_now, '' FROM superpass_queue"
        } else {
            ""
        };
        let mut st = conn.prepare(&format!(
            "SELECT ts, 0, waiter_utid, blocker_utid, 0, '' FROM superpass_block \
             UNION ALL SELECT ts, 1, waiter_utid, blocker_utid, COALESCE(root_utid, waiter_utid), '' \
             FROM superpass_grant \
             UNION ALL SELECT ts, 2, 0, blocker_utid, 0, COALESCE(reason, '') FROM superpass_revoke \
             UNION ALL SELECT ts, 3, 0, utid, 0, '' FROM superpass_pick {queue_sql} ORDER BY 1, 2",
        ))?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let (a, who, c): (i64, u32, i64) = (r.get(2)?, r.get(3)?, r.get(4)?);
            let ev = match r.get::<_, i64>(1)? {
                0 => Event::Block {
                    waiter: a as u32,
                    blocker: who,
                },
                1 => Event::Grant {
                    blocker: who,
                    waiter: a as u32,
                    root: c as u32,
                },
                2 => Event::Revoke {
                    blocker: who,
                    reason: r.get(5)?,
                },
                3 => Event::Pick { utid: who },
                _ => Event::Queue {
                    utid: who,
                    cpu: a,
                    run_now: c != 0,
                },
            };
            events.push((r.get(0)?, ev));
        }
        let queued = events.iter().any(|(_, e)| matches!(e, Event::Queue { .. }));
        let mut throttles = Vec::new();
        if has_table(conn, "superpass_throttle")? {
            let mut st = conn.prepare(
                "SELECT ts, COALESCE(cpu, -1), dur FROM superpass_throttle ORDER BY ts, id",
            )?;
            let rows = st.query_map([], |r| {
                Ok(Throttle {
                    ts: r.get(0)?,
                    cpu: r.get(1)?,
                    dur: r.get(2)?,
                })
            })?;
            throttles = rows.collect::<rusqlite::Result<_>>()?;
        }
        let longest_throttle = throttles.iter().map(|t| t.dur).max().unwrap_or(0);
        let mut probes = Vec::new();
        if has_table(conn, "superpass_probes")? {
            let mut st = conn.prepare("SELECT ts, groups FROM superpass_probes ORDER BY ts, id")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            probes = rows.collect::<rusqlite::Result<_>>()?;
        }
        Ok(Timeline {
            events,
            queued,
            throttles,
            longest_throttle,
            probes,
        })
    }

    /// Whether the trace has no SuperPass event at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty() && self.throttles.is_empty() && self.probes.is_empty()
    }

    /// What SuperPass did in the wait of `waiter` over `[ws, we)` (see the module's
    /// definitions); `thread` describes a utid.
    pub(crate) fn in_wait(
        &self,
        waiter: u32,
        ws: i64,
        we: i64,
        thread: impl Fn(u32) -> Value,
    ) -> Value {
        let lo = self.events.partition_point(|(ts, _)| *ts < ws);
        let hi = self.events.partition_point(|(ts, _)| *ts < we);
        let mut blockers: Vec<u32> = vec![waiter];
        let (mut blocks, mut grants, mut revokes) = (Vec::new(), Vec::new(), Vec::new());
        let mut queues = Vec::new();
        let (mut picks, mut regrants) = (0, 0);
        for i in lo..hi {
            let (ts, ev) = &self.events[i];
            match ev {
                Event::Block { waiter: w, blocker } if *w == waiter => {
                    blocks.push(json!({"ts": ts, "blocker": thread(*blocker)}));
                }
                Event::Grant {
                    blocker,
                    waiter: w,
                    root,
                } if *w == waiter || *root == waiter || blockers.contains(w) => {
                    if !blockers.contains(blocker) {
                        blockers.push(*blocker);
                    }
                    let after_budget = self.events[..i]
                        .iter()
                        .rev()
                        .find_map(|(_, e)| match e {
                            Event::Revoke { blocker: b, reason } if b == blocker => {
                                Some(reason == "budget")
                            }
                            _ => None,
                        })
                        .unwrap_or(false);
                    regrants += usize::from(after_budget);
                    grants.push(json!({
                        "ts": ts,
                        "blocker": thread(*blocker),
                        "budget_regrant": after_budget,
                    }));
                }
                Event::Revoke { blocker, reason } if blockers.contains(blocker) => {
                    revokes.push(json!({"ts": ts, "blocker": thread(*blocker), "reason": reason}));
                }
                Event::Pick { utid } if blockers.contains(utid) => picks += 1,
                Event::Queue { utid, cpu, run_now } if blockers.contains(utid) => {
                    queues.push(json!({
                        "ts": ts,
                        "thread": thread(*utid),
                        "cpu": cpu,
                        "run_now": run_now,
                    }));
                }
                _ => {}
            }
        }
        json!({
            "registered": !blocks.is_empty(),
            "blocks": blocks,
            "grants": grants,
            "revokes": revokes,
            "budget_regrants": regrants,
            "picks": picks,
            "queues": if self.queued { Value::from(queues) } else { Value::Null },
            "throttles": self.throttles_over(ws, we),
            "probe_groups": self.probe_groups(ws, we),
        })
    }

    /// The throttles of any CPU that overlap `[ws, we)`, also one that began before it.
    fn throttles_over(&self, ws: i64, we: i64) -> Value {
        if self.throttles.is_empty() {
            return Value::Null;
        }
        let hi = self.throttles.partition_point(|t| t.ts < we);
        let lo = self.throttles[..hi]
            .partition_point(|t| t.ts < ws.saturating_sub(self.longest_throttle));
        let over: Vec<Value> = self.throttles[lo..hi]
            .iter()
            .filter(|t| t.ts.saturating_add(t.dur) > ws)
            .map(|t| json!({"ts": t.ts, "cpu": t.cpu, "dur": t.dur}))
            .collect();
        Value::from(over)
    }

    /// The groups attached at `ws` (the latest change at or before it; null when the trace
    /// shows none that early) and each change inside `(ws, we)`.
    fn probe_groups(&self, ws: i64, we: i64) -> Value {
        if self.probes.is_empty() {
            return Value::Null;
        }
        let lo = self.probes.partition_point(|(ts, _)| *ts <= ws);
        let hi = self.probes.partition_point(|(ts, _)| *ts < we);
        let at_start = lo.checked_sub(1).map(|i| self.probes[i].1.as_str());
        let changes: Vec<Value> = self.probes[lo..hi.max(lo)]
            .iter()
            .map(|(ts, groups)| json!({"ts": ts, "groups": groups}))
            .collect();
        json!({"at_start": at_start, "changes": changes})
    }
}
