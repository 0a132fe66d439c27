-- `poolsight demo`'s summary (poolsight/demo.py), run as the writer every few seconds.

-- name: demo_summary
-- The latest pane per pool of :source; elapsed seconds saved at 2x priced at the pool's measured
-- average sync read time (its I/O events), else at the job's --sync-io-ms.
WITH io AS (
  SELECT pool, sum(elapsed_us) / 1e6 / nullif(sum(ios), 0) AS seconds_per_read
  FROM ${schema}.io_pane WHERE source = :source AND direction = 'read' AND io_type = 'sync' GROUP BY pool
), p AS (
  SELECT source, pool, max_by(current_size, pane_start) AS size, count(*) AS panes, sum(getpages) AS getpages,
         max(pane_end) AS pane_end,
         max_by(observed_sync_reads / nullif(seconds, 0), pane_start) AS measured,
         max_by(sim_sync_reads_per_s, pane_start) AS simulated,
         max_by(sim_sync_reads / nullif(observed_sync_reads, 0) - 1, pane_start) AS error,
         max_by(avoided_sync_reads_per_s_2x, pane_start) AS saved,
         max_by(cpu_seconds_saved_per_s_2x, pane_start) AS cpu_saved,
         max_by(elapsed_seconds_saved_per_s_2x, pane_start) AS configured_elapsed_saved,
         max_by(working_set_pages, pane_start) AS working_set, max_by(model, pane_start) AS model
  FROM ${schema}.pool_pane WHERE source = :source GROUP BY source, pool
)
SELECT p.source, p.pool, size, panes, getpages, pane_end, measured, simulated, error, saved, cpu_saved,
       coalesce(saved * io.seconds_per_read, configured_elapsed_saved), working_set, model
FROM p LEFT JOIN io ON io.pool = p.pool ORDER BY p.pool
