"""The services of the stack: how each is configured, started and health-checked.

Each service writes its configuration under run_dir/<name>, keeps its data
under data_dir/<name>, logs to log_dir/<name>.log and binds the bind host only
(127.0.0.1 unless configured). A service configured as external (infra/endpoints.py)
is never prepared here; its health check asks the configured address. Kafka's nodes
are defined in kafka_service.py, Flink's in flink_service.py; `services_for` is the
stack as configured (several brokers or TaskManagers if asked).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import time
import urllib.error
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from poolsight.names import NAMESPACE, PROBE_TABLE, TRINO_CATALOG, TRINO_READER_USER

from .config import CATALOG_NAME, METADATA_FILE_PROPERTIES, ConfigError, Settings
from .endpoints import external_catalog_password, hostport, jdbc_target
from .evaluator import evaluator_every, heartbeat_path
from .flink_service import flink_endpoint, health_flink_jobmanager, prepare_flink_jobmanager, taskmanager_node
from .install import Installed
from .java import find_java
from .kafka_access import java_properties_text, kafka_access
from .kafka_service import kafka_node
from .s3_store import s3_store, trino_properties
from .s3_store import trino_env as s3_trino_env
from .secret_files import generated, replace_private, secrets_dir, write_private
from .service_base import CONF_DIR, JVM_PRETOUCH, base_env, fresh_dir, http_get, need
from .service_base import Degraded as Degraded
from .service_base import Launch as Launch
from .service_base import Service as Service
from .service_base import Unhealthy as Unhealthy
from .trino import UserError, health_errors, trino_connection
from .trino_secrets import password_file, trino_secrets
from .versions import pins

# ---------------------------------------------------------------- PostgreSQL

PG_USER = "postgres"
SHARED_SECRET_ENV = "TRINO_SHARED_SECRET"  # noqa: S105 (the variable's name, read by Trino as ${ENV:...})


def catalog_password(s: Settings) -> str:
    """The catalog user's password. An external catalog's comes from the environment or a file
    (infra/endpoints.py); the embedded role's is generated on first use, kept 0600 in the data folder."""
    if "postgres" in s.external:
        return external_catalog_password(s.endpoints)
    return generated(s, "catalog-password")


