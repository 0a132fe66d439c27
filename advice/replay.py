"""Offline simulation from a trace: a pool as it runs, and pools as a proposal would lay them out.

The trace is read once into arrays; every layout (objects to pools, pool sizes and settings)
is a replay of the involved pools' getpages through the simulator, at each pool's own policy,
over the whole trace (one window)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.ingest.tracefiles import open_trace
from poolsight.ingest.zos.catalog import Catalog
from poolsight.schemas.getpage import ACCESS_NAMES
from poolsight.simulator.engine import PolicyName, SimConfig, Simulator
from poolsight.simulator.result import CurvePoint, PoolResult
from poolsight.simulator.trace import Names, TraceFormatError

PANE_SECONDS = 60.0


@dataclass(frozen=True)
class PoolRun:
    """A pool as simulated: size, policy and VPSEQT."""

    size: int
    policy: PolicyName
    vpseqt: float


@dataclass(frozen=True)
class ReplayRates:
    """A pool's rates in a replay, over the span of the getpages taking part."""

    sync_reads_per_s: float
    getpages_per_s: float
    objects: dict[str, float]  # object -> its sync reads/s


class TraceError(Exception):
    pass


@dataclass
class Trace:
    times: npt.NDArray[np.float64]
    pool: npt.NDArray[np.int32]  # codes into pools ("source/pool" when the trace names sources)
    obj: npt.NDArray[np.int32]  # codes into objects
    pages: npt.NDArray[np.uint64]
    access: npt.NDArray[np.uint8]
    function: npt.NDArray[np.uint8]
    pools: list[str]
    objects: list[str]
    rejected: int = 0
    # The share of pages kept, by page (a spatial sample, advice/recent.py): a replay runs its
    # pools at `rate` times their size and divides their misses by it. `exact`: every getpage
    # of the sampled window counted, per (pool code, object code, access type): a hot page the
    # sample leaves out would bend the getpages divided by the rate (replay._scaled).
    rate: float = 1.0
    exact: npt.NDArray[np.int64] | None = None

    @property
    def seconds(self) -> float:
        return float(self.times.max() - self.times.min()) if len(self.times) else 0.0

    @property
    def panes(self) -> int:
        if not len(self.times):
            return 1
        return int(math.floor(self.times.max() / PANE_SECONDS) - math.floor(self.times.min() / PANE_SECONDS)) + 1

    def objects_of(self, pool: str) -> list[str]:
        codes = np.unique(self.obj[self.pool == self.pools.index(pool)])
        return [self.objects[int(c)] for c in codes]


TRACE_NAMES = ("trace.csv", "trace.smf", "trace.gtf", "trace.parquet")  # what a directory may hold


def trace_file(directory: Path) -> Path | None:
    """The trace of a directory as `poolsight generate --output DIR` (or a shop) lays it out."""
    return next((directory / n for n in TRACE_NAMES if (directory / n).exists()), None)


def load(path: Path) -> Trace:
    """Every getpage of a trace file in any format the readers know (a z/OS trace's objects named
    by a catalog.csv beside it), names coded once for the whole file."""
    catalog = path.parent / "catalog.csv"
    try:
        reader = open_trace(path, catalog=Catalog.load([catalog]) if catalog.exists() else None)
    except TraceFormatError as exc:
        raise TraceError(str(exc)) from exc
    parts: dict[str, list[Any]] = {k: [] for k in ("t", "p", "o", "pg", "a", "f")}
    pools: dict[str, int] = {}
    objects: dict[str, int] = {}
    for b in reader.batches():
        plut = np.array([pools.setdefault(str(n), len(pools)) for n in b.pool_names.table], dtype=np.int32)
        olut = np.array([objects.setdefault(str(n), len(objects)) for n in b.object_names.table], dtype=np.int32)
        parts["t"].append(b.times)
        parts["p"].append(plut[b.pool_names.codes])
        parts["o"].append(olut[b.object_names.codes])
        parts["pg"].append(b.pages)
        parts["a"].append(b.access)
        parts["f"].append(b.function)
    if reader.accepted == 0:
        first = f": {reader.errors[0]}" if reader.errors else ""
        raise TraceError(f"{path}: no readable getpages{first}")
    return Trace(
        np.concatenate(parts["t"]),
        np.concatenate(parts["p"]),
        np.concatenate(parts["o"]),
        np.concatenate(parts["pg"]),
        np.concatenate(parts["a"]),
        np.concatenate(parts["f"]),
        list(pools),
        list(objects),
        reader.rejected,
    )


