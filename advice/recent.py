"""The recent getpages of some pools, read back from Kafka into a trace: how online advice
replays an object placement (and FIFO) on the reference stream the simulation job saw.

The getpage topic is read from `lookback` seconds of broker time ago to its end, keeping the
batches of the pools asked for and the getpages in the event-time window [start, end). Memory is
bounded whatever the traffic: the getpages are kept as codes (about 34 bytes each), and when more
than `max_getpages` would be kept, the trace becomes a spatial sample (SHARDS-style, as the
miniature caches sample): a page is kept when its hash is below the rate, the rate halves each
time the sample outgrows the bound, and the replay runs the pools at that share of their size
(advice/replay.py `Trace.rate`). Every getpage of a kept page is kept, so reuse is exact for it.

The advice service keeps its `RecentGetpages` between evaluations: the next one reads only the
records written since the last (from where that read ended, partition by partition) and drops the
getpages its windows have left, instead of the whole look-back again. Each getpage is counted per
minute of event time (`COUNT_SECONDS`), so a window's start may move on by whole minutes and its
counts stay exact; windows that do not start and end on a whole minute are read afresh."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.advice.replay import Trace
from poolsight.infra.config import Settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.kafka_io import read_from
from poolsight.names import GETPAGE_TOPIC
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroDecoder, DecodeError, UnusableBatch

LOG = logging.getLogger(__name__)
COUNT_SECONDS = 60  # getpages are counted by minute of event time
COUNT_ROWS = 1_000_000  # count rows added before they are summed (32 bytes each)
MAX_SEEN = 100_000  # keys whose partitions are remembered; beyond, the next read starts again from the look-back
MAX_OBJECTS = 200_000  # object names kept between reads; beyond, the next read starts afresh
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
    """The getpages kept so far, at most `cap`: columns in arrival order, with each one's hash, and
    every getpage counted, kept or not, by minute: rows (minute, pool, object * 3 + access type, getpages)."""

    cap: int
    rate: float = 1.0
    parts: list[tuple[Any, ...]] = field(default_factory=list)
    kept: int = 0
    counted: list[npt.NDArray[np.int64]] = field(default_factory=list)
    counted_rows: int = 0

    def add(self, pool: int, t: Any, obj: Any, pages: U64, access: Any, function: Any) -> None:
        gp = function == 0
        if gp.any():
            minute = np.floor(t[gp] / COUNT_SECONDS).astype(np.int64)
            code = obj[gp].astype(np.int64) * 3 + np.minimum(access[gp], 2)
            first, span = int(minute.min()), int(code.max()) + 1
            values, n = np.unique((minute - first) * span + code, return_counts=True)
            self.counted.append(
                np.stack([values // span + first, np.full(len(values), pool), values % span, n], axis=1)
            )
            self.counted_rows += len(values)
            if self.counted_rows > COUNT_ROWS:  # a row per batch and minute: summed, one per (minute, pool, key)
                self._join_counts()
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

    def trim(self, since: float) -> None:
        """Drop the getpages before `since` (a whole minute: their counts go by minute), and join
        what is left into one part, so that the parts do not grow in number from one read to the next."""
        parts = [tuple(c[part[0] >= since] for c in part) for part in self.parts]
        self.parts = [tuple(np.concatenate(c) for c in zip(*parts, strict=True))] if parts else []
        self.kept = len(self.parts[0][0]) if parts else 0
        self._join_counts()
        if self.counted:
            rows = self.counted[0]
            self.counted = [rows[rows[:, 0] * COUNT_SECONDS >= since]]
            self.counted_rows = len(self.counted[0])

    def drop(self, pools: set[int]) -> None:
        """Forget the getpages of these pool codes (pools no longer asked for)."""
        self.parts = [tuple(c[~np.isin(part[1], list(pools))] for c in part) for part in self.parts]
        self.kept = sum(len(part[0]) for part in self.parts)
        self.counted = [rows[~np.isin(rows[:, 1], list(pools))] for rows in self.counted]
        self.counted_rows = sum(len(rows) for rows in self.counted)

    def _join_counts(self) -> None:
        if not self.counted:
            return
        rows = np.concatenate(self.counted)
        keys, where = np.unique(rows[:, :3], axis=0, return_inverse=True)
        sums = np.bincount(where.ravel(), weights=rows[:, 3], minlength=len(keys)).astype(np.int64)
        self.counted = [np.column_stack([keys, sums])]
        self.counted_rows = len(keys)

    def trace(
        self, pools: list[str], objects: list[str], windows: dict[int, tuple[float, float]] | None = None
    ) -> Trace | None:
        """The trace of the pools (by code) in `windows` ((start, end) in epoch seconds, all by
        default), None if no getpage is in one. A window cuts counts by minute: either it starts
        and ends on whole minutes, or every getpage added was already inside it."""
        cols = [np.concatenate([part[i] for part in self.parts]) for i in range(6)] if self.parts else []
        rows = np.concatenate(self.counted) if self.counted else np.zeros((0, 4), dtype=np.int64)
        if windows is not None and cols:
            inside = np.zeros(len(cols[0]), dtype=np.bool_)
            counted = np.zeros(len(rows), dtype=np.bool_)
            at = rows[:, 0] * COUNT_SECONDS
            for pool, (lo, hi) in windows.items():
                inside |= (cols[1] == pool) & (cols[0] >= lo) & (cols[0] < hi)
                counted |= (rows[:, 1] == pool) & (at + COUNT_SECONDS > lo) & (at < hi)
            cols, rows = [c[inside] for c in cols], rows[counted]
        if not cols or not len(cols[0]):
            return None
        order = np.argsort(cols[0], kind="stable")
        t, p, o, pg, a, f = (c[order] for c in cols)
        present, p = np.unique(p, return_inverse=True)  # the pools with getpages only
        rows = rows[np.isin(rows[:, 1], present)]
        # Only the objects the trace holds or counts (the names outlive pools no longer asked for).
        held = np.unique(np.concatenate([o, rows[:, 2] // 3]).astype(np.int64))
        obj = np.searchsorted(held, rows[:, 2] // 3)
        exact = np.zeros((len(present), len(held), 3), dtype=np.int64)
        np.add.at(exact, (np.searchsorted(present, rows[:, 1]), obj, rows[:, 2] % 3), rows[:, 3])
        o = np.searchsorted(held, o).astype(np.int32)
        objects = [objects[int(i)] for i in held]
        trace = Trace(t, p.astype(np.int32), o, pg, a, f, [pools[i] for i in present], objects, rate=self.rate)
        trace.exact = exact if self.rate < 1.0 else None
        return trace


Window = tuple[datetime | None, datetime | None]


class RecentGetpages:
    """The recent getpages of the pools asked for, kept between evaluations (see the module's doc).

    `trace` reads the records written since its last read, when its windows start and end on
    whole minutes. A pool asked for that it did not collect is read from the look-back first, in
    the partitions its records were seen in (a pool's key keeps it in one), unless it was never
    seen (then all of it comes after); a window off the minute or before what was kept, or a
    sample whose traffic fell starts it again from the look-back, collecting the pools asked for
    and those asked for the time before; a pool asked for neither now nor the time before is
    dropped. A read that fails leaves it empty: the next starts again."""

    def __init__(self, s: Settings, max_getpages: int = MAX_GETPAGES) -> None:
        self.s = s
        self.max_getpages = max_getpages
        self.decoder: AvroDecoder | None = None  # made at the first read: the service starts without the registry
        self.keys: dict[str, int] = {}  # "source|pool" collected -> its code in the sample
        self.asked: set[str] = set()  # the keys the last trace was asked for
        self.offsets: dict[int, int] | None = None  # where the last read ended, by partition
        # Per key collected, the time its getpages are held from: the highest of the lower bounds
        # its reads kept from and the trims since. A window starting before it must read afresh.
        self.floors: dict[str, float] = {}
        self.seen: dict[str, set[int]] = {}  # every key read, collected or not -> its partitions
        self.sample = Sample(max_getpages)
        self.objects: dict[str, int] = {}
        self.reads = 0  # records read, all reads
        self.fresh = 0  # reads of every partition from the look-back
        self.caught_up = 0  # pools newly asked for, read from the look-back in their partitions

    def trace(self, windows: Mapping[tuple[str, str], Window], lookback: float) -> Trace | None:
        """A trace of the pools' getpages in their windows ((source, pool) -> (start, end)); None if
        none. More than `max_getpages` in all: a spatial sample (`Trace.rate`)."""
        if not windows:
            return None
        wanted = {f"{src}|{pool}": _bounds(w) for (src, pool), w in windows.items()}
        since = min(lo for lo, _ in wanted.values())
        # A window with no start would keep its counts for ever: such a read is not kept.
        whole = since > -math.inf and all(_on_minute(b) for lo_hi in wanted.values() for b in lo_hi)
        new = sorted(wanted.keys() - self.keys.keys())
        if (
            self.offsets is None
            or not whole
            or any(lo < self.floors.get(k, -math.inf) for k, (lo, _) in wanted.items() if k in self.keys)
            or (self.sample.rate < 1.0 and self.sample.kept < self.max_getpages // 4)  # traffic fell: a finer sample
            or len(self.seen) > MAX_SEEN  # forgetting keys seen needs a read that sees them again
            or len(self.objects) > MAX_OBJECTS  # names of pools no longer collected, among them
        ):
            self._empty({*wanted, *(self.asked if whole else ())})
            new = []
        # A pool asked for neither now nor the time before is no longer collected.
        gone = {k: c for k, c in self.keys.items() if k not in wanted and k not in self.asked}
        if gone:
            self.sample.drop(set(gone.values()))
            self.keys = {k: c for k, c in self.keys.items() if k not in gone}
            self.floors = {k: f for k, f in self.floors.items() if k not in gone}
        self.asked = set(wanted)
        if whole:  # what the windows have left goes before the read, so it does not halve the rate
            self._trim(since)
        try:
            first = max(self.keys.values(), default=-1) + 1  # codes stay: the sample holds them
            self.keys |= {k: first + i for i, k in enumerate(new)}
            # Every record since the look-back's start was read and its key noted: a pool not seen
            # has nothing before where the last read ended, and the read on from there gets it all.
            if behind := [k for k in new if k in self.seen]:
                self._catch_up(lookback, behind, wanted)
            # Not on whole minutes: only the windows' getpages are kept (counted exactly), and not kept after.
            self._read(lookback, set(wanted) if not whole else set(), wanted, since)
        except Exception:
            self._empty(set())
            raise
        if whole:
            self._trim(since)
        code_windows = {self.keys[k]: lohi for k, lohi in wanted.items()}
        names = [""] * (max(self.keys.values()) + 1)
        for k, c in self.keys.items():
            names[c] = k.replace("|", "/", 1)
        out = self.sample.trace(names, list(self.objects), code_windows)
        if not whole:
            self._empty(set())
        return out

    def _trim(self, since: float) -> None:
        self.sample.trim(since)
        self.floors = {k: max(f, since) for k, f in self.floors.items()}

    def _empty(self, keys: set[str]) -> None:
        self.keys, self.floors = {k: i for i, k in enumerate(sorted(keys))}, {}
        self.offsets, self.sample, self.objects, self.seen = None, Sample(self.max_getpages), {}, {}

    def _catch_up(self, lookback: float, new: list[str], wanted: dict[str, tuple[float, float]]) -> None:
        """The look-back of the partitions that hold the keys `new`, up to where the last read ended."""
        assert self.offsets is not None
        parts = set().union(*(self.seen[k] for k in new))
        until = {p: o for p, o in self.offsets.items() if p in parts}
        read, _, took = self._read_back(lookback, self._handler({k: wanted[k][0] for k in new}), until=until)
        self.caught_up += len(new)
        LOG.info(
            "%s records of partitions %s read back from the look-back for %s in %.1f s", read, sorted(until), new, took
        )

    def _read(self, lookback: float, exact: set[str], wanted: dict[str, tuple[float, float]], since: float) -> None:
        """Read on from the last read's end (or the look-back), keeping the collected keys'
        getpages from `since` on (a key asked for: from its window's start; in `exact`: inside it)."""
        lower = {k: wanted[k][0] if k in wanted else since for k in self.keys}
        fresh = self.offsets is None
        handle = self._handler(lower, {k: wanted[k][1] for k in exact})
        read, self.offsets, took = self._read_back(lookback, handle, starts=self.offsets)
        self.fresh += fresh
        where = "from the look-back" if fresh else "since the last read"
        LOG.info("%s records of the getpage topic read back %s in %.1f s", read, where, took)

    def _read_back(
        self,
        lookback: float,
        handle: Callable[[Any], None],
        starts: dict[int, int] | None = None,
        until: dict[int, int] | None = None,
    ) -> tuple[int, dict[int, int], float]:
        """`read_from` the getpage topic (from the look-back where `starts` has no offset): records
        read, each partition's end, seconds taken."""
        since_ms, began = int((time.time() - lookback) * 1000), time.monotonic()
        read, ends = read_from(kafka_access(self.s), GETPAGE_TOPIC.name, since_ms, handle, starts, until=until)
        self.reads += read
        return read, ends, time.monotonic() - began

    def _handler(self, lower: dict[str, float], upper: dict[str, float] | None = None) -> Callable[[Any], None]:
        """What a read does with each record: notes its key's partition, and adds the getpages of
        a key in `lower` at or after its bound (and before its bound in `upper`) to the sample."""
        sample, objects, codes, seen, above = self.sample, self.objects, self.keys, self.seen, upper or {}
        for k, lo in lower.items():
            self.floors[k] = max(self.floors.get(k, -math.inf), lo)
        if self.decoder is None:
            self.decoder = AvroDecoder(registry_access(self.s))
        decoder = self.decoder

        def handle(msg: Any) -> None:
            key = (msg.key() or b"").decode(errors="replace")
            seen.setdefault(key, set()).add(msg.partition())
            if key not in lower:
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
            keep = (t >= lower[key]) & (t < above.get(key, math.inf))
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

        return handle


def _bounds(w: Window) -> tuple[float, float]:
    return (w[0].timestamp() if w[0] else -math.inf, w[1].timestamp() if w[1] else math.inf)


def _on_minute(b: float) -> bool:
    return math.isinf(b) or b % COUNT_SECONDS == 0
