"""The warnings of a pool's statistics as alerts: the query's counters, each kind's measurements, and
the judgement on seed 000's report blocks (counts copied from the seed, rates worked out by hand)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from poolsight.dashboards import alerts as A
from poolsight.dashboards import stats_warnings as W
from poolsight.dashboards.alerts import Firing, Measurement, Rule
from poolsight.sql.named import query

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
END = "in the statistics interval ending 2026-11-23 12:00:00Z"
# Seed 000's blocks as `ingest stats` reads them (tests/ingest/corpus/omegamon/seed000_*.txt): the
# interval is QUANTITY / (/SECOND) where the report states none.
PART1_SECONDS = 82800.41516804695  # "Buffer Pool Part1": 3,217 data set opens, 25,475 no read engine
PART2_SECONDS = 82799.97103118896  # "Buffer Pool Part2": DWQT 25,819, VDWQT 5,658, write engine 47
BLOCK_SECONDS = 2998.9420988559723  # "Buffer Pool Data - statistics": 1,270 page-ins for read


def _rule(kind: str, **params: float) -> Rule:
    return Rule(kind, kind, "warning", {**{k: p.default for k, p in A.KINDS[kind].items()}, **params})


def _row(counter: str, value: int | None, other: int | None, seconds: float | None) -> tuple[object, ...]:
    return ("DB2P", "BP1", f"pool_stats/{counter}", T0, value, other, seconds)


def _judge(kind: str, row: tuple[object, ...], **params: float) -> Firing | None:
    rule = _rule(kind, **params)
    [m] = A.measurements(rule, [row])
    return A.judge(rule, m, T0 + timedelta(days=400))  # however old the statistics: they still warn


def test_the_query_reads_every_counter_of_every_kind_and_no_other() -> None:
    sql = query("alert_pool_stats_counters").statement({"at": None})[0]
    names = re.search(r"ARRAY\[('[^]]*)\]", sql)
    assert names is not None
    assert tuple(re.findall(r"'(\w+)'", names.group(1))) == W.COUNTER_NAMES
    assert set(W.KINDS) <= set(A.KINDS) and all(A.RULE_QUERIES[k] == "alert_pool_stats_counters" for k in W.KINDS)
    assert [r.kind for r in A.load_rules().rules if r.kind in W.KINDS] == list(W.KINDS)  # each shipped


def test_each_kind_takes_only_its_own_counters_rows() -> None:
    rows = [_row(c, 1, None, 60.0) for c in W.COUNTER_NAMES]
    got = {k: [m.subject for m in A.measurements(_rule(k), rows)] for k in W.KINDS}
    assert got["prefetch_disabled"] == [
        "pool_stats/prefetch_disabled_no_buffer",
        "pool_stats/prefetch_disabled_no_read_engine",
    ]
    assert got["pageins"] == ["pool_stats/pageins_read", "pool_stats/pageins_write"]
    assert got["dwqt_over_vdwqt"] == ["pool_stats/dwqt_reached"]
    assert sum(len(v) for v in got.values()) == len(W.COUNTER_NAMES)
    [m] = A.measurements(_rule("sync_writes_high"), [_row("sync_writes", 17486, 2356300, PART2_SECONDS)])
    assert m == Measurement("DB2P", "BP1", "pool_stats/sync_writes", T0, 17486.0, None, PART2_SECONDS, 2356300.0)


def test_seed_000_part1_raises_no_read_engine_and_data_set_opens() -> None:
    f = _judge("prefetch_disabled", _row("prefetch_disabled_no_read_engine", 25475, None, PART1_SECONDS))
    assert f == Firing(
        "warning", 25475.0, None, 0, T0,
        f"DB2P/BP1: 25,475 prefetches disabled for lack of a read engine {END}: every prefetch read engine was "
        "busy: prefetch I/O is slow or too many prefetch streams ran at once. Advice: the prefetch quantity and "
        "the I/O response time of the pool's data sets",
    )  # fmt: skip
    f = _judge("dataset_opens", _row("dataset_opens", 3217, None, PART1_SECONDS))
    assert f is not None and (f.value, f.threshold) == (3217 / PART1_SECONDS, 0.01)
    assert f.message.startswith(f"DB2P/BP1: 0.0389/s (3,217 data set opens) {END}: data sets were closed")
    assert _judge("prefetch_disabled", _row("prefetch_disabled_no_buffer", 0, None, PART1_SECONDS)) is None
    assert _judge("vpool_full", _row("vpool_full", 0, None, PART1_SECONDS)) is None


def test_seed_000_part2_raises_dwqt_over_vdwqt_and_no_write_engine_but_not_its_few_sync_writes() -> None:
    f = _judge("dwqt_over_vdwqt", _row("dwqt_reached", 25819, 5658, PART2_SECONDS))
    assert f is not None and (f.value, f.threshold) == (25819.0, 5658.0)
    assert f.message.startswith(
        f"DB2P/BP1: 25,819 times the deferred write threshold (DWQT) was reached, VDWQT only 5,658 {END}"
    )
    f = _judge("write_engine_not_available", _row("write_engine_not_available", 47, None, PART2_SECONDS))
    assert f is not None and f.value == 47.0 and "Advice: VDWQT/DWQT" in f.message
    # 17,486 of 2,373,786 write I/Os (0.74 %, 0.21/s): seed 000 calls them no problem.
    assert _judge("sync_writes_high", _row("sync_writes", 17486, 2356300, PART2_SECONDS)) is None
    assert _judge("dm_threshold_reached", _row("dm_threshold_reached", 0, None, PART2_SECONDS)) is None
    assert _judge("pageins", _row("pageins_write", 0, None, PART2_SECONDS)) is None


def test_seed_000_statistics_block_raises_page_ins_for_read_and_not_its_vdwqt_writes() -> None:
    f = _judge("pageins", _row("pageins_read", 1270, None, BLOCK_SECONDS))
    assert f is not None and f.value == 1270 / BLOCK_SECONDS and f.threshold == 0
    assert f.message.startswith(f"DB2P/BP1: 0.423/s (1,270 page-ins required for read) {END}: the LPAR's real")
    assert _judge("dwqt_over_vdwqt", _row("dwqt_reached", 0, 1593, BLOCK_SECONDS)) is None
    assert _judge("sync_writes_high", _row("sync_writes", 1127, 147100, BLOCK_SECONDS)) is None


def test_limits_are_exclusive_and_shares_need_a_rate() -> None:
    assert _judge("write_engine_not_available", _row("write_engine_not_available", 3, None, 60.0), max_count=3) is None
    assert _judge("write_engine_not_available", _row("write_engine_not_available", 4, None, 60.0), max_count=3)
    assert _judge("dwqt_over_vdwqt", _row("dwqt_reached", 5, 5, 60.0)) is None  # equal: not over
    assert _judge("dwqt_over_vdwqt", _row("dwqt_reached", 6, 5, 60.0), min_count=10) is None
    # 120 sync writes of 1,000 in 60 s: 12 %, 2/s.
    f = _judge("sync_writes_high", _row("sync_writes", 120, 880, 60.0))
    assert f is not None and (f.value, f.threshold) == (0.12, 0.05)
    assert "12.0% of write I/Os synchronous (120 synchronous write I/Os of 1,000, 2/s)" in f.message
    assert _judge("sync_writes_high", _row("sync_writes", 120, 880, 60.0), max_share_pct=12) is None
    assert _judge("sync_writes_high", _row("sync_writes", 120, 880, 600.0)) is None  # 0.2/s: under 1/s
    assert _judge("pageins", _row("pageins_read", 5, None, None)) is None  # no interval: no rate
    assert _judge("dataset_opens", _row("dataset_opens", 36, None, 3600.0)) is None  # 0.01/s: at the limit
    assert _judge("dataset_opens", _row("dataset_opens", 37, None, 3600.0)) is not None


def test_the_rules_file_checks_the_new_parameters() -> None:
    doc = {"rules": [{"name": "x", "kind": "sync_writes_high", "params": {"max_share": 5}}]}
    try:
        A.parse_rules(doc, "f.yaml")
    except A.RuleError as exc:
        assert str(exc) == (
            "f.yaml: rule 'x': field 'params.max_share': unknown for kind sync_writes_high "
            "(max_share_pct, min_per_second)"
        )
    else:
        raise AssertionError("an unknown parameter was accepted")
