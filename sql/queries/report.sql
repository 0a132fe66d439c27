-- `poolsight report SOURCE` (sql/report.py): the subsystem and its pools over one period of the
-- statistics, the newest of the grain ending at or before :at (null: the newest there is).

-- name: report_subsystem
-- The subsystem row (columns in the order of report.SUBSYSTEM_COLUMNS).
SELECT grain, source, period_start, period_end, pools, buffers_4k, buffers_8k, buffers_16k, buffers_32k,
       memory_mb_4k, memory_mb_8k, memory_mb_16k, memory_mb_32k, memory_mb, getpages_per_s, sync_reads_per_s,
       prefetch_pages_per_s, application_hit_ratio, system_hit_ratio
FROM ${schema}.subsystem_summary
WHERE source = :source AND grain = :grain AND period_end = (
  SELECT max(period_end) FROM ${schema}.subsystem_summary
  WHERE source = :source AND grain = :grain AND period_end <= coalesce(:at, period_end))

-- name: report_pools
-- Its pools, busiest in sync reads first (columns in the order of report.POOL_COLUMNS).
SELECT pool, buffers, page_size, memory_mb, getpages_per_s, sync_reads_per_s, prefetch_pages_per_s,
       application_hit_ratio, system_hit_ratio, pages_per_write, sync_read_share, memory_share
FROM ${schema}.subsystem_pool_summary
WHERE source = :source AND grain = :grain AND period_end = (
  SELECT max(period_end) FROM ${schema}.subsystem_pool_summary
  WHERE source = :source AND grain = :grain AND period_end <= coalesce(:at, period_end))
ORDER BY sync_reads_per_s DESC NULLS LAST, pool
