"""What the stack tests share: Trino queries and the streaming jobs as the tests submit them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_rows
from tests.conftest import poolsight

# Long enough that a kill can land between the last checkpoint and the flush; short enough that
# a generated workload's last pane is written soon after the generator stops.
IDLE_FLUSH = 15


def query(sql: str, params: tuple[Any, ...] = (), user: str | None = None) -> list[Any]:
    """The rows of one parameterised statement (as `user`, else the writer)."""
    s = load_settings()
    return trino_rows(s, sql, params, user=user)[1] if user else trino_rows(s, sql, params)[1]


# The jobs as the stack tests run them: checkpoints every 2 s; --check-panes 2: a prediction
# is checked over the 2 whole panes after an -ALTER.
# --mode exact: these tests hold the stream to the offline exact simulation; the default (auto,
# fixed-size SHARDS) is exact only below its sample budget (tests/simulator/test_auto_mode.py).
# --group-sample 1 likewise for the data-sharing group, which the generator's GBP checks counter
# for counter: auto samples the scenario's GBP1 at 0.2, and a sample holding or missing a few of
# the hottest pages moved one interval's GBP hit ratio by 10 points in one run (docs/simulator.md).
# The data-sharing group the jobs simulate together (the data-sharing scenario's run in
# test_pipeline.py sends as these members, in this group): learned from the group name their
# pool attributes carry, not given to the jobs.
# A session's own names: gbp_stats is append-only, and the test stack keeps its data.
_TAG = uuid.uuid4().hex[:4].upper()
GROUP, GROUP_MEMBERS = f"DSG{_TAG}", (f"DSA{_TAG}", f"DSB{_TAG}")
GBP2_REBUILT_AT = 120  # seconds of event time: a pane and statistics interval boundary
SUBMIT = (
    "jobs", "submit", "--checkpoint-seconds", "2", "--idle-flush", str(IDLE_FLUSH), "--check-panes", "2",
    "--mode", "exact", "--group-sample", "1",
)  # fmt: skip


def _running() -> set[str]:
    from poolsight.flink_jobs.submit import JOBS, list_jobs

    names = {name for _, name in JOBS.values()}
    return {j["name"] for j in list_jobs(load_settings()) if j["name"] in names and j["state"] == "RUNNING"}


@pytest.fixture(scope="session")
def session_jobs() -> Iterator[None]:
    """The streaming jobs, submitted afresh once a session (modules keep their keys apart by
    their own members) and cancelled at its end."""
    poolsight("jobs", "cancel", "--all", "--no-savepoint")
    r = poolsight(*SUBMIT, "--fresh", timeout=600)
    assert r.returncode == 0, f"jobs submit failed:\n{r.stdout}\n{r.stderr}"
    yield
    poolsight("jobs", "cancel", "--all", "--no-savepoint")


@pytest.fixture(scope="module")
def jobs(session_jobs: None) -> None:
    """The session's jobs, running: submitted again, from their last checkpoint, when a module
    before this one stopped them (test_chaos runs jobs of its own). A submission costs half a
    minute of the 2 cores: modules share one where they can."""
    if len(_running()) < 2:
        poolsight("jobs", "cancel", "--all", "--no-savepoint")
        r = poolsight(*SUBMIT, timeout=600)
        assert r.returncode == 0, f"jobs submit failed:\n{r.stdout}\n{r.stderr}"
