"""The dashboard server without Trino, for the modules here that send it requests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from poolsight.dashboards.server import serve
from poolsight.infra.config import load_settings
from tests.conftest import free_port


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """A dashboard on a free port whose Trino port is closed (a data API answers 502)."""
    s = load_settings()
    s = replace(s, ports={**s.ports, "trino": free_port()})  # nothing listens there
    server = serve(s, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
