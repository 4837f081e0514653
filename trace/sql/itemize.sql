-- Each long wait itemized by the waiter's thread state: asleep (S, D, ...), runnable but
-- not on a CPU (R, R+; the share SuperPass removes), running; plus who woke it.
-- unknown_ns is wait time with no thread_state row (no sched data for the thread).
WITH params AS (SELECT 1000000 AS long_ns),
waits AS (
  SELECT id, ts, dur, ts + dur AS end_ts, utid, tid, thread_name, SUBSTR(name, 10) AS lock
  FROM thread_slice, params
  WHERE name GLOB 'lockwait:*' AND dur >= long_ns
),
states AS (
  SELECT utid, ts, state, waker_utid,
    CASE WHEN dur < 0 THEN (SELECT end_ts FROM trace_bounds) ELSE ts + dur END AS end_ts
  FROM thread_state
),
parts AS (
  SELECT w.id AS wait_id, s.state, s.ts, s.waker_utid,
    MIN(s.end_ts, w.end_ts) - MAX(s.ts, w.ts) AS ns
  FROM waits w
  JOIN states s ON s.utid = w.utid AND s.ts < w.end_ts AND s.end_ts > w.ts
)
SELECT
  w.id AS wait_id,
  w.lock,
  w.tid AS waiter_tid,
  w.thread_name AS waiter,
  w.dur AS wait_ns,
  COALESCE(SUM(CASE WHEN p.state NOT IN ('Running', 'R', 'R+') THEN p.ns END), 0) AS asleep_ns,
  COALESCE(SUM(CASE WHEN p.state IN ('R', 'R+') THEN p.ns END), 0) AS runnable_ns,
  COALESCE(SUM(CASE WHEN p.state = 'Running' THEN p.ns END), 0) AS running_ns,
  w.dur - COALESCE(SUM(p.ns), 0) AS unknown_ns,
  (SELECT GROUP_CONCAT(t.tid) FROM parts q JOIN thread t ON t.utid = q.waker_utid
   WHERE q.wait_id = w.id AND q.ts >= w.ts) AS woken_by_tids
FROM waits w
LEFT JOIN parts p ON p.wait_id = w.id
GROUP BY w.id
ORDER BY w.dur DESC, w.id;
