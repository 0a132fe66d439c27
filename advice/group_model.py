"""What group advice is computed from: one GBP of a data-sharing group (or pureScale instance) as
the group simulation saw it, and the read model the budget optimises.

The simulation gives two surfaces (DATA-SHARING.md, issue 28): a grid of GBP settings (data
entries x RATIO), each with group totals and per member counters, the members' LBPs at their
current sizes; and per member an LBP curve with invalidations, the GBP at its current setting.
Neither alone varies both the LBPs and the GBP, so the budget combines them:

    disk_m(L, g) = reads_m(L) x miss_m(g)

reads_m(L): member m's sync reads (XI + NF) at LBP size L, from its LBP curve; miss_m(g): the
share of m's sync reads the GBP does not return at grid point g ((XI no data + NF no data) /
(SYN.READ(XI) + SYN.READ(NF))), from the grid at the current LBP sizes. It ignores that the
LBP size changes what the GBP holds and that reclaims change the XIs a member sees;
`approximation` measures it where the grid has the exact answer (the current LBP sizes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

FRAMES_PER_MB = 2**20 // 4096  # memory is budgeted in 4K frames, as advice/budget.py does


@dataclass(frozen=True)
class GbpCounts:
    """One grid point's counters over the window (the group's totals or one member's), named as in
    gbp_curve / GbpCounters; floats: a spatially sampled simulation scales them back."""

    getpages: float = 0.0
    lbp_hits: float = 0.0
    sync_reads_xi: float = 0.0
    xi_data_returned: float = 0.0
    xi_no_data: float = 0.0
    sync_reads_nf: float = 0.0
    nf_data_returned: float = 0.0
    nf_no_data: float = 0.0
    disk_sync_reads: float = 0.0
    directory_reclaims: float = 0.0
    xi_due_to_reclaims: float = 0.0
    xi_due_to_writes: float = 0.0
    changed_pages_written: float = 0.0
    data_entry_reclaims: float = 0.0
    writes_failed_no_storage: float = 0.0
    castout_pages: float = 0.0

    @classmethod
    def of(cls, source: Mapping[str, Any] | object) -> GbpCounts:
        """From a row (gbp_curve_latest, gbp_member) or any object with the counters as attributes
        (the simulator's GbpCounters): missing or null counters are zero."""

        def get(name: str) -> float:
            v = source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)
            return float(v) if v is not None else 0.0

        return cls(**{f.name: get(f.name) for f in fields(cls)})

    @property
    def sync_reads(self) -> float:
        return self.sync_reads_xi + self.sync_reads_nf

    @property
    def gbp_hit_ratio(self) -> float | None:
        """Seed 001's: (XI data returned + NF data returned) / all four sync reads."""
        n = self.sync_reads
        return (self.xi_data_returned + self.nf_data_returned) / n if n > 0 else None

    @property
    def miss_share(self) -> float | None:
        """The share of sync reads the GBP did not return (each one a disk read)."""
        n = self.sync_reads
        return (self.xi_no_data + self.nf_no_data) / n if n > 0 else None


class SimSetting(Protocol):
    """The group simulator's GbpSetting, as far as advice reads it (not imported: advice reads its output)."""

    @property
    def data_entries(self) -> int: ...
    @property
    def ratio(self) -> float: ...
    @property
    def directory_entries(self) -> int: ...
    def structure_mb(self, page_size: int) -> float: ...


class SimPoint(Protocol):
    """The group simulator's GbpPoint: a setting, the group's counters and each member's."""

    @property
    def setting(self) -> SimSetting: ...
    @property
    def total(self) -> object: ...
    @property
    def members(self) -> Mapping[str, object]: ...


@dataclass(frozen=True)
class GridPoint:
    """One GBP setting of the grid with its counters."""

    data_entries: int
    ratio: float
    directory_entries: int
    structure_mb: float
    total: GbpCounts
    members: Mapping[str, GbpCounts] = field(default_factory=dict)

    @classmethod
    def of(cls, point: SimPoint, page_size: int) -> GridPoint:
        """From the group simulator's GbpPoint."""
        s = point.setting
        return cls(
            s.data_entries,
            float(s.ratio),
            s.directory_entries,
            s.structure_mb(page_size),
            GbpCounts.of(point.total),
            {m: GbpCounts.of(c) for m, c in point.members.items()},
        )

    @property
    def key(self) -> tuple[int, float]:
        return (self.data_entries, self.ratio)

    def miss(self, member: str) -> float:
        """miss_m(g): the member's own share, else the group's (a member with no sync reads at the
        point), else 1 (nothing was read through this GBP: every read would go to disk)."""
        for c in (self.members.get(member), self.total):
            share = c.miss_share if c is not None else None
            if share is not None:
                return share
        return 1.0


@dataclass(frozen=True)
class LbpPoint:
    """One candidate LBP size of a member's curve with invalidations: its sync reads over the
    window split by where they were served (lbp_curve: gbp = xi_gbp + nf_gbp, disk = xi_disk + nf_disk)."""

    size: int  # buffers
    disk_sync_reads: float
    gbp_reads: float

    @property
    def sync_reads(self) -> float:
        return self.disk_sync_reads + self.gbp_reads


