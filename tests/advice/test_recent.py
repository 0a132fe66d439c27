"""The online replay's trace, bounded: a spatial sample once the getpages outgrow the bound,
whose replay stays near the whole trace's (advice/recent.py, no Kafka: the sample itself)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from poolsight.advice.recent import Sample, page_hash
from poolsight.advice.replay import PoolRun, Trace, at_size
from poolsight.schemas.getpage import GetpageBatch
from tests.flink_jobs.generated import generate


def test_the_hash_keeps_the_share_of_pages_asked_for_and_every_getpage_of_a_kept_page() -> None:
    obj = np.zeros(200_000, dtype=np.int32)
    pages = np.arange(200_000, dtype=np.uint64)
    h = page_hash(obj, pages)
    assert np.count_nonzero(h < np.uint64(2**62)) / len(h) == pytest.approx(0.25, abs=0.005)
    assert (page_hash(obj[:10], pages[:10]) == h[:10]).all()  # a page's hash is the page's, always
    assert len(np.unique(page_hash(np.array([1, 2], dtype=np.int32), np.array([7, 7], dtype=np.uint64)))) == 2


def _sample(cap: int) -> tuple[Sample, list[str]]:
    """The mixed scenario's BP1 (the generator: skewed, hot index pages) through a sample."""
    s, objects = Sample(cap), dict[str, int]()
    for schema, r in generate("mixed", 60).items:
        if schema == "getpage_batch" and r.pool == "BP1":
            b = GetpageBatch.from_record(r.record())
            lut = np.array([objects.setdefault(str(n), len(objects)) for n in b.object_names], dtype=np.int32)
            s.add(0, b.times(), lut[b.objects], b.pages.astype(np.uint64), b.access_codes(), b.function_codes())
    return s, list(objects)


def test_a_sample_stays_under_its_bound_and_its_replay_near_the_whole_trace() -> None:
    whole, objects = _sample(10**9)
    assert whole.rate == 1.0
    full = whole.trace(["S/BP1"], objects)
    assert full is not None
    s, _ = _sample(200_000)
    assert s.kept <= 200_000 and s.rate == 0.125  # 1.7 M getpages, halved three times
    sampled = s.trace(["S/BP1"], objects)
    assert sampled is not None
    kept = page_hash(full.obj, full.pages) < np.uint64(int(s.rate * 2.0**64))
    assert len(sampled.times) == int(kept.sum())  # every getpage of a kept page, nothing else
    for size in (10_000, 30_000, 60_000):
        run = {"S/BP1": PoolRun(size, "lru-vpseqt", 40.0)}
        want, got = at_size(full, run)["S/BP1"], at_size(sampled, run)["S/BP1"]
        assert got.getpages_per_s == pytest.approx(want.getpages_per_s, rel=1e-3)  # counted, not sampled
        assert got.sync_reads_per_s == pytest.approx(want.sync_reads_per_s, rel=0.02), size
        objs = {o for o, v in want.objects.items() if v * full.seconds > 2000}
        for o in objs:
            assert got.objects[o] == pytest.approx(want.objects[o], rel=0.1), (size, o)


