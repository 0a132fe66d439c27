"""Tables made by an earlier version gain the columns defined since, and the jobs write them by name.

Runs before test_pipeline (file order): pool_stats loses its newest column, the launcher's
bootstrap adds it back at the table's end, and the statistics job in test_pipeline then writes
into a table whose column order is no longer the definition's. A file written before a drop
keeps statistics on the dropped column: Trino then cannot list the table's $entries, and the
rollups and the retention must still work."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from poolsight.bootstrap import PROBE, bootstrap_trino, setup_mark
from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_connection
from poolsight.names import NAMESPACE, TRINO_CATALOG
from poolsight.sql.catalog import BY_NAME
from tests.conftest import poolsight
from tests.stack.conftest import metadata_files, properties_of
from tests.stack.conftest import query as _query

pytestmark = [pytest.mark.usefixtures("stack")]


@pytest.fixture(scope="module", autouse=True)
def jobs_stopped() -> None:
    """The session's jobs stopped (with a savepoint) before a column is dropped and added again: a
    running job's sink keeps the schema it was submitted with and would write the dropped column's
    id (read back as null). The next module that needs them submits them again, on this schema."""
    r = poolsight("jobs", "cancel", "--all")
    assert r.returncode == 0, r.stderr


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


def _as_an_earlier_version_left_it() -> None:
    """The probe table without this version's setup mark: bootstrap checks every table again."""
    _query(f"COMMENT ON TABLE {PROBE} IS NULL")


def _mark() -> list[Any]:
    return _query(
        "SELECT comment FROM system.metadata.table_comments WHERE catalog_name = ? AND schema_name = ? "
        "AND table_name = ?",
        (TRINO_CATALOG, NAMESPACE, PROBE.rsplit(".", 1)[1]),
    )


def test_a_table_without_a_newer_column_gets_it_at_its_end() -> None:
    defined = BY_NAME["pool_stats"].column_names()
    assert NEWEST in defined and defined[-1] != NEWEST  # defined before the metric columns
    _query(f"ALTER TABLE {TRINO_CATALOG}.{NAMESPACE}.pool_stats DROP COLUMN {NEWEST}")
    assert NEWEST not in _columns("pool_stats")  # as an earlier version made it
    _as_an_earlier_version_left_it()
    first = _now()
    bootstrap_trino(load_settings())
    after = _columns("pool_stats")
    assert after[-1] == NEWEST and sorted(after) == sorted(defined)
    assert _mark() == [[setup_mark()]]
    second = _now()
    bootstrap_trino(load_settings())  # a second run changes nothing, and checks no column again
    assert _columns("pool_stats") == after
    assert (_columns_asked(first, second), _columns_asked(second, _now())) == (1, 0)


def _now() -> datetime:
    """Trino's clock: system.runtime.queries' times are its own."""
    return _query("SELECT current_timestamp")[0][0]  # type: ignore[no-any-return]


def _columns_asked(since: datetime, until: datetime) -> int:
    """Statements that read information_schema.columns between the two times (Trino's clock)."""
    [[n]] = _query(
        "SELECT count(*) FROM system.runtime.queries WHERE created >= ? AND created < ? AND query LIKE ? "
        "AND query NOT LIKE ?",
        (since, until, "%information_schema.columns%", "%system.runtime.queries%"),
    )
    return int(n)


