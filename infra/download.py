"""Cached, verified downloads from Maven Central (and the npm registry, for the dashboard).

Single artifacts (the Trino and registry tarballs) are fetched over HTTP with a
progress line and checked against Maven Central's SHA-1; sets of jars with
their dependencies are resolved by Maven itself with strict checksums into a
repository inside the cache folder. A finished step leaves a stamp, so a
second run downloads nothing.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .versions import maven_repository


class DownloadError(Exception):
    pass


def maven_url(coords: str) -> str:
    """URL of `group:artifact:version[:classifier]:ext` on the configured repository."""
    parts = coords.split(":")
    if len(parts) == 4:
        group, artifact, version, ext = parts
        classifier = ""
    elif len(parts) == 5:
        group, artifact, version, classifier, ext = parts
    else:
        raise ValueError(f"bad Maven coordinates: {coords}")
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.{ext}"
    base = maven_repository()
    return f"{base}/{group.replace('.', '/')}/{artifact}/{version}/{name}"


def _progress(label: str, done: int, total: int, started: float) -> None:
    rate = done / max(time.monotonic() - started, 1e-6) / 1e6
    pct = f"{100 * done / total:5.1f}%" if total else "     "
    end = "\n" if total and done >= total else ""
    line = f"\r  {label}: {pct} {done / 1e6:8.1f} MB  {rate:6.1f} MB/s"
    if sys.stderr.isatty() or end:
        print(line, end=end, file=sys.stderr, flush=True)


def fetch(url: str, dest: Path, *, sha1_url: str | None = None) -> Path:
    """Download url to dest unless dest already exists; verify the SHA-1 first."""
    if dest.exists():
        return dest
    if not url.startswith(("https://", "http://")):
        raise DownloadError(f"refusing to download from {url}: only http(s) repositories")
    try:
        with urllib.request.urlopen(sha1_url or url + ".sha1", timeout=60) as resp:  # noqa: S310 (checked above)
            expected = resp.read().decode().split()[0].strip().lower()
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"cannot fetch checksum for {url}: {exc}") from exc
    return _download(url, dest, "sha1", expected)  # Maven Central publishes SHA-1


def fetch_integrity(url: str, dest: Path, integrity: str) -> Path:
    """Download url to dest unless it exists, checked against a pinned Subresource-Integrity
    string ("sha512-<base64>", as the npm registry publishes it)."""
    if dest.exists():
        return dest
    algorithm, _, b64 = integrity.partition("-")
    if algorithm not in ("sha256", "sha384", "sha512") or not b64:
        raise DownloadError(f"unsupported integrity {integrity!r} for {url}")
    if not url.startswith("https://"):
        raise DownloadError(f"refusing to download from {url}: only https")
    return _download(url, dest, algorithm, base64.b64decode(b64).hex())


def _download(url: str, dest: Path, algorithm: str, expected: str) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    digest = hashlib.new(algorithm, usedforsecurity=False)
    print(f"downloading {url}", file=sys.stderr)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, part.open("wb") as out:  # noqa: S310
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            last = 0.0
            while chunk := resp.read(1 << 20):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                now = time.monotonic()
                if now - last > 0.5 or done == total:
                    _progress(dest.name, done, total, started)
                    last = now
    except (urllib.error.URLError, OSError) as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"download of {url} failed: {exc}") from exc
    if digest.hexdigest() != expected:
        part.unlink(missing_ok=True)
        raise DownloadError(f"checksum mismatch for {url}: got {digest.hexdigest()}, expected {expected}")
    part.rename(dest)
    return dest


def unpack(archive: Path, dest: Path) -> Path:
    """Extract a tar.gz into dest (atomically: into a temporary folder, then renamed)."""
    if dest.exists():
        return dest
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(tmp)], check=True)
    entries = list(tmp.iterdir())
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
    root.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _pom(deps: list[str]) -> str:
    items = []
    for coords in deps:
        group, artifact, version = coords.split(":")[:3]
        items.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>poolsight</groupId><artifactId>jarset</artifactId><version>1</version>"
        f"<dependencies>{''.join(items)}</dependencies></project>"
    )


def maven_jars(name: str, deps: list[str], cache_dir: Path, *, transitive: bool, java_home: Path) -> Path:
    """Resolve deps (and their runtime dependencies if transitive) into cache_dir/jars/name."""
    out = cache_dir / "jars" / name
    spec = "\n".join(sorted(deps)) + f"\ntransitive={transitive}\n"
    stamp = out / ".complete"
    if stamp.exists() and stamp.read_text() == spec:
        return out
    if shutil.which("mvn") is None:
        raise DownloadError("Maven (mvn) is not installed: apt-get install maven")
    shutil.rmtree(out, ignore_errors=True)
    work = cache_dir / "maven" / name
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(_pom(deps))
    repo = maven_repository()
    cmd = [
        "mvn",
        "-C",
        "-f",
        str(work / "pom.xml"),
        f"-Dmaven.repo.local={cache_dir / 'm2'}",
        f"-DremoteRepositories={repo}",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={out}",
        "-DincludeScope=runtime",
        f"-DexcludeTransitive={'false' if transitive else 'true'}",
    ]
    print(f"resolving {name} jars with Maven ({len(deps)} artifacts)", file=sys.stderr)
    env = {"JAVA_HOME": str(java_home), "PATH": f"{java_home}/bin:/usr/bin:/bin"}
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout.splitlines():
        if "Downloaded from" in line or "ERROR" in line:
            print("  " + line.strip(), file=sys.stderr)
    if proc.returncode != 0:
        raise DownloadError(f"Maven could not resolve {name}: see the lines above ({' '.join(cmd)})")
    stamp.write_text(spec)
    return out
