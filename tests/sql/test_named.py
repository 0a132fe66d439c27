"""Named queries (sql/named.py, sql/queries/*.sql): the parser, the files, and the callers' bindings.
tests/stack/test_dashboard.py runs every one of them on Trino."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from poolsight.advice import online
from poolsight.advice.table import COLUMNS
from poolsight.dashboards import queries as dq
from poolsight.dashboards.timerange import TimeRange
from poolsight.sql import compare as cmp
from poolsight.sql.anchor import FROM_ROW
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.curve import CURVE_SQL, WINDOW_MINUTES, curve_sql
from poolsight.sql.named import (
    NAME,
    QUERIES_DIR,
    Query,
    QueryError,
    fragments,
    load,
    parse,
    queries,
    query,
    to_qmark,
)
from poolsight.sql.pages import PAGE_TABLES, RECENT_GUESS, ROW_FRESH
from poolsight.sql.views import GRAIN_VIEWS, SCHEMA, VIEWS, view_statements

T0 = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def _one(text: str) -> Query:
    [q] = parse(text).values()
    return q


# ---------------------------------------------------------------- the parser


def test_colons_inside_strings_identifiers_and_comments_are_not_parameters() -> None:
    q = _one(
        "-- name: q\n-- doc\n"
        "SELECT 'vpseqt:' || x, '00:00', 'it''s :not', \"a:b\" -- :nor_this\n"
        "FROM t /* :nor :these */ WHERE a = :a AND b = ':b'\n"
    )
    assert q.params == ("a",)
    assert "'vpseqt:'" in q.sql and "'00:00'" in q.sql and "'it''s :not'" in q.sql and "-- :nor_this" in q.sql
    assert q.sql.count("?") == 1 and "a = ?" in q.sql


def test_a_name_used_several_times_is_a_parameter_each_time_in_order() -> None:
    q = _one("-- name: q\n-- doc\nSELECT * FROM t WHERE (:source IS NULL OR source = :source) AND t > :at")
    assert q.params == ("source", "source", "at")
    assert q.bind(source="S", at=1) == ("S", "S", 1)
    assert q.bind({"source": None}, at=2) == (None, None, 2)
    assert q.statement(source="S", at=1) == (q.sql, ("S", "S", 1))


def test_a_missing_or_unexpected_parameter_names_the_query_and_the_parameter() -> None:
    q = _one("-- name: pool_thing\n-- doc\nSELECT * FROM t WHERE source = :source AND pool = :pool")
    with pytest.raises(QueryError, match=r"query pool_thing: missing pool \(parameters: source, pool\)"):
        q.bind(source="S")
    with pytest.raises(QueryError, match=r"query pool_thing: unexpected poll \(parameters: source, pool\)"):
        q.bind(source="S", pool="P", poll="x")
    with pytest.raises(QueryError, match=r"missing pool; unexpected poll"):
        q.bind(source="S", poll="x")
    assert _one("-- name: q\n-- doc\nSELECT 1").bind() == ()
    with pytest.raises(QueryError, match=r"query q: unexpected a \(parameters: none\)"):
        _one("-- name: q\n-- doc\nSELECT 1").bind(a=1)


def test_grains_make_one_query_per_grain_with_its_table_and_view_names() -> None:
    qs = parse(
        "-- name: series\n-- doc\n-- grains: hour, day\n"
        "SELECT * FROM ${schema}.pool_${grainly} JOIN ${schema}.pool_${grain} USING (source) WHERE source = :source;\n"
        "-- name: other\n-- doc\nSELECT 1;\n"
    )
    assert set(qs) == {"series@hour", "series@day", "other"}
    assert f"{SCHEMA}.pool_hourly JOIN {SCHEMA}.pool_hour " in qs["series@hour"].sql
    assert f"{SCHEMA}.pool_daily JOIN {SCHEMA}.pool_day " in qs["series@day"].sql
    assert qs["series@day"].params == ("source",) and qs["series@day"].doc == "doc"
    with pytest.raises(QueryError, match="grains must be of hour, day"):
        parse("-- name: q\n-- doc\n-- grains: minute\nSELECT 1")
    with pytest.raises(QueryError, match=r"unknown template variable \$\{grain\}"):
        parse("-- name: q\n-- doc\nSELECT * FROM pool_${grain}")


def test_sorted_by_orders_the_rows_the_statement_returned_nulls_last() -> None:
    [q] = parse("-- name: q\n-- doc\n-- sorted by: t, size\nSELECT t, size FROM x WHERE p = :p").values()
    assert q.order == ("t", "size") and q.doc == "doc" and "ORDER BY" not in q.sql
    rows: list[dict[str, Any]] = [{"t": 2, "size": 1}, {"t": None, "size": 0}, {"t": 1, "size": 9}]
    rows += [{"t": 1, "size": None}, {"t": 1, "size": 3}]
    assert q.sort(rows) == [
        {"t": 1, "size": 3}, {"t": 1, "size": 9}, {"t": 1, "size": None}, {"t": 2, "size": 1}, {"t": None, "size": 0},
    ]  # fmt: skip
    [plain] = parse("-- name: q\n-- doc\nSELECT t FROM x ORDER BY t").values()
    assert plain.order == () and plain.sort(rows) is rows  # no header: as they came
    for final in ("ORDER BY t", "order  by t", "ORDER\n  BY coalesce(t, 0)", "ORDER BY t  -- (newest first)"):
        with pytest.raises(QueryError, match="sorted by in place of a final ORDER BY, not beside one"):
            parse(f"-- name: q\n-- doc\n-- sorted by: t\nSELECT t FROM x {final}")
    with pytest.raises(QueryError, match="sorted by size names a column it does not select"):
        parse("-- name: q\n-- doc\n-- sorted by: size\nSELECT t FROM x")
    # An ORDER BY inside brackets (a window's, a subquery's), a literal or a comment is not the final one.
    parse(
        "-- name: q\n-- doc\n-- sorted by: t\nSELECT t, rank() OVER (ORDER BY t), 'order by' AS k\n"
        "FROM (SELECT t FROM x ORDER BY t LIMIT 9) -- not ORDER BY t\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-- name: q\n-- doc\nSELECT * FROM t WHERE a = ?", "a `\\?` written by hand"),
        ("-- name: q\nSELECT 1", "no doc comment line"),
        ("-- name: Q\n-- doc\nSELECT 1", "not snake_case"),
        ("-- name: q\n-- doc\nSELECT * FROM t WHERE a = :sourceId", "parameter :sourceId is not snake_case"),
        ("-- name: q\n-- doc\nSELECT 1; SELECT 2", "more than one statement"),
        ("-- name: q\n-- doc\nSELECT 'x", "unterminated ' quote"),
        ("-- name: q\n-- doc\nSELECT 1\n-- name: q\n-- doc\nSELECT 2", "defined twice"),
        ("SELECT 0\n-- name: q\n-- doc\nSELECT 1", "SQL before the first"),
        ("SELECT 1", "no `-- name:` header"),
        ("-- name: q\n-- doc\n", "has no statement"),
    ],
)
def test_a_file_that_cannot_be_used_is_an_error(text: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        parse(text)


def test_to_qmark_keeps_everything_but_the_names() -> None:
    assert to_qmark("q", "a = :a AND b = 'x:y' AND c = :c_1") == ("a = ? AND b = 'x:y' AND c = ?", ("a", "c_1"))


# ---------------------------------------------------------------- the files


def test_every_file_loads_and_every_query_is_named_once_across_files() -> None:
    files = sorted(QUERIES_DIR.glob("*.sql"))
    assert {f.stem for f in files} == {"advice", "alerts", "compare", "dashboard", "demo", "maintenance", "report"}
    seen: dict[str, Path] = {}
    shared = {k: v for f in files for k, v in fragments(f.read_text(), str(f)).items()}  # any file's queries use them
    for f in files:
        for name in load(f, shared):
            assert name not in seen, f"{name} in {f.name} and {seen[name].name}"
            seen[name] = f
    assert set(seen) == set(queries())


def test_every_query_has_a_doc_snake_case_parameters_and_names_no_unknown_table() -> None:
    known = set(BY_NAME) | set(VIEWS) | set(PAGE_TABLES)
    for q in queries().values():
        assert q.doc and all(NAME.fullmatch(p) for p in q.params), q.name
        assert q.sql.count("?") == len(q.params), q.name
        assert "${" not in q.sql and "{" not in q.sql.replace("{schema}", ""), q.name
        for table in re.findall(re.escape(SCHEMA) + r"\.(\w+)", q.sql):
            assert table in known, (q.name, table)


def test_no_question_mark_is_written_by_hand_in_the_files() -> None:
    for f in QUERIES_DIR.glob("*.sql"):
        code = "\n".join(line.split("--")[0] for line in f.read_text().splitlines())
        assert "?" not in re.sub(r"'[^']*'", "", code), f.name


def test_the_grain_variants_are_the_rollup_grains() -> None:
    for base in ("pool_series_rollup", "pool_stats_series_rollup", "objects_rollup"):
        assert {f"{base}@{g}" for g in GRAIN_VIEWS} <= set(queries())
        assert base not in queries()


def test_the_health_page_reads_every_table_of_the_catalogue() -> None:
    sql = query("table_freshness").sql
    pattern = r"SELECT '(\w+)' AS table_name, max\((\w+)\) AS newest, count\(\*\) AS row_count FROM ([\w.]+)"
    got = re.findall(pattern, sql)
    assert got == [(t.name, t.time_column, t.qualified) for t in BY_NAME.values()]


def test_advice_latest_selects_the_advice_columns_and_the_advice_window_is_the_curves() -> None:
    sql = " ".join(query("advice_latest").sql.split())
    assert sql.startswith(f"SELECT {', '.join(COLUMNS)} FROM {SCHEMA}.advice_latest ")
    text = (QUERIES_DIR / "advice.sql").read_text()
    assert set(re.findall(r"INTERVAL '(\d+)' MINUTE", text)) == {str(WINDOW_MINUTES)}
    assert set(re.findall(r"INTERVAL '(\d+)' SECOND", text)) == {str(WINDOW_MINUTES * 30)}  # half the window


# ---------------------------------------------------------------- the curve's one definition


def test_the_view_and_the_pool_page_run_the_same_curve_definition() -> None:
    view = dict(view_statements())["sim_curve_latest"]
    latest, window = (curve_sql(k).replace("${schema}", SCHEMA) for k in ("latest", "window"))  # type: ignore[arg-type]
    assert latest in view
    page = query("pool_curve").sql
    assert to_qmark("pool_curve", window)[0] in page
    # Both are curve.sql's statement: the same lines once the window's own filters are left out.
    lines = [ln.replace("${schema}", SCHEMA) for ln in CURVE_SQL.read_text().splitlines()]
    shared = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("--") and "${" not in ln]
    assert len(shared) > 50
    for line in shared:
        assert line in view and line in page, line
    # The page's scans are filtered on the pool and the window themselves (partition pruning).
    for alias, end in (("i", "pane_end"), ("s", "interval_end"), ("c", "pane_end")):
        assert f"{alias}.source = ? AND {alias}.pool = ? AND {alias}.{end} > ?" in page
    assert query("pool_curve").params[:4] == ("source", "pool", "window_start", "window_end")


# ---------------------------------------------------------------- the callers bind what their queries take


class FakeRun:
    """A dashboard `run` that knows each named query by its text and answers one plain row."""

    def __init__(self, page_row: dict[str, Any] | None = None, **row: Any) -> None:
        self.page_row = page_row  # pool_page_row's row (None: the page table has none)
        self.by_sql = {q.sql: q for q in queries().values()}
        self.names: list[str] = []
        self.row = row  # values of this run's rows in place of the plain ones
        self.params: dict[str, tuple[Any, ...]] = {}  # each query's last parameters

    def __call__(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        q = self.by_sql[sql]
        assert len(params) == len(q.params)
        self.names.append(q.name)
        self.params[q.name] = params
        end = T0 + timedelta(hours=1)
        row: dict[str, Any] = {
            "h": None, "t": end, "latest_pane_end": end, "first_pane_start": T0, "panes": 60,
            "window_start": end - timedelta(minutes=WINDOW_MINUTES), "window_end": end, "newest": end,
            "data_end": end, "table_name": "pool_pane", "source": "S", "pool": "BP1", "state": "open",
            "budget": None, "confidence": None, "latest_interval_end": end,
            "rolled_until": None, "rolled_panes": None, "rolled_first_pane_start": None,
        } | dict.fromkeys(dq.ATTRIBUTES[:-3] + dq.SETTINGS)  # fmt: skip
        row |= dict.fromkeys([f"measured_{k}" for k in dq.MEASURED] + [f"accuracy_{k}" for k in dq.ACCURACY])
        if q.name == "advice_latest":
            row = dict.fromkeys(COLUMNS) | {"source": "S"}
        if q.name == "pool_page_row":
            return [] if self.page_row is None else [row | self.row | self.page_row]
        return [row | self.row]


def test_the_dashboard_pages_bind_their_named_queries() -> None:
    run = FakeRun()
    tr = TimeRange(timedelta(hours=1), None, None)
    dq.overview(run, T0)
    dq.pool(run, "S", "BP1", tr, now=T0 + timedelta(hours=1))
    dq.pool(run, "S", "BP1", TimeRange(timedelta(days=7), None, None), now=T0 + timedelta(hours=1))
    dq.objects(run, "S", "BP1", tr, now=T0 + timedelta(hours=1))
    dq.objects(run, "S", "BP1", TimeRange(timedelta(days=7), None, None), now=T0 + timedelta(hours=1))
    dq.object_history(run, "S", "BP1", "DB.TS", tr)
    dq.checks(run, "S", "BP1", tr)
    dq.data_health(run, T0)
    dq.advice(run, None)
    dq.groups(run)
    dq.group(run, "DSG1", "GBP1", tr)
    assert {"pool_curve", "pool_series_rollup@hour", "objects_rollup@hour", "objects"} <= set(run.names)
    assert {n for n in run.names if n.startswith("group")} == {
        "groups", "group_attributes", "group_curve", "group_measured_window", "group_lbp_curve",
        "group_stats_series", "group_sim_series", "group_member_series", "group_accuracy",
    }  # fmt: skip
    assert "pool_groups" in run.names
    # No rollups: the anchor's guess is read again from the epoch; no statistics since: all of them.
    assert run.names[run.names.index("pool_anchor") + 1] == "pool_anchor" and "pool_settings" in run.names
    assert "pool_spsize_check" not in run.names  # no SPSIZE


def test_a_live_pools_page_is_one_statement_then_the_rest_at_once() -> None:
    """Rollups up to an hour ago, statistics with an SPSIZE: the anchor's guess holds, and DB2's
    simulated pool is read beside the simulation."""
    now = T0 + timedelta(days=30)
    run = FakeRun(rolled_until=now - timedelta(hours=1), settings_at=now, spsize=5000, latest_pane_end=now)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert run.names[:2] == ["pool_page_row", "pool_anchor"] and run.names.count("pool_anchor") == 1
    assert sorted(run.names[2:]) == sorted(
        ["pool_curve", "pool_series", "pool_stats_series", "pool_spsize_check", "pool_groups"]
    )  # fmt: skip
    assert page["settings"]["spsize"] == 5000 and page["attributes"]["latest_pane_end"] == now
    # The guess is on an hour, a clock off the hour or not (the rolled hours before it end by it).
    run = FakeRun(rolled_until=now - timedelta(hours=1), settings_at=now, latest_pane_end=now)
    dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now + timedelta(minutes=37))
    assert run.params["pool_anchor"][query("pool_anchor").params.index("since")] == now - RECENT_GUESS
    # A pool with no pane over a range given (a member's rows of its group only): no curve asked.
    run = FakeRun(rolled_until=now - timedelta(hours=1), settings_at=now, latest_pane_end=None)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, now), now=now)
    assert page["curve"] == [] and page["measured_at_current"] is None
    assert "pool_curve" not in run.names and "pool_series" in run.names


def test_a_pools_page_reads_its_anchor_through_the_page_table_and_its_curve_where_it_holds_the_newest_pane() -> None:
    """A pool_page row stands in for pool_anchor (pool_page_row reads the panes' part now), and
    curve_page for pool_curve where the row holds the pool's panes as they are now and its window
    is the page's; a row behind the pool's panes still answers the anchor, the curve from
    pool_curve; no row, or rollups behind the guess: pool_anchor (sql/pages.py)."""
    now = T0 + timedelta(days=30)
    given = {"rolled_until": now - timedelta(hours=1), "settings_at": now, "latest_pane_end": now, "panes": 60}
    window = {"window_start": now - timedelta(minutes=WINDOW_MINUTES), "window_end": now}
    held = {"page_pane_end": now, "page_panes": 60, "page_refreshed_at": datetime.now(UTC)}
    run = FakeRun(page_row=held, **given, **window)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert page["page_tables"] is True and page["attributes"]["latest_pane_end"] == now
    assert run.names[0] == "pool_page_row" and "pool_anchor" not in run.names
    assert sorted(run.names[1:]) == sorted(["pool_curve_page", "pool_series", "pool_stats_series", "pool_groups"])
    assert run.params["pool_page_row"][query("pool_page_row").params.index("since")] == now - RECENT_GUESS
    # The curve table holds another window (replaced since, or not yet): the page asks pool_curve.
    run = FakeRun(page_row=held, **given, window_start=now - timedelta(hours=1), window_end=now)
    dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert run.names.index("pool_curve") > run.names.index("pool_curve_page") and "pool_anchor" not in run.names
    # A pane (or a pane's count) the row has not: still no pool_anchor; pool_curve, not curve_page.
    for behind in (
        held | {"page_pane_end": now - timedelta(minutes=1), "page_panes": 59},
        held | {"page_panes": 61},
    ):
        run = FakeRun(page_row=behind, **given, **window)
        page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
        assert page["page_tables"] is True and run.names[0] == "pool_page_row" and "pool_anchor" not in run.names
        assert "pool_curve" in run.names and "pool_curve_page" not in run.names
        assert page["window"]["end"] == now and page["attributes"]["panes"] == 60
    # A row whose rollups lag the guess: pool_anchor from a day before the newest rolled hour, once.
    run = FakeRun(page_row=held, **(given | {"rolled_until": now - timedelta(days=3)}), **window)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert page["page_tables"] is False and run.names.count("pool_anchor") == 1 and "pool_curve_page" not in run.names
    assert run.params["pool_anchor"][query("pool_anchor").params.index("since")] == now - timedelta(days=4)
    # A row behind its panes and older than a running keeper leaves one (none running): pool_anchor.
    old = datetime.now(UTC) - ROW_FRESH - timedelta(seconds=5)
    run = FakeRun(page_row=held | {"page_panes": 59, "page_refreshed_at": old}, **given, **window)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert page["page_tables"] is False and run.names[:2] == ["pool_page_row", "pool_anchor"]
    # As old with no pane since (an idle pool: no commit to refresh for): the row answers.
    run = FakeRun(page_row=held | {"page_refreshed_at": old}, **given, **window)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert page["page_tables"] is True and "pool_anchor" not in run.names
    # No row: pool_anchor first, then the rest.
    run = FakeRun(page_row=None, **given, **window)
    page = dq.pool(run, "S", "BP1", TimeRange(timedelta(hours=1), None, None), now=now)
    assert page["page_tables"] is False and run.names[:2] == ["pool_page_row", "pool_anchor"]


def test_compare_and_the_advice_service_bind_their_named_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    executed: list[tuple[str, tuple[Any, ...]]] = []

    class Cursor:
        sql = ""

        def execute(self, sql: str, params: tuple[Any, ...]) -> None:
            self.sql = sql
            executed.append((sql, params))

        def fetchall(self) -> list[list[Any]]:  # the sums' rows (rollups, panes); no curve or mix rows
            if query("compare_sums").sql in self.sql:
                return [[0, *[None] * len(cmp.SUMS)], [0, 5, *[None] * (len(cmp.SUMS) - 1)]]
            return []

    class Conn:
        def __enter__(self) -> Conn:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def cursor(self) -> Cursor:
            return Cursor()

    monkeypatch.setattr(cmp, "trino_connection", lambda *a, **k: Conn())
    a, b, c = T0, T0 + timedelta(minutes=30), T0 + timedelta(hours=1)
    got = cmp.compare("S", "BP1", [(a, c), (b, c)])
    assert [r["panes"] for r in got] == [5, 0]  # the rows of range 0 went to the first range only
    names = {q.sql: n for n, q in queries().items()}
    # The three statements run at once (a connection each), each over both ranges: in any order.
    for name in ("compare_sums", "compare_curve", "compare_mix"):
        q = query(name)
        sql, params = q.union_all(
            [
                {"range": i, "source": "S", "pool": "BP1", "hours_start": s, "hours_end": s, "panes_start": s}
                | {"panes_end": c}
                for i, s in enumerate((a, b))
            ]
        )
        assert sql == f"(\n{q.sql}\n)\nUNION ALL\n(\n{q.sql}\n)" and (sql, params) in executed, name
    assert len(executed) == 3  # ranges shorter than an hour: the panes answer, no rolled-up hour asked

    asked: list[tuple[str, tuple[Any, ...]]] = []

    def trino_rows(s: Any, sql: str, params: tuple[Any, ...] = (), **kw: Any) -> tuple[list[Any], list[Any]]:
        asked.append((names[sql], params))
        return [], []

    monkeypatch.setattr(online, "trino_rows", trino_rows)
    online.read_states(None, "S")  # type: ignore[arg-type]
    wanted = ("curves", "vpseqt", "stats", "objects", "memory", "halves", "pools")
    assert {n for n, _ in asked} == {f"advice_{n}" for n in wanted}
    assert all(p == ("S", "S") for _, p in asked)


def _select_list(sql: str) -> list[str]:
    """The outer SELECT's expressions: from the first SELECT outside parentheses (a WITH's bodies
    are inside them) to its FROM, split at the commas outside parentheses."""
    text = " ".join(sql.split())
    depth, start, items = 0, -1, []
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth:
            continue
        if start < 0 and text.startswith("SELECT ", i):
            start = i + len("SELECT ")
        elif start >= 0 and (ch == "," or text.startswith(" FROM ", i)):
            items.append(text[start:i].strip())
            start = i + 1
            if ch != ",":
                break
    return items


def test_the_statistics_only_pools_bind_their_named_queries_and_read_every_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = {q.sql: n for n, q in queries().items()}
    columns = _select_list(query("advice_stats_pools").sql)
    assert columns[:3] == ["s.source", "s.pool", "n.window_end"] and len(columns) == 24
    row = ["S", "BP1", T0, 1, 60.0, 6, 60, 12, 60.0, 120, 60, 3, 1, 0, 2000, True, 4096, 30.0, 5.0, "LRU", False,
           4096, "omegamon", T0 - timedelta(minutes=1)]  # fmt: skip
    asked: list[tuple[str, tuple[Any, ...]]] = []

    def trino_rows(s: Any, sql: str, params: tuple[Any, ...] = (), **kw: Any) -> tuple[list[Any], list[Any]]:
        asked.append((names[sql], params))
        return [], [row] if names[sql] == "advice_stats_pools" else []

    monkeypatch.setattr(online, "trino_rows", trino_rows)
    [pool], memory = online.read_stats_only(None, set(), "S")  # type: ignore[arg-type]
    assert [n for n, _ in asked] == ["advice_stats_pools", "advice_stats_memory"]
    assert all(p == ("S", "S") for _, p in asked) and memory == {}
    assert (pool.key, pool.vpsize, pool.write_ios_per_s, pool.pages_read_per_s) == ("S/BP1", 2000, 1.0, 1.0)
    asked.clear()
    assert online.read_stats_only(None, {"S/BP1"}, None) == ([], {})  # type: ignore[arg-type]
    assert asked == [("advice_stats_pools", (None, None))]  # no pool left: no memory asked


def test_a_fragment_is_written_once_and_filled_into_every_query_that_names_it() -> None:
    text = (
        "-- fragment: recent\n-- each pool's newest pane\n"
        "recent AS (SELECT pool, max(pane_end) AS e FROM ${schema}.pool_pane WHERE source = :source GROUP BY pool)\n\n"
        "-- name: a\n-- doc\nWITH ${recent} SELECT * FROM recent WHERE pool = :pool\n\n"
        "-- name: b\n-- doc\nWITH ${recent}, x AS (SELECT 1 AS one) SELECT * FROM recent, x\n"
    )
    qs = parse(text)
    assert set(qs) == {"a", "b"}  # a fragment is not a query
    cte = f"recent AS (SELECT pool, max(pane_end) AS e FROM {SCHEMA}.pool_pane WHERE source = ? GROUP BY pool)"
    assert qs["a"].sql == f"WITH {cte} SELECT * FROM recent WHERE pool = ?"
    assert qs["a"].params == ("source", "pool")
    assert qs["b"].sql == f"WITH {cte}, x AS (SELECT 1 AS one) SELECT * FROM recent, x"
    assert qs["b"].params == ("source",)
    with pytest.raises(QueryError, match=r"unknown template variable \$\{nowhere\}"):
        parse("-- name: c\n-- doc\nWITH ${nowhere} SELECT 1\n")


def test_the_advice_queries_share_one_latest_window() -> None:
    text = (QUERIES_DIR / "advice.sql").read_text()
    assert text.count("max(pane_end) AS window_end") == 1
    users = [
        q
        for name, q in queries().items()
        if name.startswith("advice_") and "latest AS (" in q.sql.replace("group_latest", "")
    ]
    assert len(users) == 6
    assert all(q.params[:2] == ("source", "source") for q in users)
    # The groups' windows: one definition, gbp_curve's newest pane (gbp_curve_latest's).
    assert text.count("max(pane_end) AS latest_end") == 1
    group_users = [q for name, q in queries().items() if name.startswith("advice_") and "group_latest AS (" in q.sql]
    assert len(group_users) == 2


def test_union_all_asks_once_for_every_parameter_set_and_refuses_an_ordered_statement() -> None:
    qs = parse(
        "-- name: one\n-- Rows of a range.\nSELECT :n, x FROM t WHERE x >= :lo AND x < :hi\n"
        "-- name: ordered\n-- Sorted.\nSELECT x FROM t WHERE x > :lo ORDER BY x\n"
        "-- name: sorted\n-- Sorted by the reader.\n-- sorted by: x\nSELECT x FROM t WHERE x > :lo\n"
    )
    sql, params = qs["one"].union_all([{"n": 0, "lo": 1, "hi": 2}, {"hi": 9, "lo": 5, "n": 1}])
    one = "(\nSELECT ?, x FROM t WHERE x >= ? AND x < ?\n)"
    assert sql == f"{one}\nUNION ALL\n{one}"
    assert params == (0, 1, 2, 1, 5, 9)
    for name in ("ordered", "sorted"):
        with pytest.raises(QueryError, match="loses its order"):
            qs[name].union_all([{"lo": 1}])
    with pytest.raises(QueryError, match="no parameter sets"):
        qs["one"].union_all([])
    with pytest.raises(QueryError, match="missing hi"):
        qs["one"].union_all([{"n": 0, "lo": 1}])


def test_the_page_row_takes_the_rollups_and_settings_columns_from_pool_page() -> None:
    """pool_page_row's columns from the row are anchor.sql's h and st CTEs' (read off its text):
    the rolled-up panes and every setting the page shows."""
    assert FROM_ROW == ("rolled_first_pane_start", "rolled_panes", "rolled_until", *dq.SETTINGS)
    sql = query("pool_page_row").sql
    assert all(f"g.{c}," in sql for c in FROM_ROW) and "g.refreshed_at AS page_refreshed_at" in sql