def _pg_runas() -> str | None:
    """PostgreSQL refuses to run as root: run it as the `postgres` account then."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        raise Unhealthy("running as root needs a `postgres` account for PostgreSQL") from None
    return PG_USER


def pg_socket_dir(s: Settings) -> Path:
    return s.run_dir / "postgres"


def _chown(path: Path, user: str | None) -> None:
    if user:
        shutil.chown(path, user, user)


def prepare_postgres(s: Settings, inst: Installed) -> Launch:
    pg_bin = need(inst.postgres_bin, "postgres")
    user = _pg_runas()
    data = s.data_dir / "postgres"
    sock = fresh_dir(pg_socket_dir(s))
    _chown(sock, user)
    sock.chmod(0o700)
    if not (data / "PG_VERSION").exists():
        data.mkdir(parents=True, exist_ok=True)
        _chown(data, user)
        data.chmod(0o700)
        # Local socket: trust (the socket folder is 0700); TCP: passwords only.
        cmd = [
            str(pg_bin / "initdb"),
            "-D",
            str(data),
            "-U",
            PG_USER,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]
        proc = subprocess.run(cmd, user=user, capture_output=True, text=True)
        if proc.returncode != 0:
            raise Unhealthy(f"initdb failed: {proc.stderr.strip()}")
    return Launch(
        command=[
            str(pg_bin / "postgres"),
            "-D",
            str(data),
            "-c",
            f"listen_addresses={s.bind_host}",
            "-p",
            str(s.ports["postgres"]),
            "-c",
            f"unix_socket_directories={sock}",
            "-c",
            "logging_collector=off",
        ],
        env=base_env(),
        cwd=data,
        user=user,
    )


def pg_connect(s: Settings, *, superuser: bool = False, dbname: str | None = None):  # type: ignore[no-untyped-def]
    # lazy: `status` and `down` need no PostgreSQL client
    import psycopg

    if superuser:
        return psycopg.connect(
            host=str(pg_socket_dir(s)),
            port=s.ports["postgres"],
            user=PG_USER,
            dbname=dbname or "postgres",
            autocommit=True,
            connect_timeout=5,
        )
    # The JDBC catalog's database, embedded or external (libpq takes JDBC's sslmode as it is).
    target = jdbc_target(s.postgres_jdbc_url)
    tls: dict[str, Any] = {"sslmode": target.params["sslmode"]} if "sslmode" in target.params else {}
    return psycopg.connect(
        host=target.host,
        port=target.port,
        user=s.catalog_user,
        password=catalog_password(s),
        dbname=dbname or target.database,
        autocommit=True,
        connect_timeout=5,
        **tls,
    )


def health_postgres(s: Settings) -> str:
    # lazy: likewise
    import psycopg

    if s.catalog_is_rest:  # the catalog is an Iceberg REST service: no PostgreSQL at all
        http_get(f"{s.catalog_uri}/v1/config")
        return "Iceberg REST catalog answers /v1/config"
    external = "postgres" in s.external
    try:
        with pg_connect(s, superuser=not external) as conn:
            version = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        raise Unhealthy(f"PostgreSQL connection: {str(exc).strip()}") from exc
    except ConfigError as exc:  # an external catalog without its password
        raise Unhealthy(str(exc)) from exc
    return f"PostgreSQL {version[0] if version else '?'}" + (f" as {s.catalog_user}" if external else "")


def catalog_endpoint(s: Settings) -> str:
    """The catalog's address for `status`: its URI without the JDBC parameters."""
    return s.catalog_uri.split("?")[0]


# ---------------------------------------------------------------- Apicurio registry


KAFKASQL_CLIENTS = ("producer", "consumer", "admin")  # Apicurio's apicurio.kafkasql.<client>.* properties


def registry_kafka_file(s: Settings) -> Path:
    """Where the embedded registry reads its Kafka clients' security properties (0600), as
    Quarkus configuration: not on its command line."""
    return s.data_dir / "secrets" / "registry-kafka.properties"


def registry_options(s: Settings) -> list[str]:
    """The embedded registry's system properties: on the bind host, stored in (any) Kafka."""
    secured = ["-Dquarkus.config.locations=" + str(registry_kafka_file(s))] if kafka_access(s).secured else []
    return [
        *secured,
        f"-Dquarkus.http.host={s.bind_host}",
        f"-Dquarkus.http.port={s.ports['registry']}",
        # The management interface is enabled at build time; keep it on the bind host.
        f"-Dquarkus.management.host={s.bind_host}",
        f"-Dquarkus.management.port={s.ports['registry_management']}",
        "-Dquarkus.log.console.color=false",
        "-Dapicurio.storage.kind=kafkasql",
        f"-Dapicurio.kafkasql.bootstrap.servers={s.kafka_bootstrap}",
        "-Dapicurio.ccompat.legacy-id-mode.enabled=true",
        "-Dapicurio.rest.deletion.artifact.enabled=true",
    ]


def prepare_registry(s: Settings, inst: Installed) -> Launch:
    java = find_java(minimum=int(pins()["java"]["registry_min"]), purpose="Apicurio Registry")
    home = need(inst.registry_home, "registry")
    access = kafka_access(s)
    if access.secured:  # its journal's producer, consumer and admin client each take them
        text = "".join(
            java_properties_text(access.java_properties(), f"apicurio.kafkasql.{c}.") for c in KAFKASQL_CLIENTS
        )
        secrets_dir(s)  # 0700, before the file goes in
        replace_private(registry_kafka_file(s), text.encode())
    return Launch(
        command=[java.java, "-Xms128m", "-Xmx512m", *registry_options(s), "-jar", str(home / "quarkus-run.jar")],
        env=base_env(java.home),
        cwd=home,
    )


