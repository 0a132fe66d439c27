"""Alerts on the real stack: a generated regression (BP1 shrunk for five minutes) opens a sync_reads_up
alert evaluated as of a time inside it and resolves it as of a time after it, with the webhook told both.

Each `poolsight alerts evaluate` is a new process: it finds the alert it resolves by reading the open
alerts back from the table. Rules have names unique to the run, so the launcher's own evaluator (the
shipped rules) and older runs leave these alerts alone; the member name is unique too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, poolsight
from tests.stack import gbp_rows
from tests.stack.conftest import query as _query

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

POOL_PANE = "iceberg.poolsight.pool_pane"
SHRINK_AT, RESTORE_AT, DURATION = 600, 900, 1200  # seconds of event time; day-posting's BP1 has 40,000 buffers


@pytest.fixture(scope="module")
def regression(jobs: None) -> tuple[str, datetime]:
    """A member whose BP1 runs at 2,000 buffers from 600 s to 900 s, all in pool_pane; it and its first pane."""
    member = f"AL{uuid.uuid4().hex[:6].upper()}"
    start = int(time.time()) // 60 * 60 - 2 * 3600  # whole minutes: panes and --at times line up
    r = poolsight(
        "generate", "day-posting", "--members", member, "--seed", "7", "--duration", str(DURATION),
        "--event-rate", "2500", "--start-time", str(start),
        "--alter", f"BP1:VPSIZE=2000@{SHRINK_AT}", "--alter", f"BP1:VPSIZE=40000@{RESTORE_AT}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    produced = int(json.loads(r.stdout.strip().splitlines()[-1])["getpages"])
    deadline, got = time.monotonic() + 300, 0
    while time.monotonic() < deadline and got != produced:
        time.sleep(3)
        got = int(_query(f"SELECT coalesce(sum(getpages), 0) FROM {POOL_PANE} WHERE source = ?", (member,))[0][0])
    assert got == produced, f"{got:,} of {produced:,} getpages reached pool_pane"
    [[first]] = _query(f"SELECT min(pane_start) FROM {POOL_PANE} WHERE source = ?", (member,))
    return member, first


@pytest.fixture
def hook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook receiver on 127.0.0.1: its URL and the bodies it got."""
    got: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/alerts", got
    server.shutdown()
    server.server_close()


def _rate(member: str, start: datetime, end: datetime) -> float:
    """BP1's measured sync reads per second over the panes inside [start, end], straight from pool_pane."""
    [[rate]] = _query(
        f"SELECT sum(observed_sync_reads) / sum(seconds) FROM {POOL_PANE} "
        "WHERE source = ? AND pool = 'BP1' AND pane_start >= ? AND pane_end <= ?",
        (member, start, end),
    )
    return float(rate)


def test_a_regression_opens_an_alert_and_its_end_resolves_it(
    regression: tuple[str, datetime], hook: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    member, t0 = regression
    url, posted = hook
    rule = f"sync_reads_up_{member.lower()}"
    params = {"window": "3m", "baseline_offset": "6m", "increase_pct": 10, "min_rate": 5}
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        json.dumps({"webhook": {"url": url}, "rules": [{"name": rule, "kind": "sync_reads_up", "params": params}]})
    )

    def evaluate(minutes: int) -> list[dict[str, Any]]:
        at = (t0 + timedelta(minutes=minutes)).isoformat()
        r = poolsight("alerts", "evaluate", "--rules", str(rules), "--at", at, "--json", timeout=300)
        assert r.returncode == 0, f"alerts evaluate --at {at}:\n{r.stdout}\n{r.stderr}"
        out = json.loads(r.stdout)
        return [{**a, "op": op} for op in ("opened", "resolved") for a in out[op] if a["source"] == member]

    def rows() -> list[Any]:
        return _query(
            "SELECT alert_id, pool, state, value, baseline, threshold, event_time, resolved_at "
            "FROM iceberg.poolsight.alert WHERE rule = ? AND source = ?",
            (rule, member),
        )

    # Before: panes ending in (6, 9] minutes against (0, 3]: BP1 at its size in both.
    assert evaluate(9) == []
    assert rows() == []

    # During: (11, 14] at 2,000 buffers against (5, 8] at 40,000.
    changes = evaluate(14)
    assert [(c["op"], c["pool"]) for c in changes] == [("opened", "BP1")], changes
    [(alert_id, pool, state, value, baseline, threshold, event_time, resolved_at)] = rows()
    want = _rate(member, t0 + timedelta(minutes=11), t0 + timedelta(minutes=14))
    base = _rate(member, t0 + timedelta(minutes=5), t0 + timedelta(minutes=8))
    assert (alert_id, pool, state, resolved_at) == (changes[0]["alert_id"], "BP1", "open", None)
    assert value == pytest.approx(want, rel=1e-9) and baseline == pytest.approx(base, rel=1e-9)
    assert threshold == pytest.approx(1.1 * base, rel=1e-9) and value > threshold
    assert event_time == t0 + timedelta(minutes=14)
    r = poolsight("alerts", "list", "--json")
    assert r.returncode == 0, r.stderr
    assert alert_id in {a["alert_id"] for a in json.loads(r.stdout)["alerts"]}

    # After: (17, 20] back at 40,000 against (11, 14] shrunk: resolved, by a new evaluator process.
    changes = evaluate(20)
    assert [(c["op"], c["alert_id"]) for c in changes] == [("resolved", alert_id)], changes
    [(aid, _, state, _, _, _, _, resolved_at)] = rows()
    assert (aid, state) == (alert_id, "resolved") and resolved_at is not None

    mine = [(p["event"], p["alert"]["alert_id"], p["alert"]["state"]) for p in posted if p["alert"]["source"] == member]
    assert mine == [("opened", alert_id, "open"), ("resolved", alert_id, "resolved")]


