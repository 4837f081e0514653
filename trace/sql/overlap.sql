-- Long waits (>= long_ns) and the holds of the same lock by other threads that overlap
-- them: who was holding the lock while the waiter waited, and for how long of the wait.
-- A hold with no end counts until the end of the trace.
WITH params AS (SELECT 1000000 AS long_ns),
waits AS (
  SELECT id, ts, dur, ts + dur AS end_ts, utid, tid, thread_name, SUBSTR(name, 10) AS lock
  FROM thread_slice, params
  WHERE name GLOB 'lockwait:*' AND dur >= long_ns
),
holds AS (
  SELECT id, ts, utid, tid, thread_name, SUBSTR(name, 10) AS lock,
    CASE WHEN dur < 0 THEN (SELECT end_ts FROM trace_bounds) ELSE ts + dur END AS end_ts
  FROM thread_slice
  WHERE name GLOB 'lockhold:*'
)
SELECT
  w.id AS wait_id,
  w.lock,
  w.tid AS waiter_tid,
  w.thread_name AS waiter,
  w.dur AS wait_ns,
  h.id AS hold_id,
  h.tid AS holder_tid,
  h.thread_name AS holder,
  MIN(w.end_ts, h.end_ts) - MAX(w.ts, h.ts) AS overlap_ns
FROM waits w
JOIN holds h
  ON h.lock = w.lock AND h.utid != w.utid AND h.ts < w.end_ts AND h.end_ts > w.ts
ORDER BY w.dur DESC, w.id, h.ts;