def health_registry(s: Settings) -> str:
    body = http_get(f"{s.registry_url}/subjects")
    try:
        subjects = json.loads(body)
    except ValueError as exc:
        raise Unhealthy(f"registry answered non-JSON: {body[:80]!r}") from exc
    return f"{len(subjects)} subjects"


# ---------------------------------------------------------------- Trino


def trino_catalog_properties(s: Settings) -> str:
    """The embedded Trino's `iceberg` catalog: the JDBC catalog (embedded or external PostgreSQL)
    or an Iceberg REST catalog, over the configured warehouse."""
    if s.catalog_is_rest:
        lines = [
            "connector.name=iceberg",
            "iceberg.catalog.type=rest",
            f"iceberg.rest-catalog.uri={s.catalog_uri}",
            f"iceberg.rest-catalog.warehouse={s.warehouse}",
        ]
    else:
        lines = [
            "connector.name=iceberg",
            "iceberg.catalog.type=jdbc",
            f"iceberg.jdbc-catalog.catalog-name={CATALOG_NAME}",
            "iceberg.jdbc-catalog.driver-class=org.postgresql.Driver",
            f"iceberg.jdbc-catalog.connection-url={s.postgres_jdbc_url}",
            f"iceberg.jdbc-catalog.connection-user={s.catalog_user}",
            # Resolved by Trino from its environment: the secret never sits in a file here.
            "iceberg.jdbc-catalog.connection-password=${ENV:POOLSIGHT_CATALOG_PASSWORD}",
            f"iceberg.jdbc-catalog.default-warehouse-dir={s.warehouse}",
        ]
    store = s3_store(s)
    if store is not None:
        lines += trino_properties(store)
    else:
        lines += ["fs.native-local.enabled=true", "local.location=/"]
    # The table properties bootstrap sets (config.py), and no others: extra_properties is free text.
    lines.append("iceberg.allowed-extra-properties=" + ",".join(METADATA_FILE_PROPERTIES))
    # No column sketches on write: each INSERT or MERGE would read and rewrite a Puffin file of
    # them (700 kB for pool_pane) and add an entry per column to the table's metadata file for
    # every snapshot kept, which every later statement parses (pool_pane's was 2.7 of its 3 MB).
    lines.append("iceberg.extended-statistics.collect-on-write=false")
    if s.trino_add_files:  # off by default: it registers any file as table data
        lines.append("iceberg.add-files-procedure.enabled=true")
    return "\n".join(lines) + "\n"


def trino_access_rules() -> dict[str, object]:
    """File-based access control: the reader may SELECT in the poolsight schema and nothing else
    (no other catalog or schema, no writes, no DDL); every other user keeps full rights. Who a
    client is, Trino's password authentication decides (trino_config_properties)."""
    reader = TRINO_READER_USER
    return {
        "catalogs": [
            {"user": reader, "catalog": TRINO_CATALOG, "allow": "read-only"},
            {"user": reader, "catalog": ".*", "allow": "none"},
            {"allow": "all"},
        ],
        "schemas": [
            {"user": reader, "owner": False},
            {"owner": True},
        ],
        "tables": [
            {"user": reader, "catalog": TRINO_CATALOG, "schema": NAMESPACE, "privileges": ["SELECT"]},
            {"user": reader, "privileges": []},
            {"privileges": ["SELECT", "INSERT", "DELETE", "UPDATE", "OWNERSHIP", "GRANT_SELECT"]},
        ],
        # The reader runs its own queries only: it may not list or kill anyone else's.
        "queries": [{"user": reader, "allow": ["execute"]}, {"allow": ["execute", "kill", "view"]}],
        "system_information": [{"user": f"(?!{reader}$).*", "allow": ["read"]}],
    }


