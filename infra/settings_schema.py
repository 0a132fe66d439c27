"""Every setting poolsight reads, defined once: each section and key of poolsight.toml and each
POOLSIGHT_* environment variable, with its type, default and a one-line description.

load_settings checks the file and the environment against it (settings_check.py), so a misspelt
name is an error rather than a default silently used; docs/settings.md is generated from it
(settings_doc.py). The names that decide which settings exist come from their owners below this
module (ports.py, endpoints.py) or are defined here (the evaluators' paces); defaults owned by
modules above it (config, memory, sql/retention, advice) are restated here, and
tests/infra/test_settings_schema.py checks them against their owners.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

from .endpoints import (
    DEFAULT_BIND_HOST,
    KAFKA_MECHANISMS,
    KAFKA_PASSWORD_ENV,
    KAFKA_PROTOCOLS,
    KAFKA_SECURITY,
    PASSWORD_ENV,
    REGISTRY_PASSWORD_ENV,
    TRINO_PASSWORD_ENV,
    TRINO_READER_PASSWORD_ENV,
)
from .endpoints import KEYS as ENDPOINT_KEYS
from .ports import DEFAULT_PORTS, KAFKA_PORT_STEP, MAX_NODES

PREFIX = "POOLSIGHT_"
DOCS = "docs/settings.md"  # the reference generated from this module (settings_doc.py)
PLACEHOLDER = "{}"  # in a key or variable: each of the setting's names (in a variable: upper case, '-' as '_')

# The evaluator services' default seconds between cycles (infra/evaluator.py runs them).
EVERY_SECONDS = {"alerts": 60.0, "advice": 300.0, "maintenance": 300.0}
# Services with a memory ceiling (infra/memory.py), beside a local cluster's later nodes.
CEILING_SERVICES = (
    "postgres",
    "kafka",
    "registry",
    "flink-jobmanager",
    "flink-taskmanager",
    "trino",
    "dashboard",
    "alerts",
    "advice",
    "maintenance",
)
NODE_SERVICES = ("kafka", "flink-taskmanager")  # node n > 1 of a local cluster is "<service>-<n>"
COMPOSE_BROKERS = 3  # docker-compose.cluster.yml's Kafka brokers, each published on a port of its own


@dataclass(frozen=True)
class Names:
    """What the placeholder in a setting's key or variable stands for."""

    label: str  # shown in the docs as <label>
    names: tuple[str, ...] | None  # every name it takes; None: any name (a file key only)
    shown: str = ""  # the names as the docs list them, when not one by one


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting: a key of a poolsight.toml section, a POOLSIGHT_* variable, or both."""

    section: str = ""  # its section, dotted when nested ("memory.ceiling"); "": the environment only
    key: str = ""  # its key there
    env: str = ""  # its variable; "": the file only
    each: Names | None = None  # the names PLACEHOLDER stands for
    type: str
    default: str  # as the docs show it (Markdown)
    doc: str

    def _names(self) -> tuple[str, ...] | None:
        """What PLACEHOLDER stands for: without `each`, the key itself; None: any name."""
        return (self.key,) if self.each is None else self.each.names

    def keys(self) -> tuple[str, ...] | None:
        """Its keys in the file; None: any key."""
        names = self._names()
        if not self.section or names is None:
            return None if self.section else ()
        return tuple(self.key.replace(PLACEHOLDER, n) for n in names)

    def variables(self) -> tuple[str, ...]:
        """Its variables by their full names (any name is for a file key only)."""
        names = self._names()
        if not self.env or names is None:
            return ()
        return tuple(self.env.replace(PLACEHOLDER, n.upper().replace("-", "_")) for n in names)


@dataclass(frozen=True)
class Section:
    name: str  # dotted when nested in another section
    doc: str
    refused: Mapping[str, str] = field(default_factory=dict)  # a key it never takes -> why


SECTIONS = (
    Section("paths", "the folders of the poolsight home's state and downloads"),
    Section("ports", "each embedded service's port on the bind host"),
    Section("bind", "the address every embedded service listens on and advertises"),
    Section(
        "endpoints",
        "services that run elsewhere: one given an address here is never started (infra/endpoints.py)",
        refused={
            "catalog_password": f"a password only through {PASSWORD_ENV} or catalog_password_file",
            "kafka_password": f"a password only through {KAFKA_PASSWORD_ENV} or kafka_password_file",
            "registry_password": f"a password only through {REGISTRY_PASSWORD_ENV} or registry_password_file",
            "trino_password": f"a password only through {TRINO_PASSWORD_ENV} or trino_password_file",
            "trino_reader_password": (
                f"a password only through {TRINO_READER_PASSWORD_ENV} or trino_reader_password_file"
            ),
        },
    ),
    Section("iceberg", "the Iceberg warehouse"),
    Section("s3", "the object store of an s3:// warehouse"),
    Section("memory", "the JVMs' memory"),
    Section("memory.ceiling", "each long-running service's memory ceiling (`poolsight status`, `make soak`)"),
    Section("kafka", "the embedded Kafka"),
    Section("flink", "the embedded Flink session cluster"),
    Section("trino", "the embedded Trino"),
    Section("dashboard", "who may read the dashboard when it is bound beyond loopback (dashboards/auth.py)"),
    Section("history", "how long each grain is kept (sql/retention.py); `keep` or 0 keeps it for ever"),
    Section("groups", "data-sharing groups, each by its name"),
)

_CEILING_NODES = tuple(f"{svc}-{n}" for svc in NODE_SERVICES for n in range(2, MAX_NODES + 1))
_CEILINGS = Names(
    "service",
    (*CEILING_SERVICES, *_CEILING_NODES),
    shown=", ".join(CEILING_SERVICES)
    + f"; node n (2 to {MAX_NODES}) of a local cluster: "
    + ", ".join(f"{svc}-n" for svc in NODE_SERVICES),
)
# Per [endpoints] key (KEYS in infra/endpoints.py decides which exist): type, default, description.
_ENDPOINTS: dict[str, tuple[str, str, str]] = {
    "kafka_bootstrap": ("host:port list", "embedded", "an external Kafka's brokers (a TOML list or comma-separated)"),
    "kafka_security_protocol": (
        " or ".join(f"`{p}`" for p in KAFKA_PROTOCOLS),
        "`PLAINTEXT`",
        "what an external Kafka's listener asks of clients (the embedded one: `[kafka].security`)",
    ),
    "kafka_sasl_mechanism": (
        " or ".join(f"`{m}`" for m in KAFKA_MECHANISMS),
        "unset",
        "an external Kafka's SASL mechanism (with a `SASL_*` protocol)",
    ),
    "kafka_user": ("user name", "unset", "the SASL user of an external Kafka (with a `SASL_*` protocol)"),
    "kafka_password_file": (
        "path",
        "unset",
        f"a file holding that user's password (or `{KAFKA_PASSWORD_ENV}`); readable by Flink's nodes too",
    ),
    "kafka_ca_file": (
        "path",
        "the system's trust store",
        "the CA certificate (PEM) an external Kafka's brokers are checked against (`SSL`, `SASL_SSL`)",
    ),
    "registry_url": ("URL", "embedded", "an external schema registry's Confluent-compatible API"),
    "registry_user": ("user name", "unset", "HTTP basic authentication to an external schema registry"),
    "registry_password_file": (
        "path",
        "unset",
        f"a file holding that user's password (or `{REGISTRY_PASSWORD_ENV}`); readable by Flink's nodes too",
    ),
    "registry_ca_file": (
        "path",
        "the system's trust store",
        "the CA certificate (PEM) an external registry's HTTPS certificate is checked against",
    ),
    "flink_rest_url": ("http:// URL", "embedded", "an external Flink session cluster's REST address"),
    "trino_url": ("http(s):// URL", "embedded", "an external Trino"),
    "trino_user": (
        "user name",
        f"`{TRINO_WRITER_USER}`",
        f"who the product writes to Trino as (the dashboard reads as `{TRINO_READER_USER}`)",
    ),
    "trino_password_file": (
        "path",
        "unset",
        f"a file holding the writer's password on an external Trino (or `{TRINO_PASSWORD_ENV}`)",
    ),
    "trino_reader_password_file": (
        "path",
        "unset",
        f"a file holding `{TRINO_READER_USER}`'s password on an external Trino (or `{TRINO_READER_PASSWORD_ENV}`)",
    ),
    "trino_ca_file": (
        "path",
        "the system's trust store",
        "the CA certificate (PEM) an external Trino's HTTPS certificate is checked against",
    ),
    "catalog_uri": ("JDBC or http(s):// URL", "embedded", "an external Iceberg catalog: PostgreSQL (JDBC) or REST"),
    "catalog_user": ("user name", "`poolsight`", "the catalog's user"),
    "catalog_password_file": ("path", "unset", f"a file holding an external catalog's password (or `{PASSWORD_ENV}`)"),
    "connect_timeout": (
        "seconds",
        "`30`",
        "how long a command waits for Kafka, the registry or Trino to answer before it stops, naming the address",
    ),
}


def _endpoint(key: str) -> Setting:
    kind, default, doc = _ENDPOINTS[key]
    return Setting(section="endpoints", key=key, env="POOLSIGHT_{}", type=kind, default=default, doc=doc)


SETTINGS: tuple[Setting, ...] = (
    # The environment only: where the rest is found, secrets, tools, the services' paces, images.
    Setting(
        env="POOLSIGHT_CONFIG",
        type="path",
        default="`./poolsight.toml`, else `<home>/poolsight.toml`",
        doc="the config file; it must exist when named",
    ),
    Setting(
        env="POOLSIGHT_HOME",
        type="path",
        default="the checkout, else `$XDG_DATA_HOME/poolsight`",
        doc="the poolsight home: downloads (`.cache/`) and state (`var/`)",
    ),
    Setting(
        env=PASSWORD_ENV,
        type="secret",
        default="generated into `var/data/secrets/` for the embedded catalog",
        doc="the catalog user's password; an external JDBC catalog needs it or `catalog_password_file`",
    ),
    Setting(
        env=REGISTRY_PASSWORD_ENV,
        type="secret",
        default="unset",
        doc="an external schema registry's password for `registry_user` (or `registry_password_file`)",
    ),
    Setting(
        env=KAFKA_PASSWORD_ENV,
        type="secret",
        default="unset (the embedded Kafka's is generated into `var/data/secrets/`)",
        doc="an external Kafka's SASL password (or `kafka_password_file`)",
    ),
    Setting(
        env=TRINO_PASSWORD_ENV,
        type="secret",
        default="generated into `var/data/secrets/` for the embedded Trino",
        doc="the writer's Trino password; an external Trino with authentication needs it or `trino_password_file`",
    ),
    Setting(
        env=TRINO_READER_PASSWORD_ENV,
        type="secret",
        default="generated into `var/data/secrets/` for the embedded Trino",
        doc=f"`{TRINO_READER_USER}`'s Trino password (the dashboard, Grafana); or `trino_reader_password_file`",
    ),
    Setting(
        env="POOLSIGHT_JAVA17_HOME",
        type="path",
        default="found under `/usr/lib/jvm`",
        doc="the Java 17 home Kafka and Flink run on",
    ),
    Setting(
        env="POOLSIGHT_JAVA_MODERN_HOME",
        type="path",
        default="found under `/usr/lib/jvm`",
        doc="the Java home of the registry (21 or newer) and Trino (24 or newer)",
    ),
    Setting(
        env="POOLSIGHT_MAVEN_REPOSITORY",
        type="URL",
        default="Maven Central (`maven_repository` in infra/versions.toml)",
        doc="a Maven mirror for the downloads",
    ),
    Setting(
        env="POOLSIGHT_{}_EVERY",
        each=Names("name", tuple(EVERY_SECONDS)),
        type="seconds",
        default=", ".join(f"`{name}` {every:g}" for name, every in EVERY_SECONDS.items()),
        doc="seconds between an evaluator service's cycles (at least 5)",
    ),
    Setting(
        env="POOLSIGHT_PAGE_REFRESH_EVERY",
        type="seconds",
        default="`30`",
        doc="the maintenance service's page tables (sql/pages.py): at most one refresh this often (at least 5),"
        " `0` none; above about 90 s a page whose row is behind its panes and refreshed over 2 minutes ago reads"
        " the panes",
    ),
    Setting(
        env="POOLSIGHT_ADVICE_BUDGET_GB",
        type="GB",
        default="unset: memory only moves between pools",
        doc="memory the advice service may add to the pools",
    ),
    Setting(
        env="POOLSIGHT_ADVICE_LOOKBACK",
        type="seconds",
        default="`1200`",
        doc="Kafka broker time the advice service's replay reads back",
    ),
    Setting(
        env="POOLSIGHT_BASE_IMAGE",
        type="image",
        default="`base_image` in infra/versions.toml",
        doc="docker-compose.yml: the Debian image every container image is built from",
    ),
    Setting(
        env="POOLSIGHT_JAVA_IMAGE",
        type="image",
        default="`java_image` in infra/versions.toml",
        doc="docker-compose.yml: the image the registry's and Trino's Java is copied from",
    ),
    Setting(
        env="POOLSIGHT_KAFKA_{}_PORT",
        each=Names("n", tuple(str(n) for n in range(2, COMPOSE_BROKERS + 1))),
        type="port",
        default=f"the kafka port + {KAFKA_PORT_STEP} × (n − 1)",
        doc="docker-compose.cluster.yml: broker n's port on the host (the launcher derives it from the kafka port)",
    ),
    *(
        Setting(section="paths", key=key, env="POOLSIGHT_{}_DIR", type="path", default=default, doc=doc)
        for key, default, doc in (
            ("data", "`<home>/var/data`", "the services' data and the file:// warehouse"),
            ("log", "`<home>/var/log`", "the services' logs"),
            ("run", "`<home>/var/run`", "PID files and the evaluators' heartbeats"),
            ("cache", "`<home>/.cache`", "downloads"),
        )
    ),
    Setting(
        section="ports",
        key=PLACEHOLDER,
        env="POOLSIGHT_{}_PORT",
        each=Names("service", tuple(DEFAULT_PORTS)),
        type="port",
        default=", ".join(f"`{name}` {port}" for name, port in DEFAULT_PORTS.items()),
        doc=f"the service's port (broker n > 1 of a local cluster adds {KAFKA_PORT_STEP} × (n − 1) to the kafka ports)",
    ),
    Setting(
        section="bind",
        key="host",
        env="POOLSIGHT_BIND_HOST",
        type="host",
        default=f"`{DEFAULT_BIND_HOST}`",
        doc="what every embedded service listens on and advertises: one address, not a wildcard",
    ),
    *(_endpoint(key) for key in ENDPOINT_KEYS),
    Setting(
        section="iceberg",
        key="warehouse",
        env="POOLSIGHT_WAREHOUSE",
        type="file:// or s3:// URI",
        default="`file://<data>/warehouse`",
        doc="where the Iceberg tables' files go",
    ),
    *(
        Setting(section="s3", key=key, env="POOLSIGHT_S3_{}", type=kind, default=default, doc=doc)
        for key, kind, default, doc in (
            ("endpoint", "URL", "none: an s3:// warehouse needs one", "the object store's endpoint"),
            ("region", "region", "`us-east-1`", "the object store's region"),
            (
                "path_style",
                "boolean",
                "`true`",
                "the bucket in the URL's path (S3-compatible servers); `false`: in the host name",
            ),
            (
                "access_key",
                "secret",
                "unset: the AWS SDK's default chain",
                "the access key; Flink gets it as `AWS_ACCESS_KEY_ID`",
            ),
            (
                "secret_key",
                "secret",
                "unset: the AWS SDK's default chain",
                "the secret key; Flink gets it as `AWS_SECRET_ACCESS_KEY`",
            ),
        )
    ),
    Setting(
        section="memory",
        key="trino_heap",
        env="POOLSIGHT_TRINO_HEAP",
        type="memory size",
        default="`4G`",
        doc="Trino's JVM heap",
    ),
    Setting(
        section="memory",
        key="flink_taskmanager",
        env="POOLSIGHT_FLINK_TM_MEMORY",
        type="memory size",
        default="`4096m`",
        doc="each TaskManager's process memory",
    ),
    Setting(
        section="memory.ceiling",
        key=PLACEHOLDER,
        env="POOLSIGHT_CEILING_{}_MB",
        each=_CEILINGS,
        type="MB",
        default="from the service's memory (infra/memory.py)",
        doc="the service's ceiling: `status` says when its resident memory is over it",
    ),
    Setting(
        section="kafka",
        key="brokers",
        env="POOLSIGHT_KAFKA_BROKERS",
        type=f"whole number, 1 to {MAX_NODES}",
        default="`1`",
        doc="the embedded Kafka's KRaft nodes, each broker and controller",
    ),
    Setting(
        section="kafka",
        key="security",
        env="POOLSIGHT_KAFKA_SECURITY",
        type=" or ".join(f"`{v}`" for v in KAFKA_SECURITY),
        default=f"`{KAFKA_SECURITY[0]}`",
        doc="`sasl_ssl`: clients connect over TLS with SCRAM-SHA-512 and a generated password; brokers "
        "and the launcher over mutual TLS on the kafka_internal port",
    ),
    Setting(
        section="flink",
        key="taskmanagers",
        env="POOLSIGHT_FLINK_TASKMANAGERS",
        type=f"whole number, 1 to {MAX_NODES}",
        default="`1`",
        doc="the embedded Flink's TaskManagers",
    ),
    Setting(
        section="dashboard",
        key="password_file",
        env="POOLSIGHT_DASHBOARD_PASSWORD_FILE",
        type="path",
        default="unset",
        doc="users and PBKDF2 password hashes (`python -m poolsight.dashboards.auth add FILE USER`), mode 600: "
        "HTTP basic authentication",
    ),
    Setting(
        section="dashboard",
        key="user_header",
        env="POOLSIGHT_DASHBOARD_USER_HEADER",
        type="header name",
        default="unset",
        doc="the header a trusted reverse proxy names the authenticated user in (e.g. `X-Forwarded-User`)",
    ),
    Setting(
        section="trino",
        key="add_files",
        env="POOLSIGHT_TRINO_ADD_FILES",
        type="boolean",
        default="`false`",
        doc="enable Trino's add_files procedure (it registers any file as table data)",
    ),
    *(
        Setting(section="history", key=key, env="POOLSIGHT_HISTORY_{}", type="whole number or keep", default=d, doc=doc)
        for key, d, doc in (
            ("pane_days", "`14`", "days panes are kept"),
            ("hour_months", "`13`", "months hourly rollups are kept"),
            ("day_months", "`keep`", "months daily rollups are kept"),
        )
    ),
    Setting(
        section="groups",
        key=PLACEHOLDER,
        each=Names("group", None),
        type="list of names",
        default="no group",
        doc='the group\'s members: `["M1", "M2"]` or `"M1,M2"`',
    ),
)
# Every POOLSIGHT_* variable poolsight (or its docker compose files) reads, by its full name.
VARIABLES = frozenset(v for s in SETTINGS for v in s.variables())
