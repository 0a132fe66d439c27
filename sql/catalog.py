"""Every table the launcher creates: the tables the jobs and evaluators write
(schemas/tables.py), their hourly and daily rollups and the rollups' progress (sql/rollups.py);
and the Trino DDL that creates them and adds columns defined since."""

from __future__ import annotations

from poolsight.infra.config import METADATA_FILE_PROPERTIES
from poolsight.schemas.tables import TABLES as WRITTEN
from poolsight.schemas.tables import TRINO_TYPES, Column, Table
from poolsight.sql.rollup import metadata_table
from poolsight.sql.rollups import RETIRED_TABLES, RETIREMENT, ROLLUP_STATE, ROLLUP_TABLES, TABLE_CLOCK

TABLES: tuple[Table, ...] = (*WRITTEN, *ROLLUP_TABLES, ROLLUP_STATE, *RETIRED_TABLES, TABLE_CLOCK, RETIREMENT)
BY_NAME = {t.name: t for t in TABLES}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def properties_map() -> str:
    """The metadata file properties as Trino's extra_properties value (also the page tables', sql/pages.py)."""
    keys = ", ".join(_quote(k) for k in METADATA_FILE_PROPERTIES)
    values = ", ".join(_quote(v) for v in METADATA_FILE_PROPERTIES.values())
    return f"MAP(ARRAY[{keys}], ARRAY[{values}])"


def create_table_ddl(t: Table) -> str:
    """Trino DDL (names from this module, never from users)."""
    cols = ",\n  ".join(f"{c.name} {TRINO_TYPES[c.type]} COMMENT {_quote(c.doc)}" for c in t.columns)
    sort = ", ".join(_quote(s) for s in t.sort)
    return (
        f"CREATE TABLE IF NOT EXISTS {t.qualified} (\n  {cols}\n) COMMENT {_quote(t.doc)}\n"
        f"WITH (format = 'PARQUET', partitioning = ARRAY['{t.partition}({t.time_column})'], sorted_by = ARRAY[{sort}], "
        f"extra_properties = {properties_map()})"
    )


def properties_ddl(t: Table) -> str:
    """Trino DDL giving a table created before them the metadata file properties."""
    return f"ALTER TABLE {t.qualified} SET PROPERTIES extra_properties = {properties_map()}"


def lacking_properties_sql(tables: list[Table]) -> str:
    """One statement: the names of `tables` whose metadata file properties are not all set."""
    wanted = " AND ".join(
        f"element_at(p, {_quote(k)}) IS NOT DISTINCT FROM {_quote(v)}" for k, v in METADATA_FILE_PROPERTIES.items()
    )
    parts = [
        f"SELECT {_quote(t.name)} AS name, map_agg(key, value) AS p FROM {metadata_table(t, 'properties')}"
        for t in tables
    ]
    return f"SELECT name FROM ({' UNION ALL '.join(parts)}) WHERE NOT ({wanted})"


def add_column_ddl(t: Table, c: Column) -> str:
    """Trino DDL adding a column this module defines to a table created before it existed."""
    return f"ALTER TABLE {t.qualified} ADD COLUMN IF NOT EXISTS {c.name} {TRINO_TYPES[c.type]} COMMENT {_quote(c.doc)}"


def backfill_dml(t: Table, c: Column) -> str | None:
    """Trino DML giving a just-added column its value in the rows written before it (None: they
    keep null)."""
    if c.backfill is None:
        return None
    return f"UPDATE {t.qualified} SET {c.name} = {c.backfill} WHERE {c.name} IS NULL"


def missing_columns(t: Table, existing: set[str]) -> list[Column]:
    """Columns of the definition an existing table lacks (added at its end by add_column_ddl)."""
    return [c for c in t.columns if c.name not in existing]
