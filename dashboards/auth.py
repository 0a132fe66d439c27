"""Who may read the dashboard when it listens beyond loopback.

On 127.0.0.1 (the default) the dashboard is open to whoever is on the machine, as every embedded
service is. Bound to any other address it starts only with one of:

- a password file ([dashboard] password_file, POOLSIGHT_DASHBOARD_PASSWORD_FILE): lines
  `user:pbkdf2_sha256$iterations$salt$hash` (hex), written by `python -m poolsight.dashboards.auth
  add FILE USER` (the password read from the terminal or standard input, never an argument), the
  file readable by its owner only; each request carries HTTP basic credentials (put TLS in front:
  basic credentials travel in clear otherwise);
- a trusted reverse proxy's header ([dashboard] user_header, POOLSIGHT_DASHBOARD_USER_HEADER, e.g.
  X-Forwarded-User): the proxy authenticates and names the user; the dashboard must then be
  reachable through the proxy only (bind it to an address only the proxy reaches).

`/healthz` stays open (it says ok or not, nothing else).
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import ipaddress
import os
import secrets
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from poolsight.argtypes import UsageParser
from poolsight.infra.config import ConfigError

ITERATIONS = 600_000  # OWASP's figure for PBKDF2-HMAC-SHA256 (2023)
SCHEME = "pbkdf2_sha256"


def _hash(password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)


def entry(user: str, password: str, iterations: int = ITERATIONS) -> str:
    """One line of a password file."""
    if not user or ":" in user or any(c.isspace() for c in user):
        raise ValueError(f"{user!r}: a user name has no ':' and no blanks")
    salt = secrets.token_bytes(16)
    return f"{user}:{SCHEME}${iterations}${salt.hex()}${_hash(password, salt, iterations).hex()}"


@dataclass(frozen=True)
class Passwords:
    """A password file, read once at start."""

    path: Path
    users: dict[str, tuple[int, bytes, bytes]] = field(default_factory=dict)  # user -> iterations, salt, hash

    @classmethod
    def read(cls, path: Path) -> Passwords:
        where = f"[dashboard] password_file {path}"
        try:
            mode = path.stat().st_mode
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"{where}: {exc.strerror or exc}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(f"{where}: readable by others (mode {stat.S_IMODE(mode):o}): chmod 600 it")
        users: dict[str, tuple[int, bytes, bytes]] = {}
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            user, _, spec = line.strip().partition(":")
            parts = spec.split("$")
            try:
                if len(parts) != 4 or parts[0] != SCHEME:
                    raise ValueError(f"expected user:{SCHEME}$iterations$salt$hash")
                users[user] = (int(parts[1]), bytes.fromhex(parts[2]), bytes.fromhex(parts[3]))
            except ValueError as exc:
                raise ConfigError(f"{where}, line {n}: {exc}") from None
        if not users:
            raise ConfigError(f"{where}: no users (add one: python -m poolsight.dashboards.auth add FILE USER)")
        return cls(path, users)

    def check(self, user: str, password: str) -> bool:
        known = self.users.get(user)
        if known is None:  # as long as a wrong password: no telling which users exist
            _hash(password, b"0" * 16, ITERATIONS)
            return False
        iterations, salt, digest = known
        return hmac.compare_digest(_hash(password, salt, iterations), digest)


@dataclass(frozen=True)
class Access:
    """How requests are let in: open (loopback), a password file, or a proxy's header."""

    passwords: Passwords | None = None
    user_header: str | None = None
    _ok: dict[str, str] = field(default_factory=dict, compare=False)  # Authorization header -> user, checked

    @property
    def open(self) -> bool:
        return self.passwords is None and self.user_header is None

    def user(self, headers: dict[str, str]) -> str | None:
        """The request's user, or None when it is not let in (header names lower case)."""
        if self.open:
            return "-"
        if self.user_header is not None:
            name = headers.get(self.user_header.lower(), "").strip()
            return name or None
        assert self.passwords is not None
        given = headers.get("authorization", "")
        if given in self._ok:  # PBKDF2 once per credentials, not per request (a page polls)
            return self._ok[given]
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, _, password = base64.b64decode(token, validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        if not self.passwords.check(user, password):
            return None
        if len(self._ok) >= 100:  # bounded
            self._ok.clear()
        self._ok[given] = user
        return user


def loopback(host: str) -> bool:
    """An IP address of the loopback interface (a name, even one that resolves there, is not taken on trust)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def access_for(host: str, password_file: Path | None, user_header: str | None) -> Access:
    """The access the dashboard bound to `host` starts with; ConfigError when it may not start."""
    if password_file is not None and user_header:
        raise ConfigError("[dashboard]: password_file or user_header, not both")
    if password_file is not None:
        return Access(passwords=Passwords.read(password_file))
    if user_header:
        return Access(user_header=user_header)
    if not loopback(host):
        raise ConfigError(
            f"the dashboard bound to {host} (not loopback) needs [dashboard] password_file "
            "(POOLSIGHT_DASHBOARD_PASSWORD_FILE) or user_header (POOLSIGHT_DASHBOARD_USER_HEADER): "
            "see dashboards/auth.py"
        )
    return Access()


def main(argv: list[str] | None = None) -> int:
    p = UsageParser(prog="python -m poolsight.dashboards.auth", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add or replace a user in a password file (created 0600)")
    add.add_argument("file", type=Path)
    add.add_argument("user")
    a = p.parse_args(argv)
    password = getpass.getpass(f"password for {a.user}: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    if len(password) < 12:
        print("poolsight dashboards.auth: a password of at least 12 characters", file=sys.stderr)
        return 2
    try:
        line = entry(a.user, password)
    except ValueError as exc:
        print(f"poolsight dashboards.auth: {exc}", file=sys.stderr)
        return 2
    path: Path = a.file
    kept = [x for x in (path.read_text().splitlines() if path.exists() else []) if not x.startswith(f"{a.user}:")]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join([*kept, line]) + "\n")
    print(f"{a.user} in {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
