"""Each embedded service's port: its default, and the ports of a local cluster's later brokers.

Below config.py, so the settings schema (settings_schema.py) names the port settings from here.
"""

from __future__ import annotations

DEFAULT_PORTS: dict[str, int] = {
    "kafka": 9092,
    "kafka_controller": 9093,
    "kafka_internal": 9094,  # with [kafka].security: brokers and the launcher, mutual TLS
    "registry": 8081,
    "registry_management": 8091,
    "postgres": 5433,
    "flink_rest": 8082,
    "flink_rpc": 6123,
    "trino": 8080,  # HTTPS, password authentication (the embedded Trino's clients)
    "trino_internal": 8083,  # HTTP, Trino's requests to itself only (shared secret)
    "dashboard": 8070,
}

# A local Kafka cluster: broker i (1-based) listens on the kafka port + KAFKA_PORT_STEP * (i - 1)
# and its controller (and internal listener) on the kafka_controller (kafka_internal) port + the
# same, so broker 1 keeps the configured ports. At most MAX_NODES brokers, and as many TaskManagers.
KAFKA_PORT_STEP = 10
MAX_NODES = 9


KAFKA_PORT_BASES = ("kafka", "kafka_controller", "kafka_internal")


def kafka_port_keys(node: int) -> tuple[str, str, str]:
    """The Settings.ports keys of broker `node`'s client, controller and internal listeners."""
    a, b, c = (base if node == 1 else f"{base}_{node}" for base in KAFKA_PORT_BASES)
    return a, b, c


def port_variable(key: str) -> str:
    """The setting that moves the port of Settings.ports[key] (a later broker's is derived)."""
    base, _, node = key.rpartition("_")
    if node.isdigit() and base in KAFKA_PORT_BASES:
        return f"POOLSIGHT_{base.upper()}_PORT (broker {node} adds {KAFKA_PORT_STEP * (int(node) - 1)})"
    return f"POOLSIGHT_{key.upper()}_PORT"
