"""Feeds run in the kernel's own thread (`Simulator.set_background`): every answer and every
snapshot byte equal those of feeding in the caller's thread, whatever is asked between feeds."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from poolsight.infra.process import stat_fields
from poolsight.simulator import SimConfig, Simulator

CONFIG = SimConfig(mode="exact", pane_seconds=60.0, window_panes=4)
OBJECTS = np.array([f"DB1.T{i}" for i in range(12)])


def _batches(seed: int, n: int, size: int) -> list[tuple[npt.NDArray[Any], ...]]:
    """Two pools interleaved in each batch, over eight 60 s panes, every access type and function."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 480.0, n))
    pools = np.where(rng.random(n) < 0.6, "BP1", "BP2")
    objects = OBJECTS[rng.integers(0, len(OBJECTS), n)]
    pages = (rng.zipf(1.2, n) % 3000).astype(np.uint64)
    access = rng.choice(np.array([0, 0, 1, 2], dtype=np.uint8), n)
    function = rng.choice(np.array([0, 0, 0, 0, 1, 2], dtype=np.uint8), n)
    return [
        (t[i : i + size], pools[i : i + size], objects[i : i + size], pages[i : i + size], access[i : i + size],
         function[i : i + size])
        for i in range(0, n, size)
    ]  # fmt: skip


def _pair() -> tuple[Simulator, Simulator]:
    here, behind = Simulator(CONFIG), Simulator(CONFIG)
    behind.set_background()
    for sim in (here, behind):
        sim.set_pool_policy("BP1", 500, "lru-vpseqt", vpseqt=60.0)
        sim.set_pool_policy("BP2", 300, "fifo")
    return here, behind


def test_background_feeds_answer_as_feeds_in_the_callers_thread() -> None:
    here, behind = _pair()
    for k, batch in enumerate(_batches(5, 60_000, 1_500)):
        assert here.feed(*batch) == behind.feed(*batch) == len(batch[0])
        if k % 7 == 3:  # asked with a batch in flight: the answer waits for it
            assert behind.results() == here.results(), k
        if k % 11 == 5:
            assert behind.snapshot() == here.snapshot(), k
        if k == 20:  # the pool altered between feeds: its caches retargeted
            for sim in (here, behind):
                sim.set_pool_policy("BP1", 800, "lru-vpseqt", vpseqt=60.0)
        if k == 30:  # off and on again mid-stream
            behind.set_background(False)
        if k == 33:
            behind.set_background()
    assert behind.snapshot() == here.snapshot()
    results = behind.results()
    assert results == here.results()
    assert set(results) == {"BP1", "BP2"}
    for r in results.values():  # a curve, not zeros
        assert 0 < r.curve[0].hits < r.curve[-1].hits < r.refs


def test_a_refused_batch_leaves_the_state_as_it_was() -> None:
    here, behind = _pair()
    batches = _batches(8, 12_000, 2_000)
    for batch in batches[:3]:
        here.feed(*batch)
        behind.feed(*batch)
    t, pools, objects, pages, access, function = batches[3]
    with pytest.raises(ValueError, match="access has 1999 values, times has 2000"):  # the kernel's check
        behind.feed(t, pools, objects, pages, access[:-1], function)
    for batch in batches[3:]:
        here.feed(*batch)
        behind.feed(*batch)
    assert behind.snapshot() == here.snapshot()


def _kernel_threads() -> dict[int, int]:
    """This process's threads named by the kernel: CPU ticks (user + system) by thread id."""
    out = {}
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            if (task / "comm").read_text().strip() != "poolsight-feed":
                continue
            fields = stat_fields((task / "stat").read_text())
        except FileNotFoundError:  # ended meanwhile
            continue
        out[int(task.name)] = int(fields[11]) + int(fields[12])  # utime, stime (stat fields 14, 15)
    return out


def _new_kernel_thread(before: dict[int, int]) -> set[int]:
    """The kernel's threads started since `before`. A new thread names itself once it first runs
    (Rust's thread builder sets the name from inside it), so on a busy machine it may still carry
    its parent's name right after the feed that started it: looked for again, up to 10 s."""
    deadline = time.monotonic() + 10
    while True:
        new = set(_kernel_threads()) - set(before)
        if new or time.monotonic() > deadline:
            return new
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux's /proc")
def test_the_batches_run_in_the_kernels_own_thread() -> None:
    before = _kernel_threads()
    sim = Simulator(CONFIG)
    sim.set_pool_policy("BP1", 20_000, "lru-vpseqt")
    sim.set_background()
    assert set(_kernel_threads()) == set(before)  # started by the first feed
    rng = random.Random(2)
    n = 400_000
    for _ in range(5):  # about a second of the caches' work, in that thread
        t = np.sort(np.array([rng.uniform(0, 50) for _ in range(n)]))
        pages = np.array([rng.randrange(60_000) for _ in range(n)], dtype=np.uint64)
        sim.feed(t, "BP1", "DB1.TS1", pages)
    (tid,) = _new_kernel_thread(before)
    sim.results()
    assert _kernel_threads()[tid] >= 10  # ticks of 10 ms
    sim.set_background(False)
    assert tid not in _kernel_threads()
    sim.set_background()
    for _ in range(3):  # queued, not yet run, when the simulator goes
        sim.feed(t, "BP1", "DB1.TS1", pages)
    (again,) = _new_kernel_thread(before)
    del sim
    assert again not in _kernel_threads()  # ended, the queue dropped
