"""`poolsight report`'s text and JSON from a report built here (the figures from the views are
checked on the stack: tests/stack/test_pipeline.py), and its named queries' parameters."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from poolsight.sql import report as R
from poolsight.sql.named import query

T0, T1 = datetime(2014, 3, 14, 10, 0, tzinfo=UTC), datetime(2014, 3, 14, 10, 50, tzinfo=UTC)
SUB = R.Subsystem(
    "interval", "DSNP", T0, T1, 2, 40_000, 10_000, None, None, 156.25, 78.125, None, None, 234.375,
    2756.97, 241.5, 1898.7, 0.9124, 0.2236,
)  # fmt: skip
POOLS = (
    R.Pool("BP1", 40_000, 4096, 156.25, 2423.63, 208.17, 1898.69, 0.9141, 0.1307, 11.22, 0.8620, 2 / 3),
    R.Pool("BP8K0", 10_000, 8192, 78.125, 333.33, 33.33, 0.02, 0.9, None, None, 0.1380, 1 / 3),
)


def test_text_has_the_subsystem_then_a_line_per_pool() -> None:
    lines = R.text(R.Report(SUB, POOLS)).splitlines()
    assert lines[:4] == [
        "DSNP   interval 2014-03-14 10:00:00 .. 2014-03-14 10:50:00 UTC (3,000 s)",
        "pools 2   4K 40,000 buffers (156 MB)   8K 10,000 buffers (78 MB)   memory 234 MB",
        "getpages/s 2,757.0   sync reads/s 241.5   prefetch pages/s 1,898.7",
        "application hit ratio 91.2 %   system hit ratio 22.4 %",
    ]
    assert lines[7].split() == "BP1 40,000 4K 156 2,423.6 208.2 1,898.7 91.4 % 13.1 % 11.2 86.2 % 66.7 %".split()
    assert lines[8].split() == "BP8K0 10,000 8K 78 333.3 33.3 0.0 90.0 % - - 13.8 % 33.3 %".split()
    assert len(lines) == 9


def test_json_keeps_every_field_by_name() -> None:
    doc = json.loads(json.dumps(R.as_json(R.Report(SUB, POOLS)), default=str))
    assert set(doc["subsystem"]) == set(R.SUBSYSTEM_COLUMNS) and doc["subsystem"]["buffers_16k"] is None
    assert [p["pool"] for p in doc["pools"]] == ["BP1", "BP8K0"]
    assert doc["pools"][1]["memory_share"] == 1 / 3 and doc["subsystem"]["period_end"] == "2014-03-14 10:50:00+00:00"


def test_the_queries_select_the_dataclasses_columns_in_order() -> None:
    for name, columns in (("report_subsystem", R.SUBSYSTEM_COLUMNS), ("report_pools", R.POOL_COLUMNS)):
        q = query(name)
        selected = q.sql.split("SELECT", 1)[1].split("FROM", 1)[0]
        assert [c.strip() for c in selected.split(",")] == list(columns), name
        assert set(q.params) == {"source", "grain", "at"}
