"""How every client reaches the schema registry: its URL and, for an external registry, HTTP
basic credentials and the CA its HTTPS certificate is checked against. Like kafka_access.py,
an access names the password's file rather than carrying it: the Flink jobs take it in their
options (JSON on the job client's command line) and read the password in their workers."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .config import ConfigError, Settings
from .endpoints import REGISTRY_PASSWORD_ENV


@dataclass(frozen=True)
class RegistryAccess:
    url: str  # the Confluent-compatible API's base URL
    user: str = ""  # HTTP basic authentication; "": none
    password_file: str = ""  # "": REGISTRY_PASSWORD_ENV (strings: the jobs' options are JSON)
    ca_file: str = ""  # PEM; "": the system's trust store

    def __str__(self) -> str:
        return self.url

    def password(self) -> str:
        if self.password_file:
            try:
                with open(self.password_file) as fh:
                    return fh.read().strip()
            except OSError as exc:
                raise ConfigError(f"schema registry at {self.url}: its password file: {exc}") from None
        if os.environ.get(REGISTRY_PASSWORD_ENV):
            return os.environ[REGISTRY_PASSWORD_ENV]
        raise ConfigError(
            f"schema registry at {self.url} takes user {self.user!r}: set {REGISTRY_PASSWORD_ENV} "
            "or POOLSIGHT_REGISTRY_PASSWORD_FILE / [endpoints].registry_password_file"
        )

    def client_conf(self) -> dict[str, Any]:
        """confluent_kafka's SchemaRegistryClient configuration, without its timeouts."""
        conf: dict[str, Any] = {"url": self.url}
        if self.user:
            conf["basic.auth.user.info"] = f"{self.user}:{self.password()}"
        if self.ca_file:
            conf["ssl.ca.location"] = self.ca_file
        return conf


def registry_access(s: Settings) -> RegistryAccess:
    e = s.endpoints
    if "registry" not in s.external:
        return RegistryAccess(s.registry_url)
    # The variable wins, as every password's does; a Flink job's workers need the file.
    password_file = "" if os.environ.get(REGISTRY_PASSWORD_ENV) else str(e.registry_password_file or "")
    return RegistryAccess(s.registry_url, e.registry_user, password_file, str(e.registry_ca_file or ""))
