"""Tables made by an earlier version gain the columns defined since, and the jobs write them by name.

Runs before test_pipeline (file order): pool_stats loses its newest column, the launcher's
bootstrap adds it back at the table's end, and the statistics job in test_pipeline then writes
into a table whose column order is no longer the definition's."""

from __future__ import annotations

from typing import Any

import pytest

from poolsight.infra.bootstrap import bootstrap_trino
from poolsight.infra.config import load_settings
from poolsight.names import NAMESPACE, TRINO_CATALOG
from poolsight.sql.tables import BY_NAME
from tests.stack.conftest import query as _query

pytestmark = [pytest.mark.usefixtures("stack")]
NEWEST = "interval_derived"


def _columns(table: str) -> list[str]:
    return [r[0] for r in _query(f"SHOW COLUMNS FROM {TRINO_CATALOG}.{NAMESPACE}.{table}")]


def test_a_table_without_a_newer_column_gets_it_at_its_end() -> None:
    defined = BY_NAME["pool_stats"].column_names()
    assert NEWEST in defined and defined[-1] != NEWEST  # defined before the metric columns
    _query(f"ALTER TABLE {TRINO_CATALOG}.{NAMESPACE}.pool_stats DROP COLUMN {NEWEST}")
    assert NEWEST not in _columns("pool_stats")  # as an earlier version made it
    bootstrap_trino(load_settings())
    after = _columns("pool_stats")
    assert after[-1] == NEWEST and sorted(after) == sorted(defined)
    bootstrap_trino(load_settings())  # a second run changes nothing
    assert _columns("pool_stats") == after


def test_rows_from_before_a_key_column_get_the_values_the_jobs_write() -> None:
    """The backfill of sim_curve.curve and working_set.scope (run when bootstrap adds them),
    on a scratch copy of each table holding rows as an earlier version wrote them."""
    from poolsight.sql.tables import backfill_dml, object_scope, vpseqt_curve_name

    rows: dict[str, list[tuple[tuple[Any, ...], str]]] = {
        # (pool_policy, vpseqt) -> the curve the job writes for such a row
        "sim_curve": [((True, 80.0), "sizes"), ((False, None), "sizes"), ((False, 40.0), vpseqt_curve_name(40.0))],
        "working_set": [((None,), "pool"), (("DB1.TS1",), object_scope("DB1.TS1"))],
    }
    given = {"sim_curve": ("pool_policy", "vpseqt"), "working_set": ("object",)}
    new = {"sim_curve": "curve", "working_set": "scope"}
    for name, cases in rows.items():
        table = BY_NAME[name]
        scratch = f"{TRINO_CATALOG}.{NAMESPACE}.evolution_{name}"
        _query(f"DROP TABLE IF EXISTS {scratch}")
        _query(f"CREATE TABLE {scratch} AS SELECT * FROM {table.qualified} WITH NO DATA")
        for i, (values, _) in enumerate(cases):
            cols = ("source", "pool", "size_pages", *given[name]) if name == "sim_curve" else ("source", *given[name])
            first = ("EVOL", "BP0", i) if name == "sim_curve" else (f"EVOL{i}",)
            _query(
                f"INSERT INTO {scratch} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", (*first, *values)
            )
        column = next(c for c in table.columns if c.name == new[name])
        dml = backfill_dml(table, column)
        assert dml is not None
        _query(dml.replace(table.qualified, scratch))
        got = _query(f"SELECT {new[name]} FROM {scratch} ORDER BY {'size_pages' if name == 'sim_curve' else 'source'}")
        assert [r[0] for r in got] == [want for _, want in cases], name
        _query(f"DROP TABLE {scratch}")
