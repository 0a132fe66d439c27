"""Advice for one GBP of a data-sharing group: the budget across the members' LBPs and the GBP
(`gbp_budget`), the RATIO without directory reclaims (`gbp_ratio`) and the size where no write
fails for lack of storage (`gbp_size`), each an `Advice` row with pool = the GBP and source = the
group, beside the group's section of the JSON document."""

from __future__ import annotations

import math
from typing import Any

from poolsight.advice.advisor import Budget
from poolsight.advice.commands import (
    alter_bufferpool,
    alter_groupbufferpool,
    cfrm_structure,
    on_member,
    setxcf_alter,
    setxcf_rebuild,
    update_cf_gbp_sz,
)
from poolsight.advice.group_budget import GroupAllocation, allocate_group
from poolsight.advice.group_model import (
    FRAMES_PER_MB,
    GridPoint,
    GroupSurface,
    ModelCheck,
    approximation,
    approximation_summary,
    disk_reads,
)
from poolsight.advice.group_rules import RatioChoice, Seed004, safe_size, zero_reclaim_ratio
from poolsight.advice.model import Advice, Costs, effect

POLICY_HEADROOM = 1.5  # CFRM SIZE / INITSIZE: IBM suggests 1.5 to 2 (z/OS MVS Setting Up a Sysplex)
MODEL_NOTE = (
    "disk_m(L, g) = reads_m(L) x miss_m(g): the member's LBP curve with invalidations (run at today's GBP) "
    "times the share of sync reads the GBP does not return at point g (the grid, LBPs at today's sizes)"
)
RATIO_NOTE = (
    "RATIO takes effect at the next allocation of the structure: a simplex GBP by SETXCF START,REBUILD; "
    "a duplexed one goes back to simplex first (SETXCF STOP,REBUILD,DUPLEX), is rebuilt, then duplexed again"
)
POLICY_NOTE = (
    "SETXCF START,ALTER can grow the structure up to the CFRM policy's SIZE (DSNB757I MAX SIZE INDICATED IN "
    "POLICY); beyond it, or to keep the size at the next allocation, update the policy's STRUCTURE statement "
    "(IXCMIAPU) and start it (SETXCF START,POLICY,TYPE=CFRM,POLNAME=...)"
)


def _rate(surface: GroupSurface, v: float) -> float:
    return v / (surface.seconds or 1.0)


def point_view(surface: GroupSurface, p: GridPoint) -> dict[str, Any]:
    """A grid point as the document and the evidence show it: setting, memory and rates per second."""
    t = p.total
    return {
        "data_entries": p.data_entries,
        "ratio": p.ratio,
        "directory_entries": p.directory_entries,
        "structure_mb": p.structure_mb,
        "memory_mb": p.structure_mb * surface.copies,
        "disk_sync_reads_per_s": _rate(surface, t.disk_sync_reads),
        "gbp_hit_ratio": t.gbp_hit_ratio,
        "directory_reclaims_per_s": _rate(surface, t.directory_reclaims),
        "xi_due_to_reclaims_per_s": _rate(surface, t.xi_due_to_reclaims),
        "xi_due_to_writes_per_s": _rate(surface, t.xi_due_to_writes),
        "writes_failed_no_storage_per_s": _rate(surface, t.writes_failed_no_storage),
        "castout_pages_per_s": _rate(surface, t.castout_pages),
    }


def size_commands(surface: GroupSurface, structure_mb: float) -> list[str]:
    """The structure at a new size: z/OS SETXCF and the CFRM policy statement (KB); pureScale CF_GBP_SZ
    (4 KB pages). The allocated size, when known, is scaled (the CF's own controls grow with it)."""
    cur = surface.current.structure_mb
    if surface.allocated_kb and cur > 0:
        kb = math.ceil(surface.allocated_kb * structure_mb / cur)
    else:
        kb = math.ceil(structure_mb * 1024)
    if surface.platform == "luw":
        return [update_cf_gbp_sz(math.ceil(kb / 4), surface.database)]
    return [
        cfrm_structure(surface.group, surface.gbp, kb, math.ceil(kb * POLICY_HEADROOM)),
        setxcf_alter(surface.group, surface.gbp, kb),
    ]


def ratio_commands(surface: GroupSurface, ratio: float) -> list[str]:
    out = [alter_groupbufferpool(surface.gbp, RATIO=ratio)]
    if not surface.duplexed:
        out.append(setxcf_rebuild(surface.group, surface.gbp))
    return out


