-- The advice service's queries (advice/online.py) over each pool's latest 15-minute window (the
-- window sim_curve_latest shows, sql/curve.py WINDOW_MINUTES), for one :source or all (null),
-- and the latest advice that `poolsight advise` and the dashboard read (advice/table.py).

-- fragment: latest_windows
-- Each pool's latest window ends at its newest pane: (source, pool, window_end), for one
-- :source or all (null). The advice queries below read the 15 minutes before it.
latest AS (
  SELECT source, pool, max(pane_end) AS window_end FROM ${schema}.pool_pane
  WHERE (:source IS NULL OR source = :source) GROUP BY source, pool)

-- name: advice_pools
-- Per pool over its latest window: getpages, seconds, the trace's sync reads, settings, warm-up.
WITH ${latest_windows}
SELECT p.source, p.pool, l.window_end, sum(p.getpages), sum(p.seconds),
       sum(p.observed_sync_reads), count(p.observed_sync_reads), count(*),
       max_by(p.model, p.pane_end), max_by(p.current_size, p.pane_end), max_by(p.vpseqt, p.pane_end),
       bool_or(p.warmup)
FROM ${schema}.pool_pane p JOIN latest l ON p.source = l.source AND p.pool = l.pool
WHERE p.pane_end > l.window_end - INTERVAL '15' MINUTE
GROUP BY p.source, p.pool, l.window_end

-- name: advice_curves
-- Each pool's simulated curve at its own policy, from the view sim_curve_latest.
SELECT source, pool, size_pages, sync_reads_per_s, sync_read_ms
FROM ${schema}.sim_curve_latest WHERE (:source IS NULL OR source = :source) ORDER BY source, pool, size_pages

-- name: advice_vpseqt
-- Sync reads per second at each simulated VPSEQT alternative, at the pool's current size only
-- (an -ALTER of VPSIZE in the window changes the ladder).
WITH ${latest_windows}, cur AS (
  SELECT p.source, p.pool, max_by(p.current_size, p.pane_end) AS size
  FROM ${schema}.pool_pane p JOIN latest l ON p.source = l.source AND p.pool = l.pool AND p.pane_end = l.window_end
  GROUP BY p.source, p.pool)
SELECT c.source, c.pool, c.vpseqt, sum(c.sync_reads) / nullif(sum(c.seconds), 0)
FROM ${schema}.sim_curve c
JOIN latest l ON c.source = l.source AND c.pool = l.pool
JOIN cur ON c.source = cur.source AND c.pool = cur.pool
WHERE c.pane_end > l.window_end - INTERVAL '15' MINUTE AND NOT coalesce(c.pool_policy, true) AND c.vpseqt IS NOT NULL
  AND c.size_pages = cur.size
GROUP BY c.source, c.pool, c.vpseqt

-- name: advice_stats
-- Per pool, its statistics over the latest window: reads, writes, thresholds reached, settings.
WITH ${latest_windows}
SELECT s.source, s.pool, sum(s.interval_seconds), sum(coalesce(s.sync_reads_random, 0)),
       sum(coalesce(s.sync_reads_random, 0) + coalesce(s.sync_reads_sequential, 0)
           + coalesce(s.seq_prefetch_pages, 0) + coalesce(s.list_prefetch_pages, 0)
           + coalesce(s.dyn_prefetch_pages, 0)),
       sum(coalesce(s.pages_written, 0)), sum(coalesce(s.sync_writes, 0) + coalesce(s.async_writes, 0)),
       sum(coalesce(s.dwqt_reached, 0)), sum(coalesce(s.vdwqt_reached, 0)),
       max_by(s.page_size, s.interval_end), max_by(s.dwqt, s.interval_end), max_by(s.vdwqt, s.interval_end),
       max_by(s.pgsteal, s.interval_end), max_by(s.pgfix, s.interval_end), max_by(s.frame_size, s.interval_end),
       max_by(s.origin, s.interval_end), sum(coalesce(s.write_engine_not_available, 0)),
       sum(coalesce(s.sync_reads_random, 0) + coalesce(s.sync_reads_sequential, 0)
           + coalesce(s.seq_prefetch_reads, 0) + coalesce(s.list_prefetch_reads, 0)
           + coalesce(s.dyn_prefetch_reads, 0))
FROM ${schema}.pool_stats s JOIN latest l ON s.source = l.source AND s.pool = l.pool
WHERE s.interval_end > l.window_end - INTERVAL '15' MINUTE AND s.interval_start < l.window_end
GROUP BY s.source, s.pool

-- name: advice_stats_pools
-- Per pool with statistics, over the 15 minutes up to its newest statistics interval's end: what the
-- advice from statistics alone reads (VDWQT, PGFIX, 1 MB frames; advice/online.py uses it for the
-- pools without a simulated curve and skips the others, the SQL excludes none). Reads and writes
-- each with the seconds of the intervals that state them (a report cut in two halves states reads
-- in one, writes in the other); VPSIZE from the attributes, else BUFFERS ALLOCATED; page size and
-- settings from the newest interval that states them.
WITH newest AS (
  SELECT source, pool, max(interval_end) AS window_end FROM ${schema}.pool_stats
  WHERE (:source IS NULL OR source = :source) GROUP BY source, pool)
