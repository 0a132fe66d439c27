"""OMEGAMON statistics report GROUP BP blocks: IBM's published block, beside BP blocks, a
group-scope page, blocks without their report's header, broken ones."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.stats_formats import detect
from poolsight.ingest.stats_omegamon import parse
from poolsight.simulator.metrics import gbp_metrics

CORPUS = Path(__file__).parent / "corpus" / "omegamon"


def _t(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> float:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()


# A report page header as OMEGAMON prints it (the layout of tests/ingest/corpus/omegamon, from
# seed 000's reports): member DB1A of group DSNCAT, four hours.
HEADER = (
    "1    LOCATION: DSNCAT                 OMEGAMON XE FOR DB2 PERFORMANCE EXPERT (V5R4M0)"
    "                    PAGE: 1-9\n"
    "        GROUP: DSNCAT                 STATISTICS REPORT - LONG                         "
    "           REQUESTED FROM: NOT SPECIFIED\n"
    "       MEMBER: {member:<6}                                                          "
    "                                TO: NOT SPECIFIED\n"
    "    SUBSYSTEM: {member:<6}                                                          "
    "              INTERVAL FROM: 11/20/26 09:00:00.00\n"
    "  DB2 VERSION: V13                    SCOPE: {scope:<6}                             "
    "                              TO: 11/20/26 13:00:00.00\n"
    "\n"
)
# Figure 1 of "What to look for in a OMEGAMON statistics report", Db2 13
# (ibm.com/docs/en/db2-for-zos/13.0.0?topic=pools-what-look-in-omegamon-statistics-report), as
# printed there, up to its last whole line (the figure is cut inside PAGES CASTOUT); the letters
# A-D are the figure's marks, the blank line is the figure's. Its rates put it at about four
# hours (651.4M getpages at 45.4K a second).
IBM_BLOCK = """\
GROUP BP30                      QUANTITY  /SECOND  /THREAD  /COMMIT
-----------------------------   --------  -------  -------  -------
GROUP BP R/W RATIO (%)             27.26      N/A      N/A      N/A
GBP-DEPENDENT GETPAGES            651.4M    45.4K   233.60   102.02
SYN.READ(XI)-DATA RETURNED   A   1091.6K    76.12     0.39     0.17
SYN.READ(XI)-NO DATA RETURN  B    133.0K     9.28     0.05     0.02
SYN.READ(NF)-DATA RETURNED   C   1062.1K    74.07     0.38     0.17
SYN.READ(NF)-NO DATA RETURN     14515.1K  1012.21     5.21     2.27
UNREGISTER PAGE              D   4323.7K   301.52     1.55     0.68

