"""Replays of layouts: every pool's rate over the same span."""

from __future__ import annotations

import numpy as np
import pytest

from poolsight.advice.replay import PoolRun, Trace, at_size


def test_a_burst_moved_to_its_own_pool_is_rated_over_the_whole_span() -> None:
    rng = np.random.default_rng(1)
    n_a, n_b = 36_000, 20_000
    t = np.concatenate([np.sort(rng.uniform(0, 3600, n_a)), np.linspace(10, 70, n_b)])
    order = np.argsort(t, kind="stable")
    trace = Trace(
        t[order],
        np.zeros(n_a + n_b, dtype=np.int32),
        np.concatenate([np.zeros(n_a, dtype=np.int32), np.ones(n_b, dtype=np.int32)])[order],
        np.concatenate([rng.integers(0, 50_000, n_a), np.arange(n_b)]).astype(np.uint64)[order],
        np.zeros(n_a + n_b, dtype=np.uint8),  # all random: each of B's pages is a sync read
        np.zeros(n_a + n_b, dtype=np.uint8),
        ["S/BP1"],
        ["A", "B"],
    )
    span = float(t.max() - t.min())
    runs = {"S/BP1": PoolRun(1000, "lru", 100.0), "S/BP9": PoolRun(1000, "lru", 100.0)}
    after = at_size(trace, runs, {"B": "S/BP9"}, {"S/BP1"})
    # B's 20,000 distinct pages are 20,000 misses, spread over the trace's hour, not over its minute.
    assert after["S/BP9"].sync_reads_per_s == pytest.approx(n_b / span)