SELECT s.source, s.pool, n.window_end, count(*),
       sum(s.interval_seconds) FILTER (WHERE coalesce(s.sync_reads_random, s.sync_reads_sequential,
           s.seq_prefetch_reads, s.list_prefetch_reads, s.dyn_prefetch_reads, s.seq_prefetch_pages,
           s.list_prefetch_pages, s.dyn_prefetch_pages) IS NOT NULL),
       sum(coalesce(s.sync_reads_random, 0)),
       sum(coalesce(s.sync_reads_random, 0) + coalesce(s.sync_reads_sequential, 0)
           + coalesce(s.seq_prefetch_pages, 0) + coalesce(s.list_prefetch_pages, 0)
           + coalesce(s.dyn_prefetch_pages, 0)),
       sum(coalesce(s.sync_reads_random, 0) + coalesce(s.sync_reads_sequential, 0)
           + coalesce(s.seq_prefetch_reads, 0) + coalesce(s.list_prefetch_reads, 0)
           + coalesce(s.dyn_prefetch_reads, 0)),
       sum(s.interval_seconds) FILTER (WHERE coalesce(s.pages_written, s.sync_writes, s.async_writes) IS NOT NULL),
       sum(coalesce(s.pages_written, 0)), sum(coalesce(s.sync_writes, 0) + coalesce(s.async_writes, 0)),
       sum(coalesce(s.dwqt_reached, 0)), sum(coalesce(s.vdwqt_reached, 0)),
       sum(coalesce(s.write_engine_not_available, 0)),
       coalesce(max_by(s.vpsize, s.interval_end) FILTER (WHERE s.vpsize IS NOT NULL),
                max_by(s.buffers_allocated, s.interval_end) FILTER (WHERE s.buffers_allocated IS NOT NULL)),
       count(s.vpsize) > 0,
       max_by(s.page_size, s.interval_end) FILTER (WHERE s.page_size IS NOT NULL),
       max_by(s.dwqt, s.interval_end) FILTER (WHERE s.dwqt IS NOT NULL),
       max_by(s.vdwqt, s.interval_end) FILTER (WHERE s.vdwqt IS NOT NULL),
       max_by(s.pgsteal, s.interval_end) FILTER (WHERE s.pgsteal IS NOT NULL),
       max_by(s.pgfix, s.interval_end) FILTER (WHERE s.pgfix IS NOT NULL),
       max_by(s.frame_size, s.interval_end) FILTER (WHERE s.frame_size IS NOT NULL),
       max_by(s.origin, s.interval_end), min(s.interval_start)
FROM ${schema}.pool_stats s JOIN newest n ON s.source = n.source AND s.pool = n.pool
WHERE s.interval_end > n.window_end - INTERVAL '15' MINUTE
GROUP BY s.source, s.pool, n.window_end

-- name: advice_stats_memory
-- Each source's memory over the 15 minutes up to its newest statistics interval's end (the paging
-- guard of the advice from statistics alone): intervals, page-ins, real storage available and total.
WITH newest AS (
  SELECT source, max(interval_end) AS window_end FROM ${schema}.pool_stats
  WHERE (:source IS NULL OR source = :source) GROUP BY source)
SELECT m.source, count(*), max(m.pageins_per_second), min(m.real_storage_available_mb), max(m.real_storage_mb)
FROM ${schema}.system_memory m JOIN newest e ON m.source = e.source
WHERE m.interval_end > e.window_end - INTERVAL '15' MINUTE AND m.interval_start < e.window_end
GROUP BY m.source

-- name: advice_objects
-- Per pool and object over the latest window: getpages, sequential share, distinct pages, simulated
-- sync reads, updates (set write intents: the objects written, for VDWQT).
WITH ${latest_windows}
SELECT o.source, o.pool, o.object, sum(o.getpages),
       sum(o.getpages_sequential + o.getpages_rid) * 1e0 / nullif(sum(o.getpages), 0),
       avg(o.distinct_pages), max(o.distinct_pages), max(o.working_set_pages), sum(o.sim_sync_reads),
       sum(o.updates)
FROM ${schema}.object_pane o JOIN latest l ON o.source = l.source AND o.pool = l.pool
WHERE o.pane_end > l.window_end - INTERVAL '15' MINUTE
GROUP BY o.source, o.pool, o.object

-- name: advice_halves
-- Per pool and object, each half of the latest window's getpage mix (the workload's similarity).
WITH ${latest_windows}
SELECT o.source, o.pool, o.object, o.pane_end <= l.window_end - INTERVAL '450' SECOND AS first,
       sum(o.getpages_random), sum(o.getpages_sequential), sum(o.getpages_rid), sum(o.seconds)
