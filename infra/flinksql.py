"""Run Flink SQL on the launcher's session cluster, with the Iceberg catalog registered.

`run_sql` starts a separate Python process (PyFlink's client JVM needs the
cluster's jars and configuration in its environment before it starts); the
process registers the Iceberg catalog (JDBC or REST, as configured) under the
shared catalog name and executes the statements in order, waiting for each
INSERT to finish.
"""

from __future__ import annotations

import json
import subprocess
import sys

from .config import CATALOG_NAME, Settings, load_settings
from .flink_service import client_env
from .install import flink_lib, pyflink_home
from .kafka_access import FLINK_KAFKA_PACKAGE, kafka_access, write_client_properties
from .s3_store import iceberg_properties, s3_store
from .secret_files import secrets_dir
from .services import catalog_password


def sql_literal(value: str) -> str:
    """A SQL string literal: a quote inside (an external catalog's password) is doubled."""
    return "'" + value.replace("'", "''") + "'"


def iceberg_catalog_ddl(s: Settings) -> str:
    """Flink's CREATE CATALOG for the shared catalog (same name Trino uses): the JDBC catalog in
    PostgreSQL, or an Iceberg REST catalog."""
    props: dict[str, str]
    if s.catalog_is_rest:
        props = {"type": "iceberg", "catalog-type": "rest", "uri": s.catalog_uri, "warehouse": s.warehouse}
    else:
        props = {
            "type": "iceberg",
            "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            "uri": s.postgres_jdbc_url,
            "jdbc.user": s.catalog_user,
            "jdbc.password": catalog_password(s),
            "jdbc.schema-version": "V1",
            "warehouse": s.warehouse,
        }
    store = s3_store(s)
    if store is not None:
        props |= iceberg_properties(store)
    body = ", ".join(f"{sql_literal(k)}={sql_literal(v)}" for k, v in props.items())
    return f"CREATE CATALOG {CATALOG_NAME} WITH ({body})"


def kafka_client_options(s: Settings) -> dict[str, str]:
    """The Flink Kafka connector's security options (`properties.*`): the protocol and trust as
    they are, the login with its password through Kafka's FileConfigProvider from a 0600 file,
    so the password is in neither the job's SQL nor its configuration. The file is written
    here: the JobManager and TaskManagers read it (on an external Flink cluster, the same path
    must hold it there)."""
    access = kafka_access(s)
    props = access.java_properties(FLINK_KAFKA_PACKAGE)
    if "sasl.jaas.config" in props:
        path = secrets_dir(s) / "kafka-client-flink.properties"
        write_client_properties(path, access, package=FLINK_KAFKA_PACKAGE)
        props |= {
            "config.providers": "file",
            "config.providers.file.class": f"{FLINK_KAFKA_PACKAGE}.common.config.provider.FileConfigProvider",
            "sasl.jaas.config": f"${{file:{path}:sasl.jaas.config}}",
        }
    return {f"properties.{k}": v for k, v in sorted(props.items())}


def run_sql(s: Settings, statements: list[str], *, timeout: float = 600) -> str:
    """Execute statements on the session cluster; return the client's output."""
    payload = json.dumps([iceberg_catalog_ddl(s), *statements])
    proc = subprocess.run(
        [sys.executable, "-m", "poolsight.infra.flinksql"],
        input=payload,
        capture_output=True,
        text=True,
        env=client_env(s, pyflink_home(), flink_lib(s)),
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Flink SQL failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


def _main() -> None:
    # lazy: only the child process that runs the statements loads PyFlink (seconds)
    from pyflink.table import EnvironmentSettings, TableEnvironment

    statements = json.loads(sys.stdin.read())
    address, port = load_settings().flink_rest_address
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    conf = env.get_config()
    conf.set("execution.target", "remote")
    conf.set("rest.address", address)
    conf.set("rest.port", str(port))
    for stmt in statements:
        result = env.execute_sql(stmt)
        if stmt.lstrip().upper().startswith("INSERT"):
            result.wait()
        print(f"ok: {stmt.split('(')[0][:80]}", flush=True)


if __name__ == "__main__":
    _main()
