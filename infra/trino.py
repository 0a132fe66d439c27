"""The one road to Trino: every part of the product that runs a statement connects here.

Addresses and users come from the settings (`Settings.trino_url`, `trino_user`; the reader
`poolsight_reader` for the UIs); statements are parameterised (qmark style) and answered as
typed rows. Authentication, when Trino asks for it, is added here and nowhere else.
"""

from __future__ import annotations

import re
import time
from typing import Any, NamedTuple

import requests
import trino
import trino.auth
import trino.exceptions

from poolsight.infra.config import Settings
from poolsight.infra.endpoints import external_trino_password, url_host_port
from poolsight.infra.trino_secrets import certificate_path, embedded_password
from poolsight.names import TRINO_READER_USER

# Trino's Iceberg JDBC catalog keeps connections to PostgreSQL in a pool: after PostgreSQL
# restarts, a statement can meet a dead one once ("Failed to execute exists query") before the
# pool replaces it; and a commit can lose a race with a running job's checkpoint. An idempotent
# statement is run again on these errors (fetch_idempotent).
RETRYABLE = ("GENERIC_INTERNAL_ERROR", "ICEBERG_COMMIT_ERROR")
RETRIES = 5
# The messages of that dead pooled connection (Trino's words in `make chaos`'s logs). Any read meets
# them too (the alerts and advice services' first cycle after a PostgreSQL restart failed on the
# first): a read is always safe to run again, so `fetch` retries one on these.
STALE_CATALOG = (
    "Cannot check and eventually update SQL schema",
    "Failed to execute exists query",
    "Cannot cast org.postgresql.util.PSQLException to java.sql.SQLTransientException",
)
STALE_RETRIES = 2
_READ = re.compile(r"\s*(SELECT|WITH|SHOW|DESCRIBE|VALUES)\b", re.IGNORECASE)

QueryError = trino.exceptions.TrinoQueryError
UserError = trino.exceptions.TrinoUserError


# Each statement's `source` as Trino's query list (system.runtime.queries, its web UI) shows it:
# the process that sent it, so whoever watches Trino sees which service loads it. Set once at
# start by the process's entry (client_source); "poolsight" for the command line.
_SOURCE = ["poolsight"]


def client_source(name: str) -> None:
    """Name this process's statements for Trino (e.g. poolsight-advice)."""
    _SOURCE[0] = name


class Rows(NamedTuple):
    """A statement's answer: (name, Trino type) per column, and the rows."""

    columns: list[tuple[str, str]]
    rows: list[list[Any]]

    def dicts(self) -> list[dict[str, Any]]:
        names = [c for c, _ in self.columns]
        return [dict(zip(names, r, strict=True)) for r in self.rows]


def credentials(s: Settings, user: str) -> tuple[str | None, bool | str]:
    """(password, what to verify the server's certificate with) of `user`. Over HTTPS: the
    embedded Trino's generated password and its certificate, or an external one's password
    (environment or file) and CA file (else the system's trust store). Over HTTP: none."""
    if not s.trino_url.startswith("https://"):
        return None, True
    if "trino" in s.external:
        password = external_trino_password(s.endpoints, reader=user == TRINO_READER_USER)
        ca = s.endpoints.trino_ca_file
        return password, str(ca) if ca is not None else True
    certificate = certificate_path(s)
    # None yet: the embedded Trino never started in this home, so whatever answers is refused by
    # the system's trust, and one that does not answer is named as such (not a missing file).
    return embedded_password(s, user), str(certificate) if certificate.exists() else True


class _Session(requests.Session):
    """requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE (set on many machines) replace a
    session's own trust: the certificate given here must win, or the embedded Trino's
    self-signed one is refused."""

    def merge_environment_settings(self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any) -> Any:
        settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
        if verify is None:  # not given for the request: the session's
            settings["verify"] = self.verify
        return settings


