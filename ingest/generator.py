"""`poolsight generate`: a DB2-like subsystem driven by a scenario.

Workload patterns produce getpages (numpy, chunk by chunk); each member's
pools are real buffer-pool models (`poolsight._kernel.PoolModel`: LRU with
VPSEQT, dynamic prefetch, deferred writes, cross-invalidation) that decide
hits, read I/Os and write I/Os; statistics intervals are the models' own
counters. So the trace, the I/O events and the statistics agree as a real
subsystem's would. Deterministic for a given seed.

A pool with an SPSIZE (scenario `spsize`) also runs DB2's simulated pool: a second model of
VPSIZE + SPSIZE buffers fed the same getpages (`SimulatedPool`), whose hits against the real
pool's misses are the interval's avoidable reads and delay (DSNB432I, IFCID 2).

With two or more members the subsystem is a data-sharing group (datasharing.py): each pool
name is one `GroupModel` (the members' pools and their group buffer pool) fed all members'
events of a chunk in time order; reads the GBP answers are no read I/O; the interval's
`gbp_stats` has a row per member and GBP and one per GBP for the group, and every getpage's
outcome is kept (`Totals.outcomes`, gbp_outcomes.csv and the trace's `outcome` column).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
import numpy.typing as npt

from poolsight._kernel import PoolModel
from poolsight.ingest import display_report, gbp_display_text, stats_report
from poolsight.ingest.batching import make_batch
from poolsight.ingest.datasharing import HIT_OF_OUTCOME, OUTCOMES, SYNC_READ_OUTCOMES, GroupPool, OutcomeCounts
from poolsight.ingest.scenario import MemorySpec, ObjectSpec, PatternSpec, PoolSpec, Scenario
from poolsight.ingest.stats_common import empty_pool_stats
from poolsight.ingest.zos.writer import ZosTraceWriter
from poolsight.schemas.getpage import ACCESS_LETTERS, FUNCTION_LETTERS, GetpageBatch
from poolsight.simulator.group import gbp_name

U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]


@dataclass
class Chunk:
    times: F64
    member: U8
    pool: U8
    obj: U32
    page: U64
    access: U8
    function: U8
    hit: U8 = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    outcome: U8 | None = None  # data sharing: each event's outcome (datasharing.OUTCOMES, 6 not a getpage)

    def head(self, k: int) -> Chunk:
        """The first k events (before the pool models ran: no hits yet)."""
        return Chunk(
            self.times[:k],
            self.member[:k],
            self.pool[:k],
            self.obj[:k],
            self.page[:k],
            self.access[:k],
            self.function[:k],
        )


def _coprime_multiplier(n: int, rng: np.random.Generator) -> int:
    while True:
        a = int(rng.integers(1, max(2, n)))
        if math.gcd(a, n) == 1:
            return a


class Workload:
    """Getpage chunks from a scenario's patterns (no pool model here)."""

    def __init__(self, sc: Scenario, rng: np.random.Generator) -> None:
        self.sc = sc
        self.rng = rng
        self.object_names = list(sc.objects)
        self.object_ids = {n: i for i, n in enumerate(self.object_names)}
        self.pool_names = list(sc.pools)
        self.object_pool = np.array(
            [self.pool_names.index(sc.objects[n].pool) for n in self.object_names], dtype=np.uint8
        )
        self.home = np.array([sc.members.index(sc.home(n)) for n in self.object_names], dtype=np.uint8)
        # Hot ranks spread over an object's pages by a fixed affine permutation.
        self.perm = {
            n: (_coprime_multiplier(o.pages, rng), int(rng.integers(0, o.pages))) for n, o in sc.objects.items()
        }

    def _skewed(self, obj: ObjectSpec, skew: float, u: F64) -> U64:
        """Page numbers with rank density ~ rank^-skew (bounded power law), hot ranks permuted."""
        ranks = np.floor(obj.pages * u ** (1.0 / (1.0 - skew))).astype(np.int64) % obj.pages
        a, b = self.perm[obj.name]
        out: U64 = ((ranks * a + b) % obj.pages).astype(np.uint64)
        return out

    def _pattern_units(self, p: PatternSpec, n_units: int) -> tuple[list[npt.NDArray[Any]], U32]:
        """Arrays (obj, page, access, function, valid) of shape (n_units, unit_len), and each
        unit's table (the object it works on)."""
        rng = self.rng
        names = list(p.objects)
        weights = np.array([p.objects[n] for n in names], dtype=float)
        table_idx = rng.choice(len(names), n_units, p=weights / weights.sum())
        objs = np.array([self.object_ids[n] for n in names], dtype=np.uint32)[table_idx]
        if p.kind == "random":
            idx = self.sc.objects[p.index] if p.index else None
            levels = idx.index_levels if idx else 0
            width = levels + 2  # index levels, data getpage, update
            obj = np.empty((n_units, width), dtype=np.uint32)
            page = np.empty((n_units, width), dtype=np.uint64)
            u = rng.random(n_units)
            for k, name in enumerate(names):
                sel = table_idx == k
                page[sel, levels] = self._skewed(self.sc.objects[name], p.skew, u[sel])
            obj[:, levels] = objs
            if idx is not None:
                iid = self.object_ids[idx.name]
                obj[:, :levels] = iid
                page[:, 0] = 0  # root
                nonleaf = max(1, idx.pages // 200)
                for lv in range(1, levels - 1):  # hot non-leaf pages
                    page[:, lv] = 1 + (rng.random(n_units) ** 2 * nonleaf).astype(np.uint64) % nonleaf
                page[:, levels - 1] = self._skewed(idx, p.skew, u)  # the leaf of the same key
            obj[:, levels + 1] = objs
            page[:, levels + 1] = page[:, levels]
            access = np.zeros((n_units, width), dtype=np.uint8)
            function = np.zeros((n_units, width), dtype=np.uint8)
            function[:, levels + 1] = 1
            valid = np.ones((n_units, width), dtype=bool)
            valid[:, levels + 1] = rng.random(n_units) < p.update_ratio
            return [obj, page, access, function, valid], objs
        width = p.run_pages if p.kind == "sequential" else p.list_pages
        pages_of = np.array([self.sc.objects[n].pages for n in names], dtype=np.int64)[table_idx]
        if p.kind == "sequential":
            start = (rng.random(n_units) * np.maximum(pages_of - width, 1)).astype(np.int64)
            page = (start[:, None] + np.arange(width)[None, :]) % pages_of[:, None]
            access_code = 1
        else:
            page = np.sort((rng.random((n_units, width)) * pages_of[:, None]).astype(np.int64), axis=1)
            access_code = 2
        obj = np.repeat(objs[:, None], width, axis=1)
        return [
            obj,
            page.astype(np.uint64),
            np.full((n_units, width), access_code, dtype=np.uint8),
            np.zeros((n_units, width), dtype=np.uint8),
            np.ones((n_units, width), dtype=bool),
        ], objs

    def chunk(self, n: int) -> Chunk:
        """About n getpages (plus their updates), units of all patterns interleaved."""
        parts = []
        tables = []
        for p in self.sc.patterns:
            getpages_per_unit = self._unit_getpages(p)
            n_units = max(1, round(n * p.share / getpages_per_unit))
            arrays, unit_tables = self._pattern_units(p, n_units)
            parts.append(arrays)
            tables.append(unit_tables)
        # Interleave whole units of all patterns in random order.
        lens = np.concatenate([np.full(a[0].shape[0], a[0].shape[1]) for a in parts])
        flat = [np.concatenate([a[k].reshape(-1) for a in parts]) for k in range(5)]
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        order = self.rng.permutation(len(lens))
        olens, ostarts = lens[order], starts[order]
        gather = np.repeat(ostarts - np.concatenate(([0], np.cumsum(olens)[:-1])), olens) + np.arange(olens.sum())
        obj, page, access, function, valid = (f[gather] for f in flat)
        keep = valid.astype(bool)
        members = self.rng.integers(0, len(self.sc.members), len(lens)).astype(np.uint8)
        if self.sc.member_affinity > 0:  # that share of units to their table's home member
            home = self.home[np.concatenate(tables)]
            members = np.where(self.rng.random(len(lens)) < self.sc.member_affinity, home, members)
        members = members[order]
        member = np.repeat(members, olens)[keep]
        obj = obj[keep].astype(np.uint32)
        return Chunk(
            times=np.zeros(len(obj)),
            member=member,
            pool=self.object_pool[obj],
            obj=obj,
            page=page[keep].astype(np.uint64),
            access=access[keep].astype(np.uint8),
            function=function[keep].astype(np.uint8),
        )

    def _unit_getpages(self, p: PatternSpec) -> int:
        if p.kind == "random":
            return (self.sc.objects[p.index].index_levels if p.index else 0) + 1
        return p.run_pages if p.kind == "sequential" else p.list_pages


@dataclass(frozen=True)
class Alter:
    """A change during a run, at SECONDS of event time from the start: -ALTER BUFFERPOOL
    (POOL:VPSIZE=buffers or POOL:VPSEQT=%) on every member, or a data-sharing group's GBP resized
    (GBPn:SIZE=MB, the CF structure's size) or rebuilt with another RATIO (GBPn:RATIO=r, the
    same size)."""

    pool: str  # the pool, or the GBP for SIZE and RATIO
    setting: str  # VPSIZE, VPSEQT, SIZE or RATIO
    value: float
    at_seconds: float

    @property
    def of_gbp(self) -> bool:
        return self.setting in ("SIZE", "RATIO")

    @classmethod
    def parse(cls, spec: str) -> Alter:
        try:
            pool, rest = spec.split(":", 1)
            setting, rest = rest.split("=", 1)
            value, at = rest.split("@", 1)
            out = cls(pool.strip(), setting.strip().upper(), float(value), float(at))
        except ValueError:
            raise ValueError(
                f"--alter {spec!r}: expected POOL:SETTING=VALUE@SECONDS, e.g. BP1:VPSIZE=60000@600 or GBP1:SIZE=512@600"
            ) from None
        if out.setting not in ("VPSIZE", "VPSEQT", "SIZE", "RATIO"):
            raise ValueError(f"--alter {spec!r}: SETTING is VPSIZE or VPSEQT (a pool), SIZE or RATIO (a GBP)")
        if out.of_gbp != out.pool.startswith("GBP"):
            raise ValueError(f"--alter {spec!r}: SIZE and RATIO are a GBP's (GBPn), VPSIZE and VPSEQT a pool's (BPn)")
        if out.setting == "VPSIZE" and (out.value < 1 or out.value != int(out.value)):
            raise ValueError(f"--alter {spec!r}: VPSIZE is a whole number of buffers")
        if out.setting == "VPSEQT" and not 0 <= out.value <= 100:
            raise ValueError(f"--alter {spec!r}: VPSEQT is a percentage, 0 to 100")
        if out.setting == "SIZE" and not out.value > 0:
            raise ValueError(f"--alter {spec!r}: SIZE is the structure's size in MB, > 0")
        if out.setting == "RATIO" and not out.value >= 1:
            raise ValueError(f"--alter {spec!r}: RATIO is directory entries per data entry, >= 1")
        if out.at_seconds < 0:
            raise ValueError(f"--alter {spec!r}: SECONDS must be >= 0")
        return out


class Sink(Protocol):
    def start(self, attributes: list[dict[str, Any]], catalog: list[dict[str, Any]]) -> None: ...
    def attributes(self, attributes: list[dict[str, Any]]) -> None:
        """Pool attribute records after an -ALTER BUFFERPOOL."""

    def getpages(self, source: str, pool: str, c: Chunk, sel: npt.NDArray[np.bool_], names: list[str]) -> None: ...
    def io(self, source: str, pool: str, reads: tuple[Any, ...], writes: tuple[Any, ...], names: list[str]) -> None:
        """reads: parallel lists (time s, object code, first page, pages, type 0 sync/1 seq/2 list/3 dynamic,
        elapsed us); writes: (time s, object code, pages, type 0 sync/1 async, elapsed us)."""

    def stats(self, schema: str, record: dict[str, Any]) -> None: ...
    def outcomes(self, rows: list[OutcomeCounts]) -> None:
        """Data sharing: the interval's getpages by outcome, the ground truth (no product record)."""

    def progress(self, source: str, pool: str, before: float) -> None:
        """Every getpage of (source, pool) before `before` (epoch s) has been given to the sink."""

    def close(self) -> None: ...


def simulated_vpseqt(spec: PoolSpec) -> float:
    """The sequential threshold of the pool of VPSIZE + SPSIZE buffers DB2 simulates: VPSEQT % of
    the real buffers and SPSEQT % of the simulated ones (SPSEQT defaults to VPSEQT)."""
    spseqt = spec.vpseqt if spec.spseqt is None else spec.spseqt
    return (spec.vpseqt * spec.vpsize + spseqt * spec.spsize) / (spec.vpsize + spec.spsize)


class SimulatedPool:
    """DB2's simulated pool of one member's pool: a PoolModel of VPSIZE + SPSIZE buffers that sees
    every getpage the real pool sees. A read the real pool made for a getpage this bigger pool
    found is avoidable: a random getpage's sync read (SYNC READ I/O (R)), a sequential or
    RID-list getpage's prefetch read (ASYNC READ I/O); in one system the real pool's model reads
    sequential getpages only by prefetch, so SYNC READ I/O (S) stays 0 (in a data-sharing group a
    sequential getpage of a GBP-dependent object may read synchronously). The avoidable sync reads'
    elapsed times add up to the avoidable delay."""

    def __init__(self, spec: PoolSpec) -> None:
        self.spec = spec
        self.model = PoolModel(
            spec.vpsize + spec.spsize, simulated_vpseqt(spec), spec.prefetch_quantity, spec.dwqt, spec.vdwqt
        )
        self.sync_random = 0
        self.sync_sequential = 0
        self.async_reads = 0
        self.delay_us = 0

    def alter(self, t: float, spec: PoolSpec) -> None:
        self.spec = spec
        self.model.alter(t, spec.vpsize + spec.spsize, simulated_vpseqt(spec))

    def feed(
        self,
        c: Chunk,
        sel: npt.NDArray[np.bool_],
        reads: tuple[Any, ...],
        synchronous: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        """The chunk's events of this pool (`sel`, after the real pool decided c.hit, and in a
        data-sharing group c.outcome) and the real pool's reads of them (kind 0 = sync, in event
        order, with their elapsed times). `synchronous`: in a group, the events (of `sel`) whose
        getpages the real pool reads one by one, prefetch or not (GBP-dependent pages, by default):
        the bigger pool reads them so too."""
        access, function = c.access[sel], c.function[sel]
        fed = access if synchronous is None else np.where(synchronous, np.uint8(0), access)
        found = np.frombuffer(
            self.model.feed(c.times[sel], c.obj[sel], c.page[sel], fed, function), dtype=np.uint8
        ).astype(bool)
        self.model.take_reads()  # the simulated pool's own I/O is no one's: only its hits count
        self.model.take_writes()
        if c.outcome is None:  # one system: a random miss is a sync read, any other miss a prefetch
            missed = (function == 0) & (c.hit[sel] == 0)
            sync = missed & (access == 0)
        else:  # a group: reads from disk only (a sequential getpage's may be a sync read); an XI
            # read is no size's to avoid (the bigger pool sees no cross-invalidation)
            out = c.outcome[sel]
            sync = np.isin(out, SYNC_READ_OUTCOMES)
            missed = (out == OUTCOMES.index("nf_disk")) | (out == OUTCOMES.index("prefetch"))
        avoidable = missed & found
        self.sync_random += int((avoidable & sync & (access != 1)).sum())
        self.sync_sequential += int((avoidable & sync & (access == 1)).sum())
        self.async_reads += int((avoidable & ~sync).sum())
        # One sync read I/O per sync miss, in event order (bpmodel.rs): the avoidable ones' times.
        k = reads[4]  # Vec<u8> crosses as bytes
        kinds = np.frombuffer(k, dtype=np.uint8) if isinstance(k, bytes | bytearray) else np.asarray(k, np.uint8)
        elapsed = np.asarray(reads[5], dtype=np.int64)
        sync_elapsed = elapsed[kinds == 0]
        of_sync = avoidable[sync]
        if len(sync_elapsed) != len(of_sync):
            raise RuntimeError(f"{len(sync_elapsed)} sync reads for {len(of_sync)} sync misses")
        self.delay_us += int(sync_elapsed[of_sync].sum())

    def take(self) -> dict[str, Any]:
        """The interval's DSNB432I figures (pool_stats fields), counted afresh from now."""
        out = {
            "sim_sync_reads_avoidable_random": self.sync_random,
            "sim_sync_reads_avoidable_sequential": self.sync_sequential,
            "sim_async_pages_avoidable": self.async_reads,
            "sim_sync_io_delay_avoidable_ms": self.delay_us / 1e3,
        }
        self.sync_random = self.sync_sequential = self.async_reads = self.delay_us = 0
        return out


@dataclass
class Totals:
    getpages: int = 0
    events: int = 0
    reads: int = 0
    writes: int = 0
    intervals: int = 0
    seconds: float = 0.0
    # Data sharing: getpages by outcome per member, pool and interval (the ground truth).
    outcomes: list[OutcomeCounts] = field(default_factory=list)


class Generator:
    def __init__(
        self,
        sc: Scenario,
        *,
        seed: int = 1,
        event_rate: float = 100_000.0,
        start_time: float = 1_767_225_600.0,
        alters: list[Alter] | None = None,
    ) -> None:
        gbps = [gbp_name(p) for p in sc.pools] if len(sc.members) > 1 else []
        for al in alters or []:
            if al.of_gbp and al.pool not in gbps:
                has = f"its GBPs are {', '.join(gbps)}" if gbps else "it is no data-sharing group"
                raise ValueError(f"--alter: scenario {sc.name} has no group buffer pool {al.pool} ({has})")
            if not al.of_gbp and al.pool not in sc.pools:
                raise ValueError(f"--alter: scenario {sc.name} has no pool {al.pool} (it has {', '.join(sc.pools)})")
        self.alters = sorted(alters or [], key=lambda x: x.at_seconds)
        self.start_time = start_time
        self.sc = sc
        self.rng = np.random.default_rng(seed)
        self.io_rng = np.random.default_rng([seed, 1])  # its own stream: I/O times leave the workload as it was
        self.workload = Workload(sc, self.rng)
        self.event_rate = event_rate
        self.t = start_time
        names = self.workload.object_names
        # One system: each member's pools on their own. A data-sharing group: per pool name the
        # members' pools and their GBP in one model.
        self.groups: list[GroupPool] | None = None
        self.models: list[list[PoolModel]] = []
        if len(sc.members) > 1:
            dependent = [i for i, n in enumerate(names) if sc.objects[n].gbp_dependent]
            self.groups = [GroupPool(sc, p, dependent) for p in sc.pools.values()]
        else:
            self.models = [
                [PoolModel(p.vpsize, p.vpseqt, p.prefetch_quantity, p.dwqt, p.vdwqt) for p in sc.pools.values()]
                for _ in sc.members
            ]
        self.simulated = [[SimulatedPool(p) if p.spsize else None for p in sc.pools.values()] for _ in sc.members]
        self.totals = Totals()

    def _alter(self, al: Alter, sink: Sink) -> None:
        """Apply an -ALTER BUFFERPOOL now, on every member, and publish the pool's new attributes;
        or resize or rebuild a GBP (its new structure shows in the interval's gbp_stats)."""
        if al.of_gbp:
            assert self.groups is not None
            pi = [gbp_name(p) for p in self.sc.pools].index(al.pool)
            self.groups[pi].alter(al.setting, al.value)
            sink.attributes(self.attributes(list(self.sc.pools)[pi]))  # the members' GBP, as displayed
            return
        spec = self.sc.pools[al.pool]
        spec = replace(spec, **{"vpsize": int(al.value)} if al.setting == "VPSIZE" else {"vpseqt": al.value})
        self.sc = replace(self.sc, pools={**self.sc.pools, al.pool: spec})
        pi = list(self.sc.pools).index(al.pool)
        for models in self.models:
            models[pi].alter(self.t, spec.vpsize, spec.vpseqt)
        if self.groups is not None:
            for mi in range(len(self.sc.members)):
                self.groups[pi].model.alter_member(mi, self.t, spec.vpsize, spec.vpseqt)
        for simulated in self.simulated:
            if (sp := simulated[pi]) is not None:
                sp.alter(self.t, spec)
        sink.attributes(self.attributes(al.pool))

    def attributes(self, only: str | None = None) -> list[dict[str, Any]]:
        out = []
        for m in self.sc.members:
            for p in self.sc.pools.values():
                if only is not None and p.name != only:
                    continue
                out.append(
                    {
                        "source": m,
                        "pool": p.name,
                        "event_time": int(self.t * 1e6),
                        "vpsize": p.vpsize,
                        "page_size": p.page_size,
                        "vpseqt": p.vpseqt,
                        "vpxseqt": None,
                        "dwqt": p.dwqt,
                        "vdwqt": p.vdwqt,
                        "vdwqt_buffers": None,
                        "pgsteal": p.pgsteal,
                        "pgfix": p.pgfix,
                        "frame_size": None,
                        "spsize": p.spsize or None,
                        "spseqt": (p.vpseqt if p.spseqt is None else p.spseqt) if p.spsize else None,
                        **self._gbp_attributes(p.name),
                    }
                )
        return out

    def _gbp_attributes(self, pool: str) -> dict[str, Any]:
        """A data-sharing member's pool: its group and its GBP's structure now (-DISPLAY
        GROUPBUFFERPOOL), which the simulation's group operator starts its grid from."""
        if self.groups is None:
            return {"group_name": None, "gbp_data_entries": None, "gbp_ratio": None, "gbp_gbpoolt": None}
        g = self.groups[list(self.sc.pools).index(pool)]
        return {
            "group_name": g.group,
            "gbp_data_entries": g.data_entries,
            "gbp_ratio": float(g.ratio),
            "gbp_gbpoolt": float(g.spec.gbpoolt),
        }

    def catalog(self) -> list[dict[str, Any]]:
        out = []
        for m in self.sc.members:
            for o in self.sc.objects.values():
                db, _, space = o.name.partition(".")
                out.append(
                    {
                        "source": m,
                        "object": o.name,
                        "event_time": int(self.t * 1e6),
                        "dbid": None,
                        "obid": None,
                        "database": db,
                        "space": space or None,
                        "type": o.type,
                        "pool": o.pool,
                        "partitions": o.partitions,
                        "gbp_dependent": o.gbp_dependent,
                        "pages": o.pages,
                        "index_levels": o.index_levels or None,
                    }
                )
        return out

    def _run_chunk(self, c: Chunk, sink: Sink) -> None:
        c.times = self.t + np.arange(len(c.obj)) / self.event_rate
        self.t += len(c.obj) / self.event_rate
        c.hit = np.zeros(len(c.obj), dtype=np.uint8)
        if self.groups is not None:
            self._run_group_chunk(c, sink)
        else:
            for mi in range(len(self.sc.members)):
                for pi in range(len(self.workload.pool_names)):
                    sel = (c.member == mi) & (c.pool == pi)
                    if not sel.any():
                        continue
                    model = self.models[mi][pi]
                    hits = model.feed(c.times[sel], c.obj[sel], c.page[sel], c.access[sel], c.function[sel])
                    c.hit[sel] = np.frombuffer(hits, dtype=np.uint8)
                    self._emit(c, sel, mi, pi, model.take_reads(), model.take_writes(), sink)
        self.totals.events += len(c.obj)
        self.totals.getpages += int((c.function == 0).sum())

    def _run_group_chunk(self, c: Chunk, sink: Sink) -> None:
        """Each pool's events of all members through its group model, in the chunk's time order
        (c.times rise across members); then each member's share goes out as in one system."""
        assert self.groups is not None
        c.outcome = np.full(len(c.obj), 6, dtype=np.uint8)
        for pi, group in enumerate(self.groups):
            sel = c.pool == pi
            if not sel.any():
                continue
            out = group.feed(c.times[sel], c.member[sel], c.obj[sel], c.page[sel], c.access[sel], c.function[sel])
            c.outcome[sel] = out
            c.hit[sel] = HIT_OF_OUTCOME[out]
            for mi in range(len(self.sc.members)):
                msel = sel & (c.member == mi)
                if msel.any():
                    self._emit(c, msel, mi, pi, group.model.take_reads(mi), group.model.take_writes(mi), sink)

    def _emit(
        self,
        c: Chunk,
        sel: npt.NDArray[np.bool_],
        mi: int,
        pi: int,
        r: tuple[Any, ...],
        w: tuple[Any, ...],
        sink: Sink,
    ) -> None:
        """One member's events of one pool and the read and write I/Os its pool made for them."""
        names = self.workload.object_names
        member, pool = self.sc.members[mi], self.workload.pool_names[pi]
        sink.getpages(member, pool, c, sel, names)
        spec = self.sc.pools[pool]
        reads = (*r, self._elapsed(r[3], spec.sync_read_us, spec))
        writes = (*w, self._elapsed(w[2], spec.write_us, spec))
        if (sp := self.simulated[mi][pi]) is not None:
            sp.feed(c, sel, reads, None if self.groups is None else self.groups[pi].synchronous(c.obj[sel]))
        self.totals.reads += len(reads[0])
        self.totals.writes += len(writes[0])
        sink.io(member, pool, reads, writes, names)

    def _elapsed(self, pages: list[int], median_us: float, spec: PoolSpec) -> list[int]:
        """Elapsed microseconds of each I/O: the device's median, varied, plus a transfer per further page."""
        if not pages:
            return []
        varied = median_us * self.io_rng.lognormal(0.0, spec.io_sigma, len(pages))
        out: list[int] = np.round(varied + (np.asarray(pages) - 1) * spec.page_transfer_us).astype(np.int64).tolist()
        return out

    def _progress(self, sink: Sink) -> None:
        """Every pool's getpages before now are out: a consumer may close panes ended by now
        (a quiet pool's too) without waiting on the wall clock."""
        for member in self.sc.members:
            for pool in self.workload.pool_names:
                sink.progress(member, pool, self.t)

    def _close_interval(self, start: float, sink: Sink) -> None:
        end = self.t
        for mi, member in enumerate(self.sc.members):
            for pi, pool in enumerate(self.workload.pool_names):
                if self.groups is not None:
                    k = self.groups[pi].model.take_counters(mi)
                else:
                    k = self.models[mi][pi].take_counters()
                rec: dict[str, Any] = empty_pool_stats()
                rec.update(
                    {
                        "source": member,
                        "pool": pool,
                        "interval_start": int(start * 1e6),
                        "interval_end": int(end * 1e6),
                        "interval_seconds": end - start,
                        "origin": "generator",
                        # RID-list getpages are random getpages in DB2's statistics.
                        "getpages_random": k["getpages_random"] + k["getpages_rid"],
                        "getpages_sequential": k["getpages_sequential"],
                        "buffers_allocated": self.sc.pools[pool].vpsize,
                        "seq_prefetch_requests": 0,
                        "seq_prefetch_reads": 0,
                        "seq_prefetch_pages": 0,
                        "dm_threshold_reached": 0,
                    }
                )
                for key in (
                    "sync_reads_random",
                    "sync_reads_sequential",
                    "dyn_prefetch_requests",
                    "dyn_prefetch_reads",
                    "dyn_prefetch_pages",
                    "list_prefetch_requests",
                    "list_prefetch_reads",
                    "list_prefetch_pages",
                    "buffer_updates",
                    "pages_written",
                    "sync_writes",
                    "async_writes",
                    "dwqt_reached",
                    "vdwqt_reached",
                ):
                    rec[key] = k[key]
                if (sp := self.simulated[mi][pi]) is not None:
                    rec.update(sp.take())
                if self.sc.memory is not None:
                    rec.update(_pageins(self.sc.memory, self.sc.pools[pool], k))
                sink.stats("pool_stats", rec)
        for group in self.groups or []:
            for g in group.stats(start, end):
                sink.stats("gbp_stats", g)
            rows = group.take_outcomes(end)
            self.totals.outcomes.extend(rows)
            sink.outcomes(rows)
        if self.sc.memory is not None:
            for member in self.sc.members:
                sink.stats("system_memory", self._memory(member, start, end))
        self.totals.intervals += 1

    def _memory(self, member: str, start: float, end: float) -> dict[str, Any]:
        m = self.sc.memory
        assert m is not None
        return {
            "source": member,
            "interval_start": int(start * 1e6),
            "interval_end": int(end * 1e6),
            "real_storage_mb": m.real_storage_mb,
            "real_storage_available_mb": m.real_storage_available_mb,
            "db2_real_storage_mb": m.db2_real_storage_mb,
            "pageins_per_second": m.pageins_per_second,
            "aux_slots_used": None,
        }

    def run(
        self,
        sink: Sink,
        *,
        getpages: int | None = None,
        duration: float | None = None,
        rate: float | None = None,
        chunk: int = 65_536,
        wall_limit: float = math.inf,
    ) -> Totals:
        """Generate until `getpages` getpages or `duration` seconds of event time (or `wall_limit`
        seconds of wall time); with `rate` (getpages/s) paced on the wall clock, else as fast
        as possible."""
        if getpages is None and duration is None:
            raise ValueError("give getpages or duration")
        limit_t = self.t + duration if duration is not None else math.inf
        sink.start(self.attributes(), self.catalog())
        alters = [a for a in self.alters if self.start_time + a.at_seconds > self.t]
        interval_start = self.t
        interval_len = self.sc.interval_seconds
        wall0 = started = time.monotonic()
        while (
            (getpages is None or self.totals.getpages < getpages)
            and self.t < limit_t
            and time.monotonic() - started < wall_limit
        ):
            # Events until the interval (or the duration) ends; a chunk's updates are events too.
            room = max(1, round((interval_start + interval_len - self.t) * self.event_rate))
            if duration is not None:
                room = min(room, max(1, round((limit_t - self.t) * self.event_rate)))
            per_getpage = self.totals.events / self.totals.getpages if self.totals.getpages else 1.0
            n = min(chunk, int(room / per_getpage))
            if getpages is not None:
                n = min(n, getpages - self.totals.getpages)
            if alters:  # a chunk ends where the next -ALTER is due
                n = min(n, max(1, int((self.start_time + alters[0].at_seconds - self.t) * self.event_rate)))
            c = self.workload.chunk(max(1, n))
            if len(c.obj) > room:  # a chunk ends where its interval does: statistics intervals are exact
                c = c.head(room)
            self._run_chunk(c, sink)
            if rate:
                due = wall0 + (self.totals.getpages / rate)
                if (delay := due - time.monotonic()) > 0:
                    time.sleep(delay)
            if self.t >= interval_start + interval_len - 1e-9:  # the interval ran at the old setting
                self._close_interval(interval_start, sink)
                self._progress(sink)
                interval_start = self.t
            while alters and self.t >= self.start_time + alters[0].at_seconds - 1e-9:
                self._alter(alters.pop(0), sink)
        if self.t > interval_start:
            self._close_interval(interval_start, sink)
        self._progress(sink)
        sink.close()
        self.totals.seconds = time.monotonic() - started
        return self.totals


def _pageins(memory: MemorySpec, spec: PoolSpec, k: dict[str, int]) -> dict[str, int]:
    """PAGE-INS REQUIRED FOR READ/WRITE of an interval: the paged-out share of the pool's buffers
    (none for a page-fixed pool, whose frames the OS cannot take) of the pages read into buffers
    (sync reads and prefetched pages) and of the pages written."""
    share = 0.0 if spec.pgfix else memory.paged_out_pct / 100.0
    read = k["sync_reads_random"] + k["sync_reads_sequential"] + k["dyn_prefetch_pages"] + k["list_prefetch_pages"]
    return {"pageins_read": round(share * read), "pageins_write": round(share * k["pages_written"])}


def _split(n: int, size: int) -> Iterator[tuple[int, int]]:
    for i in range(0, n, size):
        yield i, min(n, i + size)


class KafkaSink:
    """Everything to Kafka: attributes and catalog, getpage and I/O batches, statistics."""

    def __init__(self, producer: Any, batch_getpages: int = 4096) -> None:
        self.producer = producer
        self.batch = batch_getpages
        self.seq: dict[str, int] = {}

    def _next(self, key: str) -> int:
        s = self.seq.get(key, 0)
        self.seq[key] = s + 1
        return s

    def start(self, attributes: list[dict[str, Any]], catalog: list[dict[str, Any]]) -> None:
        self.attributes(attributes)
        for o in catalog:
            self.producer.send("object_catalog", f"{o['source']}|{o['pool']}|{o['object']}", o)

    def attributes(self, attributes: list[dict[str, Any]]) -> None:
        for a in attributes:
            self.producer.send("pool_attributes", f"{a['source']}|{a['pool']}", a)

    def getpages(self, source: str, pool: str, c: Chunk, sel: npt.NDArray[np.bool_], names: list[str]) -> None:
        idx = np.nonzero(sel)[0]
        key = f"gp|{source}|{pool}"
        self.producer.send_batches(
            [
                make_batch(
                    source,
                    pool,
                    self._next(key),
                    c.times[i],
                    c.obj[i],
                    c.page[i],
                    c.access[i],
                    c.function[i],
                    hit=c.hit[i],
                    names=names,
                )
                for i in (idx[a:b] for a, b in _split(len(idx), self.batch))
            ]
        )

    def io(self, source: str, pool: str, reads: tuple[Any, ...], writes: tuple[Any, ...], names: list[str]) -> None:
        key = f"{source}|{pool}"
        for kind, data in (("read_io_batch", reads), ("write_io_batch", writes)):
            if not data[0]:
                continue
            t_us = np.round(np.array(data[0]) * 1e6).astype(np.int64)
            start = int(t_us.min())
            objs = np.array(data[1], dtype=np.uint32)
            uniq, inv = np.unique(objs, return_inverse=True)
            rec: dict[str, Any] = {
                "source": source,
                "pool": pool,
                "sequence": self._next(f"{kind}|{key}"),
                "start_time": start,
                "object_names": [names[int(u)] for u in uniq],
                "time_offset": (t_us - start).tolist(),
                "object": inv.reshape(-1).tolist(),
            }
            if kind == "read_io_batch":
                rec.update(first_page=data[2], pages=data[3], io_type=data[4], elapsed=data[5])
            else:
                rec.update(pages=data[2], io_type=data[3], elapsed=data[4])
            self.producer.send(kind, key, rec)

    def stats(self, schema: str, record: dict[str, Any]) -> None:
        # Keyed by source and pool (or GBP); host-wide records by source alone.
        key = (
            record["source"]
            if schema == "system_memory"
            else f"{record['source']}|{record.get('pool', record.get('gbp'))}"
        )
        self.producer.send(schema, key, record)

    def outcomes(self, rows: list[OutcomeCounts]) -> None:
        pass  # the generator's ground truth; the product's topics have no place for it

    def progress(self, source: str, pool: str, before: float) -> None:
        key = f"gp|{source}|{pool}"
        if key in self.seq:  # a pool that sent nothing has no pane to close
            self.producer.send_batches([GetpageBatch.mark(source, pool, self._next(key), round(before * 1e6))])

    def close(self) -> None:
        self.producer.flush()


class FileSink:
    """The trace (project CSV format, with source and observed hit; a data-sharing group's with each
    event's `outcome` too, a column the trace readers pass over), JSON lines of the rest, and the
    pool statistics again as a DB2 statistics report (statistics-report.txt, `ingest stats --format
    omegamon`) and as -DISPLAY BUFFERPOOL DETAIL output per pool and interval, with DSNB431I/432I
    for a pool with SPSIZE (display-bufferpool.txt, `ingest stats --format display`). A group's
    getpages by outcome per member, pool and interval go to gbp_outcomes.csv."""

    TRACE_HEADER = "time,source,pool,object,page,access,function,hit"

    def __init__(self, directory: Path, trace_formats: tuple[str, ...] = ("csv",)) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.trace: TextIO | None = None
        self._header_due = False  # the trace's header waits for the first events: with outcome or not
        if "csv" in trace_formats:
            self.trace = (directory / "trace.csv").open("w")
            self._header_due = True
        self.outcome_rows: TextIO | None = None
        # The same trace as a shop's DB2 writes it (IFCID 198 getpages, 006/007 read I/Os).
        self.zos = {f: ZosTraceWriter(directory / f"trace.{f}", f) for f in trace_formats if f in ("smf", "gtf")}
        self.jsonl = {
            name: (directory / f"{name}.jsonl").open("w")
            for name in ("attributes", "catalog", "pool_stats", "gbp_stats", "io", "system_memory")
        }
        self.report = (directory / "statistics-report.txt").open("w")
        self.display = (directory / "display-bufferpool.txt").open("w")
        # A data-sharing group's -DISPLAY GROUPBUFFERPOOL GDETAIL/MDETAIL(INTERVAL) per GBP and
        # interval (`ingest stats --format gbp-display`).
        self.gbp_display: TextIO | None = None
        self._attrs: dict[tuple[str, str], dict[str, Any]] = {}  # the latest attributes per (source, pool)
        self._page: list[dict[str, Any]] = []  # one member's pools of one interval
        self._pages = 0

    def start(self, attributes: list[dict[str, Any]], catalog: list[dict[str, Any]]) -> None:
        self.attributes(attributes)
        for o in catalog:
            self.jsonl["catalog"].write(json.dumps(o) + "\n")

    def attributes(self, attributes: list[dict[str, Any]]) -> None:
        for a in attributes:
            self.jsonl["attributes"].write(json.dumps(a) + "\n")
            self._attrs[(a["source"], a["pool"])] = a

    def getpages(self, source: str, pool: str, c: Chunk, sel: npt.NDArray[np.bool_], names: list[str]) -> None:
        i = np.nonzero(sel)[0]
        t_us = np.round(c.times[i] * 1e6).astype(np.int64)
        for w in self.zos.values():
            w.getpages(source, pool, t_us, names, c.obj[i], c.page[i], c.access[i], c.function[i], c.hit[i])
        if self.trace is None:
            return
        if self._header_due:
            self.trace.write(self.TRACE_HEADER + (",outcome\n" if c.outcome is not None else "\n"))
            self._header_due = False
        acc = np.array(ACCESS_LETTERS)
        fun = np.array(FUNCTION_LETTERS)
        yn = np.array(["N", "Y"])
        nm = np.array(names)
        i = np.nonzero(sel)[0]
        cols = [
            np.char.mod("%.6f", c.times[i]),
            np.full(len(i), source),
            np.full(len(i), pool),
            nm[c.obj[i]],
            c.page[i].astype(str),
            acc[c.access[i]],
            fun[c.function[i]],
            yn[c.hit[i]],
        ]
        if c.outcome is not None:
            cols.append(c.outcome[i].astype(str))
        lines = np.char.add(cols[0], ",")
        for col in cols[1:-1]:
            lines = np.char.add(np.char.add(lines, col), ",")
        lines = np.char.add(lines, cols[-1])
        self.trace.write("\n".join(lines.tolist()) + "\n")

    def io(self, source: str, pool: str, reads: tuple[Any, ...], writes: tuple[Any, ...], names: list[str]) -> None:
        for w in self.zos.values():
            w.read_ios(source, pool, names, *reads)
        out = self.jsonl["io"]
        for t, o, first, pages, kind, us in zip(*reads, strict=True):
            out.write(
                json.dumps(
                    {
                        "source": source,
                        "pool": pool,
                        "kind": "read",
                        "time": t,
                        "object": names[o],
                        "first_page": first,
                        "pages": pages,
                        "io_type": kind,
                        "elapsed_us": us,
                    }
                )
                + "\n"
            )
        for t, o, pages, kind, us in zip(*writes, strict=True):
            out.write(
                json.dumps(
                    {
                        "source": source,
                        "pool": pool,
                        "kind": "write",
                        "time": t,
                        "object": names[o],
                        "pages": pages,
                        "io_type": kind,
                        "elapsed_us": us,
                    }
                )
                + "\n"
            )

    def stats(self, schema: str, record: dict[str, Any]) -> None:
        self.jsonl[schema].write(json.dumps(record) + "\n")
        if schema == "gbp_stats":  # the group's statistics as DB2 prints them
            if self.gbp_display is None:
                self.gbp_display = (self.dir / "display-groupbufferpool.txt").open("w")
            self.gbp_display.write(gbp_display_text.display(record))
        if schema == "pool_stats":
            self.display.write(display_report.display(record, self._attrs.get((record["source"], record["pool"]))))
            if self._page and (self._page[0]["source"], self._page[0]["interval_start"]) != (
                record["source"],
                record["interval_start"],
            ):
                self._write_page()
            self._page.append(record)

    def progress(self, source: str, pool: str, before: float) -> None:
        pass  # a trace file's reader knows where it ends; the CSV has no row for it

    def outcomes(self, rows: list[OutcomeCounts]) -> None:
        if self.outcome_rows is None:
            self.outcome_rows = (self.dir / "gbp_outcomes.csv").open("w")
            self.outcome_rows.write(",".join(("member", "pool", "interval_end", "gbp_dependent", *OUTCOMES)) + "\n")
        for r in rows:
            counts = (r.lbp_hit, r.xi_gbp, r.xi_disk, r.nf_gbp, r.nf_disk, r.prefetch)
            fields = (r.member, r.pool, r.interval_end, "Y" if r.gbp_dependent else "N", *counts)
            self.outcome_rows.write(",".join(map(str, fields)) + "\n")

    def _write_page(self) -> None:
        self._pages += 1
        self.report.write(stats_report.page(self._page, self._pages))
        self._page = []

    def close(self) -> None:
        if self._page:
            self._write_page()
        self.report.close()
        self.display.close()
        if self.gbp_display is not None:
            self.gbp_display.close()
        if self.trace is not None:
            if self._header_due:
                self.trace.write(self.TRACE_HEADER + "\n")
            self.trace.close()
        if self.outcome_rows is not None:
            self.outcome_rows.close()
        for w in self.zos.values():
            w.close(self.dir / "catalog.csv")
        for fh in self.jsonl.values():
            fh.close()
