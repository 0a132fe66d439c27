-- Trino views over the Iceberg tables; the launcher creates them (CREATE OR REPLACE).
-- ${schema} is the catalog and namespace from poolsight/names.py. Statements end with ';'.

-- One row per pool and statistics interval, like the pool table of a statistics report:
-- getpages, sync read I/O per second, hit ratios, pages per write (seed 000).
CREATE OR REPLACE VIEW ${schema}.pool_summary
COMMENT 'One row per pool and statistics interval: getpages, read I/O per second, hit ratios, pages per write'
AS SELECT
  source, pool, interval_start, interval_end, interval_seconds, origin,
  vpsize, getpages,
  getpages / nullif(interval_seconds, 0) AS getpages_per_second,
  sync_reads_random + sync_reads_sequential AS sync_reads,
  sync_reads_per_second,
  read_ios_per_second,
  pages_read_per_second,
  application_hit_ratio,
  system_hit_ratio,
  pages_written,
  pages_per_write,
  io_intensity,
  flags
FROM ${schema}.pool_stats;

-- The subsystem at a glance, from the statistics (seed 000's summary, seed 001's pools): per
-- source, pool and period (grain 'interval': each statistics interval, by its end; 'hour' and
-- 'day': the rollups stats_hour, stats_day), the pool's buffers and memory, its rates, its hit
-- ratios and its share of the subsystem's sync reads and memory. A pool stated twice in one
-- interval (a report in two halves, each with half the counters) is one row: counters added,
-- VPSIZE taken once. Buffers: VPSIZE from the attributes, else the buffers allocated; the page
-- size from the attributes, else the z/OS pool name (BP8K*: 8K, BP16K*: 16K, BP32K*: 32K, else 4K).
CREATE OR REPLACE VIEW ${schema}.subsystem_pool_summary
COMMENT 'Per source, grain (interval, hour, day), period and pool: buffers, MB, rates, hit ratios, share of sync reads and memory'
AS WITH page AS (
  SELECT source, pool, max_by(page_size, interval_end) AS page_size
  FROM ${schema}.pool_stats WHERE page_size IS NOT NULL GROUP BY source, pool
), rows_ AS (
  SELECT 'interval' AS grain, source, pool, interval_start AS period_start, interval_end AS period_end,
         interval_seconds AS seconds, coalesce(vpsize, buffers_allocated) AS buffers,
         getpages_random, getpages_sequential, sync_reads_random, sync_reads_sequential,
         seq_prefetch_pages, list_prefetch_pages, dyn_prefetch_pages, pages_written, sync_writes, async_writes
  FROM ${schema}.pool_stats
  UNION ALL
  SELECT 'hour', source, pool, period_start, period_end, interval_seconds, coalesce(vpsize, buffers_allocated),
         getpages_random, getpages_sequential, sync_reads_random, sync_reads_sequential,
         seq_prefetch_pages, list_prefetch_pages, dyn_prefetch_pages, pages_written, sync_writes, async_writes
  FROM ${schema}.stats_hour
  UNION ALL
  SELECT 'day', source, pool, period_start, period_end, interval_seconds, coalesce(vpsize, buffers_allocated),
         getpages_random, getpages_sequential, sync_reads_random, sync_reads_sequential,
         seq_prefetch_pages, list_prefetch_pages, dyn_prefetch_pages, pages_written, sync_writes, async_writes
  FROM ${schema}.stats_day
), pools AS (
  SELECT r.grain, r.source, r.pool, min(r.period_start) AS period_start, r.period_end,
         max(r.seconds) AS seconds, max(r.buffers) AS buffers,
         coalesce(max(g.page_size), CASE
           WHEN upper(r.pool) LIKE 'BP8K%' THEN 8192 WHEN upper(r.pool) LIKE 'BP16K%' THEN 16384
           WHEN upper(r.pool) LIKE 'BP32K%' THEN 32768 ELSE 4096 END) AS page_size,
         sum(r.getpages_random + r.getpages_sequential) AS getpages,
         sum(r.sync_reads_random + r.sync_reads_sequential) AS sync_reads,
         sum(CASE WHEN coalesce(r.seq_prefetch_pages, r.list_prefetch_pages, r.dyn_prefetch_pages) IS NOT NULL
                  THEN coalesce(r.seq_prefetch_pages, 0) + coalesce(r.list_prefetch_pages, 0)
                       + coalesce(r.dyn_prefetch_pages, 0) END) AS prefetch_pages,
         sum(r.pages_written) AS pages_written, sum(r.sync_writes + r.async_writes) AS write_ios
  FROM rows_ r
  LEFT JOIN page g ON g.source = r.source AND g.pool = r.pool
  GROUP BY r.grain, r.source, r.pool, r.period_end
), rated AS (
  SELECT *, buffers * page_size / 1048576e0 AS memory_mb,
         getpages / nullif(seconds, 0) AS getpages_per_s,
         sync_reads / nullif(seconds, 0) AS sync_reads_per_s,
         prefetch_pages / nullif(seconds, 0) AS prefetch_pages_per_s
  FROM pools
)
SELECT grain, source, period_start, period_end, pool, seconds, buffers, page_size, memory_mb,
       getpages, sync_reads, prefetch_pages, getpages_per_s, sync_reads_per_s, prefetch_pages_per_s,
       1 - sync_reads * 1e0 / nullif(getpages, 0) AS application_hit_ratio,
       1 - (sync_reads + prefetch_pages) * 1e0 / nullif(getpages, 0) AS system_hit_ratio,
       pages_written * 1e0 / nullif(write_ios, 0) AS pages_per_write,
       sync_reads_per_s / nullif(sum(sync_reads_per_s) OVER w, 0) AS sync_read_share,
       memory_mb / nullif(sum(memory_mb) OVER w, 0) AS memory_share
FROM rated
WINDOW w AS (PARTITION BY grain, source, period_end);

-- The subsystem per source and period, from subsystem_pool_summary: pools, buffers and MB per
-- page size, the rates added up over the pools, hit ratios from the summed counters (never
-- averaged), and each pool's share of the sync reads and of the memory.
CREATE OR REPLACE VIEW ${schema}.subsystem_summary
COMMENT 'Per source, grain (interval, hour, day) and period: pools, buffers and MB per page size, rates, hit ratios, each pool share'
AS SELECT grain, source, min(period_start) AS period_start, period_end, count(*) AS pools,
       sum(buffers) FILTER (WHERE page_size = 4096) AS buffers_4k,
       sum(buffers) FILTER (WHERE page_size = 8192) AS buffers_8k,
       sum(buffers) FILTER (WHERE page_size = 16384) AS buffers_16k,
       sum(buffers) FILTER (WHERE page_size = 32768) AS buffers_32k,
       sum(memory_mb) FILTER (WHERE page_size = 4096) AS memory_mb_4k,
       sum(memory_mb) FILTER (WHERE page_size = 8192) AS memory_mb_8k,
       sum(memory_mb) FILTER (WHERE page_size = 16384) AS memory_mb_16k,
       sum(memory_mb) FILTER (WHERE page_size = 32768) AS memory_mb_32k,
       sum(memory_mb) AS memory_mb,
       sum(getpages_per_s) AS getpages_per_s,
       sum(sync_reads_per_s) AS sync_reads_per_s,
       sum(prefetch_pages_per_s) AS prefetch_pages_per_s,
       1 - sum(sync_reads) FILTER (WHERE getpages IS NOT NULL) * 1e0
         / nullif(sum(getpages) FILTER (WHERE sync_reads IS NOT NULL), 0) AS application_hit_ratio,
       1 - sum(sync_reads + prefetch_pages) FILTER (WHERE getpages IS NOT NULL) * 1e0
         / nullif(sum(getpages) FILTER (WHERE sync_reads IS NOT NULL AND prefetch_pages IS NOT NULL), 0)
         AS system_hit_ratio,
       map_agg(pool, sync_read_share) AS sync_read_share,
       map_agg(pool, memory_share) AS memory_share
