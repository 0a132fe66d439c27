"""The dashboard beyond loopback: it starts only with authentication, and then lets in only who it
names (no Trino needed: pages and assets answer without it; here Trino's port is closed)."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from poolsight.dashboards.auth import Access, Passwords, access_for, loopback
from poolsight.dashboards.server import serve
from poolsight.infra.config import ConfigError, load_settings
from tests.conftest import ROOT, free_port

SALT = bytes(range(16))


def _line(user: str, password: str, iterations: int = 1000) -> str:
    """A password file line built here from the format's definition, not by the module's writer."""
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), SALT, iterations)
    return f"{user}:pbkdf2_sha256${iterations}${SALT.hex()}${digest.hex()}"


def _file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    p = tmp_path / "passwords"
    p.write_text(text)
    p.chmod(mode)
    return p


def test_a_password_file_checks_passwords_and_refuses_others(tmp_path: Path) -> None:
    pw = Passwords.read(_file(tmp_path, f"# analysts\n{_line('ana', 'correct horse 1')}\n\n{_line('bo', 'x' * 12)}\n"))
    assert sorted(pw.users) == ["ana", "bo"]
    assert pw.check("ana", "correct horse 1") and pw.check("bo", "x" * 12)
    assert not pw.check("ana", "correct horse 2") and not pw.check("bo", "correct horse 1")
    assert not pw.check("cy", "correct horse 1")


@pytest.mark.parametrize(
    ("text", "mode", "message"),
    [
        (_line("ana", "p" * 12), 0o644, "readable by others (mode 644): chmod 600 it"),
        ("ana:md5$abc\n", 0o600, "line 1: expected user:pbkdf2_sha256$iterations$salt$hash"),
        ("ana:pbkdf2_sha256$many$00$00\n", 0o600, "line 1: invalid literal for int()"),
        ("# nobody\n", 0o600, "no users (add one: python -m poolsight.dashboards.auth add FILE USER)"),
    ],
)
def test_an_unusable_password_file_is_named(tmp_path: Path, text: str, mode: int, message: str) -> None:
    with pytest.raises(ConfigError, match=__import__("re").escape(message)):
        Passwords.read(_file(tmp_path, text, mode))


def test_beyond_loopback_it_starts_only_with_authentication(tmp_path: Path) -> None:
    assert [loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "0.0.0.0", "10.1.2.3", "::", "lo")] == [
        True, True, True, True, False, False, False, False,
    ]  # fmt: skip
    assert access_for("127.0.0.1", None, None).open
    with pytest.raises(ConfigError, match=r"bound to 0\.0\.0\.0 \(not loopback\) needs \[dashboard\] password_file"):
        access_for("0.0.0.0", None, None)
    assert access_for("0.0.0.0", None, "X-Forwarded-User").user_header == "X-Forwarded-User"
    assert access_for("0.0.0.0", _file(tmp_path, _line("ana", "p" * 12)), None).passwords is not None
    with pytest.raises(ConfigError, match="not both"):
        access_for("0.0.0.0", _file(tmp_path, _line("ana", "p" * 12)), "X-Forwarded-User")


def test_the_server_process_refuses_to_start_open_beyond_loopback() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "poolsight.dashboards.server", "--host", "0.0.0.0", "--port", str(free_port())],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("POOLSIGHT_DASHBOARD_")},
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("poolsight dashboard: the dashboard bound to 0.0.0.0 (not loopback) needs"), r.stderr


def _server(access_file: Path | None, header: str | None) -> Iterator[str]:
    s = load_settings()
    s = replace(s, ports={**s.ports, "trino": free_port()}, dashboard_password_file=access_file,
                dashboard_user_header=header)  # fmt: skip
    server = serve(s, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def with_passwords(tmp_path: Path) -> Iterator[str]:
    yield from _server(_file(tmp_path, _line("ana", "correct horse 1") + "\n"), None)


def test_with_a_password_file_only_its_users_get_in(with_passwords: str) -> None:
    for path in ("/overview", "/static/app.js", "/api/overview"):
        status, headers = _get(with_passwords + path)
        assert status == 401 and headers["WWW-Authenticate"].startswith('Basic realm="poolsight"'), path
        assert _get(with_passwords + path, _basic("ana", "wrong horse 1"))[0] == 401
        assert _get(with_passwords + path, _basic("bo", "correct horse 1"))[0] == 401
        assert _get(with_passwords + path, {"Authorization": "Basic !!notbase64"})[0] == 401
        assert _get(with_passwords + path, {"Authorization": "Bearer abc"})[0] == 401
    assert _get(with_passwords + "/overview", _basic("ana", "correct horse 1"))[0] == 200
    assert _get(with_passwords + "/static/app.js", _basic("ana", "correct horse 1"))[0] == 200
    assert _get(with_passwords + "/api/overview", _basic("ana", "correct horse 1"))[0] == 502  # in: Trino is not
    assert _get(with_passwords + "/healthz")[0] == 503  # open, says only that Trino does not answer


def test_behind_a_proxy_the_header_names_the_user(tmp_path: Path) -> None:
    gen = _server(None, "X-Forwarded-User")
    base = next(gen)
    try:
        assert _get(base + "/overview")[0] == 403
        assert _get(base + "/overview", {"X-Forwarded-User": " "})[0] == 403
        assert _get(base + "/overview", {"x-forwarded-user": "ana"})[0] == 200
    finally:
        next(gen, None)


def test_the_add_command_writes_a_private_file_the_server_accepts(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    cmd = [sys.executable, "-m", "poolsight.dashboards.auth", "add", str(path), "ana"]
    r = subprocess.run(cmd, input="short\n", capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "at least 12 characters" in r.stderr and not path.exists()
    for password in ("first password!", "second password"):  # the second replaces the first
        r = subprocess.run(cmd, input=password + "\n", capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert r.returncode == 0, r.stderr
    assert "second password" not in r.stdout + r.stderr
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    pw = Passwords.read(path)
    assert list(pw.users) == ["ana"] and pw.check("ana", "second password") and not pw.check("ana", "first password!")
    assert Access(passwords=pw).user(_basic("ana", "second password") | {}) is None  # header names are lower case
    assert Access(passwords=pw).user({"authorization": _basic("ana", "second password")["Authorization"]}) == "ana"
