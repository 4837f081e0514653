-- superpass-trace database schema: trace_processor's core tables, same names and columns.
--
-- Timestamps and durations are nanoseconds. dur = -1 marks a slice or thread state that had
-- not ended when the trace stopped (as in trace_processor). Ids are row numbers from 0.
-- Indexes are created after the bulk insert (see the end of this file).

CREATE TABLE process (
  upid INTEGER PRIMARY KEY,
  pid INTEGER NOT NULL,
  name TEXT,
  start_ts INTEGER,
  end_ts INTEGER,
  parent_upid INTEGER,
  uid INTEGER,
  cmdline TEXT
);

CREATE TABLE thread (
  utid INTEGER PRIMARY KEY,
  tid INTEGER NOT NULL,
  name TEXT,
  upid INTEGER REFERENCES process(upid),
  is_main_thread INTEGER,
  start_ts INTEGER,
  end_ts INTEGER
);

-- Every track; thread_track, process_track and counter_track are its typed subsets.
CREATE TABLE track (
  id INTEGER PRIMARY KEY,
  name TEXT,
  type TEXT NOT NULL,
  utid INTEGER,
  upid INTEGER
);

CREATE TABLE thread_track (
  id INTEGER PRIMARY KEY,
  name TEXT,
  type TEXT NOT NULL DEFAULT 'thread',
  utid INTEGER NOT NULL REFERENCES thread(utid)
);

CREATE TABLE process_track (
  id INTEGER PRIMARY KEY,
  name TEXT,
  type TEXT NOT NULL DEFAULT 'process',
  upid INTEGER REFERENCES process(upid)
);

CREATE TABLE counter_track (
  id INTEGER PRIMARY KEY,
  name TEXT,
  type TEXT NOT NULL DEFAULT 'counter',
  upid INTEGER REFERENCES process(upid),
  -- The CPU of a per-CPU counter (cpufreq, cpuidle), as trace_processor's cpu_counter_track.
  cpu INTEGER
);

CREATE TABLE slice (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  dur INTEGER NOT NULL,
  track_id INTEGER NOT NULL REFERENCES track(id),
  category TEXT,
  name TEXT NOT NULL,
  depth INTEGER NOT NULL,
  parent_id INTEGER REFERENCES slice(id),
  arg_set_id INTEGER,
  thread_ts INTEGER,
  thread_dur INTEGER,
  -- Older trace_processor spelling of category.
  cat TEXT GENERATED ALWAYS AS (category) VIRTUAL
);

CREATE TABLE counter (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  track_id INTEGER NOT NULL REFERENCES counter_track(id),
  -- NULL where the trace recorded NaN (counted in stats as counter_nan).
  value REAL
);

