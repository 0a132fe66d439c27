"""Jobs a restarted JobManager forgot, submitted again by `poolsight up`.

The session cluster keeps its jobs in the JobManager's memory (a one-machine stack has no
ZooKeeper or Kubernetes for Flink's HA), so a JobManager that died or was stopped comes back
empty. Every submission is recorded (restore.py) with its options and whether it is meant to
run: `jobs submit` sets it, `jobs cancel` clears it. After `up`, each job name's newest record
that is meant to run, whose job the cluster does not know, is submitted again with the
recorded options, resuming from its last retained checkpoint: the restart delays results and
loses none. A job the cluster still knows (running, failed, cancelled) is left alone: why it
failed is for the operator to see.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from typing import Any

from poolsight.infra.config import Settings

from . import restore
from . import submit as jobs
from .options import JobOptions, SimulationOptions, StatisticsOptions

OPTIONS: dict[str, type[SimulationOptions] | type[StatisticsOptions]] = {
    "simulation": SimulationOptions,
    "statistics": StatisticsOptions,
}


def forgotten(records: dict[str, list[dict[str, Any]]], known: set[str]) -> dict[str, dict[str, Any]]:
    """Per job kind, the record to submit again: the kind's newest submission (on any group),
    if it is meant to run, carries its job options, and its job id is not among `known`."""
    out: dict[str, dict[str, Any]] = {}
    for kind, recs in records.items():
        submitted = [r for r in recs if r.get("submitted") and r.get("job_id")]
        if not submitted:
            continue
        newest = max(submitted, key=lambda r: float(r["submitted"]))
        if newest.get("running") and newest.get("job") and str(newest["job_id"]) not in known:
            out[kind] = newest
    return out


def options_of(kind: str, recorded: dict[str, Any]) -> SimulationOptions | StatisticsOptions:
    """A job's options as its record holds them; a field retired since it was written is passed over."""
    cls = OPTIONS[kind]
    return cls(**restore.current(recorded, (f.name for f in fields(cls))))


def resume_forgotten(s: Settings) -> tuple[list[str], list[str]]:
    """Submit again the jobs the cluster forgot (see the module's doc); returns the kinds resumed
    and those that could not be. A job that cannot be resumed is reported and skipped: `up`
    has still brought the stack back."""
    try:
        known = {str(j["jid"]) for j in jobs.list_jobs(s)}
    except (OSError, ValueError, KeyError) as exc:
        print(f"poolsight up: no jobs resumed: the JobManager did not list its jobs: {exc}", file=sys.stderr)
        return [], list(jobs.JOBS)
    records = {kind: restore.records(s, name) for kind, (_, name) in jobs.JOBS.items()}
    subs: list[jobs.Submission] = []
    failed: dict[str, Exception] = {}
    groups: dict[str, Any] = {}
    for kind, rec in forgotten(records, known).items():
        groups[kind] = rec.get("group")
        try:
            job = JobOptions(**{**rec["job"], "restore_from": None})
            subs.append(jobs.Submission(kind, job, options_of(kind, rec["options"])))
        except Exception as exc:  # a record from another version: say so, go on
            failed[kind] = exc
    # A refused resume, a timeout: said below; the other job is resumed still, and `up` goes on.
    done, refused = jobs.submit_all(s, subs, all_or_none=False)
    failed.update(refused)
    for kind, why in failed.items():
        print(f"poolsight up: {kind} job (group {groups[kind]}) not resumed: {why}", file=sys.stderr)
    for kind, job_id in done.items():
        print(f"{kind:18} resumed as job {job_id} (group {groups[kind]}): the JobManager had forgotten it")
    return list(done), list(failed)
