"""`make chaos`, short: the fault suite itself (bench/chaos.py) against the session's stack,
with the fault no other test makes: the Flink JobManager killed with kill -9 mid-stream and
started again by `poolsight up`, its forgotten jobs submitted again (a broker's kill -9 is
test_cluster.py's, a paused broker and the TaskManager's kill -9 test_pipeline.py's).
Each trial's totals per pool in Iceberg must equal what the generator sent (chaos.py counts the
getpages it hands to the producer), with nothing dead-lettered. The full suite (every service,
--trials 10) is `make chaos`."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import ROOT, poolsight

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

# The JobManager: no other test kills it (a broker's kill -9 is test_cluster's, a paused broker and the
# TaskManager's kill test_pipeline's); `make chaos` runs every fault ten times.
FAULTS = ("flink-jobmanager",)
GETPAGES, RATE = 240_000, 20_000  # a 12 s stream: each kill lands 4 s in, mid-stream


def test_short_chaos_loses_and_doubles_nothing() -> None:
    import subprocess

    # Chaos submits jobs of its own, on a new group: the session's stop here (with a savepoint) and
    # the next module that needs them submits them again.
    r = poolsight("jobs", "cancel", "--all")
    assert r.returncode == 0, r.stderr
    cmd = [sys.executable, "-m", "bench.chaos", "--faults", ",".join(FAULTS)]
    cmd += ["--getpages", str(GETPAGES), "--rate", str(RATE), "--kill-after", "4", "--timeout", "300"]
    cmd += ["--maintenance", "end"]  # one maintenance cycle after the trials: their hours and days checked too
    cmd += ["--settle", "5"]  # a doubled pane shows within a checkpoint or two (2 s here)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=ROOT)
    lines = r.stdout.strip().splitlines()
    try:
        last = json.loads(lines[-1])
    except (IndexError, ValueError) as exc:
        raise AssertionError(
            f"chaos ended without its JSON line (rc {r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}"
        ) from exc
    trials = last["trials"]
    assert [t["fault"] for t in trials] == list(FAULTS), r.stdout
    for t in trials:
        # The generator's count per pool is the truth; every pool of the scenario was sent to.
        assert t["error"] is None, t
        assert sum(t["sent"].values()) == t["produced"] and t["produced"] >= GETPAGES, t
        assert t["in_iceberg_by_pool"] == t["sent"], (t["fault"], r.stdout)
        assert t["in_hours_by_pool"] == t["in_days_by_pool"] == t["sent"], (t["fault"], r.stdout)
        assert t["dead_lettered"] == 0, t
        assert t["complete_seconds"] is not None and t["up_seconds"] is not None, t
    assert (last["lost_getpages"], last["extra_getpages"], last["dead_lettered"]) == (0, 0, 0), r.stdout
    assert last["all_exact"] is True and r.returncode == 0, r.stdout + r.stderr[-2000:]