-- One row per thread per CPU occupancy (trace_processor's sched_slice).
CREATE TABLE sched (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  dur INTEGER NOT NULL,
  cpu INTEGER NOT NULL,
  utid INTEGER NOT NULL REFERENCES thread(utid),
  end_state TEXT,
  priority INTEGER,
  ucpu INTEGER GENERATED ALWAYS AS (cpu) VIRTUAL
);

CREATE VIEW sched_slice AS SELECT * FROM sched;

-- Running, R (runnable), R+ (runnable, preempted), S, D, ... per thread over time.
-- Stored in (utid, ts) order (WITHOUT ROWID, keyed by utid, ts, id): the per-thread interval
-- joins read it like an index, and the importer appends rows in key order instead of
-- building an index afterwards. `id` is still the row's number in time order.
CREATE TABLE thread_state (
  id INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  dur INTEGER NOT NULL,
  cpu INTEGER,
  utid INTEGER NOT NULL REFERENCES thread(utid),
  state TEXT NOT NULL,
  io_wait INTEGER,
  blocked_function TEXT,
  waker_utid INTEGER REFERENCES thread(utid),
  irq_context INTEGER,
  ucpu INTEGER GENERATED ALWAYS AS (cpu) VIRTUAL,
  PRIMARY KEY (utid, ts, id)
) WITHOUT ROWID;

-- trace_processor's stdlib `slices.with_context` thread_slice, as a view.
CREATE VIEW thread_slice AS
SELECT
  s.id, s.ts, s.dur, s.category, s.name, s.track_id, tt.name AS track_name,
  t.name AS thread_name, t.utid, t.tid, p.name AS process_name, t.upid, p.pid,
  s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
FROM slice s
JOIN thread_track tt ON s.track_id = tt.id
JOIN thread t USING (utid)
LEFT JOIN process p USING (upid);

-- SuperPass tracepoints (docs/trace.md). Locks are hex text ('0xffff...').
CREATE TABLE superpass_block (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  waiter_utid INTEGER NOT NULL REFERENCES thread(utid),
  blocker_utid INTEGER NOT NULL REFERENCES thread(utid),
  lock TEXT,
  kind TEXT
);

CREATE TABLE superpass_grant (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  blocker_utid INTEGER NOT NULL REFERENCES thread(utid),
  waiter_utid INTEGER NOT NULL REFERENCES thread(utid),
  root_utid INTEGER REFERENCES thread(utid),
  lock TEXT,
  depth INTEGER
);

CREATE TABLE superpass_revoke (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  blocker_utid INTEGER NOT NULL REFERENCES thread(utid),
  reason TEXT
);

CREATE TABLE superpass_pick (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  utid INTEGER NOT NULL REFERENCES thread(utid)
);

-- A boosted task joined cpu's runqueue; run_now = 1: that CPU was asked to pick again at once.
CREATE TABLE superpass_queue (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  utid INTEGER NOT NULL REFERENCES thread(utid),
  run_now INTEGER NOT NULL
);

-- cpu used up its fast-track share: for dur (ns; the event's for_us) it runs no boosted task
-- ahead of the stock choice.
CREATE TABLE superpass_throttle (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  dur INTEGER NOT NULL
);

-- The on-demand probe groups attached from ts on: 'none', 'owners', 'readers' or
-- 'owners,readers' (cpu: the CPU that recorded the change).
CREATE TABLE superpass_probes (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  cpu INTEGER,
  groups TEXT NOT NULL
);

-- Synchronous binder calls as waits (trace/src/binder.rs): the client from its
-- binder_transaction (reply=0, no TF_ONE_WAY) until it received the reply
-- (binder_transaction_received of the reply); the server, its blocker, is the thread that
-- received the call (or, if that receipt is not in the trace, sent the reply). received_ts:
-- the server took the call (NULL: not in the trace); reply_ts: it sent the reply. parent_id:
-- the wait of the call the client was serving when it called (a nested call). lock: the lock
-- id SuperPass's module gives the transaction in superpass_block/_grant (0x53504244 << 32 |
-- debug_id). One-way calls are no rows; calls and replies without their other end in the
-- trace are counted in stats (binder:*).
CREATE TABLE binder_wait (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  dur INTEGER NOT NULL,
  client_utid INTEGER NOT NULL REFERENCES thread(utid),
  client_tid INTEGER NOT NULL,
  server_utid INTEGER NOT NULL REFERENCES thread(utid),
  server_tid INTEGER NOT NULL,
  debug_id INTEGER NOT NULL,
  reply_debug_id INTEGER NOT NULL,
  received_ts INTEGER,
  reply_ts INTEGER NOT NULL,
  code INTEGER NOT NULL,
  flags INTEGER NOT NULL,
  parent_id INTEGER REFERENCES binder_wait(id),
  lock TEXT NOT NULL
);

-- ART's Java monitor waits (trace/src/monitor_contention.rs): the columns of Perfetto's
-- android_monitor_contention, one row per wait. blocking_tid is the number ART printed (0: no
-- owner; a kernel tid, or ART's thread id on Android 11-13); blocking_utid and
-- blocking_thread_tid are the owner resolved for the era. monotonic_dur = dur (suspend is not
-- subtracted). Beyond Perfetto: the short form and unresolved owners are rows too
-- (long_form = 0; blocking_utid NULL), and lock is ART's name for the lock.
CREATE TABLE monitor_contention (
  blocking_method TEXT,
  blocked_method TEXT,
  short_blocking_method TEXT,
  short_blocked_method TEXT,
  blocking_src TEXT,
  blocked_src TEXT,
  waiter_count INTEGER,
  blocked_utid INTEGER NOT NULL REFERENCES thread(utid),
  blocked_thread_name TEXT,
  blocking_utid INTEGER REFERENCES thread(utid),
  blocking_thread_name TEXT,
  blocking_tid INTEGER,
  upid INTEGER REFERENCES process(upid),
  process_name TEXT,
  id INTEGER PRIMARY KEY REFERENCES slice(id),
  ts INTEGER NOT NULL,
  dur INTEGER NOT NULL,
  monotonic_dur INTEGER NOT NULL,
  track_id INTEGER NOT NULL REFERENCES track(id),
  is_blocked_thread_main INTEGER,
  blocked_thread_tid INTEGER NOT NULL,
  is_blocking_thread_main INTEGER,
  blocking_thread_tid INTEGER,
  binder_reply_id INTEGER REFERENCES slice(id),
  binder_reply_ts INTEGER,
  binder_reply_tid INTEGER,
  pid INTEGER,
  lock TEXT NOT NULL,
  long_form INTEGER NOT NULL
);

-- Trace-wide facts: trace_bounds like trace_processor's, and the importer's diagnostics.
CREATE TABLE trace_bounds (start_ts INTEGER NOT NULL, end_ts INTEGER NOT NULL);

-- What the import skipped or repaired, one row per kind (as trace_processor's stats):
-- severity 'data_loss' (trace data not imported), 'error' (input damaged) or 'info'.
CREATE TABLE stats (
  name TEXT PRIMARY KEY,
  severity TEXT NOT NULL,
  value INTEGER NOT NULL,
  description TEXT
);

CREATE TABLE metadata (
  name TEXT PRIMARY KEY,
  int_value INTEGER,
  str_value TEXT
);
