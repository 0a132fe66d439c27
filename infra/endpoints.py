"""External endpoints: services that run elsewhere, and the bind address of those that do not.

Each address in the `[endpoints]` table of poolsight.toml (or its POOLSIGHT_* variable, which
wins; an empty variable means "embedded") marks that service as external: `poolsight up` does
not start it, every client uses the address given. Unset, the launcher's embedded service on
the bind host is used. Passwords never come from the file: only from the environment or a
file path (catalog_password_file).
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# [endpoints] key -> environment variable (the same name, upper case, POOLSIGHT_ first).
KEYS = (
    "kafka_bootstrap",
    "kafka_security_protocol",
    "kafka_sasl_mechanism",
    "kafka_user",
    "kafka_password_file",
    "kafka_ca_file",
    "registry_url",
    "registry_user",
    "registry_password_file",
    "registry_ca_file",
    "flink_rest_url",
    "trino_url",
    "trino_user",
    "trino_password_file",
    "trino_reader_password_file",
    "trino_ca_file",
    "catalog_uri",
    "catalog_user",
    "catalog_password_file",
    "connect_timeout",
)
DEFAULT_CONNECT_TIMEOUT = 30.0  # seconds a command waits for a service that does not answer
PASSWORD_ENV = "POOLSIGHT_CATALOG_PASSWORD"  # noqa: S105 (the variable's name, not a password)
# An external Trino's passwords, for the writer (trino_user) and the reader (the UIs): the
# environment or the *_password_file settings, never the config file itself.
TRINO_PASSWORD_ENV = "POOLSIGHT_TRINO_PASSWORD"  # noqa: S105 (as above)
TRINO_READER_PASSWORD_ENV = "POOLSIGHT_TRINO_READER_PASSWORD"  # noqa: S105 (as above)
REGISTRY_PASSWORD_ENV = "POOLSIGHT_REGISTRY_PASSWORD"  # noqa: S105 (an external registry's; as above)
KAFKA_PASSWORD_ENV = "POOLSIGHT_KAFKA_PASSWORD"  # noqa: S105 (an external Kafka's SASL password; as above)
# [kafka].security of the embedded Kafka: the first is the default (infra/kafka_secrets.py).
KAFKA_SECURITY = ("plaintext", "sasl_ssl")
KAFKA_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
KAFKA_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")
DEFAULT_BIND_HOST = "127.0.0.1"  # what the embedded services bind unless [bind] host says otherwise
_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")


class ConfigError(Exception):
    """A setting that cannot be used, with the name of the setting (config.py re-exports it)."""


class Unreachable(Exception):
    """A service a command needs did not answer within the connect timeout ([endpoints]
    connect_timeout): one line naming the service and its address (config.py re-exports it)."""


@dataclass(frozen=True)
class JdbcTarget:
    host: str
    port: int
    database: str
    params: dict[str, str]


@dataclass(frozen=True)
class Endpoints:
    """The configured addresses; empty means the embedded service."""

    kafka: tuple[str, ...] = ()  # host:port, each
    kafka_protocol: str = "PLAINTEXT"  # an external Kafka's security.protocol (KAFKA_PROTOCOLS)
    kafka_mechanism: str = ""  # its SASL mechanism (KAFKA_MECHANISMS), with a SASL_* protocol
    kafka_user: str = ""
    kafka_password_file: Path | None = None  # the SASL password (or KAFKA_PASSWORD_ENV)
    kafka_ca_file: Path | None = None  # the CA its brokers' certificates are checked against (PEM)
    registry: str = ""  # the Confluent-compatible API's base URL
    registry_user: str = ""  # HTTP basic authentication, with the password in a file or REGISTRY_PASSWORD_ENV
    registry_password_file: Path | None = None
    registry_ca_file: Path | None = None  # the CA its HTTPS certificate is checked against (PEM)
    flink_rest: str = ""  # http://host:port
    trino: str = ""  # http(s)://host:port
    trino_user: str = ""
    trino_password_file: Path | None = None  # the writer's password (or TRINO_PASSWORD_ENV)
    trino_reader_password_file: Path | None = None  # the reader's (or TRINO_READER_PASSWORD_ENV)
    trino_ca_file: Path | None = None  # the CA that signed an external Trino's certificate (PEM)
    catalog: str = ""  # jdbc:postgresql://host:port/db, or an Iceberg REST catalog's http(s):// URI
    catalog_user: str = ""
    catalog_password_file: Path | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    @property
    def catalog_is_rest(self) -> bool:
        return self.catalog.startswith(("http://", "https://"))

    def external(self) -> frozenset[str]:
        """Names (infra/services.py SERVICES) of the services configured as external."""
        out = set()
        if self.kafka:
            out.add("kafka")
        if self.registry:
            out.add("registry")
        if self.flink_rest:  # a cluster elsewhere: its TaskManagers are its own
            out |= {"flink-jobmanager", "flink-taskmanager"}
        if self.trino:
            out.add("trino")
        if self.catalog:  # the catalog replaces the embedded PostgreSQL
            out.add("postgres")
        return frozenset(out)


def hostport(host: str, port: int) -> str:
    """host:port, with an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _check_host(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOSTNAME.match(host):
            raise ConfigError(f"{host!r} is not a host name or IP address") from None
    return host


def _split_hostport(text: str) -> tuple[str, int]:
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)|([^:\[\]]+):(\d+)", text.strip())
    if not m:
        raise ConfigError(f"{text!r} is not host:port")
    host, port = (m[1], m[2]) if m[1] else (m[3], m[4])
    if not 1 <= int(port) <= 65535:
        raise ConfigError(f"{text!r}: port out of range")
    return _check_host(host), int(port)


