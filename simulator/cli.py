"""`poolsight simulate`: the offline (embedded) mode, no services needed."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from poolsight.argtypes import (
    COUNT,
    NON_NEGATIVE,
    PERCENT,
    POSITIVE,
    POSITIVE_COUNT,
    RATE,
    SECONDS,
    Assignment,
    InputFile,
    NumberList,
    OutputFile,
    whole,
)
from poolsight.simulator.engine import CostModel, SimConfig, Simulator
from poolsight.simulator.group_cli import (
    GroupEvents,
    GroupSpec,
    GroupUsageError,
    add_group_arguments,
    format_groups,
    run_groups,
)
from poolsight.simulator.result import PoolResult
from poolsight.simulator.trace import (
    TraceFormatError,
    TraceReader,
    TraceSource,
    add_column_arguments,
    columns_from_args,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "traces",
        nargs="+",
        type=InputFile(),
        metavar="TRACE",
        help="getpage trace files: the project format (CSV or Parquet) or any CSV with --page-column",
    )
    add_column_arguments(p)
    s = p.add_argument_group("simulation")
    s.add_argument("--mode", choices=["exact", "shards"], default="exact")
    s.add_argument("--rate", type=RATE, default=0.01, help="SHARDS sampling rate (fixed rate)")
    s.add_argument("--max-samples", type=COUNT, default=0, help="SHARDS fixed size: at most this many pages")
    s.add_argument("--policy", choices=["lru", "fifo", "lru-vpseqt"], default="lru")
    s.add_argument("--vpseqt", type=PERCENT, default=80.0, help="sequential steal threshold, %% of the pool")
    s.add_argument("--policy-rate", type=RATE, default=1.0, help="sampling rate of the miniature caches")
    s.add_argument(
        "--sizes",
        type=NumberList(POSITIVE_COUNT),
        help="comma-separated pool sizes in buffers (default: 1/8x..8x --pool-size)",
    )
    s.add_argument(
        "--pool-size",
        action="append",
        type=Assignment(POSITIVE_COUNT, bare=True, form="[POOL=]BUFFERS"),
        default=[],
        metavar="[POOL=]BUFFERS",
        help="current pool size (VPSIZE), for all pools or one; repeatable",
    )
    s.add_argument("--pane-seconds", type=SECONDS, default=60.0)
    s.add_argument("--window-panes", type=POSITIVE_COUNT, default=15)
    # The kernel's distance buckets take 4 to 24 bits (simulator/kernel/src/hist.rs).
    s.add_argument("--precision-bits", type=whole(4, 24), default=12)
    s.add_argument("--cpu-us-per-sync-read", type=NON_NEGATIVE, default=30.0)
    s.add_argument("--sync-io-ms", type=POSITIVE, help="average sync read I/O time, for elapsed-time savings")
    add_group_arguments(p)
    o = p.add_argument_group("output")
    o.add_argument("--json", type=OutputFile(), metavar="FILE", help="write the full result as JSON")
    o.add_argument("--objects", type=COUNT, default=10, help="objects to show per pool in the table")
    o.add_argument("--strict", action="store_true", help="stop at the first unreadable row")


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def format_result(pools: Mapping[str, PoolResult], objects: int) -> str:
    lines = []
    for pool, r in pools.items():
        w, g = r.window, r.getpages
        lines.append(
            f"\npool {pool}: {r.refs:,} getpages ({g.random:,} random, "
            f"{g.sequential:,} sequential, {g.rid:,} RID-list), "
            f"{r.distinct_pages:,} distinct pages, {r.cold_misses:,} cold misses"
        )
        lines.append(
            f"  window: {w.panes} pane(s) of {w.pane_seconds:g} s, {w.seconds:.1f} s of events"
            f"{'  [warm-up: distances do not yet see a full window of history]' if w.warmup else ''}; "
            f"mode {r.mode} (rate {r.sampling_rate:.4g}); policy {r.policy}"
        )
        lines.append(
            f"  {'size':>10} {'hit ratio':>9} {'miss ratio':>10} {'sync rd/s':>10} {'prefetch/s':>10} "
            f"{'avoided/s':>10} {'CPU s/24h':>10}"
        )
        for c in r.curve:
            mark = " <- current" if c.size_pages == r.current_size else ""
            lines.append(
                f"  {c.size_pages:>10,} {_fmt(c.hit_ratio, '9.4f')} {_fmt(c.miss_ratio, '10.4f')} "
                f"{_fmt(c.sync_reads_per_s, '10.1f')} {_fmt(c.prefetch_pages_per_s, '10.1f')} "
                f"{_fmt(c.avoided_sync_reads_per_s, '10.1f')} {_fmt(c.cpu_seconds_saved_per_24h, '10.1f')}{mark}"
            )
        ws = r.working_set
        lines.append(
            f"  working set: window {ws.window_pages:,} pages; per pane avg {ws.avg_pages:,.0f}, "
            f"max {ws.max_pages:,}, change {ws.change_pages if ws.change_pages is not None else '-'}"
        )
        objs = sorted(r.objects.items(), key=lambda kv: -kv[1].refs)[:objects]
        if objs:
            lines.append(f"  {'object':<24} {'getpages':>10} {'class':>5} {'seq %':>6} {'pages':>9}")
            for name, o in objs:
                lines.append(
                    f"  {name:<24} {o.refs:>10,} {o.access_class:>5} {100 * o.sequential_share:6.1f} "
                    f"{o.distinct_pages:>9,}"
                )
    return "\n".join(lines)


def pool_name_match(pool: str, names: dict[str, int]) -> str | None:
    """The name given for a pool: its full name (`DB2A/BP1`) or, for a trace keyed by source,
    its name within the source (`BP1`, matching every source's BP1)."""
    if pool in names:
        return pool
    short = pool.rpartition("/")[2]
    return short if short in names else None


def run(a: argparse.Namespace, open_reader: Callable[[Path], TraceSource] | None = None) -> int:
    """open_reader: how a trace file is opened (the command wires every format's reader; by
    default the project's CSV/Parquet)."""
    config = SimConfig(
        mode=a.mode,
        rate=a.rate,
        max_samples=a.max_samples if a.mode == "shards" else 0,
        pane_seconds=a.pane_seconds,
        window_panes=a.window_panes,
        precision_bits=a.precision_bits,
        policy=a.policy,
        policy_rate=a.policy_rate,
        vpseqt=a.vpseqt,
    )
    sim = Simulator(
        config, CostModel(a.cpu_us_per_sync_read * 1e-6, None if a.sync_io_ms is None else a.sync_io_ms / 1000)
    )
    sizes: list[int] | None = a.sizes
    all_size: int | None = None
    pool_sizes: dict[str, int] = {}
    for name, value in a.pool_size:
        if name:
            pool_sizes[name] = value
        else:
            all_size = value
    if config.policy != "lru" and sizes is None and all_size is None and not pool_sizes:
        print("poolsight simulate: --policy fifo/lru-vpseqt needs --sizes or --pool-size", file=sys.stderr)
        return 2
    try:
        groups = GroupEvents([GroupSpec.parse(g) for g in a.group]) if a.group else None
    except GroupUsageError as exc:
        print(f"poolsight simulate: {exc}", file=sys.stderr)
        return 2
    columns = columns_from_args(a)
    if open_reader is None:

        def open_reader(path: Path) -> TraceSource:
            return TraceReader(path, columns, strict=a.strict)

    accepted = rejected = 0
    sync_ios, sync_io_us = 0, 0  # measured synchronous reads (IFCID 006/007) that came with the trace
    seen: set[str] = set()
    named: set[str] = set()  # --pool-size names that matched a pool
    for path in a.traces:
        try:
            reader = open_reader(path)
            for batch in reader.batches():
                if batch.io is not None:
                    sync = batch.io.io_type == 0
                    sync_ios += int(sync.sum())
                    sync_io_us += int(batch.io.elapsed_us[sync].sum())
                for pool in set(batch.pool_names.table[np.unique(batch.pool_names.codes)].tolist()) - seen:
                    seen.add(pool)
                    if config.policy != "lru" and sizes is not None:
                        sim.set_policy_sizes(pool, sizes)
                    name = pool_name_match(pool, pool_sizes)
                    if name is not None:
                        named.add(name)
                    size = pool_sizes[name] if name is not None else all_size
                    if size is not None:
                        sim.set_pool_size(pool, size)
                sim.feed(batch.times, batch.pool_names, batch.object_names, batch.pages, batch.access, batch.function)
                if groups is not None:
                    groups.add(batch)
        except TraceFormatError as exc:
            print(f"poolsight simulate: {exc}", file=sys.stderr)
            return 2
        accepted += reader.accepted
        rejected += reader.rejected
        for err in reader.errors[:10]:
            print(f"rejected {err}", file=sys.stderr)
        if reader.rejected > 10:
            print(f"... and {reader.rejected - 10} more rejected rows in {path}", file=sys.stderr)
    print(f"read {accepted:,} rows, rejected {rejected:,}", file=sys.stderr)
    if accepted == 0:
        print("poolsight simulate: no readable getpages", file=sys.stderr)
        return 2
    unmatched = sorted(set(pool_sizes) - named)
    if unmatched:
        print(
            f"poolsight simulate: --pool-size {', '.join(unmatched)}: no such pool in the trace "
            f"(pools: {', '.join(sorted(seen))})",
            file=sys.stderr,
        )
        return 2
    if config.policy != "lru" and sizes is None:
        unsized = sorted(p for p in seen if pool_name_match(p, pool_sizes) is None and all_size is None)
        if unsized:
            print(
                f"poolsight simulate: --policy {config.policy} cannot apply to {', '.join(unsized)}: "
                "give its size (--pool-size POOL=BUFFERS) or --sizes",
                file=sys.stderr,
            )
            return 2
    measured_ms = sync_io_us / sync_ios / 1000 if sync_ios else None
    if a.sync_io_ms is None and measured_ms is not None:
        # The shop's own I/O time prices the savings.
        sim.costs = dataclasses.replace(sim.costs, sync_io_seconds=measured_ms / 1000)
        print(f"sync read I/O {measured_ms:.3f} ms: the mean of {sync_ios:,} IFCID 006/007 pairs", file=sys.stderr)
    gbps = []
    if groups is not None:

        def lbp_size(pool: str) -> int | None:
            name = pool_name_match(pool, pool_sizes)
            return pool_sizes[name] if name is not None else all_size

        try:
            gbps = run_groups(groups, a, lbp_size)
        except GroupUsageError as exc:
            print(f"poolsight simulate: {exc}", file=sys.stderr)
            return 2
    pools = sim.results(sizes)
    state_bytes = sim.state_bytes()
    print(format_result(pools, a.objects))
    if gbps:
        print(format_groups(gbps))
    print(f"\nsimulator state: {state_bytes / 2**20:.1f} MiB as a snapshot")
    if a.json:
        document = {
            "pools": {name: r.as_dict() for name, r in pools.items()},
            "input": {
                "files": [str(p) for p in a.traces],
                "accepted_rows": accepted,
                "rejected_rows": rejected,
                "measured_sync_reads": sync_ios,
                "measured_sync_io_ms": measured_ms,
            },
            "state_bytes": state_bytes,
        }
        if groups is not None:
            out: dict[str, Any] = {g.name: {"gbps": {}} for g in groups.groups}
            for r in gbps:
                out[r.group]["gbps"][r.gbp] = r.as_dict()
            document["groups"] = out
        a.json.write_text(json.dumps(document, indent=1))
    return 0
