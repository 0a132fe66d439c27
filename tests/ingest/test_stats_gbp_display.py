"""-DISPLAY GROUPBUFFERPOOL GDETAIL / MDETAIL output: IBM's published figure, a whole display of
group and member detail, cumulative displays as intervals, broken input, the formatter."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.gbp_display_text import display
from poolsight.ingest.stats_common import empty_gbp_stats
from poolsight.ingest.stats_formats import detect
from poolsight.ingest.stats_gbp_display import parse
from poolsight.simulator.metrics import gbp_metrics
from tests.conftest import ROOT

CORPUS = Path(__file__).parent / "corpus" / "gbp_display"


def _t(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> float:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()


# Figure 1 of "Too few data entries", Db2 13 (ibm.com/docs/en/db2-for-zos/13.0.0?topic=pool-too-few-
# data-entries), as printed there: GDETAIL(*) of GBP0, issued on member DB1A; the letters A-G are
# the figure's marks (kept: the parser reads the figure as printed), the blank line is the figure's
# (one blank there).
IBM_FIGURE = """\
DSNB783I -DB1A CUMULATIVE GROUP DETAIL STATISTICS SINCE 15:35:23 May 17, 2002
DSNB784I -DB1A GROUP DETAIL STATISTICS
                 READS
                   DATA RETURNED A                    = 3845
DSNB785I -DB1A     DATA NOT RETURNED
                     DIRECTORY ENTRY EXISTED B        = 27
                     DIRECTORY ENTRY CREATED C        = 28336
                     DIRECTORY ENTRY NOT CREATED D    = 332, 0

DSNB786I -DB1A   WRITES
                   CHANGED PAGES                      = 20909
                   CLEAN PAGES                        = 0
                   FAILED DUE TO LACK OF STORAGE E    = 8
                 CHANGED PAGES SNAPSHOT VALUE         = 974
DSNB787I -DB1A   RECLAIMS
                   FOR DIRECTORY ENTRIES F            = 18281
                   FOR DATA ENTRIES                   = 47
                 CASTOUTS                             = 16073
DSNB788I -DB1A   CROSS INVALIDATIONS
                   DUE TO DIRECTORY RECLAIMS G        = 4489
                   DUE TO WRITES                      = 3624
                   EXPLICIT                           = 0
DSNB762I -DB1A   DUPLEXING STATISTICS FOR GBP0-SEC
                   WRITES
                     CHANGED PAGES                    = 20909
                     FAILED DUE TO LACK OF STORAGE    = 8
                   CHANGED PAGES SNAPSHOT VALUE       = 974
