"""A data-sharing group's rows written straight into Iceberg (as the writer, as the jobs would):
the group simulation (gbp_curve, gbp_member, lbp_curve) and the group's statistics (gbp_stats),
with values chosen here so the Group page and the alerts can be held to numbers worked out by hand.

The group simulation's job is not needed: the page and the alerts only read these tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.stack.conftest import query

SCHEMA = "iceberg.poolsight"
PANE = timedelta(seconds=60)
PAGE = 4096  # bytes; a directory entry takes 400 (DATA-SHARING.md)
ENTRIES = (10_000, 20_000, 40_000)
RATIOS = (5.0, 10.0)
CURRENT = (20_000, 5.0)
# Directory reclaims and failed writes per pane at each (data entries, RATIO): none from 20,000
# entries at RATIO 10 (154.4 MB) or 40,000 at RATIO 5 (232.5 MB); failed writes only below 40,000.
RECLAIMS = {(10_000, 5.0): 900, (20_000, 5.0): 300, (40_000, 5.0): 0, (10_000, 10.0): 120, (20_000, 10.0): 0,
            (40_000, 10.0): 0}  # fmt: skip
FAILED = {10_000: 30, 20_000: 4, 40_000: 0}
GBP_HIT = {10_000: 0.3, 20_000: 0.5, 40_000: 0.8}  # the share of XI and NF reads the GBP returns
SHARE = (0.6, 0.4)  # the members' parts of the group's getpages


def structure_mb(entries: int, ratio: float) -> float:
    return (entries * PAGE + int(ratio * entries) * 400) / 2**20


@dataclass
class Group:
    name: str
    members: tuple[str, str]
    end: datetime  # the newest pane's end
    panes: int = 10
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _counters(entries: int, ratio: float, k: int, share: float) -> dict[str, Any]:
    """One pane's counters at one point, for a member's share of the group (1: the group); the
    members' LBP hit ratios and XI rates differ."""
    tilt = 0.0 if share == 1.0 else share - 0.5
    xi, nf = 4000 * share + 2000 * tilt, 6000 * share
    hit = GBP_HIT[entries] + (0.05 if ratio == 10.0 else 0.0)
    reclaims = RECLAIMS[(entries, ratio)] * (k + 1) / 5 * share
    xi_dr, nf_dr = round(xi * hit), round(nf * hit)
    return {
        "getpages": 60_000 * share,
        "lbp_hits": 50_000 * share - 100 * k * share - reclaims / 2 + 10_000 * tilt,
        "sync_reads_xi": xi, "xi_data_returned": xi_dr, "xi_no_data": xi - xi_dr,
        "sync_reads_nf": nf, "nf_data_returned": nf_dr, "nf_no_data": nf - nf_dr,
        "disk_sync_reads": xi - xi_dr + nf - nf_dr, "gbp_hit_ratio": (xi_dr + nf_dr) / (xi + nf),
        "directory_reclaims": reclaims, "xi_due_to_reclaims": 2 * reclaims,
        "xi_due_to_writes": (500 + 10 * k) * share, "changed_pages_written": 1000 * share,
        "data_entry_reclaims": 100 * share, "writes_failed_no_storage": FAILED[entries] * (k % 2 == 0) * share,
        "castout_pages": 2000 * share,
    }  # fmt: skip


