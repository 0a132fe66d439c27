"""DB2 statistics report (OMEGAMON) buffer pool blocks: real layouts, broken ones, fuzz."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.stats_common import Parsed
from poolsight.ingest.stats_omegamon import COUNTERS, parse, parse_quantity
from poolsight.simulator.metrics import pool_metrics

CORPUS = Path(__file__).parent / "corpus" / "omegamon"


def _read(name: str) -> Parsed:
    return parse((CORPUS / name).read_text(), name)


def test_quantities() -> None:
    assert parse_quantity("7270.9K") == pytest.approx(7_270_900)
    assert parse_quantity("447.0M") == pytest.approx(447_000_000)
    assert parse_quantity("1,270.00") == 1270
    assert parse_quantity("N/A") is None and parse_quantity("N/C") is None
    with pytest.raises(ValueError, match="not a quantity"):
        parse_quantity("98.1Q")


def test_fixed_width_report_two_blocks_side_by_side() -> None:
    r = _read("fixed_width.txt")
    assert r.rejected == []
    by_pool = {x["pool"]: x for x in r.of("pool_stats")}
    assert set(by_pool) == {"BP0", "BP2"}
    bp0 = by_pool["BP0"]
    assert bp0["source"] == "DB2P" and bp0["origin"] == "omegamon"
    assert bp0["interval_seconds"] == 3600
    assert (bp0["getpages_random"], bp0["getpages_sequential"]) == (1_524_500, 1_217_000)
    assert (bp0["sync_reads_random"], bp0["sync_reads_sequential"]) == (795, 17)
    assert (bp0["list_prefetch_requests"], bp0["list_prefetch_pages"], bp0["dyn_prefetch_pages"]) == (101, 40, 57)
    assert (bp0["buffer_updates"], bp0["pages_written"], bp0["sync_writes"], bp0["async_writes"]) == (
        410_200,
        23_500,
        37,
        2104,
    )
    assert bp0["vdwqt_reached"] == 88 and bp0["buffers_allocated"] == 20_000
    assert bp0["sim_sync_reads_avoidable_random"] is None  # not in this report: null, not 0
    bp2 = by_pool["BP2"]
    assert bp2["getpages_random"] == 336_300_000 and bp2["dyn_prefetch_pages"] == 133_900_000
    assert bp2["pages_written"] is None  # no WRITE block for BP2
    assert r.unknown == {"ZHYPERLINK SYNC READS (NEW)": 1}
    assert r.ignored["BPOOL HIT RATIO (%)"] == 1


END = 1_763_800_000.0  # when the copied interval ended, as a user would give it (--at)


def _sample(text: str, label: str) -> tuple[float, float]:
    """(QUANTITY, /SECOND) of a counter line, read from the sample text here, not by the parser."""
    m = re.search(re.escape(label) + r"\t([\d.]+)([KMG]?)\t([\d.]+)", text)
    assert m is not None, label
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)], float(m.group(3))


def test_seed000_bp1_block_needs_its_end_and_says_how_long_it_lasted() -> None:
    r = _read("seed000_no_interval.txt")
    assert r.records == []
    [rej] = r.rejected
    assert rej.field == "interval" and "give --at" in rej.reason and "(it lasted 2,999 s" in rej.reason
    assert rej.line == 1 and "GETPAGE REQUEST-RANDOM" in rej.raw


def test_seed000_bp1_block_with_its_interval_derived() -> None:
    """Seed 000, "Buffer Pool Data - statistics", cut as it stands: 7270.9K getpages at 2424.49/s."""
    text = (CORPUS / "seed000_no_interval.txt").read_text()
    r = parse(text, "bp1.txt", interval_end=END)
    assert r.rejected == []
    [rec] = r.of("pool_stats")
    q, per_s = _sample(text, "GETPAGE REQUEST")
    assert rec["interval_derived"] is True and rec["interval_end"] == int(END * 1e6)
    assert rec["interval_seconds"] == pytest.approx(q / per_s, rel=1e-4)  # about 2,999 s
    assert rec["interval_seconds"] == pytest.approx(2999, abs=1)
    for label, fld in [
        ("GETPAGE REQUEST-RANDOM", "getpages_random"),
        ("SYNCHRON. READS-RANDOM", "sync_reads_random"),
        ("PAGES READ VIA DYN.PREFETCH", "dyn_prefetch_pages"),
        ("BUFFER UPDATES", "buffer_updates"),
        ("VERTI.DEF.WRITE THRESHOLD", "vdwqt_reached"),
    ]:
        assert rec[fld] == round(_sample(text, label)[0]), label
    # The per-second rates the sample prints come back from the derived interval.
    m = pool_metrics(rec)
    assert rec["getpages_random"] / rec["interval_seconds"] == pytest.approx(
        _sample(text, "GETPAGE REQUEST-RANDOM")[1], rel=1e-3
    )
    assert m["getpages"] == rec["getpages_random"] + rec["getpages_sequential"]


def test_a_given_interval_is_used_and_not_flagged_as_derived() -> None:
    [rec] = parse(
        (CORPUS / "seed000_no_interval.txt").read_text(), "bp1.txt", interval_end=END, interval_seconds=3000
    ).of("pool_stats")
    assert rec["interval_seconds"] == 3000 and rec["interval_derived"] is False
    assert rec["interval_start"] == int((END - 3000) * 1e6)


@pytest.mark.parametrize(
    ("name", "label", "fields"),
    [
        ("seed000_part1.txt", "GETPAGE REQUEST", ["getpages_random", "getpages_sequential", "list_prefetch_pages"]),
        ("seed000_part2.txt", "BUFFER UPDATES", ["buffer_updates", "pages_written", "dwqt_reached"]),
        ("seed000_bp20.txt", "BUFFER UPDATES", ["buffer_updates", "vdwqt_reached", "async_writes"]),
    ],
)
def test_seed000_part1_part2_and_bp20_blocks_as_they_stand(name: str, label: str, fields: list[str]) -> None:
    """Seed 000's "Buffer Pool Part1", "Part2" (comments beside the counters) and BP20's write
    block (a tab-separated underline), each cut as it stands."""
    text = (CORPUS / name).read_text()
    r = parse(text, name, interval_end=END)
    assert r.rejected == [], r.rejected
    [rec] = r.of("pool_stats")
    q, per_s = _sample(text, label)
    assert rec["interval_derived"] is True
    assert rec["interval_seconds"] == pytest.approx(q / per_s, rel=2e-3)
    labels = {v[1]: k for k, v in COUNTERS.items()}
    for fld in fields:
        printed = next(
            lab
            for lab in re.findall(r"\t([A-Z][A-Z .\-/()%]+?)\t[\d.]+[KMG]?\t", text)
            if lab.replace(" ", "") == labels[fld]
        )
        assert rec[fld] == round(_sample(text, printed)[0]), fld


def test_part1_and_part2_of_one_report_make_one_record() -> None:
    text = (
        (CORPUS / "seed000_part1.txt").read_text()
        + "\nProse between the parts.\n\n"
        + (CORPUS / "seed000_part2.txt").read_text()
    )
    [rec] = parse(text, "both.txt", interval_end=END).of("pool_stats")
    assert rec["getpages_random"] == 336_300_000 and rec["buffer_updates"] == 57_165_100
    assert rec["interval_seconds"] == pytest.approx(82_800, rel=1e-3)


def test_seed_block_under_a_report_header_and_its_metrics() -> None:
    r = _read("seed000_with_interval.txt")
    [rec] = r.of("pool_stats")
    assert rec["source"] == "DSNP" and rec["pool"] == "BP1" and rec["interval_seconds"] == 3000
    assert rec["getpages_random"] == 7_270_900 and rec["getpages_sequential"] == 3
    assert rec["sync_reads_random"] == 624_500 and rec["dyn_prefetch_pages"] == 5_696_000
    m = pool_metrics(rec)
    # DOMAIN.md: (getpages - sync reads) / getpages; (getpages - all pages read) / getpages.
    getpages = 7_270_903
    assert m["application_hit_ratio"] == pytest.approx((getpages - 624_501) / getpages)
    pages_read = 624_501 + 61 + 0 + 5_696_000
    assert m["system_hit_ratio"] == pytest.approx((getpages - pages_read) / getpages)
    assert m["pages_per_write"] == pytest.approx(1_662_700 / (1127 + 147_100))
    assert m["read_ios_per_second"] == pytest.approx((624_501 + 2 + 0 + 233_300) / 3000)
    assert m["io_intensity"] == pytest.approx((pages_read + 1_662_700) / 40_000)
    # The report's own per-second column agrees with the interval the header states.
    assert 7_270_900 / 3000 == pytest.approx(2424.49, rel=1e-3)


def test_negative_system_hit_ratio_is_kept_and_flagged() -> None:
    rec = {
        "getpages_random": 1000,
        "getpages_sequential": 0,
        "sync_reads_random": 10,
        "sync_reads_sequential": 0,
        "seq_prefetch_pages": 0,
        "list_prefetch_pages": 0,
        "dyn_prefetch_pages": 5000,
        "seq_prefetch_reads": 0,
        "list_prefetch_reads": 0,
        "dyn_prefetch_reads": 100,
        "interval_seconds": 60.0,
        "pages_written": None,
        "sync_writes": None,
        "async_writes": None,
    }
    m = pool_metrics(rec, vpsize=1000)
    assert m["system_hit_ratio"] == pytest.approx((1000 - 5010) / 1000)
    assert any("negative system hit ratio" in f for f in m["flags"])
    assert m["pages_per_write"] is None and m["io_intensity"] is None


def test_zero_interval_bad_numbers_truncated_unknown() -> None:
    r = _read("zero_interval.txt")
    assert r.records == [] and [x.reason for x in r.rejected] == ["interval of 0 seconds"]
    r = _read("highlights_and_broken.txt")
    by_pool = {x["pool"]: x for x in r.of("pool_stats")}
    assert set(by_pool) == {"BP4"}  # the one good block is kept
    bp4 = by_pool["BP4"]
    assert bp4["source"] == "DB2A" and bp4["interval_seconds"] == 900
    assert bp4["getpages_random"] == 45_600 and bp4["sync_reads_random"] == 912
    assert r.unknown == {"SUPER NEW COUNTER": 1}
    reasons = {(x.field, x.line): x.reason for x in r.rejected}
    assert reasons[("GETPAGE REQUEST-RANDOM", 11)] == "'98.1Q' is not a quantity"
    assert reasons[("BP5", 22)] == "truncated block: no counters"


def test_wrong_encoding_damages_only_its_block(tmp_path: Path) -> None:
    text = (CORPUS / "fixed_width.txt").read_bytes().replace(b"336.3M", "336.3\u00b5".encode("latin-1"))
    r = parse(text.decode("utf-8", errors="replace"), "latin1.txt")
    assert {x["pool"] for x in r.of("pool_stats")} == {"BP0"}
    assert [x.field for x in r.rejected] == ["GETPAGE REQUEST-RANDOM"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "BP1       GENERAL   QUANTITY  /SECOND",
                "BP1\tREAD OPERATIONS\tQUANTITY\t/SECOND",
                "GETPAGE REQUEST-RANDOM   12.5K   3.0",
                "SYNCHRON. READS-RANDOM  N/C",
                "INTERVAL FROM: 01/02/26 10:00:00.00",
                "TO: 01/02/26 10:01:00.00",
                "INTERVAL ELAPSED : 1:00.0",
                "BUFFER UPDATES  -5",
                "",
                "----- -----",
                "PAGES WRITTEN   1.2.3",
                "\t\t\t\tPAGES READ VIA DYN.PREFETCH\t9M",
                "INTERVAL START : 13/45/26 99:99:99.00",
            ]
        )
        | st.text(max_size=60),
        max_size=40,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    r = parse("\n".join(lines), "fuzz")
    for rec in r.of("pool_stats"):
        assert rec["interval_seconds"] > 0


def test_ingest_stats_cli_writes_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "stats",
            str(CORPUS / "fixed_width.txt"),
            str(CORPUS / "highlights_and_broken.txt"),
            "--format",
            "omegamon",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(x["pool"] for x in rows) == ["BP0", "BP2", "BP4"]
    assert all("metrics" in x and "application_hit_ratio" in x["metrics"] for x in rows)
    assert "accepted 3 blocks, rejected 2" in r.stderr
    assert "highlights_and_broken.txt:11: GETPAGE REQUEST-RANDOM" in r.stderr


def test_seed000_bf20_block_as_printed_and_its_write_block_agree() -> None:
    """Seed 000's "Buffer Pool DB2 V9" read block names its pool BF20 (and spells one counter
    PREF_QUANT.): read as it stands. Its interval, derived from its own rates, is the one its
    BP20 write block gives (the same report), to 0.1 %."""
    text = (CORPUS / "seed000_bf20.txt").read_text()
    r = parse(text, "bf20.txt", interval_end=END)
    assert r.rejected == [] and not r.unknown
    [rec] = r.of("pool_stats")
    assert rec["pool"] == "BF20"
    assert rec["getpages_random"] == round(_sample(text, "GETPAGE REQUEST-RANDOM")[0])
    assert rec["getpages_sequential"] == round(_sample(text, "GETPAGE REQUEST-SEQUENTIAL")[0])
    [write] = parse((CORPUS / "seed000_bp20.txt").read_text(), "bp20.txt", interval_end=END).of("pool_stats")
    assert rec["interval_seconds"] == pytest.approx(write["interval_seconds"], rel=1e-3)
