"""How every client of the product reaches Kafka: the brokers and what proves who it is, from
the settings, in one place. librdkafka clients (collectors, the simulation job's reads of the
group's offsets, benchmarks, tests) take `client_config()`; Java clients (the Flink jobs' Kafka
source, the registry's journal) take `java_properties()`, written to a 0600 file they read, so
the password is never on a command line, in a job's SQL or in a log.

The password itself is read when a client is made, from its file or an external Kafka's
variable: a KafkaAccess can be handed to another process (a producer process, a Flink job's
Python worker) without carrying it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import ConfigError, Settings, kafka_port_keys
from .endpoints import KAFKA_PASSWORD_ENV, hostport
from .kafka_secrets import (
    CLIENT_USER,
    MECHANISM,
    certificate_path,
    client_password_file,
    kafka_secured,
    keystore_path,
)
from .secret_files import replace_private

# The Flink Kafka connector (flink-sql-connector-kafka) relocates the Kafka client under this
# package: class names inside its properties must be the relocated ones.
FLINK_KAFKA_PACKAGE = "org.apache.flink.kafka.shaded.org.apache.kafka"
KAFKA_PACKAGE = "org.apache.kafka"
_LOGIN_MODULES = {
    "SCRAM-SHA-512": "common.security.scram.ScramLoginModule",
    "SCRAM-SHA-256": "common.security.scram.ScramLoginModule",
    "PLAIN": "common.security.plain.PlainLoginModule",
}


@dataclass(frozen=True)
class KafkaAccess:
    """One way into Kafka. `password_file` None with a SASL mechanism: an external Kafka's
    password from KAFKA_PASSWORD_ENV."""

    bootstrap: str
    protocol: str = "PLAINTEXT"  # security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str = ""  # with SASL_*: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN
    user: str = ""
    password_file: Path | None = None
    ca_file: Path | None = None  # PEM; None: the system's trust store
    cert_file: Path | None = None  # mutual TLS: the client's certificate and key (the launcher's own)
    key_file: Path | None = None

    def __str__(self) -> str:
        return self.bootstrap

    @property
    def secured(self) -> bool:
        return self.protocol != "PLAINTEXT"

    def password(self) -> str:
        if self.password_file is None:
            if not os.environ.get(KAFKA_PASSWORD_ENV):
                raise ConfigError(
                    f"Kafka at {self.bootstrap} takes SASL ({self.mechanism}): set {KAFKA_PASSWORD_ENV} "
                    "or POOLSIGHT_KAFKA_PASSWORD_FILE / [endpoints].kafka_password_file"
                )
            return os.environ[KAFKA_PASSWORD_ENV]
        try:
            return self.password_file.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"Kafka at {self.bootstrap}: its password file: {exc}") from None

    def client_config(self, **extra: Any) -> dict[str, Any]:
        """librdkafka's configuration: the brokers, the security settings, then `extra`
        (dotted names as keyword arguments: pass a dict with **)."""
        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap}
        if self.secured:
            conf["security.protocol"] = self.protocol
        if self.mechanism:
            conf |= {"sasl.mechanism": self.mechanism, "sasl.username": self.user, "sasl.password": self.password()}
        if self.ca_file is not None:
            conf["ssl.ca.location"] = str(self.ca_file)
        if self.cert_file is not None and self.key_file is not None:
            conf |= {"ssl.certificate.location": str(self.cert_file), "ssl.key.location": str(self.key_file)}
        return conf | extra

    def java_properties(self, package: str = KAFKA_PACKAGE) -> dict[str, str]:
        """A Java client's security properties (not the brokers); `package`: where the client's
        classes live (FLINK_KAFKA_PACKAGE inside the Flink connector)."""
        props: dict[str, str] = {}
        if not self.secured:
            return props
        props["security.protocol"] = self.protocol
        if self.mechanism:
            module = f"{package}.{_LOGIN_MODULES[self.mechanism]}"
            props["sasl.mechanism"] = self.mechanism
            props["sasl.jaas.config"] = (
                f'{module} required username="{_jaas(self.user)}" password="{_jaas(self.password())}";'
            )
        if self.ca_file is not None:
            props |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_file)}
        return props


def _jaas(value: str) -> str:
    """A value inside a JAAS option's double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def kafka_access(s: Settings) -> KafkaAccess:
    """How the product's clients reach the configured Kafka."""
    e = s.endpoints
    if "kafka" in s.external:
        return KafkaAccess(
            s.kafka_bootstrap,
            protocol=e.kafka_protocol,
            mechanism=e.kafka_mechanism,
            user=e.kafka_user,
            # The variable wins, as every password's does; a Flink job's workers need the file.
            password_file=None if os.environ.get(KAFKA_PASSWORD_ENV) else e.kafka_password_file,
            ca_file=e.kafka_ca_file,
        )
    if not kafka_secured(s):
        return KafkaAccess(s.kafka_bootstrap)
    certificate = certificate_path(s)
    return KafkaAccess(
        s.kafka_bootstrap,
        protocol="SASL_SSL",
        mechanism=MECHANISM,
        user=CLIENT_USER,
        password_file=client_password_file(s),
        # None yet: the embedded Kafka never started in this home; the system's trust then
        # refuses whatever answers, and a client names a Kafka that does not (not a missing file).
        ca_file=certificate if certificate.exists() else None,
    )


def internal_access(s: Settings, node: int = 1) -> KafkaAccess:
    """The launcher's way into embedded broker `node` with SASL_SSL on: its internal listener,
    mutual TLS with the brokers' own key (it sets the client user's credentials there)."""
    return KafkaAccess(
        hostport(s.bind_host, s.ports[kafka_port_keys(node)[2]]),
        protocol="SSL",
        ca_file=certificate_path(s),
        cert_file=certificate_path(s),
        key_file=keystore_path(s),
    )


def java_properties_text(props: dict[str, str], prefix: str = "") -> str:
    """java.util.Properties text: each key with `prefix`, backslashes in values escaped."""
    return "".join(f"{prefix}{k}={v.replace(chr(92), chr(92) * 2)}\n" for k, v in sorted(props.items()))


def write_client_properties(path: Path, access: KafkaAccess, *, package: str = KAFKA_PACKAGE, prefix: str = "") -> Path:
    """`access`'s Java properties into `path` (0600), for a Java client that reads them."""
    replace_private(path, java_properties_text(access.java_properties(package), prefix).encode())
    return path