def build(name: str, members: tuple[str, str], end: datetime) -> Group:
    """Ten 1-minute panes ending at `end` over the grid ENTRIES x RATIOS, each member's LBP curve at
    three sizes, and two 5-minute statistics intervals (members' reads, the group's counters)."""
    g = Group(name, members, end)
    run = {"sampling_rate": 1.0, "late_getpages": 0, "model": "reference", "emitted_at": end, "warmup": False}
    curve, member_rows, lbp = [], [], []
    for k in range(g.panes):
        start = end - (g.panes - k) * PANE
        pane = {"pane_start": start, "pane_end": start + PANE, "seconds": 60.0}
        for entries in ENTRIES:
            for ratio in RATIOS:
                point = {
                    "data_entries": entries, "ratio": ratio, "directory_entries": int(ratio * entries),
                    "structure_mb": structure_mb(entries, ratio), "is_current": (entries, ratio) == CURRENT,
                }  # fmt: skip
                key = {"group_name": name, "gbp": "GBP1"}
                curve.append(
                    {**key, **pane, **point, "members": ",".join(members), **_counters(entries, ratio, k, 1.0), **run}
                )
                for m, share in zip(members, SHARE, strict=True):
                    member_rows.append(
                        {**key, "member": m, **pane, **point, **_counters(entries, ratio, k, share), **run}
                    )
        for i, m in enumerate(members):
            for size in (5_000, 10_000, 20_000):
                getpages = 60_000 * SHARE[i]
                hits = getpages * (0.70 + size / 100_000)
                misses = getpages - hits
                xi_gbp, xi_disk, nf_gbp = 0.2 * misses, 0.1 * misses, 0.3 * misses
                nf_disk = misses - xi_gbp - xi_disk - nf_gbp
                lbp.append({
                    "group_name": name, "gbp": "GBP1", "member": m, "pool": "BP1", **pane, "size_pages": size,
                    "is_current": size == (10_000, 20_000)[i], "getpages": getpages, "lbp_hits": hits,
                    "xi_gbp": xi_gbp, "xi_disk": xi_disk, "nf_gbp": nf_gbp, "nf_disk": nf_disk,
                    "disk_sync_reads": xi_disk + nf_disk, "lbp_hit_ratio": hits / getpages, **run,
                })  # fmt: skip
    g.rows = {"gbp_curve": curve, "gbp_member": member_rows, "lbp_curve": lbp, "gbp_stats": stats(g)}
    return g


def stats(g: Group) -> list[dict[str, Any]]:
    """Two 5-minute intervals: each member's reads (close to the simulation at the current setting,
    not equal), the group's own row with reclaims, XIs by cause, failed writes and the structure."""
    out = []
    for j, (reads, counts) in enumerate(
        (
            (((6000, 6100, 9000, 9150), (4000, 3950, 6000, 5900)), (880, 1760, 2600, 8, 10_100)),
            (((6050, 5900, 9100, 9000), (3900, 4100, 6050, 5950)), (2450, 4900, 2850, 12, 9_900)),
        )
    ):
        start = g.end - (2 - j) * 5 * PANE
        interval = {"gbp": "GBP1", "interval_start": start, "interval_end": start + 5 * PANE, "group_name": g.name}
        for m, (xi_dr, xi_nd, nf_dr, nf_nd) in zip(g.members, reads, strict=True):
            out.append({
                **interval, "source": m, "scope": "member", "xi_reads_data_returned": xi_dr, "xi_reads_no_data": xi_nd,
                "nf_reads_data_returned": nf_dr, "nf_reads_no_data": nf_nd, "gbp_dependent_getpages": 150_000,
            })  # fmt: skip
        reclaims, xi_reclaims, xi_writes, failed, castout = counts
        out.append({
            **interval, "source": g.members[0], "scope": "group", "directory_reclaims": reclaims,
            "xi_due_to_reclaims": xi_reclaims, "xi_due_to_writes": xi_writes, "write_failed_no_storage": failed,
            "castout_pages": castout, "data_entries": CURRENT[0], "ratio": CURRENT[1],
            "directory_entries": int(CURRENT[0] * CURRENT[1]), "structure_mb": structure_mb(*CURRENT), "gbpoolt": 30.0,
        })  # fmt: skip
    return out


def insert(table: str, rows: Sequence[dict[str, Any]], chunk: int = 200) -> None:
    """Parameterised multi-row INSERTs by column name (the union of the rows' keys; missing: NULL)."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    one = "(" + ", ".join("?" * len(cols)) + ")"
    for i in range(0, len(rows), chunk):
        part = rows[i : i + chunk]
        sql = f"INSERT INTO {SCHEMA}.{table} ({', '.join(cols)}) VALUES {', '.join([one] * len(part))}"
        query(sql, tuple(r.get(c) for r in part for c in cols))


def write(g: Group) -> None:
    """The group's rows, after removing what an earlier run wrote for a group of that name."""
    for table, rows in g.rows.items():
        query(f"DELETE FROM {SCHEMA}.{table} WHERE group_name = ?", (g.name,))
        insert(table, rows)
