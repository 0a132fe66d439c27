"""What the simulator knows of a pool over its window, as typed records.

`Simulator.result()` gives a `PoolResult`; `as_dict()` is the JSON shape `poolsight
simulate --json` writes (same keys in the same order, optional keys absent rather than null).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from poolsight.schemas.getpage import ACCESS_NAMES

ResultMode = Literal["exact", "shards", "shards-fixed-size"]
AccessClass = Literal["RAMOS", "SAMOS"]


@dataclass(frozen=True, slots=True)
class Getpages:
    """Getpages per access type."""

    random: int
    sequential: int
    rid: int

    @classmethod
    def of(cls, by_type: Sequence[int]) -> Getpages:
        """From counts by access code (random, sequential, RID-list)."""
        random, sequential, rid = by_type
        return cls(random, sequential, rid)

    def by_name(self) -> dict[str, int]:
        """Access type name (schemas.getpage.ACCESS_NAMES) -> getpages."""
        return dict(zip(ACCESS_NAMES, (self.random, self.sequential, self.rid), strict=True))


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One pool size on a curve: hits and misses, and what it saves against the current size
    (None where there is no current size, no getpage or no time span to divide by)."""

    size_pages: int
    hits: float
    misses: float
    hit_ratio: float | None
    miss_ratio: float | None
    hit_ratio_random: float | None
    hit_ratio_sequential: float | None
    sync_reads: float  # random misses: synchronous reads
    prefetch_pages: float  # sequential and RID-list misses: brought in by prefetch
    sync_reads_per_s: float | None
    prefetch_pages_per_s: float | None
    avoided_sync_reads: float | None
    avoided_sync_reads_per_s: float | None
    cpu_seconds_saved_per_s: float | None
    cpu_seconds_saved_per_24h: float | None
    elapsed_seconds_saved_per_s: float | None
    elapsed_seconds_saved_per_24h: float | None

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class VpseqtPoint(CurvePoint):
    """The current size run at another sequential steal threshold (VPSEQT, %)."""

    vpseqt: float

    @classmethod
    def at(cls, point: CurvePoint, vpseqt: float) -> VpseqtPoint:
        """`point`, simulated at VPSEQT `vpseqt`."""
        return cls(**{f.name: getattr(point, f.name) for f in fields(CurvePoint)}, vpseqt=vpseqt)


@dataclass(frozen=True, slots=True)
class Window:
    """The panes a result covers."""

    first_pane: int
    last_pane: int
    panes: int
    pane_seconds: float
    seconds: float  # event time covered (first to last getpage inside the panes)
    warmup: bool  # reaches back to the first pane ever seen: distances lack a full window of history

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class WorkingSet:
    """Distinct pages per pane (touched) and over the window (pages whose latest touch is in it)."""

    window_pages: int
    pane_pages: tuple[int, ...]
    avg_pages: float
    max_pages: int
    change_pages: int | None  # last pane against the one before; None with a single pane

    def as_dict(self) -> dict[str, Any]:
        return {
            "window_pages": self.window_pages,
            "pane_pages": list(self.pane_pages),
            "avg_pages": self.avg_pages,
            "max_pages": self.max_pages,
            "change_pages": self.change_pages,
        }


def _points(curve: tuple[CurvePoint, ...]) -> list[dict[str, Any]]:
    return [c.as_dict() for c in curve]


@dataclass(frozen=True, slots=True)
class ObjectResult:
    """One object (table space or index) of a pool over the window: its own LRU curve."""

    refs: int
    getpages: Getpages
    updates: int
    distinct_pages: int
    sequential_share: float  # sequential and RID-list share of its getpages
    access_class: AccessClass  # SAMOS when sequential_share >= 0.5
    curve: tuple[CurvePoint, ...]
    working_set: WorkingSet

    def as_dict(self) -> dict[str, Any]:
        return {
            "refs": self.refs,
            "getpages": self.getpages.by_name(),
            "updates": self.updates,
            "distinct_pages": self.distinct_pages,
            "sequential_share": self.sequential_share,
            "class": self.access_class,
            "curve": _points(self.curve),
            "working_set": self.working_set.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class PoolResult:
    """Everything known of one pool over the window.

    `curve` is the pool's own policy when its miniature caches ran (then `lru_curve` is the
    LRU stack curve beside it, `policy_sampling_rate` their sampling rate, `vpseqt_curve` the
    current size at other VPSEQT values and, for lru-vpseqt, `vpseqt` its threshold); without
    them `curve` is the LRU stack curve and those are None (empty for vpseqt_curve)."""

    refs: int
    getpages: Getpages
    updates: int
    distinct_pages: int
    cold_misses: int
    late_getpages: int
    window: Window
    mode: ResultMode
    sampling_rate: float
    tracked_pages: int
    current_size: int | None
    policy: str
    curve: tuple[CurvePoint, ...]
    working_set: WorkingSet
    objects: Mapping[str, ObjectResult]
    lru_curve: tuple[CurvePoint, ...] | None = None
    policy_sampling_rate: float | None = None
    vpseqt: float | None = None
    vpseqt_curve: tuple[VpseqtPoint, ...] = ()

    @property
    def pool_policy(self) -> bool:
        """Whether `curve` comes from miniature caches of the pool's own policy."""
        return self.lru_curve is not None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `poolsight simulate --json` (the optional keys only when set)."""
        out: dict[str, Any] = {
            "refs": self.refs,
            "getpages": self.getpages.by_name(),
            "updates": self.updates,
            "distinct_pages": self.distinct_pages,
            "cold_misses": self.cold_misses,
            "late_getpages": self.late_getpages,
            "window": self.window.as_dict(),
            "mode": self.mode,
            "sampling_rate": self.sampling_rate,
            "tracked_pages": self.tracked_pages,
            "current_size": self.current_size,
            "policy": self.policy,
            "curve": _points(self.curve),
            "working_set": self.working_set.as_dict(),
        }
        if self.lru_curve is not None:
            out["policy_sampling_rate"] = self.policy_sampling_rate
            if self.vpseqt is not None:
                out["vpseqt"] = self.vpseqt
            out["lru_curve"] = _points(self.lru_curve)
            out["vpseqt_curve"] = _points(self.vpseqt_curve)
        out["objects"] = {name: o.as_dict() for name, o in self.objects.items()}
        return out
