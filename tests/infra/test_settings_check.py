"""A misspelt section, key or POOLSIGHT_* variable is an error naming the closest valid name;
every name of the schema passes. The misspellings are made from the schema's own names."""

from __future__ import annotations

import os
import re
import runpy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from poolsight.infra.config import ConfigError, load_settings
from poolsight.infra.memory import ceilings
from poolsight.infra.s3_store import S3Store, s3_store
from poolsight.infra.settings_check import check_environment, check_file
from poolsight.infra.settings_schema import CEILING_SERVICES, DOCS, PREFIX, SECTIONS, SETTINGS, VARIABLES
from poolsight.sql.retention import retention_from
from tests.conftest import ROOT
from tests.infra.isolated import isolated_env  # noqa: F401 (autouse here)


def misspell(name: str) -> str:
    """`name` with two neighbouring letters of its middle swapped; a short one with its first
    letter doubled."""
    if len(name) < 4:
        return name[0] + name
    middle = range(len(name) // 2, len(name) - 1)
    i = next(i for i in middle if name[i] != name[i + 1] and {name[i], name[i + 1]}.isdisjoint("_-."))
    return name[:i] + name[i + 1] + name[i] + name[i + 2 :]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "poolsight.toml"
    path.write_text(text)
    return path


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    return message


# ---------------------------------------------------------------- the file


@pytest.mark.parametrize("section", [s.name for s in SECTIONS if "." not in s.name])
def test_a_misspelt_section_names_the_right_one(tmp_path: Path, section: str) -> None:
    typo = misspell(section)
    path = _write(tmp_path, f"[{typo}]\n")
    assert _error(path) == f"{path}: unknown section [{typo}]: did you mean [{section}]?"


def _fixed(section: str) -> list[str]:
    """The section's keys that are no pattern."""
    return [s.key for s in SETTINGS if s.section == section and s.each is None]


@pytest.mark.parametrize(("section", "key"), [(sec.name, key) for sec in SECTIONS for key in _fixed(sec.name)])
def test_a_misspelt_key_names_the_right_one(tmp_path: Path, section: str, key: str) -> None:
    typo = misspell(key)
    path = _write(tmp_path, f'[{section}]\n{typo} = "x"\n')
    assert _error(path) == f"{path}: [{section}] unknown key {typo!r}: did you mean {key!r}?"


@pytest.mark.parametrize("service", CEILING_SERVICES)
def test_a_misspelt_service_of_memory_ceiling_names_the_right_one(tmp_path: Path, service: str) -> None:
    typo = misspell(service)
    path = _write(tmp_path, f"[memory.ceiling]\n{typo} = 1024\n")
    assert _error(path) == f"{path}: [memory.ceiling] unknown key {typo!r}: did you mean {service!r}?"


def test_a_misspelt_nested_section_names_the_right_one(tmp_path: Path) -> None:
    nested = next(s.name for s in SECTIONS if "." in s.name)
    typo = misspell(nested)
    path = _write(tmp_path, f"[{typo}]\n")
    assert _error(path) == f"{path}: unknown section [{typo}]: did you mean [{nested}]?"


def test_a_name_like_none_lists_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, "[ports]\nzzz = 1\n")
    message = _error(path)
    assert message.startswith(f"{path}: [ports] unknown key 'zzz' (known: ")
    assert all(repr(key) in message for s in SETTINGS if s.section == "ports" for key in s.keys() or ())


def test_a_value_outside_any_section_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "bind = 1\n")
    assert _error(path) == f"{path}: [bind] is a section, not a value"


def test_the_file_named_by_poolsight_config_is_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.toml"
    path.write_text(f"[{misspell('history')}]\n")
    monkeypatch.setenv("POOLSIGHT_CONFIG", str(path))
    assert "did you mean [history]?" in _error(path)


