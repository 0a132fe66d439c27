"""Table definitions: inserts by column name, and the columns an older table lacks."""

from __future__ import annotations

import re

from poolsight.sql.tables import BY_NAME, add_column_ddl, flink_insert, missing_columns


def test_flink_insert_names_every_column_and_converts_timestamps() -> None:
    t = BY_NAME["pool_stats"]
    sql = flink_insert(t, "`c`.`n`.`pool_stats`", "rows_pool_stats")
    m = re.fullmatch(r"INSERT INTO `c`.`n`.`pool_stats` \((.*?)\) SELECT (.*) FROM `rows_pool_stats`", sql)
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
