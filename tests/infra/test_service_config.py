"""What the embedded services are told: the default stays on 127.0.0.1 exactly as before; a bind
host moves every listener; the Iceberg catalog is JDBC (embedded or external) or REST."""

from __future__ import annotations

from pathlib import Path

import pytest

from poolsight.infra.flink_service import flink_conf_entries
from poolsight.infra.flinksql import iceberg_catalog_ddl
from poolsight.infra.kafka_service import kafka_server_properties
from poolsight.infra.services import registry_options, trino_catalog_properties, trino_config_properties
from tests.infra.isolated import isolated_env, settings_with  # noqa: F401 (isolated_env: autouse here)


def test_default_kafka_properties_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch)
    lines = kafka_server_properties(s).splitlines()
    assert lines[:5] == [
        "process.roles=broker,controller",
        "node.id=1",
        "controller.quorum.voters=1@127.0.0.1:9093",
        "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
        "advertised.listeners=PLAINTEXT://127.0.0.1:9092",
    ]
    assert f"log.dirs={s.data_dir / 'kafka'}" in lines


def test_default_flink_trino_and_registry_bind_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch)
    conf = flink_conf_entries(s)
    for key in (
        "jobmanager.rpc.address",
        "jobmanager.bind-host",
        "taskmanager.host",
        "taskmanager.bind-host",
        "rest.address",
        "rest.bind-address",
    ):
        assert conf[key] == "127.0.0.1", key
    assert (conf["rest.port"], conf["jobmanager.rpc.port"]) == (8082, 6123)
    trino = trino_config_properties(s, Path("/trino"), Path("/etc/trino"))
    assert "discovery.uri=http://127.0.0.1:8080" in trino.splitlines()
    assert "http-server.http.port=8080" in trino.splitlines()
    assert registry_options(s)[:4] == [
        "-Dquarkus.http.host=127.0.0.1",
        "-Dquarkus.http.port=8081",
        "-Dquarkus.management.host=127.0.0.1",
        "-Dquarkus.management.port=8091",
    ]
    assert "-Dapicurio.kafkasql.bootstrap.servers=127.0.0.1:9092" in registry_options(s)


def test_bind_host_moves_every_listener(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, BIND_HOST="10.9.8.7")
    texts = [
        kafka_server_properties(s),
        str(flink_conf_entries(s)),
        trino_config_properties(s, Path("/trino"), Path("/etc/trino")),
        " ".join(registry_options(s)),
        trino_catalog_properties(s),
    ]
    for text in texts:
        assert "127.0.0.1" not in text
        assert "10.9.8.7" in text


def test_embedded_services_reach_external_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BOOTSTRAP="k1:9092,k2:9092", FLINK_REST_URL="http://flink.example:8081")
    assert "-Dapicurio.kafkasql.bootstrap.servers=k1:9092,k2:9092" in registry_options(s)
    conf = flink_conf_entries(s)  # the clients' config.yaml points at the external cluster
    assert (conf["rest.address"], conf["rest.port"]) == ("flink.example", 8081)
    assert conf["rest.bind-address"] == "127.0.0.1"


def test_default_catalog_is_the_embedded_jdbc_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch)
    props = trino_catalog_properties(s).splitlines()
    assert "iceberg.catalog.type=jdbc" in props
    assert "iceberg.jdbc-catalog.connection-url=jdbc:postgresql://127.0.0.1:5433/iceberg_catalog" in props
    assert "iceberg.jdbc-catalog.connection-user=poolsight" in props
    ddl = iceberg_catalog_ddl(s)
    assert "'uri'='jdbc:postgresql://127.0.0.1:5433/iceberg_catalog'" in ddl
    assert "'jdbc.user'='poolsight'" in ddl and "'jdbc.schema-version'='V1'" in ddl


def test_external_jdbc_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(
        monkeypatch,
        CATALOG_URI="jdbc:postgresql://pg.example:6432/lake?sslmode=require",
        CATALOG_USER="lake_rw",
        CATALOG_PASSWORD="it's",
    )
    props = trino_catalog_properties(s)
    assert "iceberg.jdbc-catalog.connection-url=jdbc:postgresql://pg.example:6432/lake?sslmode=require" in props
    assert "iceberg.jdbc-catalog.connection-user=lake_rw" in props
    assert "it's" not in props  # Trino reads the password from its environment
    ddl = iceberg_catalog_ddl(s)
    assert "'uri'='jdbc:postgresql://pg.example:6432/lake?sslmode=require'" in ddl
    assert "'jdbc.user'='lake_rw'" in ddl and "'jdbc.password'='it''s'" in ddl  # quote doubled


def test_rest_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, CATALOG_URI="https://rest.example/api/catalog", WAREHOUSE="file:///lake")
    props = trino_catalog_properties(s).splitlines()
    assert props[:4] == [
        "connector.name=iceberg",
        "iceberg.catalog.type=rest",
        "iceberg.rest-catalog.uri=https://rest.example/api/catalog",
        "iceberg.rest-catalog.warehouse=file:///lake",
    ]
    assert not any("jdbc" in line for line in props)
    assert iceberg_catalog_ddl(s) == (
        "CREATE CATALOG poolsight WITH ('type'='iceberg', 'catalog-type'='rest', "
        "'uri'='https://rest.example/api/catalog', 'warehouse'='file:///lake')"
    )


def test_rest_catalog_on_s3(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(
        monkeypatch, CATALOG_URI="http://rest:8181", WAREHOUSE="s3://lake/wh", S3_ENDPOINT="http://s3.example:9000"
    )
    assert "fs.native-s3.enabled=true" in trino_catalog_properties(s)
    ddl = iceberg_catalog_ddl(s)
    assert "'catalog-type'='rest'" in ddl and "'io-impl'='org.apache.iceberg.aws.s3.S3FileIO'" in ddl


def test_only_the_pyflink_clients_run_without_the_c2_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A job's submission is a JVM that lives seconds: C1 only (CLIENT_JVM_ARGS). The JobManager
    and TaskManagers, started with flink_env, run for days and keep C2 (their scripts read
    JVM_ARGS too, so it must not be there)."""
    from poolsight.infra.flink_service import client_env, flink_env

    monkeypatch.setenv("JVM_ARGS", "-Xint")  # whatever the shell had is not what a client gets
    s = settings_with(monkeypatch)
    assert client_env(s, tmp_path, tmp_path)["JVM_ARGS"] == "-XX:TieredStopAtLevel=1"
    monkeypatch.delenv("JVM_ARGS")
    cluster = flink_env(s, tmp_path, tmp_path)
    assert "JVM_ARGS" not in cluster
    assert {k: v for k, v in client_env(s, tmp_path, tmp_path).items() if k != "JVM_ARGS"} == cluster
