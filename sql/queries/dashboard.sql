-- The web dashboard's queries (dashboards/queries.py, dashboards/server.py), run as the reader.
-- Values from a URL are only ever :parameters; names come from here.

-- name: pool_rolled_until
-- The pool's newest rolled-up hour: the pages read its panes from a day before it (recent_since).
SELECT max(period_start) AS h FROM ${schema}.pool_hour WHERE source = :source AND pool = :pool

-- name: newest_pane_all
-- The newest pane end of any pool.
SELECT max(pane_end) AS t FROM ${schema}.pool_pane

-- name: newest_pane
-- One pool's newest pane end, its panes read from :since.
SELECT max(pane_end) AS t FROM ${schema}.pool_pane WHERE source = :source AND pool = :pool AND pane_start >= :since

-- name: overview_pools
-- Every source and pool at its newest pane since :since (the overview's rows).
SELECT source, pool,
       max(pane_end) AS latest_pane_end,
       -- The newest getpage time: a pane still filling (live) ends in the future.
       max(least(pane_end, from_unixtime(to_unixtime(pane_start) + seconds))) AS data_end,
       max(emitted_at) AS emitted_at,
       max_by(current_size, pane_start) AS vpsize,
       max_by(model, pane_start) AS model,
       max_by(getpages / nullif(seconds, 0), pane_start) AS getpages_per_s,
       max_by(observed_sync_reads / nullif(seconds, 0), pane_start) AS measured_sync_reads_per_s,
       max_by(sim_sync_reads_per_s, pane_start) AS simulated_sync_reads_per_s,
       max_by(observed_hits * 1e0 / nullif(observed_hits + observed_misses, 0), pane_start) AS trace_hit_ratio,
       max_by(sim_hit_ratio, pane_start) AS simulated_hit_ratio,
       max_by(avoided_sync_reads_per_s_2x, pane_start) AS saved_sync_reads_per_s_2x,
       max_by(working_set_pages, pane_start) AS working_set_pages
FROM ${schema}.pool_pane
WHERE pane_start >= :since
GROUP BY source, pool

-- name: overview_stats
-- Each pool's newest statistics interval since :since (hit ratios, pages per write).
SELECT source, pool, max(interval_end) AS stats_end,
       max_by(application_hit_ratio, interval_end) AS application_hit_ratio,
       max_by(system_hit_ratio, interval_end) AS system_hit_ratio,
       max_by(sync_reads_per_second, interval_end) AS stats_sync_reads_per_s,
       max_by(pages_per_write, interval_end) AS pages_per_write
FROM ${schema}.pool_stats
WHERE interval_end >= :since
GROUP BY source, pool

-- name: overview_subsystems
-- Each source's newest statistics interval since :since, the subsystem as subsystem_summary adds it up.
SELECT s.source, s.period_start, s.period_end, s.pools, s.buffers_4k, s.buffers_8k, s.buffers_16k, s.buffers_32k,
       s.memory_mb, s.getpages_per_s, s.sync_reads_per_s, s.prefetch_pages_per_s, s.application_hit_ratio,
       s.system_hit_ratio
FROM ${schema}.subsystem_summary s
JOIN (
  SELECT source, max(period_end) AS period_end FROM ${schema}.subsystem_summary
  WHERE grain = 'interval' AND period_end >= :since GROUP BY source
) n ON n.source = s.source AND n.period_end = s.period_end
WHERE s.grain = 'interval'
ORDER BY s.source

-- name: overview_accuracy
-- Each pool's newest simulation error since :since.
SELECT source, pool, max_by(error_ratio, window_end) AS accuracy_error_ratio
FROM ${schema}.sim_accuracy_pane
WHERE window_end >= :since
GROUP BY source, pool

-- name: recent_alerts
-- The open alerts and those opened in the last day of the wall clock.
SELECT alert_id, rule, severity, source, pool, subject, state, opened_at, resolved_at, updated_at, event_time,
       value, baseline, threshold, message
FROM ${schema}.alert
WHERE state = 'open' OR opened_at >= current_timestamp - INTERVAL '1' DAY
ORDER BY state = 'open' DESC, opened_at DESC
LIMIT 200

-- name: pools
-- Pools with panes in the last 7 days of the wall clock (the page's selector).
SELECT DISTINCT source, pool FROM ${schema}.pool_pane WHERE pane_start >= current_timestamp - INTERVAL '7' DAY
ORDER BY source, pool

-- name: pool_series
-- One pool's panes in [:start, :end): rates, measured and simulated hit ratios, mix, working set; the
-- getpage counts by kind too (the page adds them up into the range's access mix).
-- sorted by: t
SELECT pane_start AS t, pane_end, seconds,
       getpages, getpages_random AS random, getpages_sequential AS sequential, getpages_rid AS list,
       getpages / nullif(seconds, 0) AS getpages_per_s,
       observed_sync_reads / nullif(seconds, 0) AS measured_sync_reads_per_s,
       sim_sync_reads_per_s AS simulated_sync_reads_per_s,
       observed_hits * 1e0 / nullif(observed_hits + observed_misses, 0) AS measured_hit_ratio,
       sim_hit_ratio AS simulated_hit_ratio,
       1 - sim_sync_reads / nullif(getpages_random, 0) AS simulated_random_hit_ratio,
       1 - observed_sync_reads * 1e0 / nullif(getpages_random, 0) AS measured_random_hit_ratio,
       working_set_pages, distinct_pages,
       getpages_random / nullif(seconds, 0) AS random_per_s,
       getpages_sequential / nullif(seconds, 0) AS sequential_per_s,
       getpages_rid / nullif(seconds, 0) AS list_per_s,
       current_size, vpseqt, model
FROM ${schema}.pool_pane
WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end

-- name: pool_anchor
-- What the rest of a pool's page hangs on, in one statement (sql/anchor.sql says what): its
-- attributes at its newest pane and its panes since :since, the rolled-up panes before it, its
-- settings, the measured point over the curve's window and its newest accuracy row.
${anchor_pool}

-- name: pool_page_row
-- One pool's anchor from its row of the page table pool_page (pool_anchor's answer for every pool,
-- kept by the maintenance service, sql/pages.py) read from :since: what its panes and accuracy give
-- read now, what its rollups and statistics give from the row (refreshed seconds after their
-- commits), and the row's own newest pane, pane count and refresh (page_): where those are the
-- panes' now, curve_page holds the pool's curve. No row: the page asks pool_anchor.
${anchor_row}

-- name: pool_curve_page
-- One pool's rows of the page table curve_page (pool_curve for every pool over its window before
-- its newest pane, kept with pool_page): the page uses them when their window ends at the newest
-- pane of the pool_page row it used, else it asks pool_curve.
-- sorted by: size_pages
SELECT size_pages, size_factor, is_current, window_start, window_end, panes, hit_ratio, sync_reads_per_s,
       prefetch_pages_per_s, avoided_sync_reads_per_s, cpu_seconds_saved_per_24h,
       elapsed_seconds_saved_per_24h, sync_read_ms, sync_read_ms_from,
       cpu_us_per_sync_read, cpu_seconds_per_24h, delay_seconds_per_24h
FROM ${schema}.curve_page
WHERE source = :source AND pool = :pool

-- name: pool_settings
-- One pool's settings as its newest statistics interval carries them (the attributes the collectors
-- sent), over all its intervals: pool_anchor's when it found none since its :since.
SELECT max_by(pgsteal, interval_end) AS pgsteal, max_by(pgfix, interval_end) AS pgfix,
       max_by(dwqt, interval_end) AS dwqt, max_by(vdwqt, interval_end) AS vdwqt,
       max_by(page_size, interval_end) AS page_size, max_by(frame_size, interval_end) AS frame_size,
       max_by(spsize, interval_end) AS spsize, max(interval_end) AS settings_at
