"""The pins of infra/versions.toml, loaded once."""

from __future__ import annotations

import os
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

VERSIONS_FILE = Path(__file__).with_name("versions.toml")


@cache
def pins() -> dict[str, Any]:
    with VERSIONS_FILE.open("rb") as fh:
        return tomllib.load(fh)


def pin(component: str, key: str = "version") -> str:
    return str(pins()[component][key])


def maven_repository() -> str:
    """Maven Central, or a mirror named by POOLSIGHT_MAVEN_REPOSITORY."""
    return (os.environ.get("POOLSIGHT_MAVEN_REPOSITORY") or str(pins()["maven_repository"])).rstrip("/")
