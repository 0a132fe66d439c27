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
from datetime import UTC, datetime
from typing import Any

from poolsight.infra.config import load_settings
from poolsight.infra.services import trino_connection
from poolsight.simulator.similarity import similarity
from poolsight.sql.grain import grain_for
from poolsight.sql.retention import Retention
from poolsight.sql.tables import BY_NAME

PANE_SQL = f"""
SELECT count(*), sum(getpages), sum(seconds),
       sum(getpages) / nullif(sum(seconds), 0),
       sum(observed_hits) * 1e0 / nullif(sum(observed_hits) + sum(observed_misses), 0),
       sum(sim_sync_reads) / nullif(sum(CASE WHEN sim_sync_reads IS NOT NULL THEN seconds END), 0),
       1 - sum(sim_sync_reads) / nullif(sum(CASE WHEN sim_sync_reads IS NOT NULL THEN getpages_random END), 0),
       max(working_set_pages)
FROM {BY_NAME["pool_pane"].qualified}
WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?"""

# The same from the hourly rollups (sql/rollups.py), for ranges of whole hours longer than the
# panes answer fast (sql/grain.py) or than they are kept.
HOUR_SQL = f"""
SELECT sum(source_rows), sum(getpages), sum(seconds),
       sum(getpages) / nullif(sum(seconds), 0),
       sum(observed_hits) * 1e0 / nullif(sum(observed_hits) + sum(observed_misses), 0),
       sum(sim_sync_reads) / nullif(sum(sim_seconds), 0),
       1 - sum(sim_sync_reads) / nullif(sum(sim_getpages_random), 0),
       max(max_working_set_pages)
FROM {BY_NAME["pool_hour"].qualified}
WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?"""

CURVE_HOUR_SQL = f"""
SELECT size_factor, sum(hits) / nullif(sum(refs), 0), sum(sync_reads) / nullif(sum(seconds), 0)
FROM {BY_NAME["curve_hour"].qualified}
WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ? AND size_factor IS NOT NULL
  AND coalesce(pool_policy, true) AND curve = 'sizes'
GROUP BY size_factor ORDER BY size_factor"""

MIX_HOUR_SQL = f"""
SELECT object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM {BY_NAME["object_hour"].qualified}
WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?
GROUP BY object"""

CURVE_SQL = f"""
SELECT size_factor, sum(hits) / nullif(sum(refs), 0), sum(sync_reads) / nullif(sum(seconds), 0)
FROM {BY_NAME["sim_curve"].qualified}
WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ? AND size_factor IS NOT NULL
  AND coalesce(pool_policy, true)
GROUP BY size_factor ORDER BY size_factor"""

MIX_SQL = f"""
SELECT object, sum(getpages_random), sum(getpages_sequential), sum(getpages_rid)
FROM {BY_NAME["object_pane"].qualified}
WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?
GROUP BY object"""

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
    return all(t.minute == t.second == t.microsecond == 0 for t in (start, end))


def compare(
    source: str,
    pool: str,
    ranges: list[tuple[datetime, datetime]],
    *,
    user: str | None = None,
    retention: Retention | None = None,
) -> list[dict[str, Any]]:
    """One dict per range: METRICS plus `curve` {size factor: (hit ratio, sync reads/s)}, from the
    panes, or from the hourly rollups for a range of whole hours the panes do not answer (grain.py).
    The dashboard reads as the read-only user; `poolsight compare` as the configured Trino user."""
    out: list[dict[str, Any]] = []
    with trino_connection(load_settings(), user=user) as conn:
        cur = conn.cursor()
        for start, end in ranges:
            params = (source, pool, start, end)
            hours = (
                _whole_hours(start, end)
                and grain_for(start, end, retention or Retention(), datetime.now(UTC)) != "pane"
            )
            pane_sql, curve_sql, mix_sql = (
                (HOUR_SQL, CURVE_HOUR_SQL, MIX_HOUR_SQL) if hours else (PANE_SQL, CURVE_SQL, MIX_SQL)
            )
            cur.execute(pane_sql, params)
            row = dict(zip(METRICS, cur.fetchall()[0], strict=True))
            if not row["panes"] and pane_sql is HOUR_SQL:  # not rolled up (yet): the panes
                pane_sql, curve_sql, mix_sql = PANE_SQL, CURVE_SQL, MIX_SQL
                cur.execute(pane_sql, params)
                row = dict(zip(METRICS, cur.fetchall()[0], strict=True))
            cur.execute(curve_sql, params)
            row["curve"] = {float(f): (hr, sr) for f, hr, sr in cur.fetchall()}
            cur.execute(mix_sql, params)
            mix: dict[tuple[str, str], float] = {}
            for obj, *counts in cur.fetchall():
                for kind, n in zip(("random", "sequential", "list"), counts, strict=True):
                    if n:
                        mix[(obj, kind)] = float(n)
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
    for start, end in (a.a, a.b):
        if end <= start:
            raise SystemExit(f"poolsight compare: range {start.isoformat()} .. {end.isoformat()} is empty")
    ra, rb = compare(a.source, a.pool, [tuple(a.a), tuple(a.b)])
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
