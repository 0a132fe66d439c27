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


# ---------------------------------------------------------------- endpoints and bind host


def test_default_is_all_embedded_on_loopback() -> None:
    s = load_settings()
    assert s.external == frozenset() and s.bind_host == "127.0.0.1"
    assert (s.kafka_bootstrap, s.registry_url, s.flink_rest_url, s.trino_url, s.dashboard_url) == (
        "127.0.0.1:9092",
        "http://127.0.0.1:8081/apis/ccompat/v7",
        "http://127.0.0.1:8082",
        "https://127.0.0.1:8080",
        "http://127.0.0.1:8070",
    )
    assert s.flink_rest_address == ("127.0.0.1", 8082)
    assert s.postgres_jdbc_url == s.catalog_uri == "jdbc:postgresql://127.0.0.1:5433/iceberg_catalog"
    assert (s.catalog_user, s.trino_user, s.catalog_is_rest) == ("poolsight", "poolsight", False)


def test_every_endpoint_from_the_file(tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text(
        "[endpoints]\n"
        'kafka_bootstrap = ["b1.example:9092", "b2.example:9093"]\n'
        'registry_url = "https://registry.example/apis/ccompat/v7/"\n'
        'flink_rest_url = "http://flink.example:8081"\n'
        'trino_url = "https://trino.example"\n'
        'trino_user = "svc_poolsight"\n'
        'catalog_uri = "jdbc:postgresql://pg.example/lake?sslmode=require"\n'
        'catalog_user = "lake"\n'
    )
    s = load_settings()
    assert s.external == {"kafka", "registry", "flink-jobmanager", "flink-taskmanager", "trino", "postgres"}
    assert s.kafka_bootstrap == "b1.example:9092,b2.example:9093"
    assert s.registry_url == "https://registry.example/apis/ccompat/v7"  # no trailing slash
    assert (s.flink_rest_url, s.flink_rest_address) == ("http://flink.example:8081", ("flink.example", 8081))
    assert (s.trino_url, s.trino_user) == ("https://trino.example", "svc_poolsight")
    assert s.postgres_jdbc_url == "jdbc:postgresql://pg.example/lake?sslmode=require"
    assert s.catalog_user == "lake" and not s.catalog_is_rest
    assert s.dashboard_url == "http://127.0.0.1:8070"  # the dashboard is always ours


def test_environment_beats_the_file_and_empty_means_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text(
        '[endpoints]\nkafka_bootstrap = "file-broker:9092"\ntrino_url = "http://file-trino:8080"\n'
        '[bind]\nhost = "10.0.0.5"\n'
    )
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "env-a:9092, env-b:9092")
    monkeypatch.setenv("POOLSIGHT_TRINO_URL", "")
    monkeypatch.setenv("POOLSIGHT_BIND_HOST", "10.0.0.6")
    s = load_settings()
    assert s.kafka_bootstrap == "env-a:9092,env-b:9092"
    assert s.external == {"kafka"}
    assert s.bind_host == "10.0.0.6"
    assert s.trino_url == "https://10.0.0.6:8080"  # embedded, on the bind host
    assert s.registry_url == "http://10.0.0.6:8081/apis/ccompat/v7"


def test_bind_host_from_the_file_moves_every_embedded_address(tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text('[bind]\nhost = "192.168.7.2"\n')
    s = load_settings()
    assert s.kafka_bootstrap == "192.168.7.2:9092"
    assert s.postgres_jdbc_url == "jdbc:postgresql://192.168.7.2:5433/iceberg_catalog"


def test_an_ipv6_bind_host_is_bracketed_in_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_BIND_HOST", "::1")
    s = load_settings()
    assert (s.kafka_bootstrap, s.trino_url) == ("[::1]:9092", "https://[::1]:8080")
    assert s.flink_rest_address == ("::1", 8082)


def test_a_rest_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "http://rest.example:8181/catalog/")
    s = load_settings()
    assert s.catalog_is_rest and s.catalog_uri == "http://rest.example:8181/catalog"
    assert s.external == {"postgres"}


