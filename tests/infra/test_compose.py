"""docker-compose.yml cannot run here (no Docker engine): check it against the native launcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from poolsight.infra.config import load_settings
from poolsight.infra.services import SERVICES, trino_catalog_properties
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
