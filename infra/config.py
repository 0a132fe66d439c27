"""Launcher settings: ports, folders, Java homes and the address of every service.

Defaults suit one machine; a `poolsight.toml` file (path in POOLSIGHT_CONFIG,
else ./poolsight.toml, else <home>/poolsight.toml) overrides them, and POOLSIGHT_*
environment variables override the file; every section, key and variable is one of
settings_schema.py's (docs/settings.md), anything else an error. Embedded services bind 127.0.0.1
([bind].host, POOLSIGHT_BIND_HOST); a service given an address in [endpoints]
(infra/endpoints.py) is external: nothing starts it, every client uses that address.
The embedded Kafka and Flink run one node each unless [kafka].brokers
(POOLSIGHT_KAFKA_BROKERS) or [flink].taskmanagers (POOLSIGHT_FLINK_TASKMANAGERS) ask for more.

State (downloads in `.cache/`, data, logs and run files in `var/`) lives in the
poolsight home: POOLSIGHT_HOME if set; else the checkout the code runs from (an
editable install), or the checkout that is the current directory; else a per-user
data folder. Never inside an installed package.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

from .endpoints import DEFAULT_BIND_HOST as DEFAULT_BIND_HOST
from .endpoints import KAFKA_SECURITY, Endpoints, bind_host, hostport, load_endpoints, url_host_port
from .endpoints import ConfigError as ConfigError
from .endpoints import Unreachable as Unreachable
from .ports import DEFAULT_PORTS as DEFAULT_PORTS
from .ports import KAFKA_PORT_STEP as KAFKA_PORT_STEP
from .ports import MAX_NODES as MAX_NODES
from .ports import kafka_port_keys as kafka_port_keys
from .ports import port_variable as port_variable
from .settings_check import check_environment, check_file

# What a service binds inside a container (docker-compose.yml): every address of the container,
# which compose publishes on the host's 127.0.0.1 only. Never a bind host of the launcher's.
CONTAINER_BIND_HOST = "0.0.0.0"  # noqa: S104


def is_true(text: str) -> bool:
    """A boolean setting's text (a variable, or a TOML value as text): 1, true or yes."""
    return text.strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class Settings:
    home: Path
    cache_dir: Path
    data_dir: Path
    log_dir: Path
    run_dir: Path
    ports: dict[str, int] = field(default_factory=dict)
    warehouse: str = ""
    s3: dict[str, str] = field(default_factory=dict)
    # 4G, not 2G: Trino keeps about 500 MB live after a few hundred statements, and in 2G G1 ran a
    # concurrent marking cycle every few page loads (about 14 % of Trino's CPU, sql/README.md).
    trino_heap: str = "4G"
    flink_taskmanager_memory: str = "4096m"
    flink_jobmanager_memory: str = "1024m"
    ceiling_conf: dict[str, Any] = field(default_factory=dict)  # [memory.ceiling] (infra/memory.py)
    flink_slots: int = 2
    bind_host: str = DEFAULT_BIND_HOST  # every embedded service listens on and advertises this
    endpoints: Endpoints = field(default_factory=Endpoints)
    kafka_brokers: int = 1  # embedded Kafka: KRaft nodes, each broker and controller
    kafka_security: str = KAFKA_SECURITY[0]  # embedded Kafka: KAFKA_SECURITY (infra/kafka_secrets.py)
    flink_taskmanagers: int = 1  # embedded Flink: TaskManagers of the session cluster
    history: dict[str, Any] = field(default_factory=dict)  # [history]: retention (sql/retention.py)
    groups: dict[str, Any] = field(default_factory=dict)  # [groups]: data-sharing group = its members
    trino_add_files: bool = False  # Trino's add_files procedure (bench-history loads files with it)
    # [dashboard]: who may read it beyond loopback (dashboards/auth.py): a password file or a proxy's header
    dashboard_password_file: Path | None = None
    dashboard_user_header: str | None = None

    @property
    def external(self) -> frozenset[str]:
        """The services (infra/services.py names) configured as external: never started here."""
        return self.endpoints.external()

    def _embedded(self, port: str) -> str:
        return hostport(self.bind_host, self.ports[port])

    @property
    def kafka_bootstrap(self) -> str:
        """Every broker: the configured ones, or each embedded node's listener."""
        if self.endpoints.kafka:
            return ",".join(self.endpoints.kafka)
        return ",".join(self._embedded(kafka_port_keys(i)[0]) for i in range(1, self.kafka_brokers + 1))

    @property
    def registry_url(self) -> str:
        return self.endpoints.registry or f"http://{self._embedded('registry')}/apis/ccompat/v7"

    @property
    def flink_rest_url(self) -> str:
        return self.endpoints.flink_rest or f"http://{self._embedded('flink_rest')}"

    @property
    def flink_rest_address(self) -> tuple[str, int]:
        """(rest.address, rest.port) for PyFlink clients."""
        return url_host_port(self.flink_rest_url)

    @property
    def trino_url(self) -> str:
        """An external Trino's URL, or the embedded one's: HTTPS with passwords (infra/trino_secrets.py)."""
        return self.endpoints.trino or f"https://{self._embedded('trino')}"

    @property
    def connect_timeout(self) -> float:
        """Seconds a command waits for a service that does not answer ([endpoints] connect_timeout)."""
        return self.endpoints.connect_timeout

    @property
    def trino_user(self) -> str:
        """Who the product's own statements run as on Trino (bootstrap, jobs' checks, maintain,
        compare, the evaluators' writes); the dashboards read as TRINO_READER_USER."""
        return self.endpoints.trino_user or TRINO_WRITER_USER

    @property
    def dashboard_url(self) -> str:
        return f"http://{self._embedded('dashboard')}"

    @property
    def catalog_is_rest(self) -> bool:
        """True for an Iceberg REST catalog, False for the JDBC catalog in PostgreSQL."""
        return self.endpoints.catalog_is_rest

    @property
    def catalog_uri(self) -> str:
        """The Iceberg catalog as the engines address it: a JDBC URL or a REST catalog's URI."""
        return self.endpoints.catalog or self.postgres_jdbc_url

    @property
    def postgres_jdbc_url(self) -> str:
        """The JDBC catalog's database (meaningful unless the catalog is a REST catalog)."""
        if self.endpoints.catalog and not self.catalog_is_rest:
            return self.endpoints.catalog
        return f"jdbc:postgresql://{self._embedded('postgres')}/{CATALOG_DATABASE}"

    @property
    def catalog_user(self) -> str:
        return self.endpoints.catalog_user or CATALOG_ROLE