CLEAN PAGES SYNC.WRITTEN            0.00     0.00     0.00     0.00
CLEAN PAGES ASYNC.WRTN              0.00     0.00     0.00     0.00
REG.PAGE LIST (RPL) REQUEST      4025.4K   280.71     1.44     0.63
NUMBER OF PAGES RETR.FROM GBP     750.0K    52.30     0.27     0.12
"""
# The rest of a block, in the statistics report's labels for the counters OMEGAMON documents
# (QBGLCT, QBGLGT, QBGLCK, QBGLEX, ...): the spelling is inferred (stats_omegamon_gbp.py).
REST = """\
CHANGED PGS SYNC.WRTN             2104.0     0.15     0.00     0.00
CHANGED PGS ASYNC.WRTN             396.0     0.03     0.00     0.00
PAGES CASTOUT                     1803.0     0.13     0.00     0.00
UNLOCK CASTOUT                     201.0     0.01     0.00     0.00
EXPLICIT X-INVALIDATIONS            0.00     0.00     0.00     0.00
CASTOUT CLASS THRESHOLD             7.00     0.00     0.00     0.00
GROUP BP CASTOUT THRESHOLD          1.00     0.00     0.00     0.00
GBP CHECKPOINTS TRIGGERED          60.00     0.00     0.00     0.00
WRITE FAILED-NO STORAGE             2.00     0.00     0.00     0.00
"""
FIGURE = {
    "gbp_dependent_getpages": 651_400_000,
    "xi_reads_data_returned": 1_091_600,
    "xi_reads_no_data": 133_000,
    "nf_reads_data_returned": 1_062_100,
    "nf_reads_no_data": 14_515_100,
    "clean_pages_written": 0,
}


def test_ibms_group_bp_block() -> None:
    r = parse(HEADER.format(member="DB1A", scope="MEMBER") + IBM_BLOCK, "stats.txt")
    assert r.rejected == [] and r.unknown == {}
    (rec,) = r.of("gbp_stats")
    assert (rec["source"], rec["gbp"], rec["scope"], rec["group_name"]) == ("DB1A", "GBP30", "member", "DSNCAT")
    assert (rec["interval_start"], rec["interval_end"]) == (
        int(_t(2026, 11, 20, 9) * 1e6),
        int(_t(2026, 11, 20, 13) * 1e6),
    )
    assert {k: rec[k] for k in FIGURE} == FIGURE
    # Not in this part of the report: null, not 0.
    assert rec["changed_pages_written"] is None and rec["castout_pages"] is None
    assert rec["reads_data_returned"] is None  # a member's view, not the structure's
    assert r.ignored == {
        "GROUP BP R/W RATIO (%)": 1,
        "UNREGISTER PAGE": 1,
        "REG.PAGE LIST (RPL) REQUEST": 1,
        "NUMBER OF PAGES RETR.FROM GBP": 1,
    }
    m = gbp_metrics(rec)
    # Seed 001: (XI + NF data returned) / all four sync reads.
    assert m["gbp_hit_ratio"] == pytest.approx((1_091_600 + 1_062_100) / (1_091_600 + 133_000 + 1_062_100 + 14_515_100))
    assert m["xi_reads_per_1000_getpages"] == pytest.approx(1000 * (1_091_600 + 133_000) / 651_400_000)
    assert m["disk_sync_reads_per_second"] == pytest.approx((133_000 + 14_515_100) / 14_400)


def test_every_counter_and_bp_blocks_beside() -> None:
    """A page with a BP block and a GROUP BP block: both read, each into its schema; sync and
    async writes of changed pages add up."""
    bp = """\
BP30      READ OPERATIONS               QUANTITY  /SECOND  /THREAD  /COMMIT
---------------------------             --------  -------  -------  -------
GETPAGE REQUEST-SEQUENTIAL                  0.00     0.00     0.00     0.00
GETPAGE REQUEST-RANDOM                    900.0K    62.50     0.00     0.00

