"""`poolsight maintain`: Iceberg upkeep through Trino's procedures, table by table:
compaction (optimize, which also applies the tables' sort order), manifests rewritten one per
partition (optimize_manifests), snapshot expiry and removal of orphan files. Expiry and orphan
removal keep what the streaming jobs still need (sql/guard.py). The maintenance service
(sql/history.py) runs this on a schedule, and the manifests' rewrite more often."""

from __future__ import annotations

import argparse
import json
import re
import time
from functools import partial
from typing import Any

from poolsight.argtypes import Checked
from poolsight.infra.config import MANIFESTS_LEFT_BELOW, load_settings
from poolsight.infra.trino import QueryError, fetch, trino_connection
from poolsight.schemas.tables import Table
from poolsight.sql.catalog import BY_NAME, TABLES
from poolsight.sql.guard import guarded_seconds, oldest_needed_commit, protected_jobs, seconds_of
from poolsight.sql.rollup import metadata_table

# Durations and sizes are spliced into the procedure calls: only their syntax is accepted.
SIZE = re.compile(r"\d+(\.\d+)?(B|kB|MB|GB)")


def _size(text: str) -> str:
    if not SIZE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 100MB (B, kB, MB or GB)")
    return text


def _tables(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown tables {unknown or [text]}; known: {', '.join(BY_NAME)}")
    return names


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tables", type=_tables, help="comma-separated table names (default: all)")
    p.add_argument(
        "--retain",
        type=Checked(seconds_of),
        default="7d",
        help="keep snapshots younger than this (Trino duration, e.g. 7d, 12h)",
    )
    p.add_argument("--file-size-threshold", type=_size, default="100MB", help="compact files smaller than this")
    p.add_argument(
        "--orphans-older-than",
        type=Checked(seconds_of),
        default="7d",
        help="remove unreferenced files older than this; files a streaming job wrote but has not "
        "committed yet look unreferenced, so keep this well above the checkpoint interval",
    )
    p.add_argument("--skip-orphans", action="store_true")


def _count(run: Any, table: Table, meta: str) -> int:
    return int(run(f"SELECT count(*) FROM {metadata_table(table, meta)}")[0][0])


# A snapshot's summary says it replaced manifests (a rewrite, or a compaction's own).
REPLACED_MANIFESTS = "coalesce(try_cast(element_at(summary, 'manifests-replaced') AS bigint), 0) > 0"


def rewrite_manifests(run: Any, table: Table) -> tuple[int, int]:
    """The table's data manifests rewritten one per partition (Trino clusters them by the first
    partition field) when commits added MANIFESTS_LEFT_BELOW or more since the last snapshot
    that replaced manifests (every commit's summary has `manifests-replaced`, a job's append says
    0): every commit adds a manifest, and a query opens each one whose partitions its filter may
    need (bench-history, the same data read at two snapshots: a day of pool_pane 0.20 s with 59
    manifests, 0.08 s once rewritten). The writers merge their data manifests and their delete
    manifests each once they find MANIFESTS_MERGED_AT (METADATA_FILE_PROPERTIES), leaving fewer
    than MANIFESTS_LEFT_BELOW in all: this is for a writer that did not (a fast append), not for
    every few commits. Delete manifests are left as they are; compaction removes what they apply to.
    (manifests before, after)."""
    snapshots = metadata_table(table, "snapshots")
    n, new = run(
        "SELECT count(*), count_if(s.committed_at > coalesce("
        f"(SELECT max(committed_at) FROM {snapshots} WHERE {REPLACED_MANIFESTS}), "
        "from_unixtime(0))) "
        f"FROM {metadata_table(table, 'manifests')} m LEFT JOIN {snapshots} s ON s.snapshot_id = m.added_snapshot_id"
    )[0]
    if new < MANIFESTS_LEFT_BELOW:
        return int(n), int(n)
    run(f"ALTER TABLE {table.qualified} EXECUTE optimize_manifests")
    return int(n), _count(run, table, "manifests")


def tidy_manifests(tables: list[str]) -> list[dict[str, Any]]:
    """rewrite_manifests for each table, as the maintenance service does between compactions;
    one report per table (manifests before and after, seconds; `error` when Trino refused, as
    when a job's commit merged manifests meanwhile: the next round tries again)."""
    report: list[dict[str, Any]] = []
    with trino_connection(load_settings()) as conn:
        run = partial(fetch, conn.cursor())
        for name in tables:
            start = time.monotonic()
            row: dict[str, Any] = {"table": name}
            try:
                row["manifests_before"], row["manifests_after"] = rewrite_manifests(run, BY_NAME[name])
            except QueryError as exc:
                row["error"] = str(exc.message or exc)[:300]
            report.append(row | {"seconds": round(time.monotonic() - start, 2)})
    return report


def maintain(
    tables: list[str],
    retain: str,
    threshold: str,
    orphans_older_than: str | None = "7d",
) -> list[dict[str, Any]]:
    """Run the procedures; returns one report per table (files before and after, seconds, and
    the thresholds used: longer than asked where a job still needs older snapshots)."""
    report: list[dict[str, Any]] = []
    settings = load_settings()
    jobs = protected_jobs(settings)
    with trino_connection(settings) as conn:
        cur = conn.cursor()
        run = partial(fetch, cur)

        # Trino refuses retention below its configured minimum unless the session allows it.
        run("SET SESSION iceberg.expire_snapshots_min_retention = '0s'")
        run("SET SESSION iceberg.remove_orphan_files_min_retention = '0s'")
        for name in tables:
            t = BY_NAME[name]  # identifiers come from the catalogue; durations are checked below
            start = time.monotonic()
            before, snaps = _count(run, t, "files"), _count(run, t, "snapshots")
            run(f"ALTER TABLE {t.qualified} EXECUTE optimize(file_size_threshold => '{threshold}')")
            manifests = rewrite_manifests(run, t)  # after compaction, which writes manifests of its own
            needed = oldest_needed_commit(cur, t, jobs)
            keep_s = guarded_seconds(seconds_of(retain), needed)
            run(f"ALTER TABLE {t.qualified} EXECUTE expire_snapshots(retention_threshold => '{keep_s:.0f}s')")
            orphans_s = None if orphans_older_than is None else guarded_seconds(seconds_of(orphans_older_than), needed)
            if orphans_s is not None:
                run(f"ALTER TABLE {t.qualified} EXECUTE remove_orphan_files(retention_threshold => '{orphans_s:.0f}s')")
            report.append(
                {
                    "table": name,
                    "files_before": before,
                    "files_after": _count(run, t, "files"),
                    "manifests_before": manifests[0],
                    "manifests_after": manifests[1],
                    "snapshots_before": snaps,
                    "snapshots_after": _count(run, t, "snapshots"),
                    "expired_before_s": round(keep_s),
                    "kept_for_job_since": None if needed is None else needed.isoformat(),
                    "seconds": round(time.monotonic() - start, 2),
                }
            )
    return report


def run_cli(a: argparse.Namespace) -> int:

    names = a.tables or [t.name for t in TABLES]
    for row in maintain(names, a.retain, a.file_size_threshold, None if a.skip_orphans else a.orphans_older_than):
        print(json.dumps(row))
    return 0
