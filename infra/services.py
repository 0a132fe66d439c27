"""The services of the stack: how each is configured, started and health-checked.

Each service writes its configuration under run_dir/<name>, keeps its data
under data_dir/<name>, logs to log_dir/<name>.log and binds the bind host only
(127.0.0.1 unless configured). A service configured as external (infra/endpoints.py)
is never prepared here; its health check asks the configured address.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from poolsight.names import NAMESPACE, PROBE_TABLE, TRINO_CATALOG, TRINO_READER_USER

from .config import CATALOG_NAME, ConfigError, Settings
from .endpoints import external_catalog_password, hostport, jdbc_target, url_host_port
from .install import Installed
from .java import find_java
from .versions import pins

CONF_DIR = Path(__file__).with_name("conf")


class Unhealthy(Exception):
    pass


@dataclass(frozen=True)
class Launch:
    command: list[str]
    env: dict[str, str]
    cwd: Path
    user: str | None = None


@dataclass(frozen=True)
class Service:
    name: str
    ports: tuple[str, ...]  # keys of Settings.ports this service binds
    depends: tuple[str, ...]
    start_timeout: float
    prepare: Callable[[Settings, Installed], Launch]
    health: Callable[[Settings], str]  # returns a short description; raises Unhealthy
    endpoint: Callable[[Settings], str] | None = None  # its address when external; None: always embedded

    def address(self, s: Settings) -> str:
        if self.endpoint is not None and self.name in s.external:
            return self.endpoint(s)
        if not self.ports:  # e.g. the TaskManager: ephemeral ports, found through its JobManager
            return s.bind_host
        return hostport(s.bind_host, s.ports[self.ports[0]])


def _base_env(java_home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAVA_", "_JAVA", "FLINK_"))}
    if java_home is not None:
        env["JAVA_HOME"] = str(java_home)
        env["PATH"] = f"{java_home}/bin:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def _http_get(url: str, timeout: float = 5.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (our own http:// URLs)
            return bytes(resp.read())
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise Unhealthy(f"GET {url}: {exc}") from exc


def _fresh_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _need(path: Path | None, service: str) -> Path:
    if path is None:  # install_all skips what is configured as external
        raise Unhealthy(f"{service} is configured as external: it was not installed here")
    return path


# ---------------------------------------------------------------- PostgreSQL

PG_USER = "postgres"


def catalog_password(s: Settings) -> str:
    """The catalog user's password. An external catalog's comes from the environment or a file
    (infra/endpoints.py); the embedded role's is generated on first use, kept 0600 in the data folder."""
    if "postgres" in s.external:
        return external_catalog_password(s.endpoints)
    path = s.data_dir / "secrets" / "catalog-password"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(24))
    return path.read_text().strip()


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
    pg_bin = _need(inst.postgres_bin, "postgres")
    user = _pg_runas()
    data = s.data_dir / "postgres"
    sock = _fresh_dir(pg_socket_dir(s))
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
        env=_base_env(),
        cwd=data,
        user=user,
    )


def pg_connect(s: Settings, *, superuser: bool = False, dbname: str | None = None):  # type: ignore[no-untyped-def]
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
    import psycopg

    if s.catalog_is_rest:  # the catalog is an Iceberg REST service: no PostgreSQL at all
        _http_get(f"{s.catalog_uri}/v1/config")
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


# ---------------------------------------------------------------- Kafka


def kafka_server_properties(s: Settings) -> str:
    """The embedded broker's server.properties (KRaft, one node, listening on the bind host)."""
    broker, controller = hostport(s.bind_host, s.ports["kafka"]), hostport(s.bind_host, s.ports["kafka_controller"])
    return "\n".join(
        [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@{controller}",
            f"listeners=PLAINTEXT://{broker},CONTROLLER://{controller}",
            f"advertised.listeners=PLAINTEXT://{broker}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={s.data_dir / 'kafka'}",
            "num.partitions=4",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=false",
            "message.max.bytes=8388608",
            "",
        ]
    )


