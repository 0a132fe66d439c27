"""Settings: defaults, config file, environment, and clear errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from poolsight.infra import config
from poolsight.infra.config import DEFAULT_PORTS, ConfigError, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(__import__("os").environ):
        if key.startswith("POOLSIGHT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_defaults_bind_loopback_ports() -> None:
    s = load_settings()
    assert s.ports == DEFAULT_PORTS
    assert s.kafka_bootstrap == "127.0.0.1:9092"
    assert s.warehouse.startswith("file:///") and s.warehouse.endswith("/warehouse")


def test_config_file_then_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text(
        '[ports]\nkafka = 29092\ntrino = 28080\n[paths]\ndata = "/srv/poolsight"\n'
    )
    monkeypatch.setenv("POOLSIGHT_TRINO_PORT", "38080")
    s = load_settings()
    assert s.ports["kafka"] == 29092
    assert s.ports["trino"] == 38080  # environment beats the file
    assert s.data_dir == Path("/srv/poolsight")
    assert s.warehouse == "file:///srv/poolsight/warehouse"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"POOLSIGHT_KAFKA_PORT": "ninety"}, "POOLSIGHT_KAFKA_PORT"),
        ({"POOLSIGHT_KAFKA_PORT": "70000"}, "out of range"),
        ({"POOLSIGHT_KAFKA_PORT": "8080"}, "ports configured twice: [8080]"),
        ({"POOLSIGHT_WAREHOUSE": "/plain/path"}, "file:// or s3://"),
        ({"POOLSIGHT_WAREHOUSE": "s3://bucket/wh"}, "POOLSIGHT_S3_ENDPOINT"),
        ({"POOLSIGHT_CONFIG": "/nonexistent/poolsight.toml"}, "file not found"),
    ],
)
def test_bad_settings_name_the_setting(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError, match=__import__("re").escape(message)):
        load_settings()


def test_home_holds_every_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POOLSIGHT_HOME", str(tmp_path / "h"))
    s = load_settings()
    assert s.home == tmp_path / "h"
    assert (s.cache_dir, s.data_dir, s.log_dir, s.run_dir) == (
        tmp_path / "h" / ".cache",
        tmp_path / "h" / "var" / "data",
        tmp_path / "h" / "var" / "log",
        tmp_path / "h" / "var" / "run",
    )
    assert s.warehouse == (tmp_path / "h" / "var" / "data" / "warehouse").as_uri()


def test_home_is_the_checkout_the_code_runs_from() -> None:
    root = Path(__file__).resolve().parents[2]
    assert config.checkout_of(root / "infra") == root
    assert load_settings().home == root  # the current directory (tmp_path) is no checkout


def test_an_installed_package_keeps_its_state_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "poolsight" / "infra"
    monkeypatch.setattr(config, "__file__", str(site / "config.py"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert config.checkout_of(site) is None
    assert load_settings().home == tmp_path / "xdg" / "poolsight"
    # Run from inside a checkout, the installed command uses that checkout.
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root / "docs")
    assert load_settings().home == root
