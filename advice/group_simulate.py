"""The group simulation behind offline group advice: one GroupSpec's members' getpages from the
directory's trace, merged in time order, through the simulator's GroupSimulator over the GBP
grid around the group's current setting, read back as the GroupSurface the rules take."""

from __future__ import annotations

import numpy as np

from poolsight.advice.group_model import GridPoint, GroupSurface, LbpPoint, MemberLbp
from poolsight.advice.group_offline import GroupSpec
from poolsight.advice.replay import Trace
from poolsight.simulator.engine import default_ladder
from poolsight.simulator.group import GbpSetting, GroupOptions, GroupSimulator
from poolsight.simulator.group_grid import assumed_setting, gbp_grid


def simulate_group(spec: GroupSpec, trace: Trace) -> GroupSurface | None:
    """The group's surface over the whole trace; None when its members sent no getpages."""
    codes = {trace.pools.index(tp): m for m, tp in spec.trace_pools.items() if tp in trace.pools}
    mask = np.isin(trace.pool, list(codes))
    if not mask.any():
        return None
    idx = np.flatnonzero(mask)
    order = idx[np.lexsort((trace.pool[idx], trace.times[idx]))]  # one time order; ties by member
    members = tuple(spec.members)
    current = (
        GbpSetting(spec.data_entries, spec.ratio) if spec.data_entries else assumed_setting(spec.members, spec.ratio)
    )
    points = gbp_grid(current, spec.page_size)
    sim = GroupSimulator(
        members,
        spec.members,
        points,
        GroupOptions(reference=False, gbpoolt=spec.gbpoolt, infer_dependence=True),
        lbp_curve_sizes={m: default_ladder(v) for m, v in spec.members.items()},
    )
    member_of = np.empty(max(codes) + 1, dtype=object)
    for c, m in codes.items():
        member_of[c] = m
    objects = np.asarray(trace.objects, dtype=object)
    step = 1 << 20
    for i in range(0, len(order), step):
        sel = order[i : i + step]
        sim.feed(
            member_of[trace.pool[sel]].astype(str),
            objects[trace.obj[sel]].astype(str),
            trace.pages[sel],
            trace.function[sel],
            trace.times[sel],
        )
    curves = sim.lbp_curves()
    return GroupSurface(
        group=spec.group,
        gbp=spec.gbp,
        pool=spec.pool,
        page_size=spec.page_size,
        seconds=max(trace.seconds, 1e-9),
        data_entries=current.data_entries,
        ratio=current.ratio,
        points=tuple(GridPoint.of(p, spec.page_size) for p in sim.points()),
        members=tuple(
            MemberLbp(
                m,
                spec.members[m],
                tuple(LbpPoint(p.buffers, p.xi_disk + p.nf_disk, p.xi_gbp + p.nf_gbp) for p in curves[m]),
            )
            for m in members
        ),
        platform=spec.platform,
        gbpoolt=spec.gbpoolt,
    )
