"""The online replay's trace, bounded: a spatial sample once the getpages outgrow the bound,
whose replay stays near the whole trace's (advice/recent.py, no Kafka: the sample itself)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from poolsight.advice.recent import Sample, page_hash
from poolsight.advice.replay import PoolRun, at_size
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
    s, _ = _sample(200_000)
    assert s.kept <= 200_000 and s.rate == 0.125  # 1.7 M getpages, halved three times
    sampled = s.trace(["S/BP1"], objects)
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
