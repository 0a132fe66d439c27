"""The budget allocation is optimal on the curves given: equal to a brute-force search, also on
non-convex curves (a knee where a working set fits), where a greedy walk is not."""

from __future__ import annotations

import random

import pytest

from poolsight.advice.budget import PoolCurve, allocate, brute_force, frames_for


def knee(key: str, current: int, ws: int, before: float, after: float, io: float = 0.001, fpb: int = 1) -> PoolCurve:
    """Flat until the working set fits, then a cliff: the shape greedy marginal analysis gets wrong."""
    sizes = tuple(current + k * ws // 4 for k in range(9))
    return PoolCurve(key, current, fpb, sizes, tuple(after if s >= current + ws else before for s in sizes), io)


def test_a_knee_beyond_the_first_step_wins_where_greedy_stops() -> None:
    # A: small steady gains; B: nothing until 8,000 buffers more, then 500 reads/s less.
    a = PoolCurve("A", 10_000, 1, (10_000, 12_000, 14_000, 16_000, 18_000), (100.0, 90.0, 80.0, 70.0, 60.0), 0.001)
    b = knee("B", 10_000, 8_000, 600.0, 100.0)
    alloc = allocate([a, b], 8_000, "reads")
    assert alloc.added_buffers == {"A": 0, "B": 8_000}
    assert alloc.avoided_sync_reads_per_s == pytest.approx(500.0)
    # Greedy on the first step's marginal gain would take A's 10 reads/s per 2,000 buffers all the way.
    value, cost = brute_force([a, b], 8_000, "reads")
    assert value == pytest.approx(500.0) and cost == 8_000


def test_page_sizes_count_in_4k_frames() -> None:
    # The same curve on a 32K pool costs eight times the frames: with 16,000 frames only the 4K pool fits.
    small = PoolCurve("BP1", 1_000, 1, (1_000, 3_000), (200.0, 100.0), 0.001)
    big = PoolCurve("BP32K", 1_000, 8, (1_000, 3_000), (300.0, 100.0), 0.001)
    alloc = allocate([small, big], 16_000, "reads")
    assert alloc.frames == 16_000 and alloc.added_buffers == {"BP1": 0, "BP32K": 2_000}
    assert allocate([small, big], 15_999, "reads").added_buffers == {"BP1": 2_000, "BP32K": 0}


def test_time_objective_weights_reads_by_the_pools_sync_io_time() -> None:
    fast = PoolCurve("FAST", 1_000, 1, (1_000, 2_000), (300.0, 100.0), 0.0002)  # 200 reads/s, 0.04 s/s
    slow = PoolCurve("SLOW", 1_000, 1, (1_000, 2_000), (200.0, 100.0), 0.002)  # 100 reads/s, 0.2 s/s
    assert allocate([fast, slow], 1_000, "reads").added_buffers == {"FAST": 1_000, "SLOW": 0}
    assert allocate([fast, slow], 1_000, "time").added_buffers == {"FAST": 0, "SLOW": 1_000}


def test_a_flat_curve_gets_nothing_and_limits_hold() -> None:
    flat = PoolCurve("FLAT", 5_000, 1, (5_000, 7_000, 10_000), (3.0, 3.0, 3.0), 0.001)
    steep = PoolCurve("STEEP", 5_000, 1, (5_000, 7_000, 10_000), (300.0, 200.0, 50.0), 0.001, max_size=7_000)
    alloc = allocate([flat, steep], 100_000)
    assert alloc.added_buffers == {"FLAT": 0, "STEEP": 2_000}


def test_redistribution_moves_memory_from_a_flat_pool() -> None:
    flat = PoolCurve("FLAT", 10_000, 1, (5_000, 10_000, 15_000), (3.0, 3.0, 3.0), 0.001, min_size=5_000)
    steep = PoolCurve("STEEP", 10_000, 1, (5_000, 10_000, 15_000), (500.0, 300.0, 50.0), 0.001)
    alloc = allocate([flat, steep], 0, "reads", shrink=True)
    assert alloc.added_buffers == {"FLAT": -5_000, "STEEP": 5_000}
    assert alloc.frames == 0
    assert alloc.avoided_sync_reads_per_s == pytest.approx(250.0)


@pytest.mark.parametrize("seed", range(40))
def test_equals_brute_force_on_random_non_convex_curves(seed: int) -> None:
    rng = random.Random(seed)
    pools = []
    for i in range(rng.randint(2, 5)):
        current = rng.choice([2_000, 5_000, 10_000])
        sizes = sorted({max(1, round(current * 2 ** (k / 2))) for k in range(-4, 6)})
        reads, level = [], rng.uniform(100, 1000)
        for _ in sizes:  # non-increasing with random plateaus and cliffs
            level *= rng.choice([1.0, 1.0, 0.97, 0.6, 0.2])
            reads.append(level)
        pools.append(
            PoolCurve(
                f"BP{i}", current, rng.choice([1, 1, 2, 8]), tuple(sizes), tuple(reads), rng.uniform(2e-4, 3e-3),
                min_size=rng.choice([None, sizes[1]]), max_size=rng.choice([None, sizes[-2]]),
            )
        )  # fmt: skip
    budget = rng.randint(0, 80_000)
    shrink = rng.random() < 0.4
    for objective in ("time", "reads"):
        alloc = allocate(pools, budget, objective, shrink)  # type: ignore[arg-type]
        best, _ = brute_force(pools, budget, objective, shrink)  # type: ignore[arg-type]
        assert alloc.value == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert alloc.frames <= budget
        # The value reported is the allocation's own: recomputed from the curves.
        recomputed = sum(
            (p.sync_at(p.current) - p.sync_at(alloc.sizes[p.key])) * (p.sync_io_seconds if objective == "time" else 1)
            for p in pools
        )
        assert alloc.value == pytest.approx(recomputed, rel=1e-9, abs=1e-12)


def test_budget_units() -> None:
    assert frames_for(budget_buffers=20_000) == 20_000
    assert frames_for(budget_gb=1.0) == 262_144
    assert frames_for() == 0


def test_limits_are_met_even_when_they_cost() -> None:
    a = PoolCurve("A", 10_000, 1, (5_000, 10_000, 20_000), (300.0, 200.0, 100.0), 0.001, min_size=12_000)
    b = PoolCurve("B", 10_000, 1, (5_000, 10_000, 20_000), (900.0, 300.0, 100.0), 0.001)
    alloc = allocate([a, b], 2_000, "reads")
    assert alloc.sizes == {"A": 12_000, "B": 10_000}  # A must grow to its minimum, whatever B would gain
    shrunk = allocate([a, PoolCurve("C", 10_000, 1, (5_000, 10_000), (50.0, 50.0), 0.001, max_size=8_000)], 2_000,
                      "reads", shrink=True)  # fmt: skip
    # C is flat: it gives back all it may (ties go to the cheaper), A takes its minimum.
    assert shrunk.sizes == {"A": 12_000, "C": 5_000} and shrunk.frames == 2_000 - 5_000
    with pytest.raises(ValueError, match="limits"):
        allocate([a], 1_000, "reads")
