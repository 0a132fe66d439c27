"""The dashboard in a real browser (Debian's Chromium driven by Playwright) against the real stack.

A generated workload goes through the jobs into Iceberg; each page must load without console
errors, draw its charts, and show the numbers a query written here independently gets from
Trino. Screenshots of every page are saved under var/test/screenshots/.
"""

from __future__ import annotations

import csv
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright

from poolsight.dashboards import queries as dq
from poolsight.dashboards.server import Reader
from poolsight.dashboards.timerange import TimeRange
from poolsight.infra.config import load_settings
from poolsight.infra.install import chromium
from poolsight.infra.trino import credentials, fetch, trino_connection, trino_rows
from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER
from poolsight.schemas.tables import POOL_PANE
from poolsight.sql import pages
from poolsight.sql.curve import WINDOW_MINUTES
from poolsight.sql.named import QUERIES_DIR, load, queries, query
from poolsight.sql.pages import RECENT_GUESS, WINDOW_S, page_since
from poolsight.sql.rollup import run_rollups
from poolsight.sql.rollups import POOL
from poolsight.sql.views import SCHEMA
from tests.conftest import TEST_VAR, poolsight
from tests.stack import gbp_rows
from tests.stack.conftest import query as _query
from tests.stack.conftest import wait_rows, wait_simulated

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

SHOTS = TEST_VAR / "screenshots"
DURATION = 420  # seconds of event time: 7 panes of 60 s
REL = 1e-9


