"""The time range a page shows, from its URL: `range` (15m ... 1y) ending at `to`, or `from`..`to`.

Without `to` a range ends at the newest pane of what the page shows (event time), so a
workload replayed from the past reads like a live one. Unknown values are errors the page
shows, never SQL: the results are datetimes passed to Trino as parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

RANGES: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
    "1y": timedelta(days=365),
}
DEFAULT_RANGE = "1h"


class BadRequest(ValueError):
    """A URL parameter the dashboard cannot use, named in the message."""


def parse_time(name: str, text: str) -> datetime:
    """ISO 8601 (without a zone: UTC) or epoch milliseconds."""
    try:
        if text.isdigit():
            return datetime.fromtimestamp(int(text) / 1000, UTC)
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        raise BadRequest(f"{name}={text[:40]!r} is not a time (ISO 8601 or epoch ms)") from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


@dataclass(frozen=True)
class TimeRange:
    span: timedelta
    start: datetime | None  # explicit `from`
    end: datetime | None  # explicit `to`; None: the newest pane

    def resolve(self, newest: datetime | None) -> tuple[datetime, datetime] | None:
        """(start, end) given the newest pane end of what is shown; None if there is no data."""
        end = self.end or newest
        if end is None:
            return None
        return (self.start or end - self.span), end


def time_range(params: dict[str, str]) -> TimeRange:
    name = params.get("range", DEFAULT_RANGE)
    if name not in RANGES:
        raise BadRequest(f"range={name[:20]!r}: use one of {', '.join(RANGES)}")
    start = parse_time("from", params["from"]) if params.get("from") else None
    end = parse_time("to", params["to"]) if params.get("to") else None
    if start is not None and end is not None and start >= end:
        raise BadRequest("from must be before to")
    return TimeRange(RANGES[name], start, end)
