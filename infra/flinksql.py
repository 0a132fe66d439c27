"""Run Flink SQL on the launcher's session cluster, with the Iceberg catalog registered.

`run_sql` starts a separate Python process (PyFlink's client JVM needs the
cluster's jars and configuration in its environment before it starts); the
process registers the JDBC Iceberg catalog under the shared catalog name and
executes the statements in order, waiting for each INSERT to finish.
"""

from __future__ import annotations

import json
import subprocess
import sys

from .config import CATALOG_NAME, CATALOG_ROLE, Settings
from .install import flink_lib, pyflink_home
from .services import catalog_password, flink_env


def iceberg_catalog_ddl(s: Settings) -> str:
    """Flink's CREATE CATALOG for the shared JDBC catalog (same name Trino uses)."""
    props = {
        "type": "iceberg",
        "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        "uri": s.postgres_jdbc_url,
        "jdbc.user": CATALOG_ROLE,
        "jdbc.password": catalog_password(s),
        "jdbc.schema-version": "V1",
        "warehouse": s.warehouse,
    }
    if s.warehouse.startswith("s3://"):
        props.update(
            {
                "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                "s3.endpoint": s.s3["endpoint"],
                "s3.path-style-access": "true",
                "client.region": s.s3.get("region", "us-east-1"),
            }
        )
    body = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    return f"CREATE CATALOG {CATALOG_NAME} WITH ({body})"


def run_sql(s: Settings, statements: list[str], *, timeout: float = 600) -> str:
    """Execute statements on the session cluster; return the client's output."""
    payload = json.dumps([iceberg_catalog_ddl(s), *statements])
    proc = subprocess.run(
        [sys.executable, "-m", "poolsight.infra.flinksql"],
        input=payload,
        capture_output=True,
        text=True,
        env=flink_env(s, pyflink_home(), flink_lib(s)),
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Flink SQL failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


def _main() -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    from .config import HOST, load_settings

    statements = json.loads(sys.stdin.read())
    s = load_settings()
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    conf = env.get_config()
    conf.set("execution.target", "remote")
    conf.set("rest.address", HOST)
    conf.set("rest.port", str(s.ports["flink_rest"]))
    for stmt in statements:
        result = env.execute_sql(stmt)
        if stmt.lstrip().upper().startswith("INSERT"):
            result.wait()
        print(f"ok: {stmt.split('(')[0][:80]}", flush=True)


if __name__ == "__main__":
    _main()
