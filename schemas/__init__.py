"""The Avro contract: `schemas/*.v1.avsc`, loaded and parsed once.

`schemas/released/v1/` keeps the schemas as last released; tests check that
every change stays backward compatible with them (Avro resolution rules).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import fastavro

SCHEMA_DIR = Path(__file__).resolve().parent
RELEASED_DIR = SCHEMA_DIR / "released" / "v1"

NAMES = (
    "getpage_batch",
    "read_io_batch",
    "write_io_batch",
    "pool_attributes",
    "object_catalog",
    "pool_stats",
    "object_io_stats",
    "gbp_stats",
    "backup_stats",
    "system_memory",
    "dead_letter",
)


def path(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.v1.avsc"


@cache
def text(name: str) -> str:
    """The schema's JSON text, as registered with the registry."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; known: {', '.join(NAMES)}")
    return path(name).read_text()


@cache
def parsed(name: str) -> dict[str, Any]:
    """The schema parsed by fastavro, for fast encoding and decoding."""
    out = fastavro.parse_schema(json.loads(text(name)))
    assert isinstance(out, dict)
    return out
