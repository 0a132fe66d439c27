"""Data sharing: the members' local buffer pools (LBP) and one group buffer pool (GBP),
simulated for a grid of GBP settings (data entries x RATIO) in one pass over the members'
events in global time order. The model is the reference model of DATA-SHARING.md, rule by
rule; options beyond it are off under `GroupOptions(reference=True)`. The hot loop is the
kernel's `GroupSim` (simulator/kernel/src/group.rs); docs/simulator.md, "Data sharing (group)
simulation", says what is exact and what is approximate."""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight._kernel import GroupSim
from poolsight.simulator.trace import Names

DIRECTORY_ENTRY_BYTES = 400  # a directory entry in Db2 12/13 (DATA-SHARING.md)
MAX_MEMBERS = 64
SNAPSHOT_MAGIC = b"PSGROUP1"
GBPCACHE_CODES = {"CHANGED": 0, "ALL": 1, "NONE": 2}

COUNTERS: tuple[str, ...] = (
    "lbp_hits",
    "sync_reads_xi",
    "xi_data_returned",
    "xi_no_data",
    "sync_reads_nf",
    "nf_data_returned",
    "nf_no_data",
    "disk_sync_reads",
    "directory_reclaims",
    "xi_due_to_reclaims",
    "xi_due_to_writes",
    "changed_pages_written",
    "data_entry_reclaims",
    "writes_failed_no_storage",
    "castout_pages",
)
_KERNEL_ORDER = (*COUNTERS, "getpages")  # the kernel's counter array


def directory_entries(data_entries: int, ratio: float) -> int:
    """floor(ratio x data entries), robust to binary rounding (2.3 x 10 is 23, not 22): the kernel's rule."""
    return math.floor(ratio * data_entries + 1e-9)


def pool_page_size(pool: str) -> int:
    """A z/OS pool's page size from its name: BP8K0 8K, BP16K1 16K, BP32K 32K, else 4K."""
    m = re.match(r"G?BP(8K|16K|32K)", pool.rpartition("/")[2].upper())
    return {"8K": 8192, "16K": 16384, "32K": 32768}[m.group(1)] if m else 4096


def gbp_name(pool: str) -> str:
    """The GBP of a pool: BP1 -> GBP1, BP8K0 -> GBP8K0."""
    return "G" + pool.rpartition("/")[2]


@dataclass(frozen=True)
class GbpSetting:
    """One GBP structure: data entries and RATIO (directory entries per data entry)."""

    data_entries: int
    ratio: float

    def __post_init__(self) -> None:
        if self.data_entries < 1:
            raise ValueError(f"data entries {self.data_entries}: must be >= 1")
        if not self.ratio >= 1:
            raise ValueError(f"ratio {self.ratio}: must be >= 1")

    @property
    def directory_entries(self) -> int:
        return directory_entries(self.data_entries, self.ratio)

    def structure_mb(self, page_size: int) -> float:
        """Data entries of page_size bytes and directory entries of 400 bytes, in MiB (not duplexed)."""
        return (self.data_entries * page_size + self.directory_entries * DIRECTORY_ENTRY_BYTES) / 2**20


@dataclass(frozen=True)
class GbpCounters:
    """What the group (or one member) did at one GBP setting. Per member: reads and hits are the
    member's own; directory and data entry reclaims, castouts and failed writes are counted for
    the member whose event caused them; XIs (due to writes or reclaims) for the member whose
    buffer lost its validity. getpages: GBP-dependent getpages (an implied one included)."""

    lbp_hits: int
    sync_reads_xi: int
    xi_data_returned: int
    xi_no_data: int
    sync_reads_nf: int
    nf_data_returned: int
    nf_no_data: int
    disk_sync_reads: int
    directory_reclaims: int
    xi_due_to_reclaims: int
    xi_due_to_writes: int
    changed_pages_written: int
    data_entry_reclaims: int
    writes_failed_no_storage: int
    castout_pages: int
    getpages: int

    @classmethod
    def of(cls, values: Sequence[int]) -> GbpCounters:
        """From values in COUNTERS order, then getpages."""
        return cls(*(int(v) for v in values))

    @classmethod
    def total(cls, parts: Sequence[GbpCounters]) -> GbpCounters:
        return cls(*(sum(getattr(p, f.name) for p in parts) for f in fields(cls)))

    @property
    def gbp_hit_ratio(self) -> float | None:
        """(XI + NF data returned) / all GBP sync reads; None without a read."""
        reads = self.sync_reads_xi + self.sync_reads_nf
        return (self.xi_data_returned + self.nf_data_returned) / reads if reads else None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "gbp_hit_ratio": self.gbp_hit_ratio}


