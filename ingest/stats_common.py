"""What every statistics parser is: one result type and one plug-in shape.

A parser reads the whole text of a file and returns `Parsed`: the records it
could build, each with its schema name (`poolsight.schemas.NAMES`), and the
blocks it had to reject, each with file, line, field and reason. A parser is
registered as a `StatsFormat` in `stats_formats.FORMATS`, the one table the CLI
reads; the CLI itself holds no parsing logic.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from poolsight import schemas

_POOL_STATS: list[dict[str, Any]] = json.loads(schemas.text("pool_stats"))["fields"]
POOL_STATS_FIELDS: list[str] = [f["name"] for f in _POOL_STATS]
_GBP_STATS: list[dict[str, Any]] = json.loads(schemas.text("gbp_stats"))["fields"]


def empty_pool_stats() -> dict[str, Any]:
    """A PoolStats record with every field at its schema default (None where it has none)."""
    return {f["name"]: f.get("default") for f in _POOL_STATS}


def empty_gbp_stats() -> dict[str, Any]:
    """A GbpStats record with every field at its schema default (None where it has none)."""
    return {f["name"]: f.get("default") for f in _GBP_STATS}


@dataclass(frozen=True)
class Rejected:
    """A block that cannot be used: where it is and why (goes to the dead-letter topic)."""

    file: str  # the file (or input) name it was read from
    line: int
    field: str
    reason: str
    raw: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.reason}"


@dataclass
class Parsed:
    """The one result of every statistics parser."""

    records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (schema name, record)
    rejected: list[Rejected] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)  # counters the parser does not know: left out
    ignored: Counter[str] = field(default_factory=Counter)  # counters it knows and deliberately leaves out
    skipped: int = 0  # units of the input that are not statistics (e.g. other db2diag records)

    def add(self, schema: str, record: dict[str, Any]) -> None:
        if schema not in schemas.NAMES:
            raise KeyError(f"no schema {schema!r}")
        self.records.append((schema, record))

    def of(self, schema: str) -> list[dict[str, Any]]:
        """The records of one schema, in input order."""
        return [r for s, r in self.records if s == schema]


@dataclass(frozen=True)
class ParseOptions:
    """What a user can tell a parser that the input does not say."""

    source: str | None = None  # the subsystem, member or instance, when the input names none
    at: float | None = None  # when the input was produced, or its interval ended (epoch s), if it has no time
    columns: list[str] | None = None  # column names of a headerless export
    pool: str | None = None  # the buffer pool, when the input does not name it
    interval: float | None = None  # seconds an interval lasted, when the input does not say


@dataclass(frozen=True)
class StatsFormat:
    """A statistics parser plug-in: its --format name, what it reads, and the parser."""

    name: str
    reads: str  # one line for --help
    parse: Callable[[str, str, ParseOptions], Parsed]  # (text, file name, options)
    signature: re.Pattern[str]  # found in a file's text when it is in this format (for detection)

    def looks_like(self, text: str) -> bool:
        return self.signature.search(text) is not None
