"""Db2 LUW MON_GET_BUFFERPOOL exports: snapshot deltas, hit ratios of seed 004, broken rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.stats_luw import parse
from poolsight.simulator.metrics import gbp_metrics, pool_metrics

CORPUS = Path(__file__).parent / "corpus" / "luw"


def test_snapshot_deltas_and_seed_004_ratios() -> None:
    r = parse((CORPUS / "mon_get_bufferpool.csv").read_text(), "mgb.csv")
    assert r.rejected == []
    by_pool = {x["pool"]: x for x in r.of("pool_stats")}
    d = by_pool["IBMDEFAULTBP"]
    assert d["interval_seconds"] == 60 and d["source"] == "DB2LUW/0" and d["origin"] == "luw-bufferpool"
    assert (d["lbp_logical_reads"], d["lbp_physical_reads"], d["lbp_async_reads"], d["pages_written"]) == (
        180_000,
        3_600,
        2_300,
        400,
    )
    # Seed 004: (l_reads - (p_reads - async_reads)) / l_reads.
    assert pool_metrics(d)["luw_hit_ratio"] == pytest.approx((180_000 - (3_600 - 2_300)) / 180_000)
    assert pool_metrics(d)["application_hit_ratio"] is None  # z/OS counters: not in an LUW export
    [g] = r.of("gbp_stats")
    assert (g["gbp_logical_reads"], g["gbp_physical_reads"], g["gbp_invalid_pages"]) == (4_000, 600, 100)
    assert gbp_metrics(g)["luw_gbp_hit_ratio"] == pytest.approx((4_000 - 600) / 4_000)
    assert by_pool["BP32K"]["lbp_logical_reads"] == 14


def test_pool_statistics_come_before_group_pool_statistics() -> None:
    """The order the parser has always returned (and `--output` has written)."""
    r = parse((CORPUS / "mon_get_bufferpool.csv").read_text(), "mgb.csv")
    assert [s for s, _ in r.records] == ["pool_stats", "pool_stats", "gbp_stats"]


def test_broken_rows_and_missing_snapshot_time() -> None:
    r = parse((CORPUS / "broken.csv").read_text(), "broken.csv")
    reasons = [(x.line, x.field, x.reason) for x in r.rejected]
    assert (3, "POOL_DATA_P_READS", "'1x' is not a counter") in reasons
    assert any(line == 5 and "reactivated" in reason for line, _, reason in reasons)
    assert (6, "row", "3 fields, header has 6") in reasons
    assert (7, "SNAPSHOT_TIME", "'yesterday' is not a time") in reasons
    assert [(x["interval_seconds"], x["lbp_logical_reads"]) for x in r.of("pool_stats")] == [(120.0, 200)]
    r = parse((CORPUS / "no_time.csv").read_text(), "no_time.csv")
    assert r.records == [] and r.rejected[0].field == "SNAPSHOT_TIME"


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "2026-11-22-10.00.00.000000,BP1,0,100,10,5",
                "2026-11-22-10.01.00.000000,BP1,0,50,10,5",
                ",,,,,",
                "2026-11-22-10.01.00,BP1,0,x,y,z",
                "2026-13-45-99.99.99.000000,BP1,0,1,1,1",
                '"quoted,BP",0,1,1,1,1',
            ]
        )
        | st.text(max_size=40),
        max_size=20,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    text = "SNAPSHOT_TIME,BP_NAME,MEMBER,POOL_DATA_L_READS,POOL_DATA_P_READS,POOL_ASYNC_DATA_READS\n" + "\n".join(lines)
    for rec in parse(text, "fuzz").of("pool_stats"):
        assert rec["interval_seconds"] > 0


def test_del_export_with_the_column_list() -> None:
    cols = [
        "SNAPSHOT_TIME",
        "BP_NAME",
        "MEMBER",
        "POOL_DATA_L_READS",
        "POOL_DATA_P_READS",
        "POOL_ASYNC_DATA_READS",
        "POOL_DATA_WRITES",
    ]
    text = (CORPUS / "mon_get_bufferpool.del").read_text()
    [rec] = parse(text, "mgb.del", columns=cols).of("pool_stats")
    assert (rec["pool"], rec["lbp_logical_reads"], rec["lbp_physical_reads"], rec["pages_written"]) == (
        "IBMDEFAULTBP",
        120_000,
        3_000,
        300,
    )
    assert parse(text, "mgb.del").rejected[0].field == "header"  # without the list: refused, with the reason


def test_group_bufferpool_export() -> None:
    r = parse((CORPUS / "mon_get_group_bufferpool.csv").read_text(), "mggb.csv")
    assert r.of("pool_stats") == [] and r.rejected == []
    assert sorted((g["source"], g["gbp"], g["write_failed_no_storage"]) for g in r.of("gbp_stats")) == [
        ("DB2LUW/0", "GBP", 3),
        ("DB2LUW/1", "GBP", 0),
    ]


def _deltas(path: Path) -> dict[str, int]:
    """Second row minus first, per column, read here with the csv module (not the parser)."""
    import csv

    rows = list(csv.DictReader(path.read_text().splitlines()))
    return {k: int(rows[1][k]) - int(rows[0][k]) for k in rows[0] if k not in ("SNAPSHOT_TIME", "BP_NAME", "MEMBER")}


def test_purescale_lbp_hit_ratio_as_seed_004_defines_it() -> None:
    path = CORPUS / "purescale_bufferpool.csv"
    d = _deltas(path)
    [rec] = parse(path.read_text(), "ps.csv").of("pool_stats")
    found = d["POOL_DATA_LBP_PAGES_FOUND"] + d["POOL_INDEX_LBP_PAGES_FOUND"]
    async_found = d["POOL_ASYNC_DATA_LBP_PAGES_FOUND"] + d["POOL_ASYNC_INDEX_LBP_PAGES_FOUND"]
    lreads = d["POOL_DATA_L_READS"] + d["POOL_INDEX_L_READS"]
    assert (rec["lbp_pages_found"], rec["lbp_async_pages_found"], rec["lbp_logical_reads"]) == (
        found,
        async_found,
        lreads,
    )
    m = pool_metrics(rec)
    assert m["luw_lbp_hit_ratio"] == pytest.approx((found - async_found) / lreads)
    # Lower than the overall hit ratio: it leaves out the pages found in the GBP (seed 004).
    assert m["luw_lbp_hit_ratio"] < m["luw_hit_ratio"]


def test_gbp_full_per_10k_commits_and_cf_wait_per_call() -> None:
    path = CORPUS / "purescale_group.csv"
    d = _deltas(path)
    [g] = parse(path.read_text(), "grp.csv").of("gbp_stats")
    assert (g["write_failed_no_storage"], g["commits"], g["cf_waits"], g["cf_wait_ms"]) == (
        d["NUM_GBP_FULL"],
        d["COMMIT_SQL_STMTS"],
        d["CF_WAITS"],
        d["CF_WAIT_TIME"],
    )
    m = gbp_metrics(g)
    assert m["gbp_full_per_10k_commits"] == pytest.approx(10_000 * d["NUM_GBP_FULL"] / d["COMMIT_SQL_STMTS"])
    assert m["cf_wait_us_per_call"] == pytest.approx(1000 * d["CF_WAIT_TIME"] / d["CF_WAITS"])


def test_commits_are_counted_once_when_both_columns_are_exported() -> None:
    text = (
        "SNAPSHOT_TIME,MEMBER,NUM_GBP_FULL,COMMIT_SQL_STMTS,TOTAL_APP_COMMITS\n"
        "2026-11-22-10.00.00.000000,0,1,100,100\n2026-11-22-10.01.00.000000,0,2,300,300\n"
    )
    [g] = parse(text, "both.csv").of("gbp_stats")
    assert g["commits"] == 200


def test_commits_and_cf_waits_from_their_own_exports() -> None:
    """Commits (MON_GET_TRANSACTION_LOG) and CF waits (MON_GET_CF_WAIT_TIME, one row per CF command)
    exported on their own: group-level records per member, the commands added up per snapshot."""
    commits = (
        "SNAPSHOT_TIME,MEMBER,TOTAL_APP_COMMITS\n"
        "2026-11-22-10.00.00.000000,0,1000\n2026-11-22-10.00.00.000000,1,50\n"
        "2026-11-22-10.05.00.000000,0,41000\n2026-11-22-10.05.00.000000,1,2050\n"
    )
    got = {g["source"]: (g["gbp"], g["commits"]) for g in parse(commits, "tlog.csv").of("gbp_stats")}
    assert got == {"DB2LUW/0": ("GBP", 40_000), "DB2LUW/1": ("GBP", 2_000)}
    cf = (
        "SNAPSHOT_TIME,MEMBER,CF_CMD_NAME,TOTAL_CF_REQUESTS,TOTAL_CF_WAIT_TIME_MICRO\n"
        "2026-11-22-10.00.00.000000,0,SetLockState,1000,50000\n"
        "2026-11-22-10.00.00.000000,0,ReadAndRegister,3000,240000\n"
        "2026-11-22-10.05.00.000000,0,SetLockState,1600,80000\n"
        "2026-11-22-10.05.00.000000,0,ReadAndRegister,5400,432000\n"
    )
    [g] = parse(cf, "cfwait.csv").of("gbp_stats")
    assert (g["cf_waits"], g["cf_wait_ms"]) == ((1600 - 1000) + (5400 - 3000), ((80000 + 432000) - 290000) // 1000)
    assert gbp_metrics(g)["cf_wait_us_per_call"] == pytest.approx(1000 * g["cf_wait_ms"] / g["cf_waits"])


def test_a_repeated_snapshot_row_is_rejected_not_added() -> None:
    text = (
        "SNAPSHOT_TIME,BP_NAME,MEMBER,POOL_DATA_L_READS\n"
        "2026-11-22-10.00.00.000000,BP1,0,100\n2026-11-22-10.00.00.000000,BP1,0,100\n"
        "2026-11-22-10.01.00.000000,BP1,0,250\n"
    )
    r = parse(text, "dup.csv")
    assert [x.reason for x in r.rejected] == ["interval of 0 seconds"]
    assert [x["lbp_logical_reads"] for x in r.of("pool_stats")] == [150]
