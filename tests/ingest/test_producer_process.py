"""The producer process: a child's failure is raised in the caller (not a hang), and the child
does not outlive a parent that was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from poolsight.infra.kafka_access import KafkaAccess
from poolsight.ingest.batching import make_batch
from poolsight.ingest.producer_process import ProducerProcess
from tests.conftest import ROOT


def _batch() -> list:  # type: ignore[type-arg]
    n = 10
    return [
        make_batch(
            "S",
            "BP1",
            0,
            np.arange(n) / 1e3,
            np.zeros(n, dtype=np.uint32),
            np.arange(n, dtype=np.uint64),
            np.zeros(n, dtype=np.uint8),
            np.zeros(n, dtype=np.uint8),
            names=["DB.TS"],
        )
    ]


def test_an_unreachable_registry_is_raised_in_the_caller() -> None:
    # Waited for 3 s (a restart delays a producer; REGISTRY_PATIENCE by default), then raised.
    pp = ProducerProcess(KafkaAccess("127.0.0.1:1"), "http://127.0.0.1:1", start_timeout=60, registry_patience=3.0)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"registry http://127\.0\.0\.1:1: registering"):
        for _ in range(100):  # the child dies on the first record; a later call says why
            pp.send_batches(_batch())
        pp.flush(timeout=30)
    assert time.monotonic() - started < 60
    with pytest.raises(RuntimeError, match=r"registry http://127\.0\.0\.1:1"):  # and again, at once
        pp.send_batches(_batch())
    pp.close()  # nothing left to deliver: no second error


CHILD = """
import sys, time
from poolsight.infra.kafka_access import KafkaAccess
from poolsight.ingest.producer_process import ProducerProcess
if __name__ == "__main__":
    pp = ProducerProcess(KafkaAccess("127.0.0.1:1"), "http://127.0.0.1:1")
    print(pp._proc.pid, flush=True)
    time.sleep(600)
"""


def test_the_child_ends_with_a_killed_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.kill(child, 0)  # running
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        # A zombie of init's would still answer kill 0: look at its state.
        try:
            with open(f"/proc/{child}/stat") as fh:
                if fh.read().split(") ", 1)[1].startswith("Z"):
                    return
        except FileNotFoundError:
            return
        time.sleep(0.2)
    pytest.fail(f"producer process {child} still runs after its parent was killed")


def test_a_registry_that_comes_back_within_the_patience_is_waited_for() -> None:
    """A registry restarting (connection refused, then answers) delays the encoder, no error."""
    import http.server
    import json
    import threading

    from poolsight.schemas.wire import AvroEncoder
    from tests.conftest import free_port

    port = free_port()

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # register_schema: {"id": 7}
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"id": 7}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    def serve_later() -> None:
        time.sleep(2.0)  # down for the encoder's first attempts
        server = http.server.HTTPServer(("127.0.0.1", port), Registry)
        server.timeout = 5
        server.handle_request()
        server.server_close()

    t = threading.Thread(target=serve_later, daemon=True)
    t.start()
    started = time.monotonic()
    enc = AvroEncoder(f"http://127.0.0.1:{port}", patience=30.0)
    assert enc.schema_id("pool_stats") == 7
    assert 2.0 <= time.monotonic() - started < 15
    t.join(10)
