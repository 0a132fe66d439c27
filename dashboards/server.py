"""The dashboard's web server: pages, their JSON APIs and static assets, reading Trino as the reader user.

`python -m poolsight.dashboards.server` (the launcher's `dashboard` service). Binds the bind host
(127.0.0.1 unless configured) unless told otherwise. Every asset is served from here (the checkout's
static/ folder and the cached, checksum-verified ECharts): no CDN. Values from the URL reach Trino
only as query parameters.
"""

from __future__ import annotations

import json
import logging
import mimetypes
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from decimal import Decimal
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from poolsight.argtypes import UsageParser, whole
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.install import dashboard_assets
from poolsight.infra.trino import client_source, trino_rows
from poolsight.names import TRINO_READER_USER
from poolsight.sql.compare import compare, workload_change
from poolsight.sql.retention import retention_from

from . import queries
from .auth import Access, access_for
from .cache import ResultCache
from .timerange import BadRequest, name_param, parse_time, time_range

log = logging.getLogger("poolsight.dashboard")
STATIC = Path(__file__).resolve().parent / "static"
PAGES = (
    "overview", "pool", "objects", "object", "group", "history", "checks", "advice", "backups", "purescale", "memory",
    "writes", "health",
)  # fmt: skip
# Scripts and styles only from here; ECharts sets inline styles on its elements.
CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def _json_default(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    raise TypeError(f"not JSON: {type(v).__name__}")


class Reader:
    """Runs parameterised queries (sql/queries/dashboard.sql) on Trino as the read-only user."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def run(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        columns, rows = trino_rows(self.settings, sql, params, user=TRINO_READER_USER)
        names = [name for name, _ in columns]
        return [dict(zip(names, r, strict=True)) for r in rows]


def flink_jobs(settings: Settings) -> list[dict[str, Any]]:
    """The streaming jobs' states from Flink's REST API (GET only); an unreachable Flink is reported."""
    try:
        with urllib.request.urlopen(f"{settings.flink_rest_url}/jobs/overview", timeout=3) as resp:  # noqa: S310
            jobs = json.loads(resp.read())["jobs"]
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        return [{"name": "(Flink)", "state": "UNREACHABLE", "detail": str(exc)}]
    return [
        {
            "name": j.get("name"),
            "state": j.get("state"),
            "started": datetime.fromtimestamp(j["start-time"] / 1000, UTC) if j.get("start-time") else None,
            "duration_s": (j.get("duration") or 0) / 1000,
        }
        for j in sorted(jobs, key=lambda j: (j.get("state") != "RUNNING", j.get("name") or ""))
    ]


class Api:
    """One method per /api/<name>; each takes the URL's parameters."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.reader = Reader(settings)
        self.cache = ResultCache()
        self.retention = retention_from(settings.history)  # which grain answers a range (sql/grain.py)

    @staticmethod
    def _param(params: dict[str, str], name: str) -> str:
        return name_param(params, name) or ""  # required: never empty

    def overview(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.overview(self.reader.run, datetime.now(UTC))

    def pool(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.pool(
            self.reader.run,
            self._param(params, "source"),
            self._param(params, "pool"),
            time_range(params),
            self.cache,
            self.retention,
        )

    def objects(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.objects(
            self.reader.run,
            self._param(params, "source"),
            self._param(params, "pool"),
            time_range(params),
            self.retention,
        )

    def object(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.object_history(
            self.reader.run,
            self._param(params, "source"),
            self._param(params, "pool"),
            self._param(params, "object"),
            time_range(params),
        )

    def history(self, params: dict[str, str]) -> dict[str, Any]:
        source, pool = self._param(params, "source"), self._param(params, "pool")
        ranges = []
        for r in ("a", "b"):
            start = parse_time(f"{r}_from", self._param(params, f"{r}_from"))
            end = parse_time(f"{r}_to", self._param(params, f"{r}_to"))
            if start >= end:
                raise BadRequest(f"{r}_from must be before {r}_to")
            ranges.append((start, end))
        a, b = compare(source, pool, ranges, user=TRINO_READER_USER, retention=self.retention)
        return {
            "source": source,
            "pool": pool,
            "ranges": [_range_json(a), _range_json(b)],
            "similarity": workload_change(a, b),
        }

    def health(self, params: dict[str, str]) -> dict[str, Any]:
        with ThreadPoolExecutor(2) as pool:
            jobs = pool.submit(flink_jobs, self.settings)
            out = queries.data_health(self.reader.run, datetime.now(UTC))
            out["jobs"] = jobs.result()
        return out

    def checks(self, params: dict[str, str]) -> dict[str, Any]:
        source, pool = name_param(params, "source", False), name_param(params, "pool", False)
        return queries.checks(self.reader.run, source, pool, time_range(params))

    def advice(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.advice(self.reader.run, name_param(params, "source", False))

    def group(self, params: dict[str, str]) -> dict[str, Any]:
        return queries.group(
            self.reader.run, self._param(params, "group"), self._param(params, "gbp"), time_range(params), self.cache
        )

    def groups(self, params: dict[str, str]) -> dict[str, Any]:
        # The selector's list and the Group page without a group: a group appears within a minute.
        return {"groups": queries.groups(self.cache.bind(self.reader.run, int(time.time() // 60)))}

    def pools(self, params: dict[str, str]) -> dict[str, Any]:
        # The selector's list: a pool appears within a minute.
        return {"pools": queries.pools(self.cache.bind(self.reader.run, int(time.time() // 60)))}

    def alerts(self, params: dict[str, str]) -> dict[str, Any]:
        return {"alerts": queries.alerts(self.reader.run)}

    def _statistics(self, page: str, params: dict[str, str]) -> dict[str, Any]:
        return queries.statistics_page(self.reader.run, page, name_param(params, "source", False), time_range(params))

    def backups(self, params: dict[str, str]) -> dict[str, Any]:
        return self._statistics("backups", params)

    def purescale(self, params: dict[str, str]) -> dict[str, Any]:
        return self._statistics("purescale", params)

    def memory(self, params: dict[str, str]) -> dict[str, Any]:
        return self._statistics("memory", params)

    def writes(self, params: dict[str, str]) -> dict[str, Any]:
        return self._statistics("writes", params)


def _range_json(r: dict[str, Any]) -> dict[str, Any]:
    """compare()'s dict without the per-object mix keyed by tuples (JSON needs string keys)."""
    out = {k: v for k, v in r.items() if k not in ("mix", "curve")}
    out["curve"] = [
        {"size_factor": f, "hit_ratio": hr, "sync_reads_per_s": sr} for f, (hr, sr) in sorted(r["curve"].items())
    ]
    return out


def make_handler(api: Api, assets: Path, access_: Access | None = None) -> type[BaseHTTPRequestHandler]:
    access = access_ or Access()
    names = (
        "overview", "pool", "objects", "object", "group", "history", "checks", "advice", "health", "alerts", "pools",
        "groups", "backups", "purescale", "memory", "writes",
    )  # fmt: skip
    endpoints: dict[str, Callable[[dict[str, str]], dict[str, Any]]] = {name: getattr(api, name) for name in names}

    class Handler(BaseHTTPRequestHandler):
        server_version = "poolsight-dashboard"

        def log_message(self, format: str, *args: Any) -> None:
            log.info("%s %s", self.address_string(), format % args)

        def _send(self, status: int, body: bytes, content_type: str, cache: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data, default=_json_default).encode(), "application/json")

        def _refuse(self) -> None:
            body = json.dumps({"error": "authentication required"}).encode()
            self.send_response(401 if access.passwords is not None else 403)
            if access.passwords is not None:
                self.send_header("WWW-Authenticate", 'Basic realm="poolsight", charset="UTF-8"')
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def __getattr__(self, name: str) -> Any:
            # Any method but GET (http.server looks for do_<METHOD>): 405, never its 501.
            if name.startswith("do_"):
                return self._not_allowed
            raise AttributeError(name)

        def _not_allowed(self) -> None:
            body = json.dumps({"error": f"{self.command[:20]} is not allowed: the dashboard only reads (GET)"}).encode()
            self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
            self.send_header("Allow", "GET")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            path = url.path.rstrip("/") or "/"
            if path != "/healthz" and access.user({k.lower(): v for k, v in self.headers.items()}) is None:
                self._refuse()
                return
            try:
                query = urllib.parse.parse_qs(url.query, strict_parsing=False, errors="strict")
                params = {k: v[-1] for k, v in query.items()}
            except ValueError as exc:  # not UTF-8 once unescaped (UnicodeDecodeError)
                self._json(400, {"error": f"query string: {exc}"})
                return
            if path == "/":
                self.send_response(HTTPStatus.FOUND)
                self.send_header("Location", "/overview")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path.lstrip("/") in PAGES:
                self._send(200, (STATIC / "page.html").read_bytes(), "text/html; charset=utf-8")
            elif path == "/healthz":
                self._health()
            elif path.startswith("/api/") and path[5:] in endpoints:
                self._api(endpoints[path[5:]], params)
            elif path.startswith("/static/"):
                self._static(path[len("/static/") :])
            else:
                self._json(404, {"error": f"no page {path[:80]}"})

        def _api(self, endpoint: Callable[[dict[str, str]], dict[str, Any]], params: dict[str, str]) -> None:
            t0 = time.monotonic()
            try:
                data = endpoint(params)
            except BadRequest as exc:
                self._json(400, {"error": str(exc)})
                return
            except Exception as exc:  # Trino down or a query failed: the page shows it and retries
                log.exception("API %s failed", self.path)
                self._json(502, {"error": f"{type(exc).__name__}: {str(exc)[:500]}"})
                return
            data["query_seconds"] = round(time.monotonic() - t0, 3)
            self._json(200, data)

        def _health(self) -> None:
            try:
                queries.ask(api.reader.run, "reader_health")
            except Exception as exc:
                self._json(503, {"status": "unhealthy", "trino": f"{type(exc).__name__}: {str(exc)[:200]}"})
                return
            self._json(200, {"status": "ok", "trino": f"reading as {TRINO_READER_USER}"})

        def _static(self, name: str) -> None:
            base, rel = (assets, name[len("vendor/") :]) if name.startswith("vendor/") else (STATIC, name)
            path = (base / rel).resolve()
            if base.resolve() not in path.parents or not path.is_file():  # no ../ out of the folder
                self._json(404, {"error": "no such file"})
                return
            content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if content_type.startswith("text/") or content_type.endswith("javascript"):
                content_type += "; charset=utf-8"
            self._send(200, path.read_bytes(), content_type, cache=base == assets)

    return Handler


def serve(settings: Settings, host: str, port: int) -> ThreadingHTTPServer:
    """The dashboard's server; ConfigError when bound beyond loopback without authentication."""
    access = access_for(host, settings.dashboard_password_file, settings.dashboard_user_header)
    assets = dashboard_assets(settings)
    server = ThreadingHTTPServer((host, port), make_handler(Api(settings), assets, access))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    settings = load_settings()
    p = UsageParser(prog="poolsight.dashboards.server", description=__doc__)
    p.add_argument("--host", default=settings.bind_host, help=f"bind address (default {settings.bind_host})")
    p.add_argument("--port", type=whole(1, 65535, noun="a TCP port"), default=settings.ports["dashboard"])
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    client_source("poolsight-dashboard")
    try:
        server = serve(settings, a.host, a.port)
    except ConfigError as exc:
        print(f"poolsight dashboard: {exc}", file=sys.stderr)
        return 2
    print(f"dashboard at http://{a.host}:{a.port}/ reading Trino {settings.trino_url} as {TRINO_READER_USER}")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
