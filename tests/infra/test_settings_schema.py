"""The settings schema is the whole truth: every POOLSIGHT_* name anywhere in the tree is one of
its variables, and the defaults and names it restates from modules above it are theirs."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from poolsight.advice.online import replay_lookback
from poolsight.infra.config import CATALOG_ROLE, MAX_NODES, Settings, load_settings
from poolsight.infra.memory import default_ceilings
from poolsight.infra.services import trino_catalog_properties
from poolsight.infra.settings_schema import COMPOSE_BROKERS, PREFIX, SETTINGS, VARIABLES, Setting
from poolsight.sql.retention import Retention
from tests.conftest import ROOT
from tests.infra.isolated import isolated_env  # noqa: F401 (autouse here)

# A POOLSIGHT_* name, unless the text shows it as what the check refuses (docs/settings.md does).
LITERAL = re.compile(r"(?<!unknown variable )\b" + PREFIX + r"[A-Z0-9_]+")
# Not sources: the environment, downloads, state, build output.
SKIP_DIRS = {"var", "target", "build", "node_modules", "__pycache__"}


def _text_files(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            path = Path(folder) / name
            if path.suffix not in {".so", ".png", ".jpg", ".svg", ".gz", ".whl", ".parquet", ".avro"}:
                yield path


def test_every_variable_named_anywhere_is_in_the_schema() -> None:
    """Code, tests, benchmarks, docs, compose files, Makefile: a name ending in '_' is a prefix
    that code completes (POOLSIGHT_CEILING_, POOLSIGHT_HISTORY_), and must begin a known one."""
    unknown: dict[str, str] = {}
    files = 0
    for path in _text_files(ROOT):
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        files += 1
        for name in set(LITERAL.findall(text)):
            known = any(v.startswith(name) for v in VARIABLES) if name.endswith("_") else name in VARIABLES
            if not known:
                unknown.setdefault(name, str(path.relative_to(ROOT)))
    assert files > 100
    assert unknown == {}


def _setting(section: str, key: str) -> Setting:
    (s,) = [s for s in SETTINGS if s.section == section and s.key == key]
    return s


def _shown(value: object) -> str:
    return f"`{value}`"


def test_the_defaults_restated_are_their_owners() -> None:
    s = load_settings()
    assert _setting("memory", "trino_heap").default == _shown(s.trino_heap)
    assert _setting("memory", "flink_taskmanager").default == _shown(s.flink_taskmanager_memory)
    assert _setting("bind", "host").default == _shown(s.bind_host)
    assert _setting("kafka", "brokers").default == _shown(s.kafka_brokers)
    assert _setting("flink", "taskmanagers").default == _shown(s.flink_taskmanagers)
    assert _setting("trino", "add_files").default == _shown(str(s.trino_add_files).lower())
    assert _setting("endpoints", "trino_user").default == _shown(s.trino_user)
    assert _setting("endpoints", "catalog_user").default == _shown(CATALOG_ROLE) == _shown(s.catalog_user)
    kept = Retention()
    for field in dataclasses.fields(Retention):
        value = getattr(kept, field.name)
        assert _setting("history", field.name).default == _shown("keep" if value is None else value), field.name
    (lookback,) = [x for x in SETTINGS if x.env == "POOLSIGHT_ADVICE_LOOKBACK"]
    assert lookback.default == _shown(f"{replay_lookback():g}")


def test_the_s3_region_default_is_the_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_WAREHOUSE", "s3://lake/wh")
    monkeypatch.setenv("POOLSIGHT_S3_ENDPOINT", "http://objects.example:9000")
    lines = trino_catalog_properties(load_settings()).splitlines()
    assert f"s3.region={_setting('s3', 'region').default.strip('`')}" in lines


def test_every_service_with_a_ceiling_is_a_key_of_memory_ceiling() -> None:
    most = dataclasses.replace(load_settings(), kafka_brokers=MAX_NODES, flink_taskmanagers=MAX_NODES)
    assert isinstance(most, Settings)
    (ceiling,) = [s for s in SETTINGS if s.section == "memory.ceiling"]
    assert set(ceiling.keys() or ()) == set(default_ceilings(most))


def test_the_compose_clusters_brokers_are_the_schemas() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())["services"]
    brokers = [name for name in services if re.fullmatch(r"kafka(-\d+)?", name)]
    assert len(brokers) == COMPOSE_BROKERS
