"""The Grafana dashboards' queries on the real Trino, as the trino-datasource plugin sends them.

Each panel's and variable's SQL is expanded the plugin's way (tests/dashboards/test_grafana_files.py:
`expand`), run as the read-only user the provisioned data source uses, and must return the columns its
panel names. A generated workload gives the queries rows; the overview's getpage totals are checked
against a query written here and against the generator's own count.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_rows
from poolsight.names import TRINO_READER_USER
from tests.dashboards.test_grafana_files import (
    DASHBOARDS,
    expand,
    expected_columns,
    label_columns,
    load,
    panels,
    table_columns,
    variables,
)

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

NUMERIC = {"double", "real", "bigint", "integer", "smallint", "tinyint"}
# Wide enough that the session time zone Trino reads the plugin's zone-less times in cannot matter.
MARGIN = timedelta(days=1)


@dataclass(frozen=True)
class Workload:
    source: str
    pools: tuple[str, ...]
    getpages: int  # what the generator says it produced
    start: datetime  # the first pane's start
    end: datetime  # the last pane's end


def _run(sql: str, params: tuple[Any, ...] = ()) -> tuple[list[tuple[str, str]], list[Any]]:
    """(columns with their Trino types, rows), read as the user the Grafana data source uses."""
    return trino_rows(load_settings(), sql, params, user=TRINO_READER_USER)


@pytest.fixture(scope="module")
def workload(jobs: None, day_posting: tuple[str, Path, dict[str, int]]) -> Workload:
    """The session's day-posting member (tests/stack/conftest.py), once all of it is in pool_pane."""
    source, _, counted = day_posting
    produced = sum(counted.values())
    deadline = time.monotonic() + 300
    got = 0
    while time.monotonic() < deadline:
        _, rows = _run("SELECT sum(getpages) FROM iceberg.poolsight.pool_pane WHERE source = ?", (source,))
        got = int(rows[0][0] or 0)
        if got == produced:
            break
        time.sleep(2)
    assert got == produced, f"pool_pane has {got} of the {produced} getpages generated for {source}"
    _, rows = _run(
        "SELECT pool, min(pane_start), max(pane_end) FROM iceberg.poolsight.pool_pane WHERE source = ? "
        "GROUP BY pool ORDER BY pool",
        (source,),
    )
    return Workload(
        source,
        tuple(str(p) for p, _, _ in rows),
        produced,
        min(r[1] for r in rows),
        max(r[2] for r in rows),
    )


def _values(dashboard: dict[str, Any], w: Workload) -> tuple[str | Sequence[str], str | Sequence[str]]:
    """The variables' values for the workload: a multi-value variable has every pool selected."""
    multi = {name for name, v in variables(dashboard).items() if v["multi"]}
    source: str | Sequence[str] = [w.source] if "source" in multi else w.source
    pool: str | Sequence[str] = list(w.pools) if "pool" in multi else w.pools[0]
    return source, pool


def _column_problems(panel: dict[str, Any], columns: list[tuple[str, str]]) -> list[str]:
    """What is wrong with a query's result columns for its panel, as the plugin turns them into frames:
    a time series is a `time` column, string label columns and numeric values (a decimal would reach
    Grafana as a string); a table has exactly the columns its organize transformation orders."""
    names = [c for c, _ in columns]
    problems = [f"missing {c}" for c in sorted(expected_columns(panel) - set(names))]
    if panel["type"] == "table":
        if names != table_columns(panel):
            problems.append(f"columns {names}, the table orders {table_columns(panel)}")
        return problems
    labels = label_columns(panel)
    for name, type_ in columns:
        if name == "time" and panel["type"] == "timeseries":
            ok = type_.startswith("timestamp")
        elif name in labels:
            ok = type_.startswith("varchar")
        else:
            ok = type_ in NUMERIC
        if not ok:
            problems.append(f"{name} is {type_}")
    x = panel["options"].get("xField")  # a trend's x axis: its values are not a series
    if not any(type_ in NUMERIC and name != x for name, type_ in columns):
        problems.append("no numeric series")
    return problems


def test_every_query_runs_as_the_reader_and_returns_its_panels_columns(workload: Workload) -> None:
    start, end = workload.start - MARGIN, workload.end + MARGIN
    failures: list[str] = []
    with_rows = 0
    for path in DASHBOARDS:
        d = load(path)
        source, pool = _values(d, workload)
        for name, v in variables(d).items():
            _, rows = _run(expand(v["query"]["query"], source, pool, start, end))
            values = {r[0] for r in rows}
            want = {workload.source} if name == "source" else set(workload.pools)
            if not want <= values:
                failures.append(f"{path.name} variable {name}: {sorted(want - values)} not among its values")
        for p in panels(d):
            for t in p["targets"]:
                what = f"{path.name} {p['title']!r} {t['refId']}"
                try:
                    columns, rows = _run(expand(t["rawSQL"], source, pool, start, end))
                except Exception as exc:  # every failing query in one report
                    failures.append(f"{what}: {exc}")
                    continue
                failures += [f"{what}: {problem}" for problem in _column_problems(p, columns)]
                with_rows += bool(rows)
    assert not failures, "\n".join(failures)
    assert with_rows > 0


def test_the_overview_counts_the_getpages_generated(workload: Workload) -> None:
    d = load(next(p for p in DASHBOARDS if p.name == "poolsight-overview.json"))
    [panel] = [p for p in panels(d) if p["type"] == "table" and "getpages" in table_columns(p)]
    [target] = panel["targets"]
    source, pool = _values(d, workload)
    start, end = workload.start - MARGIN, workload.end + MARGIN
    columns, rows = _run(expand(target["rawSQL"], source, pool, start, end))
    names = [c for c, _ in columns]
    shown = {(r[names.index("source")], r[names.index("pool")]): r[names.index("getpages")] for r in rows}
    # Written here, from the table.
    _, direct = _run(
        "SELECT pool, sum(getpages) FROM iceberg.poolsight.pool_pane WHERE source = ? GROUP BY pool", (workload.source,)
    )
    assert shown == {(workload.source, p): n for p, n in direct}
    assert sum(shown.values()) == workload.getpages
    # The time filter filters: a range that ends before the first pane has none of the workload.
    before = workload.start - 2 * MARGIN
    _, rows = _run(expand(target["rawSQL"], source, pool, before - MARGIN, before))
    assert rows == []
