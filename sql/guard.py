"""What snapshot expiry and orphan removal must leave for the streaming jobs.

Iceberg's Flink sink, restored from a checkpoint, walks the table's snapshots back from the
newest to the last one its job committed (summary `flink.job-id`) to learn which checkpoint it
committed last; if that snapshot was expired it cannot tell, and commits the checkpoint's files
again. And files a job wrote for a checkpoint it has not committed yet are unreferenced until it
does. So for every job that runs or may be resumed, each table keeps the snapshots since that
job's newest commit, and files younger than it. May be resumed: a job recorded as meant to run
(`poolsight up` resubmits it), the newest record of each job name, and any job stopped or
submitted in the last RESUMABLE_DAYS (`jobs submit` resumes a group's job from its savepoint or
checkpoint). A group stopped longer ago and resumed after expiry may commit its last checkpoint's
files again: resume it with `--fresh`, or within that time.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Any

from poolsight.flink_jobs import restore
from poolsight.flink_jobs import submit as jobs
from poolsight.infra.config import Settings
from poolsight.schemas.tables import Table
from poolsight.sql.rollup import metadata_table

TERMINAL = {"FINISHED", "CANCELED", "FAILED"}
RESUMABLE_DAYS = 7.0
DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
UNIT_SECONDS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds_of(text: str) -> float:
    """A Trino duration (7d, 12h, 90s) in seconds; ValueError otherwise."""
    m = DURATION.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a duration like 7d, 12h or 90s")
    return float(m.group(1)) * UNIT_SECONDS[m.group(2)]


def protected_jobs(s: Settings) -> set[str]:
    """Flink job ids whose commits must stay readable: every job recorded as meant to run
    (`jobs submit` records each; resume.py resubmits them from their checkpoints), and the
    cluster's jobs not ended, when the JobManager answers."""

    ids: set[str] = set()
    try:
        ids |= {str(j["jid"]) for j in jobs.list_jobs(s) if str(j.get("state", "")).upper() not in TERMINAL}
    except (OSError, ValueError, KeyError):
        pass  # down or not started: the records below name every job submitted to it
    recent = time.time() - RESUMABLE_DAYS * 86400
    for _, name in jobs.JOBS.values():
        recs = [r for r in restore.records(s, name) if r.get("job_id")]
        if recs:
            ids.add(str(max(recs, key=lambda r: float(r.get("submitted") or 0))["job_id"]))
        ids |= {
            str(r["job_id"])
            for r in recs
            if r.get("running") or float(r.get("updated") or r.get("submitted") or 0) >= recent
        }
    return ids


def oldest_needed_commit(cur: Any, t: Table, job_ids: set[str]) -> datetime | None:
    """Of the protected jobs that committed to `t`, the oldest of their newest commits."""
    if not job_ids:
        return None
    marks = ", ".join("?" for _ in job_ids)
    cur.execute(
        f"SELECT min(t) FROM (SELECT max(committed_at) AS t FROM {metadata_table(t, 'snapshots')} "
        f"WHERE element_at(summary, 'flink.job-id') IN ({marks}) GROUP BY element_at(summary, 'flink.job-id'))",
        tuple(sorted(job_ids)),
    )
    rows = cur.fetchall()
    found: datetime | None = rows[0][0] if rows else None
    return found


def guarded_seconds(configured: float, needed_since: datetime | None, now: datetime | None = None) -> float:
    """A retention threshold (seconds) that keeps `needed_since` and later (a minute more: the
    time between reading it and the procedure running)."""
    if needed_since is None:
        return configured
    age = ((now or datetime.now(UTC)) - needed_since).total_seconds()
    return max(configured, age + 60.0)
