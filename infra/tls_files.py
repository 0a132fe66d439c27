"""Self-signed TLS certificates of the embedded services (Trino's HTTPS, Kafka's listeners):
an EC P-256 key and a certificate for the bind host and loopback, made once under
<data>/secrets/ (0600) and made again when the bind host changes. Clients trust the certificate
itself; nothing here is a CA for anything else."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from .config import Settings
from .endpoints import DEFAULT_BIND_HOST
from .secret_files import secrets_dir, write_private

CERT_DAYS = 3650


def self_signed(s: Settings, keystore_name: str, certificate_name: str, common_name: str) -> tuple[Path, Path]:
    """(keystore: the PKCS#8 key then the certificate, certificate) as PEM files, made where
    missing or not naming every host a client may use."""
    folder = secrets_dir(s)
    keystore, certificate = folder / keystore_name, folder / certificate_name
    hosts = sorted({s.bind_host, DEFAULT_BIND_HOST})  # clients on the machine name loopback
    if not (keystore.exists() and certificate.exists() and _covers(certificate, hosts)):
        key_pem, cert_pem = _self_signed(hosts, common_name)
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


def _self_signed(hosts: list[str], common_name: str) -> tuple[bytes, bytes]:
    """(private key, certificate) as PEM: an EC P-256 key, a certificate for `hosts` (IP
    addresses or names), valid CERT_DAYS."""
    # lazy: as above.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
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
