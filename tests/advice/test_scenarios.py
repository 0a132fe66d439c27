"""Advice on workloads built for it, checked against the generator's own pools.

A scan sharing a pool with random OLTP gets a placement whose predicted sync reads are then
measured by generating the same workload with that placement; a pool that holds all its pages
gets no memory and FIFO; a paging system gets no growth."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import POOLSIGHT, ROOT

DURATION, RATE, SEED = "150", "10000", "5"
SCENARIO: dict[str, Any] = {
    "name": "advice",
    "members": ["ADV1"],
    "interval_seconds": 30,
    "memory": {"real_storage_mb": 16000, "real_storage_available_mb": 6000, "pageins_per_second": 0.0},
    "pools": [
        {"name": "BP1", "vpsize": 30000, "vpseqt": 40, "dwqt": 30, "vdwqt": 5, "prefetch_quantity": 32},
        {"name": "BP2", "vpsize": 15000, "vpseqt": 50, "dwqt": 30, "vdwqt": 5, "prefetch_quantity": 32},
        {"name": "BP4", "vpsize": 8000, "vpseqt": 80, "dwqt": 30, "vdwqt": 5, "prefetch_quantity": 32},
    ],
    "objects": [
        {"name": "APP.ORDERS", "pool": "BP1", "pages": 200000},
        {"name": "APP.HISTORY", "pool": "BP1", "pages": 800000},
        {"name": "APP.ORDERS~0", "pool": "BP2", "pages": 30000, "type": "INDEXSPACE", "index_levels": 3},
        {"name": "APP.CODES", "pool": "BP4", "pages": 3000},
    ],
    "patterns": [
        {"name": "orders", "kind": "random", "share": 0.5, "objects": {"APP.ORDERS": 1}, "index": "APP.ORDERS~0",
         "skew": 0.9, "update_ratio": 0.3},
        {"name": "history-scan", "kind": "sequential", "share": 0.35, "objects": {"APP.HISTORY": 1}, "run_pages": 256},
        {"name": "codes", "kind": "random", "share": 0.15, "objects": {"APP.CODES": 1}},
    ],
}  # fmt: skip


def _generate(scenario: dict[str, Any], out: Path) -> None:
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(scenario))
    r = subprocess.run(
        [*POOLSIGHT, "generate", str(path), "--output", str(out), "--duration", DURATION,
         "--event-rate", RATE, "--seed", SEED],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr


def _advise(directory: Path, *args: str) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    out = directory.parent / f"{directory.name}-advice.json"
    r = subprocess.run(
        [*POOLSIGHT, "advise", str(directory), "--json", str(out), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r


def _measured(directory: Path) -> dict[str, float]:
    """Sync reads/s per pool as the generator's pools counted them (statistics)."""
    reads: dict[str, float] = defaultdict(float)
    secs: dict[str, float] = defaultdict(float)
    for line in (directory / "pool_stats.jsonl").read_text().splitlines():
        r = json.loads(line)
        reads[r["pool"]] += r["sync_reads_random"]
        secs[r["pool"]] += r["interval_seconds"]
    return {p: reads[p] / secs[p] for p in reads}


@pytest.fixture(scope="module")
def advised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    d = tmp_path_factory.mktemp("advice") / "run"
    _generate(SCENARIO, d)
    doc, r = _advise(d, "--budget-buffers", "20000")
    return d, doc, r.stdout


def _kinds(doc: dict[str, Any], pool: str) -> set[str]:
    return {a["kind"] for a in doc["advice"] if a["pool"] == pool}


