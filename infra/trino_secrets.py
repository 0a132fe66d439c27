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

import datetime as dt
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

from .config import Settings
from .endpoints import DEFAULT_BIND_HOST
from .secret_files import generated, secrets_dir, write_private

PBKDF2_ITERATIONS = 10_000
CERT_DAYS = 3650
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
    keystore, certificate = _tls(s)
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


def _tls(s: Settings) -> tuple[Path, Path]:
    folder = secrets_dir(s)
    keystore, certificate = folder / KEYSTORE_NAME, folder / CERTIFICATE_NAME
    hosts = sorted({s.bind_host, DEFAULT_BIND_HOST})  # clients on the machine name loopback
    if not (keystore.exists() and certificate.exists() and _covers(certificate, hosts)):
        key_pem, cert_pem = _self_signed(hosts)
        for path in (keystore, certificate):
            path.unlink(missing_ok=True)
        write_private(keystore, key_pem + cert_pem)
        write_private(certificate, cert_pem)
    return keystore, certificate


def _covers(certificate: Path, hosts: list[str]) -> bool:
    """Whether the certificate names every host (a changed bind host needs a new one)."""
    # lazy: only the launcher makes or checks certificates; clients only read the file.
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(certificate.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    have = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} | set(names.get_values_for_type(x509.DNSName))
    return set(hosts) <= have


def _self_signed(hosts: list[str]) -> tuple[bytes, bytes]:
    """(private key, certificate) as PEM: an EC P-256 key, a certificate for `hosts` (IP
    addresses or names), valid CERT_DAYS."""
    # lazy: as above.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "poolsight embedded Trino")])
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=CERT_DAYS))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)
