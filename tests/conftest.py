"""Test settings: the stack under test runs on its own ports and folders.

So `make test` neither disturbs nor trusts a stack a user already runs; the
download cache is shared. The environment is set before anything reads settings.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_VAR = ROOT / "var" / "test"
TEST_PORTS = {
    "KAFKA": 19092,
    "KAFKA_CONTROLLER": 19093,
    "KAFKA_INTERNAL": 19094,
    "REGISTRY": 18081,
    "REGISTRY_MANAGEMENT": 18091,
    "POSTGRES": 15433,
    "FLINK_REST": 18082,
    "FLINK_RPC": 16123,
    "TRINO": 18080,
    "TRINO_INTERNAL": 18083,
    "DASHBOARD": 18070,
}


def ports_moved(offset: int) -> dict[str, int]:
    """TEST_PORTS moved by `offset`: a second launcher home's own ports, beside the session's
    stack. Keep them below the kernel's ephemeral range (32768-60999): an outgoing connection
    may hold any port in it for a while (test_s3's stack once found its Kafka port so taken)."""
    moved = {k: v + offset for k, v in TEST_PORTS.items()}
    assert max(moved.values()) < 32768, moved
    return moved


os.environ.update({f"POOLSIGHT_{k}_PORT": str(v) for k, v in TEST_PORTS.items()})
os.environ.update(
    {
        "POOLSIGHT_DATA_DIR": str(TEST_VAR / "data"),
        "POOLSIGHT_RUN_DIR": str(TEST_VAR / "run"),
        "POOLSIGHT_LOG_DIR": str(TEST_VAR / "log"),
    }
)
os.environ.pop("POOLSIGHT_CONFIG", None)
# The session's stack runs Kafka as shipped (plaintext on loopback); test_cluster.py's 3 brokers
# run with SASL_SSL, reached as an external Kafka (TLS on every test's traffic cost about 10 minutes).
os.environ.pop("POOLSIGHT_KAFKA_SECURITY", None)
# Ctrl-C as an interactive run has it, for the tests that interrupt (a collector, a block) and
# the processes they start: a shell that starts pytest in the background hands it SIGINT ignored,
# and an ignored signal stays ignored in every child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# The alert service's scans would compete with the jobs for the 2 cores all session long; the
# alert tests evaluate on demand (`poolsight alerts evaluate`), the service still starts and beats.
os.environ["POOLSIGHT_ALERTS_EVERY"] = "900"
os.environ["POOLSIGHT_ADVICE_EVERY"] = "3600"  # likewise: `poolsight advise --evaluate` on demand
# Likewise the maintenance service (`poolsight history` on demand); and nothing expires: tests
# replay workloads whose event times may lie far in the past.
os.environ["POOLSIGHT_MAINTENANCE_EVERY"] = "3600"
# The page tables likewise: tests/stack/test_dashboard.py refreshes them when it asks.
os.environ["POOLSIGHT_PAGE_REFRESH_EVERY"] = "0"
os.environ["POOLSIGHT_HISTORY_PANE_DAYS"] = "keep"
os.environ["POOLSIGHT_HISTORY_HOUR_MONTHS"] = "keep"

POOLSIGHT = [sys.executable, "-m", "poolsight.cli"]


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed again on return)."""
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """`n` different loopback ports nothing listens on: each held until all are picked (one
    free_port after another may hand out the same port twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def poolsight(*args: str, env: dict[str, str] | None = None, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    """Run the real CLI, as a user would."""
    return subprocess.run(
        [*POOLSIGHT, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


@pytest.fixture(scope="session")
def stack() -> Iterator[None]:
    """The whole stack, started by the launcher; stopped at the end of the session."""
    # Each module submits its own jobs: none an interrupted session left are resumed.
    r = poolsight("up", "--no-resume-jobs")
    assert r.returncode == 0, f"poolsight up failed:\n{r.stdout}\n{r.stderr}"
    yield
    r = poolsight("down")
    assert r.returncode == 0, r.stderr


STACK_DIR = Path(__file__).resolve().parent / "stack"


# The stack modules' order. The session's jobs (tests/stack/conftest.py `jobs`) cost a quarter
# of a core while they run, idle or not (a checkpoint every 2 s): the modules that need them come
# first; then test_chaos and test_evolution, which stop them; then the modules that need none,
# while they are stopped (test_cluster's 3 brokers and 2 TaskManagers beside the session's stack
# most of all); then the rest, the jobs submitted again once by the first that needs them (a
# submission is ~25 s of the 2 cores). test_evolution's changed schema is what the later modules
# run on. A module not named here runs after these, in file order.
STACK_ORDER = (
    *("test_advice.py", "test_alerts.py", "test_dashboard.py"),  # the session's jobs
    *("test_chaos.py", "test_evolution.py"),  # stop them
    *("test_cluster.py", "test_history.py", "test_ingest_stack.py", "test_launcher_failures.py"),  # need none
    *("test_grafana.py", "test_pipeline.py", "test_s3.py", "test_stack.py"),
)


def _module_order(items: list[pytest.Item]) -> None:
    """The stack's items in STACK_ORDER (each module's own order kept), in the places the
    stack's items had; every other item where it was."""
    at = [k for k, i in enumerate(items) if STACK_DIR in Path(str(i.path)).parents]
    rank = {name: n for n, name in enumerate(STACK_ORDER)}
    ordered = sorted((items[k] for k in at), key=lambda i: rank.get(Path(str(i.path)).name, len(rank)))
    for k, item in zip(at, ordered, strict=True):
        items[k] = item


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/stack/ needs the services, and nothing else may: `make unit`
    (-m 'not stack') then runs every test that needs none."""
    _module_order(items)
    for item in items:
        in_stack = STACK_DIR in Path(str(item.path)).parents
        if in_stack:
            item.add_marker(pytest.mark.stack)
        elif item.get_closest_marker("stack") is not None:
            raise pytest.UsageError(f"{item.nodeid} needs the stack: move it under tests/stack/")
