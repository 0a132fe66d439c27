"""HeapTrim gives freed heap back at most every `every` seconds (glibc's malloc_trim)."""

from __future__ import annotations

import time

import pytest

from poolsight.flink_jobs.heap_trim import HeapTrim


def _rss_kb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_it_trims_once_per_period(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    t = HeapTrim(every=30.0)
    for step in (0.0, 10.0, 29.0):  # within the period
        clock[0] = 100.0 + step
        t.maybe()
    assert t.trims == 0
    clock[0] = 130.0
    t.maybe()
    t.maybe()
    assert t.trims == 1
    clock[0] = 160.5
    t.maybe()
    assert t.trims == 2


@pytest.mark.skipif(HeapTrim()._libc is None, reason="not glibc: no malloc_trim")
def test_a_trim_returns_freed_chunks_that_glibc_kept() -> None:
    # Blocks below the mmap threshold (in the heap), every other one freed: the holes
    # stay resident until a trim gives their pages back.
    t = HeapTrim(every=0.0)
    blocks = [bytearray(60_000) for _ in range(4_000)]  # ~240 MB, touched
    del blocks[::2]
    before = _rss_kb()
    t.maybe()
    after = _rss_kb()
    assert t.trims == 1
    assert before - after > 50_000, (before, after)  # most of the ~120 MB of holes (without a trim: 0)
    del blocks