@dataclass(frozen=True)
class MemberLbp:
    """One member's LBP of the GBP's pool (GBPn <-> BPn)."""

    member: str  # the member's source (its subsystem name)
    vpsize: int  # current LBP size, buffers
    curve: tuple[LbpPoint, ...]

    def reads(self, size: float) -> float:
        """reads_m(L): sync reads (XI + NF) over the window, linear between the simulated sizes and
        flat beyond them (as advice/budget.py reads a pool's curve)."""
        pts = sorted(self.curve, key=lambda p: p.size)
        return float(np.interp(size, [p.size for p in pts], [p.sync_reads for p in pts]))


@dataclass(frozen=True)
class GroupSurface:
    """One GBP of one group over the analysed window: the grid, the members' LBP curves and the
    settings the commands start from."""

    group: str  # data-sharing group name (z/OS) or pureScale instance
    gbp: str  # GBP1
    pool: str  # the members' pool of that GBP: BP1
    page_size: int
    seconds: float  # the window the counters are over
    data_entries: int  # the GBP's current setting: must be a grid point
    ratio: float
    points: tuple[GridPoint, ...]
    members: tuple[MemberLbp, ...]
    platform: str = "zos"  # zos or luw (pureScale)
    duplexed: bool = True  # GBP memory counts twice (duplexed, or kept free for a rebuild)
    gbpoolt: float = 30.0  # castout threshold, % of data entries
    allocated_kb: int | None = None  # the structure's allocated size (DSNB758I), for SETXCF's SIZE=
    database: str | None = None  # pureScale: the database of CF_GBP_SZ
    member_numbers: Mapping[str, int] = field(default_factory=dict)  # pureScale: member -> MEMBER n
    sync_io_seconds: float | None = None  # measured average sync read time (effect per 24 h)
    warmup: bool = False

    @property
    def copies(self) -> int:
        return 2 if self.duplexed else 1

    @property
    def frames_per_buffer(self) -> int:
        return max(1, self.page_size // 4096)

    @property
    def current(self) -> GridPoint:
        for p in self.points:
            if p.data_entries == self.data_entries and math.isclose(p.ratio, self.ratio):
                return p
        raise ValueError(
            f"{self.group}/{self.gbp}: the grid has no point at the current setting "
            f"({self.data_entries:,} data entries, RATIO {self.ratio:g})"
        )

    def current_sizes(self) -> dict[str, int]:
        return {m.member: m.vpsize for m in self.members}

    def lbp_mb(self, sizes: Mapping[str, int] | None = None) -> float:
        """The members' LBP memory, each member's counted once."""
        s = sizes or self.current_sizes()
        return sum(s[m.member] for m in self.members) * self.page_size / 2**20


def gbp_frames(point: GridPoint, copies: int) -> int:
    """A GBP point's memory in 4K frames, every copy counted."""
    return copies * math.ceil(point.structure_mb * FRAMES_PER_MB - 1e-9)


def disk_reads(surface: GroupSurface, sizes: Mapping[str, int], point: GridPoint) -> float:
    """The group's disk sync reads over the window at these LBP sizes and this GBP point (the model)."""
    return sum(m.reads(sizes[m.member]) * point.miss(m.member) for m in surface.members)


@dataclass(frozen=True)
class ModelCheck:
    """The model against the grid at one point, the LBPs at their current sizes."""

    data_entries: int
    ratio: float
    modelled_per_s: float
    simulated_per_s: float

    @property
    def error(self) -> float | None:
        s = self.simulated_per_s
        return (self.modelled_per_s - s) / s if s > 0 else None


def approximation(surface: GroupSurface) -> list[ModelCheck]:
    """Where the grid holds the exact answer (every point, the LBPs at their current sizes): the
    model's disk sync reads/s against the simulated ones. The difference is what the LBP curve (run
    at the current GBP setting) misses of the XIs a different GBP causes (reclaims)."""
    sizes = surface.current_sizes()
    secs = surface.seconds or 1.0
    out = []
    for p in surface.points:
        simulated = sum((p.members.get(m.member) or GbpCounts()).disk_sync_reads for m in surface.members)
        if not p.members:  # a grid without the member split: the group's total
            simulated = p.total.disk_sync_reads
        out.append(ModelCheck(p.data_entries, p.ratio, disk_reads(surface, sizes, p) / secs, simulated / secs))
    return out


def approximation_summary(checks: list[ModelCheck]) -> dict[str, Any]:
    errors = [abs(c.error) for c in checks if c.error is not None]
    worst = max(checks, key=lambda c: abs(c.error or 0.0), default=None)
    return {
        "points": len(checks),
        "max_abs_error": max(errors) if errors else None,
        "mean_abs_error": sum(errors) / len(errors) if errors else None,
        "worst": None
        if worst is None
        else {
            "data_entries": worst.data_entries,
            "ratio": worst.ratio,
            "modelled_per_s": worst.modelled_per_s,
            "simulated_per_s": worst.simulated_per_s,
        },
    }