def url_host_port(url: str) -> tuple[str, int]:
    """An http(s) URL's host and port (80 or 443 when it names none)."""
    parts = urllib.parse.urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def _url(raw: str, *, schemes: tuple[str, ...], path: bool) -> str:
    """A checked URL, without a trailing slash."""
    url = raw.strip().rstrip("/")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError as exc:
        raise ConfigError(f"{raw!r}: {exc}") from None
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(f"{raw!r} is not a {' or '.join(s + '://' for s in schemes)} URL with a host")
    if parts.username or parts.password:
        raise ConfigError(f"{raw!r}: credentials in a URL are not supported (and would be shown by `status`)")
    if parts.query or parts.fragment or (parts.path and not path):
        raise ConfigError(f"{raw!r}: give only {parts.scheme}://host:port, no path or query")
    _check_host(parts.hostname)
    return url


def jdbc_target(url: str) -> JdbcTarget:
    """The parts of a jdbc:postgresql:// URL (port 5432 when it names none)."""
    if not url.startswith("jdbc:postgresql://"):
        raise ConfigError(f"{url!r} is neither jdbc:postgresql://host:port/database nor http(s)://")
    parts = urllib.parse.urlsplit(url.removeprefix("jdbc:"))
    try:
        port = parts.port or 5432
    except ValueError as exc:
        raise ConfigError(f"{url!r}: {exc}") from None
    database = parts.path.lstrip("/")
    if not parts.hostname or not database or "/" in database:
        raise ConfigError(f"{url!r}: expected jdbc:postgresql://host:port/database")
    params = dict(urllib.parse.parse_qsl(parts.query))
    if parts.username or parts.password or "password" in params or "user" in params:
        raise ConfigError(f"{url!r}: give the user in catalog_user, the password in {PASSWORD_ENV}")
    return JdbcTarget(_check_host(parts.hostname), port, database, params)


def bind_host(raw: str) -> str:
    """The address every embedded service listens on and advertises: one address, not a wildcard
    (Kafka and Trino hand it out to their clients)."""
    host = _check_host(raw.strip())
    try:
        wildcard = ipaddress.ip_address(host).is_unspecified
    except ValueError:  # a host name
        wildcard = False
    if wildcard:
        raise ConfigError(f"{host!r} binds every interface and cannot be advertised: give one address")
    return host


def _parse(key: str, raw: Any) -> Any:
    if key == "connect_timeout":
        try:
            seconds = float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{raw!r} is not a number of seconds") from None
        if not 0 < seconds <= 3600:
            raise ConfigError(f"{raw!r}: between 0 and 3600 seconds")
        return seconds
    if key == "kafka_bootstrap":
        items = raw if isinstance(raw, list) else str(raw).split(",")
        return tuple(hostport(*_split_hostport(str(item))) for item in items if str(item).strip())
    if not isinstance(raw, str):
        raise ConfigError(f"{raw!r} is not a string")
    if key == "registry_url":
        return _url(raw, schemes=("http", "https"), path=True)
    if key == "flink_rest_url":  # PyFlink takes an address and a port: no TLS, no path
        return _url(raw, schemes=("http",), path=False)
    if key == "trino_url":
        return _url(raw, schemes=("http", "https"), path=False)
    if key == "catalog_uri":
        if raw.startswith(("http://", "https://")):
            return _url(raw, schemes=("http", "https"), path=True)
        jdbc_target(raw.strip())
        return raw.strip()
    if key == "kafka_security_protocol":
        return _choice(raw, KAFKA_PROTOCOLS)
    if key == "kafka_sasl_mechanism":
        return _choice(raw, KAFKA_MECHANISMS)
    if key.endswith("_file"):
        return Path(raw).expanduser() if raw.strip() else None
    if not re.fullmatch(r"[A-Za-z0-9_.@-]+", raw):
        raise ConfigError(f"{raw!r} is not a user name")
    return raw


def _choice(raw: str, allowed: tuple[str, ...]) -> str:
    value = raw.strip().upper()
    if value not in allowed:
        raise ConfigError(f"{raw!r} is not one of {', '.join(allowed)}")
    return value