def test_rows_from_before_a_key_column_get_the_values_the_jobs_write() -> None:
    """The backfill of sim_curve.curve and working_set.scope (run when bootstrap adds them),
    on a scratch copy of each table holding rows as an earlier version wrote them."""
    from poolsight.schemas.tables import object_scope, vpseqt_curve_name
    from poolsight.sql.catalog import backfill_dml

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
    """A file written before a column is dropped (and added back) makes Trino fail on the
    table's $entries: the rollup recomputes every day the table holds, says so, and sums what
    the rows hold; the retention, which cannot tell when the rows came, keeps them."""
    from poolsight.sql.retention import Retention, apply_retention, day_sequences
    from poolsight.sql.rollup import Changes, changes, changes_of, run_rollups
    from poolsight.sql.rollups import POOL, STATS

    s = load_settings()
    hour, day = STATS.table("hour").qualified, STATS.table("day").qualified

    def rolled() -> list[tuple[int, int, int]]:
        got = _query(
            f"SELECT period_start, source_rows, getpages_random FROM {hour} WHERE source = ? ORDER BY 1", (SOURCE,)
        )
        return [(r[0].day * 100 + r[0].hour, r[1], r[2]) for r in got]

    try:
        _insert_stats([(0, 3)], derived=True)  # a file with statistics on the column
        _query(f"ALTER TABLE {STATS_TABLE} DROP COLUMN {NEWEST}")
        _as_an_earlier_version_left_it()
        bootstrap_trino(s)  # adds it back: a new field id
        _insert_stats([(1, 5), (65, 7)])  # 10:01 and 11:05
        with trino_connection(s) as conn:
            cur = conn.cursor()
            got = changes(cur, STATS.source, -1)
            assert not got.exact and "cannot read its $entries" in got.note, got
            assert any(lo <= T0 and hi >= T0 + timedelta(minutes=65) for lo, hi in got.spans), got.spans
            # asked with another table in one statement: each is then asked alone
            both = changes_of(cur, [(POOL.source, 2**62), (STATS.source, -1)])
            alone = both[STATS.source.name]  # its spans: every day pool_stats holds, which other tests add to
            assert alone.note == got.note, both
            assert any(lo <= T0 and hi >= T0 + timedelta(minutes=65) for lo, hi in alone.spans), alone.spans
            assert both[POOL.source.name] == Changes([], 2**62, 0), both
            run_rollups(cur, rollups=(STATS,))  # unless the maintenance service just did
            assert rolled() == [(310, 2, 3 + 5), (311, 1, 7)]
            assert day_sequences(cur, (POOL.source, STATS.source))[STATS.source.name] is None
            # a pane retention that would remove these rows
            report = apply_retention(cur, Retention(pane_days=2, hour_months=None), T0 + timedelta(days=5), {})
            cutoff = datetime(2001, 2, 6, tzinfo=UTC).isoformat()
            assert {"table": "pool_stats", "cutoff": cutoff, "skipped": "$entries unreadable"} in report
            _insert_stats([(-24 * 60, 11)])  # a late row, the day before, not rolled up yet
            (again,) = run_rollups(cur, rollups=(STATS,))
            assert again.note
        assert rolled() == [(210, 1, 11), (310, 2, 3 + 5), (311, 1, 7)]  # nothing counted twice
        days = _query(
            f"SELECT source_rows, getpages_random FROM {day} WHERE source = ? ORDER BY period_start", (SOURCE,)
        )
        assert days == [[1, 11], [3, 15]]
    finally:
        for table in (STATS_TABLE, hour, day):
            _query(f"DELETE FROM {table} WHERE source = ?", (SOURCE,))


def test_a_table_from_before_the_metadata_file_properties_gets_them_and_its_commits_delete_replaced_files() -> None:
    """Every commit writes a table's whole metadata file anew; a table keeps the newest ten and
    deletes the rest (infra/config.py METADATA_FILE_PROPERTIES). bootstrap gives them to a
    table an earlier version made without; a table made now has them, and Trino's commits then
    delete what they replace. Counted on disk."""
    from dataclasses import replace

    from poolsight.infra.config import METADATA_FILE_PROPERTIES
    from poolsight.sql.catalog import create_table_ddl
    from poolsight.sql.rollup import metadata_table

    off = {**METADATA_FILE_PROPERTIES, "write.metadata.delete-after-commit.enabled": "false"}
    keys, values = (", ".join(f"'{x}'" for x in xs) for xs in (off, off.values()))
    advice = BY_NAME["advice"]
    _query(f"ALTER TABLE {advice.qualified} SET PROPERTIES extra_properties = MAP(ARRAY[{keys}], ARRAY[{values}])")
    assert {k: properties_of(advice).get(k) for k in off} == off  # as an earlier version left it
    _as_an_earlier_version_left_it()
    bootstrap_trino(load_settings())
    assert {k: properties_of(advice).get(k) for k in off} == METADATA_FILE_PROPERTIES

    scratch = replace(advice, name="evolution_metadata_files")
    _query(f"DROP TABLE IF EXISTS {scratch.qualified}")
    _query(create_table_ddl(scratch))
    kept = int(METADATA_FILE_PROPERTIES["write.metadata.previous-versions-max"])
    commits = kept + 5
    for i in range(commits):
        _query(f"INSERT INTO {scratch.qualified} ({scratch.time_column}) VALUES (from_unixtime(?))", (1e9 + i,))
    [[snapshots]] = _query(f"SELECT count(*) FROM {metadata_table(scratch, 'snapshots')} WHERE operation = 'append'")
    files = [f.name for f in metadata_files(scratch)]
    _query(f"DROP TABLE {scratch.qualified}")
    assert snapshots >= commits  # a metadata file each (Trino's creation may add an empty one)
    assert len(files) == kept + 1, files
