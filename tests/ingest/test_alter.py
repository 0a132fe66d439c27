"""`poolsight generate --alter`: the generated subsystem changes a pool as -ALTER BUFFERPOOL does."""

from __future__ import annotations

import pytest

from poolsight.ingest.generator import Alter

from ..flink_jobs.generated import generate


def test_an_alter_spec_is_parsed_and_bad_ones_are_named() -> None:
    assert Alter.parse("BP1:vpsize=60000@600") == Alter("BP1", "VPSIZE", 60000.0, 600.0)
    for bad, why in (
        ("BP1=60000@600", "expected POOL:SETTING=VALUE@SECONDS"),
        ("BP1:VPSIZE=60000", "expected POOL:SETTING=VALUE@SECONDS"),
        ("BP1:DWQT=10@5", "VPSIZE or VPSEQT"),
        ("BP1:VPSIZE=1.5@5", "whole number"),
        ("BP1:VPSEQT=120@5", "0 to 100"),
        ("BP1:VPSIZE=100@-1", ">= 0"),
    ):
        with pytest.raises(ValueError, match=why):
            Alter.parse(bad)


def test_the_pool_changes_at_its_time_in_attributes_statistics_and_hits() -> None:
    rec = generate("mixed", 130, ["BP1:VPSIZE=60000@60", "BP2:VPSEQT=20@90"])
    attrs = [(r["pool"], r["event_time"], r["vpsize"], r["vpseqt"]) for s, r in rec.items if s == "pool_attributes"]
    start = 1_767_225_600_000_000
    assert attrs[:2] == [("BP1", start, 30_000, 40.0), ("BP2", start, 15_000, 50.0)]
    assert (
        attrs[2][:1] == ("BP1",)
        and abs(attrs[2][1] - (start + 60_000_000)) < 100_000
        and attrs[2][2:] == (60_000, 40.0)
    )
    assert (
        attrs[3][:1] == ("BP2",)
        and abs(attrs[3][1] - (start + 90_000_000)) < 100_000
        and attrs[3][2:] == (15_000, 20.0)
    )
    assert len(attrs) == 4
    stats = [(r["pool"], r["buffers_allocated"]) for s, r in rec.items if s == "pool_stats"]
    assert stats == [
        ("BP1", 30_000),
        ("BP2", 15_000),
        ("BP1", 60_000),
        ("BP2", 15_000),
        ("BP1", 60_000),
        ("BP2", 15_000),
    ]


def test_an_alter_of_an_unknown_pool_is_refused() -> None:
    with pytest.raises(ValueError, match="no pool BP9"):
        generate("mixed", 1, ["BP9:VPSIZE=10@0"])