FROM ${schema}.pool_stats
WHERE source = :source AND pool = :pool

-- name: pool_stats_series
-- One pool's statistics intervals overlapping (:start, :end).
-- sorted by: t
SELECT interval_end AS t, interval_seconds,
       -- random sync reads only: what the trace's misses and the simulation count
       sync_reads_random / nullif(interval_seconds, 0) AS sync_reads_per_s,
       application_hit_ratio, system_hit_ratio, pages_per_write, read_ios_per_second
FROM ${schema}.pool_stats
WHERE source = :source AND pool = :pool AND interval_end > :start AND interval_start < :end

-- name: pool_curve
-- One pool's simulated curve over [:window_start, :window_end): sim_curve_latest's one definition
-- (sql/curve.sql) with the window given and filtered on each scan (sql/curve.py says why).
-- sorted by: size_pages
SELECT size_pages, size_factor, is_current, window_start, window_end, panes, hit_ratio, sync_reads_per_s,
       prefetch_pages_per_s, avoided_sync_reads_per_s, cpu_seconds_saved_per_24h,
       elapsed_seconds_saved_per_24h, sync_read_ms, sync_read_ms_from,
       cpu_us_per_sync_read, cpu_seconds_per_24h, delay_seconds_per_24h
FROM (
${curve_window}
) page

-- name: pool_spsize_check
-- DB2's simulated pool (SPSIZE) of one pool per statistics interval ending in (:start, :end]: its
-- avoidable sync reads beside the simulation's at VPSIZE + SPSIZE (the view spsize_check).
-- sorted by: t
SELECT interval_end AS t, spsize, db2_avoidable_sync_reads, simulated_avoidable_sync_reads, error_ratio
FROM ${schema}.spsize_check
WHERE source = :source AND pool = :pool AND interval_end > :start AND interval_end <= :end

-- name: pool_series_rollup
-- pool_series's columns from the hourly or daily view (ranges the panes do not answer, sql/grain.py).
-- grains: hour, day
-- sorted by: t
SELECT period_start AS t, period_end AS pane_end, seconds, getpages, getpages_random AS random,
       getpages_sequential AS sequential, getpages_rid AS list, getpages_per_s, measured_sync_reads_per_s,
       simulated_sync_reads_per_s, measured_hit_ratio, simulated_hit_ratio, simulated_random_hit_ratio,
       measured_random_hit_ratio, avg_working_set_pages AS working_set_pages, max_distinct_pages AS distinct_pages,
       random_per_s, sequential_per_s, list_per_s, current_size, vpseqt, model
FROM ${schema}.pool_${grainly}
WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end

-- name: pool_stats_series_rollup
-- pool_stats_series's columns from the hourly or daily statistics view.
-- grains: hour, day
-- sorted by: t
SELECT period_end AS t, interval_seconds, sync_reads_random_per_second AS sync_reads_per_s,
       application_hit_ratio, system_hit_ratio, pages_per_write, read_ios_per_second
FROM ${schema}.pool_summary_${grainly}
WHERE source = :source AND pool = :pool AND period_end > :start AND period_start < :end