def load_endpoints(table: dict[str, Any], reader_user: str) -> Endpoints:
    """Endpoints from the [endpoints] table (its keys already checked: settings_check.py) and the
    environment (which wins). Raises ConfigError naming the setting and the bad value."""
    values: dict[str, Any] = {}
    for key in KEYS:
        env = f"POOLSIGHT_{key.upper()}"
        raw = os.environ[env] if env in os.environ else table.get(key, "")
        if raw in ("", []):
            continue
        try:
            values[key] = _parse(key, raw)
        except ConfigError as exc:
            raise ConfigError(f"{env} / [endpoints].{key}: {exc}") from None
    if values.get("trino_user") == reader_user:
        raise ConfigError(
            f"POOLSIGHT_TRINO_USER / [endpoints].trino_user: {reader_user!r} is the read-only user; "
            "the product writes as this user"
        )
    kafka_protocol = values.get("kafka_security_protocol", "PLAINTEXT")
    sasl = kafka_protocol.startswith("SASL_")
    if sasl != ("kafka_sasl_mechanism" in values) or sasl != ("kafka_user" in values):
        raise ConfigError(
            "POOLSIGHT_KAFKA_SECURITY_PROTOCOL / [endpoints].kafka_security_protocol: a SASL_* protocol "
            "takes kafka_sasl_mechanism and kafka_user (and the password in "
            f"{KAFKA_PASSWORD_ENV} or kafka_password_file); another protocol takes neither"
        )
    if ("registry_user" in values or "registry_ca_file" in values) and "registry_url" not in values:
        raise ConfigError(
            "POOLSIGHT_REGISTRY_USER / [endpoints].registry_user, registry_ca_file: for an external schema "
            "registry (registry_url); the embedded one listens on the bind host only"
        )
    if "registry_password_file" in values and "registry_user" not in values:
        raise ConfigError(
            "POOLSIGHT_REGISTRY_PASSWORD_FILE / [endpoints].registry_password_file: give registry_user too"
        )
    if "kafka_security_protocol" in values and "kafka_bootstrap" not in values:
        raise ConfigError(
            "POOLSIGHT_KAFKA_SECURITY_PROTOCOL / [endpoints].kafka_security_protocol: for an external Kafka "
            "(kafka_bootstrap); the embedded one is secured by [kafka].security"
        )
    return Endpoints(
        kafka=values.get("kafka_bootstrap", ()),
        kafka_protocol=kafka_protocol,
        kafka_mechanism=values.get("kafka_sasl_mechanism", ""),
        kafka_user=values.get("kafka_user", ""),
        kafka_password_file=values.get("kafka_password_file"),
        kafka_ca_file=values.get("kafka_ca_file"),
        registry=values.get("registry_url", ""),
        registry_user=values.get("registry_user", ""),
        registry_password_file=values.get("registry_password_file"),
        registry_ca_file=values.get("registry_ca_file"),
        flink_rest=values.get("flink_rest_url", ""),
        trino=values.get("trino_url", ""),
        trino_user=values.get("trino_user", ""),
        trino_password_file=values.get("trino_password_file"),
        trino_reader_password_file=values.get("trino_reader_password_file"),
        trino_ca_file=values.get("trino_ca_file"),
        catalog=values.get("catalog_uri", ""),
        catalog_user=values.get("catalog_user", ""),
        catalog_password_file=values.get("catalog_password_file"),
        connect_timeout=values.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
    )


def external_catalog_password(e: Endpoints) -> str:
    """An external JDBC catalog's password: POOLSIGHT_CATALOG_PASSWORD, else the file named by
    catalog_password_file. Asked only by what connects, so commands that never touch the
    catalog run without it."""
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    if e.catalog_password_file is not None:
        try:
            return e.catalog_password_file.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"POOLSIGHT_CATALOG_PASSWORD_FILE / [endpoints].catalog_password_file: {exc}") from None
    raise ConfigError(
        f"the external catalog {e.catalog} needs a password: set {PASSWORD_ENV} "
        "or POOLSIGHT_CATALOG_PASSWORD_FILE / [endpoints].catalog_password_file"
    )


def external_trino_password(e: Endpoints, reader: bool) -> str | None:
    """An external Trino's password for the writer or the reader: its variable, else its file;
    None when neither is set (a Trino without authentication takes the user name alone)."""
    env, path, key = (
        (TRINO_READER_PASSWORD_ENV, e.trino_reader_password_file, "trino_reader_password_file")
        if reader
        else (TRINO_PASSWORD_ENV, e.trino_password_file, "trino_password_file")
    )
    if os.environ.get(env):
        return os.environ[env]
    if path is None:
        return None
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"POOLSIGHT_{key.upper()} / [endpoints].{key}: {exc}") from None
