"""What advice is computed from (one pool's state) and what it gives (one piece of advice)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from poolsight.simulator.similarity import similarity

SECONDS_PER_DAY = 86_400.0
FRAME_BYTES = 4096  # a buffer of page size P costs P / 4K frames (a 32K buffer = eight 4K ones)


@dataclass(frozen=True)
class Curve:
    """Simulated sync reads/s (random misses) against pool size, at the pool's own policy."""

    sizes: tuple[int, ...]
    sync_reads_per_s: tuple[float, ...]

    def at(self, size: float) -> float:
        """Sync reads/s at `size` (linear between the simulated sizes, flat beyond them)."""
        return float(np.interp(size, self.sizes, self.sync_reads_per_s))


@dataclass(frozen=True)
class ObjectState:
    name: str
    type: str  # TABLESPACE or INDEXSPACE (catalog); LUW: the table space
    getpages_per_s: float
    sequential_share: float  # sequential + RID-list getpages / getpages
    working_set_avg: float  # distinct pages per pane
    working_set_max: float
    distinct_pages: int  # over the whole window
    sync_reads_per_s: float  # simulated, at the pool's current size
    updates_per_s: float | None = None  # set-write-intent requests (None: the source did not say)

    @property
    def klass(self) -> str:
        return "SAMOS" if self.sequential_share >= 0.5 else "RAMOS"


@dataclass
class PoolState:
    """One pool of one source over the analysed window, with the numbers behind every rule."""

    source: str
    pool: str
    vpsize: int
    curve: Curve
    seconds: float  # the window the rates are over
    platform: str = "zos"  # zos or luw: which commands apply
    page_size: int = 4096
    vpseqt: float = 80.0
    dwqt: float | None = None
    vdwqt: float | None = None
    pgsteal: str = "LRU"
    pgfix: bool = False
    frame_size: int | None = None  # bytes (the attributes' frame_size)
    policy: str = "lru-vpseqt"
    getpages_per_s: float = 0.0
    measured_sync_reads_per_s: float | None = None
    sync_io_seconds: float | None = None  # measured average sync read wait
    # Statistics over the window (per second): pages read (sync + prefetch), pages written, write I/Os.
    pages_read_per_s: float | None = None
    read_ios_per_s: float | None = None  # sync reads + prefetch read I/Os
    pages_written_per_s: float | None = None
    write_ios_per_s: float | None = None
    dwqt_reached: int | None = None
    vdwqt_reached: int | None = None
    write_engine_not_available: int | None = None
    # Other policies at the current size, simulated on the same getpages.
    fifo_sync_reads_per_s: float | None = None
    # The pool's own policy on the same replay as the FIFO number (online: a replay of the recent
    # getpages, cold at its start, so it is compared with itself, not with the warm stream curve).
    fifo_baseline_sync_reads_per_s: float | None = None
    lru_sync_reads_per_s: float | None = None
    vpseqt_alternatives: dict[float, float] = field(default_factory=dict)  # VPSEQT -> sync reads/s
    objects: list[ObjectState] = field(default_factory=list)
    warmup: bool = False
    window_start: datetime | None = None  # event time of the window the numbers are over (online)
    window_end: datetime | None = None
    # The window's first half against its second (workload_similarity): a curve from a workload that
    # changed within the window predicts neither.
    similarity: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.source}/{self.pool}"

    @property
    def frames_per_buffer(self) -> int:
        return max(1, self.page_size // FRAME_BYTES)

    @property
    def simulated_sync_reads_per_s(self) -> float:
        return self.curve.at(self.vpsize)

    @property
    def accuracy(self) -> float | None:
        """(simulated - measured) / measured sync reads at the current size."""
        m = self.measured_sync_reads_per_s
        if m is None or m <= 0:
            return None
        return (self.simulated_sync_reads_per_s - m) / m


@dataclass(frozen=True)
class StatsPool:
    """One pool known from its statistics alone (pool_stats), with no simulated curve (no trace of it
    yet): what the rules statistics support (VDWQT, PGFIX and 1 MB frames) read. The budget, shrink,
    VPSEQT, FIFO and placement rules need a simulation and never see it. Rates are per second of the
    intervals that state them (a report cut in two halves states reads in one and writes in the other)."""

    source: str
    pool: str
    vpsize: int
    vpsize_from: str  # "pool attributes" (VPSIZE) or "statistics" (BUFFERS ALLOCATED)
    seconds: float  # the longest span the window's counters are over
    intervals: int  # statistics intervals in the window
    platform: str = "zos"
    page_size: int = 4096
    dwqt: float | None = None
    vdwqt: float | None = None
    pgsteal: str = "LRU"
    pgfix: bool = False
    frame_size: int | None = None
    measured_sync_reads_per_s: float | None = None
    pages_read_per_s: float | None = None
    read_ios_per_s: float | None = None
    pages_written_per_s: float | None = None
    write_ios_per_s: float | None = None
    dwqt_reached: int | None = None
    vdwqt_reached: int | None = None
    write_engine_not_available: int | None = None
    window_start: datetime | None = None
    window_end: datetime | None = None

    @property
    def key(self) -> str:
        return f"{self.source}/{self.pool}"


# What the statistics rules (VDWQT, PGFIX, 1 MB frames) read: a pool with a simulated curve or one
# known from its statistics alone.
Measured = PoolState | StatsPool


@dataclass(frozen=True)
class Memory:
    """The host's memory over the window (system_memory records): the paging guard's evidence."""

    intervals: int
    max_pageins_per_second: float | None
    min_available_mb: float | None
    real_storage_mb: float | None


@dataclass
class Costs:
    cpu_seconds_per_sync_read: float = 30e-6  # seed 001: 20-40 µs
    default_sync_io_seconds: float = 0.001  # when a pool has no measured sync I/O time


@dataclass
class Advice:
    kind: str
    source: str
    pool: str
    objects: list[str]
    evidence: dict[str, Any]
    predicted: dict[str, Any]
    confidence: dict[str, Any]
    command: list[str]
    summary: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "pool": self.pool,
            "objects": self.objects,
            "summary": self.summary,
            "evidence": self.evidence,
            "predicted": self.predicted,
            "confidence": self.confidence,
            "command": self.command,
        }


