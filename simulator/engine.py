"""Typed API over the compiled kernel: names, curves, working sets, costs, snapshots."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from poolsight._kernel import Kernel
from poolsight.simulator.result import (
    CurvePoint,
    Getpages,
    ObjectResult,
    PoolResult,
    ResultMode,
    VpseqtPoint,
    Window,
    WorkingSet,
)
from poolsight.simulator.trace import Names

RANDOM, SEQUENTIAL, RID = 0, 1, 2
SECONDS_PER_DAY = 86_400.0
SNAPSHOT_MAGIC = b"PSSIM001"

Mode = Literal["exact", "shards"]
PolicyName = Literal["lru", "fifo", "lru-vpseqt"]


@dataclass(frozen=True)
class SimConfig:
    """How to simulate. SHARDS: fixed rate `rate`, or at most `max_samples` pages when > 0."""

    mode: Mode = "exact"
    rate: float = 0.01
    max_samples: int = 0
    pane_seconds: float = 60.0
    window_panes: int = 15
    precision_bits: int = 12  # distance buckets exact below 2**bits, then 2**-(bits-1) wide
    policy: PolicyName = "lru"
    policy_rate: float = 1.0  # spatial sampling rate of the miniature caches (fifo, lru-vpseqt)
    vpseqt: float = 80.0  # % of the pool the sequential chain may hold (lru-vpseqt)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in ("exact", "shards"):
            raise ValueError(f"mode {self.mode!r}: use exact or shards")
        if self.policy not in ("lru", "fifo", "lru-vpseqt"):
            raise ValueError(f"policy {self.policy!r}: use lru, fifo or lru-vpseqt")
        if self.window_panes < 1 or self.pane_seconds <= 0:
            raise ValueError("window_panes must be >= 1 and pane_seconds > 0")


@dataclass(frozen=True)
class CostModel:
    """Seed 001: 20-40 µs of CPU per avoided sync read; elapsed from the average sync I/O time."""

    cpu_seconds_per_sync_read: float = 30e-6
    sync_io_seconds: float | None = None


# Miniature caches hold at most this many sampled buffers at the pool's current size: a pool
# up to it runs them unsampled (exact), a bigger one at rate MINI_BUDGET / size.
MINI_BUDGET = 65_536
# The streaming job's default ("auto"): fixed-size SHARDS holding at most this many pages per pool.
# A pool whose footprint stays below it runs at rate 1, which is the exact simulation (same
# curve, same state size); a bigger one is sampled, its state bounded, within the accuracy
# bench-sim measures for fixed-size SHARDS (mean absolute error of the curve <= 0.005 already at
# 32,768 samples). The same budget as the miniature caches'.
AUTO_SAMPLES = MINI_BUDGET
# VPSEQT values a pool running LRU with VPSEQT is also simulated at, at its current size (one
# miniature cache each, its own value excepted): what an -ALTER of VPSEQT would do, read off
# by interpolation between them (prediction_check). 100 is plain LRU.
VPSEQT_ALTERNATIVES = (20.0, 50.0, 80.0, 100.0)


@dataclass
class _PoolMeta:
    size: int | None = None
    policy_sizes: list[int] | None = None
    policy_vpseqts: list[float] | None = None  # VPSEQT of each miniature cache (None: all the pool's)
    policy: str | None = None  # this pool's own (set_pool_policy), else the config's
    vpseqt: float | None = None
    t_min: float = math.inf
    t_max: float = -math.inf


@dataclass
class _Names:
    ids: dict[str, int] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)

    def id(self, name: str) -> int:
        if name not in self.ids:
            self.ids[name] = len(self.names)
            self.names.append(name)
        return self.ids[name]

    def map(self, values: Any, n: int) -> npt.NDArray[np.uint32]:
        """Names (a str, an array of str or of ints, or trace `Names`) to dense uint32 ids."""
        if isinstance(values, str | int):
            return np.full(n, self.id(str(values)), dtype=np.uint32)
        if isinstance(values, Names):  # already coded: map the small table, not every row
            if len(values) != n:
                raise ValueError(f"expected {n} values, got {len(values)}")
            lut = np.fromiter((self.id(str(u)) for u in values.table), dtype=np.uint32, count=len(values.table))
            coded: npt.NDArray[np.uint32] = lut[values.codes]
            return coded
        arr = np.asarray(values)
        if len(arr) != n:
            raise ValueError(f"expected {n} values, got {len(arr)}")
        uniq, inverse = np.unique(arr, return_inverse=True)
        ids = np.fromiter((self.id(str(u)) for u in uniq), dtype=np.uint32, count=len(uniq))
        out: npt.NDArray[np.uint32] = ids[inverse.reshape(-1)]
        return out


def default_ladder(current: int) -> list[int]:
    """Geometric ladder from 1/8x to 8x the current size, in steps of sqrt(2)."""
    return sorted({max(1, round(current * 2 ** (k / 2))) for k in range(-6, 7)})


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


class Simulator:
    """Feed getpage batches for any number of pools; ask for curves and working sets."""

    def __init__(self, config: SimConfig | None = None, costs: CostModel | None = None) -> None:
        self.config = config or SimConfig()
        self.costs = costs or CostModel()
        c = self.config
        if c.mode == "exact":
            self._kernel = Kernel("exact", 1.0, 0, c.precision_bits, c.seed, c.pane_seconds, c.window_panes)
        elif c.max_samples > 0:
            self._kernel = Kernel(
                "shards-fixed-size", 1.0, c.max_samples, c.precision_bits, c.seed, c.pane_seconds, c.window_panes
            )
        else:
            self._kernel = Kernel("shards", c.rate, 0, c.precision_bits, c.seed, c.pane_seconds, c.window_panes)
        self._pools = _Names()
        self._objects = _Names()
        self._meta: dict[str, _PoolMeta] = {}

    # ------------------------------------------------------------ input

    def set_background(self, on: bool = True) -> None:
        """Feeds run in a thread of the kernel's own: `feed` returns once its batch is copied and
        queued (16 wait at most besides the one running), so the caller's next batches are decoded
        while they run. Every other call waits for the queue to be run, so every answer equals a
        feed in the caller's thread. A restored simulator starts with it off."""
        self._kernel.set_background(on)

    @property
    def background(self) -> bool:
        """Whether feeds run in the kernel's thread (set_background)."""
        return self._kernel.background()

    def set_pool_size(self, pool: str, buffers: int) -> None:
        """The pool's current size (VPSIZE): the centre of the default ladder and the cost baseline."""
        self._meta.setdefault(pool, _PoolMeta()).size = int(buffers)
        if self.config.policy != "lru" and self._meta[pool].policy_sizes is None:
            self.set_policy_sizes(pool, default_ladder(int(buffers)))

    def set_policy_sizes(self, pool: str, sizes: Sequence[int]) -> None:
        """Candidate sizes for a non-stack policy (one miniature cache each); before the pool's first getpage."""
        c = self.config
        policy = "lru" if c.policy == "lru" else c.policy
        self._kernel.set_policy_sizes(self._pools.id(pool), policy, [int(s) for s in sizes], c.policy_rate, c.vpseqt)
        meta = self._meta.setdefault(pool, _PoolMeta())
        meta.policy_sizes, meta.policy_vpseqts = [int(s) for s in sizes], None

    def set_pool_policy(
        self,
        pool: str,
        buffers: int,
        policy: PolicyName,
        vpseqt: float = 80.0,
        sizes: Sequence[int] | None = None,
        also: Sequence[int] = (),
    ) -> None:
        """The pool as it runs now (size, page steal, VPSEQT), at any time: miniature caches of its
        policy on the ladder around `buffers`, unsampled up to MINI_BUDGET buffers. Called again
        after an -ALTER BUFFERPOOL, the caches start from what the old ones held and the
        panes' policy counts from then on are the new setting's. `sizes` replaces the ladder (and
        the other VPSEQT values) when only those sizes are asked about; `also` adds sizes to
        either (DB2's simulated pool at VPSIZE + SPSIZE: its curve point exact, not interpolated)."""
        if policy not in ("lru", "fifo", "lru-vpseqt"):
            raise ValueError(f"policy {policy!r}: use lru, fifo or lru-vpseqt")
        meta = self._meta.setdefault(pool, _PoolMeta())
        old = meta.size if meta.policy_sizes and meta.size in meta.policy_sizes else None
        meta.size, meta.policy, meta.vpseqt = int(buffers), policy, float(vpseqt)
        # 1/4x to 4x: a miniature cache costs memory and time for every getpage it sees.
        if sizes is None:
            chosen = [x for x in default_ladder(int(buffers)) if 4 * x >= buffers and x <= 4 * buffers]
        else:
            chosen = [int(x) for x in sizes]
        if also:
            chosen = sorted({*chosen, *(int(x) for x in also if int(x) > 0)})
        vpseqts = [float(vpseqt)] * len(chosen)
        if policy == "lru-vpseqt" and sizes is None:  # and the current size at other thresholds, after the ladder
            alternatives = [v for v in VPSEQT_ALTERNATIVES if v != float(vpseqt)]
            chosen += [int(buffers)] * len(alternatives)
            vpseqts += alternatives
        rate = min(1.0, MINI_BUDGET / max(1, int(buffers)))
        # The cache at the new size starts from what the pool held at its old size.
        start_from = [old if old is not None and x == int(buffers) else 0 for x in chosen]
        self._kernel.set_policy_sizes(self._pools.id(pool), policy, chosen, rate, float(vpseqt), start_from, vpseqts)
        meta.policy_sizes, meta.policy_vpseqts = chosen, vpseqts

    def policy_of(self, pool: str) -> str:
        """The policy the pool's miniature caches run (the config's unless set_pool_policy said)."""
        meta = self._meta.get(pool)
        return (meta.policy if meta is not None and meta.policy else None) or self.config.policy

    def feed(
        self,
        times: Any,
        pools: Any,
        objects: Any,
        pages: Any,
        access: Any = None,
        function: Any = None,
    ) -> int:
        """One batch of parallel arrays. times: seconds (float); pools/objects: names, ids or
        trace `Names` (a single value applies to the whole batch); pages: page numbers; access: 0 random,
        1 sequential, 2 RID-list (default random); function: 0 getpage, 1 set write intent,
        2 release (default getpage)."""
        t = np.ascontiguousarray(times, dtype=np.float64)
        n = len(t)
        if n == 0:
            return 0
        pg = np.ascontiguousarray(pages, dtype=np.uint64)
        if len(pg) != n:
            raise ValueError(f"pages has {len(pg)} values, times has {n}")
        pool_ids = self._pools.map(pools, n)
        obj_ids = self._objects.map(objects, n)
        acc = np.zeros(n, dtype=np.uint8) if access is None else np.ascontiguousarray(access, dtype=np.uint8)
        fun = np.zeros(n, dtype=np.uint8) if function is None else np.ascontiguousarray(function, dtype=np.uint8)
        # One pool named for the whole batch (the common case): no sort of its ids to find it.
        ids = pool_ids[:1] if isinstance(pools, str) or len(self._pools.names) == 1 else np.unique(pool_ids)
        for pid in ids:
            name = self._pools.names[int(pid)]
            meta = self._meta.setdefault(name, _PoolMeta())
            sel = t if len(self._pools.names) == 1 else t[pool_ids == pid]
            meta.t_min = min(meta.t_min, float(sel.min()))
            meta.t_max = max(meta.t_max, float(sel.max()))
        return int(self._kernel.feed(t, pool_ids, obj_ids, pg, acc, fun))

    def feed_coded(
        self,
        times: Any,
        pool: str,
        object_names: Sequence[str],
        object_codes: Any,
        pages: Any,
        access: Any = None,
        function: Any = None,
    ) -> int:
        """Like feed for one pool, with objects as codes into a small list of names (the
        GetpageBatch layout): no per-event string handling."""
        lut = np.fromiter((self._objects.id(n) for n in object_names), dtype=np.uint32, count=len(object_names))
        codes = np.asarray(object_codes, dtype=np.intp)
        if len(codes) and (codes.min() < 0 or codes.max() >= len(lut)):
            raise ValueError(f"object codes outside 0..{len(lut) - 1}")
        pool_id = np.full(len(codes), self._pools.id(pool), dtype=np.uint32)
        meta = self._meta.setdefault(pool, _PoolMeta())
        t = np.ascontiguousarray(times, dtype=np.float64)
        if len(t):
            meta.t_min = min(meta.t_min, float(t.min()))
            meta.t_max = max(meta.t_max, float(t.max()))
        n = len(t)
        acc = np.zeros(n, dtype=np.uint8) if access is None else np.ascontiguousarray(access, dtype=np.uint8)
        fun = np.zeros(n, dtype=np.uint8) if function is None else np.ascontiguousarray(function, dtype=np.uint8)
        return int(self._kernel.feed(t, pool_id, lut[codes], np.ascontiguousarray(pages, dtype=np.uint64), acc, fun))

    # ------------------------------------------------------------ output

    def last_pane(self, pool: str) -> int | None:
        """Index (event time // pane_seconds) of the pool's latest pane, None before any getpage."""
        if pool not in self._pools.ids:
            return None
        rows = self._kernel.panes(self._pools.ids[pool], 1)
        return int(rows[-1][0]) if rows else None

    def window_working_sets(self, pool: str, panes: int | None = None) -> tuple[int, dict[str, int], int]:
        """Pages whose latest reference is within the last `panes` panes: (pool, per object, panes kept)."""
        pid = self._pools.ids[pool]
        n = self.config.window_panes if panes is None else panes
        rate = self._kernel.pool_info(pid)[0]
        rows = self._kernel.panes(pid, n)
        objs: dict[str, float] = {}
        for _, _, per in rows:
            for oid, c in per.items():
                name = self._objects.names[oid]
                objs[name] = objs.get(name, 0.0) + c[4]
        return (round(sum(r[1][4] for r in rows) / rate), {k: round(v / rate) for k, v in objs.items()}, len(rows))

    def histogram(self, pool: str, access: int, panes: int = 1) -> list[tuple[int, int, float]]:
        """Reuse distances of the last `panes` panes: (lowest, highest stack depth, getpages) per
        kernel bucket; depth d means a hit in any pool of at least d buffers."""
        pid = self._pools.ids[pool]
        out: list[tuple[int, int, float]] = []
        for index, count in self._kernel.histogram(pid, access, panes):
            lo, width = self._kernel.bucket_range(index)  # distances lo .. lo + width - 1
            out.append((lo + 1, lo + width, float(count)))
        return out

    def pools(self) -> list[str]:
        return [self._pools.names[i] for i in self._kernel.pools()]

    def _window_seconds(self, pool: str, first_pane: int, last_pane: int) -> float:
        meta = self._meta[pool]
        ps = self.config.pane_seconds
        start = max(first_pane * ps, meta.t_min)
        end = min((last_pane + 1) * ps, meta.t_max)
        return max(end - start, 0.0)

    def result(self, pool: str, sizes: Sequence[int] | None = None, panes: int | None = None) -> PoolResult:
        """Everything known of one pool over the window (the last `panes` panes, default the
        configured window); `as_dict()` is the shape `poolsight simulate --json` writes."""
        pid = self._pools.ids[pool]
        n = self.config.window_panes if panes is None else panes
        meta = self._meta[pool]
        rate, tracked, first_ever, _last, _kept = self._kernel.pool_info(pid)
        rows = self._kernel.panes(pid, n)
        first_pane = rows[0][0]
        seconds = self._window_seconds(pool, first_pane, rows[-1][0])
        pool_counts = [r[1] for r in rows]
        refs_by_type = [sum(c[0][a] for c in pool_counts) for a in range(3)]
        refs = sum(refs_by_type)
        policy_name = meta.policy or self.config.policy
        if sizes is None and meta.policy_sizes and policy_name != "lru":
            sizes = meta.policy_sizes
        if sizes is None:
            distinct = max(1, round(sum(c[4] for c in pool_counts) / rate))
            sizes = default_ladder(meta.size) if meta.size else _footprint_ladder(distinct)
        sizes = sorted({int(s) for s in sizes})
        curve = self._curve_points(self._kernel.curve(pid, sizes, n), sizes, refs_by_type, seconds, meta.size)
        mode: ResultMode = (
            self.config.mode if self.config.max_samples == 0 or self.config.mode == "exact" else "shards-fixed-size"
        )
        # With miniature caches of the pool's own policy, their curve is the pool's, the LRU stack
        # curve goes beside it, and the current size at other VPSEQT values after.
        lru_curve: tuple[CurvePoint, ...] | None = None
        vpseqt_curve: tuple[VpseqtPoint, ...] = ()
        curve_policy: str = "lru"
        own_vpseqt: float | None = None
        policy_rate: float | None = None
        policy = self._kernel.policy_curve(pid, n)
        if policy is not None and (policy_name != "lru" or meta.policy is not None):
            curve_policy, psizes, policy_rate, vpseqt, acc = policy
            hits = [[_mini_hits(row, a, refs_by_type[a]) for a in range(3)] for row in acc]
            pcts = meta.policy_vpseqts or [vpseqt] * len(psizes)
            own = [i for i, v in enumerate(pcts) if v == vpseqt]
            own_vpseqt = vpseqt if curve_policy == "lru-vpseqt" else None
            lru_curve, curve = (
                curve,
                self._curve_points([hits[i] for i in own], [psizes[i] for i in own], refs_by_type, seconds, meta.size),
            )
            vpseqt_curve = tuple(
                VpseqtPoint.at(self._curve_points([hits[i]], [psizes[i]], refs_by_type, seconds, meta.size)[0], v)
                for i, v in enumerate(pcts)
                if v != vpseqt
            )
        return PoolResult(
            refs=refs,
            getpages=Getpages.of(refs_by_type),
            updates=sum(c[1] for c in pool_counts),
            distinct_pages=round(sum(c[4] for c in pool_counts) / rate),
            cold_misses=round(sum(sum(c[2]) for c in pool_counts)),
            late_getpages=sum(c[5] for c in pool_counts),
            window=Window(
                first_pane=first_pane,
                last_pane=rows[-1][0],
                panes=len(rows),
                pane_seconds=self.config.pane_seconds,
                seconds=seconds,
                # Warm-up: the window reaches back to the first pane ever seen, so
                # distances do not yet see a full window of history.
                warmup=first_ever is not None and first_pane <= first_ever,
            ),
            mode=mode,
            sampling_rate=rate,
            tracked_pages=tracked,
            current_size=meta.size,
            policy=curve_policy,
            curve=curve,
            working_set=_working_set([(r[0], r[1]) for r in rows], rate, self.config.pane_seconds),
            objects=self._objects_result(pid, sizes, n, rows, rate, seconds, meta.size),
            lru_curve=lru_curve,
            policy_sampling_rate=policy_rate,
            vpseqt=own_vpseqt,
            vpseqt_curve=vpseqt_curve,
        )

    def results(self, sizes: Sequence[int] | None = None, panes: int | None = None) -> dict[str, PoolResult]:
        """Every pool's result, by pool name."""
        return {p: self.result(p, sizes, panes) for p in self.pools()}

    def _curve_points(
        self,
        hits: Sequence[Sequence[float]],
        sizes: Sequence[int],
        refs_by_type: Sequence[int],
        seconds: float,
        current: int | None,
    ) -> tuple[CurvePoint, ...]:
        refs = sum(refs_by_type)
        counts: list[tuple[int, list[float], list[float]]] = []  # size, hits and misses by access type
        for size, h in zip(sizes, hits, strict=True):
            h = [min(max(h[a], 0.0), float(refs_by_type[a])) for a in range(3)]
            counts.append((int(size), h, [refs_by_type[a] - h[a] for a in range(3)]))
        base: float | None = None
        if current is not None and counts:
            # Sync reads at the current size (interpolated when it is not on the list).
            base = float(
                np.interp(current, [float(size) for size, _, _ in counts], [float(m[RANDOM]) for _, _, m in counts])
            )
        points: list[CurvePoint] = []
        for size, h, misses in counts:
            hit_total = sum(h)
            avoided = None if base is None else base - float(misses[RANDOM])
            per_s = _ratio(avoided, seconds) if avoided is not None else None
            cpu = None if per_s is None else per_s * self.costs.cpu_seconds_per_sync_read
            io = self.costs.sync_io_seconds
            el = None if per_s is None or io is None else per_s * io
            points.append(
                CurvePoint(
                    size_pages=size,
                    hits=hit_total,
                    misses=refs - hit_total,
                    hit_ratio=_ratio(hit_total, refs),
                    miss_ratio=_ratio(refs - hit_total, refs),
                    hit_ratio_random=_ratio(h[RANDOM], refs_by_type[RANDOM]),
                    hit_ratio_sequential=_ratio(h[SEQUENTIAL], refs_by_type[SEQUENTIAL]),
                    # A random miss is a synchronous read; sequential and RID-list misses are
                    # brought in by (dynamic, sequential or list) prefetch.
                    sync_reads=misses[RANDOM],
                    prefetch_pages=misses[SEQUENTIAL] + misses[RID],
                    sync_reads_per_s=_ratio(misses[RANDOM], seconds),
                    prefetch_pages_per_s=_ratio(misses[SEQUENTIAL] + misses[RID], seconds),
                    avoided_sync_reads=avoided,
                    avoided_sync_reads_per_s=per_s,
                    cpu_seconds_saved_per_s=cpu,
                    cpu_seconds_saved_per_24h=None if cpu is None else cpu * SECONDS_PER_DAY,
                    elapsed_seconds_saved_per_s=el,
                    elapsed_seconds_saved_per_24h=None if el is None else el * SECONDS_PER_DAY,
                )
            )
        return tuple(points)

    def _objects_result(
        self,
        pid: int,
        sizes: list[int],
        n: int,
        rows: list[Any],
        rate: float,
        seconds: float,
        current: int | None,
    ) -> dict[str, ObjectResult]:
        curves = self._kernel.object_curves(pid, sizes, n)
        per_obj: dict[int, list[tuple[int, Any]]] = {}
        for pane_id, _, objs in rows:
            for oid, counts in objs.items():
                per_obj.setdefault(oid, []).append((pane_id, counts))
        out: dict[str, ObjectResult] = {}
        for oid, panes in sorted(per_obj.items()):
            refs_by_type = [sum(c[0][a] for _, c in panes) for a in range(3)]
            refs = sum(refs_by_type)
            if refs == 0:
                continue
            seq_share = (refs_by_type[SEQUENTIAL] + refs_by_type[RID]) / refs
            hits = curves.get(oid, [[0.0, 0.0, 0.0]] * len(sizes))
            out[self._objects.names[oid]] = ObjectResult(
                refs=refs,
                getpages=Getpages.of(refs_by_type),
                updates=sum(c[1] for _, c in panes),
                distinct_pages=round(sum(c[4] for _, c in panes) / rate),
                sequential_share=seq_share,
                access_class="SAMOS" if seq_share >= 0.5 else "RAMOS",
                curve=self._curve_points(hits, sizes, refs_by_type, seconds, current),
                working_set=_working_set(panes, rate, self.config.pane_seconds),
            )
        return out

    # ------------------------------------------------------------ state

    def snapshot(self) -> bytes:
        """Everything needed to continue later, as bytes (kernel state plus names and sizes)."""
        return b"".join(self.snapshot_parts())

    def snapshot_parts(self) -> list[bytes]:
        """The snapshot's parts in order: a caller adding its own header joins them once (the
        kernel's part is tens of MB; every concatenation is a copy)."""
        header = json.dumps(
            {
                "config": asdict(self.config),
                "costs": asdict(self.costs),
                "pools": self._pools.names,
                "objects": self._objects.names,
                "meta": {k: asdict(v) for k, v in self._meta.items()},
            },
            allow_nan=True,
        ).encode()
        return [SNAPSHOT_MAGIC, struct.pack("<I", len(header)), header, self._kernel.snapshot()]

    def state_bytes(self) -> int:
        """Size of a snapshot now: what keeping this simulator in Flink state costs."""
        return len(self.snapshot())

    @classmethod
    def restore(cls, data: bytes) -> Simulator:
        if data[:8] != SNAPSHOT_MAGIC:
            raise ValueError("not a poolsight simulator snapshot")
        (hlen,) = struct.unpack("<I", data[8:12])
        header = json.loads(data[12 : 12 + hlen])
        sim = cls(SimConfig(**header["config"]), CostModel(**header["costs"]))
        sim._kernel = Kernel.restore(data[12 + hlen :])
        for name in header["pools"]:
            sim._pools.id(name)
        for name in header["objects"]:
            sim._objects.id(name)
        sim._meta = {k: _PoolMeta(**v) for k, v in header["meta"].items()}
        return sim


def _footprint_ladder(distinct: int) -> list[int]:
    """Without a current size: powers of two up to twice the pages seen."""
    top = max(2, 2 * distinct)
    return [2**k for k in range(0, int(math.log2(top)) + 1)]


def _mini_hits(row: Sequence[float], a: int, refs: int) -> float:
    sampled = row[a] + row[3 + a]
    return refs * row[a] / sampled if sampled > 0 else 0.0


def _working_set(panes: list[tuple[int, Any]], rate: float, pane_seconds: float) -> WorkingSet:
    """Distinct pages per pane (touched) and over the window (pages whose latest touch is in it)."""
    per_pane = [c[3] for _, c in panes]
    window = sum(c[4] for _, c in panes) / rate
    return WorkingSet(
        window_pages=round(window),
        pane_pages=tuple(round(x) for x in per_pane),
        avg_pages=float(np.mean(per_pane)) if per_pane else 0.0,
        max_pages=round(max(per_pane)) if per_pane else 0,
        change_pages=round(per_pane[-1] - per_pane[-2]) if len(per_pane) > 1 else None,
    )
