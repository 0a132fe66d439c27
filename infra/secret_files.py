"""Secrets the product generates for its embedded services: random, written once under
<data>/secrets/ (the folder 0700, each file 0600), read back by whoever needs them. Never on a
command line, in a log or in the repository."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .config import Settings


def secrets_dir(s: Settings) -> Path:
    path = s.data_dir / "secrets"
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, data: bytes) -> None:
    """`data` into a new file only its owner may read (0600), or nothing if another process won
    the race to create it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def generated(s: Settings, name: str) -> str:
    """The secret `name`, generated (24 random bytes, URL-safe text) on first use."""
    path = secrets_dir(s) / name
    if not path.exists():
        write_private(path, secrets.token_urlsafe(24).encode())
    return path.read_text().strip()


def replace_private(path: Path, data: bytes) -> None:
    """`data` as the whole of `path`, only its owner may read it (0600): written beside it, then
    renamed over it, so a reader never sees half a file or a moment of wider permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
