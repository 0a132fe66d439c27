"""The recent getpages of some pools, read back from Kafka into a trace: how online advice
replays an object placement (and FIFO) on the reference stream the simulation job saw.

The getpage topic is read from `lookback` seconds of broker time ago to its end, keeping the
batches of the pools asked for and the getpages in the event-time window [start, end). Memory is
bounded whatever the traffic: the getpages are kept as codes (about 34 bytes each), and when more
than `max_getpages` would be kept, the trace becomes a spatial sample (SHARDS-style, as the
miniature caches sample): a page is kept when its hash is below the rate, the rate halves each
time the sample outgrows the bound, and the replay runs the pools at that share of their size
(advice/replay.py `Trace.rate`). Every getpage of a kept page is kept, so reuse is exact for it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.advice.replay import Trace
from poolsight.infra.config import Settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.kafka_io import read_since
from poolsight.names import GETPAGE_TOPIC
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroDecoder, DecodeError, UnusableBatch

MAX_GETPAGES = 2_000_000  # kept over every pool asked for: ~70 MB, twice that while a trace is built

U64 = npt.NDArray[np.uint64]


def page_hash(obj: npt.NDArray[np.int32], page: U64) -> U64:
    """splitmix64 of (object code, page): uniform, so `hash < rate * 2**64` keeps a share `rate` of pages."""
    with np.errstate(over="ignore"):
        x = (obj.astype(np.uint64) << np.uint64(40)) ^ page.astype(np.uint64)
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _below(h: U64, rate: float) -> npt.NDArray[np.bool_]:
    if rate >= 1.0:
        return np.ones(len(h), dtype=np.bool_)
    return h < np.uint64(int(rate * 2.0**64))


@dataclass
class Sample:
    """The getpages kept so far, at most `cap`: columns in arrival order, with each one's hash."""

    cap: int
    rate: float = 1.0
    parts: list[tuple[Any, ...]] = field(default_factory=list)
    kept: int = 0
    # Every getpage counted, kept or not: (pool, object, access type) -> getpages.
    counts: dict[tuple[int, int, int], int] = field(default_factory=dict)

    def add(self, pool: int, t: Any, obj: Any, pages: U64, access: Any, function: Any) -> None:
        gp = function == 0
        key = obj[gp].astype(np.int64) * 3 + np.minimum(access[gp], 2)
        values, n = np.unique(key, return_counts=True)
        for k, c in zip(values.tolist(), n.tolist(), strict=True):
            self.counts[(pool, k // 3, k % 3)] = self.counts.get((pool, k // 3, k % 3), 0) + c
        h = page_hash(obj, pages)
        keep = _below(h, self.rate)
        if not keep.any():
            return
        p = np.full(int(keep.sum()), pool, dtype=np.int32)
        self.parts.append((t[keep], p, obj[keep], pages[keep], access[keep], function[keep], h[keep]))
        self.kept += len(p)
        while self.kept > self.cap:
            self.rate /= 2
            self.parts = [tuple(c[_below(part[6], self.rate)] for c in part) for part in self.parts]
            self.kept = sum(len(part[0]) for part in self.parts)

    def trace(self, pools: list[str], objects: list[str]) -> Trace:
        cols = [np.concatenate([part[i] for part in self.parts]) for i in range(6)]
        order = np.argsort(cols[0], kind="stable")
        t, p, o, pg, a, f = (c[order] for c in cols)
        present, p = np.unique(p, return_inverse=True)  # the pools with getpages only
        code = {int(c): i for i, c in enumerate(present)}
        exact = np.zeros((len(present), len(objects), 3), dtype=np.int64)
        for (pool, obj, acc), n in self.counts.items():
            if pool in code:
                exact[code[pool], obj, acc] = n
        trace = Trace(t, p.astype(np.int32), o, pg, a, f, [pools[i] for i in present], objects, rate=self.rate)
        trace.exact = exact if self.rate < 1.0 else None
        return trace


def recent_trace(
    s: Settings,
    windows: dict[tuple[str, str], tuple[datetime | None, datetime | None]],
    lookback: float,
    max_getpages: int = MAX_GETPAGES,
) -> Trace | None:
    """A trace of the pools' getpages in their windows ((source, pool) -> (start, end)); None if
    none. More than `max_getpages` in all: a spatial sample (`Trace.rate`)."""
    keys = {f"{src}|{pool}": (src, pool) for src, pool in windows}
    codes = {k: i for i, k in enumerate(keys)}
    bounds = {
        k: (w[0].timestamp() if w[0] else -np.inf, w[1].timestamp() if w[1] else np.inf)
        for k, w in ((k, windows[v]) for k, v in keys.items())
    }
    decoder = AvroDecoder(registry_access(s))
    objects: dict[str, int] = {}
    sample = Sample(max_getpages)

    def handle(msg: Any) -> None:
        key = (msg.key() or b"").decode(errors="replace")
        if key not in keys:
            return
        try:
            # The kernel decodes a v1 batch into numpy columns, as the simulation job does:
            # fastavro's dicts and from_record cost some 50 s of a core per 30,000 batches.
            _, b = decoder.read(msg.value())
        except (DecodeError, UnusableBatch):
            return  # the simulation job sent it to dead_letter: it is not in the curves either
        if not isinstance(b, GetpageBatch):
            return
        t = b.times()
        lo, hi = bounds[key]
        keep = (t >= lo) & (t < hi)
        if keep.any():
            lut = np.array([objects.setdefault(str(n), len(objects)) for n in b.object_names], dtype=np.int32)
            sample.add(
                codes[key],
                t[keep],
                lut[b.objects[keep]],
                b.pages[keep].astype(np.uint64),
                b.access_codes()[keep],
                b.function_codes()[keep],
            )

    read_since(kafka_access(s), GETPAGE_TOPIC.name, int((time.time() - lookback) * 1000), handle)
    if not sample.parts:
        return None
    return sample.trace([f"{src}/{pool}" for src, pool in keys.values()], list(objects))