# How long a finished task's info stays on the node for the coordinator to fetch (default 15m).
TASK_INFO_MAX_AGE = "1m"


def trino_config_properties(s: Settings, trino_home: Path, etc: Path, keystore: Path | None = None) -> str:
    """The embedded Trino's config.properties: one node, coordinator and worker, on the bind host.

    With a `keystore` (the launcher's Trino): clients connect over HTTPS on the trino port and
    authenticate with a password (password.db); plain HTTP on the trino_internal port carries
    only the node's own requests, signed with the shared secret (Trino refuses any other request
    there: "Authentication over HTTP is not enabled"). Without one (compose's container): HTTP on
    the trino port and no authentication."""
    if keystore is None:
        port, secure = s.ports["trino"], []
    else:
        port = s.ports["trino_internal"]
        secure = [
            "http-server.https.enabled=true",
            f"http-server.https.port={s.ports['trino']}",
            f"http-server.https.keystore.path={keystore}",
            "http-server.authentication.type=PASSWORD",
            f"password-authenticator.config-files={etc / 'password-authenticator.properties'}",
            f"internal-communication.shared-secret=${{ENV:{SHARED_SECRET_ENV}}}",
        ]
    return "\n".join(
        [
            "coordinator=true",
            "node-scheduler.include-coordinator=true",
            f"http-server.http.port={port}",
            f"discovery.uri=http://{hostport(s.bind_host, port)}",
            *secure,
            f"plugin.dir={trino_home / 'plugin'}",
            f"catalog.config-dir={etc / 'catalog'}",
            "query.max-memory=1GB",
            "query.max-memory-per-node=1GB",
            # Every 200 ms the node asks each task it keeps for its full info (output buffer
            # histograms): kept the default 15 minutes, a few thousand tasks of the dashboard's and
            # evaluators' statements held an idle Trino at 17-25 % of a core (JFR: failAbandonedTasks).
            f"task.info.max-age={TASK_INFO_MAX_AGE}",
            f"access-control.config-files={etc / 'access-control.properties'}",
            "",
        ]
    )


