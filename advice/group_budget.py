"""One memory budget across a group's LBPs and its GBP, optimal on the surfaces given.

Each member's LBP picks one of its candidate sizes, the GBP one grid point; memory is net 4K
frames against today, each member's LBP counted once and the GBP's structure once per copy (two
when duplexed). For a fixed GBP point the group's disk reads, sum of reads_m(L_m) x miss_m(g), are
separable over the members, so each point is an exact multiple-choice knapsack over the LBPs
(advice/budget.py's Pareto programme) with what the point leaves of the budget; the best point
wins. `brute_force` tries every combination, for tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from poolsight.advice.budget import PoolCurve, allocate
from poolsight.advice.commands import zos_min_vpsize
from poolsight.advice.group_model import GridPoint, GroupSurface, MemberLbp, disk_reads, gbp_frames

TOLERANCE = 1e-9  # reads per second closer than this are a tie: the cheaper choice wins


@dataclass(frozen=True)
class GroupAllocation:
    point: GridPoint
    sizes: dict[str, int]  # member -> LBP size chosen
    frames: int  # net 4K frames, LBPs + GBP copies
    lbp_frames: int
    gbp_frames: int  # all copies
    disk_reads_before_per_s: float
    disk_reads_after_per_s: float
    points_evaluated: int
    per_member: dict[str, dict[str, float]] = field(default_factory=dict)


def _curve(
    m: MemberLbp,
    surface: GroupSurface,
    point: GridPoint,
    shrink: bool,
    min_size: Mapping[str, int],
    max_size: Mapping[str, int],
) -> PoolCurve:
    """The member's LBP as budget.py sees it at this GBP point: disk reads/s against size."""
    sizes = tuple(sorted({p.size for p in m.curve}))
    secs = surface.seconds or 1.0
    miss = point.miss(m.member)
    lo = min_size.get(m.member)
    if lo is None and shrink:
        # Never below the simulated sizes: the curve is flat beyond them, which would make a smaller
        # LBP look free.
        floor = zos_min_vpsize(surface.pool, surface.page_size) if surface.platform == "zos" else 1
        lo = max(floor, min(min(sizes), m.vpsize))
    return PoolCurve(
        m.member,
        m.vpsize,
        surface.frames_per_buffer,
        sizes,
        tuple(m.reads(s) * miss / secs for s in sizes),
        1.0,
        lo,
        max_size.get(m.member),
    )


def _points(surface: GroupSurface, shrink: bool) -> list[tuple[GridPoint, int]]:
    """The grid points with their net GBP frames; without shrink the GBP does not give memory back."""
    now = gbp_frames(surface.current, surface.copies)
    out = [(p, gbp_frames(p, surface.copies) - now) for p in surface.points]
    return [(p, c) for p, c in out if shrink or c >= 0]


def allocate_group(
    surface: GroupSurface,
    budget_frames: int,
    shrink: bool = False,
    min_size: Mapping[str, int] | None = None,
    max_size: Mapping[str, int] | None = None,
) -> GroupAllocation:
    """The LBP sizes and the GBP point with the fewest disk sync reads within `budget_frames` 4K
    frames added (net: with `shrink`, memory taken from an LBP or the GBP can go elsewhere). Ties go
    to the cheaper choice."""
    lo, hi = min_size or {}, max_size or {}
    secs = surface.seconds or 1.0
    best: tuple[float, int, GridPoint, dict[str, int], int] | None = None
    evaluated = 0
    for point, gcost in _points(surface, shrink):
        curves = [_curve(m, surface, point, shrink, lo, hi) for m in surface.members]
        try:
            alloc = allocate(curves, budget_frames - gcost, "reads", shrink=shrink)
        except ValueError:  # the point leaves too little for the LBPs' limits
            continue
        evaluated += 1
        reads = disk_reads(surface, alloc.sizes, point) / secs
        cost = gcost + alloc.frames
        if best is None or reads < best[0] - TOLERANCE or (reads <= best[0] + TOLERANCE and cost < best[1]):
            best = (reads, cost, point, alloc.sizes, alloc.frames)
    if best is None:
        raise ValueError(
            f"{surface.group}/{surface.gbp}: no LBP sizes and GBP point within {budget_frames:,} frames meet the limits"
        )
    reads, cost, point, sizes, lbp = best
    now = surface.current_sizes()
    per_member = {
        m.member: {
            "size_before": m.vpsize,
            "size_after": sizes[m.member],
            "sync_reads_per_s_before": m.reads(m.vpsize) / secs,
            "sync_reads_per_s_after": m.reads(sizes[m.member]) / secs,
            "miss_share_before": surface.current.miss(m.member),
            "miss_share_after": point.miss(m.member),
            "disk_reads_per_s_before": m.reads(m.vpsize) * surface.current.miss(m.member) / secs,
            "disk_reads_per_s_after": m.reads(sizes[m.member]) * point.miss(m.member) / secs,
            "frames": (sizes[m.member] - m.vpsize) * surface.frames_per_buffer,
        }
        for m in surface.members
    }
    return GroupAllocation(
        point,
        dict(sizes),
        cost,
        lbp,
        cost - lbp,
        disk_reads(surface, now, surface.current) / secs,
        reads,
        evaluated,
        per_member,
    )


def brute_force(
    surface: GroupSurface,
    budget_frames: int,
    shrink: bool = False,
    min_size: Mapping[str, int] | None = None,
    max_size: Mapping[str, int] | None = None,
) -> tuple[float, int]:
    """Every combination of the same candidates: (fewest disk reads/s, its net frames). For tests."""
    lo, hi = min_size or {}, max_size or {}
    secs = surface.seconds or 1.0
    best = (math.inf, 0)
    for point, gcost in _points(surface, shrink):
        options = [_curve(m, surface, point, shrink, lo, hi).options("reads", shrink) for m in surface.members]
        for combo in itertools.product(*options):
            cost = gcost + sum(o.cost for o in combo)
            if cost > budget_frames:
                continue
            sizes = {m.member: o.size for m, o in zip(surface.members, combo, strict=True)}
            reads = disk_reads(surface, sizes, point) / secs
            if reads < best[0] - TOLERANCE or (reads <= best[0] + TOLERANCE and cost < best[1]):
                best = (reads, cost)
    return best
