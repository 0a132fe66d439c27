"""A few hundred malformed and hostile requests to the dashboard's APIs: each is a 400 naming the
parameter (or a 405 for a method that is not GET), never a 5xx, and none reaches Trino (its
port is closed here: a request that got through would answer 502). Names that are well formed
but hostile (SQL fragments, unknown pools) are sent to a real Trino in tests/stack/test_dashboard.py."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator

import pytest

TIMES = {
    "a_from": "2026-11-20T06:00",
    "a_to": "2026-11-20T07:00",
    "b_from": "2026-11-21T06:00",
    "b_to": "2026-11-21T07:00",
}
# Each API with parameters: the ones it needs (well formed), and whether it reads a time range.
APIS: dict[str, tuple[dict[str, str], bool]] = {
    "pool": ({"source": "S1", "pool": "BP1"}, True),
    "objects": ({"source": "S1", "pool": "BP1"}, True),
    "object": ({"source": "S1", "pool": "BP1", "object": "APP.ORDERS"}, True),
    "group": ({"group": "DSNCAT", "gbp": "GBP1"}, True),
    "history": ({"source": "S1", "pool": "BP1", **TIMES}, False),
    "checks": ({"source": "S1", "pool": "BP1"}, True),
    "advice": ({"source": "S1"}, False),
    "backups": ({"source": "S1"}, True),
    "purescale": ({"source": "S1"}, True),
    "memory": ({"source": "S1"}, True),
    "writes": ({"source": "S1"}, True),
}
OPTIONAL = {"checks", "advice", "backups", "purescale", "memory", "writes"}  # their names may be absent
BAD_NAMES = ["x" * 201, "y" * 5000, "BP1\x00", "BP1\n", "\x1b[31mBP1", "BP\x7f1", "BP1\r\nX-Injected: 1", "\u2028BP1"]
BAD_TIMES = [
    "yesterday", "2026-13-45", "2026-11-20T25:00", "0001-01-01", "9999-12-31T23:59", "99999999999999999999999",
    "-1", "1e12", "NaN", "\u00b2\u00b3\u00b9", "2026-11-20'; DROP TABLE x; --", "", "1795161600000' OR '1'='1",
]  # fmt: skip
BAD_RANGES = ["2y", "1h'; DROP TABLE iceberg.poolsight.pool_pane; --", "0", "-1h", "1H", "\x00", "1h" * 100]


def _cases() -> Iterator[tuple[str, dict[str, str], str]]:
    """(api, parameters, the parameter the answer must name)."""
    for api, (good, ranged) in APIS.items():
        for name in good:
            if name in TIMES:
                for bad in BAD_TIMES:
                    yield api, {**good, name: bad}, name if bad else f"{name} is required"
                continue
            if api not in OPTIONAL:
                yield api, {k: v for k, v in good.items() if k != name}, f"{name} is required"
            for bad in BAD_NAMES:
                yield api, {**good, name: bad}, name
        if ranged:
            for bad in BAD_RANGES:
                yield api, {**good, "range": bad}, "range="
            for key in ("from", "to"):
                for bad in BAD_TIMES[:-2]:
                    if bad:
                        yield api, {**good, key: bad}, key
            yield api, {**good, "from": "2026-11-21", "to": "2026-11-20"}, "from must be before to"
    yield "history", {**APIS["history"][0], "a_from": TIMES["a_to"]}, "a_from must be before a_to"


CASES = list(_cases())


@pytest.fixture(scope="module")
def port(base: str) -> int:
    """The dashboard of conftest.py (Trino's port closed), by its port."""
    return int(base.rsplit(":", 1)[1])


def _ask(port: int, method: str, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_there_are_a_few_hundred() -> None:
    assert len(CASES) > 400, len(CASES)


def test_each_malformed_parameter_is_a_400_that_names_it(port: int) -> None:
    wrong = []
    for api, params, named in CASES:
        status, body = _ask(port, "GET", f"/api/{api}?{urllib.parse.urlencode(params)}")
        error = json.loads(body).get("error", "") if body.startswith(b"{") else body[:80].decode("latin-1")
        if status != 400 or named not in error:
            wrong.append((api, {k: v[:30] for k, v in params.items()}, status, error[:120]))
    assert not wrong, f"{len(wrong)} of {len(CASES)}: {wrong[:10]}"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND"])
def test_every_method_but_get_is_refused_with_405(port: int, method: str) -> None:
    for path in ("/api/pool?source=S1&pool=BP1", "/overview", "/healthz", "/nope"):
        status, body = _ask(port, method, path)
        assert status == 405, (method, path, status)
        assert (body == b"") if method == "HEAD" else (b"only reads" in body)


@pytest.mark.parametrize(
    "raw",
    [
        "/api/pool?source=S1&pool=%00",
        "/api/pool?source=S1&pool=%C0%AF",  # overlong UTF-8: not UTF-8, refused
        "/api/pool?source=%FF%FE&pool=BP1",
        "/api/pool?" + "&".join(f"k{i}=v" for i in range(2000)) + "&pool=" + "z" * 300 + "&source=S1",
    ],
)
def test_odd_encodings_are_400s_or_reach_no_one(port: int, raw: str) -> None:
    status, body = _ask(port, "GET", raw)
    # A well-formed name after unescaping would go to Trino (closed here: 502); these must not.
    assert status == 400, (raw[:60], status, body[:200])
