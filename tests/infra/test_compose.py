"""docker-compose.yml cannot run here (no Docker engine): check it against the native launcher."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from poolsight.infra.config import DEFAULT_PORTS, load_settings
from poolsight.infra.services import SERVICES, trino_access_rules, trino_catalog_properties
from poolsight.infra.versions import pins

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_every_native_service_has_a_container() -> None:
    services = _compose()["services"]
    for svc in SERVICES:
        assert svc.name in services, f"{svc.name} has no counterpart in docker-compose.yml"
    assert "minio" in services  # the s3:// warehouse


def test_images_and_build_args_equal_the_pins() -> None:
    services = _compose()["services"]
    p = pins()
    for name, component in [
        ("postgres", "postgres"),
        ("kafka", "kafka"),
        ("registry", "registry"),
        ("trino", "trino"),
        ("minio", "minio"),
    ]:
        assert services[name]["image"] == p[component]["image"], name
    for name in ("flink-jobmanager", "flink-taskmanager"):
        args = services[name]["build"]["args"]
        f = p["flink"]
        assert args["FLINK_IMAGE"] == f["image"]
        assert args["FLINK_VERSION"] == f["version"]
        assert args["KAFKA_CONNECTOR"] == f["kafka_connector"]
        assert args["FLINK_AVRO"] == f["avro"]
        assert args["ICEBERG"] == f["iceberg"]
        assert args["POSTGRES_JDBC"] == f["postgres_jdbc"]
        assert args["HADOOP"] == f["hadoop"]
    assert p["trino"]["image"].endswith(":" + p["trino"]["version"])
    assert p["registry"]["image"].endswith(":" + p["registry"]["version"])


def test_ports_publish_on_loopback_only() -> None:
    for name, svc in _compose()["services"].items():
        for port in svc.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)


def test_trino_catalog_file_has_the_native_keys(monkeypatch: Any) -> None:
    monkeypatch.setenv("POOLSIGHT_WAREHOUSE", "s3://poolsight/warehouse")
    monkeypatch.setenv("POOLSIGHT_S3_ENDPOINT", "http://minio:9000")
    native = trino_catalog_properties(load_settings())
    keys = {line.split("=", 1)[0] for line in native.splitlines() if "=" in line}
    docker = (ROOT / "infra/docker/trino-iceberg.properties").read_text()
    docker_keys = {ln.split("=", 1)[0] for ln in docker.splitlines() if "=" in ln and not ln.startswith("#")}
    assert keys == docker_keys


def _properties(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def _mounts(svc: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Container path -> (host path, mode) of a service's bind mounts."""
    out: dict[str, tuple[str, str]] = {}
    for volume in svc.get("volumes", []):
        source, target, *mode = str(volume).split(":")
        out[target] = (source, mode[0] if mode else "rw")
    return out


def test_trino_rules_file_equals_the_native_rules() -> None:
    expected = json.dumps(trino_access_rules(), indent=2) + "\n"
    assert (ROOT / "infra/docker/trino-rules.json").read_text() == expected, (
        "infra/docker/trino-rules.json drifted from trino_access_rules(): write it again from the function"
    )


def test_trino_mounts_the_access_control() -> None:
    mounts = _mounts(_compose()["services"]["trino"])
    props_file = ROOT / "infra/docker/trino-access-control.properties"
    props = _properties(props_file)
    assert props == {"access-control.name": "file", "security.config-file": "/etc/trino/rules.json"}
    # The image's Trino reads etc/access-control.properties, i.e. /etc/trino/access-control.properties.
    assert mounts["/etc/trino/access-control.properties"] == ("./infra/docker/trino-access-control.properties", "ro")
    assert mounts[props["security.config-file"]] == ("./infra/docker/trino-rules.json", "ro")
    for source, _ in mounts.values():
        assert (ROOT / source).is_file(), source


