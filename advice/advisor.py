"""From pool states to the whole advice: the budget, then every rule per pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from poolsight.advice import settings as rules
from poolsight.advice.budget import Objective, PoolCurve, allocate
from poolsight.advice.commands import alter_bufferpool, zos_min_vpsize
from poolsight.advice.model import Advice, Costs, Memory, PoolState, StatsPool, confidence, effect


@dataclass
class Budget:
    frames: int = 0  # 4K frames to add (0: none)
    objective: Objective = "time"
    redistribute: bool = False  # pools may give memory to others (the total stays within frames)
    min_size: dict[str, int] = field(default_factory=dict)  # pool (or source/pool) -> buffers
    max_size: dict[str, int] = field(default_factory=dict)

    @property
    def asked(self) -> bool:
        return self.frames > 0 or self.redistribute


GRID_STEPS = 16  # budget candidates between the simulated sizes: the budget in 1/16ths


def _candidates(p: PoolState, frames: int) -> tuple[int, ...]:
    """The simulated sizes, and a grid up to the whole budget so the budget can be spent closely
    (linear between simulated sizes, as the curve is drawn)."""
    step = max(1, frames // p.frames_per_buffer // GRID_STEPS)
    grid = {p.vpsize + k * step for k in range(1, GRID_STEPS + 1)} if frames > 0 else set()
    return tuple(sorted(set(p.curve.sizes) | grid))


def _limit(limits: dict[str, int], p: PoolState) -> int | None:
    return limits.get(p.key, limits.get(p.pool))


def budget_advice(
    pools: Sequence[PoolState], memory: Memory | None, budget: Budget, t: rules.Thresholds, costs: Costs
) -> tuple[dict[str, Any], list[Advice]]:
    """The allocation of one source's pools (the JSON's "budget", keyed by pool) and one piece of
    advice per pool whose size changes."""
    guard = rules.paging_guard(memory, t)
    frames = budget.frames
    out: dict[str, Any] = {
        "frames_4k": frames,
        "gb": frames * 4096 / 2**30,
        "objective": "sync I/O time" if budget.objective == "time" else "sync reads",
        "redistribute": budget.redistribute,
    }
    if memory is not None and memory.min_available_mb is not None and memory.real_storage_mb:
        room = int((memory.min_available_mb - t.free_reserve_share * memory.real_storage_mb) * 2**20 // 4096)
        if 0 <= room < frames:
            out["capped_by_memory"] = f"{frames:,} frames asked, {room:,} available above the reserve"
            frames = room
    if guard is not None:
        out["paging_guard"] = guard
        frames = 0  # redistribution may still move memory between pools: the total does not grow
    curves = [
        PoolCurve(
            p.pool,
            p.vpsize,
            p.frames_per_buffer,
            (sizes := _candidates(p, frames)),
            tuple(p.curve.at(x) for x in sizes),
            p.sync_io_seconds or costs.default_sync_io_seconds,
            _limit(budget.min_size, p) or (zos_min_vpsize(p.pool, p.page_size) if p.platform == "zos" else None),
            _limit(budget.max_size, p),
        )
        for p in pools
    ]
    if not budget.asked or not curves or (frames == 0 and not budget.redistribute):
        out.update({"allocation": {}, "avoided_sync_reads_per_s": 0.0, "avoided_sync_io_seconds_per_s": 0.0})
        return out, []
    try:
        alloc = allocate(curves, frames, budget.objective, shrink=budget.redistribute)
    except ValueError as exc:  # limits no allocation can meet: say so, advise no size
        out.update({"allocation": {}, "avoided_sync_reads_per_s": 0.0, "avoided_sync_io_seconds_per_s": 0.0})
        out["error"] = str(exc)
        return out, []
    out.update(
        {
            "allocation": {k: v for k, v in alloc.added_buffers.items() if v != 0},
            "avoided_sync_reads_per_s": alloc.avoided_sync_reads_per_s,
            "avoided_sync_io_seconds_per_s": alloc.avoided_sync_io_seconds_per_s,
            "frames_used": alloc.frames,
            "pools": alloc.per_pool,
            "method": f"exact: Pareto dynamic programme over {alloc.evaluated_states:,} partial allocations",
        }
    )
    advice = []
    for p in pools:
        size = alloc.sizes[p.pool]
        if size == p.vpsize:
            continue
        before, after = p.curve.at(p.vpsize), p.curve.at(size)
        io = p.sync_io_seconds or costs.default_sync_io_seconds
        advice.append(
            Advice(
                kind="budget",
                source=p.source,
                pool=p.pool,
                objects=[],
                summary=f"{p.pool}: VPSIZE {p.vpsize:,} -> {size:,} ({size - p.vpsize:+,} buffers of "
                f"{p.page_size // 1024}K): {before:,.1f} -> {after:,.1f} sync reads/s",
                evidence={
                    "curve": {str(s): p.curve.at(s) for s in p.curve.sizes},
                    "sync_io_seconds": io,
                    "page_size": p.page_size,
                    "from": "sim_curve at the pool's policy",
                },
                predicted={"sync_reads_per_s_before": before, "sync_reads_per_s_after": after}
                | effect(before - after, io, costs),
                confidence=confidence(p),
                command=[alter_bufferpool(p.platform, p.pool, VPSIZE=size)],
            )
        )
    return out, advice


def pool_advice(p: PoolState, memory: Memory | None, t: rules.Thresholds, costs: Costs) -> list[Advice]:
    """Every settings rule for one pool."""
    guard = rules.paging_guard(memory, t)
    return [
        *rules.write_thresholds(p, t),
        *rules.vpseqt(p, t, costs),
        *rules.page_fix(p, t, memory, guard),
        *rules.fifo(p, t, costs),
        *rules.shrink(p, t, costs),
    ]


def stats_advice(p: StatsPool, memory: Memory | None, t: rules.Thresholds) -> list[Advice]:
    """The rules statistics alone support, for a pool with no simulated curve: VDWQT, PGFIX and 1 MB
    frames. The budget, shrink, VPSEQT, FIFO and placement rules need a simulation: never this pool."""
    guard = rules.paging_guard(memory, t)
    return [*rules.write_thresholds(p, t), *rules.page_fix(p, t, memory, guard)]


def report(budget: dict[str, Any], advice: list[Advice], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document: {"budget": ..., "advice": [...]} (and what else was considered)."""
    return {"budget": budget, "advice": [a.as_dict() for a in advice], **(extra or {})}