def effect(saved_sync_reads_per_s: float, sync_io_seconds: float, costs: Costs) -> dict[str, float]:
    """What avoiding sync reads is worth per 24 h: CPU (seed 001) and elapsed (the pool's sync I/O wait)."""
    return {
        "avoided_sync_reads_per_s": saved_sync_reads_per_s,
        "cpu_seconds_per_24h": saved_sync_reads_per_s * costs.cpu_seconds_per_sync_read * SECONDS_PER_DAY,
        "elapsed_seconds_per_24h": saved_sync_reads_per_s * sync_io_seconds * SECONDS_PER_DAY,
    }


def workload_similarity(
    first: dict[tuple[str, str], float], second: dict[tuple[str, str], float], seconds: tuple[float, float]
) -> dict[str, Any]:
    """How alike the window's two halves are (simulator/similarity.py): getpages per (object, access)."""
    s = similarity(first, second, *seconds)
    return {
        "score": s.score,
        "objects_new": s.objects_new,
        "objects_gone": s.objects_gone,
        "getpage_rate_change": s.rate_change,
    }


STATS_ONLY = (
    "from measured statistics only (pool_stats): the pool has no simulated curve (no trace of it yet), so "
    "nothing here is simulated or checked against a simulation"
)


def stats_confidence(p: StatsPool, note: str | None = None) -> dict[str, Any]:
    """The confidence of advice from statistics alone: what it was measured over, and that no
    simulation stands behind it."""
    return {
        "basis": "statistics",
        "sim_error": None,
        "window_seconds": p.seconds,
        "intervals": p.intervals,
        "vpsize_from": p.vpsize_from,
        "note": STATS_ONLY + (f"; {note}" if note else ""),
    }


def confidence(p: PoolState) -> dict[str, Any]:
    """How far the numbers can be trusted: the simulation against measurement at the current size,
    and how steady the workload was over the window."""
    acc = p.accuracy
    out: dict[str, Any] = {
        "sim_sync_reads_per_s": p.simulated_sync_reads_per_s,
        "measured_sync_reads_per_s": p.measured_sync_reads_per_s,
        "sim_error": acc,
        "window_seconds": p.seconds,
        "warmup": p.warmup,
    }
    if acc is None:
        out["note"] = "no measured sync reads to check the simulation against"
    elif abs(acc) <= 0.05:
        out["note"] = f"simulation within {abs(acc):.1%} of the measured sync reads at the current size"
    else:
        out["note"] = (
            f"simulation off by {acc:+.1%} at the current size: predictions carry that error "
            "(missing getpages, a policy not modelled, data-sharing invalidations?)"
        )
    if p.warmup:
        out["note"] += "; the window starts at the first getpage seen (cold start counts as misses)"
    sim = p.similarity
    if sim is not None and sim.get("score") is not None:
        out["workload_similarity"] = sim
        change = sim.get("getpage_rate_change")
        steady = f"the window's halves are {sim['score']:.0%} alike"
        if change is not None:
            steady += f", getpage rate {change:+.0%}"
        if sim.get("objects_new"):
            steady += f", {len(sim['objects_new'])} objects new in the second half"
        out["note"] += "; " + steady
    return out