FROM ${schema}.subsystem_pool_summary
GROUP BY grain, source, period_end;

-- Measured I/O per pool, object, pane, direction and type from the I/O events (io_pane,
-- its rows of one key added up): I/Os per second, pages per I/O, average and longest elapsed.
CREATE OR REPLACE VIEW ${schema}.io_summary
COMMENT 'Measured I/O per pool, object, pane and type (I/O events): I/Os per second, pages per I/O, average and max elapsed ms'
AS SELECT source, pool, object, pane_start, pane_end, direction, io_type,
       sum(ios) AS ios,
       sum(ios) / (to_unixtime(pane_end) - to_unixtime(pane_start)) AS ios_per_second,
       sum(pages) AS pages,
       sum(pages) * 1e0 / nullif(sum(ios), 0) AS pages_per_io,
       sum(elapsed_us) / 1e3 / nullif(sum(ios), 0) AS avg_elapsed_ms,
       max(max_elapsed_us) / 1e3 AS max_elapsed_ms,
       sum(elapsed_us) / 1e6 AS elapsed_seconds
FROM ${schema}.io_pane
GROUP BY source, pool, object, pane_start, pane_end, direction, io_type;

-- Objects ranked by synchronous I/O per second, with the CPU and the I/O wait it costs,
-- per second and per 24 hours (seed 000's I/O Cost table), on three bases:
--   measured  the statistics intervals (IFCID 199: sync reads and their average delay),
--   traced    the I/O events of each pane (io_pane: every sync read and its elapsed time),
--   simulated the simulation at the pool's current size (object_pane), each simulated sync
--             read costing the object's measured average in that pane (I/O events), else the
--             pool's in that pane, else the object's then the pool's statistics average.
-- CPU: sync reads x the µs per sync read each row carries (jobs submit --cpu-us-per-sync-read).
CREATE OR REPLACE VIEW ${schema}.object_io_cost
COMMENT 'Objects ranked by sync I/O per second: CPU seconds and I/O elapsed (delay) per second and per 24 hours'
AS WITH io AS (
  SELECT source, pool, object, pane_start, pane_end,
         sum(ios) AS ios, sum(elapsed_us) AS elapsed_us, max(cpu_us_per_sync_read) AS cpu_us
  FROM ${schema}.io_pane
  WHERE direction = 'read' AND io_type = 'sync'
  GROUP BY source, pool, object, pane_start, pane_end
), io_pool AS (
  SELECT source, pool, pane_start, sum(elapsed_us) * 1e0 / sum(ios) AS avg_us
  FROM io GROUP BY source, pool, pane_start
), stats_object AS (
  SELECT source, pool, object, interval_start, interval_end,
         sum(sync_reads * sync_read_avg_ms) * 1e3 / nullif(sum(sync_reads), 0) AS avg_us
  FROM ${schema}.object_io_stats
  WHERE sync_read_avg_ms IS NOT NULL
  GROUP BY source, pool, object, interval_start, interval_end
), stats_pool AS (
  SELECT source, pool, interval_start, interval_end,
         sum(sync_reads * sync_read_avg_ms) * 1e3 / nullif(sum(sync_reads), 0) AS avg_us
  FROM ${schema}.object_io_stats
  WHERE sync_read_avg_ms IS NOT NULL
  GROUP BY source, pool, interval_start, interval_end
), pane_seconds AS (
  SELECT source, pool, pane_start, max(seconds) AS seconds FROM ${schema}.pool_pane GROUP BY source, pool, pane_start
), traced AS (
  -- Per second of the pane the getpage trace covers (pool_pane.seconds), else the whole pane.
  SELECT i.*, coalesce(ps.seconds, to_unixtime(i.pane_end) - to_unixtime(i.pane_start)) AS seconds
  FROM io i
  LEFT JOIN pane_seconds ps ON ps.source = i.source AND ps.pool = i.pool AND ps.pane_start = i.pane_start
  WHERE i.ios > 0
), simulated AS (
  SELECT o.source, o.pool, o.object, o.pane_start, o.pane_end,
         o.sim_sync_reads_per_s,
         o.sim_sync_reads_per_s * coalesce(o.cpu_us_per_sync_read, 30e0) * 1e-6 AS cpu,  -- 30 µs: rows written before the column
         CASE WHEN i.ios > 0 THEN i.elapsed_us * 1e0 / i.ios ELSE coalesce(p.avg_us, so.avg_us, sp.avg_us) END AS avg_us,
         CASE WHEN i.ios > 0 THEN 'io-events'
              WHEN p.avg_us IS NOT NULL THEN 'io-events-pool'
              WHEN so.avg_us IS NOT NULL THEN 'statistics'
              WHEN sp.avg_us IS NOT NULL THEN 'statistics-pool' END AS time_from
  FROM ${schema}.object_pane o
  LEFT JOIN io i ON i.source = o.source AND i.pool = o.pool AND i.object = o.object AND i.pane_start = o.pane_start
  LEFT JOIN io_pool p ON p.source = o.source AND p.pool = o.pool AND p.pane_start = o.pane_start
  LEFT JOIN stats_object so ON so.source = o.source AND so.pool = o.pool AND so.object = o.object
   AND o.pane_start >= so.interval_start AND o.pane_end <= so.interval_end
  LEFT JOIN stats_pool sp ON sp.source = o.source AND sp.pool = o.pool
   AND o.pane_start >= sp.interval_start AND o.pane_end <= sp.interval_end
  WHERE o.sim_sync_reads_per_s IS NOT NULL
), costs AS (
  SELECT 'measured' AS basis, source, pool, object, interval_start, interval_end,
         sync_reads_per_second AS sync_ios_per_second,
         cpu_seconds_per_second,
         sync_io_seconds_per_second AS io_elapsed_seconds_per_second,
         sync_read_avg_ms AS sync_read_ms,
         CASE WHEN sync_read_avg_ms IS NOT NULL THEN 'statistics' END AS sync_read_ms_from
  FROM ${schema}.object_io_stats
  UNION ALL
  SELECT 'traced', source, pool, object, pane_start, pane_end,
         ios / seconds, ios * cpu_us * 1e-6 / seconds, elapsed_us * 1e-6 / seconds, elapsed_us / 1e3 / ios, 'io-events'
  FROM traced
  UNION ALL
  SELECT 'simulated', source, pool, object, pane_start, pane_end,
         sim_sync_reads_per_s, cpu, sim_sync_reads_per_s * avg_us * 1e-6, avg_us / 1e3, time_from
  FROM simulated
)
SELECT basis, source, pool, object, interval_start, interval_end,
       sync_ios_per_second,
       cpu_seconds_per_second,
       cpu_seconds_per_second * 86400 AS cpu_seconds_per_24h,
       io_elapsed_seconds_per_second,
       io_elapsed_seconds_per_second * 86400 AS delay_seconds_per_24h,
       rank() OVER (PARTITION BY basis, source, interval_start ORDER BY sync_ios_per_second DESC) AS io_rank,
       sync_read_ms,
       sync_read_ms_from
FROM costs;

-- The curve of each pool over its latest window (the panes of the last 15 minutes of
-- event time it has): hit ratio, sync reads and prefetched pages per second, and what each
-- size costs and saves in CPU and I/O wait, per second and per 24 hours. A sync read's
-- time is the pool's measured average over the window: from its I/O events, else its
-- objects' statistics, else the --sync-io-ms the simulation job was given (sync_read_ms_from).
CREATE OR REPLACE VIEW ${schema}.sim_curve_latest
COMMENT 'Each pool''s simulated curve over its latest 15 minutes of panes, with CPU and I/O wait per size'
-- The body is sql/curve.sql, shared with the pool page's curve (sql/curve.py).
AS ${curve_latest};

-- The working set of each pool and object at its latest pane.
CREATE OR REPLACE VIEW ${schema}.working_set_latest
COMMENT 'Working set per pool (object null) and object at the latest pane'
AS SELECT w.*
FROM ${schema}.working_set w
JOIN (SELECT source, pool, max(pane_start) AS pane_start FROM ${schema}.working_set GROUP BY source, pool) l
  ON w.source = l.source AND w.pool = l.pool AND w.pane_start = l.pane_start;

-- History: each pool per hour of event time beside the same hour one day and one week
-- earlier (for any two ranges of one pool, `poolsight compare`). Hours before the newest one
-- rolled up come from pool_hour (kept 13 months; panes only 14 days), the rest from the panes.
CREATE OR REPLACE VIEW ${schema}.pool_history
COMMENT 'Per pool and hour: getpages, sync reads/s and hit ratios, beside the same hour a day and a week earlier'
AS WITH rolled AS (
  SELECT source, pool, max(period_start) AS until FROM ${schema}.pool_hour GROUP BY source, pool
), hourly AS (
  SELECT h.source, h.pool, h.period_start AS hour, h.getpages, h.seconds,
         h.sim_sync_reads / nullif(h.sim_seconds, 0) AS sync_reads_per_s,
         h.observed_hits * 1e0 / nullif(h.observed_hits + h.observed_misses, 0) AS observed_hit_ratio,
         1 - h.sim_sync_reads / nullif(h.sim_getpages_random, 0) AS sim_random_hit_ratio,
         h.max_working_set_pages
  FROM ${schema}.pool_hour h
  JOIN rolled r ON r.source = h.source AND r.pool = h.pool
  WHERE h.period_start < r.until
  UNION ALL
  SELECT p.source, p.pool, date_trunc('hour', p.pane_start) AS hour,
         sum(p.getpages) AS getpages,
         sum(p.seconds) AS seconds,
         sum(p.sim_sync_reads) / nullif(sum(CASE WHEN p.sim_sync_reads IS NOT NULL THEN p.seconds END), 0)
           AS sync_reads_per_s,
         sum(p.observed_hits) * 1e0 / nullif(sum(p.observed_hits) + sum(p.observed_misses), 0) AS observed_hit_ratio,
         1 - sum(p.sim_sync_reads)
           / nullif(sum(CASE WHEN p.sim_sync_reads IS NOT NULL THEN p.getpages_random END), 0) AS sim_random_hit_ratio,
         max(p.working_set_pages) AS max_working_set_pages
  FROM ${schema}.pool_pane p
  LEFT JOIN rolled r ON r.source = p.source AND r.pool = p.pool
  WHERE r.until IS NULL OR p.pane_start >= r.until
  GROUP BY p.source, p.pool, date_trunc('hour', p.pane_start)
)
SELECT h.*,
       d.getpages AS getpages_day_before, d.sync_reads_per_s AS sync_reads_per_s_day_before,
       d.observed_hit_ratio AS observed_hit_ratio_day_before,
       w.getpages AS getpages_week_before, w.sync_reads_per_s AS sync_reads_per_s_week_before,
       w.observed_hit_ratio AS observed_hit_ratio_week_before
FROM hourly h
LEFT JOIN hourly d ON d.source = h.source AND d.pool = h.pool AND d.hour = h.hour - INTERVAL '1' DAY
LEFT JOIN hourly w ON w.source = h.source AND w.pool = h.pool AND w.hour = h.hour - INTERVAL '7' DAY;

-- Db2 pureScale buffer pools, seed 004's way: LBP hit ratio (without the pages found in the
-- GBP), GBP hit ratio, GBP-full conditions per 10,000 commits and CF wait per request, with
-- the seed's bands. The LBP band uses the data page values (great >= 85 %, good >= 65 %): the
-- ratio here covers data and index pages together. GBP full: great 0, good below 5 per 10k.
-- Member-wide rows (gbp 'GBP': MON_GET_GROUP_BUFFERPOOL, commit and CF wait exports, on
-- their own or joined) are added up per member and snapshot, and join on the same snapshot times.
CREATE OR REPLACE VIEW ${schema}.purescale_summary
COMMENT 'pureScale per pool and interval: LBP and GBP hit ratios, GBP full per 10k commits, CF wait, seed 004 bands'
AS WITH member AS (
  SELECT source, interval_end,
    1e4 * sum(write_failed_no_storage) / nullif(sum(commits), 0) AS gbp_full_per_10k_commits,  -- 1e4: a double (10000.0 is a decimal, rounded to its scale)
    1e3 * sum(cf_wait_ms) / nullif(sum(cf_waits), 0) AS cf_wait_us_per_call
  FROM ${schema}.gbp_stats
  WHERE gbp = 'GBP'
  GROUP BY source, interval_end
), joined AS (
  SELECT
    p.source, p.pool, p.interval_start, p.interval_end, p.interval_seconds,
    p.luw_hit_ratio, p.luw_lbp_hit_ratio, g.luw_gbp_hit_ratio,
    coalesce(g.gbp_full_per_10k_commits, m.gbp_full_per_10k_commits) AS gbp_full_per_10k_commits,
    coalesce(g.cf_wait_us_per_call, m.cf_wait_us_per_call) AS cf_wait_us_per_call
  FROM ${schema}.pool_stats p
  LEFT JOIN ${schema}.gbp_stats g
    ON g.source = p.source AND g.gbp = p.pool AND g.interval_end = p.interval_end
  LEFT JOIN member m
    ON m.source = p.source AND m.interval_end = p.interval_end
  WHERE p.origin = 'luw-bufferpool'
)
SELECT
  joined.*,
  CASE WHEN luw_lbp_hit_ratio IS NULL THEN NULL
       WHEN luw_lbp_hit_ratio >= 0.85 THEN 'great'
       WHEN luw_lbp_hit_ratio >= 0.65 THEN 'good' ELSE 'poor' END AS lbp_band,
  CASE WHEN gbp_full_per_10k_commits IS NULL THEN NULL
       WHEN gbp_full_per_10k_commits = 0 THEN 'great'
       WHEN gbp_full_per_10k_commits < 5 THEN 'good' ELSE 'poor' END AS gbp_full_band
