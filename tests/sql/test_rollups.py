"""The rollup definitions, the retention settings and the grain choice, without services
(tests/stack/test_history.py runs them against Trino)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from poolsight.sql.catalog import BY_NAME, TABLES, create_table_ddl
from poolsight.sql.grain import grain_for
from poolsight.sql.guard import guarded_seconds, seconds_of
from poolsight.sql.retention import Retention, RetentionError, months_before, retention_from
from poolsight.sql.rollup import floor_to, merge_sql
from poolsight.sql.rollups import POOL, ROLLUP_TABLES, ROLLUPS

NOW = datetime(2026, 11, 24, 7, 30, tzinfo=UTC)


def test_every_rollup_has_an_hourly_and_a_daily_table_keyed_by_its_group_and_period() -> None:
    assert len(ROLLUP_TABLES) == 2 * len(ROLLUPS)
    for r in ROLLUPS:
        for grain, part in (("hour", "month"), ("day", "year")):
            t = BY_NAME[f"{r.stem}_{grain}"]
            assert t in TABLES and t.key == (*r.group, "period_start") and t.partition == part
            assert f"ARRAY['{part}(period_start)']" in create_table_ddl(t)
            # every group column is the source's own, with its doc
            for g in r.group:
                assert next(c for c in t.columns if c.name == g) in r.source.columns


def test_ratios_are_never_rolled_up_only_counts_and_extremes() -> None:
    for r in ROLLUPS:
        for m in r.measures:
            assert "ratio" not in m.name, (r.stem, m.name)
            assert m.agg in ("sum", "max", "min", "last")
            if m.expr is not None and "ratio *" in m.expr:  # a ratio only ever weighted back into a count
                assert m.expr.endswith("* getpages"), m


def test_the_hourly_merge_groups_panes_by_hour_and_the_daily_one_adds_hours() -> None:
    hour, day = merge_sql(POOL, "hour"), merge_sql(POOL, "day")
    assert "FROM iceberg.poolsight.pool_pane WHERE pane_start >= ? AND pane_start < ?" in hour
    assert "date_trunc('hour', pane_start)" in hour and "count(*) AS source_rows" in hour
    assert "sum(sim_hit_ratio * getpages) AS sim_hits" in hour
    assert "max_by(current_size, pane_start) AS current_size" in hour
    assert "FROM iceberg.poolsight.pool_hour WHERE period_start >= ?" in day
    assert "sum(source_rows) AS source_rows" in day and "sum(sim_hits) AS sim_hits" in day
    assert "max_by(current_size, period_start)" in day and "max(max_working_set_pages)" in day
    for sql, retired in ((hour, "pool_hour_retired"), (day, "pool_day_retired")):
        assert sql.count("?") == 6 and "WHEN MATCHED THEN UPDATE" in sql and "WHEN NOT MATCHED THEN INSERT" in sql
        # keys compared with = (a hash join), nulls as a value no row holds; the target's periods bounded
        assert "coalesce(t.source, '') = coalesce(s.source, '')" in sql and "IS NOT DISTINCT" not in sql
        assert "t.period_start >= ? AND t.period_start < ?" in sql
        # what retention removed below is added to what is left, the newer part's last values kept
        assert f"FROM iceberg.poolsight.{retired} WHERE period_start >= ? AND period_start < ? UNION ALL" in sql
        assert "max_by(current_size, at) AS current_size" in sql and "sum(sim_hits) AS sim_hits" in sql
        assert "max(max_working_set_pages) AS max_working_set_pages" in sql


def test_only_the_periods_changed_files_touch_are_recomputed() -> None:
    from poolsight.sql.rollup import periods

    def at(d: int, h: int, m: int = 0) -> datetime:
        return datetime(2026, 1, d, h, m, tzinfo=UTC)

    old = (datetime(2000, 1, 1, 0, 10, tzinfo=UTC), datetime(2000, 1, 1, 0, 20, tzinfo=UTC))
    spans = [(at(5, 10, 5), at(5, 10, 59)), old, (at(5, 11), at(5, 12, 30)), (at(7, 0, 1), at(7, 0, 2))]
    assert periods(spans, "hour") == [
        (datetime(2000, 1, 1, 0, tzinfo=UTC), datetime(2000, 1, 1, 1, tzinfo=UTC)),
        (at(5, 10), at(5, 13)),  # adjacent and overlapping hours merge
        (at(7, 0), at(7, 1)),
    ]
    assert periods(spans, "day") == [
        (datetime(2000, 1, 1, tzinfo=UTC), datetime(2000, 1, 2, tzinfo=UTC)),
        (at(5, 0), at(6, 0)),
        (at(7, 0), at(8, 0)),
    ]


def test_periods_retention_is_removing_are_cut_out_of_a_rollup_run() -> None:
    from poolsight.sql.rollup import _without

    a, b, c, d = (datetime(2026, 1, x, tzinfo=UTC) for x in (1, 2, 3, 4))
    assert _without([(a, d)], []) == [(a, d)]
    assert _without([(a, d)], [(b, c)]) == [(a, b), (c, d)]
    assert _without([(a, b), (c, d)], [(a, c)]) == [(c, d)]
    assert _without([(b, c)], [(a, d)]) == []
    assert _without([(a, c)], [(b - timedelta(days=30), b)]) == [(b, c)]


def test_periods_floor_in_utc() -> None:
    t = datetime(2026, 3, 1, 0, 30, tzinfo=UTC) - timedelta(minutes=45)
    assert floor_to(t, "hour") == datetime(2026, 2, 28, 23, 0, tzinfo=UTC)
    assert floor_to(t, "day") == datetime(2026, 2, 28, tzinfo=UTC)


def test_retention_defaults_and_settings() -> None:
    r = retention_from({}, {})
    assert (r.pane_days, r.hour_months, r.day_months) == (14, 13, None)
    cut = r.cutoffs(NOW)
    assert cut == {"pane": datetime(2026, 11, 10, tzinfo=UTC), "hour": datetime(2025, 10, 1, tzinfo=UTC), "day": None}
    r = retention_from({"pane_days": 30, "day_months": 120}, {"POOLSIGHT_HISTORY_HOUR_MONTHS": "keep"})
    assert (r.pane_days, r.hour_months, r.day_months) == (30, None, 120)
    assert retention_from({"pane_days": 0}, {}).pane_days is None
    for bad in ("14d", "-1", "1.5", True):
        with pytest.raises(RetentionError, match="pane_days"):
            retention_from({"pane_days": bad}, {})


def test_months_before_crosses_years() -> None:
    assert months_before(datetime(2026, 1, 15, tzinfo=UTC), 13) == datetime(2024, 12, 1, tzinfo=UTC)
    assert months_before(datetime(2026, 12, 31, tzinfo=UTC), 12) == datetime(2025, 12, 1, tzinfo=UTC)


def test_grain_by_range_and_retention() -> None:
    r = Retention()
    day = timedelta(days=1)
    assert grain_for(NOW - day, NOW, r, NOW) == "pane"
    assert grain_for(NOW - 7 * day, NOW, r, NOW) == "hour"
    assert grain_for(NOW - 90 * day, NOW, r, NOW) == "day"
    assert grain_for(NOW - 365 * day, NOW, r, NOW) == "day"
    # a day three weeks ago: its panes are gone, its hours are not
    old = NOW - 21 * day
    assert grain_for(old - day, old, r, NOW) == "hour"
    # two years ago: only days are kept
    ancient = NOW - 730 * day
    assert grain_for(ancient - day, ancient, r, NOW) == "day"
    # everything kept: the range alone decides
    keep = Retention(None, None, None)
    assert grain_for(ancient - day, ancient, keep, NOW) == "pane"


def test_the_guard_keeps_what_a_job_committed_last() -> None:
    assert seconds_of("7d") == 7 * 86400 and seconds_of("12h") == 43200 and seconds_of("0s") == 0
    with pytest.raises(ValueError):
        seconds_of("7 days")
    assert guarded_seconds(0.0, None, NOW) == 0.0
    assert guarded_seconds(0.0, NOW - timedelta(hours=2), NOW) == 7200 + 60
    assert guarded_seconds(86400.0 * 7, NOW - timedelta(hours=2), NOW) == 86400.0 * 7