def trino_connection(s: Settings, *, schema: str | None = None, user: str | None = None) -> Any:
    """A DB-API connection to the configured Trino as `user` (default: s.trino_user, the writer)."""
    host, port = url_host_port(s.trino_url)
    name = user or s.trino_user
    password, verify = credentials(s, name)
    return trino.dbapi.connect(  # type: ignore[no-untyped-call]
        host=host,
        port=port,
        http_scheme=s.trino_url.split("://")[0],
        auth=trino.auth.BasicAuthentication(name, password) if password else None,
        http_session=_session(verify),
        user=name,
        source=_SOURCE[0],
        catalog="iceberg",
        schema=schema,
        request_timeout=s.connect_timeout,
        # EXECUTE IMMEDIATE (Trino 418 and later): without this the client first probes for it, a
        # statement more per process, and on a Trino that does not answer says so twice.
        legacy_prepared_statements=False,
    )


def _session(verify: bool | str) -> requests.Session:
    session = _Session()
    session.verify = verify
    return session


def fetch(cursor: Any, sql: str, params: tuple[Any, ...] | list[Any] | dict[str, Any] = ()) -> list[list[Any]]:
    """Run one statement on an open cursor and read every row; a read that meets the catalog's
    dead connection (STALE_CATALOG) is run again."""
    for attempt in range(STALE_RETRIES + 1):
        try:
            return _run(cursor, sql, params)
        except QueryError as exc:
            if attempt == STALE_RETRIES or not _READ.match(sql) or not stale_catalog(exc):
                raise
            time.sleep(1.0)
    raise AssertionError("unreachable")


def _run(cursor: Any, sql: str, params: tuple[Any, ...] | list[Any] | dict[str, Any]) -> list[list[Any]]:
    cursor.execute(sql, params)
    return list(cursor.fetchall())


def stale_catalog(exc: QueryError) -> bool:
    """Whether Trino failed on the Iceberg catalog's dead PostgreSQL connection."""
    return exc.error_name == "GENERIC_INTERNAL_ERROR" and any(m in (exc.message or "") for m in STALE_CATALOG)


def fetch_idempotent(cursor: Any, sql: str, params: tuple[Any, ...] | list[Any] | None = None) -> list[list[Any]]:
    """`fetch` of a statement that is safe to run twice (DDL, a backfill UPDATE ... WHERE col IS
    NULL), retried on the passing errors of RETRYABLE."""
    for attempt in range(RETRIES):
        try:
            return _run(cursor, sql, params or ())  # its own retries: not fetch's as well
        except QueryError as exc:
            if exc.error_name not in RETRYABLE or attempt == RETRIES - 1:
                raise
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


def trino_rows(s: Settings, sql: str, params: tuple[Any, ...] = (), *, user: str | None = None) -> Rows:
    """Run one parameterised statement on Trino as `user` (default: the writer, s.trino_user)."""
    with trino_connection(s, user=user) as conn:
        cur = conn.cursor()
        rows = fetch(cur, sql, params)
        return Rows([(str(d[0]), str(d[1])) for d in cur.description or ()], rows)


def unreachable(s: Settings, exc: BaseException) -> str | None:
    """One line for a Trino that did not answer (refused, timed out, name unknown), naming its
    address; None for anything else (a query Trino refused is its own error)."""
    if not isinstance(exc, trino.exceptions.TrinoConnectionError):
        return None
    m = re.search(r"\[Errno -?\d+\] ([^'\")]+)|(Read timed out|timed out)", str(exc))
    why = (m.group(1) or m.group(2)).strip() if m else type(exc).__name__
    return f"Trino at {s.trino_url}: no answer within {s.connect_timeout:g} s ({why})"


def service_errors() -> tuple[type[BaseException], ...]:
    """What Trino unreachable or refusing raises (requests' errors are OSErrors)."""
    return (trino.exceptions.Error, trino.exceptions.HttpError, OSError)


def health_errors() -> tuple[type[BaseException], ...]:
    """What a health check reports as Trino not (yet) ready."""
    return (
        trino.exceptions.TrinoExternalError,
        trino.exceptions.TrinoQueryError,
        trino.exceptions.HttpError,
        OSError,
    )
