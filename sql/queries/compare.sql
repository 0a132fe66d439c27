-- `poolsight compare` and the dashboard's history page (sql/compare.py): one pool over a range
-- [:start, :end), from the panes or from the hourly rollups.

-- name: compare_rolled_until
-- The pool's newest hour rolled up.
SELECT max(period_start) FROM ${schema}.pool_hour WHERE source = :source AND pool = :pool

-- name: compare_panes
-- Raw sums of the range from the panes (compare.SUMS, in order).
SELECT count(*), sum(getpages), sum(seconds), sum(observed_hits), sum(observed_misses), sum(sim_sync_reads),
       sum(CASE WHEN sim_sync_reads IS NOT NULL THEN seconds END),
       sum(CASE WHEN sim_sync_reads IS NOT NULL THEN getpages_random END), max(working_set_pages)
FROM ${schema}.pool_pane
WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end

-- name: compare_hours
-- Raw sums of the range from the hourly rollup (compare.SUMS, in order).
SELECT sum(source_rows), sum(getpages), sum(seconds), sum(observed_hits), sum(observed_misses), sum(sim_sync_reads),
       sum(sim_seconds), sum(sim_getpages_random), max(max_working_set_pages)
FROM ${schema}.pool_hour
WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end

-- name: compare_curve
-- Per size factor from the panes: hits, getpages, sync reads, seconds.
SELECT size_factor, sum(hits), sum(refs), sum(sync_reads), sum(seconds)
FROM ${schema}.sim_curve
WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end AND size_factor IS NOT NULL
  AND coalesce(pool_policy, true)
GROUP BY size_factor

-- name: compare_curve_hours
-- Per size factor from the hourly rollup: hits, getpages, sync reads, seconds.
SELECT size_factor, sum(hits), sum(refs), sum(sync_reads), sum(seconds)
FROM ${schema}.curve_hour
WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end AND size_factor IS NOT NULL
  AND coalesce(pool_policy, true)
GROUP BY size_factor

-- name: compare_mix
-- Per object from the panes: random, sequential and list getpages.
SELECT object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM ${schema}.object_pane
WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
GROUP BY object

-- name: compare_mix_hours
-- Per object from the hourly rollup: random, sequential and list getpages.
SELECT object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM ${schema}.object_hour
WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end
GROUP BY object