-- name: objects
-- A pool's objects in [:start, :end) ranked by simulated sync I/O (priced), with traced I/O and working sets.
-- The cost columns are object_io_cost's (views.sql) added up per object over the range, its
-- 'simulated' and 'traced' bases, computed here for the one pool and range: the view read through a
-- filter scans object_pane, io_pane, pool_pane and object_io_stats eleven times in 24 stages (each
-- CTE reference is a scan of its own); this reads each once (object_io_stats twice, pool_pane twice)
-- in 17. A pane's objects and its I/O events meet in one full join, the pool's average sync read
-- time in that pane is a window over it. tests/stack/test_dashboard.py compares the page with the
-- view. (A pane inside two statistics intervals of its pool, which DB2 does not write, would count
-- twice in the view's cost and here in the getpages too.)
WITH o AS (
  SELECT object, pane_start, pane_end, getpages, getpages_random, getpages_sequential, getpages_rid, sim_sync_reads,
         access_class, sim_sync_reads_per_s, cpu_us_per_sync_read
  FROM ${schema}.object_pane
  WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
), io AS (
  SELECT object, pane_start, pane_end, sum(ios) AS ios, sum(elapsed_us) AS elapsed_us
  FROM ${schema}.io_pane
  WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
    AND direction = 'read' AND io_type = 'sync'
  GROUP BY object, pane_start, pane_end
), j AS (
  SELECT coalesce(o.object, i.object) AS object, coalesce(o.pane_start, i.pane_start) AS pane_start,
         o.pane_end AS o_end, i.pane_end AS i_end, o.object IS NOT NULL AS in_o,
         o.getpages, o.getpages_random, o.getpages_sequential, o.getpages_rid, o.sim_sync_reads, o.access_class,
         o.sim_sync_reads_per_s, o.cpu_us_per_sync_read, i.ios, i.elapsed_us,
         sum(i.elapsed_us) OVER (PARTITION BY coalesce(o.pane_start, i.pane_start)) * 1e0
           / sum(i.ios) OVER (PARTITION BY coalesce(o.pane_start, i.pane_start)) AS pool_avg_us
  FROM o FULL JOIN io i ON i.object = o.object AND i.pane_start = o.pane_start
), stats_object AS (
  SELECT object, interval_start, interval_end,
         sum(sync_reads * sync_read_avg_ms) * 1e3 / nullif(sum(sync_reads), 0) AS avg_us
  FROM ${schema}.object_io_stats
  WHERE source = :source AND pool = :pool AND sync_read_avg_ms IS NOT NULL
    AND interval_start < :end AND interval_end > :start
  GROUP BY object, interval_start, interval_end
), stats_pool AS (
  SELECT interval_start, interval_end,
         sum(sync_reads * sync_read_avg_ms) * 1e3 / nullif(sum(sync_reads), 0) AS avg_us
  FROM ${schema}.object_io_stats
  WHERE source = :source AND pool = :pool AND sync_read_avg_ms IS NOT NULL
    AND interval_start < :end AND interval_end > :start
  GROUP BY interval_start, interval_end
), pane_seconds AS (
  SELECT pane_start, max(seconds) AS seconds
  FROM ${schema}.pool_pane
  WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
  GROUP BY pane_start
), priced AS (
  SELECT j.*,
         to_unixtime(j.o_end) - to_unixtime(j.pane_start) AS sim_len,
         to_unixtime(j.i_end) - to_unixtime(j.pane_start) AS io_len,
         j.sim_sync_reads_per_s * coalesce(j.cpu_us_per_sync_read, 30e0) * 1e-6 AS cpu,
         CASE WHEN j.ios > 0 THEN j.elapsed_us * 1e0 / j.ios ELSE coalesce(j.pool_avg_us, so.avg_us, sp.avg_us) END AS avg_us,
         coalesce(ps.seconds, to_unixtime(j.i_end) - to_unixtime(j.pane_start)) AS traced_seconds
  FROM j
  LEFT JOIN stats_object so ON so.object = j.object AND j.pane_start >= so.interval_start AND j.o_end <= so.interval_end
  LEFT JOIN stats_pool sp ON j.pane_start >= sp.interval_start AND j.o_end <= sp.interval_end
  LEFT JOIN pane_seconds ps ON ps.pane_start = j.pane_start
), per_object AS (
  SELECT object,
         sum(getpages) AS getpages, sum(getpages_random) AS random, sum(getpages_sequential) AS sequential,
         sum(getpages_rid) AS list, sum(sim_sync_reads) AS sim_sync_reads, count(*) FILTER (WHERE in_o) AS panes,
         max_by(access_class, pane_start) FILTER (WHERE in_o) AS access_class,
         sum(sim_sync_reads_per_s * sim_len) FILTER (WHERE sim_sync_reads_per_s IS NOT NULL) AS ios,
         sum(cpu * sim_len) FILTER (WHERE sim_sync_reads_per_s IS NOT NULL) AS cpu_seconds,
         sum(sim_sync_reads_per_s * avg_us * 1e-6 * sim_len) FILTER (WHERE sim_sync_reads_per_s IS NOT NULL) AS io_seconds,
         sum(ios / traced_seconds * io_len) FILTER (WHERE ios > 0) AS traced_ios,
         sum(elapsed_us * 1e-6 / traced_seconds * io_len) FILTER (WHERE ios > 0) AS traced_io_seconds
  FROM priced
  GROUP BY object
  HAVING count(*) FILTER (WHERE in_o) > 0
), p AS (
  SELECT sum(seconds) AS seconds
  FROM ${schema}.pool_pane
  WHERE source = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
), ws AS (
  SELECT object, avg(window_pages) AS ws_avg, max(window_pages) AS ws_max, avg(abs(change_pages)) AS ws_change,
         max_by(window_pages, pane_start) AS ws_latest
  FROM ${schema}.working_set
  WHERE source = :source AND pool = :pool AND object IS NOT NULL AND pane_start >= :start AND pane_start < :end
  GROUP BY object
)
SELECT o.object, o.getpages, o.getpages / p.seconds AS getpages_per_s,
       o.random, o.sequential, o.list,
       (o.sequential + o.list) * 1e0 / nullif(o.getpages, 0) AS sequential_share, o.access_class,
       o.sim_sync_reads / p.seconds AS sim_sync_reads_per_s,
       o.sim_sync_reads / nullif(sum(o.sim_sync_reads) OVER (), 0) AS share_of_pool_sync_reads,
       o.ios / p.seconds AS sync_ios_per_s,
       o.cpu_seconds / p.seconds * 86400 AS cpu_seconds_per_24h,
       o.io_seconds / p.seconds * 86400 AS delay_seconds_per_24h,
       o.traced_ios / p.seconds AS traced_sync_ios_per_s,
       o.traced_io_seconds / p.seconds * 86400 AS traced_delay_seconds_per_24h,
       ws.ws_avg, ws.ws_max, ws.ws_change, ws.ws_latest, o.panes
FROM per_object o CROSS JOIN p
LEFT JOIN ws ON ws.object = o.object
ORDER BY coalesce(o.ios, 0) DESC, o.getpages DESC

-- name: objects_rollup
-- objects's columns from the hourly or daily object_io_cost view (working sets: the maximum only).
-- grains: hour, day
WITH o AS (
  SELECT object, sum(getpages) AS getpages, sum(getpages_random) AS random, sum(getpages_sequential) AS sequential,
         sum(getpages_rid) AS list, sum(sim_sync_reads) AS sim_sync_reads, sum(panes) AS panes,
         max_by(access_class, period_start) AS access_class, sum(traced_sync_ios) AS traced_ios,
         sum(sim_cpu_seconds) AS cpu_seconds, sum(io_elapsed_seconds) AS io_seconds,
         max(max_working_set_pages) AS ws_max
  FROM ${schema}.object_io_cost_${grainly}
  WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end
  GROUP BY object
), p AS (
  SELECT sum(seconds) AS seconds FROM ${schema}.pool_${grain}
  WHERE source = :source AND pool = :pool AND period_start >= :start AND period_start < :end
), all_objects AS (
  SELECT sum(sim_sync_reads) AS sim_sync_reads FROM o
)
SELECT o.object, o.getpages, o.getpages / p.seconds AS getpages_per_s, o.random, o.sequential, o.list,
       (o.sequential + o.list) * 1e0 / nullif(o.getpages, 0) AS sequential_share, o.access_class,
       o.sim_sync_reads / p.seconds AS sim_sync_reads_per_s,
       o.sim_sync_reads / nullif(a.sim_sync_reads, 0) AS share_of_pool_sync_reads,
       o.sim_sync_reads / p.seconds AS sync_ios_per_s,
       o.cpu_seconds / p.seconds * 86400 AS cpu_seconds_per_24h,
       o.io_seconds / p.seconds * 86400 AS delay_seconds_per_24h,
       o.traced_ios / p.seconds AS traced_sync_ios_per_s,
       CAST(NULL AS double) AS traced_delay_seconds_per_24h,
       CAST(NULL AS double) AS ws_avg, o.ws_max, CAST(NULL AS double) AS ws_change, CAST(NULL AS bigint) AS ws_latest,
       o.panes
FROM o CROSS JOIN p CROSS JOIN all_objects a
ORDER BY o.sim_sync_reads DESC, o.getpages DESC

-- name: object_series
-- One object's panes in [:start, :end): getpages, simulated, traced and measured sync reads, working set.
WITH io AS (
  SELECT pane_start, sum(ios) AS ios
  FROM ${schema}.io_pane
  WHERE source = :source AND pool = :pool AND object = :object AND direction = 'read' AND io_type = 'sync'
    AND pane_start >= :start AND pane_start < :end
  GROUP BY pane_start
), ws AS (
  SELECT pane_start, max(window_pages) AS window_pages
  FROM ${schema}.working_set
  WHERE source = :source AND pool = :pool AND object = :object AND pane_start >= :start AND pane_start < :end
  GROUP BY pane_start
)
SELECT o.pane_start AS t, o.getpages / nullif(o.seconds, 0) AS getpages_per_s,
       o.sim_sync_reads_per_s AS simulated_sync_reads_per_s,
       io.ios / nullif(o.seconds, 0) AS traced_sync_reads_per_s,
       o.observed_misses * 1e0 / nullif(o.seconds, 0) AS measured_misses_per_s,
       o.sequential_share, o.access_class, ws.window_pages AS working_set_pages
FROM ${schema}.object_pane o
LEFT JOIN io ON io.pane_start = o.pane_start
LEFT JOIN ws ON ws.pane_start = o.pane_start
WHERE o.source = :source AND o.pool = :pool AND o.object = :object AND o.pane_start >= :start AND o.pane_start < :end
ORDER BY o.pane_start

-- name: prediction_checks
-- Every prediction checked against measurement after an -ALTER, newest first.
SELECT source, pool, changed_at, setting, old_value, new_value, predicted_sync_reads_per_s,
       measured_sync_reads_per_s, error_ratio, similarity, panes_after, measured_until, model,
       getpages_per_s_before, getpages_per_s_after, objects_new, objects_gone
FROM ${schema}.prediction_check
ORDER BY changed_at DESC
LIMIT 500

-- name: accuracy_series
-- One pool's simulation accuracy over (:start, :end] (trace and statistics).
SELECT window_end AS t, error_ratio, simulated_sync_reads_per_s, measured_sync_reads_per_s, measured_from,
       size_pages, model
FROM ${schema}.sim_accuracy
WHERE source = :source AND pool = :pool AND window_end > :start AND window_end <= :end
ORDER BY window_end

-- name: pool_groups
-- The data-sharing groups and GBPs one pool belongs to in (:start, :end): its member's LBP curve
-- (lbp_curve) or its statistics (gbp_stats: GBPn for BPn on z/OS, the pool's own name on pureScale).
-- sorted by: group_name, gbp
SELECT group_name, gbp FROM ${schema}.lbp_curve
WHERE member = :source AND pool = :pool AND pane_start >= :start AND pane_start < :end
UNION
SELECT group_name, gbp FROM ${schema}.gbp_stats
WHERE source = :source AND gbp IN ('G' || :pool, :pool) AND group_name IS NOT NULL
  AND interval_end > :start AND interval_start < :end

-- fragment: gbp_intervals
-- Each group's statistics per GBP and interval, as the view gbp_accuracy reads them: the members'
-- reads (scope member or unset) added up; reclaims, XIs by cause, failed writes and castouts from
-- the group's own row (scope group, -DISPLAY GROUPBUFFERPOOL GDETAIL), else the members' sum; the
-- structure as the group's row gives it. Callers filter on group_name, gbp and the interval (the
-- filter reaches the scan: they are the grouping keys).
gbp_intervals AS (
  SELECT group_name, gbp, interval_start, interval_end,
         max(to_unixtime(interval_end) - to_unixtime(interval_start)) AS seconds,
         count(DISTINCT source) FILTER (WHERE coalesce(scope, 'member') = 'member') AS members,
         sum(xi_reads_no_data + nf_reads_no_data) FILTER (WHERE coalesce(scope, 'member') = 'member')
           AS disk_sync_reads,
         sum(xi_reads_data_returned + nf_reads_data_returned) FILTER (WHERE coalesce(scope, 'member') = 'member')
           AS data_returned,
         sum(xi_reads_data_returned + xi_reads_no_data + nf_reads_data_returned + nf_reads_no_data)
           FILTER (WHERE coalesce(scope, 'member') = 'member') AS sync_reads,
         coalesce(max(directory_reclaims) FILTER (WHERE scope = 'group'),
                  sum(directory_reclaims) FILTER (WHERE coalesce(scope, 'member') = 'member')) AS directory_reclaims,
         coalesce(max(xi_due_to_reclaims) FILTER (WHERE scope = 'group'),
                  sum(xi_due_to_reclaims) FILTER (WHERE coalesce(scope, 'member') = 'member')) AS xi_due_to_reclaims,
         coalesce(max(xi_due_to_writes) FILTER (WHERE scope = 'group'),
                  sum(xi_due_to_writes) FILTER (WHERE coalesce(scope, 'member') = 'member')) AS xi_due_to_writes,
         coalesce(max(write_failed_no_storage) FILTER (WHERE scope = 'group'),
                  sum(write_failed_no_storage) FILTER (WHERE coalesce(scope, 'member') = 'member')) AS writes_failed,
         coalesce(max(castout_pages) FILTER (WHERE scope = 'group'),
                  sum(castout_pages) FILTER (WHERE coalesce(scope, 'member') = 'member')) AS castout_pages,
         max(data_entries) FILTER (WHERE scope = 'group') AS data_entries,
         max(ratio) FILTER (WHERE scope = 'group') AS ratio,
         max(directory_entries) FILTER (WHERE scope = 'group') AS directory_entries,
         max(structure_mb) FILTER (WHERE scope = 'group') AS structure_mb
  FROM ${schema}.gbp_stats
  WHERE group_name IS NOT NULL
  GROUP BY group_name, gbp, interval_start, interval_end)

-- name: groups
-- Every group and GBP simulated (gbp_curve) or reporting statistics (gbp_stats) in the last 7 days
-- of the wall clock (the Group page's selector and list).
WITH c AS (
  SELECT group_name, gbp, max(pane_end) AS latest_pane_end, max_by(members, pane_end) AS members
  FROM ${schema}.gbp_curve
  WHERE is_current AND pane_start >= current_timestamp - INTERVAL '7' DAY
  GROUP BY group_name, gbp
), s AS (
  SELECT group_name, gbp, max(interval_end) AS latest_interval_end,
         count(DISTINCT source) FILTER (WHERE coalesce(scope, 'member') = 'member') AS reporting_members
  FROM ${schema}.gbp_stats
  WHERE group_name IS NOT NULL AND interval_start >= current_timestamp - INTERVAL '7' DAY
  GROUP BY group_name, gbp
)
SELECT coalesce(c.group_name, s.group_name) AS group_name, coalesce(c.gbp, s.gbp) AS gbp,
       c.latest_pane_end, c.members, s.latest_interval_end, s.reporting_members
FROM c FULL JOIN s ON s.group_name = c.group_name AND s.gbp = c.gbp
ORDER BY 1, 2

-- name: group_attributes
-- One GBP of a group: the simulation's newest pane at the current setting (members, model,
-- sampling) and the newest statistics interval with the structure as the group reported it.
WITH c AS (
  SELECT max(pane_end) AS latest_pane_end, min(pane_start) AS first_pane_start, count(*) AS panes,
         max_by(members, pane_end) AS members, max_by(model, pane_end) AS model,
         max_by(sampling_rate, pane_end) AS sampling_rate, sum(late_getpages) AS late_getpages
  FROM ${schema}.gbp_curve
  WHERE group_name = :group_name AND gbp = :gbp AND is_current
), s AS (
  SELECT max(interval_end) AS latest_interval_end,
         max_by(data_entries, interval_end) FILTER (WHERE scope = 'group') AS measured_data_entries,
         max_by(ratio, interval_end) FILTER (WHERE scope = 'group') AS measured_ratio,
         max_by(directory_entries, interval_end) FILTER (WHERE scope = 'group') AS measured_directory_entries,
         max_by(structure_mb, interval_end) FILTER (WHERE scope = 'group') AS measured_structure_mb,
         max_by(gbpoolt, interval_end) FILTER (WHERE scope = 'group') AS measured_gbpoolt
  FROM ${schema}.gbp_stats
  WHERE group_name = :group_name AND gbp = :gbp
)
SELECT * FROM c CROSS JOIN s

-- name: group_curve
-- One GBP's curve over size and RATIO (the view gbp_curve_latest): rates per second, ratios as
-- fractions, the structure in MB.
SELECT data_entries, ratio, directory_entries, structure_mb, is_current, members, window_start, window_end,
       panes, seconds, disk_sync_reads_per_s, gbp_hit_ratio, directory_reclaims_per_s,
       xi_due_to_reclaims / nullif(seconds, 0) AS xi_due_to_reclaims_per_s,
       xi_due_to_writes / nullif(seconds, 0) AS xi_due_to_writes_per_s,
       writes_failed_no_storage / nullif(seconds, 0) AS writes_failed_per_s,
       castout_pages_per_s, directory_reclaims, writes_failed_no_storage, warmup
FROM ${schema}.gbp_curve_latest
WHERE group_name = :group_name AND gbp = :gbp
ORDER BY ratio, data_entries

-- name: group_measured_window
-- What the group measured over the curve's window [:window_start, :window_end): the statistics
-- intervals whose middle lies in it (as gbp_accuracy matches panes to intervals), sums over sums.
WITH ${gbp_intervals}
SELECT count(*) AS intervals, sum(seconds) AS seconds,
       min(interval_start) AS first_interval_start, max(interval_end) AS last_interval_end,
       sum(disk_sync_reads) / nullif(sum(seconds), 0) AS disk_sync_reads_per_s,
       sum(data_returned) * 1e0 / nullif(sum(sync_reads), 0) AS gbp_hit_ratio,
       sum(directory_reclaims) / nullif(sum(seconds), 0) AS directory_reclaims_per_s,
       sum(writes_failed) / nullif(sum(seconds), 0) AS writes_failed_per_s
FROM gbp_intervals
WHERE group_name = :group_name AND gbp = :gbp
  AND interval_end > :window_start AND interval_start < :window_end
  AND to_unixtime(interval_start) + to_unixtime(interval_end) >= 2 * to_unixtime(:window_start)
  AND to_unixtime(interval_start) + to_unixtime(interval_end) < 2 * to_unixtime(:window_end)

-- name: group_stats_series
-- One GBP's statistics intervals ending in (:start, :end]: XIs by cause, reclaims, failed writes,
-- disk sync reads per second and the GBP hit ratio.
WITH ${gbp_intervals}
SELECT interval_start AS t_start, interval_end AS t_end, seconds, members,
       xi_due_to_writes / nullif(seconds, 0) AS xi_due_to_writes_per_s,
       xi_due_to_reclaims / nullif(seconds, 0) AS xi_due_to_reclaims_per_s,
       directory_reclaims / nullif(seconds, 0) AS directory_reclaims_per_s,
       writes_failed / nullif(seconds, 0) AS writes_failed_per_s,
       disk_sync_reads / nullif(seconds, 0) AS disk_sync_reads_per_s,
       data_returned * 1e0 / nullif(sync_reads, 0) AS gbp_hit_ratio
FROM gbp_intervals
WHERE group_name = :group_name AND gbp = :gbp AND interval_end > :start AND interval_end <= :end
ORDER BY interval_end

-- name: group_sim_series
-- One GBP's simulation at its current setting per pane in [:start, :end): XIs by cause, reclaims,
-- disk sync reads per second and the GBP hit ratio.
SELECT pane_start AS t_start, pane_end AS t_end, seconds,
       xi_due_to_writes / nullif(seconds, 0) AS xi_due_to_writes_per_s,
       xi_due_to_reclaims / nullif(seconds, 0) AS xi_due_to_reclaims_per_s,
       directory_reclaims / nullif(seconds, 0) AS directory_reclaims_per_s,
       disk_sync_reads / nullif(seconds, 0) AS disk_sync_reads_per_s, gbp_hit_ratio
FROM ${schema}.gbp_curve
WHERE group_name = :group_name AND gbp = :gbp AND is_current AND pane_start >= :start AND pane_start < :end
ORDER BY pane_start

-- name: group_member_series
-- Each member of one GBP per pane in [:start, :end), simulated at the GBP's current setting: LBP
-- hit ratio and invalidation rate (XI reads per getpage).
SELECT member, pane_start AS t, getpages / nullif(seconds, 0) AS getpages_per_s,
       lbp_hits / nullif(getpages, 0) AS lbp_hit_ratio,
       sync_reads_xi / nullif(getpages, 0) AS xi_reads_per_getpage,
       disk_sync_reads / nullif(seconds, 0) AS disk_sync_reads_per_s
FROM ${schema}.gbp_member
WHERE group_name = :group_name AND gbp = :gbp AND is_current AND pane_start >= :start AND pane_start < :end
ORDER BY member, pane_start

-- name: group_lbp_curve
-- Each member's LBP curve over the panes ending in (:window_start, :window_end] (the GBP curve's
-- window): sync reads per second by LBP size, split into those the GBP returned and disk reads.
SELECT member, pool, size_pages, max_by(is_current, pane_end) AS is_current, count(*) AS panes,
       sum(lbp_hits) / nullif(sum(getpages), 0) AS lbp_hit_ratio,
       (sum(xi_gbp) + sum(nf_gbp)) / nullif(sum(seconds), 0) AS gbp_reads_per_s,
       sum(disk_sync_reads) / nullif(sum(seconds), 0) AS disk_sync_reads_per_s,
       sum(xi_gbp) / nullif(sum(seconds), 0) AS xi_gbp_per_s, sum(xi_disk) / nullif(sum(seconds), 0) AS xi_disk_per_s,
       sum(nf_gbp) / nullif(sum(seconds), 0) AS nf_gbp_per_s, sum(nf_disk) / nullif(sum(seconds), 0) AS nf_disk_per_s
