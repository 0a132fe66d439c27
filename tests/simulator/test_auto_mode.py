"""The streaming job's default simulation (AUTO_SAMPLES fixed-size SHARDS): exact for a pool
whose footprint stays under the budget, sampled within the accuracy bound above it."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from poolsight.simulator import SimConfig, Simulator
from poolsight.simulator.engine import AUTO_SAMPLES

SIZES = [100, 1000, 5000, 20000, 50000, 100000, 200000]


def _curve(cfg: SimConfig, pages: npt.NDArray[np.int64]) -> tuple[list[float | None], float]:
    sim = Simulator(cfg)
    n = len(pages)
    sim.feed(np.linspace(0, 600, n), np.full(n, "BP1"), np.full(n, "DB.TS"), pages)
    r = sim.result("BP1", SIZES)
    return [c.hit_ratio for c in r.curve], float(r.sampling_rate)


def test_under_the_budget_it_is_the_exact_simulation_and_above_it_within_the_bound() -> None:
    rng = np.random.default_rng(7)
    auto = SimConfig(mode="shards", max_samples=AUTO_SAMPLES, window_panes=1000)
    exact = SimConfig(window_panes=1000)
    small = (rng.zipf(1.2, 400_000) % (AUTO_SAMPLES // 2)).astype(np.int64)
    (a, rate), (e, _) = _curve(auto, small), _curve(exact, small)
    assert rate == 1.0 and a == e  # the same floats: nothing sampled
    big = (rng.zipf(1.2, 1_500_000) % (6 * AUTO_SAMPLES)).astype(np.int64)
    (a, rate), (e, _) = _curve(auto, big), _curve(exact, big)
    assert 0 < rate < 0.5
    assert float(np.mean(np.abs(np.array(a) - np.array(e)))) <= 0.005, (a, e)
