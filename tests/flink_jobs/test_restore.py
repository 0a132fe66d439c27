"""Where a resubmitted job resumes, on a state directory laid out as the cluster writes it."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from poolsight.flink_jobs import restore
from poolsight.infra.config import Settings

NAME = "poolsight-simulation"
OPTS = {"pane_seconds": 60.0}


def _settings(tmp_path: Path) -> Settings:
    return cast(Settings, SimpleNamespace(data_dir=tmp_path))


def _snapshot(d: Path, mtime: float) -> Path:
    d.mkdir(parents=True)
    (d / "_metadata").write_bytes(b"x")
    os.utime(d / "_metadata", (mtime, mtime))
    return d


def test_resumes_from_the_newest_of_savepoint_and_retained_checkpoint(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    root = tmp_path / "flink"
    assert restore.resume_point(s, NAME, "g", OPTS) is None  # never submitted
    restore.write_record(s, NAME, "g", job_id="j1", options=OPTS, savepoint=None, restored_from=None)
    _snapshot(root / "checkpoints" / "j1" / "chk-3", 100)
    chk7 = _snapshot(root / "checkpoints" / "j1" / "chk-7", 200)
    (root / "checkpoints" / "j1" / "chk-8").mkdir()  # being written: no _metadata yet
    assert restore.resume_point(s, NAME, "g", OPTS) == chk7
    sp = _snapshot(root / "savepoints" / "savepoint-j1-abc", 300)
    restore.write_record(s, NAME, "g", savepoint=sp.as_uri())  # jobs cancel stopped it with a savepoint
    assert restore.resume_point(s, NAME, "g", OPTS) == sp
    assert restore.group_of(s, NAME, "j1") == "g"
    assert restore.resume_point(s, NAME, "other", OPTS) is None  # a new group starts without state
    with pytest.raises(restore.ResumeError, match="pane_seconds"):
        restore.resume_point(s, NAME, "g", {"pane_seconds": 10.0})
    # A field the options no longer have (retired since the record was written) changes nothing.
    restore.write_record(s, NAME, "g", options={**OPTS, "lateness_seconds": 5.0})
    assert restore.resume_point(s, NAME, "g", OPTS) == sp
    with pytest.raises(restore.ResumeError, match="idle_flush_seconds"):  # one they gained still counts
        restore.resume_point(s, NAME, "g", {**OPTS, "idle_flush_seconds": 10.0})


def test_a_job_that_never_checkpointed_resumes_from_what_it_resumed_from(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    sp = _snapshot(tmp_path / "flink" / "savepoints" / "savepoint-j1-abc", 300)
    restore.write_record(s, NAME, "g", job_id="j2", options=OPTS, savepoint=None, restored_from=str(sp))
    assert restore.resume_point(s, NAME, "g", OPTS, {"completed": 0, "paths": []}) == sp
    # The cluster names a savepoint the record missed (the stop's answer was lost): that one.
    later = _snapshot(tmp_path / "flink" / "savepoints" / "savepoint-j2-def", 400)
    assert restore.resume_point(s, NAME, "g", OPTS, {"completed": 5, "paths": [f"file:{later}"]}) == later


def test_an_old_job_whose_snapshots_are_gone_is_not_resumed_from_anything_older(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    sp = _snapshot(tmp_path / "flink" / "savepoints" / "savepoint-j1-abc", 300)
    restore.write_record(s, NAME, "g", job_id="j2", options=OPTS, savepoint=None, restored_from=str(sp))
    (tmp_path / "flink" / "checkpoints" / "j2").mkdir(parents=True)  # a finished job's: emptied
    for cluster in (None, {"completed": 3, "paths": []}):  # j2 may have written results since sp
        with pytest.raises(restore.ResumeError, match="--fresh"):
            restore.resume_point(s, NAME, "g", OPTS, cluster)


def test_prune_keeps_the_snapshot_resumed_from_and_only_removes_what_the_cluster_wrote(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    root = tmp_path / "flink"
    old_sp = _snapshot(root / "savepoints" / "savepoint-j0-x", 50)
    chk = _snapshot(root / "checkpoints" / "j1" / "chk-7", 200)
    other_job = _snapshot(root / "checkpoints" / "j9" / "chk-1", 200)  # the other job's: not this record's
    outside = _snapshot(tmp_path / "elsewhere", 10)
    rec = {"job_id": "j1", "savepoint": None, "restored_from": str(old_sp)}
    restore.prune(s, rec, chk)
    assert chk.is_dir() and other_job.is_dir() and not old_sp.exists()
    restore.prune(s, {"job_id": "j1", "restored_from": str(outside)}, None)  # start over
    assert not (root / "checkpoints" / "j1").exists() and other_job.is_dir() and outside.is_dir()
