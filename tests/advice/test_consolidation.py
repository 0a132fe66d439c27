"""Merges of pools that behave alike and moves into existing pools (advice/consolidation.py), each
replayed in the proposed layout: checked against a brute-force LRU written here (an OrderedDict
over the getpages in time order), on traces built by hand."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from poolsight.advice.alike import AlikeRules, alike, of_object, of_pool
from poolsight.advice.combine import combine
from poolsight.advice.consolidation import Consolidator
from poolsight.advice.inputs import Inputs
from poolsight.advice.model import Advice, Costs, PoolState
from poolsight.advice.offline import pool_states
from poolsight.advice.replay import Trace

SECONDS = 600.0
MB = 2**20


class Build:
    """Getpages per object (its pool, pages, access), merged into one trace in time order."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.parts: list[tuple[npt.NDArray[np.float64], int, int, npt.NDArray[np.uint64], int]] = []
        self.pools: list[str] = []
        self.objects: list[str] = []

    def _code(self, names: list[str], name: str) -> int:
        if name not in names:
            names.append(name)
        return names.index(name)

    def random(self, pool: str, obj: str, pages: int, per_s: float, skew: float = 0.0) -> None:
        """Random getpages over `pages` pages: uniform, or skewed (page = pages * u^(1+skew))."""
        n = int(per_s * SECONDS)
        u = self.rng.random(n)
        pg = np.minimum((pages * u ** (1.0 + skew)).astype(np.int64), pages - 1).astype(np.uint64)
        self._add(pool, obj, pg, 0)

    def scan(self, pool: str, obj: str, pages: int, per_s: float) -> None:
        """Sequential getpages walking the object's pages in order, round and round."""
        n = int(per_s * SECONDS)
        self._add(pool, obj, (np.arange(n) % pages).astype(np.uint64), 1)

    def _add(self, pool: str, obj: str, pages: npt.NDArray[np.uint64], access: int) -> None:
        t = np.sort(self.rng.uniform(0.0, SECONDS, len(pages)))
        self.parts.append((t, self._code(self.pools, pool), self._code(self.objects, obj), pages, access))

    def trace(self) -> Trace:
        t = np.concatenate([p[0] for p in self.parts])
        order = np.argsort(t, kind="stable")

        def cat(i: int, dtype: type) -> npt.NDArray[np.generic]:
            return np.concatenate([np.full(len(p[0]), p[i], dtype=dtype) for p in self.parts])[order]

        return Trace(
            t[order],
            cat(1, np.int32),  # type: ignore[arg-type]
            cat(2, np.int32),  # type: ignore[arg-type]
            np.concatenate([p[3] for p in self.parts])[order],
            cat(4, np.uint8),  # type: ignore[arg-type]
            np.zeros(len(t), dtype=np.uint8),
            list(self.pools),
            list(self.objects),
        )


def states_of(trace: Trace, sizes: dict[str, int], vpseqt: float = 100.0) -> dict[str, PoolState]:
    inputs = Inputs(
        Path("."),
        attributes={tuple(tp.split("/")): {"vpsize": v, "vpseqt": vpseqt, "pgsteal": "LRU"} for tp, v in sizes.items()},  # type: ignore[misc]
    )
    states, skipped = pool_states(inputs, trace)
    assert not skipped
    return states


def brute_force(trace: Trace, layout: dict[str, tuple[int, list[str]]]) -> float:
    """Sync reads/s of pools laid out as given (pool -> (buffers, the trace pools' objects it holds)):
    an LRU per pool over the getpages in time order; a random getpage that misses is a sync read.
    Rated over the span of the getpages taking part, as the replay rates a layout."""
    where = {obj: pool for pool, (_, objs) in layout.items() for obj in objs}
    caches: dict[str, OrderedDict[tuple[int, int], None]] = {pool: OrderedDict() for pool in layout}
    misses = 0
    codes = {trace.objects.index(o) for o in where}
    sel = np.isin(trace.obj, list(codes))
    for o, page, acc in zip(
        trace.obj[sel].tolist(), trace.pages[sel].tolist(), trace.access[sel].tolist(), strict=True
    ):
        pool = where[trace.objects[o]]
        lru, key = caches[pool], (o, page)
        if key in lru:
            lru.move_to_end(key)
            continue
        misses += acc == 0
        lru[key] = None
        if len(lru) > layout[pool][0]:
            lru.popitem(last=False)
    t = trace.times[sel]
    return misses / float(t.max() - t.min())


def _only(advice: list[Advice], kind: str) -> Advice:
    found = [a for a in advice if a.kind == kind]
    assert len(found) == 1, [a.summary for a in advice]
    return found[0]


