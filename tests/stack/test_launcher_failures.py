"""What goes wrong at start-up is said clearly and leaves nothing half-started."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from poolsight.infra.config import load_settings
from poolsight.infra.install import install_all
from poolsight.infra.process import port_in_use, read_started
from tests.conftest import ROOT, poolsight, ports_moved

# A second, throw-away launcher home with its own ports (the session's stack may be running).
ISOLATED_PORTS = ports_moved(10_000)


@pytest.fixture
def isolated() -> Iterator[dict[str, str]]:
    home = ROOT / "var" / "test-isolated"  # under the project: PostgreSQL's own account must reach it
    shutil.rmtree(home, ignore_errors=True)
    env = {f"POOLSIGHT_{k}_PORT": str(v) for k, v in ISOLATED_PORTS.items()}
    env.update(
        POOLSIGHT_DATA_DIR=str(home / "data"), POOLSIGHT_RUN_DIR=str(home / "run"), POOLSIGHT_LOG_DIR=str(home / "log")
    )
    yield env
    poolsight("down", env=env)
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.stack
def test_port_taken_is_named_and_nothing_starts(isolated: dict[str, str]) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ISOLATED_PORTS["POSTGRES"]))
        squatter.listen()
        r = poolsight("up", "postgres", env=isolated)
    assert r.returncode == 2
    assert f"port {ISOLATED_PORTS['POSTGRES']} (postgres)" in r.stderr
    assert "POOLSIGHT_POSTGRES_PORT" in r.stderr
    assert read_started(Path(isolated["POOLSIGHT_RUN_DIR"]), "postgres") is None


@pytest.mark.stack
def test_failed_start_stops_what_this_up_started(isolated: dict[str, str]) -> None:
    # Trino's JVM refuses this heap size and exits; PostgreSQL, started first, must be stopped again.
    r = poolsight("up", "trino", env={**isolated, "POOLSIGHT_TRINO_HEAP": "lots"})
    assert r.returncode == 2, r.stderr
    assert "trino exited during start-up" in r.stderr
    assert "stopping postgres (started by this failed `up`)" in r.stderr
    assert not port_in_use(ISOLATED_PORTS["POSTGRES"], load_settings().bind_host)
    run_dir = Path(isolated["POOLSIGHT_RUN_DIR"])
    assert read_started(run_dir, "postgres") is None and read_started(run_dir, "trino") is None


@pytest.mark.stack
def test_second_install_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    install_all(load_settings())  # whatever is missing, fetched now
    monkeypatch.setenv("POOLSIGHT_MAVEN_REPOSITORY", "http://127.0.0.1:9/unreachable")
    inst = install_all(load_settings())
    assert inst.trino_home is not None and inst.kafka_lib is not None  # nothing is configured external
    assert (inst.trino_home / "lib").is_dir() and any(inst.kafka_lib.glob("kafka_*.jar"))