def _lbp_commands(surface: GroupSurface, sizes: dict[str, int]) -> tuple[list[str], list[str]]:
    """Per member `-ALTER BUFFERPOOL` routed by its command prefix (z/OS) or `ALTER BUFFERPOOL ..
    MEMBER n` (pureScale); and what could not be written (a pureScale member number not known)."""
    cmds, notes = [], []
    for m in surface.members:
        size = sizes[m.member]
        if size == m.vpsize:
            continue
        if surface.platform == "luw":
            n = surface.member_numbers.get(m.member)
            if n is None:
                notes.append(
                    f"{m.member}: member number unknown: ALTER BUFFERPOOL {surface.pool} MEMBER n SIZE {size} on it"
                )
                continue
            cmds.append(alter_bufferpool("luw", surface.pool, member=n, VPSIZE=size))
        else:
            cmds.append(on_member(m.member, alter_bufferpool("zos", surface.pool, VPSIZE=size)))
    return cmds, notes


def _confidence(surface: GroupSurface, checks: list[ModelCheck]) -> dict[str, Any]:
    summary = approximation_summary(checks)
    worst = summary["max_abs_error"]
    if worst is None:
        note = "no simulated disk sync reads to check the model against"
    elif worst <= 0.05:
        note = f"model within {worst:.1%} of the grid's disk sync reads at today's LBP sizes ({len(checks)} points)"
    else:
        note = (
            f"model off by up to {worst:.1%} from the grid's disk sync reads at today's LBP sizes: the LBP curve "
            "was run at today's GBP, so it misses XIs that reclaims at other GBP settings cause"
        )
    if surface.warmup:
        note += "; the window starts at the simulation's (re)start (cold start counts as misses)"
    return {"model_check": summary, "window_seconds": surface.seconds, "warmup": surface.warmup, "note": note}


def _effect(surface: GroupSurface, before: float, after: float, costs: Costs) -> dict[str, Any]:
    io = surface.sync_io_seconds or costs.default_sync_io_seconds
    return {
        "disk_sync_reads_per_s_before": before,
        "disk_sync_reads_per_s_after": after,
        "sync_reads_per_s_before": before,
        "sync_reads_per_s_after": after,
    } | effect(before - after, io, costs)


def _seed004(surface: GroupSurface, gbp: GridPoint, sizes: dict[str, int]) -> Seed004 | None:
    if len(surface.members) < 2:
        return None
    added = sum(sizes[m.member] - m.vpsize for m in surface.members)
    return Seed004(
        len(surface.members),
        gbp.structure_mb,
        surface.lbp_mb(sizes),
        max(0, added),
        gbp.data_entries - surface.current.data_entries,
    )


def budget_row(surface: GroupSurface, alloc: GroupAllocation, checks: list[ModelCheck], costs: Costs) -> Advice | None:
    """`gbp_budget`: the allocation, when it changes anything."""
    cur, p = surface.current, alloc.point
    if p.key == cur.key and all(alloc.sizes[m.member] == m.vpsize for m in surface.members):
        return None
    lbp_cmds, notes = _lbp_commands(surface, alloc.sizes)
    cmds = lbp_cmds
    if not math.isclose(p.ratio, cur.ratio) and surface.platform == "zos":
        cmds += ratio_commands(surface, p.ratio)
        notes.append(RATIO_NOTE)
    if not math.isclose(p.structure_mb, cur.structure_mb):
        cmds += size_commands(surface, p.structure_mb)
        if surface.platform == "zos":
            notes.append(POLICY_NOTE)
    changes = [
        f"{m.member} {surface.pool} {alloc.sizes[m.member] - m.vpsize:+,}"
        for m in surface.members
        if alloc.sizes[m.member] != m.vpsize
    ]
    mb = alloc.frames * 4096 / 2**20
    memory = f"{mb / 1024:+,.2f} GB" if abs(mb) >= 1024 else f"{mb:+,.1f} MB"
    seed = _seed004(surface, p, alloc.sizes)
    return Advice(
        kind="gbp_budget",
        source=surface.group,
        pool=surface.gbp,
        objects=[],
        summary=(
            f"{surface.gbp}: {', '.join(changes) or 'LBPs as they are'}; GBP {cur.structure_mb:,.0f} -> "
            f"{p.structure_mb:,.0f} MB (RATIO {p.ratio:g}): disk sync reads {alloc.disk_reads_before_per_s:,.1f} -> "
            f"{alloc.disk_reads_after_per_s:,.1f}/s for {memory}"
            + (" (the GBP counted twice: duplexed)" if surface.duplexed else "")
        ),
        evidence={
            "members": alloc.per_member,
            "gbp_before": point_view(surface, cur),
            "gbp_after": point_view(surface, p),
            "frames_4k": alloc.frames,
            "lbp_frames_4k": alloc.lbp_frames,
            "gbp_frames_4k": alloc.gbp_frames,
            "gbp_copies": surface.copies,
            "points_evaluated": alloc.points_evaluated,
            "model": MODEL_NOTE,
            "seed004": seed.as_dict() if seed else None,
            "notes": notes,
            "from": "gbp_curve (the grid) and lbp_curve (each member's LBP curve with invalidations)",
        },
        predicted=_effect(surface, alloc.disk_reads_before_per_s, alloc.disk_reads_after_per_s, costs),
        confidence=_confidence(surface, checks),
        command=cmds,
    )