def prepare_trino(s: Settings, inst: Installed) -> Launch:
    java = find_java(minimum=int(pins()["java"]["trino_min"]), purpose="Trino")
    trino_home = need(inst.trino_home, "trino")
    etc = fresh_dir(s.run_dir / "trino" / "etc")
    catalogs = fresh_dir(etc / "catalog")
    data = fresh_dir(s.data_dir / "trino")
    node_id_file = data / "node-id"
    if not node_id_file.exists():
        node_id_file.write_text(str(uuid.uuid4()))
    secret = trino_secrets(s)
    (etc / "config.properties").write_text(trino_config_properties(s, trino_home, etc, secret.keystore))
    (etc / "password.db").unlink(missing_ok=True)
    write_private(etc / "password.db", password_file(secret.passwords).encode())
    (etc / "password-authenticator.properties").write_text(
        f"password-authenticator.name=file\nfile.password-file={etc / 'password.db'}\n"
    )
    (catalogs / "iceberg.properties").write_text(trino_catalog_properties(s))
    (etc / "rules.json").write_text(json.dumps(trino_access_rules(), indent=2) + "\n")
    (etc / "access-control.properties").write_text(
        f"access-control.name=file\nsecurity.config-file={etc / 'rules.json'}\n"
    )
    env = base_env(java.home) | {SHARED_SECRET_ENV: secret.shared_secret}
    if not s.catalog_is_rest:
        env["POOLSIGHT_CATALOG_PASSWORD"] = catalog_password(s)
    env |= s3_trino_env(s)
    jvm = [
        ln.strip()
        for ln in (CONF_DIR / "trino-jvm.config").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    return Launch(
        command=[
            java.java,
            f"-Xms{s.trino_heap}",
            f"-Xmx{s.trino_heap}",
            *JVM_PRETOUCH,
            *jvm,
            "-Dnode.environment=poolsight",
            f"-Dnode.id={node_id_file.read_text().strip()}",
            f"-Dnode.data-dir={data}",
            f"-Dnode.bind-ip={s.bind_host}",
            f"-Dnode.internal-address={s.bind_host}",
            f"-Dconfig={etc / 'config.properties'}",
            f"-Dlog.levels-file={CONF_DIR / 'trino-log.properties'}",
            "-cp",
            f"{trino_home / 'lib'}/*",
            "io.trino.server.TrinoServer",
        ],
        env=env,
        cwd=data,
    )


def health_trino(s: Settings) -> str:
    try:
        with trino_connection(s) as conn:
            cur = conn.cursor()
            cur.execute("SELECT 1")
            if cur.fetchall() != [[1]]:
                raise Unhealthy("Trino SELECT 1 returned something else")
            # SELECT 1 answers before the node has announced itself; scans need an active node.
            cur.execute("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")
            [[active]] = cur.fetchall()
            if active < 1:
                raise Unhealthy("Trino answers but has no active worker node yet")
            try:
                cur.execute(f"SELECT count(*) FROM {TRINO_CATALOG}.{NAMESPACE}.{PROBE_TABLE}")
                cur.fetchall()
            except UserError as exc:
                if exc.error_name not in ("TABLE_NOT_FOUND", "SCHEMA_NOT_FOUND"):  # first start
                    raise
    except health_errors() as exc:
        raise Unhealthy(f"Trino SELECT 1: {exc}") from exc
    except Exception as exc:  # the client raises requests' own errors for refused connections
        raise Unhealthy(f"Trino SELECT 1: {type(exc).__name__}: {exc}") from exc
    return f"SELECT 1 ok, {active} active node"


# ---------------------------------------------------------------- dashboard and alert evaluator


def _every(name: str) -> float:
    """An evaluator's interval; a bad POOLSIGHT_<NAME>_EVERY makes the service unhealthy, saying why."""
    try:
        return evaluator_every(name)
    except ConfigError as exc:
        raise Unhealthy(str(exc)) from None


def _health_beat(s: Settings, name: str, describe: Callable[[dict[str, Any]], str]) -> str:
    path = heartbeat_path(s, name)
    try:
        beat = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise Unhealthy(f"no heartbeat yet ({path})") from exc
    age = time.time() - float(beat.get("time", 0))
    if age > 3 * _every(name) + 60:  # + one slow evaluation
        raise Unhealthy(f"last evaluation {age:.0f} s ago")
    if beat.get("error"):
        raise Degraded(f"last evaluation failed: {str(beat['error'])[:200]}")
    if beat.get("phase") == "starting":  # the loop's beat before its first cycle ends
        return f"first evaluation running, started {age:.0f} s ago"
    return f"{describe(beat)}, evaluated {age:.0f} s ago"


def _python_launch(s: Settings, module: str, *args: str) -> Launch:
    # Two glibc arenas, not 8 per core: the Kafka and Trino clients' threads each got one, and
    # memory freed into them stayed in the RSS (`make soak`). The TaskManager and its Python
    # workers have their own settings (flink_service.TASKMANAGER_MALLOC).
    env = {**base_env(), "MALLOC_ARENA_MAX": "2"}
    return Launch(command=[sys.executable, "-m", module, *args], env=env, cwd=s.home)


def prepare_dashboard(s: Settings, inst: Installed) -> Launch:
    return _python_launch(s, "poolsight.dashboards.server", "--host", s.bind_host, "--port", str(s.ports["dashboard"]))


def health_dashboard(s: Settings) -> str:
    try:
        body = json.loads(http_get(f"{s.dashboard_url}/healthz"))
    except urllib.error.HTTPError as exc:
        raise Unhealthy(f"dashboard /healthz: HTTP {exc.code}") from exc
    except ValueError as exc:
        raise Unhealthy(f"dashboard /healthz: {exc}") from exc
    return f"{s.dashboard_url}/ ({body.get('trino')})"


def _evaluator_launch(s: Settings, name: str) -> Launch:
    """An evaluator's process, run by the one service loop (poolsight/service.py; its stale
    heartbeat removed first: health waits for a new one)."""
    heartbeat_path(s, name).unlink(missing_ok=True)
    return _python_launch(s, "poolsight.service", name, "--every", str(_every(name)))


def prepare_alerts(s: Settings, inst: Installed) -> Launch:
    return _evaluator_launch(s, "alerts")


def health_alerts(s: Settings) -> str:
    return _health_beat(s, "alerts", lambda b: f"{b.get('rules')} rules, {b.get('open')} open alerts")


def prepare_advice(s: Settings, inst: Installed) -> Launch:
    return _evaluator_launch(s, "advice")


def health_advice(s: Settings) -> str:
    return _health_beat(
        s,
        "advice",
        lambda b: (
            "first evaluation running"
            if b.get("pools") is None
            else f"{b.get('pools')} pools, {b.get('advice')} pieces of advice"
        ),
    )


def prepare_maintenance(s: Settings, inst: Installed) -> Launch:
    return _evaluator_launch(s, "maintenance")


def health_maintenance(s: Settings) -> str:
    return _health_beat(
        s,
        "maintenance",
        lambda b: (
            f"cycle {b.get('cycles')}: {b.get('files', 0)} new files rolled up, {b.get('removed_rows', 0)} rows expired"
        ),
    )


def _registry_endpoint(s: Settings) -> str:
    return s.registry_url


def _trino_endpoint(s: Settings) -> str:
    return s.trino_url


# The stack with one Kafka node and one TaskManager, in start order (services_for: as configured).
SERVICES: tuple[Service, ...] = (
    Service("postgres", ("postgres",), (), 60, prepare_postgres, health_postgres, catalog_endpoint),
    kafka_node(1, 1),
    Service(
        "registry",
        ("registry", "registry_management"),
        ("kafka",),
        180,
        prepare_registry,
        health_registry,
        _registry_endpoint,
    ),
    Service(
        "flink-jobmanager",
        ("flink_rest", "flink_rpc"),
        ("postgres",),
        120,
        prepare_flink_jobmanager,
        health_flink_jobmanager,
        flink_endpoint,
    ),
    taskmanager_node(1, 1),
    Service("trino", ("trino",), ("postgres",), 180, prepare_trino, health_trino, _trino_endpoint),
    Service("dashboard", ("dashboard",), ("trino",), 60, prepare_dashboard, health_dashboard),
    Service("alerts", (), ("trino",), 90, prepare_alerts, health_alerts),
    Service("advice", (), ("trino", "kafka", "registry"), 90, prepare_advice, health_advice),  # reads recent getpages
    Service("maintenance", (), ("trino",), 90, prepare_maintenance, health_maintenance),
)

BY_NAME = {svc.name: svc for svc in SERVICES}


def services_for(s: Settings, base: tuple[Service, ...] = SERVICES) -> tuple[Service, ...]:
    """The stack as configured: the embedded Kafka as [kafka].brokers nodes, the embedded Flink
    with [flink].taskmanagers TaskManagers, each in place of the single one; with one of each
    (the default), `base` itself. An external service stays one row."""
    nodes: dict[str, list[Service]] = {}
    if s.kafka_brokers > 1 and "kafka" not in s.external:
        nodes["kafka"] = [kafka_node(i, s.kafka_brokers) for i in range(1, s.kafka_brokers + 1)]
    if s.flink_taskmanagers > 1 and "flink-taskmanager" not in s.external:
        nodes["flink-taskmanager"] = [
            taskmanager_node(i, s.flink_taskmanagers) for i in range(1, s.flink_taskmanagers + 1)
        ]
    if not nodes:
        return base
    return tuple(node for svc in base for node in nodes.get(svc.name, [svc]))
