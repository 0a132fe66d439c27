"""The bundled `consolidation` scenario end to end through `poolsight generate --output` and
`poolsight advise DIR`: it gets a merge of two lookup pools and a move of the rates table into a
lookup pool, and each proposal's replayed sync reads (before and after, per pool, and the merge at
every size it tried) are within 2 % of an LRU per pool brute-forced here over the generated
trace.csv (an OrderedDict per pool, the getpages in file order; a random getpage that misses is a
sync read)."""

from __future__ import annotations

import csv
import json
import subprocess
from collections import OrderedDict
from typing import Any

import pytest

from tests.conftest import POOLSIGHT, ROOT

Row = tuple[float, str, str, int, bool]  # time, pool, object, page, random


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Row], dict[str, Any]]:
    out = tmp_path_factory.mktemp("consolidation") / "files"
    r = subprocess.run(
        [*POOLSIGHT, "generate", "consolidation", "--output", str(out), "--duration", "120",
         "--event-rate", "6000", "--seed", "5"],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = out.parent / "advice.json"
    r = subprocess.run([*POOLSIGHT, "advise", str(out), "--json", str(doc)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    with (out / "trace.csv").open() as f:
        rows = [
            (float(x["time"]), x["pool"], x["object"], int(x["page"]), x["access"] == "R")
            for x in csv.DictReader(f)
            if x["function"] == "GP"
        ]
    return rows, json.loads(doc.read_text())


def lru(rows: list[Row], layout: dict[str, tuple[int, set[str]]]) -> dict[str, float]:
    """Sync reads/s per pool of pools laid out as given (pool -> (buffers, objects)), over the span of
    the getpages of those objects."""
    where = {o: pool for pool, (_, objs) in layout.items() for o in objs}
    caches: dict[str, OrderedDict[tuple[str, int], None]] = {pool: OrderedDict() for pool in layout}
    misses = dict.fromkeys(layout, 0)
    first = last = None
    for t, _, obj, page, random in rows:
        pool = where.get(obj)
        if pool is None:
            continue
        first = t if first is None else first
        last = t
        cache, key = caches[pool], (obj, page)
        if key in cache:
            cache.move_to_end(key)
            continue
        misses[pool] += random
        cache[key] = None
        if len(cache) > layout[pool][0]:
            cache.popitem(last=False)
    assert first is not None and last is not None
    return {pool: n / (last - first) for pool, n in misses.items()}


def _objects(rows: list[Row]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for _, pool, obj, _, _ in rows:
        out.setdefault(pool, set()).add(obj)
    return out


def _one(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [a for a in doc["advice"] if a["kind"] == kind]
    assert len(found) == 1, [a["summary"] for a in doc["advice"]]
    return dict(found[0])


def _check(rows: list[Row], advice: dict[str, Any], before: dict[str, tuple[int, set[str]]],
           after: dict[str, tuple[int, set[str]]]) -> None:  # fmt: skip
    pools = advice["predicted"]["pools"]
    for layout, when in ((before, "before"), (after, "after")):
        brute = lru(rows, {p: v for p, v in layout.items() if v[0] > 0})
        for pool, rate in brute.items():
            assert pools[pool][f"sync_reads_per_s_{when}"] == pytest.approx(rate, rel=0.02), (pool, when)
        total = advice["predicted"][f"sync_reads_per_s_{when}"]
        assert total == pytest.approx(sum(brute.values()), rel=0.02), when


def test_two_alike_lookup_pools_merge_and_the_replay_matches_a_brute_force_lru(
    run: tuple[list[Row], dict[str, Any]],
) -> None:
    rows, doc = run
    merge = _one(doc, "merge")
    keep, [moved] = merge["pool"], merge["objects"]
    objects = _objects(rows)
    [freed] = [p for p, objs in objects.items() if moved in objs]
    assert {keep, freed} <= {"BP3", "BP5", "BP6"}  # lookup pools, never the orders pool
    sizes = merge["predicted"]["pools"]
    size = sizes[keep]["size_after"]
    assert sizes[freed]["size_after"] == 0 and size < sizes[keep]["size_before"] + sizes[freed]["size_before"]
    assert merge["predicted"]["freed_mb"] == pytest.approx(
        (sizes[keep]["size_before"] + sizes[freed]["size_before"] - size) * 4096 / 2**20
    )
    _check(
        rows,
        merge,
        {keep: (sizes[keep]["size_before"], objects[keep]), freed: (sizes[freed]["size_before"], objects[freed])},
        {keep: (size, objects[keep] | objects[freed]), freed: (0, set())},
    )
    # Every size the merge tried (down to half the sum, where the lookups no longer fit and LRU
    # decides) against the brute force at that size.
    [considered] = [c for c in doc["consolidations_considered"] if (c["pool"], c.get("freed_pool")) == (keep, freed)]
    merged = objects[keep] | objects[freed]
    assert len(considered["tried"]) == 5
    for tried in considered["tried"]:
        [rate] = lru(rows, {keep: (tried["size"], merged)}).values()
        assert tried["sync_reads_per_s"] == pytest.approx(rate, rel=0.02), tried
    assert f"-ALTER BUFFERPOOL({freed}) VPSIZE(0)" in merge["command"]
    assert f"ALTER TABLESPACE {moved} BUFFERPOOL {keep}" in merge["command"]


def test_the_stranded_rates_table_moves_into_a_lookup_pool_and_the_replay_matches_a_brute_force_lru(
    run: tuple[list[Row], dict[str, Any]],
) -> None:
    rows, doc = run
    move = _one(doc, "move")
    assert (move["pool"], move["objects"]) == ("BP1", ["APP.RATES"])
    objects = _objects(rows)
    sizes = move["predicted"]["pools"]
    [to] = [p for p in sizes if p != "BP1"]
    assert sizes[to]["size_after"] == sizes[to]["size_before"] and sizes["BP1"]["size_after"] == 20000
    _check(
        rows,
        move,
        {"BP1": (20000, objects["BP1"]), to: (sizes[to]["size_before"], objects[to])},
        {"BP1": (20000, objects["BP1"] - {"APP.RATES"}), to: (sizes[to]["size_before"], objects[to] | {"APP.RATES"})},
    )
    assert move["predicted"]["avoided_sync_reads_per_s"] > 0.02 * move["predicted"]["sync_reads_per_s_before"]
    assert move["command"] == [f"ALTER TABLESPACE APP.RATES BUFFERPOOL {to}"]