FROM joined;

-- The simulation at each pool's current setting against what the pool measured: from the
-- getpage trace's hit flags (the simulation job, per pane over the panes since the setting
-- last changed) and, for every statistics interval the panes cover, from the pool's own
-- statistics (random sync reads: a random miss is a synchronous read, sequential and list
-- misses are prefetch). error_ratio = simulated / measured - 1.
CREATE OR REPLACE VIEW ${schema}.sim_accuracy
COMMENT 'Simulation at the current size against measured sync reads (trace hit flags, statistics), error ratio'
AS WITH by_interval AS (
  SELECT s.source, s.pool, s.interval_start, s.interval_end,
         max(s.interval_seconds) AS seconds,
         max(s.sync_reads_random) AS measured,
         sum(p.sim_sync_reads) AS simulated,
         sum(p.seconds) AS pane_seconds,
         sum(p.getpages) AS getpages,
         count(*) AS panes,
         max(p.current_size) AS size_pages,
         min(p.current_size) AS min_size,
         max(p.model) AS model,
         max(p.model_sampling_rate) AS sampling_rate
  FROM ${schema}.pool_stats s
  JOIN ${schema}.pool_pane p
    ON p.source = s.source AND p.pool = s.pool
   AND p.pane_start >= s.interval_start AND p.pane_end <= s.interval_end
  WHERE p.sim_sync_reads IS NOT NULL AND s.sync_reads_random IS NOT NULL
  GROUP BY s.source, s.pool, s.interval_start, s.interval_end
)
SELECT source, pool, window_end, size_pages, model,
       simulated_sync_reads_per_s, measured_sync_reads_per_s, error_ratio,
       measured_from, window_start, panes, getpages, simulated_sync_reads, measured_sync_reads, sampling_rate
