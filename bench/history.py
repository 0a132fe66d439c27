"""`make bench-history`: the dashboard's and the views' typical queries over a long synthetic history.

Starts its own PostgreSQL + Trino (`poolsight up trino` with its folders under var/bench-history/
and ports 25433 / 28080, Trino's add_files procedure enabled), never the user's stack. Loads a
synthetic history straight into Iceberg, not through the pipeline: columns made with numpy,
written as Parquet into a staging folder, registered in an unpartitioned copy of the table
(`CREATE TABLE stage (LIKE target)`, `EXECUTE add_files`: the procedure does not take
partitioned tables), then `INSERT INTO target SELECT ... FROM stage`. By default: 90 days of
1-minute panes for 50 pools and 2,000 objects (pool_pane, object_pane with each object in a
pane with probability 0.1, io_pane with the sync reads of each object pane, pool_stats every
5 minutes, sim_curve at 8 sizes over the last 2 days), rolled up by the product's own
run_rollups (timed), and 13 months of hourly and daily rollups before the panes (pool, object,
stats, curve) loaded the same way. Then the manifests the loads' commits added (and an earlier
--reuse run's) rewritten by the product's `tidy_manifests`, as the maintenance service does every
15 minutes (timed, reported). Then the dashboard's pool page over 24 h, 7 d, 90 d and 1 y (and
over 24 h after a commit no refresh of the page tables followed: `pool_24h_behind`),
its objects page over a day and `compare` of two consecutive weeks, after --trino-warmup loads of
the seven pages in turn (300 by default; their own p50 / p95 printed), each --runs times (after
--warmup runs that are not counted, one by default), a different pool each run, each load after
a commit its answer must show it read (Committer) and, after a pane, the page tables refreshed as
the maintenance service does (sql/pages.py; not timed in the load, reported); p50 / p95 per query with Trino's CPU per
load and its JIT's share, the data on disk; the last line is JSON (query_p95_s: the worst
query's p95, rows: rows loaded, commits_read: the loads checked).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from bench import cpu_profile
from poolsight.dashboards import queries
from poolsight.dashboards.server import Reader
from poolsight.dashboards.timerange import RANGES, TimeRange
from poolsight.infra.config import home, load_settings
from poolsight.infra.trino import trino_connection
from poolsight.names import NAMESPACE, TRINO_CATALOG, TRINO_READER_USER
from poolsight.schemas.tables import SIZES_CURVE, Table
from poolsight.sql import pages
from poolsight.sql.catalog import BY_NAME, TABLES
from poolsight.sql.compare import compare, workload_change
from poolsight.sql.maintain import tidy_manifests
from poolsight.sql.retention import Retention, months_before
from poolsight.sql.rollup import run_rollups
from poolsight.sql.rollups import ROLLUPS

SOURCE = "BENCH"
OBJECTS_PER_POOL = 40
OBJECT_PRESENCE = 0.1  # chance an object is in a pane
SIZE_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
CURVE_DAYS = 2
STATS_STEP_S = 300
MODEL = "lru-vpseqt"
CPU_US = 30.0
US = 1_000_000
MINUTE_US = 60 * US
HOUR_US = 3600 * US
DAY_US = 86400 * US
ENV = {"POOLSIGHT_POSTGRES_PORT": "25433", "POOLSIGHT_TRINO_PORT": "28080", "POOLSIGHT_TRINO_ADD_FILES": "1"}

ARROW: dict[str, pa.DataType] = {
    "string": pa.string(),
    "bigint": pa.int64(),
    "int": pa.int32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
}
Array = npt.NDArray[Any]
NUMPY = {"bigint": np.int64, "int": np.int32, "double": np.float64, "boolean": np.bool_, "timestamp": np.int64}


def say(text: str) -> None:
    print(text, flush=True)


# ---------------------------------------------------------------- the stack


def bench_env(root: Path) -> dict[str, str]:
    return {
        **ENV,
        "POOLSIGHT_DATA_DIR": str(root / "data"),
        "POOLSIGHT_RUN_DIR": str(root / "run"),
        "POOLSIGHT_LOG_DIR": str(root / "log"),
    }


def poolsight_cli(*args: str) -> None:
    cmd = [sys.executable, "-m", "poolsight.cli", *args]
    proc = subprocess.run(cmd, env=os.environ.copy())
    if proc.returncode != 0:
        raise SystemExit(f"bench-history: {' '.join(args)} failed ({proc.returncode})")


# ---------------------------------------------------------------- columns -> Parquet


def _strings(values: list[str], index: Array) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(index.astype(np.int32)))


def arrow_table(t: Table, cols: dict[str, Any], n: int) -> pa.Table:
    """The table's columns in its order and types: arrays of n values, scalars repeated, the
    columns not given null."""
    arrays = []
    for c in t.columns:
        typ = ARROW[c.type]
        v = cols.get(c.name)
        if v is None:
            arrays.append(pa.nulls(n, typ))
        elif isinstance(v, pa.Array):
            arrays.append(v if v.type == typ else v.cast(typ))
        elif isinstance(v, str):
            arrays.append(_strings([v], np.zeros(n, np.int32)))
        else:
            a = np.broadcast_to(np.asarray(v), (n,))
            if c.type in ("bigint", "int") and a.dtype.kind == "f":
                a = np.rint(a)
            arrays.append(pa.array(np.ascontiguousarray(a.astype(NUMPY[c.type])), typ))
    return pa.Table.from_arrays(arrays, names=t.column_names())


@dataclass
class Grid:
    """Rows of groups (pools, objects, curve sizes) x times: group columns per group, values per
    (group, time) or one for all; `keep` leaves some rows out (objects absent from a pane)."""

    groups: dict[str, Any]  # name -> list of strings or numpy array, one per group
    times: Array  # start of each pane or period, epoch microseconds
    step_us: int
    values: dict[str, Any] = field(default_factory=dict)  # (G, H) arrays or scalars
    keep: Array | None = None  # (G, H) bool

    def columns(self, time_col: str, end_col: str) -> tuple[dict[str, Any], int]:
        g_count, h_count = len(next(iter(self.groups.values()))), len(self.times)
        gi = np.repeat(np.arange(g_count), h_count)
        hi = np.tile(np.arange(h_count), g_count)
        sel = None if self.keep is None else self.keep.reshape(-1)
        if sel is not None:
            gi, hi = gi[sel], hi[sel]
        out: dict[str, Any] = {}
        for name, g in self.groups.items():
            out[name] = _strings(g, gi) if isinstance(g, list) else np.asarray(g)[gi]
        out[time_col] = self.times[hi]
        out[end_col] = self.times[hi] + self.step_us
        for name, v in self.values.items():
            if isinstance(v, np.ndarray) and v.ndim == 2:
                flat = v.reshape(-1)
                out[name] = flat if sel is None else flat[sel]
            else:
                out[name] = v
        return out, len(gi)

    def days(self, aggs: dict[str, str]) -> Grid:
        """The same rows per day (times a whole number of days of hours): each value aggregated
        its rollup's way (sum, max, min, last)."""
        g_count, h_count = len(next(iter(self.groups.values()))), len(self.times)
        d_count = h_count // 24
        values: dict[str, Any] = {}
        for name, v in self.values.items():
            if not (isinstance(v, np.ndarray) and v.ndim == 2):
                values[name] = v
                continue
            r = v.reshape(g_count, d_count, 24)
            agg = aggs.get(name, "sum")
            values[name] = {"sum": r.sum(axis=2), "max": r.max(axis=2), "min": r.min(axis=2), "last": r[:, :, -1]}[agg]
        return Grid(self.groups, self.times[::24].copy(), DAY_US, values)


