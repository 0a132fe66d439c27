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


# Times a page may ask for: a range reaching back a year from the earliest still leaves a datetime.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
MAX_TEXT = 200  # characters of a name parameter (source, pool, object, group)


def parse_time(name: str, text: str) -> datetime:
    """ISO 8601 (without a zone: UTC) or epoch milliseconds, from 1970 to 2200."""
    try:
        if text.isascii() and text.isdigit():
            t = datetime.fromtimestamp(int(text[:20]) / 1000, UTC)
        else:
            t = datetime.fromisoformat(text.replace("Z", "+00:00"))
            t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        raise BadRequest(f"{name}={text[:40]!r} is not a time (ISO 8601 or epoch ms)") from None
    if not EARLIEST <= t < LATEST:
        raise BadRequest(f"{name}={text[:40]!r} is outside {EARLIEST.year}-{LATEST.year - 1}")
    return t


def name_param(params: dict[str, str], name: str, required: bool = True) -> str | None:
    """A name (source, pool, object, group): printable, at most MAX_TEXT characters; None when
    optional and absent. It only ever reaches Trino as a parameter; this keeps a page's answer to
    a bad one a 400 naming it."""
    value = params.get(name, "")
    if not value:
        if required:
            raise BadRequest(f"{name} is required")
        return None
    if len(value) > MAX_TEXT:
        raise BadRequest(f"{name} is longer than {MAX_TEXT} characters")
    if not value.isprintable():
        raise BadRequest(f"{name}={value[:40]!r} has control characters")
    return value


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