@pytest.fixture(scope="module")
def member(jobs: None) -> str:
    """A mixed workload (two pools, statistics, I/O events) in Iceberg."""
    name = f"D{uuid.uuid4().hex[:6].upper()}"
    start = (int(time.time()) // 60) * 60 - DURATION - 120
    g = poolsight(
        "generate", "mixed", "--members", name, "--start-time", str(start), "--duration", str(DURATION),
        "--event-rate", "3000", "--seed", "11",
    )  # fmt: skip
    assert g.returncode == 0, g.stderr
    out = json.loads(g.stdout.strip().splitlines()[-1])
    produced = out["getpages"]
    # The I/O events too: the statistics job writes io_pane apart from the simulation's panes, the
    # curve's elapsed time per sync read comes from them, and the dashboard keeps a page's answers
    # up to 60 s while the pool has no new pane (dashboards/cache.py). A first page read 2 s before
    # their last commit showed 852 elapsed seconds saved 30 s later, where the view had 853.
    ios = {d: n for d, n in (("read", out["reads"]), ("write", out["writes"])) if n}
    deadline = time.monotonic() + 240
    seen, traced = 0, dict[str, int]()
    while time.monotonic() < deadline:
        seen = _query("SELECT coalesce(sum(getpages), 0) FROM iceberg.poolsight.pool_pane WHERE source = ?", (name,))[
            0
        ][0]
        rows = _query("SELECT direction, sum(ios) FROM iceberg.poolsight.io_pane WHERE source = ? GROUP BY 1", (name,))
        traced = dict(rows)
        if seen == produced and traced == ios:
            break
        time.sleep(3)
    assert seen == produced, f"{seen} of {produced} getpages reached pool_pane"
    assert traced == ios, f"io_pane has {traced} of the I/Os {ios}"
    wait_simulated(name, produced)  # every pane of the curve, which a page keeps as long (above)
    return name


@pytest.fixture(scope="module")
def group() -> gbp_rows.Group:
    """Group DSG1 (members DB2A, DB2B, GBP1) written straight into the group tables (tests/stack/gbp_rows.py):
    ten panes ending a minute ago, two statistics intervals. Needs neither the jobs nor a workload."""
    end = datetime.fromtimestamp((int(time.time()) // 60 - 1) * 60, UTC)
    g = gbp_rows.build("DSG1", ("DB2A", "DB2B"), end)
    gbp_rows.write(g)
    return g


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
        yield b
        b.close()


class Tab:
    """A page with its console errors collected."""

    def __init__(self, browser: Browser) -> None:
        self.page: Page = browser.new_page(viewport={"width": 1500, "height": 1100})
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.dialogs: list[str] = []
        self.page.on("dialog", self._dialog)

    def _dialog(self, d: Dialog) -> None:
        self.dialogs.append(d.message)
        d.dismiss()

    def _console(self, m: ConsoleMessage) -> None:
        if m.type == "error":
            self.errors.append(f"console: {m.text}")

    def open(self, path: str, shot: str | None = None) -> Page:
        self.page.goto(f"{load_settings().dashboard_url}{path}")
        self.page.wait_for_selector('body[data-loaded="1"], body[data-failed]', timeout=30_000)
        assert self.page.get_attribute("body", "data-failed") is None, self.page.inner_text("#error")
        if shot:
            self.page.wait_for_timeout(300)  # the charts' first frame
            SHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
        return self.page

    def value(self, selector: str) -> float:
        raw = self.page.get_attribute(selector, "data-value")
        assert raw not in (None, ""), selector
        return float(raw)  # type: ignore[arg-type]


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    t = Tab(browser)
    yield t
    t.page.close()


def _charts_drawn(page: Page) -> dict[str, int]:
    """Points per chart: ECharts' own model of what it drew, per chart on the page."""
    counts: dict[str, int] = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.chart')].map(d => {
             const c = echarts.getInstanceByDom(d);
             const n = c ? c.getOption().series.reduce((s, x) => s + (x.data ? x.data.length : 0), 0) : -1;
             const canvas = d.querySelector('canvas');
             return [d.id, canvas && canvas.width > 0 ? n : -1];
           }))"""
    )
    return counts


def test_every_page_loads_without_console_errors_and_draws_its_charts(
    member: str, group: gbp_rows.Group, tab: Tab
) -> None:
    objects = [
        o
        for (o,) in _query(
            "SELECT DISTINCT object FROM iceberg.poolsight.object_pane WHERE source = ? AND pool = 'BP1'", (member,)
        )
    ]
    q = f"source={member}&pool=BP1"
    pages = {
        "overview": ("/overview", []),
        "pool": (f"/pool?{q}&range=1h", ["curve-chart", "io-chart", "hit-chart", "ws-chart", "mix-chart"]),
        "objects": (f"/objects?{q}&range=1h", ["share-chart"]),
        "object": (f"/object?{q}&range=1h&object={objects[0]}", ["object-io-chart", "object-ws-chart"]),
        "history": (f"/history?{q}", ["history-curve-chart"]),
        "group": (f"/group?group={group.name}&gbp=GBP1&range=1h", GROUP_CHARTS),
        "health": ("/health", []),
    }
    for name, (path, charts) in pages.items():
        # Every second (the least ?refresh allows), so the second render comes 4 s sooner than at 5 s.
        page = tab.open(f"{path}{'&' if '?' in path else '?'}refresh=1000", shot=name)
        drawn = _charts_drawn(page)
        for chart in charts:
            assert drawn.get(chart, -1) > 0, (name, chart, drawn)
        # It refreshes itself in place: a second render (or more, by now) without a reload.
        # (Polled from here: the page's CSP refuses wait_for_function's eval.)
        for _ in range(150):
            if int(page.get_attribute("body", "data-refreshes") or 0) >= 2:
                break
            page.wait_for_timeout(200)
        assert int(page.get_attribute("body", "data-refreshes") or 0) >= 2, name
    assert tab.errors == []


def test_overview_and_pool_page_show_what_trino_answers(member: str, tab: Tab) -> None:
    page = tab.open("/overview")
    for pool in ("BP1", "BP2"):
        [[getpages_per_s, sim, size]] = _query(
            "SELECT max_by(getpages / seconds, pane_start), max_by(sim_sync_reads_per_s, pane_start), "
            "max_by(current_size, pane_start) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = ?",
            (member, pool),
        )
        row = f'#pools-table tr[data-key="{member}/{pool}"]'
        assert tab.value(f'{row} td[data-col="getpages_per_s"]') == pytest.approx(getpages_per_s, rel=REL)
        assert tab.value(f'{row} td[data-col="simulated_sync_reads_per_s"]') == pytest.approx(sim, rel=REL)
        assert page.inner_text(f'{row} td[data-col="vpsize"]') == f"{size:,}"
    [[stats_app, stats_sys]] = _query(
        "SELECT max_by(application_hit_ratio, interval_end), max_by(system_hit_ratio, interval_end) "
        "FROM iceberg.poolsight.pool_stats WHERE source = ? AND pool = 'BP1'",
        (member,),
    )
    row = f'#pools-table tr[data-key="{member}/BP1"]'
    assert tab.value(f'{row} td[data-col="application_hit_ratio"]') == pytest.approx(stats_app, rel=REL)
    assert tab.value(f'{row} td[data-col="system_hit_ratio"]') == pytest.approx(stats_sys, rel=REL)
    # The subsystem at its newest statistics interval: every pool's getpages over its interval added
    # up here from pool_stats, and the hit ratio from the summed counters.
    [[n, getpages_per_s, app]] = _query(
        "SELECT count(*), sum(getpages / interval_seconds), "
        "1 - sum(sync_reads_random + sync_reads_sequential) * 1e0 / sum(getpages) FROM iceberg.poolsight.pool_stats "
        "WHERE source = ? AND interval_end = "
        "(SELECT max(interval_end) FROM iceberg.poolsight.pool_stats WHERE source = ?)",
        (member, member),
    )
    row = f'#subsystems-table tr[data-key="{member}"]'
    assert page.inner_text(f'{row} td[data-col="pools"]') == str(n) == "2"
    assert tab.value(f'{row} td[data-col="getpages_per_s"]') == pytest.approx(getpages_per_s, rel=REL)
    assert tab.value(f'{row} td[data-col="application_hit_ratio"]') == pytest.approx(app, rel=REL)
    # The pools table as a CSV download: a row per pool, every column's raw value under its key.
    got = _download(page, "pools-table")
    assert list(got[0]) == page.eval_on_selector_all("#pools-table th", "ths => ths.map(t => t.dataset.col)")
    mine = {r["pool"]: r for r in got if r["source"] == member}
    assert sorted(mine) == ["BP1", "BP2"] and len(got) == page.locator("#pools-table tbody tr").count()
    for pool, r in mine.items():
        [[getpages_per_s, size]] = _query(
            "SELECT max_by(getpages / seconds, pane_start), max_by(current_size, pane_start) "
            "FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = ?",
            (member, pool),
        )
        assert float(r["getpages_per_s"]) == pytest.approx(getpages_per_s, rel=REL) and int(r["vpsize"]) == size

    page = tab.open(f"/pool?source={member}&pool=BP1&range=1h")
    curve = _query(
        "SELECT size_pages, sync_reads_per_s, avoided_sync_reads_per_s, is_current, window_start, window_end "
        "FROM iceberg.poolsight.sim_curve_latest WHERE source = ? AND pool = 'BP1' ORDER BY size_pages",
        (member,),
    )
    current = next(r for r in curve if r[3])
    assert page.inner_text("#whatif-sync") == _shown(current[1], 1)
    assert page.input_value("#whatif-size") == str(current[0])
    assert page.inner_text("#accuracy-kv dd[data-key=curve_simulated]") == f"{current[1]:,.2f} /s"
    [[measured]] = _query(
        "SELECT sum(observed_sync_reads) / sum(seconds) FROM iceberg.poolsight.pool_pane "
        "WHERE source = ? AND pool = 'BP1' AND pane_end > ? AND pane_start < ?",
        (member, current[4], current[5]),
    )
    assert page.inner_text("#accuracy-kv dd[data-key=curve_measured]") == f"{measured:,.2f} /s"
    # The newest trace-measured accuracy, from its table (the page reads it in the same statement).
    [[acc_simulated, acc_measured, window_end]] = _query(
        "SELECT simulated_sync_reads_per_s, measured_sync_reads_per_s, window_end FROM iceberg.poolsight."
        "sim_accuracy_pane WHERE source = ? AND pool = 'BP1' ORDER BY window_end DESC LIMIT 1",
        (member,),
    )
    values = f"{_shown(acc_simulated, 2)} / {_shown(acc_measured, 2)} per s"
    assert page.inner_text("#accuracy-kv dd[data-key=accuracy_values]") == values, window_end
    [[vpsize]] = _query(
        "SELECT max_by(current_size, pane_start) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = 'BP1'",
        (member,),
    )
    assert page.inner_text("#attributes-kv dd[data-key=vpsize]") == f"{vpsize:,}"
    # Every setting the collectors sent, as the newest statistics interval carries it.
    [[pgsteal, pgfix, dwqt, vdwqt, page_size]] = _query(
        "SELECT max_by(pgsteal, interval_end), max_by(pgfix, interval_end), max_by(dwqt, interval_end), "
        "max_by(vdwqt, interval_end), max_by(page_size, interval_end) FROM iceberg.poolsight.pool_stats "
        "WHERE source = ? AND pool = 'BP1'",
        (member,),
    )
    shown = {k: page.inner_text(f"#attributes-kv dd[data-key={k}]") for k in ("pgsteal", "pgfix", "dwqt", "vdwqt")}
    assert shown == {
        "pgsteal": pgsteal or "-",
        "pgfix": "-" if pgfix is None else ("YES" if pgfix else "NO"),
        "dwqt": "-" if dwqt is None else f"{dwqt:,.0f} %",
        "vdwqt": "-" if vdwqt is None else f"{vdwqt:,.0f} %",
    }
    assert page.inner_text("#attributes-kv dd[data-key=page_size]") == (f"{page_size // 1024}K" if page_size else "-")
    # Every pane of the range is a point of the sync reads chart (measured, simulated).
    [[panes]] = _query("SELECT count(*) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = 'BP1'", (member,))
    points = page.evaluate(
        "() => echarts.getInstanceByDom(document.getElementById('io-chart')).getOption().series"
        ".slice(0, 2).map(s => s.data.length)"
    )
    assert points == [panes, panes]


def _shown(v: float, digits: int) -> str:
    """`v` as the page's num() shows it: Intl rounds the double's exact value half away from zero
    (Python's format rounds half to even: 852.5 is '853' on the page, '852' in an f-string)."""
    return f"{Decimal(v).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):,.{digits}f}"


def test_what_if_control_reads_off_the_curve(member: str, tab: Tab) -> None:
    page = tab.open(f"/pool?source={member}&pool=BP1&range=1h")
    curve = _query(
        "SELECT size_pages, sync_reads_per_s, avoided_sync_reads_per_s, cpu_seconds_saved_per_24h, "
        "elapsed_seconds_saved_per_24h FROM iceberg.poolsight.sim_curve_latest WHERE source = ? AND pool = 'BP1' "
        "ORDER BY size_pages",
        (member,),
    )
    before = page.inner_text("#whatif-saved")
    largest = curve[-1]
    page.fill("#whatif-size", str(largest[0]))
    page.dispatch_event("#whatif-size", "change")
    assert page.inner_text("#whatif-sync") == _shown(largest[1], 1)
    assert page.inner_text("#whatif-saved") == _shown(largest[2], 1)
    assert page.inner_text("#whatif-cpu") == _shown(largest[3], 1)
    assert page.inner_text("#whatif-elapsed") == _shown(largest[4], 0)
    assert page.inner_text("#whatif-saved") != before
    # Half way between two simulated sizes: linear between their values.
    lo, hi = curve[-2], curve[-1]
    page.fill("#whatif-range", str((lo[0] + hi[0]) // 2))
    f = ((lo[0] + hi[0]) // 2 - lo[0]) / (hi[0] - lo[0])
    assert page.inner_text("#whatif-sync") == _shown(lo[1] + f * (hi[1] - lo[1]), 1)
    assert page.input_value("#whatif-size") == str((lo[0] + hi[0]) // 2)


def test_objects_page_ranks_objects_with_trino_numbers(member: str, tab: Tab) -> None:
    page = tab.open(f"/objects?source={member}&pool=BP1&range=1h")
    [[seconds]] = _query(
        "SELECT sum(seconds) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = 'BP1'", (member,)
    )
    rows = _query(
        "SELECT object, sum(getpages), sum(sim_sync_reads) FROM iceberg.poolsight.object_pane "
        "WHERE source = ? AND pool = 'BP1' GROUP BY object",
        (member,),
    )
    total_sim = sum(r[2] for r in rows)
    shown = page.eval_on_selector_all("#objects-table tbody tr", "rs => rs.map(r => r.dataset.key)")
    assert sorted(shown) == sorted(r[0] for r in rows)
    for obj, getpages, sim in rows:
        row = f'#objects-table tr[data-key="{obj}"]'
        assert tab.value(f'{row} td[data-col="getpages_per_s"]') == pytest.approx(getpages / seconds, rel=REL)
        assert tab.value(f'{row} td[data-col="share_of_pool_sync_reads"]') == pytest.approx(sim / total_sim, rel=REL)
    # Sorting by a header click orders the rows by that column.
    page.click('#objects-table th[data-col="getpages_per_s"]')
    values = page.eval_on_selector_all(
        '#objects-table tbody td[data-col="getpages_per_s"]', "tds => tds.map(t => Number(t.dataset.value))"
    )
    assert values == sorted(values, reverse=True)


def test_history_page_equals_poolsight_compare(member: str, tab: Tab) -> None:
    [[first, last]] = _query(
        "SELECT min(pane_start), max(pane_end) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = 'BP1'",
        (member,),
    )
    mid = first + (last - first) / 2
    a = (first.astimezone(UTC).isoformat(), mid.astimezone(UTC).isoformat())
    b = (mid.astimezone(UTC).isoformat(), last.astimezone(UTC).isoformat())
    r = poolsight("compare", member, "BP1", "--a", *a, "--b", *b, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    expected = out["similarity"]
    page = tab.open(
        f"/history?source={member}&pool=BP1&a_from={a[0]}&a_to={a[1]}&b_from={b[0]}&b_to={b[1]}".replace("+", "%2B"),
        shot="history-explicit",
    )
    assert page.inner_text("#similarity-kv dd[data-key=score]") == f"{expected['score']:,.3f}"
    # Each metric row shows what compare returned for each range.
    for key, digits in (("sim_sync_reads_per_s", 2), ("getpages_per_s", 1)):
        row = f'#compare-table tr[data-key="{key}"]'
        assert page.inner_text(f'{row} td[data-col="a"]') == f"{out['a'][key]:,.{digits}f}"
        assert page.inner_text(f'{row} td[data-col="b"]') == f"{out['b'][key]:,.{digits}f}"


def test_health_page_shows_table_freshness(member: str, tab: Tab) -> None:
    page = tab.open("/health")
    [[rows]] = _query("SELECT count(*) FROM iceberg.poolsight.pool_pane")
    cell = '#freshness-table tr[data-key="pool_pane"] td[data-col="row_count"]'
    assert int(tab.value(cell)) >= rows  # the jobs may have written more since
    states = page.eval_on_selector_all('#jobs-table td[data-col="state"]', "tds => tds.map(t => t.textContent)")
    assert states.count("RUNNING") == 2


def _get(path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"{load_settings().dashboard_url}{path}", timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_a_hostile_pool_name_in_the_url_is_harmless(member: str, tab: Tab) -> None:
    [[before]] = _query("SELECT count(*) FROM iceberg.poolsight.pool_pane")
    for hostile in ("BP1' OR '1'='1", "BP1'; DROP TABLE iceberg.poolsight.pool_pane; --", "BP1\\' UNION SELECT 1 --"):
        status, body = _get(f"/api/pool?source={member}&pool={urllib.parse.quote(hostile)}&range=1h")
        assert status == 200, body
        assert body["attributes"]["panes"] == 0 and body["series"] == []  # no such pool, nothing else matched
    assert _query("SELECT count(*) FROM iceberg.poolsight.pool_pane")[0][0] >= before
    script = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    page = tab.open(f"/pool?source={member}&pool={urllib.parse.quote(script)}")
    assert tab.dialogs == []
    assert script in page.inner_text("#attributes h2")  # shown as text, not markup
    assert page.locator("#attributes img").count() == 0
    assert _get("/api/pool?source=x&pool=y&range=2y")[0] == 400
    assert _get("/static/../server.py")[0] == 404
    assert _get("/static/vendor/../../../../etc/passwd")[0] == 404


HOSTILE = ("BP1' OR '1'='1", "x'); DROP TABLE iceberg.poolsight.pool_pane; --", "\u00e9\u5b57 \U0001f600 %ZZ <b>")


def test_well_formed_hostile_names_reach_trino_as_parameters_only(member: str) -> None:
    """Every API with names, each a hostile but well-formed one (tests/dashboards/test_hostile.py
    sends the malformed ones): an empty 200, every statement the reader ran meanwhile finished (none
    failed on a name taken for SQL, none was refused a write), and the tables are as they were."""
    tables = _query("SHOW TABLES FROM iceberg.poolsight")
    [[since]] = _query("SELECT current_timestamp")
    for name in HOSTILE:
        q = urllib.parse.quote(name)
        for path in (
            f"/api/pool?source={member}&pool={q}", f"/api/objects?source={q}&pool=BP1",
            f"/api/object?source={member}&pool=BP1&object={q}", f"/api/group?group={q}&gbp=GBP1",
            f"/api/checks?source={q}", f"/api/advice?source={q}", f"/api/writes?source={q}",
            f"/api/memory?source={q}", f"/api/backups?source={q}", f"/api/purescale?source={q}",
            f"/api/history?source={member}&pool={q}&a_from=2026-01-01&a_to=2026-01-02&b_from=2026-01-03&b_to=2026-01-04",
        ):  # fmt: skip
            status, body = _get(path)
            assert status == 200, (path, body)
    ran = _query(
        'SELECT state, error_code, query FROM system.runtime.queries WHERE "user" = ? AND created >= ?',
        (TRINO_READER_USER, since),
    )
    assert len(ran) >= 20 and {r[0] for r in ran} == {"FINISHED"}, [r for r in ran if r[0] != "FINISHED"][:5]
    assert _query("SHOW TABLES FROM iceberg.poolsight") == tables


def test_the_reader_user_can_only_select_in_the_poolsight_schema(member: str) -> None:
    import trino

    _query("CREATE SCHEMA IF NOT EXISTS iceberg.outside")
    _query("CREATE TABLE IF NOT EXISTS iceberg.outside.secret (a integer)")
    assert _query("SELECT count(*) FROM iceberg.poolsight.sim_curve_latest", user=TRINO_READER_USER)[0][0] > 0
    denied = [
        "CREATE TABLE iceberg.poolsight.x (a integer)",
        "INSERT INTO iceberg.poolsight.alert (rule) VALUES ('x')",
        "DELETE FROM iceberg.poolsight.pool_pane WHERE source = 'nobody'",
        "DROP TABLE iceberg.poolsight.pool_pane",
        "DROP VIEW iceberg.poolsight.sim_curve_latest",
        "ALTER TABLE iceberg.poolsight.pool_pane ADD COLUMN x integer",
        "CREATE SCHEMA iceberg.mine",
        "SELECT * FROM iceberg.outside.secret",
        "SELECT count(*) FROM system.runtime.nodes",
        "CALL iceberg.system.rollback_to_snapshot('poolsight', 'pool_pane', 1)",
    ]
    for sql in denied:
        with pytest.raises(trino.exceptions.TrinoUserError) as err:
            _query(sql, user=TRINO_READER_USER)
        assert err.value.error_name == "PERMISSION_DENIED", (sql, err.value)
    # The writer keeps its rights (the jobs' tables, the alert evaluator).
    assert _query("SELECT count(*) FROM system.runtime.nodes")[0][0] >= 1
    # Trino's query list (REST, the web UI): the reader sees its own queries only, the writer all.
    s = load_settings()

    def users(user: str) -> set[str]:
        import requests  # lazy: the Trino client's HTTP library, for Trino's REST API here only

        password, verify = credentials(s, user)
        assert password is not None
        got = requests.get(f"{s.trino_url}/v1/query", auth=(user, password), verify=verify, timeout=30)
        got.raise_for_status()
        return {q["session"]["user"] for q in got.json()}

    assert users(TRINO_READER_USER) == {TRINO_READER_USER}
    assert {TRINO_READER_USER, TRINO_WRITER_USER} <= users(TRINO_WRITER_USER)


def test_a_range_without_data_shows_an_empty_page_not_an_error(member: str, tab: Tab) -> None:
    to = (datetime.now(UTC) - timedelta(days=400)).isoformat()
    status, body = _get(f"/api/pool?source={member}&pool=BP1&range=1h&to={urllib.parse.quote(to)}")
    assert status == 200 and body["series"] == []
    tab.open(f"/pool?source={member}&pool=BP1&range=1h&to={urllib.parse.quote(to)}")
    assert tab.errors == []


def test_advice_page_shows_the_latest_advice_trino_holds(member: str, tab: Tab) -> None:
    r = poolsight("advise", "--evaluate", "--source", member, "--budget-buffers", "10000")
    assert r.returncode == 0, r.stderr
    rows = _query(
        "SELECT pool, kind, avoided_sync_reads_per_s, command FROM iceberg.poolsight.advice_latest WHERE source = ?",
        (member,),
        user=TRINO_READER_USER,
    )
    assert rows and "budget" in {k for _, k, _, _ in rows}
    page = tab.open(f"/advice?source={member}", shot="advice")
    for pool, kind, avoided, command in rows:
        row = f'#advice-table tr[data-key="{member}/{pool or ""}/{kind}"]'
        shown = page.get_attribute(f'{row} td[data-col="avoided_sync_reads_per_s"]', "data-value")
        if avoided is None:
            assert shown == ""
        else:
            assert float(shown or "nan") == pytest.approx(avoided, rel=1e-12)
        assert page.inner_text(f'{row} td[data-col="command"] pre') == command
    budget = [b for (b,) in _query("SELECT budget FROM iceberg.poolsight.advice_latest WHERE source = ? AND "
                                   "budget IS NOT NULL", (member,))]  # fmt: skip
    allocation = json.loads(budget[0])["allocation"]
    for pool, added in allocation.items():
        assert page.inner_text(f'#budget-kv-{member} dd[data-key="alloc-{pool}"]') == f"+{added:,} buffers"
    assert tab.errors == []


# ---------------------------------------------------------------- the Group page

GROUP_CHARTS = [
    "gbp-reads-chart", "gbp-hit-chart", "gbp-reclaims-chart", "gbp-xi-chart", "member-lbp-hit-chart",
    "member-xi-chart", "lbp-curve-chart-0", "lbp-curve-chart-1",
]  # fmt: skip


def _iso(t: datetime) -> str:
    """A time as the dashboard's JSON writes it (the tables' row keys)."""
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def test_group_page_shows_the_group_as_written(group: gbp_rows.Group, tab: Tab) -> None:
    """The numbers the Group page shows are those worked out here from the rows written (gbp_rows)."""
    curve, stats = group.rows["gbp_curve"], group.rows["gbp_stats"]
    page = tab.open(f"/group?group={group.name}&gbp=GBP1&range=1h", shot="group")
    seconds = 60.0 * group.panes  # every pane lies in the curve's 15-minute window

    def point(entries: int, ratio: float, key: str, panes: range = range(group.panes)) -> float:
        rows = [r for r in curve if (r["data_entries"], r["ratio"]) == (entries, ratio)]
        return float(sum(rows[k][key] for k in panes))

    # The smallest structure without directory reclaims is RATIO 10 at 20,000 entries (not 40,000 at RATIO 5).
    zero = page.locator("#zero-reclaims")
    assert float(zero.get_attribute("data-mb") or "nan") == gbp_rows.structure_mb(20_000, 10.0)
    assert (zero.get_attribute("data-ratio"), zero.get_attribute("data-entries")) == ("10", "20000")
    assert zero.inner_text() == (
        "No directory reclaims from 154.4 MB: RATIO 10 with 20,000 data entries (200,000 directory entries), the "
        "smallest simulated structure without any over the window. The current setting (116.3 MB, RATIO 5) has "
        f"{point(20_000, 5.0, 'directory_reclaims') / seconds:,.2f}/s."
    )
    failed = page.locator("#zero-failed-writes")
    assert float(failed.get_attribute("data-mb") or "nan") == gbp_rows.structure_mb(40_000, 5.0)
    assert failed.inner_text().startswith("No failed writes from 232.5 MB: RATIO 5 with 40,000 data entries")

    # Simulated at the current setting against measured over the same window (both intervals lie in it).
    members = [r for r in stats if r["scope"] == "member"]
    no_data = sum(r["xi_reads_no_data"] + r["nf_reads_no_data"] for r in members)
    returned = sum(r["xi_reads_data_returned"] + r["nf_reads_data_returned"] for r in members)
    cell = '#window-table tr[data-key="{}"] td[data-col="{}"]'
    disk = point(20_000, 5.0, "disk_sync_reads")
    assert tab.value(cell.format("disk_sync_reads_per_s", "simulated")) == pytest.approx(disk / seconds, rel=REL)
    assert tab.value(cell.format("disk_sync_reads_per_s", "measured")) == pytest.approx(no_data / 600, rel=REL)
    hit = (point(20_000, 5.0, "xi_data_returned") + point(20_000, 5.0, "nf_data_returned")) / (
        point(20_000, 5.0, "sync_reads_xi") + point(20_000, 5.0, "sync_reads_nf")
    )
    assert tab.value(cell.format("gbp_hit_ratio", "simulated")) == pytest.approx(hit, rel=REL)
    assert tab.value(cell.format("gbp_hit_ratio", "measured")) == pytest.approx(
        returned / (returned + no_data), rel=REL
    )
    assert page.inner_text(cell.format("gbp_hit_ratio", "measured")) == f"{100 * returned / (returned + no_data):.1f} %"
    group_rows = [r for r in stats if r["scope"] == "group"]
    reclaims = sum(r["directory_reclaims"] for r in group_rows)
    assert tab.value(cell.format("directory_reclaims_per_s", "measured")) == pytest.approx(reclaims / 600, rel=REL)

    # The accuracy of the newer interval: its five panes at the current setting against the statistics.
    newer = [r for r in stats if r["interval_end"] == group.end]
    sim = point(20_000, 5.0, "disk_sync_reads", range(5, 10))
    measured = sum(r["xi_reads_no_data"] + r["nf_reads_no_data"] for r in newer if r["scope"] == "member")
    got = sum(r["xi_reads_data_returned"] + r["nf_reads_data_returned"] for r in newer if r["scope"] == "member")
    sim_hit = (
        point(20_000, 5.0, "xi_data_returned", range(5, 10)) + point(20_000, 5.0, "nf_data_returned", range(5, 10))
    ) / (point(20_000, 5.0, "sync_reads_xi", range(5, 10)) + point(20_000, 5.0, "sync_reads_nf", range(5, 10)))
    sim_reclaims = point(20_000, 5.0, "directory_reclaims", range(5, 10))
    [measured_reclaims] = [r["directory_reclaims"] for r in newer if r["scope"] == "group"]
    row = f'#gbp-accuracy-table tr[data-key="{_iso(group.end)}"]'
    expected = {
        "members": 2, "panes": 5, "data_entries": 20_000, "ratio": 5.0,
        "simulated_disk_sync_reads": sim, "measured_disk_sync_reads": measured,
        "disk_sync_reads_error": sim / measured - 1,
        "simulated_gbp_hit_ratio": sim_hit, "measured_gbp_hit_ratio": got / (got + measured),
        "gbp_hit_ratio_error": sim_hit - got / (got + measured),
        "simulated_directory_reclaims": sim_reclaims, "measured_directory_reclaims": measured_reclaims,
        "directory_reclaims_error": sim_reclaims / measured_reclaims - 1,
    }  # fmt: skip
    for col, want in expected.items():
        assert tab.value(f'{row} td[data-col="{col}"]') == pytest.approx(want, rel=REL), col
    assert page.inner_text(f'{row} td[data-col="disk_sync_reads_error"]') == f"+{100 * (sim / measured - 1):.1f} %"
    assert page.locator("#gbp-accuracy-table tbody tr").count() == 2

    # Every chart drawn with every point: the curve a line per RATIO with the current and measured points;
    # XIs by cause over 2 intervals (measured) and 10 panes (simulated), each flat from its start to its end;
    # per member 10 panes; LBP curves at 3 sizes.
    drawn = _charts_drawn(page)
    assert {c: drawn.get(c) for c in GROUP_CHARTS} == {
        "gbp-reads-chart": 8, "gbp-hit-chart": 8, "gbp-reclaims-chart": 12, "gbp-xi-chart": 2 * 4 + 2 * 20,
        "member-lbp-hit-chart": 20, "member-xi-chart": 20, "lbp-curve-chart-0": 6, "lbp-curve-chart-1": 6,
    }  # fmt: skip
    measured_point = page.evaluate(
        "() => echarts.getInstanceByDom(document.getElementById('gbp-reads-chart')).getOption().series"
        ".find(s => s.name === 'measured').data[0].value"
    )
    assert measured_point == pytest.approx([gbp_rows.structure_mb(*gbp_rows.CURRENT), no_data / 600], rel=REL)
    first = next(r for r in group.rows["gbp_member"] if r["member"] == "DB2A" and r["is_current"])
    hits = page.evaluate(
        "() => echarts.getInstanceByDom(document.getElementById('member-lbp-hit-chart')).getOption().series"
        ".find(s => s.name === 'DB2A').data[0][1]"
    )
    assert hits == pytest.approx(100 * first["lbp_hits"] / first["getpages"], rel=REL)
    assert page.inner_text("#group-kv dd[data-key=members]") == "DB2A, DB2B"
    assert page.inner_text("#group-kv dd[data-key=current]") == (
        "116.3 MB: RATIO 5, 20,000 data entries, 100,000 directory entries"
    )
    assert tab.errors == []


def test_pools_of_a_group_and_the_group_list_link_to_the_group_page(group: gbp_rows.Group, tab: Tab) -> None:
    # DB2A's BP1 shares GBP1 (lbp_curve, gbp_stats): its pool page links there (over a range holding the group's rows).
    to = urllib.parse.quote(_iso(group.end))
    page = tab.open(f"/pool?source=DB2A&pool=BP1&range=1h&to={to}")
    # (Other groups may hold DB2A too: the alert tests' do not, but a data-sharing workload might.)
    a = page.locator("#attributes-kv dd[data-key=group] a", has_text=f"{group.name} / GBP1")
    assert a.inner_text() == f"{group.name} / GBP1"
    a.click()
    page.wait_for_selector("#zero-reclaims")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["group"] == [group.name]
    page = tab.open("/group")
    assert page.inner_text(f'#groups-table tr[data-key="{group.name}/GBP1"] td[data-col="members"]') == "DB2A, DB2B"
    assert page.locator('nav a[href^="/group"]').inner_text() == "Group"
    assert tab.errors == []


# ---------------------------------------------------------------- every named query on Trino

# Who runs each file's queries: the dashboard (and the history page's compare, and advice_latest
# that `poolsight advise` and the dashboard read) as the reader; the services and the demo as the writer.
READER_FILES = ("dashboard.sql", "compare.sql")


def _named_params(member: str) -> dict[str, Any]:
    """A value for every parameter name the named queries use, over the member's data."""
    now = datetime.now(UTC)
    [[obj]] = _query(
        "SELECT min(object) FROM iceberg.poolsight.object_pane WHERE source = ? AND pool = 'BP1'", (member,)
    )
    [[ws, we]] = _query(
        "SELECT min(window_start), min(window_end) FROM iceberg.poolsight.sim_curve_latest "
        "WHERE source = ? AND pool = 'BP1'",
        (member,),
    )
    return {
        "source": member, "pool": "BP1", "object": obj, "since": now - timedelta(days=1),
        "start": now - timedelta(days=1), "end": now + timedelta(hours=1), "window_start": ws, "window_end": we,
        "at": None, "window_ms": 600_000, "offset_ms": 3_600_000, "group_name": "DSG1", "gbp": "GBP1",
        "grain": "interval", "window_s": WINDOW_MINUTES * 60,
        # compare's ranges: a day from the rollups, then the panes on
        "range": 0, "hours_start": now - timedelta(days=2), "hours_end": now - timedelta(days=1),
        "panes_start": now - timedelta(days=1), "panes_end": now + timedelta(hours=1),
    }  # fmt: skip


def _download(page: Page, table_id: str) -> list[dict[str, str]]:
    """A table's CSV download, read back."""
    with page.expect_download() as dl:
        page.click(f'button[data-csv="{table_id}"]')
    return list(csv.DictReader(Path(dl.value.path()).read_text().splitlines()))


def _num(v: Any) -> float | None:
    """A CSV cell's (or a row's) number; empty: none."""
    return None if v in ("", None) else float(v)


def test_statistics_pages_show_and_download_what_trino_holds(member: str, tab: Tab, tmp_path: Path) -> None:
    """Backups (seed 003's db2diag.log) and pureScale (seed 004's exports) through the collector and
    the statistics job, the host's memory written straight into system_memory, the mixed member's
    writes: each page draws its chart, and its table downloaded as CSV holds what Trino holds."""
    tag = uuid.uuid4().hex[:8]
    corpus = Path(__file__).parent.parent / "ingest" / "corpus"
    log = tmp_path / "db2diag.log"
    text = (corpus / "db2diag" / "db2diag.log").read_text()
    log.write_text(text.replace("dmcinnis", f"i{tag}"))
    assert poolsight("ingest", "stats", str(log), timeout=120).returncode == 0
    pure = f"PS{tag}"
    for name in ("purescale_bufferpool.csv", "purescale_group.csv"):
        r = poolsight("ingest", "stats", str(corpus / "luw" / name), "--source", pure, "--state-dir", str(tmp_path))
        assert r.returncode == 0, r.stderr
    host = f"M{tag}"
    end = datetime.fromtimestamp(int(time.time()) // 60 * 60, UTC)
    memory = [
        {"source": host, "interval_start": end - timedelta(minutes=5 * (i + 1)),
         "interval_end": end - timedelta(minutes=5 * i), "real_storage_mb": 65536.0,
         "real_storage_available_mb": 4096.0 - 100 * i, "db2_real_storage_mb": 30000.0 + i,
         "pageins_per_second": 0.5 * i, "aux_slots_used": 10 * i}
        for i in range(3)
    ]  # fmt: skip
    gbp_rows.insert("system_memory", memory)
    backups = wait_rows(
        "SELECT database, operation, elapsed_seconds, mbytes FROM iceberg.poolsight.backup_stats WHERE source = ?",
        (f"i{tag}/PERF",),
        2,
    )
    assert len(backups) == 2, backups
    # The thread lines land in backup_thread, committed apart from backup_stats: waited for too.
    lines = sum(1 for line in text.splitlines() if re.match(r"^\d{3}\s", line))
    threads = wait_rows("SELECT kind FROM iceberg.poolsight.backup_thread WHERE source = ?", (f"i{tag}/PERF",), lines)
    assert len(threads) == lines, threads
    pools = wait_rows(
        "SELECT pool, luw_lbp_hit_ratio, gbp_full_per_10k_commits FROM iceberg.poolsight.purescale_summary "
        "WHERE source = ? AND gbp_full_per_10k_commits IS NOT NULL",
        (f"{pure}/0",),
        1,
    )
    assert len(pools) == 1, pools

    page = tab.open(f"/backups?source=i{tag}/PERF&range=1y", shot="backups")
    assert _charts_drawn(page)["backup-chart"] == 2
    got = _download(page, "backups-table")
    shown = sorted((x["database"], x["operation"], _num(x["elapsed_seconds"]), _num(x["mbytes"])) for x in got)
    assert shown == sorted((d, o, _num(e), _num(m)) for d, o, e, m in backups)  # a restore may state no elapsed
    for run in got:
        elapsed, mb = _num(run["elapsed_seconds"]), _num(run["mbytes"])
        assert _num(run["mb_per_s"]) == (None if not elapsed or mb is None else pytest.approx(mb / elapsed))
    assert len(_download(page, "backup-threads-table")) == lines

    page = tab.open(f"/purescale?source={pure}/0&range=1y", shot="purescale")
    [row] = [x for x in _download(page, "purescale-table") if x["gbp_full_per_10k_commits"]]
    assert row["pool"] == pools[0][0]
    assert (float(row["luw_lbp_hit_ratio"]), float(row["gbp_full_per_10k_commits"])) == pytest.approx(
        tuple(pools[0][1:])
    )
    assert _charts_drawn(page)["purescale-hit-chart"] > 0

    page = tab.open(f"/memory?source={host}&range=1h", shot="memory")
    got = _download(page, "memory-table")
    assert [(float(r["real_storage_available_mb"]), float(r["pageins_per_second"])) for r in got] == [
        (m["real_storage_available_mb"], m["pageins_per_second"]) for m in memory
    ]  # newest first, as the table sorts by time
    assert _charts_drawn(page)["memory-chart"] == 9  # 3 intervals x (available, DB2, page-ins)

    page = tab.open(f"/writes?source={member}&range=1y", shot="writes")
    want = _query(
        "SELECT pool, pages_per_write FROM iceberg.poolsight.pool_stats WHERE source = ? AND pages_written IS NOT NULL",
        (member,),
    )
    got = _download(page, "writes-table")
    assert sorted((r["pool"], float(r["pages_per_write"]) if r["pages_per_write"] else None) for r in got) == sorted(
        (p, v) for p, v in want
    )
    assert len(want) > 0 and _charts_drawn(page)["pages-per-write-chart"] == len(want)
    assert tab.errors == []


def test_every_named_query_runs_on_trino_as_its_user(member: str) -> None:
    values = _named_params(member)
    readers = {n for f in READER_FILES for n in load(QUERIES_DIR / f)} | {"advice_latest"}
    ran: set[str] = set()
    for name, q in queries().items():
        user = TRINO_READER_USER if name in readers else None
        try:
            got = trino_rows(load_settings(), q.sql, q.bind({p: values[p] for p in q.params}), user=user)
        except Exception as exc:  # which query failed, not only Trino's message
            raise AssertionError(f"named query {name} as {user or 'the writer'}: {exc}") from exc
        # what `-- sorted by` names is a column of the answer (Query.sort reads it)
        assert set(q.order) <= {c for c, _ in got.columns}, (name, q.order, got.columns)
        ran.add(name)
    assert ran == set(queries()) and len(ran) > 50
    # The alert queries at a given time too (backtests), and the advice ones over every source.
    for name in ("alert_pool_windows", "alert_dead_letters", "alert_newest_pane", "alert_pool_stats_counters"):
        q = queries()[name]
        _query(q.sql, q.bind({p: values[p] for p in q.params} | {"at": datetime.now(UTC)}))
    q = queries()["advice_curves"]
    assert _query(q.sql, q.bind(source=None))


def _dicts(sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    return trino_rows(load_settings(), sql, params, user=TRINO_READER_USER).dicts()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return bool(a == b)


def test_the_pool_pages_curve_is_sim_curve_latest(member: str) -> None:
    """The page's curve and the view are one definition (sql/curve.sql): over the view's window
    the page's query gives the view's rows, column for column."""
    q = query("pool_curve")
    view_sql = "SELECT * FROM iceberg.poolsight.sim_curve_latest WHERE source = ? AND pool = ? ORDER BY size_pages"
    for pool in ("BP1", "BP2"):
        for _ in range(10):  # the jobs may still commit a curve row between two reads: read until stable
            view = _dicts(view_sql, (member, pool))
            assert view, pool
            w = {"window_start": view[0]["window_start"], "window_end": view[0]["window_end"]}
            page = q.sort(_dicts(q.sql, q.bind(source=member, pool=pool, **w)))
            again = _dicts(view_sql, (member, pool))
            if len(again) == len(view) and all(_same(a[k], v[k]) for a, v in zip(again, view, strict=True) for k in v):
                break
            time.sleep(3)
        assert [r["size_pages"] for r in page] == [r["size_pages"] for r in view]
        for p, v in zip(page, view, strict=True):
            diff = {k: (x, v[k]) for k, x in p.items() if not _same(x, v[k])}
            assert not diff, (pool, p["size_pages"], diff)
        assert any(r["is_current"] for r in page) and all(r["panes"] > 0 for r in page)


def test_the_objects_page_is_object_io_cost(member: str) -> None:
    """The objects page's cost columns are object_io_cost's (the view every other reader uses)
    added up per object and basis over the range, read here straight from the view per basis."""
    newest = _dicts("SELECT max(pane_end) AS t FROM iceberg.poolsight.pool_pane WHERE source = ?", (member,))
    end = newest[0]["t"]
    rng = {"source": member, "pool": "BP1", "start": end - timedelta(hours=1), "end": end}
    q = query("objects")
    page = {r["object"]: r for r in _dicts(q.sql, q.bind(**rng))}
    seconds = _dicts(
        "SELECT sum(seconds) AS s FROM iceberg.poolsight.pool_pane "
        "WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?",
        tuple(rng.values()),
    )[0]["s"]
    view: dict[tuple[str, str], dict[str, float | None]] = {}
    for r in _dicts(
        "SELECT object, basis, sync_ios_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start)) AS ios, "
        "cpu_seconds_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start)) AS cpu, "
        "io_elapsed_seconds_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start)) AS io "
        "FROM iceberg.poolsight.object_io_cost WHERE source = ? AND pool = ? "
        "AND interval_start >= ? AND interval_start < ? AND basis IN ('simulated', 'traced')",
        tuple(rng.values()),
    ):
        acc = view.setdefault((r["object"], r["basis"]), {"ios": None, "cpu": None, "io": None})
        for k, v in acc.items():  # SQL's sum: None until a value
            acc[k] = r[k] if v is None else v if r[k] is None else v + r[k]
    assert page and {o for o, _ in view} <= set(page)
    for obj, row in page.items():
        sim, traced = view.get((obj, "simulated")), view.get((obj, "traced"))

        def per(acc: dict[str, float | None] | None, k: str, scale: float = 1.0) -> float | None:
            v = None if acc is None else acc[k]
            return None if v is None else v / seconds * scale

        want = {
            "sync_ios_per_s": per(sim, "ios"),
            "cpu_seconds_per_24h": per(sim, "cpu", 86400),
            "delay_seconds_per_24h": per(sim, "io", 86400),
            "traced_sync_ios_per_s": per(traced, "ios"),
            "traced_delay_seconds_per_24h": per(traced, "io", 86400),
        }
        for k, v in want.items():
            assert row[k] == (None if v is None else pytest.approx(v, rel=1e-9)), (obj, k)
    assert any(r["traced_sync_ios_per_s"] for r in page.values())  # the mixed workload has I/O events
    ranked = [r["sync_ios_per_s"] or 0.0 for r in page.values()]
    assert ranked == sorted(ranked, reverse=True)


def _spsize_expected(member: str) -> list[tuple[Any, ...]]:
    """spsize_check computed here from the tables: per statistics interval of BP2 (SPSIZE 5,000),
    DB2's avoidable sync reads, and the pool-policy curve's sync reads at the current size minus
    at VPSIZE + SPSIZE (a point the job simulates exactly: a KeyError here if it did not), added
    up over the panes whose middle lies in the interval."""
    stats = _query(
        "SELECT interval_start, interval_end, spsize, sim_sync_reads_avoidable_random "
        "FROM iceberg.poolsight.pool_stats WHERE source = ? AND pool = 'BP2' ORDER BY interval_end",
        (member,),
    )
    panes: dict[tuple[datetime, datetime], dict[str, Any]] = {}
    for start, end, size, reads, current in _query(
        "SELECT pane_start, pane_end, size_pages, sync_reads, is_current FROM iceberg.poolsight.sim_curve "
        "WHERE source = ? AND pool = 'BP2' AND pool_policy AND curve = 'sizes'",
        (member,),
    ):
        p = panes.setdefault((start, end), {"reads": {}, "current": None})
        p["reads"][size] = reads
        p["current"] = size if current else p["current"]
    out = []
    for start, end, spsize, db2 in stats:
        mine = [(k, p) for k, p in panes.items() if start <= k[0] + (k[1] - k[0]) / 2 < end]
        span = sum((k[1] - k[0]).total_seconds() for k, _ in mine)
        if abs(span - (end - start).total_seconds()) > 0.01 * (end - start).total_seconds():
            continue
        sim = sum(p["reads"][p["current"]] - p["reads"][p["current"] + spsize] for _, p in mine)
        out.append((end, spsize, db2, sim, sim / db2 - 1 if db2 else None))
    return out


def test_spsize_check_holds_db2s_simulated_pool_against_the_curve(member: str, tab: Tab) -> None:
    """mixed's BP2 has DB2's simulated pool (SPSIZE 5,000): spsize_check per interval equals the
    computation above; the simulation agrees with DB2 (both exact LRU over BP2's random getpages);
    the pool page shows both and the error, and a pool without SPSIZE shows nothing of it."""
    view_sql = (
        "SELECT interval_end, spsize, db2_avoidable_sync_reads, simulated_avoidable_sync_reads, error_ratio "
        "FROM iceberg.poolsight.spsize_check WHERE source = ? AND pool = ? ORDER BY interval_end"
    )
    deadline = time.monotonic() + 180  # the statistics job's intervals and the last panes' curve land
    while True:
        expected, view = _spsize_expected(member), _query(view_sql, (member, "BP2"))
        if (
            len(view) == len(expected) == DURATION // 60 and view[-1][0] == expected[-1][0]
        ) or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert [r[0] for r in view] == [e[0] for e in expected] and len(view) == DURATION // 60
    for v, e in zip(view, expected, strict=True):
        assert (v[1], v[2]) == (e[1], e[2]) == (5000, e[2])
        assert v[3] == pytest.approx(e[3], rel=1e-9, abs=1e-9)
        assert (v[4] is None) == (e[4] is None) and (v[4] is None or v[4] == pytest.approx(e[4], rel=1e-9, abs=1e-12))
    warm = [v for v in view if v[2] >= 200]
    assert len(warm) >= 2, view  # the pool is warm for the last intervals: DB2 counts avoidable reads
    for v in warm:
        assert abs(v[4]) <= 0.02, v
    assert _query(view_sql, (member, "BP1")) == []
    page = tab.open(f"/pool?source={member}&pool=BP2&range=1h", shot="pool-spsize")
    last = view[-1]
    assert page.inner_text("#spsize-kv dd[data-key=spsize]") == "5,000 (simulated pool of 20,000)"
    assert page.inner_text("#spsize-kv dd[data-key=db2_avoidable_sync_reads]") == f"{last[2]:,}"
    assert page.inner_text("#spsize-kv dd[data-key=simulated_avoidable_sync_reads]") == f"{last[3]:,.1f}"
    sign = "+" if last[4] >= 0 else ""
    assert page.inner_text("#spsize-kv dd[data-key=error_ratio]") == f"{sign}{100 * last[4]:,.1f} %"
    db2, sim = sum(v[2] for v in view), sum(v[3] for v in view)
    assert page.inner_text("#spsize-kv dd[data-key=range]").startswith(f"{db2:,} / {sim:,.1f} (")
    tab.open(f"/pool?source={member}&pool=BP1&range=1h")
    assert tab.page.locator("#spsize").count() == 0
    assert tab.errors == []


def test_named_queries_answer_what_the_loaded_data_holds(member: str) -> None:
    for pool in ("BP1", "BP2"):
        [[panes, getpages, newest]] = _query(
            "SELECT count(*), sum(getpages), max(pane_end) FROM iceberg.poolsight.pool_pane "
            "WHERE source = ? AND pool = ?",
            (member, pool),
        )
        now = datetime.now(UTC)
        rng = {"source": member, "pool": pool, "start": now - timedelta(days=1), "end": now + timedelta(hours=1)}
        # compare's sums of a range from the panes only (its rollup interval empty): a row each.
        parts = {"hours_start": now, "hours_end": now, "panes_start": rng["start"], "panes_end": rng["end"]}
        sql, params = query("compare_sums").union_all([{"range": 7, "source": member, "pool": pool, **parts}])
        sums = _query(sql, params, user=TRINO_READER_USER)
        assert sorted((r[0], r[1] or 0, r[2] or 0) for r in sums) == [(7, 0, 0), (7, panes, getpages)]
        q = query("pool_series")
        assert len(_query(q.sql, q.bind(rng), user=TRINO_READER_USER)) == panes
        q = query("newest_pane")
        [[t]] = _query(q.sql, q.bind(source=member, pool=pool, since=now - timedelta(days=1)), user=TRINO_READER_USER)
        assert t == newest
    q = query("demo_summary")
    summary = {r[1]: r for r in _query(q.sql, q.bind(source=member))}
    assert set(summary) >= {"BP1", "BP2"}
    for pool, r in summary.items():
        [[panes, getpages]] = _query(
            "SELECT count(*), sum(getpages) FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = ?",
            (member, pool),
        )
        assert (r[3], r[4]) == (panes, getpages)
    [[all_panes]] = _query("SELECT count(*) FROM iceberg.poolsight.pool_pane")  # before: panes only come
    q = query("table_freshness")
    fresh = {r[0]: r for r in _query(q.sql, q.bind(), user=TRINO_READER_USER)}
    assert fresh["pool_pane"][2] >= all_panes > 0


def _pool_page(member: str, pool: str, since: datetime, read: Any) -> dict[str, Any]:
    return dq.pool(read, member, pool, TimeRange(timedelta(hours=1), None, None), now=since + RECENT_GUESS)


def test_the_page_tables_are_what_the_pool_pages_statements_answer(member: str) -> None:
    """The maintenance service's page tables (sql/pages.py), refreshed here, hold for each pool
    what pool_anchor and pool_curve answer it, column for column, and a page that reads them
    equals the page read from the panes; after a pane committed after the refresh, the page (its
    anchor through the row, its curve from pool_curve) still equals the page read from the panes
    and shows that pane. The tables are emptied after: the stack's later tests run no keeper."""
    try:
        _check_page_tables(member)
    finally:
        with trino_connection(load_settings()) as conn:
            for name in pages.PAGE_TABLES:
                fetch(conn.cursor(), f"DELETE FROM {SCHEMA}.{name}")


def _check_page_tables(member: str) -> None:
    s = load_settings()
    read: Any = Reader(s).run

    def panes_only(sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        return [] if sql == query("pool_page_row").sql else read(sql, params)  # no page table: the statements

    # A page reads from its guess only where the hourly rollups reach a day past it (else from
    # a day before the newest rolled hour, and the page tables do not hold that): roll the pools up.
    with trino_connection(s) as conn:
        run_rollups(conn.cursor(), rollups=(POOL,))
    since = page_since()
    for _ in range(10):  # the jobs may commit between the refresh and the reads: refresh until none did
        with trino_connection(s) as conn:
            pages.refresh(conn.cursor())
        rows = {p: dq.page_row(read, member, p, since) for p in ("BP1", "BP2")}
        anchors = {p: dq.ask(read, "pool_anchor", source=member, pool=p, since=since, window_s=WINDOW_S) for p in rows}
        fresh = all(r is not None and dq.current(r) for r in rows.values())
        if fresh and rows == {p: dq.page_row(read, member, p, since) for p in rows}:
            break
        time.sleep(3)
    for pool, row in rows.items():
        assert row is not None and dq.current(row), pool
        anchor = anchors[pool][0]
        diff = {k: (row[k], v) for k, v in anchor.items() if not _same(row[k], v)}
        assert not diff, (pool, diff)
        # The table's own row (pool_page_row reads the panes' and accuracy's part now) is the anchor too.
        sql = f"SELECT * FROM {SCHEMA}.pool_page WHERE source = ? AND pool = ? AND since = ?"
        [own] = read(sql, (member, pool, since))
        diff = {k: (own[k], v) for k, v in anchor.items() if not _same(own[k], v)}
        assert not diff, (pool, diff)
        assert own["since"] == since and row["latest_pane_end"] is not None and row["panes"] >= 7
        end = row["latest_pane_end"]
        w = {"window_start": end - timedelta(seconds=WINDOW_S), "window_end": end}
        table = dq.ask(read, "pool_curve_page", source=member, pool=pool)
        asked = dq.ask(read, "pool_curve", source=member, pool=pool, **w)
        assert [r["size_pages"] for r in table] == [r["size_pages"] for r in asked] and len(table) >= 3
        for t, a in zip(table, asked, strict=True):
            diff = {k: (x, a[k]) for k, x in t.items() if not _same(x, a[k])}
            assert not diff, (pool, t["size_pages"], diff)
        fast, slow = _pool_page(member, pool, since, read), _pool_page(member, pool, since, panes_only)
        assert fast["page_tables"] is True and slow["page_tables"] is False
        for key in ("attributes", "settings", "curve", "measured_at_current", "accuracy", "series", "mix"):
            assert fast[key] == slow[key] or _deep_same(fast[key], slow[key]), (pool, key)

    # A pane after the refresh (a copy of the newest, a minute later, as bench-history commits):
    # the row is behind it; the page reads the panes' part of its anchor and its curve now.
    end = rows["BP1"]["latest_pane_end"]  # type: ignore[index]
    _copy_pane(member, "BP1", end)
    behind = dq.page_row(read, member, "BP1", since)
    assert behind is not None and not dq.current(behind)
    assert (behind["page_pane_end"], behind["latest_pane_end"]) == (end, end + timedelta(minutes=1))
    page, slow = _pool_page(member, "BP1", since, read), _pool_page(member, "BP1", since, panes_only)
    assert page["page_tables"] is True and page["attributes"]["latest_pane_end"] == end + timedelta(minutes=1)
    for key in ("attributes", "settings", "curve", "measured_at_current", "accuracy", "series", "mix"):
        assert page[key] == slow[key] or _deep_same(page[key], slow[key]), key

    # The maintenance service's keeper refreshes when it starts, and again when it sees a commit in
    # the JDBC catalog: the row holds each new pane, and the page reads it.
    keeper = pages.PageKeeper(s, every=0)
    keeper.start()
    try:
        for newest in (end + timedelta(minutes=1), end + timedelta(minutes=2)):
            if newest > end + timedelta(minutes=1):
                _copy_pane(member, "BP1", newest - timedelta(minutes=1))
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                row = dq.page_row(read, member, "BP1", since)
                if row is not None and dq.current(row) and row["latest_pane_end"] == newest:
                    break
                time.sleep(1)
            assert row is not None and dq.current(row) and row["latest_pane_end"] == newest, (newest, keeper.state)
            assert _pool_page(member, "BP1", since, read)["page_tables"] is True
    finally:
        keeper.stop()
    assert keeper.state.refreshes >= 2 and keeper.state.error is None, keeper.state
    # The keeper's hourly expiry leaves the newest version whole (and its snapshots under an hour).
    with trino_connection(s) as conn:
        pages.expire(conn.cursor())
    row = dq.page_row(read, member, "BP1", since)
    assert row is not None and dq.current(row) and row["latest_pane_end"] == end + timedelta(minutes=2)


def _copy_pane(member: str, pool: str, end: datetime) -> None:
    """A copy of the pool's pane ending at `end`, a minute later, committed to pool_pane."""
    cols = list(POOL_PANE.column_names())
    shifted = [f"{c} + INTERVAL '1' MINUTE" if c in ("pane_start", "pane_end") else c for c in cols]
    with trino_connection(load_settings()) as conn:
        fetch(
            conn.cursor(),
            f"INSERT INTO {POOL_PANE.qualified} ({', '.join(cols)}) SELECT {', '.join(shifted)} "
            f"FROM {POOL_PANE.qualified} WHERE source = ? AND pool = ? AND pane_end = ?",
            (member, pool, end),
        )


def _deep_same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_same(x, y) for x, y in zip(a, b, strict=True))
    return _same(a, b)
