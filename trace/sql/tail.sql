-- Tail of lock waits per lock: p50/p90/p95/p99/max. pXX is the shortest wait whose rank
-- (row_number - 1) / (count - 1) is at least XX/100, i.e. PERCENT_RANK without tie grouping
-- (a lone wait is every percentile). superpass-trace report uses the same definition.
WITH ranked AS (
  SELECT
    name,
    dur,
    ROW_NUMBER() OVER (PARTITION BY name ORDER BY dur) AS rn,
    COUNT(*) OVER (PARTITION BY name) AS n
  FROM thread_slice
  WHERE name GLOB 'lockwait:*' AND dur >= 0
),
pr AS (
  SELECT name, dur, n,
    CASE WHEN n = 1 THEN 1.0 ELSE (rn - 1) * 1.0 / (n - 1) END AS pr
  FROM ranked
)
SELECT
  name,
  n AS count,
  MIN(CASE WHEN pr >= 0.50 THEN dur END) AS p50_ns,
  MIN(CASE WHEN pr >= 0.90 THEN dur END) AS p90_ns,
  MIN(CASE WHEN pr >= 0.95 THEN dur END) AS p95_ns,
  MIN(CASE WHEN pr >= 0.99 THEN dur END) AS p99_ns,
  MAX(dur) AS max_ns
FROM pr
GROUP BY name
ORDER BY name;
