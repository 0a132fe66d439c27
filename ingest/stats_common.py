"""What the statistics collectors share: the PoolStats field list and a rejected block."""

from __future__ import annotations

import json
from dataclasses import dataclass

from poolsight import schemas

POOL_STATS_FIELDS: list[str] = [f["name"] for f in json.loads(schemas.text("pool_stats"))["fields"]]


@dataclass(frozen=True)
class Rejected:
    """A block that cannot be used: where it is and why (goes to the dead-letter topic)."""

    source: str
    line: int
    field: str
    reason: str
    raw: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.field}: {self.reason}"
