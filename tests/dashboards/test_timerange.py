"""The page's time range from URL parameters: relative ranges, explicit ends, bad values named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from poolsight.dashboards.timerange import BadRequest, parse_time, time_range

END = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_a_relative_range_ends_at_the_newest_pane() -> None:
    assert time_range({"range": "24h"}).resolve(END) == (END - timedelta(hours=24), END)
    assert time_range({}).resolve(END) == (END - timedelta(hours=1), END)  # the default
    assert time_range({"range": "7d"}).resolve(None) is None  # no data: nothing to show


def test_explicit_ends_win_over_the_newest_pane() -> None:
    tr = time_range({"range": "1h", "to": "2026-11-20T08:00"})
    assert tr.resolve(END) == (datetime(2026, 11, 20, 7, 0, tzinfo=UTC), datetime(2026, 11, 20, 8, 0, tzinfo=UTC))
    tr = time_range({"from": "2026-11-20T06:00:00Z", "to": "1795161600000"})
    assert tr.resolve(END) == (datetime(2026, 11, 20, 6, 0, tzinfo=UTC), datetime(2026, 11, 20, 8, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"range": "2y"}, "range='2y': use one of"),
        ({"range": "1h'; DROP TABLE x"}, "range="),
        ({"to": "yesterday"}, "to='yesterday' is not a time"),
        ({"from": "2026-11-21", "to": "2026-11-20"}, "from must be before to"),
    ],
)
def test_bad_values_are_refused_with_the_parameter_named(params: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest, match=message.replace("(", r"\(").replace("[", r"\[")):
        time_range(params)


def test_times_without_a_zone_are_utc() -> None:
    assert parse_time("to", "2026-11-20T08:00") == datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
