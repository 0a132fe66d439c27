"""The embedded Trino's secrets: its writer's and reader's passwords, the shared secret of its
internal communication, and the TLS key and self-signed certificate of its HTTPS port. Each is
generated on first use under <data>/secrets/ (secret_files.py); clients trust that certificate
and send the passwords (trino.py), Trino reads the password file built here.

The password file holds PBKDF2 hashes as Trino's file authenticator checks them:
`user:iterations:salt:hash`, salt and hash in lower-case hex, PBKDF2 with HMAC-SHA1 and the
hash's own length (trino-password-authenticators, EncryptionUtil). The passwords are random, so
the iteration count only has to pass Trino's minimum (1,000).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

from .config import Settings
from .secret_files import generated
from .tls_files import self_signed

PBKDF2_ITERATIONS = 10_000
PASSWORD_NAMES = {TRINO_WRITER_USER: "trino-writer-password", TRINO_READER_USER: "trino-reader-password"}
KEYSTORE_NAME, CERTIFICATE_NAME = "trino-tls.pem", "trino-tls.crt"


@dataclass(frozen=True)
class TrinoSecrets:
    passwords: dict[str, str]  # user -> password
    shared_secret: str  # internal communication between Trino's nodes
    keystore: Path  # PEM: the private key and the certificate (Trino's http-server.https.keystore.path)
    certificate: Path  # PEM: the certificate clients trust


def password_line(user: str, password: str, salt: bytes, iterations: int = PBKDF2_ITERATIONS, dklen: int = 32) -> str:
    """One line of Trino's password file."""
    digest = hashlib.pbkdf2_hmac("sha1", password.encode(), salt, iterations, dklen=dklen)
    return f"{user}:{iterations}:{salt.hex()}:{digest.hex()}"


def password_file(passwords: dict[str, str]) -> str:
    return "".join(password_line(u, p, os.urandom(16)) + "\n" for u, p in sorted(passwords.items()))


def trino_secrets(s: Settings) -> TrinoSecrets:
    """The embedded Trino's secrets, generated where missing."""
    keystore, certificate = self_signed(s, KEYSTORE_NAME, CERTIFICATE_NAME, "poolsight embedded Trino")
    return TrinoSecrets(
        passwords={user: generated(s, name) for user, name in PASSWORD_NAMES.items()},
        shared_secret=generated(s, "trino-shared-secret"),
        keystore=keystore,
        certificate=certificate,
    )


def embedded_password(s: Settings, user: str) -> str | None:
    """The generated password of `user` on the embedded Trino; None for a user it does not know."""
    name = PASSWORD_NAMES.get(user)
    return generated(s, name) if name is not None else None


def certificate_path(s: Settings) -> Path:
    """The embedded Trino's certificate: what its clients trust. Only its path: every connection
    asks for it, and the launcher makes (and checks) the certificate before Trino starts."""
    return s.data_dir / "secrets" / CERTIFICATE_NAME