def analyse(trace: Trace, runs: dict[str, PoolRun]) -> dict[str, PoolResult]:
    """Each pool of `runs` as it runs now, over the whole trace: the simulator's result (curve on
    the ladder at the pool's policy, LRU stack curve, the current size at other VPSEQT values,
    objects, working sets)."""
    if trace.rate != 1.0:
        raise ValueError("analyse takes a whole trace, not a sample")
    sim = Simulator(SimConfig(pane_seconds=PANE_SECONDS, window_panes=trace.panes))
    for name, r in runs.items():
        sim.set_pool_policy(name, r.size, r.policy, r.vpseqt)
    _feed(sim, trace, {trace.pools.index(n): n for n in runs}, {})
    return {name: sim.result(name) for name in runs}


def at_size(
    trace: Trace, runs: dict[str, PoolRun], moves: dict[str, str] | None = None, from_pools: set[str] | None = None
) -> dict[str, ReplayRates]:
    """Sync reads/s (and per object) of each pool in `runs` at its size and policy, with the objects
    in `moves` replayed into the pool named there. `from_pools`: the trace pools whose getpages
    take part (default: those named in runs). Every pool's rate is over the same span, that of the
    getpages taking part: a pool given a burst of scans is not judged by the burst's length."""
    return {name: v[runs[name].size] for name, v in at_sizes(trace, runs, moves, from_pools).items()}


def at_sizes(
    trace: Trace,
    runs: dict[str, PoolRun],
    moves: dict[str, str] | None = None,
    from_pools: set[str] | None = None,
    also: dict[str, list[int]] | None = None,
) -> dict[str, dict[int, ReplayRates]]:
    """As `at_size`, with some pools also at other sizes in the same pass (`also`: pool -> sizes,
    each a cache of its own on the same getpages): pool -> size -> rates."""
    moves = moves or {}
    sim = Simulator(SimConfig(pane_seconds=PANE_SECONDS, window_panes=trace.panes))
    wanted = {name: sorted({r.size, *(also or {}).get(name, [])}) for name, r in runs.items()}
    scaled = {name: {s: max(1, round(s * trace.rate)) for s in sizes} for name, sizes in wanted.items()}
    for name, r in runs.items():
        sizes = sorted(set(scaled[name].values()))
        sim.set_pool_policy(name, scaled[name][r.size], r.policy, r.vpseqt, sizes=sizes)
    sources = from_pools if from_pools is not None else set(runs) & set(trace.pools)
    _feed(sim, trace, {trace.pools.index(n): n for n in sources}, moves)
    span = _span(trace, sources)
    out: dict[str, dict[int, ReplayRates]] = {}
    for name in runs:
        if name not in sim.pools() or sim.last_pane(name) is None:  # no getpage of it in this layout
            out[name] = {s: ReplayRates(sync_reads_per_s=0.0, getpages_per_s=0.0, objects={}) for s in wanted[name]}
            continue
        sizes = sorted(set(scaled[name].values()))
        res = sim.result(name, sizes)
        points = {int(c.size_pages): c for c in res.curve}
        objects = {o: {int(c.size_pages): c for c in v.curve} for o, v in res.objects.items()}
        exact = _exact_counts(trace, name, sources, moves) if trace.exact is not None else None
        out[name] = {}
        for s in wanted[name]:
            k = scaled[name][s]
            if exact is None:
                out[name][s] = ReplayRates(
                    sync_reads_per_s=float(points[k].sync_reads) / span,
                    getpages_per_s=res.refs / span,
                    objects={o: float(c[k].sync_reads) / span for o, c in objects.items()},
                )
            else:
                out[name][s] = _scaled(float(points[k].sync_reads), objects, k, exact, span, trace.rate)
    return out