DSNB790I -DB1A DISPLAY FOR GROUP BUFFER POOL GBP0 IS COMPLETE
DSN9022I -DB1A DSNB1CMD 'DISPLAY GROUPBUFFERPOOL' NORMAL COMPLETION
"""
GROUP_FIGURE = {
    "reads_data_returned": 3845,
    "reads_no_data_dir_existed": 27,
    "reads_no_data_dir_created": 28336,
    "reads_no_data_dir_not_created": 332,
    "reads_no_data_dir_full": 0,
    "changed_pages_written": 20909,
    "clean_pages_written": 0,
    "write_failed_no_storage": 8,
    "changed_pages_snapshot": 974,
    "directory_reclaims": 18281,
    "data_entry_reclaims": 47,
    "castouts": 16073,
    "xi_due_to_reclaims": 4489,
    "xi_due_to_writes": 3624,
    "xi_explicit": 0,
}


def test_ibms_gdetail_figure() -> None:
    """The figure names no time of display (--at) and no DSNB750I (--pool); no structure name
    either, so the group record is named by the member that issued the command."""
    at = _t(2002, 5, 17, 16, 35, 23)
    r = parse(IBM_FIGURE, "figure.txt", at=at, pool="GBP0")
    assert r.rejected == []
    (rec,) = r.of("gbp_stats")
    assert (rec["source"], rec["gbp"], rec["scope"], rec["group_name"]) == ("DB1A", "GBP0", "group", None)
    assert rec["interval_start"] == int(_t(2002, 5, 17, 15, 35, 23) * 1e6)
    assert rec["interval_end"] == int(at * 1e6)
    assert {k: rec[k] for k in GROUP_FIGURE} == GROUP_FIGURE
    # Member counters and the duplexed secondary's (DSNB762I): not in a group record.
    assert rec["xi_reads_data_returned"] is None and rec["castout_pages"] is None
    m = gbp_metrics(rec)
    assert m["group_read_hit_ratio"] == pytest.approx(3845 / (3845 + 27 + 28336 + 332))
    assert m["directory_reclaims_per_second"] == pytest.approx(18281 / 3600)
    assert m["xi_due_to_reclaims_per_second"] == pytest.approx(4489 / 3600)
    assert m["gbp_hit_ratio"] is None  # seed 001's ratio needs a member's XI and NF reads


def test_a_whole_display_of_group_and_member_detail() -> None:
    r = parse((CORPUS / "gdetail_mdetail.txt").read_text(), "g.txt")
    assert r.rejected == []
    group, member = r.of("gbp_stats")
    # GDETAIL: named by the group (DSNB757I's structure DSNCAT_GBP0), with the structure's attributes.
    assert (group["source"], group["gbp"], group["scope"], group["group_name"]) == ("DSNCAT", "GBP0", "group", "DSNCAT")
    assert (group["ratio"], group["classt"], group["gbpoolt"], group["gbpchkpt_minutes"]) == (5.0, 5.0, 30.0, 4.0)
    assert (group["structure_mb"], group["directory_entries"], group["data_entries"]) == (4.0, 3761, 752)
    assert group["interval_start"] == int(_t(2026, 11, 20, 9, 45) * 1e6)
    assert group["interval_end"] == int((_t(2026, 11, 20, 10) + 0.08) * 1e6)  # its last console time
    assert {k: group[k] for k in GROUP_FIGURE} == {
        **GROUP_FIGURE,
        "reads_no_data_dir_not_created": 337,  # 332, 5: both values
        "reads_no_data_dir_full": 5,
    }
    # MDETAIL on DB1B: that member's view; writes synchronous + asynchronous.
    assert (member["source"], member["gbp"], member["scope"], member["group_name"]) == ("DB1B", "GBP0", "member", None)
    assert member["interval_start"] == int(_t(2026, 11, 20, 9, 45, 1) * 1e6)
    assert member["interval_end"] == int((_t(2026, 11, 20, 10, 0, 1) + 0.13) * 1e6)
    assert (member["xi_reads_data_returned"], member["xi_reads_no_data"]) == (1804, 311)
    assert (member["nf_reads_data_returned"], member["nf_reads_no_data"]) == (1290, 14007)
    assert (member["changed_pages_written"], member["clean_pages_written"], member["write_failed_no_storage"]) == (
        9120 + 880,
        0,
        3 + 1,
    )
    assert (member["castout_class_threshold"], member["castout_gbp_threshold"], member["gbp_checkpoints"]) == (12, 2, 4)
    assert (member["castout_pages"], member["xi_explicit"]) == (7311, 0)
    assert member["reads_data_returned"] is None and member["directory_reclaims"] is None
    assert member["gbp_dependent_getpages"] is None  # MDETAIL does not show it
    m = gbp_metrics(member)
    assert m["gbp_hit_ratio"] == pytest.approx((1804 + 1290) / (1804 + 311 + 1290 + 14007))  # seed 001
    assert m["disk_sync_reads_per_second"] == pytest.approx((311 + 14007) / 900.13)
    assert m["castout_pages_per_second"] == pytest.approx(7311 / 900.13)
    assert m["xi_reads_per_1000_getpages"] is None
    assert gbp_metrics(group)["changed_pages_share"] == pytest.approx(974 / 752)


def _cumulative(stamp: str, since: str, returned: int, snapshot: int, reclaims: int) -> str:
    return f"""\
{stamp} -DB1A DIS GBPOOL(DSNCAT_GBP3) GDETAIL(*)
{stamp} DSNB750I -DB1A DISPLAY FOR GROUP BUFFER POOL GBP3 FOLLOWS
{stamp} DSNB783I -DB1A CUMULATIVE GROUP DETAIL STATISTICS SINCE {since}
{stamp} DSNB784I -DB1A GROUP DETAIL STATISTICS
                                        READS
                                          DATA RETURNED                      = {returned}
{stamp} DSNB785I -DB1A     DATA NOT RETURNED
                                            DIRECTORY ENTRY EXISTED          = 10
                                            DIRECTORY ENTRY CREATED          = 20
                                            DIRECTORY ENTRY NOT CREATED      = 0, 0
{stamp} DSNB786I -DB1A   WRITES
                                          CHANGED PAGES                      = 500
                                          CLEAN PAGES                        = 0
                                          FAILED DUE TO LACK OF STORAGE      = 0
                                        CHANGED PAGES SNAPSHOT VALUE         = {snapshot}
{stamp} DSNB787I -DB1A   RECLAIMS
                                          FOR DIRECTORY ENTRIES              = {reclaims}
                                          FOR DATA ENTRIES                   = 0
                                        CASTOUTS                             = 400
{stamp} DSNB788I -DB1A   CROSS INVALIDATIONS
                                          DUE TO DIRECTORY RECLAIMS          = 0
                                          DUE TO WRITES                      = 30
                                          EXPLICIT                           = 0
{stamp} DSNB790I -DB1A DISPLAY FOR GROUP BUFFER POOL GBP3 IS COMPLETE
"""


def test_cumulative_displays_become_intervals() -> None:
    """GDETAIL(*) counts since the structure's allocation: the first display is the interval from
    that basetime, each later one with the same basetime the difference to the one before; the
    changed pages snapshot is a level. A counter that went down is refused, naming it."""
    since = "08:00:00 NOV 20, 2026"
    text = (
        _cumulative("2026-11-20 09:00:00.00", since, 1000, 90, 7)
        + _cumulative("2026-11-20 09:15:00.00", since, 1600, 40, 7)
        + _cumulative("2026-11-20 09:30:00.00", since, 1500, 40, 9)
    )
    r = parse(text, "cum.txt")
    first, second = r.of("gbp_stats")
    assert (first["source"], first["group_name"]) == ("DSNCAT", "DSNCAT")  # the command's structure name
    assert (first["interval_start"], first["interval_end"]) == (
        int(_t(2026, 11, 20, 8) * 1e6),
        int(_t(2026, 11, 20, 9) * 1e6),
    )
    assert (first["reads_data_returned"], first["changed_pages_written"], first["changed_pages_snapshot"]) == (
        1000,
        500,
        90,
    )
    assert (second["interval_start"], second["interval_end"]) == (
        int(_t(2026, 11, 20, 9) * 1e6),
        int(_t(2026, 11, 20, 9, 15) * 1e6),
    )
    assert (second["reads_data_returned"], second["reads_no_data_dir_created"], second["castouts"]) == (600, 0, 0)
    assert (second["changed_pages_snapshot"], second["directory_reclaims"]) == (40, 0)
    (bad,) = r.rejected
    assert (bad.file, bad.field) == ("cum.txt", "reads_data_returned")
    assert bad.line == [n for n, ln in enumerate(text.splitlines(), 1) if "DSNB783I" in ln][2]
    assert "went down" in bad.reason


def test_broken_input_names_file_line_and_field() -> None:
    text = (CORPUS / "broken.txt").read_text()
    r = parse(text, "broken.txt")
    assert r.records == []
    bad, cut = r.rejected
    assert (bad.file, bad.line, bad.field) == ("broken.txt", 12, "DSNB786I CHANGED PAGES")
    assert bad.reason == "'2O909' is not a count" and "2O909" in text.splitlines()[11]
    # Cut off inside DSNB785I: the line it ends on, and the first counter it lacks.
    assert (cut.file, cut.line, cut.field) == (
        "broken.txt",
        len(text.splitlines()),
        "DSNB785I DIRECTORY ENTRY NOT CREATED",
    )
    assert cut.reason == "truncated block: DSNB785I has no DIRECTORY ENTRY NOT CREATED"
    assert str(bad) == "broken.txt:12: DSNB786I CHANGED PAGES: '2O909' is not a count"


def test_no_time_no_start_no_messages() -> None:
    lines = IBM_FIGURE.splitlines()
    r = parse(IBM_FIGURE, "f.txt", pool="GBP0")  # no console times, no --at
    assert [(x.line, x.field) for x in r.rejected] == [(1, "time")]
    r = parse("\n".join(lines[1:]), "f.txt", at=_t(2026, 1, 1), pool="GBP0")  # no DSNB783I
    assert [x.field for x in r.rejected] == ["DSNB782I"] and "SINCE" in r.rejected[0].reason
    only_reads = "\n".join(lines[:8])  # cut after DSNB785I: DSNB786I-788I missing
    r = parse(only_reads, "f.txt", at=_t(2026, 1, 1), pool="GBP0")
    assert [(x.line, x.field, x.reason) for x in r.rejected] == [(8, "DSNB786I", "truncated block: no DSNB786I")]
    r = parse("\n".join(lines[:-2]), "f.txt", at=_t(2026, 1, 1))  # no DSNB750I, no command, no --pool
    assert [x.field for x in r.rejected] == ["DSNB750I"]


def _group_rec() -> dict[str, Any]:
    rec = empty_gbp_stats()
    rec.update(
        source="DSNCAT",
        gbp="GBP1",
        scope="group",
        group_name="DSNCAT",
        interval_start=int(_t(2026, 11, 20, 10) * 1e6),
        interval_end=int(_t(2026, 11, 20, 10, 15) * 1e6),
        ratio=10.0,
        classt=5.0,
        gbpoolt=30.0,
        gbpchkpt_minutes=4.0,
        structure_mb=64.0,
        directory_entries=61234,
        data_entries=6123,
        **{**GROUP_FIGURE, "reads_no_data_dir_not_created": 340, "reads_no_data_dir_full": 8},
    )
    return rec


def test_the_formatter_prints_ibms_layout() -> None:
    """GDETAIL(INTERVAL) of the formatter, its console times taken off, is IBM's figure line for
    line (DSNB784I-788I, the figure's letters and blank line left out, its counters)."""
    rec = _group_rec()
    rec.update(reads_no_data_dir_not_created=332, reads_no_data_dir_full=0)
    out = [ln[23:] for ln in display(rec, member="DB1A").splitlines()]
    start = next(i for i, ln in enumerate(out) if ln.startswith("DSNB784I"))
    end = next(i for i, ln in enumerate(out) if ln.startswith("DSNB790I"))
    figure = IBM_FIGURE.splitlines()
    want = [
        re.sub(r" [A-G](?= +=)", "  ", ln)
        for ln in figure[1 : figure.index("DSNB762I -DB1A   DUPLEXING STATISTICS FOR GBP0-SEC")]
        if ln.strip()
    ]
    assert out[start:end] == want
    assert out[start - 1] == "DSNB782I -DB1A INCREMENTAL GROUP DETAIL STATISTICS SINCE 10:00:00 Nov 20, 2026"
    assert out[0] == "-DB1A DISPLAY GROUPBUFFERPOOL(GBP1) GDETAIL(INTERVAL)"


def test_round_trip_through_the_parser() -> None:
    """Extra: what the formatter prints, the parser reads back exactly (group and member)."""
    rec = _group_rec()
    (back,) = parse(display(rec, member="DB1A"), "rt.txt").of("gbp_stats")
    assert back == rec
    m = empty_gbp_stats()
    m.update(
        source="DB1B",
        gbp="GBP1",
        scope="member",
        interval_start=int(_t(2026, 11, 20, 10) * 1e6),
        interval_end=int(_t(2026, 11, 20, 10, 15) * 1e6),
        xi_reads_data_returned=5,
        xi_reads_no_data=1,
        nf_reads_data_returned=7,
        nf_reads_no_data=100,
        changed_pages_written=30,
        clean_pages_written=0,
        write_failed_no_storage=2,
        castout_class_threshold=1,
        castout_gbp_threshold=0,
        gbp_checkpoints=3,
        castout_pages=40,
        xi_explicit=0,
    )
    (back,) = parse(display(m), "rt.txt").of("gbp_stats")
    assert back == m


def test_detected_without_format_and_read_by_the_cli(tmp_path: Path) -> None:
    text = (CORPUS / "gdetail_mdetail.txt").read_text()
    assert [f.name for f in detect(text)] == ["gbp-display"]
    assert [f.name for f in detect(IBM_FIGURE)] == ["gbp-display"]
    path = tmp_path / "gbp.txt"
    path.write_text(text)
    outs: list[list[dict[str, Any]]] = []
    for args in ([], ["--format", "gbp-display"]):
        out = tmp_path / f"out{len(outs)}.jsonl"
        r = subprocess.run(
            [
                *(sys.executable, "-m", "poolsight.cli", "ingest", "stats", str(path), "--output", str(out)),
                *("--state-dir", str(tmp_path / f"state{len(outs)}"), *args),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        outs.append([json.loads(ln) for ln in out.read_text().splitlines()])
    assert outs[0] == outs[1]
    group, member = outs[0]
    assert (group["schema"], group["scope"], group["source"], member["scope"], member["source"]) == (
        "gbp_stats",
        "group",
        "DSNCAT",
        "member",
        "DB1B",
    )
    assert group["metrics"]["group_read_hit_ratio"] == pytest.approx(3845 / (3845 + 27 + 28336 + 337))


def test_a_group_record_named_by_its_member_does_not_hide_the_members_own(tmp_path: Path) -> None:
    """GDETAIL without a structure name is named by the issuing member, like that member's
    MDETAIL record of the same interval: the collector keeps both (its marks hold the scope)."""
    g = _group_rec()
    g.update(source="DB1A", group_name=None)
    m = empty_gbp_stats()
    m.update(source="DB1A", gbp="GBP1", scope="member", interval_start=g["interval_start"])
    m.update(interval_end=g["interval_end"], xi_reads_data_returned=1, xi_reads_no_data=2)
    m.update(nf_reads_data_returned=3, nf_reads_no_data=4, changed_pages_written=5, clean_pages_written=0)
    m.update(write_failed_no_storage=0, castout_class_threshold=0, castout_gbp_threshold=0, gbp_checkpoints=0)
    m.update(castout_pages=0, xi_explicit=0)
    path = tmp_path / "both.txt"
    path.write_text(display(g, member="DB1A") + display(m))
    out = tmp_path / "out.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "poolsight.cli", "ingest", "stats", str(path), "--output", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert [(x["source"], x["scope"]) for x in rows] == [("DB1A", "group"), ("DB1A", "member")]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *IBM_FIGURE.splitlines(),
                *(CORPUS / "gdetail_mdetail.txt").read_text().splitlines()[:12],
                "DSNB750I -DB1A DISPLAY FOR GROUP BUFFER POOL",
                "DSNB783I -DB1A CUMULATIVE GROUP DETAIL STATISTICS SINCE 99:99:99 FOO 42, 2002",
                "DSNB782I -DB1A INCREMENTAL GROUP DETAIL STATISTICS SINCE 10:00:00 FEB 30, 2026",
                "                     DIRECTORY ENTRY NOT CREATED      = ,",
                "                     DIRECTORY ENTRY NOT CREATED      = 1, 2, 3",
                "DSNB758I -DB1A   ALLOCATED SIZE = 99999999999 GB",
                "DSNB757I -DB1A MVS CFRM POLICY STATUS FOR _GBP0 = NORMAL",
                "-DB1A DIS GBPOOL(A_B_GBP1,GBP2) GDETAIL(*)",
                "= = =",
                "",
            ]
        )
        | st.text(max_size=50),
        max_size=40,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    r = parse("\n".join(lines), "fuzz", at=_t(2026, 11, 20, 12))
    for rec in r.of("gbp_stats"):
        assert rec["interval_end"] > rec["interval_start"] and rec["scope"] in ("group", "member")
