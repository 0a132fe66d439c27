"""Tables made by an earlier version gain the columns defined since, and the jobs write them by name.

Runs before test_pipeline (file order): pool_stats loses its newest column, the launcher's
bootstrap adds it back at the table's end, and the statistics job in test_pipeline then writes
into a table whose column order is no longer the definition's. A file written before the drop
keeps statistics on the dropped column: Trino then cannot list the table's $entries, and the
rollups must still work (and test_history's then run on such a table too)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from poolsight.infra.bootstrap import bootstrap_trino
from poolsight.infra.config import load_settings
from poolsight.infra.services import trino_connection
from poolsight.names import NAMESPACE, TRINO_CATALOG
from poolsight.sql.tables import BY_NAME
from tests.stack.conftest import query as _query

pytestmark = [pytest.mark.usefixtures("stack")]
NEWEST = "interval_derived"
SOURCE = "EVOL"
STATS_TABLE = f"{TRINO_CATALOG}.{NAMESPACE}.pool_stats"
T0 = datetime(2001, 2, 3, 10, tzinfo=UTC)


def _insert_stats(rows: list[tuple[int, int]], derived: bool | None = None) -> None:
    """Statistics intervals of a minute (minutes after T0, random getpages) of pool BP1."""
    extra = ", interval_derived" if derived is not None else ""
    for minute, getpages in rows:
        start = T0.timestamp() + 60 * minute
        _query(
            f"INSERT INTO {STATS_TABLE} (source, pool, interval_start, interval_end, interval_seconds, origin, "
            f"getpages_random{extra}) VALUES (?, 'BP1', from_unixtime(?), from_unixtime(?), 60e0, 'test', ?"
            f"{', ?' if extra else ''})",
            (SOURCE, start, start + 60, getpages, *((derived,) if extra else ())),
        )


def _columns(table: str) -> list[str]:
    return [r[0] for r in _query(f"SHOW COLUMNS FROM {TRINO_CATALOG}.{NAMESPACE}.{table}")]


def test_a_table_without_a_newer_column_gets_it_at_its_end() -> None:
    defined = BY_NAME["pool_stats"].column_names()
    assert NEWEST in defined and defined[-1] != NEWEST  # defined before the metric columns
    _insert_stats([(0, 3)], derived=True)  # a file with statistics on the column
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


def test_rollups_of_a_table_whose_entries_trino_cannot_list_recompute_its_days() -> None:
    """The file from before the drop makes Trino fail on pool_stats' $entries: the rollup
    recomputes every day the table holds instead, says so, and sums what the rows hold."""
    from poolsight.sql.rollup import run_rollups
    from poolsight.sql.rollups import STATS

    hour, day = STATS.table("hour").qualified, STATS.table("day").qualified
    try:
        _insert_stats([(1, 5), (65, 7)])  # after the drop: 10:01 and 11:05
        with trino_connection(load_settings()) as conn:
            (run,) = run_rollups(conn.cursor(), rollups=(STATS,))
            assert "cannot read its $entries" in run.note and run.files == 0
            assert run.period_from is not None and run.period_from <= T0
            again = run_rollups(conn.cursor(), rollups=(STATS,))  # no commit since: nothing to do
            assert again[0].period_from is None and again[0].note == ""
        got = _query(
            f"SELECT period_start, source_rows, getpages_random FROM {hour} WHERE source = ? ORDER BY 1", (SOURCE,)
        )
        assert [(r[0].hour, r[1], r[2]) for r in got] == [(10, 2, 3 + 5), (11, 1, 7)]
        assert _query(f"SELECT source_rows, getpages_random FROM {day} WHERE source = ?", (SOURCE,)) == [[3, 15]]
        with trino_connection(load_settings()) as conn:
            run_rollups(conn.cursor(), rollups=(STATS,))  # again (a job may have committed since): no double count
        assert _query(f"SELECT source_rows, getpages_random FROM {day} WHERE source = ?", (SOURCE,)) == [[3, 15]]
    finally:
        for table in (STATS_TABLE, hour, day):
            _query(f"DELETE FROM {table} WHERE source = ?", (SOURCE,))