FROM ${schema}.object_pane o JOIN latest l ON o.source = l.source AND o.pool = l.pool
WHERE o.pane_end > l.window_end - INTERVAL '15' MINUTE
GROUP BY o.source, o.pool, o.object, o.pane_end <= l.window_end - INTERVAL '450' SECOND

-- name: advice_known_pools
-- Every pool each source has had statistics for (a new pool's name must be free).
SELECT DISTINCT source, pool FROM ${schema}.pool_stats

-- name: advice_memory
-- Each source's memory over its latest window: intervals, page-ins, real storage available and total.
WITH ${latest_windows},
ends AS (SELECT source, max(window_end) AS window_end FROM latest GROUP BY source)
SELECT m.source, count(*), max(m.pageins_per_second), min(m.real_storage_available_mb), max(m.real_storage_mb)
FROM ${schema}.system_memory m JOIN ends e ON m.source = e.source
WHERE m.interval_end > e.window_end - INTERVAL '15' MINUTE AND m.interval_start < e.window_end
GROUP BY m.source

-- name: advice_latest
-- Each source's latest advice evaluation (the view advice_latest), for one :source or all (null);
-- the columns of the advice table (schemas/tables.py ADVICE) in order.
SELECT evaluated_at, window_end, source, pool, kind, objects, summary, avoided_sync_reads_per_s,
       cpu_seconds_per_24h, elapsed_seconds_per_24h, sim_error, command, evidence, predicted, confidence, budget
FROM ${schema}.advice_latest
WHERE (:source IS NULL OR source = :source) ORDER BY source, coalesce(avoided_sync_reads_per_s, 0) DESC, pool, kind

-- name: advice_gbp_curve
-- Each data-sharing group's GBP grid over its latest window, from the view gbp_curve_latest
-- (advice/group_tables.py reads the rows by these names).
SELECT group_name, gbp, window_start, window_end, seconds, data_entries, ratio, directory_entries,
       structure_mb, is_current, getpages, lbp_hits, sync_reads_xi, xi_data_returned, xi_no_data,
       sync_reads_nf, nf_data_returned, nf_no_data, disk_sync_reads, directory_reclaims,
       xi_due_to_reclaims, xi_due_to_writes, changed_pages_written, data_entry_reclaims,
       writes_failed_no_storage, castout_pages, warmup
FROM ${schema}.gbp_curve_latest
ORDER BY group_name, gbp, data_entries, ratio

-- fragment: group_windows
-- Each GBP's latest window ends at its newest gbp_curve pane, as gbp_curve_latest's does.
group_latest AS (
  SELECT group_name, gbp, max(pane_end) AS latest_end FROM ${schema}.gbp_curve GROUP BY group_name, gbp)

-- name: advice_gbp_member
-- The same grid per member, added up over the same window as gbp_curve_latest's.
WITH ${group_windows}
SELECT m.group_name, m.gbp, m.member, m.data_entries, m.ratio,
       sum(m.getpages) AS getpages, sum(m.lbp_hits) AS lbp_hits, sum(m.sync_reads_xi) AS sync_reads_xi,
       sum(m.xi_data_returned) AS xi_data_returned, sum(m.xi_no_data) AS xi_no_data,
       sum(m.sync_reads_nf) AS sync_reads_nf, sum(m.nf_data_returned) AS nf_data_returned,
       sum(m.nf_no_data) AS nf_no_data, sum(m.disk_sync_reads) AS disk_sync_reads,
       sum(m.directory_reclaims) AS directory_reclaims, sum(m.xi_due_to_reclaims) AS xi_due_to_reclaims,
       sum(m.xi_due_to_writes) AS xi_due_to_writes, sum(m.changed_pages_written) AS changed_pages_written,
       sum(m.data_entry_reclaims) AS data_entry_reclaims,
       sum(m.writes_failed_no_storage) AS writes_failed_no_storage, sum(m.castout_pages) AS castout_pages
FROM ${schema}.gbp_member m JOIN group_latest l ON l.group_name = m.group_name AND l.gbp = m.gbp
WHERE m.pane_end > l.latest_end - INTERVAL '15' MINUTE
GROUP BY m.group_name, m.gbp, m.member, m.data_entries, m.ratio

-- name: advice_lbp_curve
-- Each member's LBP curve with invalidations, added up over the same window; is_current as in
-- the window's latest pane.
WITH ${group_windows}
SELECT c.group_name, c.gbp, c.member, max(c.pool) AS pool, c.size_pages,
       max_by(c.is_current, c.pane_end) AS is_current, sum(c.getpages) AS getpages,
       sum(c.lbp_hits) AS lbp_hits, sum(c.xi_gbp) AS xi_gbp, sum(c.xi_disk) AS xi_disk,
       sum(c.nf_gbp) AS nf_gbp, sum(c.nf_disk) AS nf_disk
FROM ${schema}.lbp_curve c JOIN group_latest l ON l.group_name = c.group_name AND l.gbp = c.gbp
WHERE c.pane_end > l.latest_end - INTERVAL '15' MINUTE
GROUP BY c.group_name, c.gbp, c.member, c.size_pages
