"""Which jobs `poolsight up` submits again after a restarted JobManager forgot them."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from poolsight.flink_jobs import restore
from poolsight.flink_jobs.options import SimulationOptions, StatisticsOptions
from poolsight.flink_jobs.resume import forgotten, options_of
from poolsight.infra.config import Settings, load_settings
from poolsight.infra.registry_access import RegistryAccess

JOB = {"group": "g", "checkpoint_seconds": 2.0, "restore_from": None}


def _rec(job_id: str, submitted: float, running: bool, group: str = "g") -> dict[str, object]:
    return {
        "job_id": job_id,
        "submitted": submitted,
        "running": running,
        "job": {**JOB, "group": group},
        "group": group,
    }


def test_the_newest_submission_meant_to_run_and_unknown_to_the_cluster_is_resumed() -> None:
    old, new = _rec("a1", 100.0, True, "old"), _rec("a2", 200.0, True, "new")
    assert forgotten({"simulation": [old, new]}, known=set()) == {"simulation": new}
    # The cluster still knows it (running or failed): left alone.
    assert forgotten({"simulation": [old, new]}, known={"a2"}) == {}
    # The newest was cancelled: an older group's record does not come back in its place.
    assert forgotten({"simulation": [old, _rec("a2", 200.0, False, "new")]}, known=set()) == {}
    # A record from before job options were recorded cannot be submitted again.
    legacy = {"job_id": "a3", "submitted": 300.0, "running": True, "group": "g"}
    assert forgotten({"statistics": [legacy]}, known=set()) == {}
    assert forgotten({"statistics": []}, known=set()) == {}


def test_records_of_a_name_are_read_across_groups_and_cancellation_clears_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POOLSIGHT_DATA_DIR", str(tmp_path))
    s: Settings = load_settings()
    restore.write_record(s, "poolsight-simulation", "g1", job_id="x", running=True, submitted=1.0, job=JOB)
    restore.write_record(s, "poolsight-simulation", "g/2", job_id="y", running=True, submitted=2.0, job=JOB)
    restore.write_record(s, "poolsight-statistics", "g1", job_id="z", running=True, submitted=3.0, job=JOB)
    restore.write_record(s, "poolsight-simulation", "g/2", running=False)  # as jobs cancel records it
    recs = restore.records(s, "poolsight-simulation")
    assert sorted((r["job_id"], r["group"], r["running"]) for r in recs) == [("x", "g1", True), ("y", "g/2", False)]
    assert forgotten({"simulation": recs}, known=set()) == {}


def test_a_record_with_an_option_retired_since_is_submitted_with_the_options_of_now() -> None:
    """SimulationOptions lost lateness_seconds (panes stopped closing on the watermark); a record
    from before still has it. The statistics job keeps its own lateness_seconds."""
    now = SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=15.0)
    recorded = {**asdict(now), "lateness_seconds": 5.0}
    assert options_of("simulation", recorded) == now
    stats = StatisticsOptions(RegistryAccess("http://127.0.0.1:1"), lateness_seconds=5.0)
    assert options_of("statistics", asdict(stats)) == stats
    with pytest.raises(TypeError):  # a field missing from the record is not made up
        options_of("simulation", {"idle_flush_seconds": 15.0})
