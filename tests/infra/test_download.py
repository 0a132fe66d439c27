"""Downloads are verified and cached; a missing Java is named with what was found."""

from __future__ import annotations

import hashlib
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from poolsight.infra.download import DownloadError, fetch
from poolsight.infra.java import JavaNotFound, find_java


def test_missing_java_names_what_was_found() -> None:
    with pytest.raises(JavaNotFound) as err:
        find_java(exact=99, purpose="Something")
    msg = str(err.value)
    assert "Something needs Java 99" in msg and "POOLSIGHT_JAVA_MODERN_HOME" in msg
    assert "found:" in msg


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "srv"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):  # type: ignore[no-untyped-def]
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a):  # type: ignore[no-untyped-def]
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()


def test_download_is_verified_and_cached(http_root: tuple[str, Path], tmp_path: Path) -> None:
    base, root = http_root
    payload = os.urandom(300_000)
    (root / "a.jar").write_bytes(payload)
    (root / "a.jar.sha1").write_text(hashlib.sha1(payload).hexdigest())
    dest = tmp_path / "cache" / "a.jar"
    assert fetch(f"{base}/a.jar", dest).read_bytes() == payload
    (root / "a.jar").unlink()  # a second run must not need the server
    assert fetch(f"{base}/a.jar", dest).read_bytes() == payload


def test_bad_checksum_and_failed_download_leave_nothing(http_root: tuple[str, Path], tmp_path: Path) -> None:
    base, root = http_root
    (root / "b.jar").write_bytes(b"tampered")
    (root / "b.jar.sha1").write_text("0" * 40)
    dest = tmp_path / "cache" / "b.jar"
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch(f"{base}/b.jar", dest)
    with pytest.raises(DownloadError, match=r"missing\.jar"):
        fetch(f"{base}/missing.jar", tmp_path / "cache" / "missing.jar")
    assert list((tmp_path / "cache").iterdir()) == []