def test_flink_rest_external_means_both_flink_services(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_FLINK_REST_URL", "http://flink.example:8081")
    assert load_settings().external == {"flink-jobmanager", "flink-taskmanager"}


def test_external_names_are_service_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from poolsight.infra.services import SERVICES

    for name, value in {
        "KAFKA_BOOTSTRAP": "k:9092",
        "REGISTRY_URL": "http://r:8081",
        "FLINK_REST_URL": "http://f:8081",
        "TRINO_URL": "http://t:8080",
        "CATALOG_URI": "jdbc:postgresql://p:5432/c",
    }.items():
        monkeypatch.setenv(f"POOLSIGHT_{name}", value)
    configurable = {svc.name for svc in SERVICES if svc.endpoint is not None}
    assert load_settings().external == configurable


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"POOLSIGHT_KAFKA_BOOTSTRAP": "broker"}, "POOLSIGHT_KAFKA_BOOTSTRAP / [endpoints].kafka_bootstrap: 'broker'"),
        ({"POOLSIGHT_KAFKA_BOOTSTRAP": "a:9092,b:99999"}, "'b:99999': port out of range"),
        ({"POOLSIGHT_KAFKA_BOOTSTRAP": "bad host:9092"}, "'bad host' is not a host name"),
        ({"POOLSIGHT_REGISTRY_URL": "registry:8081"}, "POOLSIGHT_REGISTRY_URL / [endpoints].registry_url"),
        ({"POOLSIGHT_FLINK_REST_URL": "https://flink:8081"}, "'https://flink:8081' is not a http:// URL"),
        ({"POOLSIGHT_FLINK_REST_URL": "http://flink:8081/proxy"}, "no path or query"),
        ({"POOLSIGHT_TRINO_URL": "http://u:secret@trino:8080"}, "credentials in a URL are not supported"),
        ({"POOLSIGHT_TRINO_URL": "http://trino:port"}, "POOLSIGHT_TRINO_URL / [endpoints].trino_url"),
        ({"POOLSIGHT_TRINO_USER": "poolsight_reader"}, "is the read-only user"),
        ({"POOLSIGHT_TRINO_USER": "a b"}, "'a b' is not a user name"),
        ({"POOLSIGHT_CATALOG_URI": "postgres://pg/db"}, "POOLSIGHT_CATALOG_URI / [endpoints].catalog_uri"),
        ({"POOLSIGHT_CATALOG_URI": "jdbc:postgresql://pg:5432"}, "expected jdbc:postgresql://host:port/database"),
        ({"POOLSIGHT_CATALOG_URI": "jdbc:postgresql://pg/db?password=x"}, "POOLSIGHT_CATALOG_PASSWORD"),
        ({"POOLSIGHT_BIND_HOST": "0.0.0.0"}, "POOLSIGHT_BIND_HOST / [bind].host: '0.0.0.0' binds every interface"),
        ({"POOLSIGHT_BIND_HOST": "not a host"}, "POOLSIGHT_BIND_HOST / [bind].host"),
        ({"POOLSIGHT_CONNECT_TIMEOUT": "soon"}, "[endpoints].connect_timeout: 'soon' is not a number"),
        ({"POOLSIGHT_CONNECT_TIMEOUT": "0"}, "'0': between 0 and 3600 seconds"),
    ],
)
def test_bad_endpoints_name_the_setting_and_value(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError, match=__import__("re").escape(message)):
        load_settings()


def test_the_file_never_holds_a_password(tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text('[endpoints]\ncatalog_password = "hunter2"\n')
    with pytest.raises(ConfigError, match="catalog_password_file") as err:
        load_settings()
    assert "hunter2" not in str(err.value)


def test_a_misspelt_endpoint_is_an_error_not_an_embedded_service(tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text('[endpoints]\nkafka = "broker:9092"\n')
    with pytest.raises(ConfigError, match=r"\[endpoints\] unknown key 'kafka'"):
        load_settings()


def test_external_catalog_password_from_env_or_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from poolsight.infra.services import catalog_password

    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "jdbc:postgresql://pg.example:5432/lake")
    monkeypatch.setenv("POOLSIGHT_DATA_DIR", str(tmp_path / "data"))
    s = load_settings()
    with pytest.raises(ConfigError, match="needs a password: set POOLSIGHT_CATALOG_PASSWORD"):
        catalog_password(s)
    (tmp_path / "pw").write_text("from-file\n")
    monkeypatch.setenv("POOLSIGHT_CATALOG_PASSWORD_FILE", str(tmp_path / "pw"))
    assert catalog_password(load_settings()) == "from-file"
    monkeypatch.setenv("POOLSIGHT_CATALOG_PASSWORD", "from-env")
    assert catalog_password(load_settings()) == "from-env"
    assert not (s.data_dir / "secrets").exists()  # no embedded password was generated
