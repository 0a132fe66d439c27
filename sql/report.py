"""`poolsight report SOURCE`: the subsystem and its pools over one period of the statistics, as an
analyst pastes it into a report (seed 000's summary: buffers and memory per page size, the overall
rates and hit ratios, each pool's share of the sync reads and of the memory), as text or JSON.

Read from the views subsystem_summary and subsystem_pool_summary (sql/views.sql): the newest
statistics interval, hour or day of the source ending at or before `--at`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_connection
from poolsight.sql.compare import timestamp
from poolsight.sql.named import query

GRAINS = ("interval", "hour", "day")
PAGE_SIZES = (("4k", 4096), ("8k", 8192), ("16k", 16384), ("32k", 32768))


@dataclass(frozen=True)
class Subsystem:
    grain: str
    source: str
    period_start: datetime
    period_end: datetime
    pools: int
    buffers_4k: int | None
    buffers_8k: int | None
    buffers_16k: int | None
    buffers_32k: int | None
    memory_mb_4k: float | None
    memory_mb_8k: float | None
    memory_mb_16k: float | None
    memory_mb_32k: float | None
    memory_mb: float | None
    getpages_per_s: float | None
    sync_reads_per_s: float | None
    prefetch_pages_per_s: float | None
    application_hit_ratio: float | None
    system_hit_ratio: float | None


@dataclass(frozen=True)
class Pool:
    pool: str
    buffers: int | None
    page_size: int
    memory_mb: float | None
    getpages_per_s: float | None
    sync_reads_per_s: float | None
    prefetch_pages_per_s: float | None
    application_hit_ratio: float | None
    system_hit_ratio: float | None
    pages_per_write: float | None
    sync_read_share: float | None
    memory_share: float | None


@dataclass(frozen=True)
class Report:
    subsystem: Subsystem
    pools: tuple[Pool, ...]


SUBSYSTEM_COLUMNS = tuple(f.name for f in fields(Subsystem))
POOL_COLUMNS = tuple(f.name for f in fields(Pool))


def read_report(
    source: str, grain: str = "interval", at: datetime | None = None, *, user: str | None = None
) -> Report | None:
    """The source's newest period of `grain` ending at or before `at`; None when it has none."""
    values = {"source": source, "grain": grain, "at": at}
    with trino_connection(load_settings(), user=user) as conn:
        cur = conn.cursor()
        cur.execute(*query("report_subsystem").statement(values))
        rows = cur.fetchall()
        if not rows:
            return None
        cur.execute(*query("report_pools").statement(values))
        pools = tuple(Pool(*r) for r in cur.fetchall())
    return Report(Subsystem(*rows[0]), pools)


def _n(v: float | int | None, digits: int = 0) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f} %"


def text(r: Report) -> str:
    """The report as fixed-width text: the subsystem, then a line per pool."""
    s = r.subsystem
    seconds = (s.period_end - s.period_start).total_seconds()
    per_size = [
        f"{label.upper()} {_n(getattr(s, f'buffers_{label}'))} buffers ({_n(getattr(s, f'memory_mb_{label}'))} MB)"
        for label, _ in PAGE_SIZES
        if getattr(s, f"buffers_{label}") is not None
    ]
    lines = [
        f"{s.source}   {s.grain} {s.period_start:%Y-%m-%d %H:%M:%S} .. {s.period_end:%Y-%m-%d %H:%M:%S} UTC "
        f"({seconds:,.0f} s)",
        f"pools {s.pools}   {'   '.join(per_size)}   memory {_n(s.memory_mb)} MB",
        f"getpages/s {_n(s.getpages_per_s, 1)}   sync reads/s {_n(s.sync_reads_per_s, 1)}   "
        f"prefetch pages/s {_n(s.prefetch_pages_per_s, 1)}",
        f"application hit ratio {_pct(s.application_hit_ratio)}   system hit ratio {_pct(s.system_hit_ratio)}",
        "",
    ]
    head = (
        f"{'pool':<10}{'buffers':>11}{'page':>6}{'MB':>9}{'getpages/s':>12}{'sync rd/s':>11}{'prefetch/s':>12}"
        f"{'app hit':>9}{'sys hit':>9}{'pg/write':>9}{'sync I/O':>9}{'memory':>9}"
    )
    lines += [head, "-" * len(head)]
    for p in r.pools:
        lines.append(
            f"{p.pool:<10}{_n(p.buffers):>11}{p.page_size // 1024:>5}K{_n(p.memory_mb):>9}"
            f"{_n(p.getpages_per_s, 1):>12}{_n(p.sync_reads_per_s, 1):>11}{_n(p.prefetch_pages_per_s, 1):>12}"
            f"{_pct(p.application_hit_ratio):>9}{_pct(p.system_hit_ratio):>9}{_n(p.pages_per_write, 1):>9}"
            f"{_pct(p.sync_read_share):>9}{_pct(p.memory_share):>9}"
        )
    return "\n".join(lines)


def as_json(r: Report) -> dict[str, Any]:
    return {"subsystem": asdict(r.subsystem), "pools": [asdict(p) for p in r.pools]}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="subsystem or member, e.g. DB2P")
    p.add_argument(
        "--grain",
        choices=GRAINS,
        default="interval",
        help="interval: one statistics interval (default); hour, day: the statistics added up per hour or day",
    )
    p.add_argument("--at", type=timestamp, help="the newest period ending at or before this time (ISO 8601, UTC)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run_cli(a: argparse.Namespace) -> int:
    r = read_report(a.source, a.grain, a.at)
    if r is None:
        when = f" ending at or before {a.at.isoformat()}" if a.at else ""
        print(f"poolsight report: {a.source}: no statistics per {a.grain}{when}", file=sys.stderr)
        return 1
    print(json.dumps(as_json(r), default=str) if a.json else text(r))
    return 0