FROM (
  SELECT source, pool, window_end, size_pages, model,
         simulated_sync_reads_per_s, measured_sync_reads_per_s, error_ratio,
         measured_from, window_start, panes, getpages, simulated_sync_reads,
         CAST(measured_sync_reads AS double) AS measured_sync_reads, sampling_rate
  FROM ${schema}.sim_accuracy_pane
  UNION ALL
  SELECT source, pool, interval_end, size_pages, model,
         simulated / seconds, measured / seconds, simulated / nullif(measured, 0) - 1,
         'statistics', interval_start, CAST(panes AS integer), getpages, simulated,
         CAST(measured AS double), sampling_rate
  FROM by_interval
  -- Only intervals the panes cover whole, at one size.
  WHERE pane_seconds >= 0.99 * seconds AND size_pages = min_size
) u;

-- DB2's own simulated pool against the simulation. A pool with an SPSIZE (DSNB431I, pool
-- attributes) has DB2 count, per statistics interval, the sync reads of random getpages a pool
-- of VPSIZE + SPSIZE buffers would have avoided (DSNB432I SYNC READ I/O (R), IFCID 2). The
-- simulation's answer for the same interval: its curve at the pool's own policy (sim_curve,
-- pool_policy, curve 'sizes'), sync reads at the current size minus those at VPSIZE + SPSIZE,
-- added up over the interval's panes (those whose middle lies in it; the interval must span
-- them to 1 %, so intervals that start a few ms off a pane boundary compare, and the getpages
-- of those slivers are the only difference). The simulation job runs VPSIZE + SPSIZE as a size
-- of its own once the attributes carry SPSIZE, so the point is exact; a pane without it (written
-- before the job knew the SPSIZE) reads it linearly between the two simulated sizes around it,
-- and an interval where VPSIZE + SPSIZE lies beyond the curve has no row. Intervals at one size
-- only (no -ALTER inside). DB2's sequential avoidable sync reads (S) are left out: the
-- simulation counts sequential misses as prefetch, as sim_accuracy does. One row per interval
-- (when two collectors sent it, the origin first by name). error_ratio = simulated / db2 - 1.
CREATE OR REPLACE VIEW ${schema}.spsize_check
COMMENT 'DB2''s simulated pool (SPSIZE) per statistics interval: its avoidable sync reads against the simulation at VPSIZE + SPSIZE, error ratio'
AS WITH stats AS (
  SELECT source, pool, interval_start, interval_end,
         min_by(interval_seconds, origin) AS seconds,
         min_by(spsize, origin) AS spsize,
         min_by(sim_sync_reads_avoidable_random, origin) AS db2
  FROM ${schema}.pool_stats
  WHERE spsize > 0 AND sim_sync_reads_avoidable_random IS NOT NULL
  GROUP BY source, pool, interval_start, interval_end
), curve AS (
  SELECT s.source, s.pool, s.interval_start, s.spsize, c.pane_start,
         to_unixtime(c.pane_end) - to_unixtime(c.pane_start) AS span,
         c.size_pages, c.sync_reads, c.is_current
  FROM stats s
  JOIN ${schema}.sim_curve c
    ON c.source = s.source AND c.pool = s.pool
   AND c.pane_start < s.interval_end AND c.pane_end > s.interval_start
   -- the pane's middle in the interval
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) >= 2 * to_unixtime(s.interval_start)
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) < 2 * to_unixtime(s.interval_end)
  WHERE c.pool_policy AND c.curve = 'sizes'
), pane AS (
  SELECT source, pool, interval_start, pane_start, max(span) AS span,
         max(CASE WHEN is_current THEN size_pages END) AS vpsize,
         max(CASE WHEN is_current THEN sync_reads END) AS at_current,
         max(CASE WHEN is_current THEN size_pages END) + max(spsize) AS target
  FROM curve
  GROUP BY source, pool, interval_start, pane_start
), bracket AS (
  -- The simulated sizes around VPSIZE + SPSIZE (the same size on both sides when simulated).
  SELECT p.source, p.pool, p.interval_start, p.pane_start, p.span, p.vpsize, p.at_current, p.target,
         max(c.size_pages) FILTER (WHERE c.size_pages <= p.target) AS lo_size,
         max_by(c.sync_reads, c.size_pages) FILTER (WHERE c.size_pages <= p.target) AS lo_reads,
         min(c.size_pages) FILTER (WHERE c.size_pages >= p.target) AS hi_size,
         min_by(c.sync_reads, c.size_pages) FILTER (WHERE c.size_pages >= p.target) AS hi_reads
  FROM pane p
  JOIN curve c
    ON c.source = p.source AND c.pool = p.pool AND c.interval_start = p.interval_start
   AND c.pane_start = p.pane_start
  GROUP BY p.source, p.pool, p.interval_start, p.pane_start, p.span, p.vpsize, p.at_current, p.target
), per_pane AS (
  SELECT source, pool, interval_start, span, vpsize,
         at_current - CASE WHEN lo_size = target THEN lo_reads
                           WHEN hi_size IS NULL OR lo_size IS NULL THEN NULL
                           ELSE lo_reads + (hi_reads - lo_reads) * (target - lo_size) / (hi_size - lo_size) END
           AS avoidable
  FROM bracket
), by_interval AS (
  SELECT s.source, s.pool, s.interval_end, s.spsize, s.db2, s.seconds,
         sum(p.avoidable) AS simulated,
         count(*) AS panes, count(p.avoidable) AS panes_with_point, sum(p.span) AS pane_seconds,
         min(p.vpsize) AS min_size, max(p.vpsize) AS max_size
  FROM stats s
  JOIN per_pane p ON p.source = s.source AND p.pool = s.pool AND p.interval_start = s.interval_start
  GROUP BY s.source, s.pool, s.interval_start, s.interval_end, s.spsize, s.db2, s.seconds
)
SELECT source, pool, interval_end, spsize,
       db2 AS db2_avoidable_sync_reads,
       simulated AS simulated_avoidable_sync_reads,
       simulated / nullif(db2, 0) - 1 AS error_ratio
