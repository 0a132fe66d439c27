"""How clients reach Kafka (infra/kafka_access.py) and what the secured embedded broker is told
(kafka_service.py): built from the settings alone, no broker needed. The live refusals are
stack tests (tests/stack/test_stack.py)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from poolsight.infra import kafka_service, services
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.flinksql import kafka_client_options
from poolsight.infra.kafka_access import FLINK_KAFKA_PACKAGE, KafkaAccess, internal_access, kafka_access
from poolsight.infra.kafka_secrets import kafka_tls
from tests.infra.isolated import settings_with


def _settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> Settings:
    """The settings with only `env` (and folders under tmp_path) of the POOLSIGHT_* variables."""
    for key in [k for k in os.environ if k.startswith("POOLSIGHT_")]:
        monkeypatch.delenv(key)
    return settings_with(monkeypatch, DATA_DIR=str(tmp_path / "data"), RUN_DIR=str(tmp_path / "run"), **env)


def test_plaintext_clients_get_the_brokers_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    s = _settings(monkeypatch, tmp_path, KAFKA_PORT="29092")
    access = kafka_access(s)
    assert access.client_config(**{"group.id": "g"}) == {"bootstrap.servers": "127.0.0.1:29092", "group.id": "g"}
    assert access.java_properties() == {}
    assert kafka_client_options(s) == {}
    assert not (tmp_path / "data" / "secrets" / "kafka-client-flink.properties").exists()


def test_the_secured_embedded_kafka_takes_scram_over_tls_with_a_generated_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    s = _settings(monkeypatch, tmp_path, KAFKA_SECURITY="sasl_ssl", KAFKA_PORT="29092")
    # Before the broker ever started here: no certificate to trust yet, the system's trust instead.
    assert "ssl.ca.location" not in kafka_access(s).client_config()
    kafka_tls(s)  # what the launcher makes before Kafka starts
    conf = kafka_access(s).client_config()
    secrets = tmp_path / "data" / "secrets"
    password = (secrets / "kafka-client-password").read_text()
    assert len(password) == 32 and stat.S_IMODE((secrets / "kafka-client-password").stat().st_mode) == 0o600
    assert conf == {
        "bootstrap.servers": "127.0.0.1:29092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "poolsight",
        "sasl.password": password,
        "ssl.ca.location": str(secrets / "kafka-tls.crt"),
    }
    assert password not in repr(kafka_access(s))  # an access handed to another process carries none


def test_java_clients_get_a_jaas_line_with_the_password_escaped(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text('a"b\\c\n')
    access = KafkaAccess("b:9093", "SASL_SSL", "SCRAM-SHA-256", "svc", pw, tmp_path / "ca.pem")
    assert access.java_properties(FLINK_KAFKA_PACKAGE) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.flink.kafka.shaded.org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="svc" password="a\\"b\\\\c";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tmp_path / "ca.pem"),
    }
    plain = KafkaAccess("b:9093", "SASL_PLAINTEXT", "PLAIN", "u", pw)
    assert plain.java_properties()["sasl.jaas.config"].startswith(
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
    )


def test_an_external_kafka_takes_its_endpoints_and_the_variable_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "kpw").write_text("from-file\n")
    env = {
        "KAFKA_BOOTSTRAP": "k1.example:9093,k2.example:9093",
        "KAFKA_SECURITY_PROTOCOL": "sasl_ssl",
        "KAFKA_SASL_MECHANISM": "scram-sha-256",
        "KAFKA_USER": "svc_pool",
        "KAFKA_PASSWORD_FILE": str(tmp_path / "kpw"),
        "KAFKA_CA_FILE": str(tmp_path / "ca.pem"),
    }
    s = _settings(monkeypatch, tmp_path, **env)
    conf = kafka_access(s).client_config()
    assert (conf["sasl.mechanism"], conf["sasl.username"], conf["sasl.password"]) == (
        "SCRAM-SHA-256",
        "svc_pool",
        "from-file",
    )
    assert conf["ssl.ca.location"] == str(tmp_path / "ca.pem")
    monkeypatch.setenv("POOLSIGHT_KAFKA_PASSWORD", "from-env")
    assert kafka_access(load_settings()).client_config()["sasl.password"] == "from-env"
    monkeypatch.delenv("POOLSIGHT_KAFKA_PASSWORD")
    monkeypatch.delenv("POOLSIGHT_KAFKA_PASSWORD_FILE")
    with pytest.raises(ConfigError, match="POOLSIGHT_KAFKA_PASSWORD or POOLSIGHT_KAFKA_PASSWORD_FILE"):
        kafka_access(load_settings()).client_config()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"KAFKA_SECURITY": "tls"},
            "POOLSIGHT_KAFKA_SECURITY / [kafka].security: 'tls' is not one of plaintext, sasl_ssl",
        ),
        (
            {"KAFKA_BOOTSTRAP": "k:9092", "KAFKA_SECURITY_PROTOCOL": "SASL_SSL"},
            "a SASL_* protocol takes kafka_sasl_mechanism and kafka_user",
        ),
        (
            {"KAFKA_BOOTSTRAP": "k:9092", "KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_USER": "u"},
            "another protocol takes neither",
        ),
        ({"KAFKA_BOOTSTRAP": "k:9092", "KAFKA_SECURITY_PROTOCOL": "KERBEROS"}, "'KERBEROS' is not one of PLAINTEXT"),
        ({"KAFKA_SECURITY_PROTOCOL": "SSL"}, "for an external Kafka (kafka_bootstrap)"),
        (
            {"KAFKA_BOOTSTRAP": "k:9092", "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "GSSAPI"},
            "'GSSAPI' is not one of SCRAM-SHA-512",
        ),
    ],
)
def test_kafka_security_settings_that_cannot_work_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        _settings(monkeypatch, tmp_path, **env)


def test_the_secured_broker_listens_for_clients_with_scram_and_for_brokers_with_mutual_tls(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    s = _settings(monkeypatch, tmp_path, KAFKA_SECURITY="sasl_ssl", KAFKA_BROKERS="3", BIND_HOST="127.0.0.2")
    props = dict(line.split("=", 1) for line in kafka_service.kafka_server_properties(s, 2).splitlines())
    secrets = tmp_path / "data" / "secrets"
    assert props["listeners"] == "SASL_SSL://127.0.0.2:9102,INTERNAL://127.0.0.2:9104,CONTROLLER://127.0.0.2:9103"
    assert props["advertised.listeners"] == "SASL_SSL://127.0.0.2:9102,INTERNAL://127.0.0.2:9104"
    assert props["listener.security.protocol.map"] == "SASL_SSL:SASL_SSL,INTERNAL:SSL,CONTROLLER:SSL"
    assert props["inter.broker.listener.name"] == "INTERNAL"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["listener.name.internal.ssl.client.auth"] == "required"
    assert props["listener.name.controller.ssl.client.auth"] == "required"
    assert (props["ssl.keystore.location"], props["ssl.truststore.location"]) == (
        str(secrets / "kafka-tls.pem"),
        str(secrets / "kafka-tls.crt"),
    )
    assert "password" not in kafka_service.kafka_server_properties(s, 2).replace("ScramLoginModule required;", "")
    key = (secrets / "kafka-tls.pem").read_text()
    assert key.startswith("-----BEGIN PRIVATE KEY-----") and "-----BEGIN CERTIFICATE-----" in key
    admin = internal_access(s, 3).client_config()
    assert (admin["bootstrap.servers"], admin["security.protocol"], admin["ssl.key.location"]) == (
        "127.0.0.2:9114",
        "SSL",
        str(secrets / "kafka-tls.pem"),
    )


def test_flink_and_the_registry_read_the_login_from_private_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    s = _settings(monkeypatch, tmp_path, KAFKA_SECURITY="sasl_ssl")
    password = kafka_access(s).password()
    options = kafka_client_options(s)
    path = tmp_path / "data" / "secrets" / "kafka-client-flink.properties"
    assert options["properties.sasl.jaas.config"] == f"${{file:{path}:sasl.jaas.config}}"
    assert options["properties.config.providers.file.class"].startswith(FLINK_KAFKA_PACKAGE)
    assert password not in repr(options)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and f'password="{password}"' in path.read_text()
    options_line = services.registry_options(s)[0]
    assert options_line == f"-Dquarkus.config.locations={tmp_path / 'data' / 'secrets' / 'registry-kafka.properties'}"
    assert password not in " ".join(services.registry_options(s))


def test_status_says_what_each_kafka_asks_of_its_clients(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from poolsight.infra.service_security import security

    assert security(_settings(monkeypatch, tmp_path), "kafka") == "none"
    secured = _settings(monkeypatch, tmp_path, KAFKA_SECURITY="sasl_ssl", KAFKA_BROKERS="2")
    assert security(secured, "kafka") == "TLS, SCRAM-SHA-512; brokers: mutual TLS"
    assert security(secured, "kafka-2") == "TLS, SCRAM-SHA-512; brokers: mutual TLS"
    external = {"KAFKA_BOOTSTRAP": "k:9093", "KAFKA_SECURITY_PROTOCOL": "SSL"}
    assert security(_settings(monkeypatch, tmp_path, **external), "kafka") == "TLS"
    external |= {"KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN", "KAFKA_USER": "u"}
    assert security(_settings(monkeypatch, tmp_path, **external), "kafka") == "PLAIN"
