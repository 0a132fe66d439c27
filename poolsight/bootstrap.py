"""What the launcher creates once a service answers: catalog role, tables, topics, namespaces.

Every step is idempotent, and reads its names from poolsight.names. On external services only
the product's own objects are created (topics, the JDBC catalog's tables, Iceberg namespaces,
tables and views); roles and databases of an external PostgreSQL are its owner's business.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from poolsight.infra.config import CATALOG_DATABASE, CATALOG_ROLE, Settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.kafka_service import min_insync_replicas, replication_factor
from poolsight.infra.services import Unhealthy, catalog_password, pg_connect
from poolsight.infra.trino import fetch_idempotent, trino_connection
from poolsight.names import NAMESPACE, NAMESPACES, PROBE_TABLE, TOPICS, TRINO_CATALOG
from poolsight.sql.catalog import (
    BY_NAME,
    TABLES,
    add_column_ddl,
    backfill_dml,
    create_table_ddl,
    lacking_properties_sql,
    missing_columns,
    properties_ddl,
)
from poolsight.sql.named import query
from poolsight.sql.pages import PAGE_TABLES, REFRESH_STATEMENTS, refresh
from poolsight.sql.retention import adopt_sql
from poolsight.sql.rollups import GRAINS, ROLLUPS
from poolsight.sql.views import view_statements

# The Iceberg JDBC catalog's own tables, schema version V1 (with iceberg_type),
# exactly as org.apache.iceberg.jdbc.JdbcUtil creates them. Trino does not
# create them, so they must exist before Trino first touches the catalog.
CATALOG_DDL = (
    """CREATE TABLE IF NOT EXISTS iceberg_tables (
        catalog_name VARCHAR(255) NOT NULL,
        table_namespace VARCHAR(255) NOT NULL,
        table_name VARCHAR(255) NOT NULL,
        metadata_location VARCHAR(1000),
        previous_metadata_location VARCHAR(1000),
        iceberg_type VARCHAR(5),
        PRIMARY KEY (catalog_name, table_namespace, table_name))""",
    """CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
        catalog_name VARCHAR(255) NOT NULL,
        namespace VARCHAR(255) NOT NULL,
        property_key VARCHAR(255),
        property_value VARCHAR(1000),
        PRIMARY KEY (catalog_name, namespace, property_key))""",
)


def bootstrap_postgres(s: Settings) -> None:
    if s.catalog_is_rest:  # the REST catalog keeps its own store
        return
    if "postgres" in s.external:  # the user gave the database, user and password
        with pg_connect(s) as conn:
            for ddl in CATALOG_DDL:
                conn.execute(ddl)
        return
    # lazy: `poolsight status` and `down` import the launcher and need no PostgreSQL client
    from psycopg import sql

    password = catalog_password(s)
    with pg_connect(s, superuser=True) as conn:
        role = sql.Identifier(CATALOG_ROLE)
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (CATALOG_ROLE,)).fetchone():
            conn.execute(sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(role, sql.Literal(password)))
        else:
            conn.execute(sql.SQL("CREATE ROLE {} WITH LOGIN PASSWORD {}").format(role, sql.Literal(password)))
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (CATALOG_DATABASE,)).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(CATALOG_DATABASE), role))
    with pg_connect(s) as conn:
        for ddl in CATALOG_DDL:
            conn.execute(ddl)


def bootstrap_kafka(s: Settings) -> None:
    # lazy: likewise no Kafka admin client
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient(kafka_access(s).client_config())
    existing = set(admin.list_topics(timeout=10).topics)
    extra: dict[str, str] = {}
    if "kafka" in s.external:
        replication = -1  # the cluster's own default.replication.factor (and min.insync.replicas)
    else:  # one broker, or every topic on up to 3 of a local cluster's (kafka_service.py)
        replication = replication_factor(s.kafka_brokers)
        if min_insync_replicas(s.kafka_brokers) > 1:
            extra["min.insync.replicas"] = str(min_insync_replicas(s.kafka_brokers))
    wanted = [
        NewTopic(
            t.name,
            num_partitions=t.partitions,
            replication_factor=replication,
            config={"retention.ms": str(t.retention_ms), "max.message.bytes": "8388608", **extra},
        )
        for t in TOPICS
        if t.name not in existing
    ]
    if not wanted:
        return
    for name, future in admin.create_topics(wanted, request_timeout=30).items():
        try:
            future.result()
        except Exception as exc:  # TOPIC_ALREADY_EXISTS from a concurrent launcher is fine
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise Unhealthy(f"creating topic {name}: {exc}") from exc


def _run(cur: Any, sql: str, params: list[Any] | None = None) -> list[Any]:
    return fetch_idempotent(cur, sql, params)  # every statement here is idempotent


def setup_mark() -> str:
    """What the catalog's tables and views are to be, hashed: every table's DDL and properties and
    every view's statement. bootstrap_trino leaves it as the probe table's comment once the
    catalog holds all of it."""
    h = hashlib.sha256()
    for table in TABLES:
        h.update(create_table_ddl(table).encode())
        h.update(properties_ddl(table).encode())
    for _, statement in view_statements():
        h.update(statement.encode())
    for name in REFRESH_STATEMENTS:
        h.update(query(name).sql.encode())
    return f"poolsight setup {h.hexdigest()[:24]}"


PROBE = f"{TRINO_CATALOG}.{NAMESPACE}.{PROBE_TABLE}"


def bootstrap_trino(s: Settings) -> None:
    """Schemas, tables, columns and properties an earlier version's tables lack, key backfills,
    views. A catalog whose probe table carries this version's setup_mark was brought up to it by
    an `up` before: the checks of every table's columns and properties and the views (15-30 s of
    Trino statements, at every `up`) are skipped; the backfills run all the same."""
    with trino_connection(s) as conn:
        cur = conn.cursor()
        for ns in NAMESPACES:
            # Identifiers cannot be bound as parameters; these come from names.py, not users.
            _run(cur, f'CREATE SCHEMA IF NOT EXISTS {TRINO_CATALOG}."{ns}"')
        _run(cur, f"CREATE TABLE IF NOT EXISTS {PROBE} (probe INTEGER)")
        mark = setup_mark()
        current = _run(
            cur,
            "SELECT comment FROM system.metadata.table_comments "
            "WHERE catalog_name = ? AND schema_name = ? AND table_name = ?",
            [TRINO_CATALOG, NAMESPACE, PROBE_TABLE],
        ) == [[mark]]
        before = {
            str(r[0])
            for r in _run(
                cur,
                f"SELECT table_name FROM {TRINO_CATALOG}.information_schema.tables WHERE table_schema = ?",
                [NAMESPACE],
            )
        }
        for table in TABLES:
            if table.name not in before:  # a statement each is seconds on a busy machine: only what is missing
                _run(cur, create_table_ddl(table))
        upgrade = not current or any(table.name not in before for table in TABLES)
        if upgrade:
            _upgrade_tables(cur, before)
        _backfill(cur)
        if upgrade:
            _create_views(cur)
        if upgrade or any(name not in before for name in PAGE_TABLES):
            # The page tables as this version makes them (the maintenance service keeps them after;
            # a refresh of its may commit meanwhile: the statements are safe to run twice).
            refresh(cur, run=fetch_idempotent)
        if upgrade:
            _run(cur, f"COMMENT ON TABLE {PROBE} IS '{mark}'")  # a hash of ours: nothing to escape


def _upgrade_tables(cur: Any, before: set[str]) -> None:
    """What an earlier version's tables lack: metadata file properties, retired rollups, columns."""
    # Tables created before the metadata file properties (sql/catalog.py): given them once.
    older = [t for t in TABLES if t.name in before]
    if not older:  # every table made just now, as this version defines it
        return
    for (name,) in _run(cur, lacking_properties_sql(older)):
        _run(cur, properties_ddl(BY_NAME[str(name)]))
    # Rollups an earlier version kept without their _retired part: what its retention removed
    # below them is theirs (sql/retention.py).
    for r in ROLLUPS:
        for grain in GRAINS:
            if r.table(grain).name in before and r.retired(grain).name not in before:
                _run(cur, adopt_sql(r, grain))
    # Tables created by an earlier version lack the columns defined since: add them.
    columns = _run(
        cur,
        f"SELECT table_name, column_name FROM {TRINO_CATALOG}.information_schema.columns WHERE table_schema = ?",
        [NAMESPACE],
    )
    existing: dict[str, set[str]] = {}
    for table_name, column in columns:
        existing.setdefault(table_name, set()).add(column)
    for table in TABLES:
        for column in missing_columns(table, existing.get(table.name, set())):
            _run(cur, add_column_ddl(table, column))


def _create_views(cur: Any) -> None:
    for name, statement in view_statements():
        try:
            _run(cur, statement)
        except Exception as exc:
            raise Unhealthy(f"creating view {name} from sql/views.sql: {exc}") from exc


def _backfill(cur: Any) -> None:
    """A key column must not be null in rows from before it (jobs' ensure_table): on every `up`,
    so one interrupted, or rows an older job wrote since, are filled in later."""
    for table in TABLES:
        for column in table.columns:
            if (update := backfill_dml(table, column)) is not None:
                _run(cur, update)


BOOTSTRAP: dict[str, Callable[[Settings], None]] = {
    "postgres": bootstrap_postgres,
    "kafka": bootstrap_kafka,
    "trino": bootstrap_trino,
}