FROM by_interval
-- Only intervals whose panes span them to 1 %, each pane with the point, at one size.
WHERE abs(pane_seconds - seconds) <= 0.01 * seconds AND panes_with_point = panes AND min_size = max_size;

-- The group simulation over the latest 15 minutes of each GBP (the window of sim_curve_latest):
-- every (data entries, RATIO) point with its counters added up over the window's panes and its
-- ratios and rates from the sums. is_current: the point at the GBP's setting in the latest pane.
CREATE OR REPLACE VIEW ${schema}.gbp_curve_latest
COMMENT 'Group buffer pool curve over size and RATIO, latest 15 minutes: disk sync reads, GBP hit ratio, reclaims, XIs, failed writes, castouts'
AS WITH latest AS (
  SELECT group_name, gbp, max(pane_end) AS window_end
  FROM ${schema}.gbp_curve
  GROUP BY group_name, gbp
), w AS (
  SELECT c.*, l.window_end
  FROM ${schema}.gbp_curve c
  JOIN latest l ON l.group_name = c.group_name AND l.gbp = c.gbp
  WHERE c.pane_end > l.window_end - INTERVAL '15' MINUTE
)
SELECT group_name, gbp, min(pane_start) AS window_start, max(window_end) AS window_end,
       count(*) AS panes, sum(seconds) AS seconds,
       data_entries, ratio, max(directory_entries) AS directory_entries, max(structure_mb) AS structure_mb,
       max_by(is_current, pane_end) AS is_current, max_by(members, pane_end) AS members,
       sum(getpages) AS getpages, sum(lbp_hits) AS lbp_hits,
       sum(sync_reads_xi) AS sync_reads_xi, sum(xi_data_returned) AS xi_data_returned, sum(xi_no_data) AS xi_no_data,
       sum(sync_reads_nf) AS sync_reads_nf, sum(nf_data_returned) AS nf_data_returned, sum(nf_no_data) AS nf_no_data,
       sum(disk_sync_reads) AS disk_sync_reads,
       (sum(xi_data_returned) + sum(nf_data_returned)) / nullif(sum(sync_reads_xi) + sum(sync_reads_nf), 0)
         AS gbp_hit_ratio,
       sum(directory_reclaims) AS directory_reclaims, sum(xi_due_to_reclaims) AS xi_due_to_reclaims,
       sum(xi_due_to_writes) AS xi_due_to_writes, sum(changed_pages_written) AS changed_pages_written,
       sum(data_entry_reclaims) AS data_entry_reclaims, sum(writes_failed_no_storage) AS writes_failed_no_storage,
       sum(castout_pages) AS castout_pages,
       sum(disk_sync_reads) / nullif(sum(seconds), 0) AS disk_sync_reads_per_s,
       sum(directory_reclaims) / nullif(sum(seconds), 0) AS directory_reclaims_per_s,
       sum(castout_pages) / nullif(sum(seconds), 0) AS castout_pages_per_s,
       bool_or(warmup) AS warmup
FROM w
GROUP BY group_name, gbp, data_entries, ratio;

