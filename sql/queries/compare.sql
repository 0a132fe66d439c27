-- `poolsight compare` and the dashboard's history page (sql/compare.py): one pool over ranges of
-- event time, each read from the hourly rollups over [:hours_start, :hours_end) and from the panes
-- over [:panes_start, :panes_end) (an empty interval when a range has no such part), every range
-- in one statement of each kind (Query.union_all), its rows headed by the range's number :range.

-- name: compare_rolled_until
-- The pool's newest hour rolled up.
SELECT max(period_start) FROM ${schema}.pool_hour WHERE source = :source AND pool = :pool

-- name: compare_sums
-- Raw sums of a range's rollups and of its panes, a row each (compare.SUMS, in order, after the range).
SELECT :range, sum(source_rows), sum(getpages), sum(seconds), sum(observed_hits), sum(observed_misses),
       sum(sim_sync_reads), sum(sim_seconds), sum(sim_getpages_random), max(max_working_set_pages)
FROM ${schema}.pool_hour
WHERE source = :source AND pool = :pool AND period_start >= :hours_start AND period_start < :hours_end
UNION ALL
SELECT :range, count(*), sum(getpages), sum(seconds), sum(observed_hits), sum(observed_misses), sum(sim_sync_reads),
       sum(CASE WHEN sim_sync_reads IS NOT NULL THEN seconds END),
       sum(CASE WHEN sim_sync_reads IS NOT NULL THEN getpages_random END), max(working_set_pages)
FROM ${schema}.pool_pane
WHERE source = :source AND pool = :pool AND pane_start >= :panes_start AND pane_start < :panes_end

-- name: compare_curve
-- Per size factor of a range's rollups and of its panes: hits, getpages, sync reads, seconds.
SELECT :range, size_factor, sum(hits), sum(refs), sum(sync_reads), sum(seconds)
FROM ${schema}.curve_hour
WHERE source = :source AND pool = :pool AND period_start >= :hours_start AND period_start < :hours_end
  AND size_factor IS NOT NULL AND coalesce(pool_policy, true)
GROUP BY size_factor
UNION ALL
SELECT :range, size_factor, sum(hits), sum(refs), sum(sync_reads), sum(seconds)
FROM ${schema}.sim_curve
WHERE source = :source AND pool = :pool AND pane_start >= :panes_start AND pane_start < :panes_end
  AND size_factor IS NOT NULL AND coalesce(pool_policy, true)
GROUP BY size_factor

-- name: compare_mix
-- Per object of a range's rollups and of its panes: random, sequential and list getpages.
SELECT :range, object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM ${schema}.object_hour
WHERE source = :source AND pool = :pool AND period_start >= :hours_start AND period_start < :hours_end
GROUP BY object
UNION ALL
SELECT :range, object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM ${schema}.object_pane
WHERE source = :source AND pool = :pool AND pane_start >= :panes_start AND pane_start < :panes_end
GROUP BY object
