"""`poolsight simulate --group`: the data-sharing simulation of a trace, offline.

The members' events are kept in memory as they are read (a few columns per event), then
merged in global time order (ties: member order in --group, then trace order) and fed, per
group and pool name, to one GroupSimulator: the members' LBPs at their --pool-size and the
pool's GBP (BP1 -> GBP1) at every (data entries, RATIO) of the grid."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.argtypes import PERCENT, POSITIVE_COUNT, NumberList, real
from poolsight.simulator.group import (
    GbpPoint,
    GbpSetting,
    GroupOptions,
    GroupSimulator,
    gbp_name,
    pool_page_size,
)
from poolsight.simulator.trace import Names, TraceBatch

FEED_EVENTS = 1 << 20
LADDER_HALVINGS = 6  # default grid: the group's GBP-dependent pages, then halved 6 times


class GroupUsageError(ValueError):
    """A --group option that cannot apply (the message is for the command line)."""


def add_group_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data sharing (group buffer pools)")
    g.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME=MEMBER,MEMBER[,...]",
        help="a data-sharing group: members are the trace's source values; one GBP per pool name; repeatable",
    )
    g.add_argument(
        "--gbp-data-entries",
        type=NumberList(POSITIVE_COUNT),
        metavar="N[,N...]",
        help="GBP sizes in data entries (default: the group's GBP-dependent pages, halved down to 1/64)",
    )
    # A GBP holds at least one directory entry per data entry (simulator/group.py GbpSetting).
    g.add_argument(
        "--ratios",
        type=NumberList(real(1.0)),
        default=[5.0],
        metavar="R[,R...]",
        help="directory entries per data entry (RATIO)",
    )
    g.add_argument("--gbpoolt", type=PERCENT, default=30.0, metavar="PCT", help="castout threshold, %% of data entries")
    g.add_argument(
        "--reference",
        action="store_true",
        help="the reference model of DATA-SHARING.md: every object GBP-dependent (else inferred: once two "
        "members use it and one updates it)",
    )


@dataclass(frozen=True)
class GroupSpec:
    name: str
    members: tuple[str, ...]

    @classmethod
    def parse(cls, spec: str) -> GroupSpec:
        name, eq, rest = spec.partition("=")
        members = tuple(m.strip() for m in rest.split(",") if m.strip())
        if not eq or not name.strip() or not members:
            raise GroupUsageError(f"--group {spec!r}: write NAME=MEMBER,MEMBER[,...]")
        if len(set(members)) != len(members):
            raise GroupUsageError(f"--group {spec!r}: a member named twice")
        return cls(name.strip(), members)


@dataclass
class _Columns:
    rank: list[npt.NDArray[np.int16]] = field(default_factory=list)
    pool: list[npt.NDArray[np.int32]] = field(default_factory=list)
    obj: list[npt.NDArray[np.int32]] = field(default_factory=list)
    page: list[npt.NDArray[np.uint64]] = field(default_factory=list)
    function: list[npt.NDArray[np.uint8]] = field(default_factory=list)
    time: list[npt.NDArray[np.float64]] = field(default_factory=list)
    seq: list[npt.NDArray[np.int64]] = field(default_factory=list)


class GroupEvents:
    """The events of the groups' members, collected batch by batch."""

    def __init__(self, groups: Sequence[GroupSpec]) -> None:
        self.groups = list(groups)
        names = [g.name for g in self.groups]
        if len(set(names)) != len(names):
            raise GroupUsageError(f"--group: a group named twice ({', '.join(names)})")
        self._cols = [_Columns() for _ in self.groups]
        self.pools: dict[str, int] = {}
        self.objects: dict[str, int] = {}
        self.sources: set[str] = set()
        self._seq = 0

    @staticmethod
    def _id(table: dict[str, int], name: str) -> int:
        return table.setdefault(name, len(table))

    def add(self, batch: TraceBatch) -> None:
        n = len(batch)
        seq = np.arange(self._seq, self._seq + n, dtype=np.int64)
        self._seq += n
        pool_table = [str(x) for x in batch.pool_names.table]
        splits = [p.rpartition("/") for p in pool_table]
        self.sources.update(s for s, _, _ in splits if s)
        pool_ids = np.array([self._id(self.pools, p) for _, _, p in splits], dtype=np.int32)
        obj_lut = np.fromiter(
            (self._id(self.objects, str(o)) for o in batch.object_names.table),
            dtype=np.int32,
            count=len(batch.object_names.table),
        )
        for g, cols in zip(self.groups, self._cols, strict=True):
            rank_lut = np.array([g.members.index(s) if s in g.members else -1 for s, _, _ in splits], dtype=np.int16)
            rank = rank_lut[batch.pool_names.codes]
            sel = rank >= 0
            if not sel.any():
                continue
            cols.rank.append(rank[sel])
            cols.pool.append(pool_ids[batch.pool_names.codes[sel]])
            cols.obj.append(obj_lut[batch.object_names.codes[sel]])
            cols.page.append(batch.pages[sel].astype(np.uint64))
            cols.function.append(batch.function[sel].astype(np.uint8))
            cols.time.append(batch.times[sel].astype(np.float64))
            cols.seq.append(seq[sel])

    def merged(self, group: int) -> dict[str, npt.NDArray[Any]]:
        """The group's events in global order: by time, then member order, then trace order."""
        cols = self._cols[group]
        if not cols.rank:
            return {}
        out = {k: np.concatenate(getattr(cols, k)) for k in ("rank", "pool", "obj", "page", "function", "time", "seq")}
        order = np.lexsort((out["seq"], out["rank"], out["time"]))
        return {k: v[order] for k, v in out.items()}