@dataclass(frozen=True)
class GbpPoint:
    """One grid point's counters. sample < 1: counted on a spatial sample of the pages and
    scaled by 1/sample (exact at 1)."""

    setting: GbpSetting
    total: GbpCounters
    members: dict[str, GbpCounters]
    sample: float = 1.0

    def as_dict(self, page_size: int) -> dict[str, Any]:
        s = self.setting
        return {
            "data_entries": s.data_entries,
            "ratio": s.ratio,
            "directory_entries": s.directory_entries,
            "structure_mb": s.structure_mb(page_size),
            **self.total.as_dict(),
            "sample": self.sample,
            "members": {name: c.as_dict() for name, c in self.members.items()},
        }


@dataclass(frozen=True)
class LbpPoint:
    """A member's LBP at `buffers`, with the GBP as at the first grid point: getpages, hits,
    invalid-buffer refreshes (XI) and misses (NF), each read from the GBP or from disk."""

    buffers: int
    getpages: int
    lbp_hits: int
    xi_gbp: int
    xi_disk: int
    nf_gbp: int
    nf_disk: int


_NON_REFERENCE = (
    "commit_every",
    "commit_seconds",
    "gbpcache",
    "not_gbp_dependent",
    "infer_dependence",
    "classt",
    "checkpoint_seconds",
)


@dataclass(frozen=True)
class GroupOptions:
    """How to simulate. reference=True: the reference model (GBPCACHE CHANGED, every object
    GBP-dependent, writes at once, castout by GBPOOLT only); the other options need it False.
    sample: spatial sampling rate of pages (1: exact), allowed with either."""

    reference: bool = True
    gbpoolt: float = 30.0  # percent of data entries
    commit_every: int = 0  # SWIs per commit per member; 0 = write at once
    gbpcache: dict[str, str] = field(default_factory=dict)  # object -> CHANGED | ALL | NONE
    not_gbp_dependent: frozenset[str] = frozenset()
    infer_dependence: bool = False
    classt: float | None = None  # percent of data entries, one castout class per object
    checkpoint_seconds: float | None = None
    sample: float = 1.0
    commit_seconds: float | None = None  # or a commit per member every so many seconds

    def __post_init__(self) -> None:
        if self.reference:
            default = GroupOptions(reference=False)
            changed = [n for n in _NON_REFERENCE if getattr(self, n) != getattr(default, n)]
            if changed:
                raise ValueError(f"{', '.join(changed)}: beyond the reference model; set reference=False")
        if not 0 <= self.gbpoolt:
            raise ValueError(f"gbpoolt {self.gbpoolt}: a percentage >= 0")
        if self.classt is not None and not 0 <= self.classt:
            raise ValueError(f"classt {self.classt}: a percentage >= 0")
        if self.commit_every < 0:
            raise ValueError("commit_every must be >= 0")
        for name in ("checkpoint_seconds", "commit_seconds"):
            v = getattr(self, name)
            if v is not None and not v > 0:
                raise ValueError(f"{name} must be > 0")
        if not 0 < self.sample <= 1:
            raise ValueError(f"sample {self.sample}: must be in (0, 1]")
        bad = {o: c for o, c in self.gbpcache.items() if c not in GBPCACHE_CODES}
        if bad:
            raise ValueError(f"gbpcache {bad}: use CHANGED, ALL or NONE")

    @property
    def timed(self) -> bool:
        """Whether events need times (a checkpoint or commit interval)."""
        return self.checkpoint_seconds is not None or self.commit_seconds is not None


def _ids(names: dict[str, int], values: Any, n: int, what: str, known: bool) -> npt.NDArray[np.uint32]:
    """Names (a str, an array of str or trace `Names`) to ids; known=True: unknown names are refused."""

    def id_of(name: str) -> int:
        if name not in names:
            if known:
                raise ValueError(f"{what} {name!r} is not one of {', '.join(names)}")
            names[name] = len(names)
        return names[name]

    if isinstance(values, str):
        return np.full(n, id_of(values), dtype=np.uint32)
    if isinstance(values, Names):
        table, codes = values.table, values.codes
    else:
        table, codes = np.unique(np.asarray(values, dtype=np.str_), return_inverse=True)
    if len(codes) != n:
        raise ValueError(f"{what}: {len(codes)} values for {n} pages")
    lut = np.fromiter((id_of(str(u)) for u in table), dtype=np.uint32, count=len(table))
    out: npt.NDArray[np.uint32] = lut[np.asarray(codes).reshape(-1)]
    return out


