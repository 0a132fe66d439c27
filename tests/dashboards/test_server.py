"""The dashboard server without Trino: pages, assets and refusals over loopback (no services needed).

Data APIs need Trino (tests/stack/test_dashboard.py); here Trino's port is closed, so they must
answer 502 with the reason, and the health check 503, while pages and assets are served.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from poolsight.dashboards.server import CSP


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_every_page_is_served_with_a_strict_content_security_policy(base: str) -> None:
    for page in ("overview", "pool", "objects", "object", "group", "history", "health"):
        status, headers, body = _get(f"{base}/{page}?source=A&pool=BP1")
        assert status == 200, page
        assert headers["Content-Security-Policy"] == CSP
        assert b'src="/static/app.js"' in body and b"http" not in body  # nothing from another host


def test_assets_come_from_the_server_itself(base: str) -> None:
    status, headers, body = _get(f"{base}/static/vendor/echarts.min.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"echarts" in body[:2000] and len(body) > 500_000
    assert _get(f"{base}/static/app.js")[0] == 200


@pytest.mark.parametrize(
    "path",
    ["/static/../server.py", "/static/vendor/../../../../etc/passwd", "/static/%2e%2e/server.py", "/nope", "/api/x"],
)
def test_nothing_outside_the_asset_folders(base: str, path: str) -> None:
    assert _get(base + path)[0] == 404


def test_without_trino_the_apis_say_why_and_health_fails(base: str) -> None:
    status, _, body = _get(f"{base}/api/overview")
    assert status == 502
    assert "Error" in json.loads(body)["error"] or "refused" in json.loads(body)["error"].lower()
    assert _get(f"{base}/healthz")[0] == 503


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("pool=BP1", "source is required"),
        ("source=A&pool=BP1&range=2y", "range="),
        ("source=A&pool=" + "x" * 201, "longer"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(base: str, query: str, message: str) -> None:
    status, _, body = _get(f"{base}/api/pool?{query}")
    data: dict[str, Any] = json.loads(body)
    assert status == 400 and message in data["error"]