def test_gbp_reclaims_and_failed_writes_open_alerts_and_an_interval_without_them_resolves_them(
    tmp_path: Path,
) -> None:
    """A group's statistics written straight into gbp_stats: an interval with directory reclaims and
    failed writes (the group's own counts) opens both alerts, the next interval with none resolves them."""
    group = f"AG{uuid.uuid4().hex[:6].upper()}"
    member = f"M{group[2:]}"  # its own: other tests' pools are in no group of this test's
    end = datetime.fromtimestamp(int(time.time()) // 60 * 60, UTC)
    first, second = end - timedelta(minutes=10), end - timedelta(minutes=5)
    rows: list[dict[str, Any]] = []
    for start, (reclaims, xi, failed, castout) in ((first, (7, 14, 2, 300)), (second, (0, 0, 0, 250))):
        interval = {
            "gbp": "GBP1",
            "group_name": group,
            "interval_start": start,
            "interval_end": start + (second - first),
        }
        rows.append({**interval, "source": member, "scope": "member", "xi_reads_no_data": 10, "nf_reads_no_data": 20})
        rows.append({
            **interval, "source": member, "scope": "group", "directory_reclaims": reclaims, "xi_due_to_reclaims": xi,
            "write_failed_no_storage": failed, "castout_pages": castout,
        })  # fmt: skip
    gbp_rows.insert("gbp_stats", rows)
    names = {kind: f"{kind}_{group.lower()}" for kind in ("gbp_directory_reclaims", "gbp_writes_failed")}
    rules = tmp_path / "rules.yaml"
    rules.write_text(json.dumps({"rules": [{"name": n, "kind": k} for k, n in names.items()]}))

    def evaluate(at: datetime) -> list[dict[str, Any]]:
        r = poolsight("alerts", "evaluate", "--rules", str(rules), "--at", at.isoformat(), "--json", timeout=300)
        assert r.returncode == 0, f"alerts evaluate --at {at}:\n{r.stdout}\n{r.stderr}"
        out = json.loads(r.stdout)
        return sorted(({**a, "op": op} for op in ("opened", "resolved") for a in out[op] if a["source"] == group),
                      key=lambda a: a["rule"])  # fmt: skip

    opened = evaluate(second)  # the first interval is the newest
    ends = _iso(second)
    assert [(a["op"], a["rule"], a["pool"], a["subject"], a["value"], a["event_time"]) for a in opened] == [
        ("opened", names["gbp_directory_reclaims"], "GBP1", "gbp_stats", 7.0, ends),
        ("opened", names["gbp_writes_failed"], "GBP1", "gbp_stats", 2.0, ends),
    ]
    assert opened[0]["message"] == (
        f"{group}/GBP1: 7 directory reclaims (14 cross-invalidations due to reclaims) in the statistics interval "
        f"ending {second:%Y-%m-%d %H:%M:%S}Z: the GBP has too few directory entries for the pages the members "
        "cache; raise RATIO or the structure size"
    )
    assert opened[1]["message"].startswith(f"{group}/GBP1: 2 writes failed for lack of storage (300 pages cast out)")
    [[state]] = _query(
        "SELECT array_join(array_agg(state), ',') FROM iceberg.poolsight.alert WHERE source = ? AND rule IN (?, ?)",
        (group, *names.values()),
    )
    assert state == "open,open"

    resolved = evaluate(end)  # the second interval, without reclaims or failed writes
    assert [(a["op"], a["alert_id"]) for a in resolved] == [("resolved", a["alert_id"]) for a in opened]
    states = _query(
        "SELECT state, resolved_at IS NOT NULL FROM iceberg.poolsight.alert WHERE source = ? AND rule IN (?, ?)",
        (group, *names.values()),
    )
    assert [tuple(r) for r in states] == [("resolved", True), ("resolved", True)]


CORPUS = ROOT / "tests" / "ingest" / "corpus" / "omegamon"
STATS_KINDS = (
    "prefetch_disabled", "write_engine_not_available", "dm_threshold_reached", "vpool_full", "dwqt_over_vdwqt",
    "sync_writes_high", "pageins", "dataset_opens",
)  # fmt: skip


def test_seed_000s_statistics_open_an_alert_for_every_warning_they_carry(jobs: None, tmp_path: Path) -> None:
    """Seed 000's report blocks through the collector and the statistics job, no trace: the two halves of
    its day-long BP1 report (Part1: read engines, data set opens; Part2: write thresholds) as one
    source, its 50-minute statistics block (page-ins for read) as another. Every warning the seed
    points at opens its alert with the seed's count; what the seed calls no problem (0.7 % sync
    writes, VDWQT reached rather than DWQT) and the zero counters open none."""
    tag = uuid.uuid4().hex[:6].upper()
    day, block = f"SD{tag}", f"SB{tag}"
    at = datetime.fromtimestamp(int(time.time()) // 60 * 60 - 3600, UTC)
    for source, files in ((day, ("seed000_part1.txt", "seed000_part2.txt")), (block, ("seed000_no_interval.txt",))):
        for name in files:
            # Positions of this test's own: a rerun on the same stack reads the corpus files again.
            args = ["stats", str(CORPUS / name), "--source", source, "--at", at.isoformat()]
            r = poolsight("ingest", *args, "--state-dir", str(tmp_path), timeout=120)
            assert r.returncode == 0, r.stderr
    deadline, seconds = time.monotonic() + 300, dict[tuple[str, str, bool], float]()
    while time.monotonic() < deadline and len(seconds) < 3:
        time.sleep(2)
        rows = _query(
            "SELECT source, origin, interval_seconds, dataset_opens FROM iceberg.poolsight.pool_stats "
            "WHERE source IN (?, ?) AND pool = 'BP1'",
            (day, block),
        )
        seconds = {(str(s), o, opens is not None): float(x) for s, o, x, opens in rows}
    assert len(seconds) == 3, f"pool_stats holds {seconds} of seed 000's three blocks"
    part1 = next(x for (s, _, opens), x in seconds.items() if s == day and opens)
    stats_block = next(x for (s, _, _), x in seconds.items() if s == block)
    names = {kind: f"{kind}_{tag.lower()}" for kind in STATS_KINDS}
    rules = tmp_path / "rules.yaml"
    rules.write_text(json.dumps({"rules": [{"name": n, "kind": k} for k, n in names.items()]}))
    r = poolsight("alerts", "evaluate", "--rules", str(rules), "--at", (at + timedelta(minutes=1)).isoformat(),
                  "--json", timeout=300)  # fmt: skip
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    out = json.loads(r.stdout)
    opened = sorted(
        (a["source"], a["rule"], a["subject"], a["value"]) for a in out["opened"] if a["source"] in (day, block)
    )
    assert opened == sorted([
        (day, names["prefetch_disabled"], "pool_stats/prefetch_disabled_no_read_engine", 25475.0),
        (day, names["dataset_opens"], "pool_stats/dataset_opens", pytest.approx(3217 / part1, rel=1e-12)),
        (day, names["dwqt_over_vdwqt"], "pool_stats/dwqt_reached", 25819.0),
        (day, names["write_engine_not_available"], "pool_stats/write_engine_not_available", 47.0),
        (block, names["pageins"], "pool_stats/pageins_read", pytest.approx(1270 / stats_block, rel=1e-12)),
    ]), out["opened"]  # fmt: skip
    by_subject = {a["subject"]: a for a in out["opened"] if a["source"] == day}
    assert by_subject["pool_stats/dwqt_reached"]["threshold"] == 5658.0  # VDWQT reached, from Part2
    assert "VDWQT only 5,658" in by_subject["pool_stats/dwqt_reached"]["message"]
    [[state]] = _query(
        "SELECT array_join(array_agg(DISTINCT state), ',') FROM iceberg.poolsight.alert WHERE source IN (?, ?)",
        (day, block),
    )
    assert state == "open"


def test_a_sync_write_storm_and_a_paging_host_open_their_alerts(jobs: None, tmp_path: Path) -> None:
    """The write-storm and paging scenarios through Kafka and the statistics job: the storm's BP3 (every
    write synchronous) opens sync_writes_high, the paging host's unfixed BP1 opens pageins for read
    and for write at the newest interval's rates read here from pool_stats; the storm's BP4 (no
    writes) and the page-fixed BP2 open nothing, and neither does any other warning."""
    tag = uuid.uuid4().hex[:6].upper()
    storm, paging = f"WS{tag}", f"PG{tag}"
    start = int(time.time()) // 60 * 60 - 3600
    intervals = {}
    for scenario, member in (("write-storm", storm), ("paging", paging)):
        r = poolsight("generate", scenario, "--members", member, "--seed", "3", "--duration", "180",
                      "--event-rate", "2000", "--start-time", str(start))  # fmt: skip
        assert r.returncode == 0, r.stderr
        intervals[member] = int(json.loads(r.stdout.strip().splitlines()[-1])["intervals"])
    want = 2 * sum(intervals.values())  # two pools each
    deadline, rows = time.monotonic() + 300, list[list[Any]]()
    while time.monotonic() < deadline and len(rows) != want:
        time.sleep(2)
        rows = _query(
            "SELECT source, pool, interval_end, interval_seconds, sync_writes, async_writes, pageins_read, "
            "pageins_write FROM iceberg.poolsight.pool_stats WHERE source IN (?, ?) ORDER BY interval_end",
            (storm, paging),
        )
    assert len(rows) == want, f"pool_stats holds {len(rows)} of {want} rows"
    newest = {(str(r[0]), str(r[1])): r for r in rows}  # ordered by interval_end: the last one stays
    names = {kind: f"{kind}_{tag.lower()}" for kind in STATS_KINDS}
    rules = tmp_path / "rules.yaml"
    rules.write_text(json.dumps({"rules": [{"name": n, "kind": k} for k, n in names.items()]}))
    at = datetime.fromtimestamp(start + 180 + 60, UTC)
    r = poolsight("alerts", "evaluate", "--rules", str(rules), "--at", at.isoformat(), "--json", timeout=300)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    opened = sorted(
        (a["source"], a["pool"], a["rule"], a["subject"], a["value"])
        for a in json.loads(r.stdout)["opened"]
        if a["source"] in (storm, paging)
    )
    _, _, _, _, sync, async_, _, _ = newest[storm, "BP3"]
    _, _, _, seconds, _, _, read, write = newest[paging, "BP1"]
    assert sync > 0 and read > 0 and write > 0, (newest[storm, "BP3"], newest[paging, "BP1"])
    assert opened == sorted([
        (storm, "BP3", names["sync_writes_high"], "pool_stats/sync_writes", pytest.approx(sync / (sync + async_))),
        (paging, "BP1", names["pageins"], "pool_stats/pageins_read", pytest.approx(read / seconds, rel=1e-12)),
        (paging, "BP1", names["pageins"], "pool_stats/pageins_write", pytest.approx(write / seconds, rel=1e-12)),
    ]), opened  # fmt: skip


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def test_run_writes_a_heartbeat_after_each_cycle(tmp_path: Path) -> None:
    """As the launcher starts it (python -m), with its own run folder so the launcher's heartbeat stays apart."""
    rules = tmp_path / "rules.yaml"
    name = f"heartbeat_{uuid.uuid4().hex[:8]}"
    rules.write_text(json.dumps({"rules": [{"name": name, "kind": "dead_letters", "params": {"min_count": 1e9}}]}))
    beat = tmp_path / "run" / "alerts" / "heartbeat.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "poolsight.dashboards.alerts", "run", "--rules", str(rules), "--every", "2"],
        env={**os.environ, "POOLSIGHT_RUN_DIR": str(tmp_path / "run")},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        times: list[float] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(set(times)) < 2 and proc.poll() is None:
            time.sleep(0.5)
            if beat.exists():
                b = json.loads(beat.read_text())
                if b.get("phase") == "starting":  # the loop's beat before its first cycle
                    continue
                assert (b["rules"], b["error"]) == (1, None), b
                assert isinstance(b["open"], int)
                times.append(b["time"])
        assert len(set(times)) >= 2, f"no two heartbeats at {beat}: {proc.poll()}"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err