def test_python_services_reach_the_others_by_name(monkeypatch: Any) -> None:
    """poolsight's containers get every address as configuration (infra/endpoints.py): the
    other services, by their compose names and container ports, are external to them."""
    services = _compose()["services"]
    for name in ("dashboard", "alerts", "advice", "maintenance"):
        svc = services[name]
        assert "network_mode" not in svc, name
        assert svc["build"]["dockerfile"] == "infra/docker/poolsight.Dockerfile"
        dockerfile = (ROOT / svc["build"]["dockerfile"]).read_text()
        for arg in svc["build"]["args"]:
            assert f"ARG {arg}" in dockerfile, (name, arg)
        for key in [k for k in os.environ if k.startswith("POOLSIGHT_")]:
            monkeypatch.delenv(key)
        for key, value in svc["environment"].items():
            monkeypatch.setenv(key, str(value))
        s = load_settings()
        assert s.external == {"kafka", "registry", "flink-jobmanager", "flink-taskmanager", "trino"}, name
        for url in (s.trino_url, s.registry_url, s.flink_rest_url, f"//{s.kafka_bootstrap}"):
            assert urlsplit(url).hostname in services, (name, url)
        # Ports inside the containers (published elsewhere on the host).
        assert [urlsplit(u).port for u in (s.trino_url, s.registry_url, s.flink_rest_url)] == [8080, 8080, 8081]
        assert s.kafka_bootstrap == "kafka:9092"  # the broker's advertised listener
        assert services["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"] == "PLAINTEXT://kafka:9092"


def test_dashboard_publishes_on_loopback_only() -> None:
    dashboard = _compose()["services"]["dashboard"]
    command = dashboard["command"]
    port = DEFAULT_PORTS["dashboard"]
    assert command[command.index("--port") + 1] == str(port)
    assert dashboard["ports"] == [f"127.0.0.1:{port}:{port}"]


def _cluster() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())
    assert isinstance(data, dict)
    return data


def _environment(name: str) -> dict[str, str]:
    """A service's environment with the cluster option (compose merges it key by key)."""
    base, over = _compose()["services"], _cluster()["services"]
    env = {**base.get(name, {}).get("environment", {}), **over.get(name, {}).get("environment", {})}
    return {k: str(v) for k, v in env.items()}


def test_cluster_option_is_one_kraft_quorum_of_three(monkeypatch: Any) -> None:
    from poolsight.infra.kafka_service import kafka_server_properties

    base, over = _compose()["services"], _cluster()["services"]
    names = sorted(n for n in over if n == "kafka" or n.startswith("kafka-"))
    assert names == ["kafka", "kafka-2", "kafka-3"]
    envs = {n: _environment(n) for n in names}
    ids = {n: int(env["KAFKA_NODE_ID"]) for n, env in envs.items()}
    assert sorted(ids.values()) == [1, 2, 3]
    voters = {f"{ids[n]}@{n}:9093" for n in names}
    assert len({env["CLUSTER_ID"] for env in envs.values()}) == 1
    # The replication settings of the native 3-broker cluster (infra/kafka_service.py).
    monkeypatch.setenv("POOLSIGHT_KAFKA_BROKERS", "3")
    native = dict(ln.split("=", 1) for ln in kafka_server_properties(load_settings()).splitlines() if ln)
    replication = {k: v for k, v in native.items() if "replication.factor" in k or "min.isr" in k or "insync" in k}
    assert len(replication) == 7
    volumes = set()
    for n, env in envs.items():
        assert set(env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")) == voters, n
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
        assert env["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{n}:9092"
        assert set(env["KAFKA_LISTENERS"].split(",")) == {"PLAINTEXT://:9092", "CONTROLLER://:9093"}
        for key, value in replication.items():
            assert env["KAFKA_" + key.upper().replace(".", "_")] == value, (n, key)
        image = over[n].get("image", base.get(n, {}).get("image"))
        assert image == pins()["kafka"]["image"], n
        mounts = [str(v).split(":") for v in over[n].get("volumes", base.get(n, {}).get("volumes", []))]
        [volume] = [src for src, target, *_ in mounts if target == env["KAFKA_LOG_DIRS"]]
        volumes.add(volume)
        assert "ports" not in over[n] and all(str(p).startswith("127.0.0.1:") for p in base.get(n, {}).get("ports", []))
    assert len(volumes) == 3 and volumes <= set(_compose()["volumes"]) | set(_cluster()["volumes"])
    # Every client of Kafka is given all three brokers.
    bootstrap = ",".join(f"{n}:9092" for n in names)
    assert _environment("registry")["APICURIO_KAFKASQL_BOOTSTRAP_SERVERS"] == bootstrap
    for name in ("dashboard", "alerts", "advice", "maintenance"):
        assert _environment(name)["POOLSIGHT_KAFKA_BOOTSTRAP"] == bootstrap, name
    # Two TaskManagers: replicas of one service, which publishes nothing and has no fixed name.
    assert over["flink-taskmanager"]["deploy"]["replicas"] == 2
    assert not {"ports", "container_name"} & set(base["flink-taskmanager"])
