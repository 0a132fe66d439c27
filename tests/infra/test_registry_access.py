"""An external schema registry with HTTP basic authentication (infra/registry_access.py): the
product's registry client against a stand-in registry on loopback that checks the header as a
registry behind basic authentication does, and the jobs' options that carry the access as JSON
without the password."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from confluent_kafka.schema_registry.error import SchemaRegistryError

from poolsight.flink_jobs.options import SimulationOptions, StatisticsOptions
from poolsight.infra.config import ConfigError, load_settings
from poolsight.infra.registry_access import RegistryAccess, registry_access
from poolsight.schemas.wire import registry_reachable

USER, PASSWORD = "svc_pool", "s3cr:et pw"


@pytest.fixture
def registry() -> Iterator[str]:
    """A registry that lists no subjects to USER:PASSWORD and answers 401 to anyone else."""
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.headers.get("Authorization") == expected
            body = b"[]" if ok else b'{"error_code": 401, "message": "Unauthorized"}'
            self.send_response(200 if ok else 401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_the_client_logs_in_with_the_password_from_its_file(registry: str, tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(PASSWORD + "\n")
    registry_reachable(RegistryAccess(registry, USER, str(tmp_path / "pw")), timeout=5)
    with pytest.raises(SchemaRegistryError, match="Unauthorized"):
        registry_reachable(registry, timeout=5)
    (tmp_path / "wrong").write_text("nope")
    with pytest.raises(SchemaRegistryError, match="Unauthorized"):
        registry_reachable(RegistryAccess(registry, USER, str(tmp_path / "wrong")), timeout=5)


def test_the_settings_name_the_file_and_the_variable_wins(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pw").write_text("not this one")
    monkeypatch.setenv("POOLSIGHT_REGISTRY_URL", registry)
    monkeypatch.setenv("POOLSIGHT_REGISTRY_USER", USER)
    monkeypatch.setenv("POOLSIGHT_REGISTRY_PASSWORD_FILE", str(tmp_path / "pw"))
    monkeypatch.setenv("POOLSIGHT_REGISTRY_CA_FILE", str(tmp_path / "ca.pem"))
    access = registry_access(load_settings())
    assert access == RegistryAccess(registry, USER, str(tmp_path / "pw"), str(tmp_path / "ca.pem"))
    assert access.client_conf()["ssl.ca.location"] == str(tmp_path / "ca.pem")
    monkeypatch.setenv("POOLSIGHT_REGISTRY_PASSWORD", PASSWORD)
    monkeypatch.delenv("POOLSIGHT_REGISTRY_CA_FILE")
    registry_reachable(registry_access(load_settings()), timeout=5)
    monkeypatch.delenv("POOLSIGHT_REGISTRY_PASSWORD")
    monkeypatch.delenv("POOLSIGHT_REGISTRY_PASSWORD_FILE")
    with pytest.raises(ConfigError, match="POOLSIGHT_REGISTRY_PASSWORD or POOLSIGHT_REGISTRY_PASSWORD_FILE"):
        registry_access(load_settings()).client_conf()


def test_the_embedded_registry_takes_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POOLSIGHT_REGISTRY_URL", raising=False)
    s = load_settings()
    assert registry_access(s) == RegistryAccess(s.registry_url)
    monkeypatch.setenv("POOLSIGHT_REGISTRY_USER", USER)
    with pytest.raises(ConfigError, match=r"for an external schema registry \(registry_url\)"):
        load_settings()


def test_the_jobs_options_carry_the_access_as_json_without_the_password(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(PASSWORD)
    access = RegistryAccess("https://registry.example", USER, str(tmp_path / "pw"), "/etc/ca.pem")
    for options in (SimulationOptions(access, idle_flush_seconds=3.0), StatisticsOptions(access)):
        text = json.dumps(asdict(options))
        assert PASSWORD not in text
        again = type(options)(**json.loads(text))
        assert again == options and again.registry == access


def test_status_says_what_an_external_registry_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    from poolsight.infra.service_security import security

    monkeypatch.delenv("POOLSIGHT_REGISTRY_URL", raising=False)
    assert security(load_settings(), "registry") == "none"
    monkeypatch.setenv("POOLSIGHT_REGISTRY_URL", "https://registry.example/apis/ccompat/v7")
    assert security(load_settings(), "registry") == "TLS"
    monkeypatch.setenv("POOLSIGHT_REGISTRY_USER", USER)
    assert security(load_settings(), "registry") == "TLS, password"