def ratio_row(surface: GroupSurface, choice: RatioChoice, checks: list[ModelCheck], costs: Costs) -> Advice | None:
    """`gbp_ratio`: reclaims today, or a smaller RATIO that keeps them at zero with more data entries."""
    cur = surface.current
    reclaims = cur.total.directory_reclaims
    ev = choice.evidence
    before = _rate(surface, cur.total.disk_sync_reads)
    after = _rate(surface, ev.total.disk_sync_reads)
    if surface.platform != "zos":
        return None  # pureScale's CF apportions directory and data entries itself: no RATIO to set
    if reclaims == 0 and (math.isclose(choice.ratio, cur.ratio) or choice.grows or after >= before):
        return None
    cmds = ratio_commands(surface, choice.ratio)
    notes = [RATIO_NOTE]
    if choice.grows:
        cmds += size_commands(surface, choice.structure_mb)
        notes.append(POLICY_NOTE)
    where = (
        f"the structure grown {cur.structure_mb:,.0f} -> {choice.structure_mb:,.0f} MB (no RATIO of the grid "
        f"avoids reclaims at today's size)"
        if choice.grows
        else f"today's {cur.structure_mb:,.0f} MB structure"
    )
    entries = choice.data_entries(surface.page_size)
    return Advice(
        kind="gbp_ratio",
        source=surface.group,
        pool=surface.gbp,
        objects=[],
        summary=(
            f"{surface.gbp}: RATIO {cur.ratio:g} -> {choice.ratio:g} in {where}: "
            + (
                f"directory reclaims {_rate(surface, reclaims):,.1f} -> 0/s, XIs due to reclaims "
                f"{_rate(surface, cur.total.xi_due_to_reclaims):,.1f} -> 0/s"
                if reclaims
                # No reclaims today: what the smaller RATIO buys is data entries, so say how many.
                else f"data entries {cur.data_entries:,} -> {entries:,} with directory reclaims still 0, "
                f"disk sync reads {before:,.1f} -> {after:,.1f}/s"
            )
        ),
        evidence={
            "gbp_before": point_view(surface, cur),
            "zero_reclaim_point": point_view(surface, ev),
            "structure_mb": choice.structure_mb,
            "data_entries_at_ratio": entries,
            "directory_entries_at_ratio": math.floor(entries * choice.ratio),
            "rule": "the smallest grid RATIO with zero directory reclaims at a structure no larger than "
            + ("the one advised" if choice.grows else "today's")
            + " (reclaims fall as the GBP grows: that RATIO at this size has at least the entries the point had)",
            "notes": notes,
        },
        predicted={
            "directory_reclaims_per_s_before": _rate(surface, reclaims),
            "directory_reclaims_per_s_after": 0.0,
            "xi_due_to_reclaims_per_s_before": _rate(surface, cur.total.xi_due_to_reclaims),
            "xi_due_to_reclaims_per_s_after": 0.0,
            "avoided_directory_reclaims_per_s": _rate(surface, reclaims),
            "avoided_xi_due_to_reclaims_per_s": _rate(surface, cur.total.xi_due_to_reclaims),
            "disk_sync_reads_note": "after: the zero-reclaim point's; the structure advised holds at least its entries",
        }
        | _effect(surface, before, after, costs),
        confidence=_confidence(surface, checks),
        command=cmds,
    )