def _every_name_config(tmp_path: Path) -> str:
    """A poolsight.toml that gives every section and every key that is no pattern, each valid."""
    return f"""
[paths]
data = "{tmp_path}/data"
log = "{tmp_path}/log"
run = "{tmp_path}/run"
cache = "{tmp_path}/cache"
[ports]
kafka = 29092
kafka_controller = 29093
dashboard = 28070
[bind]
host = "127.0.0.2"
[endpoints]
kafka_bootstrap = ["b1.example:9092", "b2.example:9092"]
kafka_security_protocol = "sasl_ssl"
kafka_sasl_mechanism = "SCRAM-SHA-256"
kafka_user = "svc_kafka"
kafka_password_file = "{tmp_path}/kpw"
kafka_ca_file = "{tmp_path}/kafka-ca.pem"
registry_url = "http://registry.example:8081/apis/ccompat/v7"
registry_user = "svc_registry"
registry_password_file = "{tmp_path}/rpw"
registry_ca_file = "{tmp_path}/registry-ca.pem"
flink_rest_url = "http://flink.example:8081"
trino_url = "https://trino.example"
trino_user = "svc_poolsight"
catalog_uri = "jdbc:postgresql://pg.example:5432/lake"
catalog_user = "lake"
catalog_password_file = "{tmp_path}/pw"
trino_password_file = "{tmp_path}/tpw"
trino_reader_password_file = "{tmp_path}/trpw"
trino_ca_file = "{tmp_path}/ca.pem"
connect_timeout = 12.5
[dashboard]
password_file = "{tmp_path}/dashboard-passwords"
user_header = "X-Forwarded-User"
[iceberg]
warehouse = "s3://lake/poolsight"
[s3]
endpoint = "http://objects.example:9000"
region = "eu-west-1"
path_style = false
access_key = "access"
secret_key = "secret"
[memory]
trino_heap = "3G"
flink_taskmanager = "2048m"
[memory.ceiling]
advice = 2048
kafka-3 = 1500
flink-taskmanager-2 = 7000
[kafka]
brokers = 3
security = "sasl_ssl"
[flink]
taskmanagers = 2
[trino]
add_files = true
[history]
pane_days = 30
hour_months = 24
day_months = "keep"
[groups]
DSG1 = ["DB2A", "DB2B"]
DSG2 = "DB2C,DB2D"
"""


def test_a_full_valid_config_loads(tmp_path: Path) -> None:
    text = _every_name_config(tmp_path)
    conf = tomllib.loads(text)
    for section in SECTIONS:  # it gives every section, and each key that is no pattern
        table = conf
        for part in section.name.split("."):
            assert part in table, section.name
            table = table[part]
        assert set(_fixed(section.name)) <= set(table), section.name
    _write(tmp_path, text)
    s = load_settings()
    assert (s.kafka_brokers, s.flink_taskmanagers, s.trino_add_files, s.bind_host) == (3, 2, True, "127.0.0.2")
    assert s.connect_timeout == 12.5
    e = s.endpoints
    assert (e.kafka_protocol, e.kafka_mechanism, e.kafka_user) == ("SASL_SSL", "SCRAM-SHA-256", "svc_kafka")
    assert (e.kafka_password_file, e.kafka_ca_file) == (tmp_path / "kpw", tmp_path / "kafka-ca.pem")
    assert s.kafka_security == "sasl_ssl"
    assert (s.dashboard_password_file, s.dashboard_user_header) == (
        tmp_path / "dashboard-passwords",
        "X-Forwarded-User",
    )
    assert ceilings(s, {})["advice"] == 2048
    assert retention_from(s.history, {}).pane_days == 30
    assert set(s.groups) == {"DSG1", "DSG2"}
    assert s3_store(s) == S3Store("http://objects.example:9000", "eu-west-1", False, "access", "secret")


def test_every_key_of_the_schema_passes() -> None:
    conf: dict[str, Any] = {}
    for s in SETTINGS:
        if s.section:
            table = conf
            for part in s.section.split("."):
                table = table.setdefault(part, {})
            table.update(dict.fromkeys(s.keys() or ("any-name",), "x"))
    check_file(conf, "poolsight.toml")


# ---------------------------------------------------------------- the environment


def _one_per_setting() -> list[str]:
    return [v for s in SETTINGS for v in s.variables()[:1]]


@pytest.mark.parametrize("variable", _one_per_setting())
def test_a_misspelt_variable_names_the_right_one(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    typo = PREFIX + misspell(variable.removeprefix(PREFIX))
    assert typo not in VARIABLES
    monkeypatch.setenv(typo, "1")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == f"environment: unknown variable {typo}: did you mean {variable}?"


def test_a_variable_like_none_points_to_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    name = PREFIX + "ZZZZ"
    monkeypatch.setenv(name, "1")
    with pytest.raises(ConfigError, match=re.escape(f"unknown variable {name} (every one is in {DOCS})")):
        load_settings()


def test_every_variable_of_the_schema_passes() -> None:
    check_environment(dict.fromkeys(VARIABLES, ""))


def test_every_variable_the_test_session_sets_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py sets the session's variables when it is imported: run it again into an
    empty environment and check what it set."""
    env: dict[str, str] = {}
    monkeypatch.setattr(os, "environ", env)
    runpy.run_path(str(ROOT / "tests" / "conftest.py"))
    assert any(name.startswith(PREFIX) for name in env)
    check_environment(env)


def test_other_variables_are_not_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PREFIX.rstrip("_") + "LY", "1")
    monkeypatch.setenv("MY_" + PREFIX + "THING", "1")
    load_settings()


def test_every_setting_is_in_the_schema_once() -> None:
    names = [v for s in SETTINGS for v in s.variables()]
    assert len(names) == len(set(names)) == len(VARIABLES)
    keys = [(s.section, k) for s in SETTINGS for k in s.keys() or ()]
    assert len(keys) == len(set(keys))
    assert {s.section for s in SETTINGS} - {""} == {s.name for s in SECTIONS}