# The Iceberg JDBC catalog: one name shared by Flink, Trino and Python.
CATALOG_NAME = "poolsight"
CATALOG_DATABASE = "iceberg_catalog"
CATALOG_ROLE = "poolsight"
# Every table deletes the metadata files its commits replace, keeping the newest ten. A commit
# writes the table's whole metadata file anew (an entry per snapshot kept), and by default every
# older file stayed until orphan removal: at a streaming job's few commits a minute, gigabytes
# a day per table. Every commit also adds a manifest, and a query opens each one its filter may
# need (pool_pane's one-day scan: 160 ms planning and 140 ms finding splits with 56 manifests,
# 24 and 12 ms with 4): so a commit that finds MANIFESTS_MERGED_AT or more merges them into one
# (Iceberg's default is 100). Trino sets them on its tables (extra_properties, which its catalog
# allows for just these keys), the jobs on theirs at submission.
MANIFESTS_MERGED_AT = 4
# What merging writers leave a table: fewer than this (data and delete manifests merge apart).
MANIFESTS_LEFT_BELOW = 2 * MANIFESTS_MERGED_AT
METADATA_FILE_PROPERTIES = {
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "10",
    "commit.manifest.min-count-to-merge": str(MANIFESTS_MERGED_AT),
}


def checkout_of(start: Path) -> Path | None:
    """The poolsight source checkout holding `start` (a folder with this project's pyproject.toml)."""
    for folder in (start, *start.parents):
        project = folder / "pyproject.toml"
        if project.is_file() and (folder / "infra" / "versions.toml").is_file():
            try:
                name = tomllib.loads(project.read_text()).get("project", {}).get("name")
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if name == "poolsight":
                return folder
    return None