FROM ${schema}.lbp_curve
WHERE group_name = :group_name AND gbp = :gbp AND pane_end > :window_start AND pane_end <= :window_end
GROUP BY member, pool, size_pages
ORDER BY member, pool, size_pages

-- name: group_accuracy
-- One GBP's simulation at its current setting against its statistics, per interval ending in
-- (:start, :end] (the view gbp_accuracy), newest first.
SELECT interval_start, interval_end, members, panes, warmup, data_entries, ratio,
       simulated_disk_sync_reads, measured_disk_sync_reads, disk_sync_reads_error,
       simulated_gbp_hit_ratio, measured_gbp_hit_ratio, gbp_hit_ratio_error,
       simulated_directory_reclaims, measured_directory_reclaims, directory_reclaims_error,
       simulated_xi_due_to_writes, measured_xi_due_to_writes, simulated_writes_failed, measured_writes_failed
FROM ${schema}.gbp_accuracy
WHERE group_name = :group_name AND gbp = :gbp AND interval_end > :start AND interval_end <= :end
ORDER BY interval_end DESC
LIMIT 500

-- name: dead_letters_by_reason
-- Dead letters since :since by collector, source and reason (the text before its first ':').
SELECT collector, source,
       split_part(reason, ':', 1) AS reason, count(*) AS records, max(detected_at) AS latest,
       max_by(reason, detected_at) AS example, max_by(position, detected_at) AS example_position