def _scaled(n: int, rate: float) -> int:
    """The kernel's scaling of a size (group.rs `scaled`): rounded half away from zero, at least 1
    (Python's round() halves to even: 250 buffers at a rate of 0.25 would be 62 here, 63 there)."""
    if rate >= 1:
        return n
    x = n * rate
    q = math.floor(x)
    return max(1, q + (1 if x - q >= 0.5 else 0))


class GroupSimulator:
    """The members' LBPs at their sizes and one GBP per setting, fed in global time order."""

    def __init__(
        self,
        members: Sequence[str],
        lbp_sizes: Mapping[str, int],
        settings: Sequence[GbpSetting],
        options: GroupOptions = GroupOptions(),
        lbp_curve_sizes: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        self.members = [str(m) for m in members]
        if not self.members or len(set(self.members)) != len(self.members) or len(self.members) > MAX_MEMBERS:
            raise ValueError(f"members {self.members}: 1 to {MAX_MEMBERS} distinct names")
        missing = [m for m in self.members if m not in lbp_sizes]
        extra = sorted(set(lbp_sizes) - set(self.members))
        if missing or extra:
            raise ValueError(f"lbp_sizes: missing {missing}, not members {extra}")
        self.lbp_sizes = {m: int(lbp_sizes[m]) for m in self.members}
        if min(self.lbp_sizes.values()) < 1:
            raise ValueError(f"lbp_sizes {self.lbp_sizes}: must be >= 1")
        self.settings = list(settings)
        if not self.settings:
            raise ValueError("no GBP setting")
        if options.reference:
            low = [s.ratio for s in self.settings if s.ratio < 2]
            if low:
                raise ValueError(f"ratio {low[0]}: the reference model needs RATIO >= 2 (reference=False allows >= 1)")
        self.options = options
        curves = dict(lbp_curve_sizes or {})
        unknown = sorted(set(curves) - set(self.members))
        if unknown:
            raise ValueError(f"lbp_curve_sizes: not members {unknown}")
        self.curve_sizes = {m: sorted({int(s) for s in curves[m]}) for m in self.members if curves.get(m)}
        if any(s < 1 for v in self.curve_sizes.values() for s in v):
            raise ValueError("lbp_curve_sizes: sizes must be >= 1")
        self._member_ids = {m: i for i, m in enumerate(self.members)}
        self._objects: dict[str, int] = {}
        self._taken: list[list[list[int]]] | None = None
        o = options
        self._kernel = GroupSim(
            [self.lbp_sizes[m] for m in self.members],
            [s.data_entries for s in self.settings],
            [float(s.ratio) for s in self.settings],
            gbpoolt=o.gbpoolt,
            sample=o.sample,
            curve_sizes=[self.curve_sizes.get(m, []) for m in self.members] if self.curve_sizes else [],
            commit_every=o.commit_every,
            commit_seconds=o.commit_seconds,
            checkpoint_seconds=o.checkpoint_seconds,
            classt=o.classt,
            infer_dependence=o.infer_dependence,
        )

    # ------------------------------------------------------------ input

    def _object_ids(self, obj: Any, n: int) -> npt.NDArray[np.uint32]:
        before = len(self._objects)
        ids = _ids(self._objects, obj, n, "object", known=False)
        for name, i in list(self._objects.items())[before:]:
            cache = self.options.gbpcache.get(name, "CHANGED")
            never = name in self.options.not_gbp_dependent
            if cache != "CHANGED" or never:
                self._kernel.set_object(i, GBPCACHE_CODES[cache], never)
        return ids

    def feed(
        self,
        member: Sequence[str] | npt.NDArray[Any] | Names,
        obj: Sequence[str] | npt.NDArray[Any] | Names,
        page: npt.NDArray[np.uint64],
        function: npt.NDArray[np.uint8],
        times: npt.NDArray[np.float64] | None = None,
    ) -> None:
        """Events already in global time order: member and object names (a single name applies
        to every event), page numbers, function 0 getpage, 1 set write intent, 2 release;
        times (seconds) needed by checkpoint_seconds and commit_seconds only."""
        pages = np.ascontiguousarray(page, dtype=np.uint64)
        n = len(pages)
        fun = np.ascontiguousarray(function, dtype=np.uint8)
        if len(fun) != n:
            raise ValueError(f"function: {len(fun)} values for {n} pages")
        if times is None and self.options.timed:
            raise ValueError("checkpoint_seconds / commit_seconds need the events' times")
        t = None if times is None else np.ascontiguousarray(times, dtype=np.float64)
        if n == 0:
            return
        members = _ids(self._member_ids, member, n, "member", known=True)
        objects = self._object_ids(obj, n)
        self._kernel.feed(members, objects, pages, fun, t)

    # ------------------------------------------------------------ output

    @property
    def sample(self) -> float:
        return self.options.sample

    def _points(self, raw: list[list[list[int]]]) -> list[GbpPoint]:
        rate = self.options.sample
        out = []
        for setting, per_member in zip(self.settings, raw, strict=True):
            members = {
                name: GbpCounters.of([round(v / rate) for v in row])
                for name, row in zip(self.members, per_member, strict=True)
            }
            out.append(GbpPoint(setting, GbpCounters.total(list(members.values())), members, rate))
        return out

    def _raw(self) -> list[list[list[int]]]:
        return [[list(row) for row in point] for point in self._kernel.counters()]

    def points(self) -> list[GbpPoint]:
        """One point per setting (same order), counted since the start."""
        return self._points(self._raw())

    def take_points(self) -> list[GbpPoint]:
        """As points(), counted since the previous take_points() (for per-pane rows)."""
        raw = self._raw()
        before = self._taken
        self._taken = raw
        if before is None:
            return self._points(raw)
        diff = [
            [[a - b for a, b in zip(ra, rb, strict=True)] for ra, rb in zip(pa, pb, strict=True)]
            for pa, pb in zip(raw, before, strict=True)
        ]
        return self._points(diff)

    def lbp_curves(self) -> dict[str, list[LbpPoint]]:
        """Per member given lbp_curve_sizes: its LBP at each size (ascending), the GBP as at
        the first setting. The whole LBP: getpages of objects that are not GBP-dependent count
        too (hits, or disk reads), where the points' counters hold the GBP-dependent ones only.
        Exact at the member's current LBP size for the first setting; at other sizes, XIs due
        to directory reclaims are those of the current size."""
        rate = self.options.sample
        out: dict[str, list[LbpPoint]] = {}
        for name, sizes in self.curve_sizes.items():
            scaled, buckets = self._kernel.curve(self._member_ids[name])
            total = [sum(r[c] for r in buckets) for c in range(4)]
            points = []
            for size in sizes:
                s = _scaled(size, rate)
                i = scaled.index(s)
                below = [sum(r[c] for r in buckets[: i + 1]) for c in range(4)]
                above = [t - b for t, b in zip(total, below, strict=True)]
                points.append(
                    LbpPoint(
                        buffers=size,
                        getpages=round(sum(total) / rate),
                        lbp_hits=round((below[0] + below[1]) / rate),
                        xi_gbp=round(below[2] / rate),
                        xi_disk=round(below[3] / rate),
                        nf_gbp=round((above[0] + above[2]) / rate),
                        nf_disk=round((above[1] + above[3]) / rate),
                    )
                )
            out[name] = points
        return out

    def tracked_pages(self) -> int:
        """Pages the simulation holds state for (sampled)."""
        return int(self._kernel.tracked_pages())

    # ------------------------------------------------------------ state

    def snapshot(self) -> bytes:
        """Everything needed to continue later (kernel state, names, settings, options)."""
        o = self.options
        header = json.dumps(
            {
                "members": self.members,
                "lbp_sizes": self.lbp_sizes,
                "settings": [[s.data_entries, s.ratio] for s in self.settings],
                "options": {**asdict(o), "not_gbp_dependent": sorted(o.not_gbp_dependent)},
                "curve_sizes": self.curve_sizes,
                "objects": list(self._objects),
                "taken": self._taken,
            }
        ).encode()
        return SNAPSHOT_MAGIC + struct.pack("<I", len(header)) + header + bytes(self._kernel.snapshot())

    @classmethod
    def restore(cls, data: bytes) -> GroupSimulator:
        if data[:8] != SNAPSHOT_MAGIC:
            raise ValueError("not a poolsight group simulator snapshot")
        (hlen,) = struct.unpack("<I", data[8:12])
        h = json.loads(data[12 : 12 + hlen])
        opts = {**h["options"], "not_gbp_dependent": frozenset(h["options"]["not_gbp_dependent"])}
        sim = cls(
            h["members"],
            h["lbp_sizes"],
            [GbpSetting(int(d), float(r)) for d, r in h["settings"]],
            GroupOptions(**opts),
            h["curve_sizes"],
        )
        sim._kernel = GroupSim.restore(data[12 + hlen :])
        sim._objects = {name: i for i, name in enumerate(h["objects"])}
        sim._taken = h["taken"]
        return sim
