-- What a pool's page hangs on: the ONE definition of the page's pool_anchor (one pool,
-- queries/dashboard.sql, ${anchor_pool}) and of the page table pool_page that the maintenance
-- service keeps for every pool at once (queries/maintenance.sql refresh_pool_page, ${anchor_all};
-- sql/pages.py), and of pool_page_row, which reads `a` and `acc` and takes `h` and `st` from that
-- table (${anchor_row}). sql/anchor.py fills ${key_a}, ${key_h}, ${key_st}, ${key_acc} (what each CTE
-- selects first: nothing for one pool; for all, its source and pool under a name of each CTE's
-- own, and in `a` the :since read from), ${of_pool} (the scans' filter: the pool's source and
-- pool, or `true`), ${partition} and ${group} (the window's partition, the grouping: none, or by
-- source and pool), ${top_accuracy} and ${joined} (the newest accuracy row: LIMIT 1 for one pool,
-- a rank for all; the CTEs' rows joined).
-- Its settings at its newest pane and its panes since :since, the panes before :since as the
-- hourly rollups counted them (the panes may be gone by retention) and its newest rolled-up hour (a
-- :since later than a day before it is too late: dashboards/queries.py asks again), and the
-- settings of its newest statistics interval since :since (none: pool_settings reads them from
-- all its intervals). Beside them, what needs only the newest pane (a statement less each, Trino's
-- cost being per statement): measured and simulated sync reads over the curve's window, the
-- :window_s seconds before the newest pane (`measured_`), and the newest trace-measured row of
-- sim_accuracy, from its table (`accuracy_`; the view adds statistics intervals through a join
-- over every pool). pool_pane is scanned once: the newest pane's end comes beside each row (a
-- window over the pool's rows), not from a join of the table with an aggregate of itself (three
-- scans, about a third of the statement's CPU, sql/README.md).
WITH p AS (
  -- from the window's length twice before :since: a newest pane just after it still has its window
  SELECT *, pane_start >= :since AS recent,
         max(CASE WHEN pane_start >= :since THEN pane_end END) OVER (${partition}) AS newest
  FROM ${schema}.pool_pane
  WHERE ${of_pool} AND pane_start >= date_add('second', -2 * :window_s, :since)
), w AS (
  SELECT *, pane_end > date_add('second', -:window_s, newest) AND pane_start < newest AS in_window FROM p
), a AS (
  SELECT ${key_a}max_by(current_size, pane_start) FILTER (WHERE recent) AS vpsize,
         max_by(vpseqt, pane_start) FILTER (WHERE recent) AS vpseqt,
         max_by(model, pane_start) FILTER (WHERE recent) AS model,
         max_by(model_sampling_rate, pane_start) FILTER (WHERE recent) AS model_sampling_rate,
         max_by(mode, pane_start) FILTER (WHERE recent) AS mode,
         max_by(sampling_rate, pane_start) FILTER (WHERE recent) AS sampling_rate,
         max_by(window_panes, pane_start) FILTER (WHERE recent) AS window_panes,
         max_by(cpu_us_per_sync_read, pane_start) FILTER (WHERE recent) AS cpu_us_per_sync_read,
         max(pane_end) FILTER (WHERE recent) AS latest_pane_end,
         min(pane_start) FILTER (WHERE recent) AS first_pane_start,
         count(*) FILTER (WHERE recent) AS panes,
         sum(observed_sync_reads) FILTER (WHERE in_window) / nullif(sum(seconds) FILTER (WHERE in_window), 0)
           AS measured_measured_sync_reads_per_s,
         sum(sim_sync_reads) FILTER (WHERE in_window) / nullif(sum(seconds) FILTER (WHERE in_window), 0)
           AS measured_simulated_sync_reads_per_s,
         sum(observed_sync_reads) FILTER (WHERE in_window) AS measured_measured_sync_reads,
         sum(seconds) FILTER (WHERE in_window) AS measured_seconds
  FROM w${group}
), h AS (
  SELECT ${key_h}min(period_start) FILTER (WHERE period_start < :since) AS rolled_first_pane_start,
         sum(source_rows) FILTER (WHERE period_start < :since) AS rolled_panes,
         max(period_start) AS rolled_until
  FROM ${schema}.pool_hour
  WHERE ${of_pool}${group}
), st AS (
  SELECT ${key_st}max_by(pgsteal, interval_end) AS pgsteal, max_by(pgfix, interval_end) AS pgfix,
         max_by(dwqt, interval_end) AS dwqt, max_by(vdwqt, interval_end) AS vdwqt,
         max_by(page_size, interval_end) AS page_size, max_by(frame_size, interval_end) AS frame_size,
         max_by(spsize, interval_end) AS spsize, max(interval_end) AS settings_at
  FROM ${schema}.pool_stats
  WHERE ${of_pool} AND interval_end >= :since${group}
), acc AS (
  SELECT ${key_acc}window_start AS accuracy_window_start, window_end AS accuracy_window_end,
         size_pages AS accuracy_size_pages, model AS accuracy_model,
         simulated_sync_reads_per_s AS accuracy_simulated_sync_reads_per_s,
         measured_sync_reads_per_s AS accuracy_measured_sync_reads_per_s, error_ratio AS accuracy_error_ratio,
         measured_from AS accuracy_measured_from, panes AS accuracy_panes, getpages AS accuracy_getpages
  FROM ${schema}.sim_accuracy_pane
  WHERE ${of_pool}${top_accuracy}
)
${joined}
