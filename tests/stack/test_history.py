"""Rollups, retention and compaction against the real Trino and Iceberg: after the panes expire,
the totals per pool per day from the rollups equal those of the panes before they went.

The panes are synthetic, in January 2000 (no other test writes that far back), with values
from formulas, so the truth is computed here, independently of Trino. Retention runs with a
`now` in January 2000, and the clock that tells it when the files came is noted at such times
too, so only these panes are old enough to go.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from poolsight.infra.config import load_settings
from poolsight.infra.services import health_maintenance
from poolsight.infra.trino import trino_connection
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.retention import Retention, apply_retention, day_sequences, finish, log_step, record_clock
from poolsight.sql.rollup import rollup_of, run_rollups
from poolsight.sql.rollups import POOL, ROLLUPS, TABLE_CLOCK
from tests.conftest import poolsight
from tests.stack.conftest import metadata_files, query

pytestmark = [pytest.mark.usefixtures("stack")]

SOURCE = "HIST"
POOLS = ("BP1", "BP2")
OBJECTS = ("DB.TS1", "DB.TS2", "DB.IX1")
DAY0 = datetime(2000, 1, 1, tzinfo=UTC)
DAYS = 5
PANES = DAYS * 1440
SIZES = (1000, 2000, 4000)


def mod(a: int, b: int) -> int:
    """Trino's % (the dividend's sign), for panes before DAY0."""
    return a - b * int(a / b)


def getpages(i: int, p: int) -> int:
    return 1000 + mod(i, 97) * 3 + 50 * p


def obj_getpages(i: int, p: int, o: int) -> int:
    return 100 + mod(i * (o + 1), 13) + p


def sync_reads(i: int, p: int) -> int:
    return mod(i, 11) + p


def hits(i: int, p: int, z: int) -> float:
    return float(getpages(i, p) - 200 + 50 * z)


def _exec(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    return query(sql, params)


def _insert_panes(first: int, last: int, second: int = 0) -> None:
    """Panes first..last (minute indexes from DAY0) of every pool, object, size and table;
    `second`: starting that many seconds into their minute (other panes of the same values)."""
    seq = f"UNNEST(sequence({first}, {last})) AS s(i)"
    pools = "UNNEST(ARRAY['BP1', 'BP2'], ARRAY[0, 1]) AS q(pool, p)"
    t = f"TIMESTAMP '2000-01-01 00:00:{second:02d} UTC' + i * INTERVAL '1' MINUTE"
    gp = "1000 + (i % 97) * 3 + 50 * p"
    _exec(
        f"INSERT INTO {BY_NAME['pool_pane'].qualified} (source, pool, pane_start, pane_end, seconds, getpages, "
        "getpages_random, observed_hits, observed_misses, observed_sync_reads, sim_sync_reads, sim_hit_ratio, "
        "working_set_pages, current_size, cpu_us_per_sync_read) "
        f"SELECT '{SOURCE}', pool, {t}, {t} + INTERVAL '1' MINUTE, 60e0, {gp}, {gp} / 2, {gp} - (i % 11) - p, "
        f"(i % 11) + p, (i % 11) + p, 1e0 * ((i % 11) + p), 0.5e0, i % 500, 4000, 30e0 FROM {seq} CROSS JOIN {pools}"
    )
    objs = "UNNEST(ARRAY['DB.TS1', 'DB.TS2', 'DB.IX1'], ARRAY[0, 1, 2]) AS b(object, o)"
    _exec(
        f"INSERT INTO {BY_NAME['object_pane'].qualified} (source, pool, object, pane_start, pane_end, seconds, "
        "getpages, sim_sync_reads, sim_hit_ratio, cpu_us_per_sync_read) "
        f"SELECT '{SOURCE}', pool, object, {t}, {t} + INTERVAL '1' MINUTE, 60e0, 100 + (i * (o + 1)) % 13 + p, "
        f"1e0, 0.5e0, 30e0 FROM {seq} CROSS JOIN {pools} CROSS JOIN {objs}"
    )
    sizes = "UNNEST(ARRAY[1000, 2000, 4000], ARRAY[0, 1, 2]) AS z(size_pages, zi)"
    _exec(
        f"INSERT INTO {BY_NAME['sim_curve'].qualified} (source, pool, pane_start, pane_end, seconds, size_pages, "
        "refs, hits, misses, sync_reads, model, curve, pool_policy, is_current, size_factor) "
        f"SELECT '{SOURCE}', pool, {t}, {t} + INTERVAL '1' MINUTE, 60e0, size_pages, {gp}, "
        f"1e0 * ({gp} - 200 + 50 * zi), 1e0 * (200 - 50 * zi), 1e0, 'lru-vpseqt', 'sizes', true, size_pages = 2000, "
        "size_pages / 2000e0 "
        f"FROM {seq} CROSS JOIN {pools} CROSS JOIN {sizes}"
    )


def _truth(first: int, last: int) -> dict[str, dict[tuple[Any, ...], float]]:
    """Per pool and day (and object, and size): the sums the rollups must hold."""
    out: dict[str, dict[tuple[Any, ...], float]] = defaultdict(lambda: defaultdict(float))
    for i in range(first, last + 1):
        day = (DAY0 + timedelta(minutes=i)).date().isoformat()
        for p, pool in enumerate(POOLS):
            out["getpages"][(pool, day)] += getpages(i, p)
            out["sync_reads"][(pool, day)] += sync_reads(i, p)
            out["panes"][(pool, day)] += 1
            for o, obj in enumerate(OBJECTS):
                out["object_getpages"][(pool, obj, day)] += obj_getpages(i, p, o)
            for z, size in enumerate(SIZES):
                out["hits"][(pool, size, day)] += hits(i, p, z)
    return out


def _rolled(grain: str) -> dict[str, dict[tuple[Any, ...], float]]:
    table = {r.stem: r.table(grain).qualified for r in ROLLUPS}
    day = "format_datetime(period_start, 'yyyy-MM-dd')" if grain == "day" else None
    out: dict[str, dict[tuple[Any, ...], float]] = defaultdict(lambda: defaultdict(float))
    d = day or "format_datetime(date_trunc('day', period_start), 'yyyy-MM-dd')"
    for pool, dd, g, sr, n in _exec(
        f"SELECT pool, {d}, sum(getpages), sum(observed_sync_reads), sum(source_rows) FROM {table['pool']} "
        "WHERE source = ? GROUP BY 1, 2",
        (SOURCE,),
    ):
        out["getpages"][(pool, dd)] = g
        out["sync_reads"][(pool, dd)] = sr
        out["panes"][(pool, dd)] = n
    for pool, obj, dd, g in _exec(
        f"SELECT pool, object, {d}, sum(getpages) FROM {table['object']} WHERE source = ? GROUP BY 1, 2, 3", (SOURCE,)
    ):
        out["object_getpages"][(pool, obj, dd)] = g
    for pool, size, dd, h in _exec(
        f"SELECT pool, size_pages, {d}, sum(hits) FROM {table['curve']} WHERE source = ? GROUP BY 1, 2, 3", (SOURCE,)
    ):
        out["hits"][(pool, size, dd)] = h
    return out


def _same(a: dict[str, dict[tuple[Any, ...], float]], b: dict[str, dict[tuple[Any, ...], float]]) -> None:
    assert set(a) == set(b)
    for k in a:
        assert dict(a[k]) == pytest.approx(dict(b[k])), k


@pytest.fixture(scope="module")
def clean() -> Iterator[None]:
    for t in (
        *(r.source for r in ROLLUPS),
        *(r.table(g) for r in ROLLUPS for g in ("hour", "day")),
        *(r.retired(g) for r in ROLLUPS for g in ("hour", "day")),
    ):
        _exec(f"DELETE FROM {t.qualified} WHERE source = ?", (SOURCE,))
    yield
    # The clock noted in January 2000 would make a later retention at today's date take every
    # file before it for old (the tests after this one run it so).
    _exec(f"DELETE FROM {TABLE_CLOCK.qualified} WHERE observed_at < ?", (datetime(2002, 1, 1, tzinfo=UTC),))


def _panes_left() -> int:
    return int(_exec(f"SELECT count(*) FROM {BY_NAME['pool_pane'].qualified} WHERE source = ?", (SOURCE,))[0][0])


def _no_column_sketches(table: str, since: float) -> None:
    """Trino wrote `table` since `since` (epoch s; the rollups' MERGE) without collecting column
    sketches on write: its current metadata file, as the disk holds it, lists no statistics file
    for a snapshot committed since, and the folder holds none written since (a test warehouse
    kept from an earlier session may hold older ones). Collected, each write read and rewrote a
    Puffin file and added an entry per column to the metadata file for every snapshot kept
    (services.trino_catalog_properties)."""
    # Trino's effective default for every session (the catalog's setting), then what it wrote.
    [[_, value, default, *_]] = query("SHOW SESSION LIKE 'iceberg.collect_extended_statistics_on_write'")
    assert (value, default) == ("false", "false")
    files = metadata_files(BY_NAME[table])
    current = json.loads(max(files, key=lambda f: f.stat().st_mtime).read_text())
    ours = {s["snapshot-id"] for s in current["snapshots"] if s["timestamp-ms"] >= since * 1000}
    assert len(ours) >= 2, current["snapshots"]  # written twice by the rollups above
    assert [x for x in current.get("statistics", []) if x["snapshot-id"] in ours] == [], current["statistics"][:1]
    assert [f for f in files[0].parent.glob("*.stats") if f.stat().st_mtime >= since] == []


def test_rollups_keep_the_daily_totals_after_the_panes_expire(clean: None) -> None:
    started = time.time()
    s = load_settings()
    last = PANES - 1 - 600  # the last 10 hours come later: a second, incremental run
    _insert_panes(0, last)
    keep2 = Retention(pane_days=2, hour_months=None)
    with trino_connection(s) as conn:
        cur = conn.cursor()
        run_rollups(cur)
        _same(_rolled("day"), _truth(0, last))
        _insert_panes(last + 1, PANES - 1)
        runs = {r.rollup: r for r in run_rollups(cur)}
        # Only what the new files span is recomputed: their hours, not the first days'.
        assert runs["pool_hour"].period_from is not None and runs["pool_hour"].period_from >= DAY0 + timedelta(
            minutes=last + 1 - 60
        )
        truth = _truth(0, PANES - 1)
        _same(_rolled("day"), truth)
        _same(_rolled("hour"), truth)  # the hours, added up per day
        _no_column_sketches(POOL.table("hour").name, started)
        again = run_rollups(cur)  # nothing new: nothing recomputed, nothing doubled
        assert all(r.files == 0 for r in again if r.rollup in ("pool_hour", "object_hour", "curve_hour"))
        _same(_rolled("day"), truth)
        rolled = {rollup_of(x.rollup).source.name: x.sequence_number for x in again}

        # A maintenance cycle on 3 January notes where each table stands (its files came by then).
        apply_retention(cur, keep2, DAY0 + timedelta(days=2, hours=12), rolled)
        assert _panes_left() == 2 * PANES
        # On 6 January keeping 2 days of panes: 1 to 3 January go, their rollups stay.
        report = apply_retention(cur, keep2, DAY0 + timedelta(days=5, hours=12), rolled)
    assert {x["table"] for x in report if x.get("rows")} >= {"pool_pane", "object_pane", "sim_curve"}
    first = _exec(f"SELECT min(pane_start) FROM {BY_NAME['pool_pane'].qualified} WHERE source = ?", (SOURCE,))[0][0]
    assert first == DAY0 + timedelta(days=3)
    _same(_rolled("day"), truth)
    _same(_rolled("hour"), truth)
    kept = _exec(f"SELECT count(*), sum(getpages) FROM {POOL.retired('hour').qualified} WHERE source = ?", (SOURCE,))[0]
    want = sum(v for (_, d), v in truth["getpages"].items() if d < "2000-01-04")
    assert kept == [2 * 3 * 24, want]  # 1 to 3 January's hours, kept as they were

    # Compaction and snapshot expiry of the rollups and the panes change no total.
    r = poolsight("maintain", "--tables", "pool_pane,pool_hour,pool_day,object_day", "--retain", "0s", timeout=600)
    assert r.returncode == 0, r.stderr
    _same(_rolled("day"), truth)
    assert _rolled("hour")["getpages"] == pytest.approx(truth["getpages"])


def _late_truth() -> dict[str, dict[tuple[Any, ...], float]]:
    """The formulas' sums with the late panes the tests below add: one 30 s into 00:10 of
    1 January (whose other panes are gone) and one of 31 December 23:00 (no rollup then)."""
    truth = _truth(0, PANES - 1)
    for k, v in [*_truth(10, 10).items(), *_truth(-60, -60).items()]:
        for kk, vv in v.items():
            truth[k][kk] += vv
    return truth


def test_a_late_pane_of_a_day_whose_panes_are_gone_adds_to_its_rollup(clean: None) -> None:
    """Panes of 1 January are gone (the test before): a new pane of one of its hours adds to
    that hour and day; written again (a replay), it replaces itself; a pane of an hour without
    a rollup (31 December) is rolled up; panes not yet rolled up are never removed."""
    s = load_settings()
    before = _rolled("hour")["getpages"][("BP1", "2000-01-01")]
    _insert_panes(10, 10, second=30)
    _insert_panes(-60, -60)  # 1999-12-31 23:00
    with trino_connection(s) as conn:
        cur = conn.cursor()
        run_rollups(cur)
        truth = _late_truth()
        _same(_rolled("day"), truth)
        _same(_rolled("hour"), truth)
        assert _rolled("day")["getpages"][("BP1", "2000-01-01")] == before + getpages(10, 0)
        # The late pane written again with other values, as the jobs' upsert does: replaced.
        for getpages_, sync_reads_ in ((7, 1), (getpages(10, 0), sync_reads(10, 0))):
            _replay_bp1(DAY0 + timedelta(minutes=10, seconds=30), getpages_, sync_reads_)
            run_rollups(cur)
            assert _rolled("day")["getpages"][("BP1", "2000-01-01")] == before + getpages_
        _same(_rolled("day"), truth)

        # A pane of 4 January written after the rollup ran, noted by the clock on 5 January:
        # retention on 7 January keeping 2 days would remove 4 January, but leaves it until the
        # pane is rolled up.
        seq = {r.rollup: r.sequence_number for r in run_rollups(cur)}
        _insert_panes(3 * 1440 + 5, 3 * 1440 + 5, second=30)
        record_clock(cur, {"pool_pane": day_max(cur)}, DAY0 + timedelta(days=4))
        report = apply_retention(
            cur,
            Retention(pane_days=2, hour_months=None),
            DAY0 + timedelta(days=6, hours=1),
            {"pool_pane": seq["pool_hour"]},
        )
    row = next(x for x in report if x["table"] == "pool_pane")
    assert row["rows"] == 2 * 2 and row["days kept, not rolled up"] == 1, row  # 31 Dec and 1 Jan's late panes went
    # 4 and 5 January and the late pane of 4 January, 2 pools
    assert _panes_left() == 2 * (2 * 1440 + 1)
    truth = _late_truth()
    _same(_rolled("day"), truth)


def _replay_bp1(at: datetime, getpages_: int, sync_reads_: int) -> None:
    pane = BY_NAME["pool_pane"].qualified
    _exec(f"DELETE FROM {pane} WHERE source = ? AND pool = 'BP1' AND pane_start = ?", (SOURCE, at))
    _exec(
        f"INSERT INTO {pane} (source, pool, pane_start, pane_end, seconds, getpages, observed_sync_reads) "
        "VALUES (?, 'BP1', ?, ?, 60e0, ?, ?)",
        (SOURCE, at, at + timedelta(minutes=1), getpages_, sync_reads_),
    )


def day_max(cur: Any) -> int:
    """pool_pane's newest data sequence number."""
    days = day_sequences(cur, (BY_NAME["pool_pane"],))["pool_pane"]
    assert days
    return max(days.values())


def test_a_removal_that_died_half_way_is_finished_by_the_next_pass(clean: None) -> None:
    """4 January's panes are being removed (logged `pending`, nothing done yet, as when the
    maintenance service is killed there): a rollup leaves that day alone, even for a pane that
    comes meanwhile, and the next pass finishes the removal with every pane counted."""
    s = load_settings()
    d4 = DAY0 + timedelta(days=3)
    with trino_connection(s) as conn:
        cur = conn.cursor()
        run_rollups(cur)
        truth = _late_truth()
        for k, v in _truth(3 * 1440 + 5, 3 * 1440 + 5).items():  # the late pane of 4 January, rolled up
            for kk, vv in v.items():
                truth[k][kk] += vv
        _same(_rolled("day"), truth)
        log_step(cur, "pool_pane", d4, d4 + timedelta(days=1), "pending")
        _insert_panes(3 * 1440 + 7, 3 * 1440 + 7, second=30)
        runs = {r.rollup: r for r in run_rollups(cur)}
        assert runs["pool_hour"].skipped == 1, runs["pool_hour"]
        hour = _exec(
            f"SELECT sum(source_rows) FROM {POOL.table('hour').qualified} WHERE source = ? AND period_start = ?",
            (SOURCE, d4),
        )[0][0]
        assert hour == 2 * (60 + 1)  # not yet the new pane
        done = finish(cur)
    assert [(x["table"], x["finished"]) for x in done] == [("pool_pane", "pending")]
    assert done[0]["rows"] == 2 * (1440 + 2)
    for k, v in _truth(3 * 1440 + 7, 3 * 1440 + 7).items():
        for kk, vv in v.items():
            truth[k][kk] += vv
    got = _rolled("day")
    assert got["getpages"] == pytest.approx(truth["getpages"]) and got["panes"] == pytest.approx(truth["panes"])
    assert _exec(
        f"SELECT count(*) FROM {BY_NAME['pool_pane'].qualified} WHERE source = ? AND pane_start < ?",
        (SOURCE, d4 + timedelta(days=1)),
    ) == [[0]]


def test_the_dashboard_reads_panes_hours_or_days_by_the_range_and_they_agree(clean: None) -> None:
    """The pool and objects pages over the test's history (panes of 5 January left, rollups
    of every day): each range at its grain, totals against the formulas."""
    from poolsight.dashboards import queries
    from poolsight.dashboards.server import Reader
    from poolsight.dashboards.timerange import RANGES, TimeRange

    run = Reader(load_settings()).run
    keep = Retention(pane_days=2, hour_months=None)
    now = DAY0 + timedelta(days=6, hours=1)
    # With the late panes of the tests before: 31 December, 1 and 4 (two) January.
    truth = _late_truth()
    for i in (3 * 1440 + 5, 3 * 1440 + 7):
        for k, v in _truth(i, i).items():
            for kk, vv in v.items():
                truth[k][kk] += vv
    keys: set[str] = set()
    for name, grain, days in (("24h", "pane", ["2000-01-05"]), ("7d", "hour", None), ("90d", "day", None)):
        page = queries.pool(run, SOURCE, "BP1", TimeRange(RANGES[name], None, None), retention=keep, now=now)
        assert page["grain"] == grain, name
        series = page["series"]
        got = sum(r["getpages_per_s"] * r["seconds"] for r in series)
        want = sum(v for (pool, d), v in truth["getpages"].items() if pool == "BP1" and (days is None or d in days))
        assert got == pytest.approx(want), name
        keys = keys or set(series[0])
        assert set(series[0]) == keys, name  # the page's charts read the same columns at every grain
        assert page["mix"]["getpages"] == pytest.approx(want), name
    # compare over ranges of whole days longer than the panes answer: from the hourly rollups
    from poolsight.sql.compare import compare

    a, b = DAY0 - timedelta(days=1), DAY0 + timedelta(days=3)
    ra, rb = compare(SOURCE, "BP2", [(a, b), (b, b + timedelta(days=3))], retention=keep)
    bp2 = {d: v for (pool, d), v in truth["getpages"].items() if pool == "BP2"}
    assert ra["getpages"] == sum(v for d, v in bp2.items() if d < "2000-01-04")
    assert ra["panes"] == 2 + 3 * 1440 and rb["panes"] == 2 + 2 * 1440
    assert rb["getpages"] == sum(v for d, v in bp2.items() if d >= "2000-01-04")
    assert ra["curve"] and set(ra["curve"]) == set(rb["curve"])
    objs = queries.objects(run, SOURCE, "BP1", TimeRange(RANGES["7d"], None, None), retention=keep, now=now)
    assert objs["grain"] == "hour"
    got_objects = {r["object"]: r["getpages"] for r in objs["objects"]}
    assert got_objects == {
        o: pytest.approx(sum(v for (pool, obj, _), v in truth["object_getpages"].items() if pool == "BP1" and obj == o))
        for o in OBJECTS
    }


def test_the_maintenance_service_runs_and_reports_its_cycles() -> None:
    """The launcher started it with the stack; its first cycle runs at once."""
    import time

    deadline = time.monotonic() + 180
    while True:
        beat = health_maintenance(load_settings())  # Unhealthy if its last cycle failed
        if not beat.startswith("cycle 0:") or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert beat.startswith("cycle ") and not beat.startswith("cycle 0:"), beat
