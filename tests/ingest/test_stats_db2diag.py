"""db2diag.log backup statistics (seed 003): found among other records, checked, analysed."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.stats_db2diag import parse
from poolsight.simulator.metrics import backup_analysis

CORPUS = Path(__file__).parent / "corpus" / "db2diag"


def test_records_among_other_log_records() -> None:
    r = parse((CORPUS / "db2diag.log").read_text(), "db2diag.log")
    assert r.rejected == [] and r.skipped == 2
    first, second = r.of("backup_stats")
    assert first["source"] == "dmcinnis/PERF" and first["database"] == "PERF"
    assert first["operation"] == "BACKUP"  # the nearest earlier record started a backup
    assert second["operation"] == "RESTORE"
    # 2016-01-20-11.07.26.882298-300: local time 5 hours behind UTC.
    assert first["event_time"] == 1453306046882298
    assert (first["parallelism"], first["buffers"], first["buffer_size"]) == (10, 10, 10489856)
    bm = [t for t in first["threads"] if t["kind"] == "BM"]
    mc = [t for t in first["threads"] if t["kind"] == "MC"]
    assert len(bm) == 10 and len(mc) == 1
    assert bm[0] == {
        "kind": "BM",
        "number": 0,
        "total_seconds": 1420.79,
        "io_seconds": 27.63,
        "msgq_seconds": 1269.31,
        "waitq_seconds": 122.62,
        "buffers": 789,
        "mbytes": 7860.0,
    }
    assert first["position"] == "db2diag.log:7"


def test_analysis_reproduces_the_seeds_reading() -> None:
    """Seed 003: BM threads 2.71 % in I/O and 89.63 % waiting for buffers; MC 99.92 % in I/O;
    so the bottleneck is writing to the target device."""
    first = parse((CORPUS / "db2diag.log").read_text(), "db2diag.log").of("backup_stats")[0]
    a = backup_analysis(first)
    assert round(100 * a["sides"]["BM"]["io"], 2) == 2.71
    assert round(100 * a["sides"]["BM"]["msgq"], 2) == 89.63
    assert round(100 * a["sides"]["MC"]["io"], 2) == 99.92
    assert a["bottleneck"] == "MC" and a["bottleneck_means"].startswith("writing to the backup target")


def test_broken_records_are_rejected_with_line_and_reason() -> None:
    r = parse((CORPUS / "broken.log").read_text(), "broken.log")
    assert r.records == []
    got = [(x.line, x.field, x.reason) for x in r.rejected]
    assert got[0] == (1, "BM TOT", "the BM table is cut off before its TOT line")
    assert got[1][1] == "BM#000" and "does not parse" in got[1][2]
    assert all("Performance statistics" in x.raw for x in r.rejected)


def test_totals_that_do_not_add_up() -> None:
    lines = (CORPUS / "db2diag.log").read_text().splitlines()
    tot = next(i for i, line in enumerate(lines) if line.startswith("TOT") and "14207.48" in line)
    lines[tot] = lines[tot].replace("10720", "10721")  # (the seed's tables are spaced with no-break spaces)
    text = "\n".join(lines)
    r = parse(text, "x.log")
    assert len(r.of("backup_stats")) == 1
    assert r.rejected[0].reason == "BM buffers add up to 10720, TOT says 10721"


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "2016-01-20-11.07.26.882298-300 E1 LEVEL: Info",
                "MESSAGE : Performance statistics",
                "Parallelism = 4",
                "BM#    Total     I/O       MsgQ        WaitQ      Buffers   MBytes",
                "000 1.0 0.5 0.2 0.3 4 1",
                "001 1.0 x 0.2 0.3 4 1",
                "TOT 2.0 1 1 1 8 2",
                "MC#  Total",
                "TOT",
                "---",
                "",
                "DB   : X",
                "2099-99-99-99.99.99.999999+000 E2 LEVEL: Info",
            ]
        )
        | st.text(max_size=40),
        max_size=30,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    try:
        r = parse("\n".join(lines), "fuzz")
    except ValueError as exc:  # only a time stamp that is no date may not be read
        pytest.fail(f"raised {exc}")
    for rec in r.of("backup_stats"):
        assert rec["threads"]


def test_per_thread_shares_and_findings_as_seed_003_reads_them() -> None:
    text = (CORPUS / "db2diag.log").read_text()
    first, second = parse(text, "db2diag.log").of("backup_stats")
    # The first table of the sample, read here line by line: BM#  Total  I/O  MsgQ  WaitQ  Buffers  MBytes.
    table = text[text.index("BM#") : text.index("MC#")]
    rows = [line.split() for line in table.splitlines() if re.match(r"^\d{3}\s", line)]
    threads = backup_analysis(first)["threads"]
    bm = [t for t in threads if t["kind"] == "BM"]
    assert len(bm) == len(rows) == 10
    for t, row in zip(bm, rows, strict=True):
        total, io, msgq, waitq = (float(x) for x in row[1:5])
        assert (t["io_share"], t["msgq_share"], t["waitq_share"]) == pytest.approx(
            (io / total, msgq / total, waitq / total)
        )
        assert t["finding"] == "waits for buffers (MsgQ): the media side frees them too slowly"
    [mc] = [t for t in threads if t["kind"] == "MC"]
    assert mc["io_share"] == pytest.approx(1420.33 / 1421.51) and mc["finding"].startswith("busy with the backup media")
    findings = backup_analysis(first)["findings"]
    assert findings[0].startswith(
        "bottleneck: the MC threads (99.9% of their time in I/O), writing to the backup target"
    )
    assert findings[1].startswith("BM threads wait 89.6% of their time for buffers (MsgQ): allocate more buffers")
    # The restore: some BM threads have no table space left to read.
    restore = backup_analysis(second)
    idle = [t for t in restore["threads"] if t["kind"] == "BM" and t["waitq_share"] >= 0.9]
    assert idle and all(t["finding"].startswith("idle: waits for work") for t in idle)
    assert any(f.startswith(f"{len(idle)} of 19 BM threads are idle") for f in restore["findings"])


def test_elapsed_time_runs_from_the_start_record_to_the_statistics_record() -> None:
    """Seed 003 times the backup from its start and end entries in the log."""
    text = (CORPUS / "db2diag.log").read_text()
    first, second = parse(text, "db2diag.log").of("backup_stats")
    stamps = re.findall(r"^(\d{4}-\d\d-\d\d-\d\d\.\d\d\.\d\d\.\d{6})", text, re.MULTILINE)
    start, end = (datetime.strptime(s, "%Y-%m-%d-%H.%M.%S.%f") for s in stamps[:2])
    assert first["elapsed_seconds"] == pytest.approx((end - start).total_seconds())  # about 23 min 42 s
    assert second["elapsed_seconds"] is None  # its "start" record is dated after it: not its start


def test_seed003_second_and_third_samples_read_as_the_seed_reads_them() -> None:
    """Seed 003's run with two TSM sessions ("BM threads waiting for buffers decreased to 43.53%")
    and its run with four, cut as it stands ("it did decrease the average time that BMs spent
    waiting for buffers"; "the MCs continued to spend all of their time writing")."""
    two = parse((CORPUS / "db2diag.log").read_text(), "db2diag.log").of("backup_stats")[1]
    assert round(100 * backup_analysis(two)["sides"]["BM"]["msgq"], 2) == 43.53
    text = (CORPUS / "seed003_four_sessions.log").read_text()
    r = parse(text, "seed003_four_sessions.log")
    assert r.rejected == []
    [four] = r.of("backup_stats")
    assert four["operation"] == "UNKNOWN" and four["elapsed_seconds"] is None  # no start record in the cut
    lines = [line.split() for line in text.splitlines() if re.match(r"^\d{3}\s", line)]
    assert len(four["threads"]) == len(lines) == 19 + 4
    a = backup_analysis(four)
    bm_msgq = sum(float(x[3]) / float(x[1]) for x in lines[:19]) / 19
    mc_io = sum(float(x[2]) / float(x[1]) for x in lines[19:]) / 4
    assert a["sides"]["BM"]["msgq"] == pytest.approx(bm_msgq) and a["sides"]["MC"]["io"] == pytest.approx(mc_io)
    assert bm_msgq < backup_analysis(two)["sides"]["BM"]["msgq"] and mc_io > 0.99
    assert a["bottleneck"] == "MC"
