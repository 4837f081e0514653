-- Barging: for each long wait, acquisitions of the same lock by other threads that began
-- while it waited (an unfair lock let them in ahead of a waiter that was woken or queued).
WITH params AS (SELECT 1000000 AS long_ns),
waits AS (
  SELECT id, ts, dur, ts + dur AS end_ts, utid, tid, thread_name, SUBSTR(name, 10) AS lock
  FROM thread_slice, params
  WHERE name GLOB 'lockwait:*' AND dur >= long_ns
),
holds AS (
  SELECT id, ts, utid, tid, SUBSTR(name, 10) AS lock
  FROM thread_slice
  WHERE name GLOB 'lockhold:*'
)
SELECT
  w.id AS wait_id,
  w.lock,
  w.tid AS waiter_tid,
  w.thread_name AS waiter,
  w.dur AS wait_ns,
  COUNT(h.id) AS acquisitions,
  GROUP_CONCAT(h.tid) AS by_tids
FROM waits w
LEFT JOIN holds h
  ON h.lock = w.lock AND h.utid != w.utid AND h.ts > w.ts AND h.ts < w.end_ts
GROUP BY w.id
ORDER BY w.dur DESC, w.id;