def test_two_pools_that_behave_alike_merge_and_the_replay_matches_a_brute_force_lru() -> None:
    b = Build(1)
    b.random("S/BP1", "APP.A", 6000, 60.0, skew=1.5)
    b.random("S/BP2", "APP.B", 4000, 40.0, skew=1.5)
    b.scan("S/BP3", "APP.SCAN", 50_000, 150.0)  # a scan pool: unlike both, never merged with them
    trace = b.trace()
    states = states_of(trace, {"S/BP1": 1500, "S/BP2": 1000, "S/BP3": 1000})
    advice, considered = Consolidator(trace, Costs()).advise(states)
    merge = _only(advice, "merge")
    assert merge.pool == "BP1" and merge.objects == ["APP.B"]  # the larger pool stays
    assert not [r for r in considered if "BP3" in (r["pool"], r.get("freed_pool"), r.get("to_pool"))]
    pred = merge.predicted
    before = brute_force(trace, {"BP1": (1500, ["APP.A"]), "BP2": (1000, ["APP.B"])})
    assert pred["sync_reads_per_s_before"] == pytest.approx(before, rel=0.02)
    # Merged at the sum of the sizes, and at the size advised (the smallest within the tolerance).
    summed = brute_force(trace, {"BP1": (2500, ["APP.A", "APP.B"])})
    assert pred["sync_reads_per_s_at_summed_size"] == pytest.approx(summed, rel=0.02)
    size = pred["pools"]["BP1"]["size_after"]
    assert pred["sync_reads_per_s_after"] == pytest.approx(
        brute_force(trace, {"BP1": (size, ["APP.A", "APP.B"])}), rel=0.02
    )
    assert pred["sync_reads_per_s_after"] <= before + max(0.02 * before, 0.5)
    assert pred["freed_mb"] == pytest.approx((2500 - size) * 4096 / MB)
    assert merge.command[-1] == "-ALTER BUFFERPOOL(BP2) VPSIZE(0)"
    assert "ALTER TABLESPACE APP.B BUFFERPOOL BP1" in merge.command
    assert merge.evidence["likeness"]["alike"] and merge.evidence["likeness"]["rule"]
    assert pred["pools"]["BP2"]["size_after"] == 0


def test_oversized_pools_merge_at_a_smaller_size_and_free_memory() -> None:
    b = Build(2)
    b.random("S/BP1", "APP.A", 2000, 30.0)
    b.random("S/BP2", "APP.B", 1000, 15.0)
    trace = b.trace()
    states = states_of(trace, {"S/BP1": 4000, "S/BP2": 2000})
    merge = _only(Consolidator(trace, Costs()).advise(states)[0], "merge")
    pred = merge.predicted
    # Every page fits in half the sum: the same (cold) sync reads at 3,000 buffers as at 6,000.
    assert pred["pools"]["BP1"]["size_after"] == 3000
    assert pred["freed_buffers"] == 3000 and pred["freed_mb"] == pytest.approx(3000 * 4096 / MB)
    assert pred["sync_reads_per_s_after"] == pytest.approx(
        brute_force(trace, {"BP1": (3000, ["APP.A", "APP.B"])}), rel=0.02
    )
    # Smaller than BP1 is today: the objects move first, then BP1 shrinks, then BP2 goes.
    assert merge.command == [
        "ALTER TABLESPACE APP.B BUFFERPOOL BP1",
        "-ALTER BUFFERPOOL(BP1) VPSIZE(3000)",
        "-ALTER BUFFERPOOL(BP2) VPSIZE(0)",
    ]


def test_pools_that_behave_unlike_get_no_merge() -> None:
    b = Build(3)
    b.random("S/BP1", "APP.A", 6000, 60.0, skew=1.5)
    b.scan("S/BP2", "APP.HIST", 40_000, 80.0)
    trace = b.trace()
    states = states_of(trace, {"S/BP1": 1500, "S/BP2": 1000})
    like = alike(of_pool(states["S/BP1"]), of_pool(states["S/BP2"]), AlikeRules())
    assert not like.alike and like.score == 0.0 and "RAMOS" in like.why_not[0]
    advice, considered = Consolidator(trace, Costs()).advise(states)
    assert advice == [] and considered == []


def _scan_pool_with_a_random_object(seed: int, bp1: int, bp4: int) -> tuple[Trace, dict[str, PoolState]]:
    """BP4: a scan and a random, re-referenced object (D) whose pages the scan pushes out; BP1: random work."""
    b = Build(seed)
    b.random("S/BP1", "APP.A", 3000, 30.0, skew=1.0)
    b.scan("S/BP4", "APP.SCAN", 100_000, 200.0)
    b.random("S/BP4", "APP.D", 800, 15.0)
    trace = b.trace()
    return trace, states_of(trace, {"S/BP1": bp1, "S/BP4": bp4})