def prepare_kafka(s: Settings, inst: Installed) -> Launch:
    java = find_java(exact=int(pins()["java"]["flink"]), purpose="Kafka")
    conf = _fresh_dir(s.run_dir / "kafka")
    logs = s.data_dir / "kafka"
    props = conf / "server.properties"
    props.write_text(kafka_server_properties(s))
    classpath = f"{_need(inst.kafka_lib, 'kafka')}/*"
    env = _base_env(java.home)
    if not (logs / "meta.properties").exists():
        logs.mkdir(parents=True, exist_ok=True)
        cluster_id = (
            subprocess.run(
                [java.java, "-cp", classpath, "kafka.tools.StorageTool", "random-uuid"],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        proc = subprocess.run(
            [java.java, "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            raise Unhealthy(f"formatting Kafka storage failed: {proc.stdout}{proc.stderr}")
    return Launch(
        command=[
            java.java,
            "-Xms256m",
            "-Xmx768m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={CONF_DIR / 'kafka-log4j2.properties'}",
            f"-Dkafka.logs.dir={s.log_dir}",
            "-cp",
            classpath,
            "kafka.Kafka",
            str(props),
        ],
        env=env,
        cwd=conf,
    )


def health_kafka(s: Settings) -> str:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    # log_level 0: a refused connection is the answer here, not something to print.
    admin = AdminClient({"bootstrap.servers": s.kafka_bootstrap, "socket.timeout.ms": 3000, "log_level": 0})
    try:
        meta = admin.list_topics(timeout=5)
    except KafkaException as exc:
        raise Unhealthy(f"Kafka metadata request: {exc}") from exc
    if not meta.brokers:
        raise Unhealthy("Kafka metadata: no brokers")
    return f"{len(meta.brokers)} broker, {len(meta.topics)} topics"


# ---------------------------------------------------------------- Apicurio registry


def registry_options(s: Settings) -> list[str]:
    """The embedded registry's system properties: on the bind host, stored in (any) Kafka."""
    return [
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
    home = _need(inst.registry_home, "registry")
    return Launch(
        command=[java.java, "-Xms128m", "-Xmx512m", *registry_options(s), "-jar", str(home / "quarkus-run.jar")],
        env=_base_env(java.home),
        cwd=home,
    )


def health_registry(s: Settings) -> str:
    body = _http_get(f"{s.registry_url}/subjects")
    try:
        subjects = json.loads(body)
    except ValueError as exc:
        raise Unhealthy(f"registry answered non-JSON: {body[:80]!r}") from exc
    return f"{len(subjects)} subjects"


# ---------------------------------------------------------------- Flink


def flink_env(s: Settings, flink_home: Path, flink_lib: Path) -> dict[str, str]:
    """Environment for Flink processes and PyFlink clients (same jars, same config)."""
    java = find_java(exact=int(pins()["java"]["flink"]), purpose="Flink")
    env = _base_env(java.home)
    conf = s.run_dir / "flink" / "conf"
    if not (conf / "config.yaml").exists():  # Flink is external: the clients still read a config folder
        write_flink_conf(s)
    env.update(
        FLINK_HOME=str(flink_home),
        FLINK_LIB_DIR=str(flink_lib),
        FLINK_CONF_DIR=str(conf),
        FLINK_LOG_DIR=str(s.log_dir),
        FLINK_PID_DIR=str(s.run_dir / "flink"),
    )
    return env


FLINK_MODULE_OPENS = tuple(
    [
        f"--add-exports={m}=ALL-UNNAMED"
        for m in (
            "java.base/sun.net.util",
            "java.rmi/sun.rmi.registry",
            "jdk.compiler/com.sun.tools.javac.api",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.compiler/com.sun.tools.javac.parser",
            "jdk.compiler/com.sun.tools.javac.tree",
            "jdk.compiler/com.sun.tools.javac.util",
            "java.security.jgss/sun.security.krb5",
        )
    ]
    + [
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in (
            "java.lang",
            "java.net",
            "java.io",
            "java.nio",
            "sun.nio.ch",
            "java.lang.reflect",
            "java.text",
            "java.time",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "java.util.concurrent.locks",
        )
    ]
)


def flink_conf_entries(s: Settings) -> dict[str, object]:
    """config.yaml of the embedded cluster, and of every PyFlink client (whose REST address is
    the configured one: the embedded JobManager's, or an external cluster's)."""
    state = s.data_dir / "flink"
    rest_host, rest_port = s.flink_rest_address
    return {
        "jobmanager.rpc.address": s.bind_host,
        "jobmanager.rpc.port": s.ports["flink_rpc"],
        "jobmanager.bind-host": s.bind_host,
        "jobmanager.memory.process.size": s.flink_jobmanager_memory,
        "taskmanager.host": s.bind_host,
        "taskmanager.bind-host": s.bind_host,
        "taskmanager.numberOfTaskSlots": s.flink_slots,
        "taskmanager.memory.process.size": s.flink_taskmanager_memory,
        # PyFlink's gRPC channel to the Python worker (records, keyed state) allocates direct
        # buffers: with only network + framework off-heap (~400 MB) a busy job ran out
        # (OutOfMemoryError in netty) and hung with its checkpoints stuck.
        "taskmanager.memory.task.off-heap.size": "768m",
        # A checkpoint that cannot finish fails in time (3 tolerated, then the job restarts).
        "execution.checkpointing.timeout": "3 min",
        "rest.address": rest_host,
        "rest.bind-address": s.bind_host,
        "rest.port": rest_port,
        "blob.server.port": 0,
        "parallelism.default": 1,
        "io.tmp.dirs": str(state / "tmp"),
        # Keyed state off the heap, checkpoints incremental: a tracker's snapshot is tens of MB,
        # and on the heap (819 MB here) twenty of them left the JVM in GC with the job stalled,
        # each checkpoint a full 580 MB copy every 2 s. RocksDB writes only what changed.
        "state.backend.type": "rocksdb",
        "execution.checkpointing.incremental": True,
        "execution.checkpointing.dir": (state / "checkpoints").as_uri(),
        "execution.checkpointing.savepoint-dir": (state / "savepoints").as_uri(),
        # A checkpoint that fails on a busy 2-core machine is retried, not a job restart.
        "execution.checkpointing.tolerable-failed-checkpoints": 3,
        "jobmanager.execution.failover-strategy": "region",
        "restart-strategy.type": "exponential-delay",
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        # Flink's own module opens (its default config.yaml) plus ours: PyFlink's
        # DataStream translation reflects into java.util.
        "env.java.opts.all": " ".join((*FLINK_MODULE_OPENS, "-XX:+UseG1GC", "-Djava.awt.headless=true")),
    }


def write_flink_conf(s: Settings) -> Path:
    conf = _fresh_dir(s.run_dir / "flink" / "conf")
    entries = flink_conf_entries(s)
    _fresh_dir(Path(str(entries["io.tmp.dirs"])))
    (conf / "config.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in entries.items()))
    for name in ("log4j-console.properties", "log4j.properties", "log4j-cli.properties"):
        shutil.copyfile(CONF_DIR / "flink-log4j.properties", conf / name)
    return conf


def prepare_flink_jobmanager(s: Settings, inst: Installed) -> Launch:
    write_flink_conf(s)
    return Launch(
        command=["bash", str(inst.flink_home / "bin" / "jobmanager.sh"), "start-foreground"],
        env=flink_env(s, inst.flink_home, inst.flink_lib),
        cwd=s.run_dir / "flink",
    )


def prepare_flink_taskmanager(s: Settings, inst: Installed) -> Launch:
    write_flink_conf(s)
    return Launch(
        command=["bash", str(inst.flink_home / "bin" / "taskmanager.sh"), "start-foreground"],
        env=flink_env(s, inst.flink_home, inst.flink_lib),
        cwd=s.run_dir / "flink",
    )


def _flink_overview(s: Settings) -> dict[str, object]:
    body = _http_get(f"{s.flink_rest_url}/overview")
    try:
        return dict(json.loads(body))
    except ValueError as exc:
        raise Unhealthy(f"Flink REST answered non-JSON: {body[:80]!r}") from exc


def health_flink_jobmanager(s: Settings) -> str:
    o = _flink_overview(s)
    return f"Flink {o.get('flink-version')}, {o.get('jobs-running')} jobs running"


def health_flink_taskmanager(s: Settings) -> str:
    o = _flink_overview(s)
    tms = int(str(o.get("taskmanagers", 0)))
    if tms < 1:
        raise Unhealthy("no TaskManager registered with the JobManager")
    return f"{tms} TaskManager, {o.get('slots-available')}/{o.get('slots-total')} slots free"


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
    if s.warehouse.startswith("s3://"):
        lines += [
            "fs.native-s3.enabled=true",
            f"s3.endpoint={s.s3['endpoint']}",
            f"s3.region={s.s3.get('region', 'us-east-1')}",
            "s3.path-style-access=true",
            "s3.aws-access-key=${ENV:POOLSIGHT_S3_ACCESS_KEY}",
            "s3.aws-secret-key=${ENV:POOLSIGHT_S3_SECRET_KEY}",
        ]
    else:
        lines += ["fs.native-local.enabled=true", "local.location=/"]
    return "\n".join(lines) + "\n"


def trino_access_rules() -> dict[str, object]:
    """File-based access control: the reader may SELECT in the poolsight schema and nothing else
    (no other catalog or schema, no writes, no DDL); every other user keeps full rights. Without
    authentication Trino takes the user name the client sends: these rules keep the dashboard and
    Grafana read-only, they do not stop a local user who names the writer (docs/architecture.md)."""
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


def trino_config_properties(s: Settings, trino_home: Path, etc: Path) -> str:
    """The embedded Trino's config.properties: one node, coordinator and worker, on the bind host."""
    port = s.ports["trino"]
    return "\n".join(
        [
            "coordinator=true",
            "node-scheduler.include-coordinator=true",
            f"http-server.http.port={port}",
            f"discovery.uri=http://{hostport(s.bind_host, port)}",
            f"plugin.dir={trino_home / 'plugin'}",
            f"catalog.config-dir={etc / 'catalog'}",
            "query.max-memory=1GB",
            "query.max-memory-per-node=1GB",
            f"access-control.config-files={etc / 'access-control.properties'}",
            "",
        ]
    )


def prepare_trino(s: Settings, inst: Installed) -> Launch:
    java = find_java(minimum=int(pins()["java"]["trino_min"]), purpose="Trino")
    trino_home = _need(inst.trino_home, "trino")
    etc = _fresh_dir(s.run_dir / "trino" / "etc")
    catalogs = _fresh_dir(etc / "catalog")
    data = _fresh_dir(s.data_dir / "trino")
    node_id_file = data / "node-id"
    if not node_id_file.exists():
        node_id_file.write_text(str(uuid.uuid4()))
    (etc / "config.properties").write_text(trino_config_properties(s, trino_home, etc))
    (catalogs / "iceberg.properties").write_text(trino_catalog_properties(s))
    (etc / "rules.json").write_text(json.dumps(trino_access_rules(), indent=2) + "\n")
    (etc / "access-control.properties").write_text(
        f"access-control.name=file\nsecurity.config-file={etc / 'rules.json'}\n"
    )
    env = _base_env(java.home)
    if not s.catalog_is_rest:
        env["POOLSIGHT_CATALOG_PASSWORD"] = catalog_password(s)
    jvm = [
        ln.strip()
        for ln in (CONF_DIR / "trino-jvm.config").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    return Launch(
        command=[
            java.java,
            f"-Xmx{s.trino_heap}",
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


def trino_connection(s: Settings, *, schema: str | None = None, user: str | None = None):  # type: ignore[no-untyped-def]
    """A DB-API connection to the configured Trino as `user` (default: s.trino_user, the writer)."""
    import trino

    host, port = url_host_port(s.trino_url)
    return trino.dbapi.connect(  # type: ignore[no-untyped-call]
        host=host,
        port=port,
        http_scheme=s.trino_url.split("://")[0],
        user=user or s.trino_user,
        catalog="iceberg",
        schema=schema,
        request_timeout=30,
    )


def trino_rows(
    s: Settings, sql: str, params: tuple[Any, ...] = (), *, user: str | None = None
) -> tuple[list[tuple[str, str]], list[list[Any]]]:
    """Run one parameterised statement on Trino as `user` (default: the writer, s.trino_user):
    ((name, Trino type) per column, rows)."""
    with trino_connection(s, user=user) as conn:
        cur = conn.cursor()
        cur.execute(sql, params)
        rows = list(cur.fetchall())
        return [(str(d[0]), str(d[1])) for d in cur.description or ()], rows


def service_errors() -> tuple[type[BaseException], ...]:
    """What Trino unreachable or refusing raises (requests' errors are OSErrors)."""
    import trino.exceptions

    return (trino.exceptions.Error, trino.exceptions.HttpError, OSError)


def health_trino(s: Settings) -> str:
    import trino

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
            except trino.exceptions.TrinoUserError as exc:
                if exc.error_name not in ("TABLE_NOT_FOUND", "SCHEMA_NOT_FOUND"):  # first start
                    raise
    except (
        trino.exceptions.TrinoExternalError,
        trino.exceptions.TrinoQueryError,
        trino.exceptions.HttpError,
        OSError,
    ) as exc:
        raise Unhealthy(f"Trino SELECT 1: {exc}") from exc
    except Exception as exc:  # the client raises requests' own errors for refused connections
        raise Unhealthy(f"Trino SELECT 1: {type(exc).__name__}: {exc}") from exc
    return f"SELECT 1 ok, {active} active node"


# ---------------------------------------------------------------- dashboard and alert evaluator

# The evaluators (alerts: dashboards/alerts.py, advice: advice/online.py) write a heartbeat after
# every cycle (advice also at its start); their health is that it is recent.
EVERY_SECONDS = {"alerts": 60.0, "advice": 300.0}


def evaluator_every(name: str) -> float:
    """Seconds between evaluations: each one scans the tables it reads, which competes for CPU
    with the jobs on a small machine (POOLSIGHT_ALERTS_EVERY, POOLSIGHT_ADVICE_EVERY; the tests
    evaluate on demand)."""
    var = f"POOLSIGHT_{name.upper()}_EVERY"
    raw = os.environ.get(var, "")
    try:
        return max(5.0, float(raw)) if raw else EVERY_SECONDS[name]
    except ValueError:
        raise Unhealthy(f"{var}={raw!r} is not a number of seconds") from None


def heartbeat_path(s: Settings, name: str) -> Path:
    return s.run_dir / name / "heartbeat.json"


def write_heartbeat(path: Path, beat: dict[str, Any]) -> None:
    """An evaluator's heartbeat (its time added), replaced whole, never half written: what
    _health_beat reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"time": time.time(), **beat}))
    os.replace(tmp, path)


def alerts_heartbeat(s: Settings) -> Path:
    return heartbeat_path(s, "alerts")


def _health_beat(s: Settings, name: str, describe: Callable[[dict[str, Any]], str]) -> str:
    path = heartbeat_path(s, name)
    try:
        beat = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise Unhealthy(f"no heartbeat yet ({path})") from exc
    age = time.time() - float(beat.get("time", 0))
    if age > 3 * evaluator_every(name) + 60:  # + one slow evaluation
        raise Unhealthy(f"last evaluation {age:.0f} s ago")
    if beat.get("error"):
        raise Unhealthy(f"last evaluation failed: {str(beat['error'])[:200]}")
    return f"{describe(beat)}, evaluated {age:.0f} s ago"


def _python_launch(s: Settings, module: str, *args: str) -> Launch:
    return Launch(command=[sys.executable, "-m", module, *args], env=_base_env(), cwd=s.home)


def prepare_dashboard(s: Settings, inst: Installed) -> Launch:
    return _python_launch(s, "poolsight.dashboards.server", "--host", s.bind_host, "--port", str(s.ports["dashboard"]))


def health_dashboard(s: Settings) -> str:
    try:
        body = json.loads(_http_get(f"{s.dashboard_url}/healthz"))
    except urllib.error.HTTPError as exc:
        raise Unhealthy(f"dashboard /healthz: HTTP {exc.code}") from exc
    except ValueError as exc:
        raise Unhealthy(f"dashboard /healthz: {exc}") from exc
    return f"{s.dashboard_url}/ ({body.get('trino')})"


def prepare_alerts(s: Settings, inst: Installed) -> Launch:
    alerts_heartbeat(s).unlink(missing_ok=True)
    return _python_launch(s, "poolsight.dashboards.alerts", "run", "--every", str(evaluator_every("alerts")))


def health_alerts(s: Settings) -> str:
    return _health_beat(s, "alerts", lambda b: f"{b.get('rules')} rules, {b.get('open')} open alerts")


def prepare_advice(s: Settings, inst: Installed) -> Launch:
    heartbeat_path(s, "advice").unlink(missing_ok=True)
    return _python_launch(s, "poolsight.advice.online", "--every", str(evaluator_every("advice")))


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


def _kafka_endpoint(s: Settings) -> str:
    return s.kafka_bootstrap


def _registry_endpoint(s: Settings) -> str:
    return s.registry_url


def _flink_endpoint(s: Settings) -> str:
    return s.flink_rest_url


def _trino_endpoint(s: Settings) -> str:
    return s.trino_url


SERVICES: tuple[Service, ...] = (
    Service("postgres", ("postgres",), (), 60, prepare_postgres, health_postgres, catalog_endpoint),
    Service("kafka", ("kafka", "kafka_controller"), (), 90, prepare_kafka, health_kafka, _kafka_endpoint),
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
        _flink_endpoint,
    ),
    Service(
        "flink-taskmanager",
        (),
        ("flink-jobmanager",),
        120,
        prepare_flink_taskmanager,
        health_flink_taskmanager,
        _flink_endpoint,
    ),
    Service("trino", ("trino",), ("postgres",), 180, prepare_trino, health_trino, _trino_endpoint),
    Service("dashboard", ("dashboard",), ("trino",), 60, prepare_dashboard, health_dashboard),
    Service("alerts", (), ("trino",), 90, prepare_alerts, health_alerts),
    Service("advice", (), ("trino",), 90, prepare_advice, health_advice),
)

BY_NAME = {svc.name: svc for svc in SERVICES}