def _exact_counts(
    trace: Trace, name: str, sources: set[str], moves: dict[str, str]
) -> dict[str, npt.NDArray[np.int64]]:
    """Per object that runs in pool `name` in this layout, its getpages by access type (all of them)."""
    assert trace.exact is not None
    out: dict[str, npt.NDArray[np.int64]] = {}
    for pool in sources:
        pc = trace.pools.index(pool)
        for oc, obj in enumerate(trace.objects):
            target = moves.get(f"{pool} {obj}", moves.get(obj, pool))
            if target == name and trace.exact[pc, oc].any():
                out[obj] = out.get(obj, np.zeros(3, dtype=np.int64)) + trace.exact[pc, oc]
    return out


def _scaled(
    sync_reads: float,
    objects: dict[str, dict[int, CurvePoint]],
    size: int,
    exact: dict[str, npt.NDArray[np.int64]],
    span: float,
    rate: float,
) -> ReplayRates:
    """A sampled replay's rates (SHARDS-adj): misses are the sample's divided by the rate, and
    getpages the exact count; the getpages the sample is short of are hits (they are the hot
    pages a spatial sample most often leaves out)."""
    per_object = {o: float(c[size].sync_reads) / rate / span for o, c in objects.items() if o in exact}
    total = sum(int(n.sum()) for n in exact.values())
    return ReplayRates(sync_reads_per_s=sync_reads / rate / span, getpages_per_s=total / span, objects=per_object)


def _span(trace: Trace, pools: set[str]) -> float:
    """Seconds from the first to the last getpage of these trace pools (as the simulator counts a window)."""
    sel = np.isin(trace.pool, [trace.pools.index(n) for n in pools])
    t = trace.times[sel]
    return float(t.max() - t.min()) if len(t) > 1 and t.max() > t.min() else 1.0


def fifo_at_size(trace: Trace, runs: dict[str, PoolRun]) -> dict[str, float]:
    """Sync reads/s of each pool run with PGSTEAL FIFO at its current size."""
    fifo = {n: PoolRun(r.size, "fifo", r.vpseqt) for n, r in runs.items()}
    return {n: v.sync_reads_per_s for n, v in at_size(trace, fifo).items()}


def halves(
    trace: Trace, pool: str
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float], tuple[float, float]]:
    """The pool's getpages per (object, access type) in the first and second half of its time span."""
    sel = (trace.pool == trace.pools.index(pool)) & (trace.function == 0)
    t = trace.times[sel]
    if not len(t):
        return {}, {}, (0.0, 0.0)
    lo, hi = float(t.min()), float(t.max())
    mid = (lo + hi) / 2
    key = trace.obj[sel].astype(np.int64) * 3 + np.minimum(trace.access[sel], 2)
    out = []
    for part in (t < mid, t >= mid):
        counts = np.bincount(key[part], minlength=3 * len(trace.objects))
        out.append({(trace.objects[k // 3], ACCESS_NAMES[k % 3]): float(c) for k, c in enumerate(counts.tolist()) if c})
    return out[0], out[1], (mid - lo, hi - mid)


def _feed(sim: Simulator, trace: Trace, pools: dict[int, str], moves: dict[str, str]) -> None:
    """The getpages of `pools` (trace code -> simulated pool name) in time order, each object in
    the pool `moves` names for it (an object is named "pool object" or just "object")."""
    if not pools:
        return
    codes = np.array(sorted(pools), dtype=np.int32)
    sel = np.isin(trace.pool, codes)
    # Target pool per (trace pool, object): a lookup table over the codes.
    table = np.full((len(trace.pools), len(trace.objects)), -1, dtype=np.int32)
    names: list[str] = []
    for pc, pname in pools.items():
        for oc, oname in enumerate(trace.objects):
            target = moves.get(f"{trace.pools[pc]} {oname}", moves.get(oname, pname))
            if target not in names:
                names.append(target)
            table[pc, oc] = names.index(target)
    idx = np.nonzero(sel)[0]
    step = 1 << 20
    for i in range(0, len(idx), step):
        part = idx[i : i + step]
        target = table[trace.pool[part], trace.obj[part]]
        sim.feed(
            trace.times[part],
            Names(target, np.array(names)),
            Names(trace.obj[part], np.array(trace.objects)),
            trace.pages[part],
            trace.access[part],
            trace.function[part],
        )
