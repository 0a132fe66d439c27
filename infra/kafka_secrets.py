"""The embedded Kafka's secrets when [kafka].security = sasl_ssl: the TLS key and self-signed
certificate of every listener (tls_files.py), and the generated SCRAM-SHA-512 password of the
product's client user. Brokers, and the launcher when it sets that user's credentials, meet on
the internal listener with mutual TLS: only a holder of the key gets in."""

from __future__ import annotations

from pathlib import Path

from .config import Settings
from .secret_files import generated, secrets_dir
from .tls_files import self_signed

CLIENT_USER = "poolsight"  # every client of the product: collectors, jobs, registry, benchmarks
MECHANISM = "SCRAM-SHA-512"
SCRAM_ITERATIONS = 8192
KEYSTORE_NAME, CERTIFICATE_NAME = "kafka-tls.pem", "kafka-tls.crt"
PASSWORD_NAME = "kafka-client-password"  # noqa: S105 (a file's name)


def kafka_secured(s: Settings) -> bool:
    """Whether the embedded Kafka runs with SASL_SSL (an external one: its endpoints say)."""
    return s.kafka_security == "sasl_ssl" and "kafka" not in s.external


def kafka_tls(s: Settings) -> tuple[Path, Path]:
    """(keystore, certificate) of the embedded brokers, made where missing."""
    return self_signed(s, KEYSTORE_NAME, CERTIFICATE_NAME, "poolsight embedded Kafka")


def certificate_path(s: Settings) -> Path:
    """What clients trust; only its path (the launcher makes it before Kafka starts)."""
    return s.data_dir / "secrets" / CERTIFICATE_NAME


def keystore_path(s: Settings) -> Path:
    return s.data_dir / "secrets" / KEYSTORE_NAME


def client_password_file(s: Settings) -> Path:
    """The client user's password file, generated on first use."""
    generated(s, PASSWORD_NAME)
    return secrets_dir(s) / PASSWORD_NAME