FROM ${schema}.dead_letter
WHERE detected_at >= :since
GROUP BY collector, source, split_part(reason, ':', 1)
ORDER BY records DESC
LIMIT 100

-- name: reader_health
-- The dashboard's health check: Trino answers the reader.
SELECT 1 AS ok

-- name: table_freshness
-- Every table's newest row and row count (the health page); one line per table of sql/catalog.py
-- (tests/sql/test_named.py holds it to the catalogue).
SELECT 'pool_pane' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.pool_pane
UNION ALL
SELECT 'object_pane' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.object_pane
UNION ALL
SELECT 'sim_curve' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.sim_curve
UNION ALL
SELECT 'sim_accuracy_pane' AS table_name, max(window_end) AS newest, count(*) AS row_count FROM ${schema}.sim_accuracy_pane
UNION ALL
SELECT 'prediction_check' AS table_name, max(changed_at) AS newest, count(*) AS row_count FROM ${schema}.prediction_check
UNION ALL
SELECT 'working_set' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.working_set
UNION ALL
SELECT 'reuse_distance' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.reuse_distance
UNION ALL
SELECT 'pool_stats' AS table_name, max(interval_start) AS newest, count(*) AS row_count FROM ${schema}.pool_stats
UNION ALL
SELECT 'object_io_stats' AS table_name, max(interval_start) AS newest, count(*) AS row_count FROM ${schema}.object_io_stats
UNION ALL
SELECT 'io_pane' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.io_pane
UNION ALL
SELECT 'gbp_stats' AS table_name, max(interval_start) AS newest, count(*) AS row_count FROM ${schema}.gbp_stats
UNION ALL
SELECT 'backup_stats' AS table_name, max(event_time) AS newest, count(*) AS row_count FROM ${schema}.backup_stats
UNION ALL
SELECT 'backup_thread' AS table_name, max(event_time) AS newest, count(*) AS row_count FROM ${schema}.backup_thread
UNION ALL
SELECT 'dead_letter' AS table_name, max(detected_at) AS newest, count(*) AS row_count FROM ${schema}.dead_letter
UNION ALL
SELECT 'alert' AS table_name, max(opened_at) AS newest, count(*) AS row_count FROM ${schema}.alert
UNION ALL
SELECT 'system_memory' AS table_name, max(interval_start) AS newest, count(*) AS row_count FROM ${schema}.system_memory
UNION ALL
SELECT 'advice' AS table_name, max(evaluated_at) AS newest, count(*) AS row_count FROM ${schema}.advice
UNION ALL
SELECT 'gbp_curve' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.gbp_curve
UNION ALL
SELECT 'gbp_member' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.gbp_member
UNION ALL
SELECT 'lbp_curve' AS table_name, max(pane_start) AS newest, count(*) AS row_count FROM ${schema}.lbp_curve
UNION ALL
SELECT 'pool_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.pool_hour
UNION ALL
SELECT 'pool_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.pool_day
UNION ALL
SELECT 'object_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.object_hour
UNION ALL
SELECT 'object_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.object_day
UNION ALL
SELECT 'curve_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.curve_hour
UNION ALL
SELECT 'curve_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.curve_day
UNION ALL
SELECT 'reuse_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.reuse_hour
UNION ALL
SELECT 'reuse_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.reuse_day
UNION ALL
SELECT 'io_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.io_hour
UNION ALL
SELECT 'io_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.io_day
UNION ALL
SELECT 'stats_hour' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.stats_hour
UNION ALL
SELECT 'stats_day' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.stats_day
UNION ALL
SELECT 'rollup_state' AS table_name, max(updated_at) AS newest, count(*) AS row_count FROM ${schema}.rollup_state
UNION ALL
SELECT 'pool_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.pool_hour_retired
UNION ALL
SELECT 'pool_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.pool_day_retired
UNION ALL
SELECT 'object_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.object_hour_retired
UNION ALL
SELECT 'object_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.object_day_retired
UNION ALL
SELECT 'curve_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.curve_hour_retired
UNION ALL
SELECT 'curve_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.curve_day_retired
UNION ALL
SELECT 'reuse_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.reuse_hour_retired
UNION ALL
SELECT 'reuse_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.reuse_day_retired
UNION ALL
SELECT 'io_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.io_hour_retired
UNION ALL
SELECT 'io_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.io_day_retired
UNION ALL
SELECT 'stats_hour_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.stats_hour_retired
UNION ALL
SELECT 'stats_day_retired' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.stats_day_retired
UNION ALL
SELECT 'table_clock' AS table_name, max(observed_at) AS newest, count(*) AS row_count FROM ${schema}.table_clock
UNION ALL
SELECT 'retirement' AS table_name, max(period_start) AS newest, count(*) AS row_count FROM ${schema}.retirement

