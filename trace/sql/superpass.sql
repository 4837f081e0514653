-- SuperPass blocking intervals (superpass-trace databases only: trace_processor has no
-- superpass_* tables). An interval runs from superpass_block to the waiter's next Running;
-- first_grant_ns is how long after the block the blocker got the fast track.
WITH blocks AS (
  SELECT b.id, b.ts, b.waiter_utid, b.blocker_utid, b.lock,
    COALESCE(
      (SELECT MIN(s.ts) FROM thread_state s
       WHERE s.utid = b.waiter_utid AND s.state = 'Running' AND s.ts > b.ts),
      (SELECT end_ts FROM trace_bounds)) AS end_ts
  FROM superpass_block b
)
SELECT
  b.id AS block_id,
  b.ts,
  w.tid AS waiter_tid,
  w.name AS waiter,
  k.tid AS blocker_tid,
  k.name AS blocker,
  b.lock,
  b.end_ts - b.ts AS blocked_ns,
  (SELECT MIN(g.ts) FROM superpass_grant g
   WHERE g.blocker_utid = b.blocker_utid AND g.ts >= b.ts AND g.ts < b.end_ts) - b.ts
    AS first_grant_ns
FROM blocks b
JOIN thread w ON w.utid = b.waiter_utid
JOIN thread k ON k.utid = b.blocker_utid
ORDER BY b.ts, b.id;