-- The group simulation at the GBP's current setting against what the group measured, per
-- statistics interval. Measured: the members' rows of gbp_stats (scope member or unset) for the
-- reads (disk sync reads = XI and NF reads without data; GBP hit ratio of seed 001), the group's
-- own row (scope group, -DISPLAY GROUPBUFFERPOOL GDETAIL) for reclaims, XIs by cause, writes and
-- castouts, else the members' sum. Simulated: gbp_curve at is_current over the panes whose middle
-- lies in the interval (the interval must span them to 1 %, as in spsize_check). Each error is
-- simulated / measured - 1; the hit ratio's is the difference in points. changed_at: the GBP's
-- setting last changed there (null: not since the first pane); just_changed: the interval
-- starts within a minute of it, a transient (gbp_prediction_check measures the change itself).
CREATE OR REPLACE VIEW ${schema}.gbp_accuracy
COMMENT 'Group simulation at the GBP''s current size and RATIO against the group''s statistics per interval: disk sync reads, GBP hit ratio, reclaims'
AS WITH members AS (
  SELECT group_name, gbp, interval_start, interval_end,
         max(to_unixtime(interval_end) - to_unixtime(interval_start)) AS seconds,
         count(DISTINCT source) AS members,
         sum(xi_reads_no_data + nf_reads_no_data) AS disk_sync_reads,
         sum(xi_reads_data_returned + nf_reads_data_returned) AS data_returned,
         sum(xi_reads_data_returned + xi_reads_no_data + nf_reads_data_returned + nf_reads_no_data) AS sync_reads,
         sum(directory_reclaims) AS directory_reclaims, sum(xi_due_to_reclaims) AS xi_due_to_reclaims,
         sum(xi_due_to_writes) AS xi_due_to_writes, sum(write_failed_no_storage) AS writes_failed,
         sum(castout_pages) AS castout_pages
  FROM ${schema}.gbp_stats
  WHERE group_name IS NOT NULL AND coalesce(scope, 'member') = 'member'
  GROUP BY group_name, gbp, interval_start, interval_end
), grp AS (
  SELECT group_name, gbp, interval_start, interval_end,
         max(directory_reclaims) AS directory_reclaims, max(xi_due_to_reclaims) AS xi_due_to_reclaims,
         max(xi_due_to_writes) AS xi_due_to_writes, max(write_failed_no_storage) AS writes_failed,
         max(castout_pages) AS castout_pages, max(data_entries) AS data_entries, max(ratio) AS ratio
  FROM ${schema}.gbp_stats
  WHERE group_name IS NOT NULL AND scope = 'group'
  GROUP BY group_name, gbp, interval_start, interval_end
), measured AS (
  SELECT m.group_name, m.gbp, m.interval_start, m.interval_end, m.seconds, m.members,
         m.disk_sync_reads, m.data_returned * 1e0 / nullif(m.sync_reads, 0) AS gbp_hit_ratio,  -- bigint sums: 1e0 makes it a double
         coalesce(g.directory_reclaims, m.directory_reclaims) AS directory_reclaims,
         coalesce(g.xi_due_to_reclaims, m.xi_due_to_reclaims) AS xi_due_to_reclaims,
         coalesce(g.xi_due_to_writes, m.xi_due_to_writes) AS xi_due_to_writes,
         coalesce(g.writes_failed, m.writes_failed) AS writes_failed,
         coalesce(g.castout_pages, m.castout_pages) AS castout_pages,
         g.data_entries, g.ratio
  FROM members m
  LEFT JOIN grp g
    ON g.group_name = m.group_name AND g.gbp = m.gbp
   AND g.interval_start = m.interval_start AND g.interval_end = m.interval_end
), runs AS (
  -- Per current pane, when the GBP's setting last changed before it (null: never, since the
  -- first pane): a pane that starts a new current point starts a run.
  SELECT group_name, gbp, pane_start,
         max(started) OVER (PARTITION BY group_name, gbp ORDER BY pane_start ROWS UNBOUNDED PRECEDING)
           AS changed_at
  FROM (
    SELECT group_name, gbp, pane_start,
           CASE WHEN lag(data_entries) OVER w <> data_entries OR lag(ratio) OVER w <> ratio
                THEN pane_start END AS started
    FROM ${schema}.gbp_curve
    WHERE is_current
    WINDOW w AS (PARTITION BY group_name, gbp ORDER BY pane_start))
), simulated AS (
  SELECT s.group_name, s.gbp, s.interval_start, s.interval_end, max(r.changed_at) AS changed_at,
         count(*) AS panes, sum(c.seconds) AS pane_seconds,
         min(c.data_entries) AS data_entries, max(c.data_entries) AS max_entries,
         min(c.ratio) AS ratio, max(c.ratio) AS max_ratio,
         sum(c.disk_sync_reads) AS disk_sync_reads,
         (sum(c.xi_data_returned) + sum(c.nf_data_returned)) / nullif(sum(c.sync_reads_xi) + sum(c.sync_reads_nf), 0)
           AS gbp_hit_ratio,
         sum(c.directory_reclaims) AS directory_reclaims, sum(c.xi_due_to_reclaims) AS xi_due_to_reclaims,
         sum(c.xi_due_to_writes) AS xi_due_to_writes, sum(c.writes_failed_no_storage) AS writes_failed,
         sum(c.castout_pages) AS castout_pages, bool_or(c.warmup) AS warmup
  FROM measured s
  JOIN ${schema}.gbp_curve c
    ON c.group_name = s.group_name AND c.gbp = s.gbp AND c.is_current
   AND c.pane_start < s.interval_end AND c.pane_end > s.interval_start
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) >= 2 * to_unixtime(s.interval_start)
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) < 2 * to_unixtime(s.interval_end)
  JOIN runs r ON r.group_name = c.group_name AND r.gbp = c.gbp AND r.pane_start = c.pane_start
  GROUP BY s.group_name, s.gbp, s.interval_start, s.interval_end
)
SELECT m.group_name, m.gbp, m.interval_start, m.interval_end, m.members, s.panes, s.warmup,
       s.changed_at,
       -- The first pane after a change: the GBP was altered or rebuilt then, while the simulation
       -- ran the new setting all along (its contents differ until the members' pools turn over).
       coalesce(s.changed_at > m.interval_start - INTERVAL '60' SECOND, false) AS just_changed,
       s.data_entries, s.ratio,
       s.disk_sync_reads AS simulated_disk_sync_reads, m.disk_sync_reads AS measured_disk_sync_reads,
       s.disk_sync_reads / nullif(m.disk_sync_reads, 0) - 1 AS disk_sync_reads_error,
       s.gbp_hit_ratio AS simulated_gbp_hit_ratio, m.gbp_hit_ratio AS measured_gbp_hit_ratio,
       s.gbp_hit_ratio - m.gbp_hit_ratio AS gbp_hit_ratio_error,
       s.directory_reclaims AS simulated_directory_reclaims, m.directory_reclaims AS measured_directory_reclaims,
       CASE WHEN m.directory_reclaims = 0 AND s.directory_reclaims = 0 THEN 0e0
            ELSE s.directory_reclaims / nullif(m.directory_reclaims, 0) - 1 END AS directory_reclaims_error,
       s.xi_due_to_reclaims AS simulated_xi_due_to_reclaims, m.xi_due_to_reclaims AS measured_xi_due_to_reclaims,
       s.xi_due_to_writes AS simulated_xi_due_to_writes, m.xi_due_to_writes AS measured_xi_due_to_writes,
       s.writes_failed AS simulated_writes_failed, m.writes_failed AS measured_writes_failed,
       s.castout_pages AS simulated_castout_pages, m.castout_pages AS measured_castout_pages
FROM measured m
JOIN simulated s
  ON s.group_name = m.group_name AND s.gbp = m.gbp
 AND s.interval_start = m.interval_start AND s.interval_end = m.interval_end
-- Only intervals the panes span to 1 %, at one GBP setting.
WHERE abs(s.pane_seconds - m.seconds) <= 0.01 * m.seconds
  AND s.data_entries = s.max_entries AND s.ratio = s.max_ratio;

-- A GBP's setting changed (its size or RATIO, -ALTER GROUPBUFFERPOOL or the CF structure): what
-- the group simulation predicted for the new setting before the change against what the group
-- measured after it, per getpage, in prediction_check's columns (source = the group, pool = the
-- GBP; the maintenance service copies new rows into prediction_check, sql/history.py). A change
-- is the first pane whose current point (gbp_curve is_current) differs from the pane before's.
-- Predicted: disk sync reads per getpage at the new point over the 15 minutes before the change
-- (warm-up panes left out; null when the grid did not hold the point), times the getpage rate
-- after. setting GBP_RATIO (a rebuild at the same structure size, old and new RATIO) or
-- GBP_SIZE (old and new structure MB). Measured: the members'
-- disk sync reads (gbp_stats, XI and NF reads without data) over the statistics intervals after
-- the change that its panes span (middles, as gbp_accuracy), per simulated getpage of those
-- panes. Rows once two panes after the change are measured.
CREATE OR REPLACE VIEW ${schema}.gbp_prediction_check
COMMENT 'After a GBP size or RATIO change: the group simulation''s prediction for the new setting against the disk sync reads measured after it'
AS WITH cur AS (
  SELECT group_name, gbp, pane_start, data_entries, ratio, structure_mb,
         lag(data_entries) OVER w AS old_entries, lag(ratio) OVER w AS old_ratio,
         lag(structure_mb) OVER w AS old_mb
  FROM ${schema}.gbp_curve
  WHERE is_current
  WINDOW w AS (PARTITION BY group_name, gbp ORDER BY pane_start)
), changes AS (
  SELECT group_name, gbp, pane_start AS changed_at, data_entries, ratio, old_ratio, old_mb, structure_mb
  FROM cur
  WHERE old_entries IS NOT NULL AND (old_entries <> data_entries OR old_ratio <> ratio)
), settings AS (
  -- A rebuild at another RATIO (the structure's size kept, to 1 %), or a resize (MB).
  SELECT group_name, gbp, changed_at, 'GBP_RATIO' AS setting, old_ratio AS old_value, ratio AS new_value,
         data_entries, ratio
  FROM changes WHERE old_ratio <> ratio AND abs(structure_mb - old_mb) <= 0.01 * old_mb
  UNION ALL
  SELECT group_name, gbp, changed_at, 'GBP_SIZE', old_mb, structure_mb, data_entries, ratio
  FROM changes WHERE abs(structure_mb - old_mb) > 0.01 * old_mb
), before AS (
  SELECT s.group_name, s.gbp, s.changed_at, s.setting,
         sum(c.disk_sync_reads) FILTER (WHERE c.data_entries = s.data_entries AND c.ratio = s.ratio)
           / nullif(sum(c.getpages) FILTER (WHERE c.data_entries = s.data_entries AND c.ratio = s.ratio), 0)
           AS per_getpage,
         sum(c.getpages) FILTER (WHERE c.is_current) / nullif(sum(c.seconds) FILTER (WHERE c.is_current), 0)
           AS rate_before
  FROM settings s
  JOIN ${schema}.gbp_curve c
    ON c.group_name = s.group_name AND c.gbp = s.gbp
   AND c.pane_end <= s.changed_at AND c.pane_start >= s.changed_at - INTERVAL '15' MINUTE
   AND ((c.data_entries = s.data_entries AND c.ratio = s.ratio) OR c.is_current)
   AND NOT c.warmup
  GROUP BY s.group_name, s.gbp, s.changed_at, s.setting
), intervals AS (
  SELECT group_name, gbp, interval_start, interval_end,
         sum(xi_reads_no_data + nf_reads_no_data) AS disk_sync_reads
  FROM ${schema}.gbp_stats
  WHERE group_name IS NOT NULL AND coalesce(scope, 'member') = 'member'
  GROUP BY group_name, gbp, interval_start, interval_end
), after AS (
  SELECT s.group_name, s.gbp, s.changed_at, s.setting,
         count(*) AS panes, max(c.pane_end) AS measured_until,
         sum(c.getpages) AS getpages, sum(c.seconds) AS seconds
  FROM settings s
  JOIN ${schema}.gbp_curve c
    ON c.group_name = s.group_name AND c.gbp = s.gbp AND c.is_current AND c.pane_start >= s.changed_at
  -- only panes whose middle lies in a statistics interval that starts after the change
  JOIN intervals i
    ON i.group_name = s.group_name AND i.gbp = s.gbp AND i.interval_start >= s.changed_at
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) >= 2 * to_unixtime(i.interval_start)
   AND to_unixtime(c.pane_start) + to_unixtime(c.pane_end) < 2 * to_unixtime(i.interval_end)
  GROUP BY s.group_name, s.gbp, s.changed_at, s.setting
), measured AS (
  SELECT s.group_name, s.gbp, s.changed_at, s.setting, sum(i.disk_sync_reads) AS disk_sync_reads,
         sum(to_unixtime(i.interval_end) - to_unixtime(i.interval_start)) AS seconds
  FROM settings s
  JOIN intervals i
    ON i.group_name = s.group_name AND i.gbp = s.gbp AND i.interval_start >= s.changed_at
  JOIN after a
    ON a.group_name = s.group_name AND a.gbp = s.gbp AND a.changed_at = s.changed_at AND a.setting = s.setting
   AND i.interval_end <= a.measured_until + INTERVAL '1' SECOND
  GROUP BY s.group_name, s.gbp, s.changed_at, s.setting
)
SELECT s.group_name AS source, s.gbp AS pool, s.changed_at, s.setting, s.old_value, s.new_value,
       b.per_getpage * a.getpages / nullif(a.seconds, 0) AS predicted_sync_reads_per_s,
       m.disk_sync_reads / nullif(m.seconds, 0) AS measured_sync_reads_per_s,
       (b.per_getpage * a.getpages / nullif(a.seconds, 0)) / nullif(m.disk_sync_reads / nullif(m.seconds, 0), 0) - 1
         AS error_ratio,
       CAST(NULL AS double) AS similarity,
       b.per_getpage AS predicted_sync_reads_per_getpage,
       m.disk_sync_reads / nullif(a.getpages, 0) AS measured_sync_reads_per_getpage,
       CAST(a.panes AS integer) AS panes_after, a.measured_until,
       b.rate_before AS getpages_per_s_before, a.getpages / nullif(a.seconds, 0) AS getpages_per_s_after,
       CAST(NULL AS varchar) AS objects_new, CAST(NULL AS varchar) AS objects_gone,
       'group' AS model