-- The statistics pages (backups, pureScale, memory, writes): each over a range ending at its
-- table's newest row (of :source, or of every source when it is null), as the pool page's ranges
-- end at the newest pane.

-- name: backups_newest
-- The newest backup or restore run.
SELECT max(event_time) AS t FROM ${schema}.backup_stats WHERE (:source IS NULL OR source = :source)

-- name: backup_runs
-- Backup and restore runs in [:start, :end], each beside the run before it of the same database
-- and operation (seed 003: compare a run with the last one): elapsed, MB/s and the bottleneck.
WITH runs AS (
  SELECT source, event_time, operation, database, parallelism, buffers, buffer_size, elapsed_seconds, mbytes,
         mbytes / nullif(elapsed_seconds, 0) AS mb_per_s, bm_threads, mc_threads, bottleneck, findings,
         lag(event_time) OVER w AS previous_at, lag(elapsed_seconds) OVER w AS previous_elapsed_seconds,
         lag(mbytes / nullif(elapsed_seconds, 0)) OVER w AS previous_mb_per_s
  FROM ${schema}.backup_stats
  WHERE (:source IS NULL OR source = :source)
  WINDOW w AS (PARTITION BY source, database, operation ORDER BY event_time)
)
SELECT *, mb_per_s / nullif(previous_mb_per_s, 0) - 1 AS mb_per_s_change
FROM runs WHERE event_time >= :start AND event_time <= :end
ORDER BY event_time DESC, source, database

