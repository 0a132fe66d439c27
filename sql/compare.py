"""`poolsight compare`: one pool over two time ranges of event time, side by side: the
measured load (getpages/s, observed hit ratio), the simulation at the current size
(sync reads/s, random hit ratio, working set) and the curve (hit ratio and sync
reads/s per size factor), and how alike the two workloads are (objects new and gone,
getpage rate and random / sequential / list mix, one similarity score:
poolsight.simulator.similarity). Answers "what changed since last week" for a pool; the
pool_history view does the same per hour against fixed offsets."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_connection
from poolsight.simulator.similarity import similarity
from poolsight.sql.grain import grain_for
from poolsight.sql.named import query
from poolsight.sql.retention import Retention, retention_from

# Raw sums of one range (ratios are divided out in _metrics), in the order of the named query
# compare_sums (sql/queries/compare.sql), after the range's number: from the panes, and from the
# hourly rollups (sql/rollups.py) for the whole hours already rolled up of a range the panes do
# not answer fast (sql/grain.py) or no longer keep.
SUMS = ("panes", "getpages", "seconds", "hits", "misses", "sim_sync_reads", "sim_seconds", "sim_random", "ws")

METRICS = (
    "panes",
    "getpages",
    "seconds",
    "getpages_per_s",
    "observed_hit_ratio",
    "sim_sync_reads_per_s",
    "sim_random_hit_ratio",
    "max_working_set_pages",
)


def timestamp(text: str) -> datetime:
    """ISO 8601; without a zone, UTC."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (e.g. 2026-11-20T08:00)") from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="subsystem or member, e.g. DB2A")
    p.add_argument("pool", help="buffer pool, e.g. BP1")
    p.add_argument(
        "--a",
        nargs=2,
        type=timestamp,
        required=True,
        metavar=("START", "END"),
        help="first range of event time (ISO 8601, end exclusive)",
    )
    p.add_argument("--b", nargs=2, type=timestamp, required=True, metavar=("START", "END"), help="second range")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _whole_hours(start: datetime, end: datetime) -> bool:
    return all(t.astimezone(UTC).minute == t.second == t.microsecond == 0 for t in (start, end))


def _parts(
    rolled_until: Callable[[], datetime | None], start: datetime, end: datetime, retention: Retention
) -> dict[str, datetime]:
    """compare.sql's intervals of a range: [hours_start, hours_end) from the hourly rollups, the
    range's hours before the newest one rolled up when the rollups answer it, and [panes_start,
    panes_end) from the panes, the rest (either may be empty)."""
    split = start  # the range from the panes
    if _whole_hours(start, end) and grain_for(start, end, retention, datetime.now(UTC)) != "pane":
        until = rolled_until()
        split = start if until is None else min(max(until, start), end)
    return {"hours_start": start, "hours_end": split, "panes_start": split, "panes_end": end}


def _metrics(s: dict[str, float]) -> dict[str, Any]:
    def div(a: float | None, b: float | None) -> float | None:
        return None if a is None or not b else a / b

    hits, misses = s["hits"], s["misses"]
    random_hit = div(s["sim_sync_reads"], s["sim_random"])
    return {
        "panes": int(s["panes"] or 0),
        "getpages": s["getpages"],
        "seconds": s["seconds"],
        "getpages_per_s": div(s["getpages"], s["seconds"]),
        "observed_hit_ratio": div(hits, None if hits is None or misses is None else hits + misses),
        "sim_sync_reads_per_s": div(s["sim_sync_reads"], s["sim_seconds"]),
        "sim_random_hit_ratio": None if random_hit is None else 1 - random_hit,
        "max_working_set_pages": s["ws"],
    }


