"""The embedded Trino's secrets: the password file as Trino's file authenticator reads it, the
TLS key and certificate, and where they live. Trino itself accepts them in tests/stack/test_stack.py."""

from __future__ import annotations

import hashlib
import hmac
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from poolsight.infra.services import trino_config_properties
from poolsight.infra.trino_secrets import (
    CERTIFICATE_NAME,
    KEYSTORE_NAME,
    password_file,
    password_line,
    trino_secrets,
)
from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

from .isolated import isolated_env, settings_with  # noqa: F401 (the fixture, autouse here)

# RFC 6070's PBKDF2-HMAC-SHA1 test vectors: (password, salt, iterations, derived key length, key).
RFC6070 = [
    ("password", b"salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
    ("password", b"salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
    ("password", b"salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"),
    ("passwordPASSWORDpassword", b"saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25,
     "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
]  # fmt: skip


@pytest.mark.parametrize(("password", "salt", "iterations", "dklen", "key"), RFC6070)
def test_a_password_line_is_pbkdf2_sha1_as_rfc_6070_computes_it(
    password: str, salt: bytes, iterations: int, dklen: int, key: str
) -> None:
    line = password_line("u", password, salt, iterations, dklen)
    assert line == f"u:{iterations}:{salt.hex()}:{key}"


def _trino_checks(line: str, password: str) -> bool:
    """What Trino's EncryptionUtil does with a line (user:iterations:salt:hash, lower-case hex),
    with HMAC-SHA1 written out from RFC 2898 here rather than hashlib's PBKDF2."""
    _user, iterations, salt_hex, hash_hex = line.split(":")
    salt, want = bytes.fromhex(salt_hex), bytes.fromhex(hash_hex)
    assert salt_hex == salt_hex.lower() and hash_hex == hash_hex.lower() and int(iterations) >= 1000
    out = b""
    block = 1
    while len(out) < len(want):
        u = hmac.new(password.encode(), salt + block.to_bytes(4, "big"), hashlib.sha1).digest()
        acc = int.from_bytes(u, "big")
        for _ in range(int(iterations) - 1):
            u = hmac.new(password.encode(), u, hashlib.sha1).digest()
            acc ^= int.from_bytes(u, "big")
        out += acc.to_bytes(20, "big")
        block += 1
    return hmac.compare_digest(out[: len(want)], want)


def test_the_password_file_holds_each_user_once_with_a_salt_of_its_own() -> None:
    text = password_file({"a": "pa", "b": "pb"})
    lines = text.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["a", "b"] and text.endswith("\n")
    assert _trino_checks(lines[0], "pa") and _trino_checks(lines[1], "pb")
    assert not _trino_checks(lines[0], "pb")
    assert lines[0].split(":")[2] != lines[1].split(":")[2]


def test_secrets_are_generated_once_private_and_the_certificate_names_the_bind_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = settings_with(monkeypatch, BIND_HOST="127.0.0.5")
    first = trino_secrets(s)
    assert set(first.passwords) == {TRINO_WRITER_USER, TRINO_READER_USER}
    assert len(set(first.passwords.values())) == 2 and all(len(p) >= 32 for p in first.passwords.values())
    assert trino_secrets(s) == first  # kept, not made again
    folder = s.data_dir / "secrets"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert (first.keystore.name, first.certificate.name) == (KEYSTORE_NAME, CERTIFICATE_NAME)
    pem = first.keystore.read_bytes()
    key = load_pem_private_key(pem.split(b"-----END PRIVATE KEY-----")[0] + b"-----END PRIVATE KEY-----\n", None)
    cert = x509.load_pem_x509_certificate(first.certificate.read_bytes())
    assert cert.public_key() == key.public_key() and first.certificate.read_bytes() in pem
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "127.0.0.5"}
    # Another bind host: a new certificate that names it; the passwords stay.
    moved = trino_secrets(settings_with(monkeypatch, BIND_HOST="127.0.0.6"))
    cert = x509.load_pem_x509_certificate(moved.certificate.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.6" in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    assert moved.passwords == first.passwords


def test_https_with_passwords_on_the_trino_port_and_http_for_trino_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, TRINO_PORT="18080", TRINO_INTERNAL_PORT="18083")
    secret = trino_secrets(s)
    text = trino_config_properties(s, Path("/t"), Path("/e"), secret.keystore)
    conf = dict(ln.split("=", 1) for ln in text.splitlines() if ln)
    assert conf["http-server.https.port"] == "18080" and conf["http-server.https.enabled"] == "true"
    assert conf["http-server.http.port"] == "18083" and conf["discovery.uri"] == "http://127.0.0.1:18083"
    assert conf["http-server.authentication.type"] == "PASSWORD"
    assert conf["http-server.https.keystore.path"] == str(secret.keystore)
    # The shared secret from the process's environment, never in the file.
    assert conf["internal-communication.shared-secret"] == "${ENV:TRINO_SHARED_SECRET}"
    assert not any(p in text for p in [secret.shared_secret, *secret.passwords.values()])
    # compose's container: plain HTTP on the trino port, no authentication.
    plain = trino_config_properties(s, Path("/t"), Path("/e"))
    assert "http-server.http.port=18080" in plain and "authentication" not in plain and "https" not in plain