-- name: backup_threads
-- The threads of the runs in [:start, :end]: where each spent its time (I/O, message queue, wait queue).
SELECT source, event_time, operation, database, kind, thread, total_seconds, io_share, msgq_share, waitq_share,
       buffers, mbytes, finding
FROM ${schema}.backup_thread
WHERE (:source IS NULL OR source = :source) AND event_time >= :start AND event_time <= :end
ORDER BY event_time DESC, source, database, kind, thread

-- name: purescale_newest
-- The newest pureScale statistics interval.
SELECT max(interval_end) AS t FROM ${schema}.purescale_summary WHERE (:source IS NULL OR source = :source)

-- name: purescale_intervals
-- pureScale pools per interval in (:start, :end]: LBP and GBP hit ratios, GBP full per 10,000 commits,
-- CF wait per call, with seed 004's bands.
SELECT source, pool, interval_end AS t, interval_seconds, luw_hit_ratio, luw_lbp_hit_ratio, luw_gbp_hit_ratio,
       gbp_full_per_10k_commits, cf_wait_us_per_call, lbp_band, gbp_full_band
FROM ${schema}.purescale_summary
WHERE (:source IS NULL OR source = :source) AND interval_end > :start AND interval_end <= :end
ORDER BY interval_end, source, pool

-- name: memory_newest
-- The newest system memory interval.
SELECT max(interval_end) AS t FROM ${schema}.system_memory WHERE (:source IS NULL OR source = :source)

