-- The maintenance service's statements (sql/history.py), run as the writer each cycle.

-- name: copy_gbp_prediction_checks
-- New rows of the view gbp_prediction_check into prediction_check (a group's GBP size or RATIO
-- change: the simulation job writes the pools' checks, the GBP's need the group's statistics,
-- which reach only Trino). A check already copied is left as it is.
INSERT INTO ${schema}.prediction_check
  (source, pool, changed_at, setting, old_value, new_value, predicted_sync_reads_per_s,
   measured_sync_reads_per_s, error_ratio, similarity, predicted_sync_reads_per_getpage,
   measured_sync_reads_per_getpage, panes_after, measured_until, getpages_per_s_before,
   getpages_per_s_after, objects_new, objects_gone, model)
SELECT v.source, v.pool, v.changed_at, v.setting, v.old_value, v.new_value, v.predicted_sync_reads_per_s,
       v.measured_sync_reads_per_s, v.error_ratio, v.similarity, v.predicted_sync_reads_per_getpage,
       v.measured_sync_reads_per_getpage, v.panes_after, v.measured_until, v.getpages_per_s_before,
       v.getpages_per_s_after, v.objects_new, v.objects_gone, v.model
FROM ${schema}.gbp_prediction_check v
WHERE NOT EXISTS (
  SELECT 1 FROM ${schema}.prediction_check p
  WHERE p.source = v.source AND p.pool = v.pool AND p.changed_at = v.changed_at AND p.setting = v.setting)

-- name: refresh_curve_page
-- The page table curve_page: every pool's simulated curve over the window before its newest pane
-- since :since (sql/curve.sql's one definition), replaced whole in one commit (sql/pages.py); with
-- the metadata file properties of every table (sql/catalog.py), so its replaced metadata files go.
CREATE OR REPLACE TABLE ${schema}.curve_page WITH (extra_properties = ${metadata_properties}) AS
${curve_recent}

-- name: refresh_pool_page
-- The page table pool_page: pool_anchor's answer for every pool read from :since (sql/anchor.sql's
-- one definition), replaced whole in one commit after curve_page (sql/pages.py), as curve_page.
CREATE OR REPLACE TABLE ${schema}.pool_page WITH (extra_properties = ${metadata_properties}) AS
${anchor_all}