def dependent_pages(
    obj: npt.NDArray[np.int32],
    page: npt.NDArray[np.uint64],
    rank: npt.NDArray[np.int16],
    function: npt.NDArray[np.uint8],
    reference: bool,
) -> int:
    """Distinct pages of GBP-dependent objects: all (reference), or those of objects that two
    members used and one updated (over the whole trace)."""
    if len(obj) == 0:
        return 0
    keep = np.ones(len(obj), dtype=bool)
    if not reference:
        nobj = int(obj.max()) + 1
        pairs = np.unique(obj.astype(np.int64) * 64 + rank)  # (object, member) pairs seen
        members = np.bincount(pairs // 64, minlength=nobj)
        updated = np.zeros(nobj, dtype=bool)
        updated[obj[function == 1]] = True
        keep = ((members >= 2) & updated)[obj]
    if not keep.any():
        return 0
    return int(np.unique(np.stack([obj[keep].astype(np.uint64), page[keep]]), axis=1).shape[1])


def default_data_entries(pages: int) -> list[int]:
    """The grid's sizes without --gbp-data-entries: the GBP-dependent pages (all fit: no
    reclaim, no failed write), halved LADDER_HALVINGS times."""
    top = max(1, pages)
    return sorted({max(1, round(top / 2**k)) for k in range(LADDER_HALVINGS + 1)})


@dataclass(frozen=True)
class GbpResult:
    group: str
    gbp: str
    members: tuple[str, ...]
    lbp_sizes: dict[str, int]
    page_size: int
    seconds: float  # event time spanned by the GBP's events
    reference: bool
    points: list[GbpPoint]

    def as_dict(self) -> dict[str, Any]:
        return {
            "members": list(self.members),
            "lbp_sizes": self.lbp_sizes,
            "page_size": self.page_size,
            "seconds": self.seconds,
            "model": "reference" if self.reference else "inferred GBP-dependence",
            "curve": [p.as_dict(self.page_size) for p in self.points],
        }


def run_groups(
    events: GroupEvents,
    a: argparse.Namespace,
    lbp_size_of: Callable[[str], int | None],
) -> list[GbpResult]:
    """One GroupSimulator per group and pool name. lbp_size_of: a full pool name (MEMBER/BP1)'s
    --pool-size, None when not given."""
    ratios: list[float] = a.ratios
    sizes: list[int] | None = a.gbp_data_entries
    options = (
        GroupOptions(reference=True, gbpoolt=a.gbpoolt)
        if a.reference
        else GroupOptions(reference=False, gbpoolt=a.gbpoolt, infer_dependence=True)
    )
    pool_names = list(events.pools)
    object_names = np.array(list(events.objects) or [""])
    results = []
    for gi, g in enumerate(events.groups):
        missing = [m for m in g.members if m not in events.sources]
        if missing:
            raise GroupUsageError(
                f"--group {g.name}: no events of {', '.join(missing)} in the trace "
                f"(sources: {', '.join(sorted(events.sources)) or 'none: the trace has no source column'})"
            )
        ev = events.merged(gi)
        for pid in np.unique(ev["pool"]):
            pool = pool_names[int(pid)]
            sel = ev["pool"] == pid
            e = {k: v[sel] for k, v in ev.items()}
            lbp: dict[str, int] = {}
            for m in g.members:
                size = lbp_size_of(f"{m}/{pool}")
                if size is None:
                    raise GroupUsageError(
                        f"--group {g.name}: no LBP size for {m}/{pool}: give --pool-size {pool}=BUFFERS "
                        "(or --pool-size BUFFERS for every pool)"
                    )
                lbp[m] = size
            data = sizes or default_data_entries(
                dependent_pages(e["obj"], e["page"], e["rank"], e["function"], a.reference)
            )
            settings = [GbpSetting(d, r) for d in data for r in ratios]
            try:
                sim = GroupSimulator(g.members, lbp, settings, options)
            except ValueError as exc:
                raise GroupUsageError(f"--group {g.name}: {exc}") from None
            members = Names(e["rank"].astype(np.int32), np.array(g.members))
            for i in range(0, len(e["page"]), FEED_EVENTS):
                s = slice(i, i + FEED_EVENTS)
                sim.feed(members[s], Names(e["obj"][s], object_names), e["page"][s], e["function"][s], e["time"][s])
            t = e["time"]
            results.append(
                GbpResult(
                    g.name,
                    gbp_name(pool),
                    g.members,
                    lbp,
                    pool_page_size(pool),
                    float(t.max() - t.min()) if len(t) else 0.0,
                    a.reference,
                    sim.points(),
                )
            )
    return results


def _mb(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 1 else f"{x:.3g}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def format_groups(results: Sequence[GbpResult]) -> str:
    lines = []
    for r in results:
        per_s = r.seconds > 0
        lbps = ", ".join(f"{m} {r.lbp_sizes[m]:,}" for m in r.members)
        lines.append(
            f"\ngroup {r.group} {r.gbp}: members {', '.join(r.members)} (LBP buffers {lbps}); "
            f"{r.page_size // 1024} KB pages; {'reference model' if r.reference else 'GBP-dependence inferred'}"
            + (f"; {r.seconds:.1f} s of events" if per_s else "")
        )
        lines.append(
            f"  {'GBP MB':>9} {'data ent.':>10} {'ratio':>5} {'disk rd':>10}"
            + (f" {'disk rd/s':>9}" if per_s else "")
            + f" {'GBP hit%':>8} {'dir recl.':>9} {'XI recl.':>9} {'failed wr':>9} {'castouts':>9}"
        )
        pts = sorted(r.points, key=lambda p: (p.setting.structure_mb(r.page_size), p.setting.ratio))
        for p in pts:
            t, s = p.total, p.setting
            lines.append(
                f"  {_mb(s.structure_mb(r.page_size)):>9} {s.data_entries:>10,} {s.ratio:>5g} {t.disk_sync_reads:>10,}"
                + (f" {t.disk_sync_reads / r.seconds:>9,.1f}" if per_s else "")
                + f" {_pct(t.gbp_hit_ratio):>8} {t.directory_reclaims:>9,} {t.xi_due_to_reclaims:>9,}"
                f" {t.writes_failed_no_storage:>9,} {t.castout_pages:>9,}"
            )
        for what, attr in (
            ("smallest GBP with zero reclaims", "directory_reclaims"),
            ("smallest with zero failed writes", "writes_failed_no_storage"),
        ):
            best = next((p for p in pts if getattr(p.total, attr) == 0), None)
            lines.append(
                f"  {what}: "
                + (
                    f"{_mb(best.setting.structure_mb(r.page_size))} MB (RATIO {best.setting.ratio:g}, "
                    f"{best.setting.data_entries:,} data {'entry' if best.setting.data_entries == 1 else 'entries'})"
                    if best
                    else "none in the grid"
                )
            )
    return "\n".join(lines)
