-- The simulated curve per pool over a window, with CPU and I/O wait per size: the ONE definition
-- of both sim_curve_latest (views.sql, ${curve_latest}: each pool's latest 15 minutes) and the
-- pool page's curve (queries/dashboard.sql pool_curve, ${curve_window}: one source and pool over
-- a given window). sql/curve.py fills ${window} (the CTE `win`: source, pool, window_start,
-- window_end per pool) and ${io_only}, ${stats_only}, ${curve_only}: nothing for the view, and
-- for the page the source, pool and time filters written straight on each scan, so that Iceberg
-- prunes to the window's day partitions of that pool (the page's p95, sql/README.md).
-- Each size is priced with the pool's measured average sync read time over the window: its I/O
-- events, else its statistics, else the configured time the jobs applied (--sync-io-ms).
WITH win AS (
  ${window}
), u AS (
  -- One scan each of the curve's panes, the I/O events and the statistics, in one UNION ALL that
  -- one aggregation adds up (Trino plans each join of separate aggregates as stages of their own,
  -- sql/README.md): curve rows by size, the rest into one row per pool (is_curve false).
  SELECT c.source, c.pool, w.window_start, w.window_end, true AS is_curve, c.size_pages, c.size_factor,
         c.is_current, c.refs, c.hits, c.misses, c.sync_reads, c.seconds, c.prefetch_pages,
         c.avoided_sync_reads_per_s, c.cpu_seconds_saved_per_s, c.elapsed_seconds_saved_per_s,
         c.cpu_us_per_sync_read, NULL AS io_elapsed_us, NULL AS ios, NULL AS stats_ms_reads, NULL AS stats_reads
  FROM ${schema}.sim_curve c
  JOIN win w ON c.source = w.source AND c.pool = w.pool
  WHERE c.pane_end > w.window_start${curve_only}
    AND coalesce(c.pool_policy, true)  -- the pool's own policy (rows before the column: the only model)
  UNION ALL
  SELECT i.source, i.pool, w.window_start, w.window_end, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, i.elapsed_us, i.ios, NULL, NULL
  FROM ${schema}.io_pane i
  JOIN win w ON i.source = w.source AND i.pool = w.pool
  WHERE i.direction = 'read' AND i.io_type = 'sync'
    AND i.pane_end > w.window_start AND i.pane_start < w.window_end${io_only}
  UNION ALL
  SELECT s.source, s.pool, w.window_start, w.window_end, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, s.sync_reads * s.sync_read_avg_ms, s.sync_reads
  FROM ${schema}.object_io_stats s
  JOIN win w ON s.source = w.source AND s.pool = w.pool
  WHERE s.sync_read_avg_ms IS NOT NULL
    AND s.interval_end > w.window_start AND s.interval_start < w.window_end${stats_only}
), curve AS (
  SELECT source, pool, window_start, window_end, is_curve, size_pages,
         max(size_factor) AS size_factor,
         bool_or(is_current) AS is_current,
         count(*) AS panes,
         sum(refs) AS getpages,
         sum(hits) / nullif(sum(refs), 0) AS hit_ratio,
         sum(misses) / nullif(sum(refs), 0) AS miss_ratio,
         sum(sync_reads) / nullif(sum(seconds), 0) AS sync_reads_per_s,
         sum(prefetch_pages) / nullif(sum(seconds), 0) AS prefetch_pages_per_s,
         sum(avoided_sync_reads_per_s * seconds) / nullif(sum(seconds), 0) AS avoided_sync_reads_per_s,
         sum(cpu_seconds_saved_per_s * seconds) / nullif(sum(seconds), 0) AS cpu_seconds_saved_per_s,
         sum(elapsed_seconds_saved_per_s * seconds) / nullif(sum(seconds), 0) AS configured_elapsed_saved_per_s,
         -- The configured sync I/O time (jobs submit --sync-io-ms), as the rows applied it.
         1e3 * sum(abs(elapsed_seconds_saved_per_s)) / nullif(sum(abs(avoided_sync_reads_per_s)), 0) AS configured_ms,
         max(coalesce(cpu_us_per_sync_read, 30e0)) AS cpu_us_per_sync_read,  -- 30 µs: rows written before the column
         -- the pool's row (is_curve false): its average sync read time from the I/O events and the statistics
         sum(io_elapsed_us) / 1e3 / nullif(sum(ios), 0) AS io_ms,
         sum(stats_ms_reads) / nullif(sum(stats_reads), 0) AS stats_ms
  FROM u
  GROUP BY source, pool, window_start, window_end, is_curve, size_pages
), timed AS (
  SELECT curve.*,
         coalesce(max(io_ms) OVER pool_w, max(stats_ms) OVER pool_w, configured_ms) AS sync_read_ms,
         CASE WHEN max(io_ms) OVER pool_w IS NOT NULL THEN 'io-events'
              WHEN max(stats_ms) OVER pool_w IS NOT NULL THEN 'statistics'
              WHEN configured_ms IS NOT NULL THEN 'configured' END AS sync_read_ms_from
  FROM curve
  WINDOW pool_w AS (PARTITION BY source, pool, window_start, window_end)
)
SELECT source, pool, window_start, window_end, size_pages, size_factor, is_current, panes, getpages,
       hit_ratio, miss_ratio, sync_reads_per_s, prefetch_pages_per_s, avoided_sync_reads_per_s,
       cpu_seconds_saved_per_s,
       coalesce(avoided_sync_reads_per_s * sync_read_ms / 1e3, configured_elapsed_saved_per_s) AS elapsed_seconds_saved_per_s,
       sync_read_ms, sync_read_ms_from, cpu_us_per_sync_read,
       sync_reads_per_s * cpu_us_per_sync_read * 1e-6 AS cpu_seconds_per_s,
       sync_reads_per_s * cpu_us_per_sync_read * 1e-6 * 86400 AS cpu_seconds_per_24h,
       sync_reads_per_s * sync_read_ms / 1e3 AS io_elapsed_seconds_per_s,
       sync_reads_per_s * sync_read_ms / 1e3 * 86400 AS delay_seconds_per_24h,
       cpu_seconds_saved_per_s * 86400 AS cpu_seconds_saved_per_24h,
       coalesce(avoided_sync_reads_per_s * sync_read_ms / 1e3, configured_elapsed_saved_per_s) * 86400
         AS elapsed_seconds_saved_per_24h
FROM timed
WHERE is_curve
