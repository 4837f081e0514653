-- Census of lock waits and holds: how many, how long in total, on average, at most.
-- Runs in trace_processor (after INCLUDE PERFETTO MODULE slices.with_context;) and on a
-- superpass-trace database. Slices with no end (dur = -1) are left out.
SELECT
  name,
  COUNT(*) AS count,
  SUM(dur) AS total_ns,
  CAST(AVG(dur) AS INT) AS avg_ns,
  MAX(dur) AS max_ns
FROM thread_slice
WHERE (name GLOB 'lockwait:*' OR name GLOB 'lockhold:*') AND dur >= 0
GROUP BY name
ORDER BY name;
