"""Which grain answers a time range: panes for short ranges, hourly rollups for weeks, daily
rollups beyond, and never a grain whose retention has already removed the range's start.
A page then reads at most a few thousand rows a series, whatever the range."""

from __future__ import annotations

from datetime import datetime, timedelta

from poolsight.sql.retention import Retention

PANE_SPAN = timedelta(days=2)  # up to 2,880 one-minute panes a pool
HOUR_SPAN = timedelta(days=45)  # up to 1,080 hours


def grain_for(start: datetime, end: datetime, retention: Retention, now: datetime) -> str:
    """'pane', 'hour' or 'day' for the range [start, end)."""
    cut = retention.cutoffs(now)
    span = end - start
    if span <= PANE_SPAN and (cut["pane"] is None or start >= cut["pane"]):
        return "pane"
    if span <= HOUR_SPAN and (cut["hour"] is None or start >= cut["hour"]):
        return "hour"
    return "day"