def _add(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


def compare(
    source: str,
    pool: str,
    ranges: list[tuple[datetime, datetime]],
    *,
    user: str | None = None,
    retention: Retention | None = None,
) -> list[dict[str, Any]]:
    """One dict per range: METRICS plus `curve` {size factor: (hit ratio, sync reads/s)}, from the
    panes, and for a range of whole hours the panes do not answer (grain.py) from the hourly
    rollups up to the newest hour rolled up. The dashboard reads as the read-only user;
    `poolsight compare` as the configured Trino user."""
    settings = load_settings()

    def rows(name: str, each: list[dict[str, Any]]) -> list[list[Any]]:
        with trino_connection(settings, user=user) as conn:
            cur = conn.cursor()
            cur.execute(*query(name).union_all(each))
            return list(cur.fetchall())

    until: list[datetime | None] = []

    def rolled_until() -> datetime | None:  # asked once, by the first range that needs it
        if not until:
            until.append(rows("compare_rolled_until", [{"source": source, "pool": pool}])[0][0])
        return until[0]

    # Three statements at once, each over every range's rollups and panes (a UNION ALL): Trino's
    # cost is per statement (sql/README.md), so the command waits for the slowest, not the sum.
    each = [
        {"range": i, "source": source, "pool": pool, **_parts(rolled_until, start, end, retention or Retention())}
        for i, (start, end) in enumerate(ranges)
    ]
    with ThreadPoolExecutor(3) as ex:
        sums_rows, curve_rows, mix_rows = ex.map(
            lambda name: rows(name, each), ("compare_sums", "compare_curve", "compare_mix")
        )
    out: list[dict[str, Any]] = []
    for i, (start, end) in enumerate(ranges):
        sums: dict[str, Any] = dict.fromkeys(SUMS)
        curve: dict[float, list[float]] = {}
        mix: dict[tuple[str, str], float] = {}
        for _, *vals in (r for r in sums_rows if r[0] == i):
            for k, v in zip(SUMS, vals, strict=True):
                sums[k] = max(sums[k] or 0, v) if k == "ws" and v is not None else _add(sums[k], v)
        for _, f, *vals in (r for r in curve_rows if r[0] == i):
            acc = curve.setdefault(float(f), [0.0, 0.0, 0.0, 0.0])
            for j, v in enumerate(vals):
                acc[j] += float(v or 0)
        for _, obj, *counts in (r for r in mix_rows if r[0] == i):
            for kind, n in zip(("random", "sequential", "list"), counts, strict=True):
                if n:
                    mix[(obj, kind)] = mix.get((obj, kind), 0.0) + float(n)
        row = _metrics(sums)
        row["curve"] = {
            f: (h / r if r else None, sr / sec if sec else None) for f, (h, r, sr, sec) in sorted(curve.items())
        }
        row["mix"] = mix
        out.append({"start": start.isoformat(), "end": end.isoformat(), **row})
    return out


def workload_change(ra: dict[str, Any], rb: dict[str, Any]) -> dict[str, Any]:
    """How alike the two ranges' workloads are (simulator.similarity), as printed and in --json."""
    s = similarity(ra["mix"], rb["mix"], ra["seconds"] or 0.0, rb["seconds"] or 0.0)
    return {
        "score": s.score,
        "objects_new": s.objects_new,
        "objects_gone": s.objects_gone,
        "getpages_per_s_a": s.getpages_per_s_a,
        "getpages_per_s_b": s.getpages_per_s_b,
        "getpage_rate_change": s.rate_change,
        "mix_a": s.mix_a,
        "mix_b": s.mix_b,
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}" if abs(v) < 10 else f"{v:,.1f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _change(a: Any, b: Any) -> str:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not a:
        return "-"
    return f"{(b - a) / abs(a):+.1%}"


def run_cli(a: argparse.Namespace) -> int:
    for option, (start, end) in (("--a", a.a), ("--b", a.b)):
        if end <= start:  # the two values are checked one by one as they are parsed: together here
            print(f"poolsight compare: {option}: {start.isoformat()} .. {end.isoformat()} is empty", file=sys.stderr)
            return 2
    ra, rb = compare(a.source, a.pool, [tuple(a.a), tuple(a.b)], retention=retention_from(load_settings().history))
    change = workload_change(ra, rb)
    for r in (ra, rb):
        r.pop("mix")
    if a.json:
        print(json.dumps({"source": a.source, "pool": a.pool, "a": ra, "b": rb, "similarity": change}, default=str))
        return 0
    print(f"{a.source}/{a.pool}   A: {ra['start']} .. {ra['end']}   B: {rb['start']} .. {rb['end']}")
    print(f"{'':28}{'A':>16}{'B':>16}{'B vs A':>10}")
    for m in METRICS:
        print(f"{m:28}{_fmt(ra[m]):>16}{_fmt(rb[m]):>16}{_change(ra[m], rb[m]):>10}")
    for f in sorted(set(ra["curve"]) | set(rb["curve"])):
        for i, label in enumerate(("hit ratio", "sync reads/s")):
            va, vb = (r["curve"].get(f, (None, None))[i] for r in (ra, rb))
            print(f"{f'{f:g}x size: {label}':28}{_fmt(va):>16}{_fmt(vb):>16}{_change(va, vb):>10}")
    for kind in ("random", "sequential", "list"):
        va, vb = change["mix_a"].get(kind), change["mix_b"].get(kind)
        print(f"{f'{kind} share':28}{_fmt(va):>16}{_fmt(vb):>16}{_change(va, vb):>10}")
    new, gone = change["objects_new"], change["objects_gone"]
    print(f"{'workload similarity':28}{_fmt(change['score']):>32}   (1 = same objects and access mix)")
    print(f"{'objects new in B':28}{len(new):>32,}   {', '.join(new[:10])}{' ...' if len(new) > 10 else ''}")
    print(f"{'objects gone in B':28}{len(gone):>32,}   {', '.join(gone[:10])}{' ...' if len(gone) > 10 else ''}")
    if not ra["panes"] or not rb["panes"]:
        print("(a range without panes: check the source, pool and times, in UTC unless a zone is given)")
    return 0