"""
    r = parse(HEADER.format(member="DB1B", scope="MEMBER") + bp + IBM_BLOCK + REST, "s.txt")
    assert r.rejected == [] and r.unknown == {}
    (pool,) = r.of("pool_stats")
    assert (pool["pool"], pool["getpages_random"]) == ("BP30", 900_000)
    (rec,) = r.of("gbp_stats")
    assert rec["source"] == "DB1B" and {k: rec[k] for k in FIGURE} == FIGURE
    assert (rec["changed_pages_written"], rec["castout_pages"], rec["write_failed_no_storage"]) == (2104 + 396, 1803, 2)
    assert (rec["castout_class_threshold"], rec["castout_gbp_threshold"], rec["gbp_checkpoints"]) == (7, 1, 60)
    assert rec["xi_explicit"] == 0
    assert gbp_metrics(rec)["castout_pages_per_second"] == pytest.approx(1803 / 14_400)
    assert r.ignored["UNLOCK CASTOUT"] == 1


def test_a_group_scope_page_gives_the_groups_record() -> None:
    r = parse(HEADER.format(member="N/P", scope="GROUP") + IBM_BLOCK, "g.txt")
    (rec,) = r.of("gbp_stats")
    assert (rec["source"], rec["scope"], rec["group_name"]) == ("DSNCAT", "group", "DSNCAT")
    assert {k: rec[k] for k in FIGURE} == FIGURE


def test_a_block_without_its_report_header() -> None:
    """Copied out of the report: its length from QUANTITY / (/SECOND), its end from --at."""
    at = _t(2026, 11, 20, 13)
    r = parse(IBM_BLOCK, "b.txt", interval_end=at)
    (rec,) = r.of("gbp_stats")
    # The most precise pair: 14515.1K (to 50) at 1012.21 (to 0.005) a second.
    seconds = 14_515_100 / 1012.21
    assert rec["interval_end"] == int(at * 1e6)
    assert rec["interval_start"] == int((at - seconds) * 1e6)
    assert rec["source"] == "DB2" and rec["group_name"] is None
    r = parse(IBM_BLOCK, "b.txt")
    (bad,) = r.rejected
    assert (bad.file, bad.line, bad.field) == ("b.txt", 1, "interval") and "give --at" in bad.reason


def test_broken_blocks_name_file_line_and_field() -> None:
    head = HEADER.format(member="DB1A", scope="MEMBER")
    lines = IBM_BLOCK.splitlines()
    broken = "\n".join([*lines[:5], lines[5].replace("133.0K", "133.0Q"), *lines[6:]]) + "\n"
    r = parse(head + broken, "x.txt")
    (bad,) = r.rejected
    n = len(head.splitlines()) + 6
    assert (bad.file, bad.line, bad.field) == ("x.txt", n, "SYN.READ(XI)-NO DATA RETURN")
    assert bad.reason == "'133.0Q' is not a quantity" and r.records == []
    cut = "\n".join(lines[:6]) + "\n"  # cut after the XI reads: the NF reads are missing
    r = parse(head + cut, "x.txt")
    (bad,) = r.rejected
    assert (bad.line, bad.field) == (len(head.splitlines()) + 6, "SYN.READ(NF)-DATA RETURNED")
    assert bad.reason == "truncated block: GROUP BP30 has no SYN.READ(NF)-DATA RETURNED"
    r = parse(head + "\n".join(lines[:2]) + "\n", "x.txt")  # the header and its underline only
    assert [(x.field, x.reason) for x in r.rejected] == [("GBP30", "truncated block: no counters")]


def test_a_report_of_group_bp_blocks_only_is_detected() -> None:
    assert [f.name for f in detect(HEADER.format(member="DB1A", scope="MEMBER") + IBM_BLOCK)] == ["omegamon"]
    assert [f.name for f in detect(IBM_BLOCK)] == ["omegamon"]


def test_blocks_side_by_side() -> None:
    """Two GROUP BP blocks printed side by side, as the report prints its BP blocks (seed 000;
    for GROUP BP blocks the layout is inferred): the k-th counter of a line is the k-th block's.
    Without the report's header, each lasts QUANTITY / (/SECOND): an hour."""
    text = (CORPUS / "group_bp_side_by_side.txt").read_text()
    r = parse(text, "s.txt", interval_end=_t(2026, 11, 20, 13))
    assert r.rejected == []
    got = {
        x["gbp"]: (x["gbp_dependent_getpages"], x["xi_reads_data_returned"], x["nf_reads_no_data"])
        for x in r.of("gbp_stats")
    }
    assert got == {"GBP1": (3600, 10, 360), "GBP2": (7200, 20, 720)}
    assert {x["interval_start"] for x in r.of("gbp_stats")} == {int(_t(2026, 11, 20, 12) * 1e6)}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *HEADER.format(member="DB1A", scope="GROUP").splitlines(),
                *IBM_BLOCK.splitlines(),
                *REST.splitlines(),
                "GROUP BP1   QUANTITY  /SECOND     GROUP BP1 CONTINUED   QUANTITY  /SECOND",
                "PAGES CASTOUT   N/A   N/A     WRITE FAILED-NO STORAGE   1.0K   0.0",
                "SYN.READ(XI)-DATA RETURNED   Q",
                "BP1       READ OPERATIONS               QUANTITY  /SECOND  /THREAD  /COMMIT",
                "GETPAGE REQUEST-RANDOM                    45.6K    50.67     0.52     0.00",
                "",
            ]
        )
        | st.text(max_size=50),
        max_size=40,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    r = parse("\n".join(lines), "fuzz", interval_end=_t(2026, 11, 20, 13))
    for rec in r.of("gbp_stats"):
        assert rec["interval_end"] > rec["interval_start"] and rec["gbp"].startswith("GBP")