def home() -> Path:
    """Where poolsight keeps its state (see the module's doc)."""
    explicit = os.environ.get("POOLSIGHT_HOME")
    if explicit:
        return Path(explicit).expanduser().resolve()
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        checkout = checkout_of(start)
        if checkout is not None:
            return checkout
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser().resolve() / "poolsight"


def _config_file() -> dict[str, Any]:
    explicit = os.environ.get("POOLSIGHT_CONFIG")
    path = Path(explicit) if explicit else Path.cwd() / "poolsight.toml"
    if not explicit and not path.exists():
        path = home() / "poolsight.toml"
    if not path.exists():
        if explicit:
            raise ConfigError(f"POOLSIGHT_CONFIG={explicit}: file not found")
        return {}
    try:
        with path.open("rb") as fh:
            conf = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    check_file(conf, str(path))
    return conf


def _port(name: str, file_ports: dict[str, Any]) -> int:
    env_name = f"POOLSIGHT_{name.upper()}_PORT"
    raw: Any = os.environ.get(env_name, file_ports.get(name, DEFAULT_PORTS[name]))
    try:
        port = int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{env_name} / [ports].{name}: {raw!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise ConfigError(f"{env_name} / [ports].{name}: {port} is out of range")
    return port


def _kafka_security(conf: dict[str, Any]) -> str:
    """[kafka].security: the embedded Kafka's (as [kafka].brokers, an external Kafka's own
    settings are [endpoints].kafka_security_protocol and its neighbours)."""
    raw = os.environ.get("POOLSIGHT_KAFKA_SECURITY") or conf.get("kafka", {}).get("security", "")
    if not raw:
        return KAFKA_SECURITY[0]
    value = str(raw).strip().lower()
    if value not in KAFKA_SECURITY:
        raise ConfigError(
            f"POOLSIGHT_KAFKA_SECURITY / [kafka].security: {raw!r} is not one of {', '.join(KAFKA_SECURITY)}"
        )
    return value


def _nodes(env_name: str, table: str, key: str, conf: dict[str, Any]) -> int:
    raw: Any = os.environ.get(env_name) or conf.get(table, {}).get(key, 1)
    try:
        count = int(raw)
    except (TypeError, ValueError):
        count = 0
    if isinstance(raw, bool) or not 1 <= count <= MAX_NODES or str(raw).strip() != str(count):
        raise ConfigError(f"{env_name} / [{table}].{key}: {raw!r} is not a whole number from 1 to {MAX_NODES}")
    return count


def _kafka_node_ports(ports: dict[str, int], brokers: int) -> dict[str, int]:
    """The derived ports of brokers 2..n (see KAFKA_PORT_STEP)."""
    out: dict[str, int] = {}
    for node in range(2, brokers + 1):
        for base, key in zip(kafka_port_keys(1), kafka_port_keys(node), strict=True):
            out[key] = ports[base] + KAFKA_PORT_STEP * (node - 1)
            if out[key] > 65535:
                raise ConfigError(f"{port_variable(key)}: broker {node}'s port {out[key]} is out of range")
    return out


def load_settings() -> Settings:
    """Settings from defaults, the config file and the environment, in that order. A section,
    key or POOLSIGHT_* variable the schema does not know is an error (settings_check.py)."""
    check_environment(os.environ)
    conf = _config_file()
    paths = conf.get("paths", {})

    def folder(key: str, default: Path) -> Path:
        raw = os.environ.get(f"POOLSIGHT_{key.upper()}_DIR", paths.get(key))
        return Path(raw).resolve() if raw else default

    root = home()
    var = root / "var"
    data_dir = folder("data", var / "data")
    ports = {name: _port(name, conf.get("ports", {})) for name in DEFAULT_PORTS}
    endpoints = load_endpoints(conf.get("endpoints", {}), reader_user=TRINO_READER_USER)
    brokers = _nodes("POOLSIGHT_KAFKA_BROKERS", "kafka", "brokers", conf)
    taskmanagers = _nodes("POOLSIGHT_FLINK_TASKMANAGERS", "flink", "taskmanagers", conf)
    if not endpoints.kafka:  # an external cluster's brokers are its own
        ports.update(_kafka_node_ports(ports, brokers))
    dupes = {p for p in ports.values() if list(ports.values()).count(p) > 1}
    if dupes:
        raise ConfigError(f"ports configured twice: {sorted(dupes)}")
    warehouse = (
        os.environ.get("POOLSIGHT_WAREHOUSE", conf.get("iceberg", {}).get("warehouse", ""))
        or (data_dir / "warehouse").as_uri()
    )
    if not warehouse.startswith(("file://", "s3://")):
        raise ConfigError(f"POOLSIGHT_WAREHOUSE={warehouse}: use a file:// or s3:// URI")
    s3 = {k: str(v) for k, v in conf.get("s3", {}).items()}
    for key in ("endpoint", "region", "path_style", "access_key", "secret_key"):
        env = os.environ.get(f"POOLSIGHT_S3_{key.upper()}")
        if env:
            s3[key] = env
    if warehouse.startswith("s3://") and "endpoint" not in s3:
        raise ConfigError("an s3:// warehouse needs POOLSIGHT_S3_ENDPOINT or [s3].endpoint")
    mem = conf.get("memory", {})
    bind = os.environ.get("POOLSIGHT_BIND_HOST") or conf.get("bind", {}).get("host") or DEFAULT_BIND_HOST
    try:
        bind = bind_host(str(bind))
    except ConfigError as exc:
        raise ConfigError(f"POOLSIGHT_BIND_HOST / [bind].host: {exc}") from None
    return Settings(
        home=root,
        cache_dir=folder("cache", root / ".cache"),
        data_dir=data_dir,
        log_dir=folder("log", var / "log"),
        run_dir=folder("run", var / "run"),
        ports=ports,
        warehouse=warehouse,
        s3=s3,
        trino_heap=os.environ.get("POOLSIGHT_TRINO_HEAP", mem.get("trino_heap", Settings.trino_heap)),
        flink_taskmanager_memory=os.environ.get(
            "POOLSIGHT_FLINK_TM_MEMORY", mem.get("flink_taskmanager", Settings.flink_taskmanager_memory)
        ),
        ceiling_conf=dict(mem.get("ceiling", {})),
        bind_host=bind,
        endpoints=endpoints,
        kafka_brokers=brokers,
        kafka_security=_kafka_security(conf),
        flink_taskmanagers=taskmanagers,
        history=dict(conf.get("history", {})),
        groups=dict(conf.get("groups", {})),
        trino_add_files=is_true(
            os.environ.get("POOLSIGHT_TRINO_ADD_FILES") or str(conf.get("trino", {}).get("add_files", ""))
        ),
        dashboard_password_file=Path(pw).expanduser() if (pw := _dashboard(conf, "password_file")) else None,
        dashboard_user_header=_dashboard(conf, "user_header") or None,
    )


def _dashboard(conf: dict[str, Any], key: str) -> str:
    """A [dashboard] setting, its POOLSIGHT_DASHBOARD_* variable first."""
    return str(os.environ.get(f"POOLSIGHT_DASHBOARD_{key.upper()}") or conf.get("dashboard", {}).get(key, "")).strip()
