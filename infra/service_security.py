"""What protects each service's connections, as `poolsight status` shows it: whether the
traffic is encrypted (TLS) and how a client proves who it is. The product's own services are
described as the launcher configures them; an external one by what its settings ask of it."""

from __future__ import annotations

import os

from .config import Settings
from .endpoints import TRINO_PASSWORD_ENV
from .kafka_access import kafka_access
from .s3_store import s3_store

NONE = "none"


def security(s: Settings, service: str) -> str:
    """One short phrase for `service` (infra/services.py names)."""
    if service == "trino":
        tls = s.trino_url.startswith("https://")
        if "trino" not in s.external:
            return "TLS, password"
        has_password = s.endpoints.trino_password_file is not None or bool(os.environ.get(TRINO_PASSWORD_ENV))
        return ", ".join(p for p in ("TLS" if tls else "", "password" if has_password else "") if p) or NONE
    if service == "kafka" or service.startswith("kafka-"):
        return _kafka(s)
    if service == "postgres":
        return "password (scram)" if "postgres" not in s.external else "password"
    if service == "dashboard":
        if s.dashboard_password_file is not None:
            return "password"
        if s.dashboard_user_header:
            return f"proxy header {s.dashboard_user_header}"
        return f"{NONE} (loopback only)"
    if service in ("alerts", "advice", "maintenance"):
        return "-"  # no port: clients of Trino
    if service == "warehouse":
        store = s3_store(s)
        if store is None:
            return "-"  # a folder: the file system's permissions
        keys = "keys" if store.keys else "AWS default chain"
        return f"TLS, {keys}" if store.endpoint.startswith("https://") else keys
    if service == "registry":
        tls, login = s.registry_url.startswith("https://"), bool(s.endpoints.registry_user)
        return ", ".join(p for p in ("TLS" if tls else "", "password" if login else "") if p) or NONE
    return NONE


def _kafka(s: Settings) -> str:
    access = kafka_access(s)
    tls = access.protocol in ("SSL", "SASL_SSL")
    phrase = ", ".join(p for p in ("TLS" if tls else "", access.mechanism) if p) or NONE
    if "kafka" not in s.external and access.secured:
        return f"{phrase}; brokers: mutual TLS"
    return phrase
