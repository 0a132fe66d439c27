"""Where a resubmitted job resumes: the state of the job it replaces.

Stopping and starting the jobs (an upgrade, a new option) must change no total: a new
job that started from the consumer group's committed offsets alone would drop what the
old one held in keyed state (each pool's open pane and the records since its snapshot).
So every submission is recorded per job name and consumer group
(`<data>/flink/jobs/<name>@<group>.json`: job id, options, and the savepoint `jobs
cancel` stopped it with), and the next submission of that name on that group resumes
from the newest of that savepoint and the old job's latest retained checkpoint (the job
retains it on cancellation; a crash leaves it). Kafka offsets, keyed state and the
Iceberg committer's pending files all come back from the same snapshot: exactly once.
Another group's record and snapshots are left alone (the demo runs on its own group).

What cannot be resumed safely is refused (ResumeError, `--fresh` to start over): an old
job whose snapshots are gone (anything older would write its results again), and changed
options (the restored pools would keep the old ones).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from poolsight.infra.config import Settings


def state_dir(s: Settings) -> Path:
    """Where the cluster writes checkpoints and savepoints (infra/flink_service.py write_flink_conf)."""
    return s.data_dir / "flink"


def _record_path(s: Settings, name: str, group: str) -> Path:
    return state_dir(s) / "jobs" / f"{name}@{re.sub(r'[^A-Za-z0-9_.-]', '_', group)}.json"


def read_record(s: Settings, name: str, group: str) -> dict[str, Any]:
    try:
        return dict(json.loads(_record_path(s, name, group).read_text()))
    except (OSError, ValueError):
        return {}


def group_of(s: Settings, name: str, job_id: str) -> str | None:
    """The consumer group a recorded job of this name ran on."""
    for path in (state_dir(s) / "jobs").glob(f"{name}@*.json"):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if rec.get("job_id") == job_id:
            return str(rec.get("group"))
    return None


def records(s: Settings, name: str) -> list[dict[str, Any]]:
    """Every group's record of the job name."""
    out = []
    for path in sorted((state_dir(s) / "jobs").glob(f"{name}@*.json")):
        try:
            out.append(dict(json.loads(path.read_text())))
        except (OSError, ValueError):
            continue
    return out


def write_record(s: Settings, name: str, group: str, **fields: Any) -> None:
    """Merge `fields` into the record of the job name on that group (atomically: a crash leaves the old one)."""
    path = _record_path(s, name, group)
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = {**read_record(s, name, group), **fields, "group": group, "updated": time.time()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=1))
    tmp.replace(path)


def _path(uri_or_path: str) -> Path:
    """A local path from Flink's `file:/...` (or `file:///...`) location, or a path as it is."""
    return Path(uri_or_path.removeprefix("file:").removeprefix("//"))


def _metadata_dir(uri_or_path: str) -> Path | None:
    p = _path(uri_or_path)
    return p if (p / "_metadata").is_file() else None


def latest_checkpoint(s: Settings, job_id: str) -> Path | None:
    """The job's newest complete retained checkpoint (chk-N with its _metadata)."""
    root = state_dir(s) / "checkpoints" / job_id
    found = [(int(m.group(1)), d) for d in root.glob("chk-*") if (m := re.fullmatch(r"chk-(\d+)", d.name))]
    for _, d in sorted(found, reverse=True):
        if (d / "_metadata").is_file():
            return d
    return None


def _owned(s: Settings, rec: dict[str, Any]) -> list[Path]:
    """The snapshots a record points at: its savepoint, its job's checkpoints, what it resumed from."""
    out = []
    if rec.get("savepoint"):
        out.append(_path(str(rec["savepoint"])))
    if rec.get("job_id"):
        out.append(state_dir(s) / "checkpoints" / str(rec["job_id"]))
    if rec.get("restored_from"):
        out.append(Path(str(rec["restored_from"])))
    return out


class ResumeError(RuntimeError):
    """The job this one replaces cannot be resumed safely (see the module's doc)."""


def current(recorded: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """A record's options without the fields the options no longer have (`names`: theirs now):
    a field retired since the record was written changes nothing any more."""
    keep = set(names)
    return {k: v for k, v in recorded.items() if k in keep}


def resume_point(
    s: Settings, name: str, group: str, options: dict[str, Any], cluster: dict[str, Any] | None = None
) -> Path | None:
    """The newest snapshot of the job this name last ran as on this group: the savepoint it was
    stopped with, its latest retained checkpoint, or what the cluster names as its latest
    (`cluster`: the JobManager's /jobs/<id>/checkpoints, when it still knows the job); if the
    cluster says it completed none, what it had resumed from. None for a group never run."""
    rec = read_record(s, name, group)
    if not rec.get("job_id"):
        return None
    old = None if rec.get("options") is None else current(rec["options"], options)
    if old not in (None, options):
        changed = sorted(k for k in {**old, **options} if old.get(k) != options.get(k))
        raise ResumeError(
            f"{name}: options changed since job {rec['job_id']} ({', '.join(changed)}); its pools would keep "
            "the old ones: submit with the old options, or with --fresh to start over"
        )
    found = [latest_checkpoint(s, str(rec["job_id"]))]
    found += [_metadata_dir(str(w)) for w in (rec.get("savepoint"), *(cluster or {}).get("paths", [])) if w]
    candidates = [d for d in found if d is not None]
    if candidates:
        return max(candidates, key=lambda d: (d / "_metadata").stat().st_mtime)
    if cluster is not None and cluster.get("completed") == 0:
        # It never completed a checkpoint, so it committed nothing: resume from where it started.
        return _metadata_dir(str(rec["restored_from"])) if rec.get("restored_from") else None
    raise ResumeError(
        f"{name}: no snapshot of job {rec['job_id']} is left to resume from; anything older would write "
        "its results twice: submit with --fresh to start over"
    )


def prune(s: Settings, rec: dict[str, Any], keep: Path | None) -> None:
    """Remove the snapshots an old record points at, but the one a new job resumes from (the cluster
    never removes retained checkpoints; a checkpoint's job folder goes whole, since an incremental
    checkpoint refers to files in the folder's shared/)."""
    for p in _owned(s, rec):
        target = p.parent if p.name.startswith("chk-") else p  # a job's checkpoints go together
        inside = state_dir(s).resolve() in target.resolve().parents  # only what the cluster wrote
        if inside and (keep is None or target not in (keep, *keep.parents)):
            shutil.rmtree(target, ignore_errors=True)