def size_row(surface: GroupSurface, safe: GridPoint, checks: list[ModelCheck], costs: Costs) -> Advice | None:
    """`gbp_size`: writes fail for lack of storage today; the smallest point where none does."""
    cur = surface.current
    if cur.total.writes_failed_no_storage == 0 or safe.key == cur.key:
        return None
    cmds = size_commands(surface, safe.structure_mb)
    notes = [POLICY_NOTE] if surface.platform == "zos" else []
    if not math.isclose(safe.ratio, cur.ratio) and surface.platform == "zos":
        cmds = ratio_commands(surface, safe.ratio) + cmds
        notes.insert(0, RATIO_NOTE)
    before = _rate(surface, cur.total.disk_sync_reads)
    after = _rate(surface, safe.total.disk_sync_reads)
    return Advice(
        kind="gbp_size",
        source=surface.group,
        pool=surface.gbp,
        objects=[],
        summary=(
            f"{surface.gbp}: {cur.structure_mb:,.0f} -> {safe.structure_mb:,.0f} MB"
            + (f" (RATIO {safe.ratio:g})" if not math.isclose(safe.ratio, cur.ratio) else "")
            + f": writes failed for lack of storage {_rate(surface, cur.total.writes_failed_no_storage):,.2f} -> 0/s, "
            f"castout pages {_rate(surface, cur.total.castout_pages):,.1f} -> "
            f"{_rate(surface, safe.total.castout_pages):,.1f}/s"
        ),
        evidence={
            "gbp_before": point_view(surface, cur),
            "gbp_after": point_view(surface, safe),
            "gbpoolt": surface.gbpoolt,
            "rule": "the smallest grid point with no write failed for lack of storage and castout pages/s not "
            "above today's, at today's RATIO when the grid has one",
            "notes": notes,
        },
        predicted={
            "writes_failed_no_storage_per_s_before": _rate(surface, cur.total.writes_failed_no_storage),
            "writes_failed_no_storage_per_s_after": 0.0,
            "castout_pages_per_s_before": _rate(surface, cur.total.castout_pages),
            "castout_pages_per_s_after": _rate(surface, safe.total.castout_pages),
            "memory_mb_added": (safe.structure_mb - cur.structure_mb) * surface.copies,
        }
        | _effect(surface, before, after, costs),
        confidence=_confidence(surface, checks),
        command=cmds,
    )


def group_advice(
    surface: GroupSurface, budget: Budget, costs: Costs | None = None
) -> tuple[dict[str, Any], list[Advice]]:
    """One GBP's section of the document and its advice rows: the budget (when one is asked), the
    RATIO rule, the size rule; seed 004's sizing beside."""
    c = costs or Costs()
    cur = surface.current
    checks = approximation(surface)
    sizes = surface.current_sizes()
    seed = _seed004(surface, cur, sizes)
    doc: dict[str, Any] = {
        "group": surface.group,
        "gbp": surface.gbp,
        "pool": surface.pool,
        "platform": surface.platform,
        "members": {m.member: m.vpsize for m in surface.members},
        "duplexed": surface.duplexed,
        "window_seconds": surface.seconds,
        "current": point_view(surface, cur),
        "lbp_mb": surface.lbp_mb(),
        "model": MODEL_NOTE,
        "model_check": approximation_summary(checks),
        "model_disk_sync_reads_per_s": _rate(surface, disk_reads(surface, sizes, cur)),
        "seed004": seed.as_dict() if seed else None,
    }
    rows: list[Advice] = []
    if budget.asked:
        try:
            alloc = allocate_group(surface, budget.frames, shrink=budget.redistribute)
        except ValueError as exc:
            doc["budget"] = {"error": str(exc)}
        else:
            doc["budget"] = {
                "frames_4k": budget.frames,
                "gb": budget.frames * 4096 / 2**30,
                "frames_used": alloc.frames,
                "gbp_frames_4k": alloc.gbp_frames,
                "gbp_copies": surface.copies,
                "sizes": alloc.sizes,
                "gbp": point_view(surface, alloc.point),
                "disk_sync_reads_per_s_before": alloc.disk_reads_before_per_s,
                "disk_sync_reads_per_s_after": alloc.disk_reads_after_per_s,
                "method": f"exact: the Pareto programme over the LBPs at each of {alloc.points_evaluated} GBP points",
                "frames_per_mb": FRAMES_PER_MB,
            }
            row = budget_row(surface, alloc, checks, c)
            if row is not None:
                rows.append(row)
    choice = zero_reclaim_ratio(surface)
    if choice is None:
        doc["zero_reclaim_ratio"] = None
        doc["zero_reclaim_note"] = "no point of the grid is free of directory reclaims: simulate larger GBPs"
    else:
        doc["zero_reclaim_ratio"] = {
            "ratio": choice.ratio,
            "structure_mb": choice.structure_mb,
            "grows": choice.grows,
            "data_entries": choice.data_entries(surface.page_size),
            "evidence": point_view(surface, choice.evidence),
        }
        row = ratio_row(surface, choice, checks, c)
        if row is not None:
            rows.append(row)
    safe = safe_size(surface)
    doc["safe_size"] = None if safe is None else point_view(surface, safe)
    if safe is None:
        doc["safe_size_note"] = "no point of the grid is free of failed writes with castouts at today's rate"
    else:
        row = size_row(surface, safe, checks, c)
        if row is not None:
            rows.append(row)
    return doc, rows
