"""Table definitions: inserts by column name, and the columns an older table lacks."""

from __future__ import annotations

import re

from poolsight.flink_jobs.common import flink_insert
from poolsight.schemas.tables import object_scope, vpseqt_curve_name
from poolsight.sql.catalog import BY_NAME, TABLES, add_column_ddl, backfill_dml, missing_columns


def test_flink_insert_names_every_column_and_converts_timestamps() -> None:
    t = BY_NAME["pool_stats"]
    sql = flink_insert(t, "`c`.`n`.`pool_stats`", "rows_pool_stats")
    hint = re.escape("/*+ OPTIONS('upsert-enabled'='true') */")
    m = re.fullmatch(rf"INSERT INTO `c`.`n`.`pool_stats` {hint} \((.*?)\) SELECT (.*) FROM `rows_pool_stats`", sql)
    assert m is not None
    assert m.group(1).split(", ") == [f"`{c}`" for c in t.column_names()]
    want = [f"TO_TIMESTAMP_LTZ(`{c.name}`, 3)" if c.type == "timestamp" else f"`{c.name}`" for c in t.columns]
    assert m.group(2) == ", ".join(want)
    assert any(c.type == "timestamp" for c in t.columns)


def test_missing_columns_are_the_definitions_an_old_table_lacks() -> None:
    t = BY_NAME["pool_stats"]
    names = t.column_names()
    old = set(names) - {"interval_derived", names[3]}
    assert [c.name for c in missing_columns(t, old)] == [n for n in names if n not in old]
    assert missing_columns(t, set(names)) == []
    ddl = add_column_ddl(t, missing_columns(t, old)[0])
    assert ddl.startswith(f"ALTER TABLE {t.qualified} ADD COLUMN IF NOT EXISTS {names[3]} ")


def test_every_key_is_columns_of_its_table_and_holds_its_partition_source() -> None:
    """Iceberg's upsert needs the partition's source column in the key; identifier fields cannot
    be null (so working_set's key has scope, not the pool row's null object, and sim_curve's has
    curve, not the null vpseqt)."""
    keyed = {t.name for t in TABLES if t.key}
    assert {"pool_pane", "object_pane", "pool_stats", "object_io_stats", "sim_curve", "working_set"} <= keyed
    assert not keyed & {"io_pane", "gbp_stats", "dead_letter"}  # rows that add up, or wall-clock rows
    assert "object" not in BY_NAME["working_set"].key and "vpseqt" not in BY_NAME["sim_curve"].key
    for t in TABLES:
        if t.key:
            assert set(t.key) <= set(t.column_names()), t.name
            assert t.time_column in t.key, t.name
            assert len(set(t.key)) == len(t.key), t.name


def test_a_keyed_table_is_inserted_in_upsert_mode_and_the_others_appended() -> None:
    keyed = flink_insert(BY_NAME["pool_pane"], "`c`.`n`.`pool_pane`", "rows_pool_pane")
    assert keyed.startswith("INSERT INTO `c`.`n`.`pool_pane` /*+ OPTIONS('upsert-enabled'='true') */ (`source`, ")
    appended = flink_insert(BY_NAME["dead_letter"], "`c`.`n`.`dead_letter`", "rows_dead_letter")
    assert appended.startswith("INSERT INTO `c`.`n`.`dead_letter` (`source`, ")


def test_a_key_column_added_later_is_backfilled_from_the_rows_other_columns() -> None:
    """Rows from before sim_curve.curve and working_set.scope get the values the jobs write now
    (the key must not be null), and only those rows."""
    ws, sc = BY_NAME["working_set"], BY_NAME["sim_curve"]
    scope = next(c for c in ws.columns if c.name == "scope")
    assert backfill_dml(ws, scope) == (
        f"UPDATE {ws.qualified} SET scope = CASE WHEN object IS NULL THEN 'pool' ELSE 'object:' || object END "
        "WHERE scope IS NULL"
    )
    assert object_scope("DB1.TS1") == "object:DB1.TS1"
    curve = next(c for c in sc.columns if c.name == "curve")
    assert backfill_dml(sc, curve) == (
        f"UPDATE {sc.qualified} SET curve = CASE WHEN NOT pool_policy AND vpseqt IS NOT NULL "
        "THEN 'vpseqt:' || format('%s', vpseqt) ELSE 'sizes' END WHERE curve IS NULL"
    )
    # Java's %s of a double (Trino's format) and Python's repr agree on these values.
    assert [vpseqt_curve_name(v) for v in (40, 80.0, 12.5)] == ["vpseqt:40.0", "vpseqt:80.0", "vpseqt:12.5"]
    assert backfill_dml(ws, next(c for c in ws.columns if c.name == "pane_pages")) is None


def test_no_key_column_is_a_double() -> None:
    """Iceberg refuses float and double identifier fields (the job's upsert keys)."""
    for t in TABLES:
        types = {c.name: c.type for c in t.columns}
        assert all(types[k] != "double" for k in t.key), (t.name, t.key)
