-- The alert evaluator's queries (dashboards/alerts.py), run as the writer. Windows are in event
-- time ending at each pool's newest pane, or at :at (null: now; backtests and tests give it).

-- name: alert_pool_windows
-- Per pool: the panes ending in the window (t - :window_ms, t] (recent) and in the baseline window
-- :offset_ms earlier, t being the pool's newest pane end (or :at); sync_reads_up and hit_ratio_drop read it.
WITH ends AS (
  SELECT source, pool, coalesce(:at, max(pane_end)) AS t
  FROM ${schema}.pool_pane
  WHERE pane_end <= coalesce(:at, pane_end)
  GROUP BY source, pool
), panes AS (
  SELECT e.source, e.pool, e.t, p.seconds, p.observed_sync_reads, p.observed_hits, p.observed_misses,
         p.pane_end > date_add('millisecond', -:window_ms, e.t) AS recent
  FROM ends e
  JOIN ${schema}.pool_pane p ON p.source = e.source AND p.pool = e.pool
  WHERE p.pane_end <= e.t AND p.pane_end > date_add('millisecond', -:window_ms - :offset_ms, e.t)
    AND (p.pane_end > date_add('millisecond', -:window_ms, e.t)
         OR p.pane_end <= date_add('millisecond', -:offset_ms, e.t))
)
SELECT source, pool, t,
  sum(observed_sync_reads) FILTER (WHERE recent)
    / nullif(sum(seconds) FILTER (WHERE recent AND observed_sync_reads IS NOT NULL), 0) AS sync_reads_per_s,
  sum(observed_sync_reads) FILTER (WHERE NOT recent)
    / nullif(sum(seconds) FILTER (WHERE NOT recent AND observed_sync_reads IS NOT NULL), 0) AS base_sync_reads_per_s,
  sum(observed_hits) FILTER (WHERE recent) * 1e0
    / nullif(sum(observed_hits + observed_misses) FILTER (WHERE recent), 0) AS hit_ratio,
  sum(observed_hits) FILTER (WHERE NOT recent) * 1e0
    / nullif(sum(observed_hits + observed_misses) FILTER (WHERE NOT recent), 0) AS base_hit_ratio,
  sum(observed_hits + observed_misses) FILTER (WHERE recent)
    / nullif(sum(seconds) FILTER (WHERE recent AND observed_hits IS NOT NULL), 0) AS getpages_per_s
FROM panes
GROUP BY source, pool, t

-- name: alert_sim_accuracy
-- The latest sim_accuracy row per pool and basis (trace, statistics) at or before :at.
SELECT source, pool, 'sim_accuracy/' || measured_from, max(window_end),
       max_by(error_ratio, window_end), max_by(measured_sync_reads_per_s, window_end)
FROM ${schema}.sim_accuracy
WHERE window_end <= coalesce(:at, window_end)
GROUP BY source, pool, measured_from

-- name: alert_newest_pane
-- Each pool's newest pane end at or before :at (data_stale).
SELECT source, pool, max(pane_end)
FROM ${schema}.pool_pane
WHERE pane_end <= coalesce(:at, pane_end)
GROUP BY source, pool

-- name: alert_dead_letters
-- Dead letters per source and collector in the :window_ms before :at; detected_at is the
-- collectors' wall clock, so the window ends now when :at is null.
SELECT source, 'dead_letter/' || collector, max(detected_at), count(*)
FROM ${schema}.dead_letter
WHERE detected_at <= coalesce(:at, current_timestamp)
  AND detected_at > date_add('millisecond', -:window_ms, coalesce(:at, current_timestamp))
GROUP BY source, collector

-- name: alert_pages_per_write
-- Each pool's pages per write I/O at its newest statistics interval at or before :at.
SELECT source, pool, max(interval_end), max_by(pages_per_write, interval_end), max_by(pages_written, interval_end)
FROM ${schema}.pool_stats
WHERE interval_end <= coalesce(:at, interval_end)
GROUP BY source, pool

-- name: alert_pool_stats_counters
-- Per pool and warning counter of dashboards/stats_warnings.py (a subject each): at or before :at,
-- the newest statistics interval that states the counter, with its count, the count it is weighed
-- against (async writes for sync writes, VDWQT reached for DWQT reached) and the interval's length.
-- An interval that leaves a counter out (one half of a report) does not hide the last count.
SELECT s.source, s.pool, 'pool_stats/' || c.counter, max(s.interval_end),
       max_by(c.value, s.interval_end), max_by(c.other, s.interval_end), max_by(s.interval_seconds, s.interval_end)
FROM ${schema}.pool_stats s
CROSS JOIN UNNEST(
  ARRAY['prefetch_disabled_no_buffer', 'prefetch_disabled_no_read_engine', 'write_engine_not_available',
        'dm_threshold_reached', 'vpool_full', 'dwqt_reached', 'sync_writes', 'pageins_read', 'pageins_write',
        'dataset_opens'],
  ARRAY[s.prefetch_disabled_no_buffer, s.prefetch_disabled_no_read_engine, s.write_engine_not_available,
        s.dm_threshold_reached, s.vpool_full, s.dwqt_reached, s.sync_writes, s.pageins_read, s.pageins_write,
        s.dataset_opens],
  ARRAY[NULL, NULL, NULL, NULL, NULL, s.vdwqt_reached, s.async_writes, NULL, NULL, NULL]
) AS c (counter, value, other)
WHERE c.value IS NOT NULL AND s.interval_end <= coalesce(:at, s.interval_end)
GROUP BY s.source, s.pool, c.counter

-- name: alert_gbp_stats
-- Per group and GBP (gbp_intervals, sql/queries/dashboard.sql): at or before :at, the newest
-- statistics interval that counts directory reclaims, with them and the XIs they caused, and the
-- newest that counts failed writes, with them and the pages cast out; gbp_directory_reclaims and
-- gbp_writes_failed read it. An interval that leaves a counter out does not hide the last count.
WITH ${gbp_intervals}
SELECT group_name, gbp,
       max(interval_end) FILTER (WHERE directory_reclaims IS NOT NULL),
       max_by(directory_reclaims, interval_end) FILTER (WHERE directory_reclaims IS NOT NULL),
       max_by(xi_due_to_reclaims, interval_end) FILTER (WHERE directory_reclaims IS NOT NULL),
       max(interval_end) FILTER (WHERE writes_failed IS NOT NULL),
       max_by(writes_failed, interval_end) FILTER (WHERE writes_failed IS NOT NULL),
       max_by(castout_pages, interval_end) FILTER (WHERE writes_failed IS NOT NULL)
FROM gbp_intervals
WHERE interval_end <= coalesce(:at, interval_end)
GROUP BY group_name, gbp

-- name: alerts_open
-- The open alerts (the evaluator goes on from them), columns in the order of alerts.Alert.
SELECT alert_id, rule, severity, source, pool, subject, state, opened_at, resolved_at, updated_at, event_time,
       value, baseline, threshold, message
FROM ${schema}.alert
WHERE state = 'open'
ORDER BY opened_at DESC, alert_id

-- name: alerts_all
-- Every alert (poolsight alerts list --all), columns in the order of alerts.Alert.
SELECT alert_id, rule, severity, source, pool, subject, state, opened_at, resolved_at, updated_at, event_time,
       value, baseline, threshold, message
FROM ${schema}.alert
ORDER BY opened_at DESC, alert_id