# ---------------------------------------------------------------- the synthetic workload


class Workload:
    """Pools and objects with a getpage rate that follows the hour of day and the day of week;
    counters are consistent within a row (random + sequential + list = getpages, hits + misses)."""

    def __init__(self, pools: int, objects_per_pool: int, seed: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.pool_names = [f"BP{i}" for i in range(pools)]
        self.base = 1500.0 + 4000.0 * rng.random(pools)  # getpages per second
        self.miss = 0.02 + 0.08 * rng.random(pools)  # miss ratio at the current size
        self.size = (20000 + 5000 * rng.integers(0, 20, pools)).astype(np.int64)
        self.opp = objects_per_pool
        n = pools * objects_per_pool
        self.obj_pool = np.repeat(np.arange(pools), objects_per_pool)
        self.obj_names = [f"DB{p:02d}.TS{j:02d}" for p in range(pools) for j in range(objects_per_pool)]
        zipf = 1.0 / np.arange(1, objects_per_pool + 1)
        self.obj_share = np.tile(zipf / zipf.sum(), pools)  # of the pool's getpages
        self.obj_seq = 0.05 + 0.9 * rng.random(n)  # sequential + list share
        self.obj_miss = 0.5 + rng.random(n)  # times the pool's miss ratio
        self.obj_io_us = 400 + 1200 * rng.random(n)  # average sync read time
        self.obj_ws = (2000 + 20000 * rng.random(n)).astype(np.int64)

    def rate(self, pools: Array, t_us: Array) -> Array:
        """Getpages per second of each pool (G,) at each time (H,): (G, H)."""
        hour = (t_us / HOUR_US) % 24
        dow = (t_us // DAY_US + 3) % 7  # 1970-01-01 was a Thursday: 0 = Monday
        cycle = 1 + 0.6 * np.sin(2 * np.pi * (hour - 8) / 24)
        week = np.where(dow >= 5, 0.6, 1.0)
        out: Array = self.base[pools][:, None] * (cycle * week)[None, :]
        return out

    # Pane grain ------------------------------------------------------------

    def pool_panes(self, times: Array, rng: np.random.Generator) -> Grid:
        p = np.arange(len(self.pool_names))
        gps = self.rate(p, times + MINUTE_US // 2) * rng.lognormal(0, 0.1, (len(p), len(times)))
        getpages = np.rint(gps * 60)
        random = np.rint(getpages * 0.4)
        seq = np.rint(getpages * 0.5)
        miss = self.miss[p][:, None] * rng.lognormal(0, 0.1, getpages.shape)
        misses = np.rint(getpages * miss)
        sync = np.rint(random * miss * 1.5)
        sim = sync * rng.normal(1, 0.05, getpages.shape)
        sim_per_s = sim / 60
        per_s_2x = sim_per_s / math.sqrt(2)
        size = self.size[p][:, None]
        return Grid(
            {"source": [SOURCE] * len(p), "pool": self.pool_names},
            times,
            MINUTE_US,
            {
                "seconds": 60.0,
                "getpages": getpages,
                "getpages_random": random,
                "getpages_sequential": seq,
                "getpages_rid": getpages - random - seq,
                "updates": np.rint(getpages * 0.05),
                "observed_hits": getpages - misses,
                "observed_misses": misses,
                "distinct_pages": np.rint(getpages * 0.3),
                "working_set_pages": np.rint(size * (0.7 + 0.3 * gps / self.base[p][:, None] / 1.6)),
                "window_panes": 15,
                "current_size": np.broadcast_to(size, getpages.shape),
                "sim_hit_ratio": 1 - miss * (sim / np.maximum(sync, 1)),
                "sim_sync_reads": sim,
                "sim_sync_reads_per_s": sim_per_s,
                "hit_ratio_2x": 1 - miss / math.sqrt(2),
                "sync_reads_per_s_2x": per_s_2x,
                "avoided_sync_reads_per_s_2x": sim_per_s - per_s_2x,
                "cpu_seconds_saved_per_s_2x": (sim_per_s - per_s_2x) * CPU_US * 1e-6,
                "elapsed_seconds_saved_per_s_2x": (sim_per_s - per_s_2x) * 0.8e-3,
                "late_getpages": 0,
                "warmup": False,
                "mode": "exact",
                "sampling_rate": 1.0,
                "batches": 60,
                "emitted_at": np.broadcast_to(times + MINUTE_US + 5 * US, getpages.shape),
                "model": MODEL,
                "model_sampling_rate": 1.0,
                "observed_sync_reads": sync,
                "cpu_us_per_sync_read": CPU_US,
                "vpseqt": 80.0,
            },
        )

    def object_panes(self, times: Array, rng: np.random.Generator) -> tuple[Grid, Grid]:
        """object_pane and io_pane (the sync reads of each object pane) over the same panes."""
        o = np.arange(len(self.obj_names))
        keep = rng.random((len(o), len(times))) < OBJECT_PRESENCE
        # Present one pane in ten: ten times its share of the pool's getpages then.
        gps = self.rate(self.obj_pool, times + MINUTE_US // 2) * (self.obj_share * 10)[:, None]
        getpages = np.rint(gps * 60 * rng.lognormal(0, 0.2, keep.shape))
        seq_share = self.obj_seq[:, None]
        random = np.rint(getpages * (1 - seq_share))
        seq = np.rint(getpages * seq_share * 0.8)
        miss = (self.miss[self.obj_pool] * self.obj_miss)[:, None]
        misses = np.rint(getpages * miss)
        sim = random * miss * 1.5
        sim_per_s = sim / 60
        groups = {"source": [SOURCE] * len(o), "pool": [self.pool_names[i] for i in self.obj_pool]}
        obj = Grid(
            {
                **groups,
                "object": self.obj_names,
                "access_class": ["SAMOS" if s > 0.5 else "RAMOS" for s in self.obj_seq],
                "sequential_share": self.obj_seq,
                "current_size": self.size[self.obj_pool],
            },
            times,
            MINUTE_US,
            {
                "seconds": 60.0,
                "getpages": getpages,
                "getpages_random": random,
                "getpages_sequential": seq,
                "getpages_rid": getpages - random - seq,
                "updates": np.rint(getpages * 0.05),
                "observed_hits": getpages - misses,
                "observed_misses": misses,
                "distinct_pages": np.rint(getpages * 0.4),
                "working_set_pages": np.broadcast_to(self.obj_ws[:, None], keep.shape),
                "sim_hit_ratio": 1 - sim / np.maximum(getpages, 1),
                "sim_sync_reads": sim,
                "sim_sync_reads_per_s": sim_per_s,
                "hit_ratio_2x": 1 - miss / math.sqrt(2) * np.ones(keep.shape),
                "sync_reads_per_s_2x": sim_per_s / math.sqrt(2),
                "avoided_sync_reads_per_s_2x": sim_per_s * (1 - 1 / math.sqrt(2)),
                "cpu_seconds_saved_per_s_2x": sim_per_s * (1 - 1 / math.sqrt(2)) * CPU_US * 1e-6,
                "cpu_us_per_sync_read": CPU_US,
            },
            keep,
        )
        ios = np.rint(sim * rng.uniform(0.9, 1.1, keep.shape))
        io_us = self.obj_io_us[:, None] * rng.lognormal(0, 0.1, keep.shape)
        io = Grid(
            {**groups, "object": self.obj_names},
            times,
            MINUTE_US,
            {
                "direction": "read",
                "io_type": "sync",
                "ios": ios,
                "pages": ios,
                "elapsed_us": np.rint(ios * io_us),
                "max_elapsed_us": np.rint(io_us * 4),
                "cpu_us_per_sync_read": CPU_US,
            },
            keep,
        )
        return obj, io

    def curve_panes(self, times: Array, rng: np.random.Generator) -> Grid:
        return self._curve(times, MINUTE_US, rng)

    def _curve(self, times: Array, step_us: int, rng: np.random.Generator | None) -> Grid:
        pools = len(self.pool_names)
        f = np.tile(np.array(SIZE_FACTORS), pools)
        p = np.repeat(np.arange(pools), len(SIZE_FACTORS))
        seconds = step_us / US
        gps = self.rate(p, times + step_us // 2)
        if rng is not None:
            gps = gps * np.repeat(rng.lognormal(0, 0.1, (pools, len(times))), len(SIZE_FACTORS), axis=0)
        refs = np.rint(gps * seconds)
        miss = (self.miss[p] / np.sqrt(f))[:, None]
        misses = refs * miss
        sync = refs * 0.4 * miss * 1.5
        sync_current = refs * 0.4 * self.miss[p][:, None] * 1.5
        avoided = sync_current - sync
        values: dict[str, Any] = {
            "seconds": seconds,
            "refs": refs,
            "hits": refs - misses,
            "misses": misses,
            "sync_reads": sync,
            "prefetch_pages": refs * 0.6 * miss,
            "model": MODEL,
            "curve": SIZES_CURVE,
            "pool_policy": True,
            "vpseqt": 80.0,
        }
        if step_us == MINUTE_US:
            values |= {
                "hit_ratio": 1 - miss * np.ones(refs.shape),
                "miss_ratio": miss * np.ones(refs.shape),
                "hit_ratio_random": 1 - miss * 1.5 * np.ones(refs.shape),
                "hit_ratio_sequential": 1 - miss * 0.6 * np.ones(refs.shape),
                "sync_reads_per_s": sync / seconds,
                "prefetch_pages_per_s": refs * 0.6 * miss / seconds,
                "avoided_sync_reads_per_s": avoided / seconds,
                "cpu_seconds_saved_per_s": avoided / seconds * CPU_US * 1e-6,
                "elapsed_seconds_saved_per_s": avoided / seconds * 0.8e-3,
                "model_sampling_rate": 1.0,
                "cpu_us_per_sync_read": CPU_US,
            }
        else:
            values |= {
                "source_rows": int(seconds // 60),
                "avoided_sync_reads": avoided,
                "cpu_seconds_saved": avoided * CPU_US * 1e-6,
            }
        return Grid(
            {
                "source": [SOURCE] * len(p),
                "pool": [self.pool_names[i] for i in p],
                "size_pages": np.rint(self.size[p] * f).astype(np.int64),
                "size_factor": f,
                "is_current": f == 1.0,
            },
            times,
            step_us,
            values,
        )

    def _stats_values(self, getpages: Array, miss: Array, seconds: float) -> dict[str, Any]:
        random = np.rint(getpages * 0.45)
        seq = getpages - random
        sync_random = np.rint(random * miss * 1.5)
        sync_seq = np.rint(seq * miss * 0.05)
        seq_pages = np.rint(seq * miss)
        list_pages = np.rint(seq_pages * 0.1)
        dyn_pages = np.rint(seq_pages * 0.2)
        written = np.rint(getpages * 0.01)
        return {
            "interval_seconds": seconds,
            "getpages_random": random,
            "getpages_sequential": seq,
            "sync_reads_random": sync_random,
            "sync_reads_sequential": sync_seq,
            "seq_prefetch_requests": np.rint(seq_pages / 32),
            "seq_prefetch_reads": np.rint(seq_pages / 30),
            "seq_prefetch_pages": seq_pages,
            "list_prefetch_requests": np.rint(list_pages / 16),
            "list_prefetch_reads": np.rint(list_pages / 14),
            "list_prefetch_pages": list_pages,
            "dyn_prefetch_requests": np.rint(dyn_pages / 32),
            "dyn_prefetch_reads": np.rint(dyn_pages / 30),
            "dyn_prefetch_pages": dyn_pages,
            "buffer_updates": np.rint(getpages * 0.05),
            "pages_written": written,
            "sync_writes": np.rint(written * 0.01),
            "async_writes": np.rint(written / 12),
        }

    def stats_intervals(self, times: Array, rng: np.random.Generator) -> Grid:
        p = np.arange(len(self.pool_names))
        seconds = float(STATS_STEP_S)
        getpages = np.rint(
            self.rate(p, times + STATS_STEP_S * US // 2) * seconds * rng.lognormal(0, 0.05, (len(p), len(times)))
        )
        miss = self.miss[p][:, None] * np.ones(getpages.shape)
        v = self._stats_values(getpages, miss, seconds)
        sync = v["sync_reads_random"] + v["sync_reads_sequential"]
        pages_read = sync + v["seq_prefetch_pages"] + v["list_prefetch_pages"] + v["dyn_prefetch_pages"]
        read_ios = sync + v["seq_prefetch_reads"] + v["list_prefetch_reads"] + v["dyn_prefetch_reads"]
        size = self.size[p][:, None]
        v |= {
            "origin": "bench",
            "interval_derived": False,
            "getpages": getpages,
            "application_hit_ratio": 1 - sync / getpages,
            "system_hit_ratio": 1 - pages_read / getpages,
            "read_ios_per_second": read_ios / seconds,
            "sync_reads_per_second": sync / seconds,
            "pages_read_per_second": pages_read / seconds,
            "pages_per_write": v["pages_written"] / np.maximum(v["sync_writes"] + v["async_writes"], 1),
            "io_intensity": (pages_read + v["pages_written"]) / size,
            "vpsize": np.broadcast_to(size, getpages.shape),
            "vpseqt": 80.0,
            "dwqt": 30.0,
            "vdwqt": 5.0,
            "page_size": 4096,
            "pgsteal": "LRU",
            "pgfix": False,
            "frame_size": 4096,
        }
        return Grid({"source": [SOURCE] * len(p), "pool": self.pool_names}, times, STATS_STEP_S * US, v)

    # Hour grain (the older rollups) -----------------------------------------

    def pool_hours(self, times: Array, rolled_at: int) -> Grid:
        p = np.arange(len(self.pool_names))
        getpages = np.rint(self.rate(p, times + HOUR_US // 2) * 3600)
        random = np.rint(getpages * 0.4)
        seq = np.rint(getpages * 0.5)
        miss = self.miss[p][:, None]
        misses = np.rint(getpages * miss)
        sync = np.rint(random * miss * 1.5)
        size = np.broadcast_to(self.size[p][:, None], getpages.shape)
        avoided = sync * (1 - 1 / math.sqrt(2))
        return Grid(
            {"source": [SOURCE] * len(p), "pool": self.pool_names},
            times,
            HOUR_US,
            {
                "source_rows": np.full(getpages.shape, 60),
                "seconds": np.full(getpages.shape, 3600.0),
                "getpages": getpages,
                "getpages_random": random,
                "getpages_sequential": seq,
                "getpages_rid": getpages - random - seq,
                "updates": np.rint(getpages * 0.05),
                "observed_hits": getpages - misses,
                "observed_misses": misses,
                "observed_sync_reads": sync,
                "late_getpages": np.zeros(getpages.shape),
                "batches": np.full(getpages.shape, 3600.0),
                "sim_sync_reads": sync,
                "sim_hits": getpages - misses,
                "sim_hits_2x": getpages * (1 - miss / math.sqrt(2)),
                "sync_reads_2x": sync / math.sqrt(2),
                "avoided_sync_reads_2x": avoided,
                "cpu_seconds_saved_2x": avoided * CPU_US * 1e-6,
                "sim_cpu_seconds": sync * CPU_US * 1e-6,
                "working_set_page_seconds": size * 0.85 * 3600.0,
                "max_working_set_pages": np.rint(size * 0.95),
                "max_distinct_pages": np.rint(getpages * 0.3 / 60 * 1.2),
                "min_size": size,
                "max_size": size,
                "current_size": size,
                "vpseqt": 80.0,
                "model": MODEL,
                "rolled_at": rolled_at,
            },
        )

    def object_hours(self, times: Array, rolled_at: int) -> Grid:
        o = np.arange(len(self.obj_names))
        panes = 60 * OBJECT_PRESENCE
        getpages = np.rint(self.rate(self.obj_pool, times + HOUR_US // 2) * (self.obj_share * 3600)[:, None])
        random = np.rint(getpages * (1 - self.obj_seq)[:, None])
        seq = np.rint(getpages * (self.obj_seq * 0.8)[:, None])
        miss = (self.miss[self.obj_pool] * self.obj_miss)[:, None]
        misses = np.rint(getpages * miss)
        sim = random * miss * 1.5
        return Grid(
            {
                "source": [SOURCE] * len(o),
                "pool": [self.pool_names[i] for i in self.obj_pool],
                "object": self.obj_names,
                "access_class": ["SAMOS" if s > 0.5 else "RAMOS" for s in self.obj_seq],
            },
            times,
            HOUR_US,
            {
                "source_rows": np.full(getpages.shape, panes),
                "seconds": np.full(getpages.shape, panes * 60),
                "getpages": getpages,
                "getpages_random": random,
                "getpages_sequential": seq,
                "getpages_rid": getpages - random - seq,
                "updates": np.rint(getpages * 0.05),
                "observed_hits": getpages - misses,
                "observed_misses": misses,
                "sim_sync_reads": sim,
                "sim_hits": getpages - sim,
                "avoided_sync_reads_2x": sim * (1 - 1 / math.sqrt(2)),
                "sim_cpu_seconds": sim * CPU_US * 1e-6,
                "max_working_set_pages": np.broadcast_to(self.obj_ws[:, None], getpages.shape),
                "rolled_at": rolled_at,
            },
        )

    def stats_hours(self, times: Array, rolled_at: int) -> Grid:
        p = np.arange(len(self.pool_names))
        getpages = np.rint(self.rate(p, times + HOUR_US // 2) * 3600)
        miss = self.miss[p][:, None] * np.ones(getpages.shape)
        v = self._stats_values(getpages, miss, 3600.0)
        v |= {
            "source_rows": np.full(getpages.shape, 3600 // STATS_STEP_S),
            "interval_seconds": np.full(getpages.shape, 3600.0),
            "vpsize": np.broadcast_to(self.size[p][:, None], getpages.shape),
            "rolled_at": rolled_at,
        }
        return Grid(
            {"source": [SOURCE] * len(p), "pool": self.pool_names, "origin": ["bench"] * len(p)}, times, HOUR_US, v
        )

    def curve_hours(self, times: Array, rolled_at: int) -> Grid:
        g = self._curve(times, HOUR_US, None)
        n = (len(g.groups["pool"]), len(times))
        g.values["source_rows"] = np.full(n, 60)
        g.values["seconds"] = np.full(n, 3600.0)
        g.values["rolled_at"] = rolled_at
        # The rollup's `last` columns are values per row, the same every hour.
        for name in ("size_factor", "is_current"):
            g.values[name] = np.broadcast_to(np.asarray(g.groups.pop(name))[:, None], n)
        return g


# ---------------------------------------------------------------- loading


class Loader:
    """Parquet into a staging folder, add_files into an unpartitioned copy of the table, INSERT
    into the table; rows and seconds per table."""

    def __init__(self, cur: Any, stage_dir: Path, rows_per_insert: int) -> None:
        self.cur = cur
        self.stage_dir = stage_dir
        self.rows_per_insert = rows_per_insert
        self.rows: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self.generate_s: dict[str, float] = {}

    def q(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self.cur.execute(sql, params)
        return list(self.cur.fetchall())

    def load(self, t: Table, chunks: Iterator[tuple[Grid, str, str]]) -> int:
        t0 = time.monotonic()
        folder = self.stage_dir / t.name
        shutil.rmtree(folder, ignore_errors=True)
        pending, part, total, gen = 0, 0, 0, 0.0
        while True:
            g0 = time.monotonic()
            chunk = next(chunks, None)
            if chunk is not None:
                grid, time_col, end_col = chunk
                cols, n = grid.columns(time_col, end_col)
                folder.mkdir(parents=True, exist_ok=True)
                pq.write_table(arrow_table(t, cols, n), folder / f"part-{part:05d}.parquet", compression="snappy")
                part += 1
                pending += n
                gen += time.monotonic() - g0
            if pending and (chunk is None or pending >= self.rows_per_insert):
                self._insert(t, folder)
                total += pending
                pending = 0
                shutil.rmtree(folder)
            if chunk is None:
                break
        took = time.monotonic() - t0
        self.rows[t.name] = self.rows.get(t.name, 0) + total
        self.seconds[t.name] = self.seconds.get(t.name, 0.0) + took
        self.generate_s[t.name] = self.generate_s.get(t.name, 0.0) + gen
        say(
            f"  {t.name:14} {total:>12,} rows in {took:7.1f} s ({total / max(took, 1e-9):>10,.0f} rows/s; "
            f"generating + Parquet {gen:.1f} s)"
        )
        return total

    def _insert(self, t: Table, folder: Path) -> None:
        stage = f"{TRINO_CATALOG}.{NAMESPACE}.stage_{t.name}"
        cols = ", ".join(t.column_names())
        self.q(f"DROP TABLE IF EXISTS {stage}")
        self.q(f"CREATE TABLE {stage} (LIKE {t.qualified})")
        self.q(f"ALTER TABLE {stage} EXECUTE add_files(location => 'local://{folder}', format => 'PARQUET')")
        self.q(f"INSERT INTO {t.qualified} ({cols}) SELECT {cols} FROM {stage}")
        self.q(f"DROP TABLE {stage}")


def steps(start_us: int, end_us: int, step_us: int) -> Array:
    return np.arange(start_us, end_us, step_us, dtype=np.int64)


def day_ranges(start_us: int, end_us: int, days: int) -> Iterator[tuple[int, int]]:
    """[start, end) in pieces of `days` days, on UTC day boundaries after the first."""
    t = start_us
    while t < end_us:
        nxt = min((t // DAY_US + days) * DAY_US, end_us)
        yield t, nxt
        t = nxt


def month_ranges(start_us: int, end_us: int) -> Iterator[tuple[int, int]]:
    t = start_us
    while t < end_us:
        d = datetime.fromtimestamp(t / US, UTC)
        nxt_month = months_before(d, -1)
        nxt = min(int(nxt_month.timestamp()) * US, end_us)
        yield t, nxt
        t = nxt


def us(t: datetime) -> int:
    return int(t.timestamp()) * US


@dataclass(frozen=True)
class Plan:
    end: datetime  # the newest pane ends here (the current UTC hour)
    days: int
    pools: int
    objects_per_pool: int
    rollup_months: int

    @property
    def pane_start(self) -> datetime:
        """`days` days before the end, back to a UTC midnight: the older rollups end there and
        run_rollups starts there, so no hour or day is computed twice."""
        return (self.end - timedelta(days=self.days)).replace(hour=0)

    @property
    def rollup_start(self) -> datetime:
        return months_before(self.end, self.rollup_months)


def load_all(loader: Loader, w: Workload, plan: Plan, seed: int) -> None:
    p0, p1 = us(plan.pane_start), us(plan.end)
    curve0 = max(p0, p1 - CURVE_DAYS * DAY_US)
    say(f"panes {plan.pane_start:%Y-%m-%d %H:%M} .. {plan.end:%Y-%m-%d %H:%M} UTC, {plan.pools} pools")

    def panes(
        gen: Callable[[Array, np.random.Generator], Any], pick: int | None, a: int, b: int, step: int
    ) -> Iterator[tuple[Grid, str, str]]:
        for lo, hi in day_ranges(a, b, 1):
            rng = np.random.default_rng([seed, lo // DAY_US])
            g = gen(steps(lo, hi, step), rng)
            yield (g if pick is None else g[pick]), "pane_start", "pane_end"

    loader.load(BY_NAME["pool_pane"], panes(w.pool_panes, None, p0, p1, MINUTE_US))
    say(f"  (object_pane: each of the {len(w.obj_names):,} objects is in a pane with probability {OBJECT_PRESENCE})")
    loader.load(BY_NAME["object_pane"], panes(w.object_panes, 0, p0, p1, MINUTE_US))
    loader.load(BY_NAME["io_pane"], panes(w.object_panes, 1, p0, p1, MINUTE_US))
    loader.load(BY_NAME["sim_curve"], panes(w.curve_panes, None, curve0, p1, MINUTE_US))

    def stats() -> Iterator[tuple[Grid, str, str]]:
        for lo, hi in day_ranges(p0, p1, 1):
            g = w.stats_intervals(steps(lo, hi, STATS_STEP_S * US), np.random.default_rng([seed, lo // DAY_US, 5]))
            yield g, "interval_start", "interval_end"

    loader.load(BY_NAME["pool_stats"], stats())


def load_old_rollups(loader: Loader, w: Workload, plan: Plan) -> dict[str, datetime]:
    """Hourly and daily rollups from rollup_start to the first pane (the curve's: to its first
    pane, 2 days back), as run_rollups would have left them."""
    r0, p0 = us(plan.rollup_start), us(plan.pane_start)
    rolled = us(datetime.now(UTC))
    by_stem = {r.stem: r for r in ROLLUPS}
    say(f"rollups {plan.rollup_start:%Y-%m-%d} .. {plan.pane_start:%Y-%m-%d %H:%M} UTC (before the panes)")
    curve_end = max(p0, us(plan.end) - CURVE_DAYS * DAY_US)
    cutoffs: dict[str, datetime] = {}
    for stem, gen, until in (
        ("pool", w.pool_hours, p0),
        ("stats", w.stats_hours, p0),
        ("curve", w.curve_hours, curve_end),
        ("object", w.object_hours, p0),
    ):
        aggs = {m.name: m.agg for m in by_stem[stem].measures} | {"source_rows": "sum"}

        def hours(gen: Any = gen, until: int = until) -> Iterator[tuple[Grid, str, str]]:
            for lo, hi in month_ranges(r0, until):
                yield gen(steps(lo, hi, HOUR_US), rolled), "period_start", "period_end"

        def days(gen: Any = gen, until: int = until, aggs: dict[str, str] = aggs) -> Iterator[tuple[Grid, str, str]]:
            # Whole days only: the day the panes start in is recomputed by run_rollups from its hours.
            for lo, hi in month_ranges(r0, until // DAY_US * DAY_US):
                yield gen(steps(lo, hi, HOUR_US), rolled).days(aggs), "period_start", "period_end"

        loader.load(by_stem[stem].table("hour"), hours())
        loader.load(by_stem[stem].table("day"), days())
        cutoffs[f"{stem}_hour"] = datetime.fromtimestamp(until / US, UTC)
        cutoffs[f"{stem}_day"] = datetime.fromtimestamp(until // DAY_US * DAY_US / US, UTC)
    return cutoffs


# ---------------------------------------------------------------- queries


def percentile(values: list[float], q: float) -> float:
    """Nearest rank."""
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


class Committer:
    """Before each timed page load, a commit the load must read (so no answer can come from a
    cache the commit did not invalidate), and afterwards the check that it did: a pane of the run's
    pool one minute after its newest (every page reads pool_pane: the pool pages' newest pane and
    the objects page's range end at it); for `compare`, a second row of an hour of week b in
    pool_hour, so week b counts that hour's panes twice."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur
        self.commits = 0
        self.checked = 0
        # The page tables refreshed after every `refresh_every`-th pane, as the maintenance service
        # does seconds after a commit (sql/pages.py); how long each refresh took.
        self.refresh_every = 1
        self.refreshes: list[float] = []

    def _q(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self.cur.execute(sql, params)
        return list(self.cur.fetchall())

    def pane(self, pool: str, refresh: bool = True) -> datetime:
        """A copy of the pool's newest pane a minute later; its end, the pool's newest pane now.
        Then the page tables refreshed (every `refresh_every`-th), unless `refresh` is False."""
        t = BY_NAME["pool_pane"]
        cols = t.column_names()
        shifted = [
            f"{c} + INTERVAL '1' MINUTE" if c in ("pane_start", "pane_end") else c for c in cols
        ]  # fmt: skip
        newest: datetime = self._q(
            f"SELECT max(pane_start) FROM {t.qualified} WHERE source = ? AND pool = ? AND pane_start >= ?",
            (SOURCE, pool, datetime.now(UTC) - timedelta(days=30)),
        )[0][0]
        self._q(
            f"INSERT INTO {t.qualified} ({', '.join(cols)}) SELECT {', '.join(shifted)} FROM {t.qualified} "
            "WHERE source = ? AND pool = ? AND pane_start = ?",
            (SOURCE, pool, newest),
        )
        self.commits += 1
        if refresh and self.commits % self.refresh_every == 0:
            self.refreshes.append(pages.refresh(self.cur).seconds)
        return newest + 2 * timedelta(minutes=1)  # the copy's end: its start plus the pane's minute

    def hour(self, pool: str, at: datetime) -> int:
        """Another row of the pool's hour at `at` in pool_hour; the panes its copies count."""
        t = BY_NAME["pool_hour"]
        cols = ", ".join(t.column_names())
        self._q(
            f"INSERT INTO {t.qualified} ({cols}) SELECT {cols} FROM {t.qualified} "
            "WHERE source = ? AND pool = ? AND period_start = ?",
            (SOURCE, pool, at),
        )
        self.commits += 1
        rows, panes = self._q(
            f"SELECT count(*), max(source_rows) FROM {t.qualified} WHERE source = ? AND pool = ? AND period_start = ?",
            (SOURCE, pool, at),
        )[0]
        return int((rows - 1) * panes)  # every copy beyond the first (an earlier --keep run made some too)

    def saw(self, case: str, ok: bool, detail: str) -> None:
        if not ok:
            raise SystemExit(f"bench-history: {case} did not read the commit made before it ({detail})")
        self.checked += 1


# Page loads before the cases (--trino-warmup): fifty of each of the six pages. After 60 loads the
# JIT compiler threads still took 16-32 % of Trino's CPU a load (1.04-1.74 s); after 300, 3-16 %
# (0.83-1.41 s), nearer a Trino that has served the dashboard and the services for a while.
TRINO_WARMUP = 300


def run_queries(
    plan: Plan, runs: int, committer: Committer, warmup: int = 1, trino_warmup: int = 0
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Each case's p50 / p95 and Trino's CPU per load, and the Trino warm-up's own figures: first
    `trino_warmup` loads of the six pages in turn (a pool each round), each after its commit and
    checked, not counted, as a Trino that has served a live dashboard for a while has had."""

    run = Reader(load_settings()).run
    retention = Retention()  # the defaults: which grain answers a range (sql/grain.py)
    now = datetime.now(UTC)
    week = timedelta(days=7)
    minute = timedelta(minutes=1)

    def pool_page(span: str) -> Callable[[str], Any]:
        return lambda pool: queries.pool(run, SOURCE, pool, TimeRange(RANGES[span], None, None), None, retention, now)

    def objects_day(pool: str) -> Any:
        return queries.objects(run, SOURCE, pool, TimeRange(RANGES["24h"], None, None), retention, now)

    b_range = (plan.end - week, plan.end)

    def compare_weeks(pool: str) -> Any:
        ranges = [(plan.end - 2 * week, plan.end - week), b_range]
        a, b = compare(SOURCE, pool, ranges, user=TRINO_READER_USER)
        return a, b, workload_change(a, b)

    # What each case commits before a load (committer.pane, hour_commit), and how its answer shows it read it.
    def pool_saw(res: Any, end: Any) -> tuple[bool, str]:
        got = res["attributes"]["latest_pane_end"]
        return got == end, f"newest pane {got}, committed {end}"

    def objects_saw(res: Any, end: Any) -> tuple[bool, str]:
        got = res["window"]["end"]
        return got == end, f"range ends {got}, committed pane ends {end}"

    def hour_commit(pool: str) -> Any:
        # An hour of week b the hourly rollups answer (compare reads the newest rolled hour on
        # from the panes): two before the week's end.
        return committer.hour(pool, plan.end - 2 * timedelta(hours=1))

    def compare_saw(res: Any, extra: Any) -> tuple[bool, str]:
        want = (b_range[1] - b_range[0]) // minute + extra  # every minute of the week has its pane
        got = res[1]["panes"]
        return got == want, f"week b counts {got} panes, {want} with the committed hour"

    cases: dict[str, tuple[Callable[[str], Any], Callable[[str], Any], Callable[[Any, Any], tuple[bool, str]]]] = {
        "pool_24h": (pool_page("24h"), committer.pane, pool_saw),
        # A page between a commit and the refresh after it (the live service's few seconds after
        # each pane; up to POOLSIGHT_PAGE_REFRESH_EVERY after another refresh): the row is behind.
        "pool_24h_behind": (pool_page("24h"), lambda pool: committer.pane(pool, refresh=False), pool_saw),
        "pool_7d": (pool_page("7d"), committer.pane, pool_saw),
        "pool_90d": (pool_page("90d"), committer.pane, pool_saw),
        "pool_1y": (pool_page("1y"), committer.pane, pool_saw),
        "objects_1d": (objects_day, committer.pane, objects_saw),
        "compare_2_weeks": (compare_weeks, hour_commit, compare_saw),
    }
    out: dict[str, dict[str, float]] = {}
    say(
        f"\nqueries: {warmup} warm-up run(s) (not counted) + {runs} runs each, pool BP<run % pools> (a different"
        " pool each run), each load after a commit it must read (a pane of its pool; compare: an hour of week b),"
        " checked in its answer; Trino's CPU seconds per load (its JVM's threads, from /proc) and the"
        " share of them its JIT compiler threads took"
    )
    trino = cpu_profile.part_pid(load_settings().run_dir, "trino")
    warm: dict[str, float] = {"loads": trino_warmup}
    if trino_warmup:
        # A refresh (about 4 s) after every fifth commit only: the warm-up's pages read the page
        # tables and the panes both, as a live dashboard's do between refreshes.
        committer.refresh_every = 5
        walls, names = [], list(cases)
        for i in range(trino_warmup):
            name = names[i % len(names)]
            fn, commit, saw = cases[name]
            pool = f"BP{(i // len(names)) % plan.pools}"
            mark = commit(pool)
            t0 = time.perf_counter()
            res = fn(pool)
            walls.append(time.perf_counter() - t0)
            committer.saw(name, *saw(res, mark))
        committer.refresh_every = 1
        warm |= {"p50_s": round(statistics.median(walls), 3), "p95_s": round(percentile(walls, 0.95), 3)}
        warm["max_s"] = round(max(walls), 3)
        say(
            f"  Trino warm-up: {trino_warmup} loads, the {len(names)} pages in turn after a commit each, not counted"
            f" (a Trino just started, any page): p50 {warm['p50_s']:.3f} s   p95 {warm['p95_s']:.3f} s"
            f"   max {warm['max_s']:.3f} s"
        )
    committer.refreshes.clear()
    for name, (fn, commit, saw) in cases.items():
        times, cpu, jit = [], [], 0.0
        from_tables = 0
        detail = ""
        for i in range(warmup + runs):
            pool = f"BP{i % plan.pools}"
            mark = commit(pool)
            before = cpu_profile.jvm_threads(trino) if trino else {}
            t0 = time.perf_counter()
            res = fn(pool)
            took = time.perf_counter() - t0
            load_cpu, load_jit = cpu_profile.jvm_used(before, cpu_profile.jvm_threads(trino) if trino else {})
            committer.saw(name, *saw(res, mark))
            if i < warmup:
                if i == 0 and isinstance(res, dict) and "grain" in res:
                    n = len(res.get("series") or res.get("objects") or [])
                    detail = f"grain {res['grain']}, {n} rows"
                continue
            times.append(took)
            cpu.append(load_cpu)
            jit += load_jit
            from_tables += isinstance(res, dict) and bool(res.get("page_tables"))
        out[name] = {
            "p50_s": round(statistics.median(times), 3),
            "p95_s": round(percentile(times, 0.95), 3),
            "max_s": round(max(times), 3),
            "trino_cpu_s": round(statistics.median(cpu), 3),  # per load, median
            "trino_jit_share": round(jit / sum(cpu), 3) if sum(cpu) else 0.0,
            "page_tables": from_tables,  # loads the page tables answered (the pool pages)
        }
        o = out[name]
        tables = f"   page tables {from_tables}/{runs}" if name.startswith("pool_") else ""
        say(
            f"  {name:16} p50 {o['p50_s']:6.3f} s   p95 {o['p95_s']:6.3f} s   Trino CPU {o['trino_cpu_s']:5.2f} s"
            f" (JIT {o['trino_jit_share']:4.0%}){tables}   {detail}"
        )
    say(f"  {committer.commits} commits, each read by the load after it ({committer.checked} answers checked)")
    r = committer.refreshes
    warm["page_refresh_p50_s"] = round(statistics.median(r), 3) if r else 0.0
    warm["page_refresh_p95_s"] = round(percentile(r, 0.95), 3) if r else 0.0
    say(
        f"  page tables refreshed after each pane commit, as the maintenance service does (sql/pages.py), not"
        f" timed in the load: {len(r)} refreshes, p50 {warm['page_refresh_p50_s']:.2f} s,"
        f" p95 {warm['page_refresh_p95_s']:.2f} s (the service's lag after a commit: this, plus up to its"
        f" {pages.REFRESH_EVERY:.0f} s between refreshes; a page whose pool has a newer pane reads its curve"
        " from the panes)"
    )
    return out, warm


# ---------------------------------------------------------------- main


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def count_back(cur: Any, planned: dict[str, int], cutoffs: dict[str, datetime]) -> bool:
    """Rows of each table loaded, counted in Trino (a rollup table: its periods before the panes,
    the ones loaded); False if any has fewer than planned."""
    ok = True
    say("rows counted back in Trino:")
    for name, n in planned.items():
        t = BY_NAME[name]
        if name in cutoffs:
            cur.execute(f"SELECT count(*) FROM {t.qualified} WHERE period_start < ?", (cutoffs[name],))
        else:
            cur.execute(f"SELECT count(*) FROM {t.qualified} WHERE source = ?", (SOURCE,))
        counted = int(cur.fetchall()[0][0])
        ok = ok and counted >= n
        say(f"  {name:14} planned {n:>12,}  counted {counted:>12,}{'' if counted >= n else '   FEWER THAN PLANNED'}")
    return ok


def disk_report(cur: Any, warehouse: Path) -> tuple[int, int]:
    """Rows and data file bytes per table (Iceberg $files); (rows, bytes of the warehouse folder)."""
    say("\ndata on disk (data files per table, from Iceberg's $files) and rows:")
    total_rows = total_bytes = 0
    for t in BY_NAME.values():
        schema, _, name = t.qualified.rpartition(".")
        cur.execute(f'SELECT count(*), sum(file_size_in_bytes), sum(record_count) FROM {schema}."{name}$files"')
        files, size, recs = cur.fetchall()[0]
        if not files:
            continue
        total_rows += int(recs)
        total_bytes += int(size)
        say(f"  {t.name:14} {int(recs):>12,} rows  {int(size) / 1e6:>9.1f} MB  {files:>5} files")
    disk = du(warehouse)
    say(f"  total {total_rows:,} rows, {total_bytes / 1e9:.2f} GB of data files; warehouse folder {disk / 1e9:.2f} GB")
    return total_rows, disk


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--days", type=int, default=90, help="days of panes (default 90)")
    p.add_argument("--pools", type=int, default=50, help="pools (default 50)")
    p.add_argument("--objects-per-pool", type=int, default=OBJECTS_PER_POOL, help="objects per pool (default 40)")
    p.add_argument("--rollup-months", type=int, default=13, help="months of hourly and daily rollups (default 13)")
    p.add_argument("--runs", type=int, default=20, help="counted runs of each query (default 20)")
    p.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="runs of each query before the counted ones, not counted (default 1): more measure a Trino"
        " whose JIT has compiled the pages' code, as a long-running one has",
    )
    p.add_argument(
        "--trino-warmup",
        type=int,
        default=TRINO_WARMUP,
        help=f"page loads before any case, the six pages in turn, not counted (default {TRINO_WARMUP}): a Trino that"
        " serves a live dashboard has compiled its planner's code long since (its JIT's share of a load falls from"
        " about a third over the first few hundred loads); their own p50 / p95 are printed",
    )
    p.add_argument("--rows-per-insert", type=int, default=3_000_000, help="staged rows per INSERT (default 3 M)")
    p.add_argument("--reuse", action="store_true", help="keep the data of an earlier run (--keep) and only query")
    p.add_argument("--keep", action="store_true", help="leave the bench's stack running at the end")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    if a.runs < 1 or a.warmup < 0 or a.trino_warmup < 0:
        p.error("--runs must be at least 1, --warmup and --trino-warmup at least 0")

    root = home() / "var" / "bench-history"
    os.environ.update(bench_env(root))

    # A bench stack an earlier --keep left running is stopped, --reuse or not: every run's warm-up
    # meets a Trino it started (a kept one had served the earlier run's loads, already compiled).
    poolsight_cli("down")
    if not a.reuse:
        shutil.rmtree(root / "data", ignore_errors=True)
    say(f"bench-history: its own stack (PostgreSQL :25433, Trino :28080) in {root}")
    poolsight_cli("up", "trino")
    s = load_settings()
    result: dict[str, Any] = {}
    ok = True
    try:
        with trino_connection(s) as conn:
            cur = conn.cursor()
            cur.execute(f"SELECT max(pane_end), count(DISTINCT pool) FROM {BY_NAME['pool_pane'].qualified}")
            newest, pools = cur.fetchall()[0]
            load_s = rollup_s = 0.0
            loaded = 0
            if a.reuse and newest is not None:
                # the loaded end: the panes the bench's commits added end minutes after it
                end = newest.replace(minute=0, second=0, microsecond=0)
                plan = Plan(end, a.days, int(pools), a.objects_per_pool, a.rollup_months)
                say(f"reusing the loaded data: {pools} pools, newest pane ends {newest}")
            else:
                end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
                plan = Plan(end, a.days, a.pools, a.objects_per_pool, a.rollup_months)
                loader = Loader(cur, root / "stage", a.rows_per_insert)
                w = Workload(a.pools, a.objects_per_pool, a.seed)
                t0 = time.monotonic()
                load_all(loader, w, plan, a.seed)
                load_s = time.monotonic() - t0
                # The panes are rolled up before the older rollups are loaded, as a first
                # maintenance cycle after an upgrade would: run_rollups over all of them.
                pane_rows = sum(loader.rows.get(r.source.name, 0) for r in ROLLUPS)
                say("run_rollups (the product's, over every pane loaded; rollup tables still empty):")
                t0 = time.monotonic()
                for r in run_rollups(cur):
                    say(f"  {r.rollup:14} {r.files:>5} files  {r.seconds:7.1f} s")
                rollup_s = time.monotonic() - t0
                say(f"  rolled up {pane_rows:,} pane rows in {rollup_s:.0f} s ({pane_rows / rollup_s:,.0f} rows/s)")
                t0 = time.monotonic()
                cutoffs = load_old_rollups(loader, w, plan)
                load_s += time.monotonic() - t0
                planned = dict(loader.rows)
                loaded = sum(planned.values())
                say(f"loaded {loaded:,} rows in {load_s:.0f} s ({loaded / load_s:,.0f} rows/s), rollups apart")
                ok = count_back(cur, planned, cutoffs) and ok
            t0 = time.monotonic()
            tidied = tidy_manifests([t.name for t in TABLES])
            manifests_s = time.monotonic() - t0
            manifests = [sum(x.get(k, 0) for x in tidied) for k in ("manifests_before", "manifests_after")]
            say(
                f"manifests rewritten as the maintenance service does: {manifests[0]:,} -> {manifests[1]:,} "
                f"in {manifests_s:.1f} s" + "".join(f"; {x['table']}: {x['error']}" for x in tidied if "error" in x)
            )
            total_rows, disk = disk_report(cur, s.data_dir / "warehouse")
            committer = Committer(cur)
            per_query, trino_warm = run_queries(plan, a.runs, committer, a.warmup, a.trino_warmup)
        result = {
            "query_p95_s": max(v["p95_s"] for v in per_query.values()),
            "rows": loaded or total_rows,
            "rows_in_tables": total_rows,
            "per_query": per_query,
            "load_s": round(load_s, 1),
            "rollup_s": round(rollup_s, 1),
            "manifests_s": round(manifests_s, 1),
            "manifests_before_after": manifests,
            "disk_bytes": disk,
            "commits_read": committer.checked,
            "warmup": a.warmup,
            "trino_warmup": trino_warm,
            "days": plan.days,
            "pools": plan.pools,
            "objects": plan.pools * plan.objects_per_pool,
        }
    finally:
        if not a.keep:
            poolsight_cli("down")
    print(json.dumps(result))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