FROM settings s
JOIN after a
  ON a.group_name = s.group_name AND a.gbp = s.gbp AND a.changed_at = s.changed_at AND a.setting = s.setting
JOIN measured m
  ON m.group_name = s.group_name AND m.gbp = s.gbp AND m.changed_at = s.changed_at AND m.setting = s.setting
LEFT JOIN before b
  ON b.group_name = s.group_name AND b.gbp = s.gbp AND b.changed_at = s.changed_at AND b.setting = s.setting
WHERE a.panes >= 2;

-- The latest advice of each source: the rows of its latest evaluation (advice/online.py),
-- each with its evidence, prediction, confidence and commands; `budget` holds the source's whole
-- allocation (and the paging guard's reason) on each row.
CREATE OR REPLACE VIEW ${schema}.advice_latest
COMMENT 'Each source''s latest advice: kind, pool, objects, evidence, predicted effect, confidence, commands'
AS SELECT a.*
FROM ${schema}.advice a
JOIN (SELECT source, max(evaluated_at) AS evaluated_at FROM ${schema}.advice GROUP BY source) l
  ON a.source = l.source AND a.evaluated_at = l.evaluated_at;

-- History at coarser grains (sql/rollups.py): each view below exists once per grain, hourly
-- and daily, over the rollup tables. Ratios are recomputed from the summed counters, never
-- averaged; rates are counts over the seconds covered. The dashboard reads panes over short
-- ranges and these over long ones (sql/grain.py).

-- Each pool per hour (day): rates, measured and simulated hit ratios, working set, settings.
CREATE OR REPLACE VIEW ${schema}.pool_${grainly}
COMMENT 'Per pool and ${grain}: getpages and sync reads per second, measured and simulated hit ratios, working set (from pool_${grain})'
AS SELECT source, pool, period_start, period_end, source_rows AS panes, seconds, getpages,
       getpages_random, getpages_sequential, getpages_rid,
       getpages / nullif(seconds, 0) AS getpages_per_s,
       getpages_random / nullif(seconds, 0) AS random_per_s,
       getpages_sequential / nullif(seconds, 0) AS sequential_per_s,
       getpages_rid / nullif(seconds, 0) AS list_per_s,
       -- each figure over the panes that have it (sim_seconds, observed_seconds...: sql/rollups.py)
       observed_sync_reads / nullif(observed_seconds, 0) AS measured_sync_reads_per_s,
       sim_sync_reads / nullif(sim_seconds, 0) AS simulated_sync_reads_per_s,
       observed_hits * 1e0 / nullif(observed_hits + observed_misses, 0) AS measured_hit_ratio,
       sim_hits / nullif(sim_getpages, 0) AS simulated_hit_ratio,
       1 - sim_sync_reads / nullif(sim_getpages_random, 0) AS simulated_random_hit_ratio,
       1 - observed_sync_reads * 1e0 / nullif(observed_getpages_random, 0) AS measured_random_hit_ratio,
       sim_hits_2x / nullif(getpages_2x, 0) AS hit_ratio_2x,
       avoided_sync_reads_2x / nullif(seconds_2x, 0) AS avoided_sync_reads_per_s_2x,
       cpu_seconds_saved_2x / nullif(seconds_2x, 0) AS cpu_seconds_saved_per_s_2x,
       sim_cpu_seconds / nullif(sim_seconds, 0) * 86400 AS cpu_seconds_per_24h,
       working_set_page_seconds / nullif(seconds, 0) AS avg_working_set_pages, max_working_set_pages,
       max_distinct_pages, late_getpages, current_size, min_size, max_size, vpseqt, model
FROM ${schema}.pool_${grain};

-- Statistics per pool per hour (day), like pool_summary: counters added up, ratios from them.
CREATE OR REPLACE VIEW ${schema}.pool_summary_${grainly}
COMMENT 'Statistics per pool and ${grain} (from stats_${grain}): read I/O per second, hit ratios, pages per write'
AS SELECT source, pool, origin, period_start, period_end, source_rows AS intervals, interval_seconds,
       vpsize, getpages_random + getpages_sequential AS getpages,
       (getpages_random + getpages_sequential) / nullif(interval_seconds, 0) AS getpages_per_second,
       (sync_reads_random + sync_reads_sequential) / nullif(interval_seconds, 0) AS sync_reads_per_second,
       sync_reads_random / nullif(interval_seconds, 0) AS sync_reads_random_per_second,
       (sync_reads_random + sync_reads_sequential + seq_prefetch_reads + list_prefetch_reads + dyn_prefetch_reads)
         / nullif(interval_seconds, 0) AS read_ios_per_second,
       1 - (sync_reads_random + sync_reads_sequential) * 1e0
         / nullif(getpages_random + getpages_sequential, 0) AS application_hit_ratio,
       1 - (sync_reads_random + sync_reads_sequential + seq_prefetch_pages + list_prefetch_pages + dyn_prefetch_pages) * 1e0
         / nullif(getpages_random + getpages_sequential, 0) AS system_hit_ratio,
       pages_written, pages_written * 1e0 / nullif(sync_writes + async_writes, 0) AS pages_per_write
FROM ${schema}.stats_${grain};

-- Objects per hour (day) by sync I/O: simulated sync reads at the pool's current size, priced
-- with the object's measured sync read time over the period (I/O events), else its pool's.
CREATE OR REPLACE VIEW ${schema}.object_io_cost_${grainly}
COMMENT 'Objects per ${grain}: simulated and traced sync I/O per second, CPU seconds and I/O wait per 24 hours'
AS WITH io AS (
  SELECT source, pool, object, period_start, sum(ios) AS ios, sum(elapsed_us) AS elapsed_us
  FROM ${schema}.io_${grain}
  WHERE direction = 'read' AND io_type = 'sync'
  GROUP BY source, pool, object, period_start
), io_pool AS (
  SELECT source, pool, period_start, sum(elapsed_us) * 1e0 / nullif(sum(ios), 0) AS avg_us
  FROM io GROUP BY source, pool, period_start
)
SELECT o.source, o.pool, o.object, o.period_start, o.period_end, o.source_rows AS panes, o.seconds, o.getpages,
       o.getpages_random, o.getpages_sequential, o.getpages_rid,
       o.getpages / nullif(o.seconds, 0) AS getpages_per_s,
       (o.getpages_sequential + o.getpages_rid) * 1e0 / nullif(o.getpages, 0) AS sequential_share, o.access_class,
       o.sim_sync_reads, o.sim_sync_reads / nullif(o.sim_seconds, 0) AS sync_ios_per_second,
       io.ios AS traced_sync_ios, io.ios / nullif(o.seconds, 0) AS traced_sync_ios_per_second,
       coalesce(io.elapsed_us * 1e0 / nullif(io.ios, 0), p.avg_us) / 1e3 AS sync_read_ms,
       o.sim_cpu_seconds, o.sim_cpu_seconds / nullif(o.sim_seconds, 0) AS cpu_seconds_per_second,
       o.sim_cpu_seconds / nullif(o.sim_seconds, 0) * 86400 AS cpu_seconds_per_24h,
       o.sim_sync_reads * coalesce(io.elapsed_us * 1e0 / nullif(io.ios, 0), p.avg_us) / 1e6 AS io_elapsed_seconds,
       o.sim_sync_reads * coalesce(io.elapsed_us * 1e0 / nullif(io.ios, 0), p.avg_us) / 1e6
         / nullif(o.sim_seconds, 0) * 86400 AS delay_seconds_per_24h,
       o.max_working_set_pages
FROM ${schema}.object_${grain} o
LEFT JOIN io ON io.source = o.source AND io.pool = o.pool AND io.object = o.object AND io.period_start = o.period_start
LEFT JOIN io_pool p ON p.source = o.source AND p.pool = o.pool AND p.period_start = o.period_start;

-- The simulated curve per pool and hour (day): hits and misses per size merged over the panes.
CREATE OR REPLACE VIEW ${schema}.sim_curve_${grainly}
COMMENT 'Simulated curve per pool, model and ${grain}: hit ratio and sync reads per second per size, merged from the panes'
AS SELECT source, pool, model, curve, size_pages, period_start, period_end, source_rows AS panes, seconds,
       refs AS getpages, hits / nullif(refs, 0) AS hit_ratio, misses / nullif(refs, 0) AS miss_ratio,
       sync_reads / nullif(seconds, 0) AS sync_reads_per_s, prefetch_pages / nullif(seconds, 0) AS prefetch_pages_per_s,
       avoided_sync_reads / nullif(seconds, 0) AS avoided_sync_reads_per_s,
       cpu_seconds_saved / nullif(seconds, 0) AS cpu_seconds_saved_per_s,
       size_factor, is_current, pool_policy, vpseqt
FROM ${schema}.curve_${grain};
