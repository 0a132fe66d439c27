"""Where a resubmitted job resumes: the state of the job it replaces.

Stopping and starting the jobs (an upgrade, a new option) must change no total: a new
job that started from the consumer group's committed offsets alone would drop what the
old one held in keyed state (each pool's open pane and the records since its snapshot).
So every submission is recorded (`<data>/flink/jobs/<name>.json`: job id, consumer
group, and the savepoint `jobs cancel` stopped it with), and the next submission of that
name on the same group resumes from the newest of that savepoint and the old job's latest
retained checkpoint (the cluster keeps it on cancellation and after a crash). Kafka offsets, keyed state and the
Iceberg committer's pending files all come back from the same snapshot: exactly once.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

from poolsight.infra.config import Settings


def state_dir(s: Settings) -> Path:
    """Where the cluster writes checkpoints and savepoints (infra/services.py write_flink_conf)."""
    return s.data_dir / "flink"


def _record_path(s: Settings, name: str) -> Path:
    return state_dir(s) / "jobs" / f"{name}.json"


def read_record(s: Settings, name: str) -> dict[str, Any]:
    try:
        return dict(json.loads(_record_path(s, name).read_text()))
    except (OSError, ValueError):
        return {}


def write_record(s: Settings, name: str, **fields: Any) -> None:
    """Merge `fields` into the job name's record (atomically: a crash leaves the old one)."""
    path = _record_path(s, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = {**read_record(s, name), **fields, "updated": time.time()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=1))
    tmp.replace(path)


def _metadata_dir(uri_or_path: str) -> Path | None:
    p = Path(uri_or_path.removeprefix("file:").removeprefix("//"))
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
        out.append(Path(str(rec["savepoint"]).removeprefix("file:").removeprefix("//")))
    if rec.get("job_id"):
        out.append(state_dir(s) / "checkpoints" / str(rec["job_id"]))
    if rec.get("restored_from"):
        out.append(Path(str(rec["restored_from"])))
    return out


class ResumeError(RuntimeError):
    """The job a name last ran as left no snapshot to resume from, though it may have written results."""


def resume_point(s: Settings, name: str, group: str) -> Path | None:
    """The newest snapshot of the job this name last ran as on the same consumer group: the
    savepoint it was stopped with or its latest retained checkpoint; if it completed none,
    what it had resumed from. A new group starts where its --from says, without state.

    Raises ResumeError when the old job's checkpoints are gone: an older snapshot would
    replay what it already wrote (`jobs submit --fresh` starts over instead)."""
    rec = read_record(s, name)
    if rec.get("group") != group or not rec.get("job_id"):
        return None
    checkpoints = state_dir(s) / "checkpoints" / str(rec["job_id"])
    candidates = [d for d in (latest_checkpoint(s, str(rec["job_id"])),) if d is not None]
    if rec.get("savepoint") and (sp := _metadata_dir(str(rec["savepoint"]))) is not None:
        candidates.append(sp)
    if candidates:
        return max(candidates, key=lambda d: (d / "_metadata").stat().st_mtime)
    if not checkpoints.is_dir():
        raise ResumeError(
            f"{name}: the checkpoints of job {rec['job_id']} are gone ({checkpoints}); "
            "resuming from anything older would write its results twice: submit with --fresh to start over"
        )
    # It never completed a checkpoint, so it committed nothing: resume from where it started.
    return _metadata_dir(str(rec["restored_from"])) if rec.get("restored_from") else None


def prune(s: Settings, rec: dict[str, Any], keep: Path | None) -> None:
    """Remove the snapshots an old record points at, but the one a new job resumes from (each
    retained checkpoint is a full copy of the state; the cluster never removes them)."""
    for p in _owned(s, rec):
        if keep is not None and (p == keep or p in keep.parents):
            continue
        target = p.parent if p.name.startswith("chk-") else p  # a job's checkpoints go together
        inside = state_dir(s).resolve() in target.resolve().parents  # only what the cluster wrote
        if inside and (keep is None or target not in (keep, *keep.parents)):
            shutil.rmtree(target, ignore_errors=True)
