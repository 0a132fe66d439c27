"""Tables made by an earlier version gain the columns defined since, and the jobs write them by name.

Runs before test_pipeline (file order): pool_stats loses its newest column, the launcher's
bootstrap adds it back at the table's end, and the statistics job in test_pipeline then writes
into a table whose column order is no longer the definition's."""

from __future__ import annotations

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
