"""A `GroupSurface` from the group simulation's tables, for the online path: the rows of
gbp_curve_latest (the grid's group totals over the window), of gbp_member summed over the same
window (per member and point) and of lbp_curve summed over it (per member and size). Rows are
mappings keyed by the tables' column names (schemas/tables.py); a missing column is named."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from poolsight.advice.group_model import GbpCounts, GridPoint, GroupSurface, LbpPoint, MemberLbp

Row = Mapping[str, Any]


def _need(row: Row, key: str, table: str, n: int) -> Any:
    v = row.get(key)
    if v is None:
        raise ValueError(f"{table} row {n}: column {key} is missing or null")
    return v


def surface_from_rows(
    curve: Iterable[Row],
    members: Iterable[Row],
    lbp: Iterable[Row],
    *,
    pool: str,
    page_size: int,
    platform: str = "zos",
    duplexed: bool = True,
    gbpoolt: float = 30.0,
    allocated_kb: int | None = None,
    database: str | None = None,
    sync_io_seconds: float | None = None,
) -> GroupSurface:
    """One GBP's surface. The current setting is the curve's is_current point; each member's
    VPSIZE is its lbp_curve is_current size."""
    curve = list(curve)
    if not curve:
        raise ValueError("gbp_curve_latest: no row for the GBP")
    split: dict[tuple[int, float], dict[str, GbpCounts]] = {}
    for n, r in enumerate(members, 1):
        key = (int(_need(r, "data_entries", "gbp_member", n)), float(_need(r, "ratio", "gbp_member", n)))
        split.setdefault(key, {})[str(_need(r, "member", "gbp_member", n))] = GbpCounts.of(r)
    points = []
    current: tuple[int, float] | None = None
    for n, r in enumerate(curve, 1):
        key = (int(_need(r, "data_entries", "gbp_curve_latest", n)), float(_need(r, "ratio", "gbp_curve_latest", n)))
        points.append(
            GridPoint(
                key[0],
                key[1],
                int(_need(r, "directory_entries", "gbp_curve_latest", n)),
                float(_need(r, "structure_mb", "gbp_curve_latest", n)),
                GbpCounts.of(r),
                split.get(key, {}),
            )
        )
        if r.get("is_current"):
            current = key
    if current is None:
        raise ValueError("gbp_curve_latest: no point is_current (the GBP's setting is not in the grid)")
    curves: dict[str, list[LbpPoint]] = {}
    vpsize: dict[str, int] = {}
    for n, r in enumerate(lbp, 1):
        m = str(_need(r, "member", "lbp_curve", n))
        size = int(_need(r, "size_pages", "lbp_curve", n))
        disk = float(r.get("xi_disk") or 0.0) + float(r.get("nf_disk") or 0.0)
        gbp = float(r.get("xi_gbp") or 0.0) + float(r.get("nf_gbp") or 0.0)
        curves.setdefault(m, []).append(LbpPoint(size, disk, gbp))
        if r.get("is_current"):
            vpsize[m] = size
    missing = sorted(set(curves) - set(vpsize))
    if missing:
        raise ValueError(f"lbp_curve: no is_current size for {', '.join(missing)}")
    first = curve[0]
    return GroupSurface(
        group=str(_need(first, "group_name", "gbp_curve_latest", 1)),
        gbp=str(_need(first, "gbp", "gbp_curve_latest", 1)),
        pool=pool,
        page_size=page_size,
        seconds=float(_need(first, "seconds", "gbp_curve_latest", 1)),
        data_entries=current[0],
        ratio=current[1],
        points=tuple(points),
        members=tuple(
            MemberLbp(m, vpsize[m], tuple(sorted(c, key=lambda p: p.size))) for m, c in sorted(curves.items())
        ),
        platform=platform,
        duplexed=duplexed,
        gbpoolt=gbpoolt,
        allocated_kb=allocated_kb,
        database=database,
        sync_io_seconds=sync_io_seconds,
        warmup=any(bool(r.get("warmup")) for r in curve),
    )
