"""A service that does not answer ends a command within the connect timeout, in one line that names
the service and its address, exit 1: nothing is listening on the ports given here (no stack needed)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, free_ports

STATS = str(ROOT / "tests" / "ingest" / "corpus" / "omegamon" / "seed000_part1.txt")
TIMEOUT = 3


def _run(args: list[str], down: str, tmp_path: Path) -> tuple[int, list[str], float]:
    names = ("KAFKA", "REGISTRY", "TRINO")
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    env = {f"POOLSIGHT_{name}_PORT": str(port) for name, port in ports.items()}
    env["POOLSIGHT_CONNECT_TIMEOUT"] = str(TIMEOUT)
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "poolsight.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**_environ(), **env},
        cwd=tmp_path,
    )
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    return r.returncode, [x.replace(str(ports[down]), "PORT") for x in lines], time.monotonic() - t0


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


@pytest.mark.parametrize(
    ("args", "down", "line"),
    [
        (["ingest", "stats", STATS], "REGISTRY", "poolsight ingest: schema registry at http://127.0.0.1:PORT/"),
        (["generate", "mixed", "--duration", "5"], "REGISTRY", "poolsight generate: schema registry at "),
        (["ingest", "trace", STATS], "REGISTRY", "poolsight ingest: schema registry at "),
        (["report", "DB2P"], "TRINO", "poolsight report: Trino at https://127.0.0.1:PORT: no answer within 3 s"),
        (["compare", "DB2P", "BP1", "--a", "2026-01-01T00:00", "2026-01-01T01:00", "--b", "2026-01-02T00:00",
          "2026-01-02T01:00"], "TRINO", "poolsight compare: Trino at https://127.0.0.1:PORT: no answer within 3 s"),
        (["alerts", "list"], "TRINO", "poolsight alerts: Trino at https://127.0.0.1:PORT: no answer within 3 s"),
        (["advise"], "TRINO", "poolsight advise: Trino at https://127.0.0.1:PORT: no answer within 3 s"),
    ],
)  # fmt: skip
def test_a_service_that_does_not_answer_ends_the_command_in_one_line(
    args: list[str], down: str, line: str, tmp_path: Path
) -> None:
    rc, lines, seconds = _run(args, down, tmp_path)
    assert rc == 1, lines
    assert len(lines) == 1 and lines[0].startswith(line), lines
    assert seconds < 4 * TIMEOUT + 10, seconds


def test_kafka_that_does_not_answer_is_named_after_the_connect_timeout(tmp_path: Path) -> None:
    """The registry answers here (a stand-in that lists no subjects), Kafka does not: the collector
    waits the connect timeout for a broker, then says so in one line (librdkafka's own log of the
    refused connections: once, not once a second)."""
    import http.server
    import threading

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"[]")

        def log_message(self, *a: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kafka = free_port()
    env = {
        **_environ(),
        "POOLSIGHT_REGISTRY_URL": f"http://127.0.0.1:{server.server_address[1]}",
        "POOLSIGHT_KAFKA_BOOTSTRAP": f"127.0.0.1:{kafka}",
        "POOLSIGHT_CONNECT_TIMEOUT": str(TIMEOUT),
    }
    try:
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "poolsight.cli", "ingest", "stats", STATS],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
        )  # fmt: skip
        seconds = time.monotonic() - t0
    finally:
        server.shutdown()
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 1, lines
    assert lines[-1] == (
        f"poolsight ingest: Kafka at 127.0.0.1:{kafka}: no broker answered within 3 s "
        "(Failed to get metadata: Local: Broker transport failure)"
    ), lines
    assert len(lines) <= 3, lines  # librdkafka's refused connection, said once
    assert TIMEOUT <= seconds < TIMEOUT + 10, seconds