def test_the_scan_gets_its_own_pool_and_the_generator_confirms_the_prediction(
    advised: tuple[Path, dict[str, Any], str],
) -> None:
    d, doc, text = advised
    [placement] = [a for a in doc["advice"] if a["kind"] == "placement"]
    assert placement["pool"] == "BP1" and placement["objects"] == ["APP.HISTORY"]
    pools = placement["predicted"]["pools"]
    new_pool = next(p for p in pools if p != "BP1")
    assert "ALTER TABLESPACE APP.HISTORY BUFFERPOOL " + new_pool in placement["command"]
    # One answer for BP1: the budget's buffers, split by the placement (memory-neutral within them).
    budget = doc["budget"]["allocation"]["BP1"]
    assert pools["BP1"]["size_after"] + pools[new_pool]["size_after"] == 30000 + budget > 30000
    assert pools["BP1"]["size_before"] == 30000 and placement["evidence"]["budget"]["vpsize"] == 30000 + budget
    assert "budget" not in _kinds(doc, "BP1")
    sizes: dict[str, list[str]] = defaultdict(list)
    for a in doc["advice"]:
        for cmd in a["command"]:
            if m := re.match(r"-ALTER BUFFERPOOL\((\w+)\).* VPSIZE\((\d+)\)", cmd):
                sizes[m.group(1)].append(m.group(2))
    assert sizes and all(len(v) == 1 for v in sizes.values()), sizes
    # The same workload, generated with the placement applied as the commands say.
    placed = json.loads(json.dumps(SCENARIO))
    placed["pools"][0]["vpsize"] = pools["BP1"]["size_after"]
    placed["pools"].append(
        {"name": new_pool, "vpsize": pools[new_pool]["size_after"], "vpseqt": pools[new_pool]["vpseqt"]}
    )
    for o in placed["objects"]:
        if o["name"] == "APP.HISTORY":
            o["pool"] = new_pool
    after_dir = d.parent / "placed"
    _generate(placed, after_dir)
    before, after = _measured(d), _measured(after_dir)
    assert placement["predicted"]["sync_reads_per_s_before"] == pytest.approx(before["BP1"], rel=0.05)
    for pool in pools:
        assert pools[pool]["sync_reads_per_s_after"] == pytest.approx(after[pool], rel=0.05, abs=0.5), pool
    total_after = after["BP1"] + after[new_pool]
    assert placement["predicted"]["sync_reads_per_s_after"] == pytest.approx(total_after, rel=0.05)
    assert total_after < 0.95 * before["BP1"]  # and it is an improvement, measured
    assert f"move APP.HISTORY from BP1 to {new_pool}" in text
    # The generator's workload does not change within the run: its halves are alike, nothing new.
    sim = placement["confidence"]["workload_similarity"]
    assert sim["score"] > 0.97 and sim["objects_new"] == [] and abs(sim["getpage_rate_change"]) < 0.05


def test_a_pool_holding_all_its_pages_gets_no_memory_but_fifo_and_a_smaller_size(
    advised: tuple[Path, dict[str, Any], str],
) -> None:
    d, doc, _ = advised
    budget = doc["budget"]
    assert "BP4" not in budget["allocation"]
    assert sum(budget["allocation"].values()) <= 20000 and budget["allocation"]
    assert budget["pools"]["BP4"]["sync_reads_per_s_after"] == budget["pools"]["BP4"]["sync_reads_per_s_before"]
    # APP.CODES (3,000 pages) in 8,000 buffers: FIFO misses nothing LRU would not.
    [fifo] = [a for a in doc["advice"] if a["kind"] == "pgsteal"]
    assert fifo["pool"] == "BP4" and fifo["command"] == ["-ALTER BUFFERPOOL(BP4) PGSTEAL(FIFO)"]
    ev = fifo["evidence"]
    assert ev["sync_reads_per_s_fifo"] <= ev["sync_reads_per_s_lru"]
    # Only cold misses: each of the pages read once in the window (the generator's own count).
    assert ev["sync_reads_per_s_lru"] == pytest.approx(_measured(d)["BP4"], rel=0.02)
    assert "pgsteal" not in _kinds(doc, "BP1") and "pgsteal" not in _kinds(doc, "BP2")
    [shrink] = [a for a in doc["advice"] if a["kind"] == "shrink"]
    assert shrink["pool"] == "BP4"
    assert shrink["predicted"]["sync_reads_per_s_after"] - shrink["predicted"]["sync_reads_per_s_before"] <= 0.5


def test_a_paging_system_gets_no_growth(advised: tuple[Path, dict[str, Any], str], tmp_path: Path) -> None:
    d, doc, _ = advised
    assert json.loads((d / "system_memory.jsonl").read_text().splitlines()[0])["real_storage_mb"] == 16000
    assert "paging_guard" not in doc["budget"]
    paging = tmp_path / "paging"
    shutil.copytree(d, paging)
    (paging / "system_memory.jsonl").unlink()
    (paging / "system_memory.csv").write_text(
        "source,interval_start,interval_end,real_storage_mb,real_storage_available_mb,pageins_per_second\n"
        "ADV1,2026-01-01T00:00:00+00:00,2026-01-01T00:00:30+00:00,16000,2400,0.2\n"
        "ADV1,2026-01-01T00:00:30+00:00,2026-01-01T00:01:00+00:00,16000,2300,35.5\n"
    )
    doc2, r = _advise(paging, "--budget-buffers", "20000")
    assert doc2["budget"]["allocation"] == {}
    assert "35.5 page-ins/s" in doc2["budget"]["paging_guard"]
    assert not [a for a in doc2["advice"] if a["kind"] in ("budget", "pgfix")]
    assert "no growth: the system pages" in r.stdout
