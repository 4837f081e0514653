-- While a long wait overlaps another thread's hold of the same lock, what was the holder
-- doing? Holder time in R/R+ is CPU starvation of the lock owner: what SuperPass fixes.
WITH params AS (SELECT 1000000 AS long_ns),
waits AS (
  SELECT id, ts, ts + dur AS end_ts, utid, SUBSTR(name, 10) AS lock
  FROM thread_slice, params
  WHERE name GLOB 'lockwait:*' AND dur >= long_ns
),
holds AS (
  SELECT id, ts, utid, tid, thread_name, SUBSTR(name, 10) AS lock,
    CASE WHEN dur < 0 THEN (SELECT end_ts FROM trace_bounds) ELSE ts + dur END AS end_ts
  FROM thread_slice
  WHERE name GLOB 'lockhold:*'
),
overlaps AS (
  SELECT w.id AS wait_id, h.id AS hold_id, h.utid, h.tid, h.thread_name,
    MAX(w.ts, h.ts) AS o_start, MIN(w.end_ts, h.end_ts) AS o_end
  FROM waits w
  JOIN holds h
    ON h.lock = w.lock AND h.utid != w.utid AND h.ts < w.end_ts AND h.end_ts > w.ts
),
states AS (
  SELECT utid, ts, state,
    CASE WHEN dur < 0 THEN (SELECT end_ts FROM trace_bounds) ELSE ts + dur END AS end_ts
  FROM thread_state
)
SELECT
  o.wait_id,
  o.hold_id,
  o.tid AS holder_tid,
  o.thread_name AS holder,
  o.o_end - o.o_start AS overlap_ns,
  COALESCE(SUM(CASE WHEN s.state NOT IN ('Running', 'R', 'R+')
    THEN MIN(s.end_ts, o.o_end) - MAX(s.ts, o.o_start) END), 0) AS asleep_ns,
  COALESCE(SUM(CASE WHEN s.state IN ('R', 'R+')
    THEN MIN(s.end_ts, o.o_end) - MAX(s.ts, o.o_start) END), 0) AS runnable_ns,
  COALESCE(SUM(CASE WHEN s.state = 'Running'
    THEN MIN(s.end_ts, o.o_end) - MAX(s.ts, o.o_start) END), 0) AS running_ns
FROM overlaps o
LEFT JOIN states s ON s.utid = o.utid AND s.ts < o.o_end AND s.end_ts > o.o_start
GROUP BY o.wait_id, o.hold_id
ORDER BY o.wait_id, o.hold_id;