def test_the_memory_of_a_sample_does_not_grow_with_the_stream() -> None:
    """20 M getpages through a sample bounded at 500 k, in a process of its own: its peak RSS
    stays far below what the stream would take kept whole (about 680 MB)."""
    code = """
import resource, numpy as np
from poolsight.advice.recent import Sample
s = Sample(500_000)
rng = np.random.default_rng(1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for i in range(200):
    n = 100_000
    t = np.sort(rng.random(n)) + i
    s.add(0, t, rng.integers(0, 50, n).astype(np.int32), rng.integers(0, 10**7, n).astype(np.uint64),
          np.zeros(n, np.uint8), np.zeros(n, np.uint8))
tr = s.trace(["S/BP1"], [str(i) for i in range(50)])
print(s.rate, s.kept, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    rate, kept, grown_mb = out.stdout.split()
    assert float(rate) <= 0.03125 and int(kept) <= 500_000
    assert int(grown_mb) < 120, out.stdout  # 500 k kept x 34 bytes, twice while the trace is built


Minute = tuple[int, Any, Any, Any, Any, Any]  # pool code, t, obj, pages, access, function
START = 1_700_000_040  # a whole minute


def _minutes(n: int, seed: int) -> list[Minute]:
    """n minutes of getpages of two pools (codes 0 and 1), a batch per pool and minute."""
    rng = np.random.default_rng(seed)
    out: list[Minute] = []
    for m in range(n):
        for pool in (0, 1):
            k = 3000
            t = START + 60 * m + np.sort(rng.random(k)) * 60
            fn = (rng.random(k) < 0.1).astype(np.uint8)  # some set-write-intents: kept, not counted
            obj, pages = rng.integers(0, 4, k).astype(np.int32), rng.integers(0, 5000, k).astype(np.uint64)
            out.append((pool, t, obj, pages, rng.integers(0, 3, k).astype(np.uint8), fn))
    return out


def _same(a: Trace | None, b: Trace | None) -> None:
    assert a is not None and b is not None
    for f in ("times", "pool", "obj", "pages", "access", "function"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert (a.pools, a.objects, a.rate) == (b.pools, b.objects, b.rate)
    assert (a.exact is None) == (b.exact is None)
    if a.exact is not None and b.exact is not None:
        assert np.array_equal(a.exact, b.exact)


@pytest.mark.parametrize("cap", [10**9, 9_000])
def test_a_sample_trimmed_by_whole_minutes_gives_the_trace_of_its_windows_alone(cap: int) -> None:
    """What the advice service keeps between evaluations: ten minutes added, the first three
    trimmed, a window on whole minutes per pool: the same trace as a sample fed only each window's
    getpages (at the rate the whole stream came to), and, sampled, counts equal to every getpage
    of the window counted here."""
    parts = _minutes(10, 3)
    windows = {0: (START + 180.0, START + 480.0), 1: (START + 240.0, START + 600.0)}
    names, objects = ["S/BP1", "S/BP2"], ["A", "B", "C", "D"]
    kept = Sample(cap)
    for pool, t, o, p, a, f in parts:
        kept.add(pool, t, o, p, a, f)
    kept.trim(START + 180.0)
    assert len(kept.parts) == 1 and len(kept.counted) == 1  # joined: no part per batch kept on
    assert kept.parts[0][0].min() >= START + 180.0 and kept.counted[0][:, 0].min() * 60 == START + 180
    want = Sample(cap, rate=kept.rate)
    truth = np.zeros((2, 4, 3), dtype=np.int64)
    for pool, t, o, p, a, f in parts:
        lo, hi = windows[pool]
        keep = (t >= lo) & (t < hi)
        want.add(pool, t[keep], o[keep], p[keep], a[keep], f[keep])
        gp = keep & (f == 0)
        np.add.at(truth, (pool, o[gp], np.minimum(a[gp], 2)), 1)
    got = kept.trace(names, objects, windows)
    _same(got, want.trace(names, objects))
    assert got is not None
    if cap < 10**9:
        assert kept.rate == 0.125 and got.exact is not None
        assert np.array_equal(got.exact, truth)
    else:
        assert kept.rate == 1.0 and got.exact is None
        assert len(got.times) == sum(int(((t >= windows[p][0]) & (t < windows[p][1])).sum()) for p, t, *_ in parts)


def test_a_pool_dropped_from_a_sample_leaves_the_others_as_a_sample_of_them_alone() -> None:
    """A pool no longer asked for is dropped (RecentGetpages): the trace and the counts are then
    those of a sample fed the other pool alone (at the same rate)."""
    parts = _minutes(4, 9)
    names, objects = ["S/BP1", "S/BP2"], ["A", "B", "C", "D"]
    both, alone = Sample(6_000), Sample(6_000)
    for pool, t, o, p, a, f in parts:
        both.add(pool, t, o, p, a, f)
    both.drop({0})
    assert 0 not in np.concatenate([part[1] for part in both.parts]) and 0 not in np.concatenate(both.counted)[:, 1]
    alone.rate = both.rate
    for pool, t, o, p, a, f in parts:
        if pool == 1:
            alone.add(pool, t, o, p, a, f)
    assert both.rate == 0.125 and both.kept == alone.kept
    _same(both.trace(names, objects), alone.trace(names, objects))