-- name: memory_intervals
-- Real storage per interval in (:start, :end]: total, available, DB2's, page-ins per second.
SELECT source, interval_end AS t, real_storage_mb, real_storage_available_mb, db2_real_storage_mb,
       pageins_per_second, aux_slots_used
FROM ${schema}.system_memory
WHERE (:source IS NULL OR source = :source) AND interval_end > :start AND interval_end <= :end
ORDER BY interval_end, source

-- name: memory_pools
-- Each pool's memory at its newest statistics interval at or before :end: buffers, page size, MB,
-- share of its source's pool memory, and how it is backed (PGFIX, frame size).
WITH newest AS (
  SELECT source, pool, max(period_end) AS period_end FROM ${schema}.subsystem_pool_summary
  WHERE grain = 'interval' AND (:source IS NULL OR source = :source) AND period_end <= :end
  GROUP BY source, pool
), backing AS (
  SELECT source, pool, max_by(pgfix, interval_end) AS pgfix, max_by(frame_size, interval_end) AS frame_size
  FROM ${schema}.pool_stats WHERE (:source IS NULL OR source = :source) AND interval_end <= :end
  GROUP BY source, pool
)
SELECT s.source, s.pool, s.period_end AS t, s.buffers, s.page_size, s.memory_mb, s.memory_share, b.pgfix,
       b.frame_size
FROM ${schema}.subsystem_pool_summary s
JOIN newest n ON n.source = s.source AND n.pool = s.pool AND n.period_end = s.period_end
LEFT JOIN backing b ON b.source = s.source AND b.pool = s.pool
WHERE s.grain = 'interval'
ORDER BY s.source, s.memory_mb DESC NULLS LAST, s.pool

-- name: writes_newest
-- The newest statistics interval that counts writes.
SELECT max(interval_end) AS t FROM ${schema}.pool_stats
WHERE (:source IS NULL OR source = :source) AND pages_written IS NOT NULL

-- name: write_intervals
-- Writes per pool and statistics interval in (:start, :end]: pages and write I/Os per second, pages
-- per write, the share of sync writes, and the thresholds reached (DWQT, VDWQT, DMTH, no write engine).
SELECT source, pool, interval_end AS t, interval_seconds,
       pages_written / nullif(interval_seconds, 0) AS pages_written_per_s,
       (sync_writes + async_writes) / nullif(interval_seconds, 0) AS write_ios_per_s,
       pages_per_write, sync_writes * 1e0 / nullif(sync_writes + async_writes, 0) AS sync_write_share,
       dwqt_reached, vdwqt_reached, dm_threshold_reached, write_engine_not_available, dwqt, vdwqt
FROM ${schema}.pool_stats
WHERE (:source IS NULL OR source = :source) AND pages_written IS NOT NULL
  AND interval_end > :start AND interval_end <= :end
ORDER BY interval_end, source, pool