def test_a_random_object_in_a_scan_pool_moves_to_a_random_pool_and_the_replay_matches_a_brute_force_lru() -> None:
    trace, states = _scan_pool_with_a_random_object(4, 3000, 2000)
    d = next(o for o in states["S/BP4"].objects if o.name == "APP.D")
    assert alike(of_object(d, states["S/BP4"].seconds), of_pool(states["S/BP1"]), AlikeRules()).alike
    advice, _ = Consolidator(trace, Costs()).advise(states)
    move = _only(advice, "move")
    assert move.pool == "BP4" and move.objects == ["APP.D"]
    assert move.command == ["ALTER TABLESPACE APP.D BUFFERPOOL BP1"]
    pred = move.predicted
    before = brute_force(trace, {"BP1": (3000, ["APP.A"]), "BP4": (2000, ["APP.SCAN", "APP.D"])})
    after = brute_force(trace, {"BP1": (3000, ["APP.A", "APP.D"]), "BP4": (2000, ["APP.SCAN"])})
    assert pred["sync_reads_per_s_before"] == pytest.approx(before, rel=0.02)
    assert pred["sync_reads_per_s_after"] == pytest.approx(after, rel=0.02)
    assert after < before and pred["avoided_sync_reads_per_s"] > 0.5
    assert pred["freed_mb"] == 0.0 and pred["pools"]["BP1"]["size_after"] == 3000


def test_a_move_that_costs_sync_reads_is_not_shown() -> None:
    # BP1 just holds A's hot pages; BP4 is large enough for D beside the scan: moving D costs.
    trace, states = _scan_pool_with_a_random_object(5, 1700, 30_000)
    advice, considered = Consolidator(trace, Costs()).advise(states)
    assert [a for a in advice if a.kind == "move"] == []
    record = next(r for r in considered if r["kind"] == "move")
    assert record["sync_reads_per_s_after"] > record["sync_reads_per_s_before"]
    assert "saves -" in record["why_not"]


def test_a_merge_is_exclusive_with_the_budget_on_its_pools_and_replaces_the_shrink_rule() -> None:
    def advice(kind: str, pool: str, command: list[str], pools: dict[str, object] | None = None) -> Advice:
        return Advice(kind, "S", pool, [], {}, {"pools": pools} if pools else {}, {}, command, f"{kind} {pool}")

    merge = advice("merge", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(2500)"], {"BP1": {}, "BP2": {}})
    shrink = advice("shrink", "BP2", ["-ALTER BUFFERPOOL(BP2) VPSIZE(500)"])
    out = combine([merge, shrink], None)
    assert out == [merge] and "shrink_dropped" in merge.evidence
    budget = advice("budget", "BP2", ["-ALTER BUFFERPOOL(BP2) VPSIZE(4000)"])
    merge2 = advice("merge", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(2500)"], {"BP1": {}, "BP2": {}})
    out = combine([budget, merge2], None)
    assert out == [budget] and "merge advice" in budget.evidence["consolidation_dropped"][0]


def test_advise_dir_gives_the_merge_in_place_of_the_shrink_rule(tmp_path: Path) -> None:
    from poolsight.advice.advisor import Budget
    from poolsight.advice.offline import advise_dir

    b = Build(2)
    b.random("S/BP1", "APP.A", 2000, 30.0)
    b.random("S/BP2", "APP.B", 1000, 15.0)
    trace = b.trace()
    rows = ["time,source,pool,object,page,access,function,hit"]
    for t, p, o, page in zip(trace.times, trace.pool, trace.obj, trace.pages, strict=True):
        rows.append(f"{t:.6f},S,{trace.pools[p].split('/')[1]},{trace.objects[o]},{page},R,GP,N")
    (tmp_path / "trace.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "attributes.jsonl").write_text(
        '{"source": "S", "pool": "BP1", "vpsize": 4000, "vpseqt": 100}\n'
        '{"source": "S", "pool": "BP2", "vpsize": 2000, "vpseqt": 100}\n'
    )
    doc, _ = advise_dir(tmp_path, Budget())
    [merge] = [a for a in doc["advice"] if a["kind"] == "merge"]
    assert merge["pool"] == "BP1" and merge["predicted"]["freed_mb"] == pytest.approx(3000 * 4096 / MB)
    assert not [a for a in doc["advice"] if a["kind"] == "shrink" and a["pool"] in ("BP1", "BP2")]
    assert "shrink_dropped" in merge["evidence"]
    assert [r["kind"] for r in doc["consolidations_considered"]] == ["merge"]
