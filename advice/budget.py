"""A memory budget across pools, optimal on the curves given.

Curves are not convex (a knee where a working set fits), so a greedy walk along
marginal gains can miss the best allocation. This is the exact multiple-choice
knapsack: each pool picks one of its candidate sizes; a dynamic programme over
(frames spent, value) keeps only the Pareto-optimal partial allocations, which is
exact (a dominated partial allocation cannot become better by what follows) and
small in practice. Costs are in 4K frames: a 32K buffer costs eight.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Objective = Literal["time", "reads"]


@dataclass(frozen=True)
class Option:
    size: int  # buffers
    cost: int  # 4K frames more than now (negative: freed)
    value: float  # avoided sync reads/s, or sync I/O seconds per second


@dataclass(frozen=True)
class PoolCurve:
    """One pool as the budget sees it."""

    key: str
    current: int  # buffers
    frames_per_buffer: int
    sizes: tuple[int, ...]  # simulated sizes
    sync_reads_per_s: tuple[float, ...]  # at those sizes
    sync_io_seconds: float
    min_size: int | None = None
    max_size: int | None = None

    def sync_at(self, size: int) -> float:
        """Sync reads/s at `size`: linear between the simulated sizes, flat beyond them."""
        pts = sorted(zip(self.sizes, self.sync_reads_per_s, strict=True))
        return float(np.interp(size, [s for s, _ in pts], [r for _, r in pts]))

    def options(self, objective: Objective, shrink: bool) -> list[Option]:
        """Every size within [min, max] among the current size, the simulated sizes and the limits
        themselves (below now only when shrinking, or when max says so). A current size outside the
        limits is not an option: the pool must move into them."""
        lo = self.min_size if self.min_size is not None else (1 if shrink else self.current)
        hi = self.max_size if self.max_size is not None else max(max(self.sizes), self.current)
        if not shrink and self.max_size is None:
            lo = max(lo, self.current)
        base = self.sync_at(self.current)
        weight = self.sync_io_seconds if objective == "time" else 1.0
        out = []
        for s in sorted({*self.sizes, self.current, *(x for x in (self.min_size, self.max_size) if x is not None)}):
            if lo <= s <= hi and (shrink or s >= self.current or (self.max_size is not None and s == hi)):
                out.append(Option(s, (s - self.current) * self.frames_per_buffer, (base - self.sync_at(s)) * weight))
        return out


@dataclass
class Allocation:
    sizes: dict[str, int]  # pool -> size chosen
    added_buffers: dict[str, int]  # pool -> buffers added (negative: removed)
    frames: int  # 4K frames spent (net)
    value: float  # the objective reached
    avoided_sync_reads_per_s: float
    avoided_sync_io_seconds_per_s: float
    evaluated_states: int = 0
    per_pool: dict[str, dict[str, float]] = field(default_factory=dict)


def allocate(
    pools: Sequence[PoolCurve], budget_frames: int, objective: Objective = "time", shrink: bool = False
) -> Allocation:
    """The sizes that maximise the objective with at most `budget_frames` 4K frames added (net:
    with `shrink`, memory taken from one pool can go to another). Ties go to the cheaper choice."""
    options = [p.options(objective, shrink) for p in pools]
    # The least each remaining suffix of pools can cost: a state over budget may still come back
    # under it only through pools not yet decided.
    least = [0] * (len(pools) + 1)
    for i in range(len(pools) - 1, -1, -1):
        least[i] = least[i + 1] + min(0, *(o.cost for o in options[i]))
    # States: (cost, value, choice per pool so far); kept Pareto-optimal (cheaper or better).
    states: list[tuple[int, float, tuple[int, ...]]] = [(0, 0.0, ())]
    evaluated = 0
    for i, opts in enumerate(options):
        grown = [
            (c + o.cost, v + o.value, (*ch, k))
            for c, v, ch in states
            for k, o in enumerate(opts)
            if c + o.cost + least[i + 1] <= budget_frames
        ]
        evaluated += len(grown)
        grown.sort(key=lambda s: (s[0], -s[1]))
        states = []
        best = -math.inf
        for s in grown:
            if s[1] > best + 1e-12:
                states.append(s)
                best = s[1]
    feasible = [s for s in states if s[0] <= budget_frames]
    if not feasible or any(not o for o in options):
        raise ValueError(
            f"no allocation within {budget_frames:,} frames meets the pools' limits "
            "(a minimum above the current size costs frames; a maximum below it needs --redistribute)"
        )
    cost, value, choice = max(feasible, key=lambda s: (s[1], -s[0]))
    return _allocation(pools, options, choice, cost, value, evaluated)


def brute_force(
    pools: Sequence[PoolCurve], budget_frames: int, objective: Objective = "time", shrink: bool = False
) -> tuple[float, int]:
    """Every combination of the same options: (best value, its cost). For tests."""

    options = [p.options(objective, shrink) for p in pools]
    best = (-math.inf, 0)
    for combo in itertools.product(*options):
        cost = sum(o.cost for o in combo)
        value = sum(o.value for o in combo)
        if cost <= budget_frames and (value > best[0] + 1e-12 or (abs(value - best[0]) <= 1e-12 and cost < best[1])):
            best = (value, cost)
    return best


def _allocation(
    pools: Sequence[PoolCurve],
    options: list[list[Option]],
    choice: tuple[int, ...],
    cost: int,
    value: float,
    evaluated: int,
) -> Allocation:
    sizes: dict[str, int] = {}
    added: dict[str, int] = {}
    per_pool: dict[str, dict[str, float]] = {}
    reads = secs = 0.0
    for p, opts, k in zip(pools, options, choice, strict=True):
        o = opts[k]
        sizes[p.key] = o.size
        added[p.key] = o.size - p.current
        saved = p.sync_at(p.current) - p.sync_at(o.size)
        reads += saved
        secs += saved * p.sync_io_seconds
        per_pool[p.key] = {
            "size_before": p.current,
            "size_after": o.size,
            "sync_reads_per_s_before": p.sync_at(p.current),
            "sync_reads_per_s_after": p.sync_at(o.size),
            "frames": o.cost,
        }
    return Allocation(sizes, added, cost, value, reads, secs, evaluated, per_pool)


def frames_for(budget_buffers: int | None = None, budget_gb: float | None = None) -> int:
    """A budget in 4K frames: buffers count as 4K buffers, gigabytes as 2**30 bytes."""
    if budget_gb is not None:
        return int(budget_gb * 2**30 // 4096)
    return int(budget_buffers or 0)
