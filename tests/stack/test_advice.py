"""Advice from the running system: the statistics job stores the host's memory, `poolsight advise
--evaluate` reads the simulation's curves and statistics from Trino and writes `advice`, and
`advice_latest` shows the latest evaluation to the read-only user. Checked against the tables
read here and a brute-force budget over the same curves; a paging host then gets no growth."""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from poolsight.advice.budget import PoolCurve, brute_force
from poolsight.infra.config import load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.names import TRINO_READER_USER
from tests.advice.test_scenarios import SCENARIO
from tests.conftest import poolsight
from tests.stack.conftest import query, wait_simulated

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

DURATION = 300
BUDGET = 20000
COMMAND = re.compile(
    r"^(-ALTER BUFFERPOOL\(BP\w+\)( [A-Z]+\([0-9A-Z,]+\))+|ALTER (TABLESPACE|INDEX) [\w.~$#@-]+ BUFFERPOOL BP\w+)$"
)


@pytest.fixture(scope="module")
def member(jobs: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int, int, Path]:
    """The advice scenario (a scan beside OLTP in BP1, a pool-resident BP4, the host's memory) in
    Kafka, and the same workload as files for `poolsight advise DIR`: (member, intervals, getpages, dir)."""
    name = f"AD{uuid.uuid4().hex[:6].upper()}"
    sc = json.loads(json.dumps(SCENARIO)) | {"members": [name]}
    work = tmp_path_factory.mktemp("advice")
    path = work / "scenario.yaml"
    path.write_text(yaml.safe_dump(sc))
    start = (int(time.time()) // 60) * 60 - DURATION - 120
    common = ["--start-time", str(start), "--duration", str(DURATION), "--event-rate", "4000", "--seed", "13"]
    r = poolsight("generate", str(path), *common)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    files = poolsight("generate", str(path), *common, "--output", str(work / "files"))
    assert files.returncode == 0, files.stderr
    deadline, seen, memory = time.monotonic() + 300, -1, -1
    while time.monotonic() < deadline:
        [[seen]] = query("SELECT coalesce(sum(getpages), 0) FROM iceberg.poolsight.pool_pane WHERE source = ?", (name,))
        [[memory]] = query("SELECT count(*) FROM iceberg.poolsight.system_memory WHERE source = ?", (name,))
        if seen == out["getpages"] and memory == out["intervals"]:
            break
        time.sleep(3)
    assert seen == out["getpages"], f"{seen} of {out['getpages']} getpages in pool_pane"
    assert memory == out["intervals"], f"{memory} system_memory rows for {out['intervals']} intervals"
    # What the advisor and these tests read lands table by table (a committer each): all of it first.
    wait_simulated(name, out["getpages"])
    pools = {p for [p] in query("SELECT DISTINCT pool FROM iceberg.poolsight.pool_pane WHERE source = ?", (name,))}
    sql = "SELECT pool, count(DISTINCT interval_start) FROM iceberg.poolsight.pool_stats WHERE source = ? GROUP BY 1"
    until = time.monotonic() + 60
    while True:
        stats = {str(p): int(n) for p, n in query(sql, (name,))}
        if all(stats.get(p) == out["intervals"] for p in pools) or time.monotonic() > until:
            break
        time.sleep(2)
    assert all(stats.get(p) == out["intervals"] for p in pools), f"pool_stats intervals per pool: {stats}"
    return name, out["intervals"], out["getpages"], work / "files"


def _evaluate(name: str, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "advice.json"
    r = poolsight("advise", "--evaluate", "--source", name, "--budget-buffers", str(BUDGET), "--json", str(out))
    assert r.returncode == 0, r.stderr
    return dict(json.loads(out.read_text()))


def _curves(name: str) -> list[PoolCurve]:
    """Each pool's curve as sim_curve_latest shows it, read here."""
    rows = query(
        "SELECT pool, size_pages, sync_reads_per_s, is_current, sync_read_ms FROM iceberg.poolsight.sim_curve_latest "
        "WHERE source = ? ORDER BY pool, size_pages",
        (name,),
    )
    out = []
    for pool in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == pool]
        [current] = [int(r[1]) for r in mine if r[3]]
        ms = next((r[4] for r in mine if r[4] is not None), 1.0)  # the advisor's default: 1 ms
        out.append(
            PoolCurve(pool, current, 1, tuple(int(r[1]) for r in mine), tuple(float(r[2]) for r in mine), ms / 1e3)
        )
    return out


def test_advice_is_written_from_the_tables_and_its_budget_is_optimal(
    member: tuple[str, int, int, Path], tmp_path: Path
) -> None:
    name, _, _, files = member
    doc = _evaluate(name, tmp_path)
    budget = doc["budget"]
    curves = _curves(name)
    # The value the allocation claims is the curves' own, and no combination of the simulated sizes
    # does better (the advisor's candidates include those sizes and a grid between them).
    value = sum(
        (c.sync_at(c.current) - c.sync_at(c.current + budget["allocation"].get(c.key, 0))) * c.sync_io_seconds
        for c in curves
    )
    assert budget["avoided_sync_io_seconds_per_s"] == pytest.approx(value, rel=1e-6)
    best, _ = brute_force(curves, BUDGET, "time")
    assert value >= best - 1e-9
    assert 0 < sum(budget["allocation"].values()) <= BUDGET
    # What the reader sees in advice_latest is what this evaluation wrote, nothing older.
    rows = query(
        "SELECT evaluated_at, pool, kind, command, avoided_sync_reads_per_s FROM iceberg.poolsight.advice_latest "
        "WHERE source = ?",
        (name,),
        user=TRINO_READER_USER,
    )
    assert len({r[0] for r in rows}) == 1
    assert sorted((r[1], r[2]) for r in rows) == sorted((a["pool"], a["kind"]) for a in doc["advice"])
    for a in doc["advice"]:
        for line in a["command"]:
            assert COMMAND.match(line), line
    # Each pool the budget resizes: its budget advice, or a placement that splits the budget's
    # buffers (advice/combine.py); one VPSIZE per pool either way.
    sized = {a["pool"]: a for a in doc["advice"] if a["kind"] == "budget"}
    split = {a["pool"]: a for a in doc["advice"] if a["kind"] == "placement" and "budget" in a["evidence"]}
    assert not set(sized) & set(split)
    assert set(sized) | set(split) == {p for p, n in budget["allocation"].items() if n}
    for pool, a in sized.items():
        assert a["command"] == [f"-ALTER BUFFERPOOL({pool}) VPSIZE({budget['pools'][pool]['size_after']})"]
    for pool, a in split.items():
        after = budget["pools"][pool]["size_after"]
        assert a["evidence"]["budget"]["vpsize"] == after
        assert sum(p["size_after"] for p in a["predicted"]["pools"].values()) == after
    vpsizes: dict[str, list[str]] = {}
    for a in doc["advice"]:
        for line in a["command"]:
            if m := re.match(r"-ALTER BUFFERPOOL\((\w+)\).* VPSIZE\((\d+)\)", line):
                vpsizes.setdefault(m.group(1), []).append(m.group(2))
    assert vpsizes and all(len(v) == 1 for v in vpsizes.values()), vpsizes
    # VPSEQT advice reads the current size at other thresholds from sim_curve, as here.
    for a in (a for a in doc["advice"] if a["kind"] == "vpseqt"):
        v = float(a["command"][0].split("VPSEQT(")[1].rstrip(")"))
        [[per_s]] = query(
            "SELECT sum(c.sync_reads) / sum(c.seconds) FROM iceberg.poolsight.sim_curve c WHERE c.source = ? AND "
            "c.pool = ? AND c.vpseqt = ? AND NOT c.pool_policy AND c.pane_end > (SELECT max(pane_end) - INTERVAL "
            "'15' MINUTE FROM iceberg.poolsight.pool_pane WHERE source = ? AND pool = ?)",
            (name, a["pool"], v, name, a["pool"]),
        )
        assert a["predicted"]["sync_reads_per_s_after"] == pytest.approx(per_s, rel=1e-9)
    # Reading back (no evaluation) prints the same advice.
    r = poolsight("advise", "--source", name, "--json", "-")
    assert r.returncode == 0, r.stderr
    back = json.loads(r.stdout[r.stdout.index("\n{") + 1 :])
    assert sorted((a["pool"], a["kind"]) for a in back["advice"]) == sorted(
        (a["pool"], a["kind"]) for a in doc["advice"]
    )
    assert back["budget"]["allocation"] == budget["allocation"]
    # Placement and FIFO replay the getpages read back from Kafka: the same numbers as the offline
    # replay of the same workload written as files (the window holds the whole run).
    offline = files.parent / "offline.json"
    r = poolsight("advise", str(files), "--json", str(offline))
    assert r.returncode == 0, r.stderr
    off = {(a["pool"], a["kind"]): a for a in json.loads(offline.read_text())["advice"]}
    on = {(a["pool"], a["kind"]): a for a in doc["advice"]}
    for key in (("BP1", "placement"), ("BP4", "pgsteal")):
        assert key in on and key in off, (key, sorted(on), sorted(off))
        # (offline without a budget: the placement as first verified, at today's size)
        mine = on[key]["evidence"].get("at_todays_size", on[key])
        assert mine["command"] == off[key]["command"]
        for k in ("sync_reads_per_s_before", "sync_reads_per_s_after"):
            assert mine["predicted"][k] == pytest.approx(off[key]["predicted"][k], rel=1e-9), (key, k)


def test_a_paging_host_gets_no_growth(member: tuple[str, int, int, Path], tmp_path: Path) -> None:
    name, intervals, _, _ = member
    [[start, end]] = query(
        "SELECT min(interval_start), max(interval_end) FROM iceberg.poolsight.system_memory WHERE source = ?", (name,)
    )
    s = load_settings()
    producer = AvroProducer(kafka_access(s), s.registry_url)
    # The host starts paging in the last interval: 40 page-ins a second.
    last = end - (end - start) / intervals
    producer.send(
        "system_memory",
        name,
        {
            "source": name,
            "interval_start": int(last.timestamp() * 1e6),
            "interval_end": int(end.timestamp() * 1e6),
            "real_storage_mb": 16000.0,
            "real_storage_available_mb": 1200.0,
            "db2_real_storage_mb": None,
            "pageins_per_second": 40.0,
            "aux_slots_used": None,
        },
    )
    producer.flush()
    deadline, n, paging = time.monotonic() + 120, 0, 0.0
    while time.monotonic() < deadline and paging != 40.0:
        [[n, paging]] = query(
            "SELECT count(*), max(pageins_per_second) FROM iceberg.poolsight.system_memory WHERE source = ?", (name,)
        )
        if paging != 40.0:
            time.sleep(2)
    assert (n, paging) == (intervals, 40.0)  # the interval's new record replaced its first (table key)
    doc = _evaluate(name, tmp_path)
    assert doc["budget"]["allocation"] == {}
    assert "40.0 page-ins/s" in doc["budget"]["paging_guard"]
    assert not [a for a in doc["advice"] if a["kind"] in ("budget", "pgfix")]
    kinds = {k for (k,) in query("SELECT kind FROM iceberg.poolsight.advice_latest WHERE source = ?", (name,))}
    assert "budget" not in kinds and kinds  # the earlier growth advice is no longer the latest


def test_recent_getpages_read_on_from_where_the_last_read_ended() -> None:
    """The advice service's reader of recent getpages (advice/recent.py) on the real broker: a
    second evaluation reads only the records written since the first, its windows moved on by
    whole minutes; each trace holds exactly the getpages produced here inside its windows, and
    equals what a reader reading the whole look-back afresh gives."""
    import numpy as np

    from poolsight.advice.recent import RecentGetpages
    from poolsight.ingest.batching import make_batch

    s = load_settings()
    source = f"RG{uuid.uuid4().hex[:6].upper()}"
    producer = AvroProducer(kafka_access(s), s.registry_url)
    rng = np.random.default_rng(5)
    start = (int(time.time()) // 60 - 15) * 60  # a whole minute of event time
    made: list[tuple[str, Any, Any, Any]] = []  # pool, times, objects, pages

    def send(minutes: range, pools: tuple[str, ...] = ("BP1", "BP2")) -> None:
        for m in minutes:
            for pool in pools:
                n = 2000
                t = start + 60 * m + np.sort(rng.integers(0, 60_000_000, n)) / 1e6  # whole µs, as the wire holds them
                obj, pages = rng.integers(0, 3, n), rng.integers(0, 4000, n).astype(np.uint64)
                access = rng.integers(0, 3, n).astype(np.uint8)
                producer.send_batch(
                    make_batch(source, pool, m, t, obj, pages, access, np.zeros(n, np.uint8), names=["X", "Y", "Z"])
                )
                made.append((pool, t, obj, pages))
        producer.flush()

    def expected(windows: dict[tuple[str, str], tuple[datetime, datetime]]) -> list[tuple[str, int, int]]:
        out = []
        for pool, t, _, pages in made:
            if (source, pool) not in windows:
                continue
            lo, hi = (w.timestamp() for w in windows[(source, pool)])
            keep = (t >= lo) & (t < hi)
            out += [(f"{source}/{pool}", round(x * 1e6), int(p)) for x, p in zip(t[keep], pages[keep], strict=True)]
        return sorted(out)

    def got(trace: Any) -> list[tuple[str, int, int]]:
        return sorted(
            (trace.pools[p], round(x * 1e6), int(pg))
            for p, x, pg in zip(trace.pool, trace.times, trace.pages, strict=True)
        )

    def at(m: int) -> datetime:
        return datetime.fromtimestamp(start + 60 * m, UTC)

    send(range(5), ("BP1", "BP2", "BP3"))
    reader = RecentGetpages(s)
    first = {(source, "BP1"): (at(1), at(4)), (source, "BP2"): (at(0), at(5))}
    trace = reader.trace(first, 600)
    assert got(trace) == expected(first) and reader.fresh == 1
    fresh = RecentGetpages(s).trace(first, 600)
    assert fresh is not None and got(fresh) == got(trace)
    send(range(5, 8))
    before = reader.reads
    second = {(source, "BP1"): (at(3), at(7)), (source, "BP2"): (at(2), at(8))}
    trace = reader.trace(second, 600)
    assert reader.fresh == 1 and reader.reads - before == 6  # the 6 batches sent since, nothing else
    assert got(trace) == expected(second)
    assert reader.sample.parts[0][0].min() >= at(2).timestamp()  # what the windows left is gone
    again = RecentGetpages(s).trace(second, 600)
    assert again is not None and got(again) == got(trace)
    assert reader.offsets is not None
    # Pools asked for now: BP3, seen before, from the look-back in its partition, then on from the
    # last read's end; BP4, never seen (its first records came after that end), from there alone.
    send(range(8, 9), ("BP1", "BP2", "BP3", "BP4"))
    before = reader.reads
    third = second | {(source, "BP3"): (at(0), at(9)), (source, "BP4"): (at(0), at(9))}
    trace = reader.trace(third, 600)
    assert (reader.fresh, reader.caught_up) == (1, 1)  # BP3 alone read back
    # The 4 batches sent since, and BP3's 5 before them (with the others in its partition).
    assert reader.reads - before >= 4 + 5
    assert got(trace) == expected(third)
    again = RecentGetpages(s).trace(third, 600)
    assert again is not None and got(again) == got(trace)
    # A window starting before what BP1's reads kept (from its window's start, 3): read afresh.
    back = third | {(source, "BP1"): (at(2), at(7))}
    trace = reader.trace(back, 600)
    assert reader.fresh == 2 and got(trace) == expected(back)
    # Pools asked for neither now nor the time before are no longer collected; the rest go on.
    fourth = {(source, "BP3"): (at(0), at(9)), (source, "BP4"): (at(0), at(9))}
    reader.trace(fourth, 600)
    assert set(reader.keys) == {f"{source}|BP{i}" for i in (1, 2, 3, 4)}  # BP1 and BP2 were asked the time before
    trace = reader.trace(fourth, 600)
    assert set(reader.keys) == {f"{source}|BP3", f"{source}|BP4"} and reader.fresh == 2
    assert got(trace) == expected(fourth)
    # A window off the minute: read afresh, and not kept.
    odd = {(source, "BP1"): (at(3) + timedelta(seconds=30), at(6))}
    trace = reader.trace(odd, 600)
    assert got(trace) == expected(odd) and reader.fresh == 3 and reader.offsets is None
    assert reader.caught_up == 1
