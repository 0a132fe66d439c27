"""-DISPLAY BUFFERPOOL DETAIL output: DSNB4xxI messages, with and without prefixes, broken ones, fuzz."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.ingest.stats_display import parse

CORPUS = Path(__file__).parent / "corpus" / "display"
TEN = datetime(2026, 11, 22, 10, 0, tzinfo=UTC).timestamp()


def test_detail_output_of_two_pools() -> None:
    r = parse((CORPUS / "detail_two_pools.txt").read_text(), "d.txt")
    assert r.rejected == []
    attrs = {a["pool"]: a for a in r.of("pool_attributes")}
    bp2 = attrs["BP2"]
    assert (bp2["source"], bp2["vpsize"], bp2["vpseqt"], bp2["dwqt"], bp2["vdwqt"], bp2["vdwqt_buffers"]) == (
        "DB2A",
        4000,
        80.0,
        85.0,
        80.0,
        0,
    )
    assert (bp2["vpxseqt"], bp2["pgfix"], bp2["pgsteal"], bp2["spsize"], bp2["spseqt"]) == (
        50.0,
        False,
        "LRU",
        8000,
        80.0,
    )
    # The display's time: the last console timestamp of the output.
    assert bp2["event_time"] == int((TEN + 0.13) * 1e6) and bp2["page_size"] == 4096
    bp8 = attrs["BP8K0"]
    assert (bp8["vpsize"], bp8["pgfix"], bp8["pgsteal"], bp8["vdwqt"], bp8["page_size"]) == (
        2000,
        True,
        "FIFO",
        5.0,
        8192,
    )
    stats = {s["pool"]: s for s in r.of("pool_stats")}
    s2 = stats["BP2"]
    assert abs(s2["interval_seconds"] - 3600.13) < 1e-6
    assert (s2["getpages_random"], s2["sync_reads_random"], s2["getpages_sequential"]) == (491222, 18193, 1378500)
    assert (s2["seq_prefetch_requests"], s2["seq_prefetch_reads"], s2["seq_prefetch_pages"]) == (41464, 16564, 519178)
    assert (s2["dyn_prefetch_pages"], s2["buffer_updates"], s2["pages_written"]) == (102367, 220614, 35868)
    assert (s2["async_writes"], s2["sync_writes"], s2["dwqt_reached"], s2["vdwqt_reached"]) == (5084, 3, 2, 0)
    assert (s2["sim_sync_reads_avoidable_random"], s2["sim_async_pages_avoidable"]) == (9120, 1003)
    assert s2["buffers_allocated"] == 4000 and s2["origin"] == "display"
    s8 = stats["BP8K0"]
    assert (s8["getpages_random"], s8["sync_reads_random"], s8["getpages_sequential"]) == (6116, 37, 2215)
    assert s8["pages_written"] is None  # not displayed: null, not 0
    assert abs(s8["interval_seconds"] - 1800.13) < 0.01


def test_simulated_pool_messages_in_ibms_layout() -> None:
    """DSNB404I's SP SEQUENTIAL, DSNB431I's SPSIZE and DSNB432I's avoidable reads and delay, as
    -DISPLAY BUFFERPOOL(BPn) DETAIL prints them at each interval: two displays of one pool in one
    file, each read at its own time, from the SINCE of its own DSNB409I."""
    r = parse((CORPUS / "simulated_pool.txt").read_text(), "sp.txt")
    assert r.rejected == []
    a1, a2 = r.of("pool_attributes")
    assert (a1["pool"], a1["vpsize"], a1["vpseqt"], a1["spsize"], a1["spseqt"], a1["vpxseqt"]) == (
        "BP5",
        50000,
        60.0,
        25000,
        70.0,
        50.0,
    )
    assert (a2["vpsize"], a2["spsize"], a2["spseqt"]) == (50000, 25000, None)  # no DSNB404I the second time
    half_past = datetime(2026, 11, 22, 10, 30, tzinfo=UTC).timestamp()
    assert a1["event_time"] == int((half_past + 0.09) * 1e6) and a2["event_time"] == int((TEN + 3600.53) * 1e6)
    s1, s2 = r.of("pool_stats")
    assert (s1["interval_start"], s1["interval_end"]) == (int(TEN * 1e6), int((half_past + 0.09) * 1e6))
    assert (s2["interval_start"], s2["interval_end"]) == (int(half_past * 1e6), int((TEN + 3600.53) * 1e6))
    sim = ("sim_sync_reads_avoidable_random", "sim_sync_reads_avoidable_sequential", "sim_async_pages_avoidable")
    assert tuple(s1[k] for k in sim) == (41234, 212, 3318) and s1["sim_sync_io_delay_avoidable_ms"] == 30876.0
    assert tuple(s2[k] for k in sim) == (40102, 198, 3401) and s2["sim_sync_io_delay_avoidable_ms"] == 29877.0
    assert (s1["sync_reads_random"], s1["sync_reads_sequential"], s1["dyn_prefetch_pages"]) == (118207, 1410, 871405)


@pytest.mark.parametrize(
    ("delay", "ms"),
    [("30876 MILLISECONDS", 30876.0), ("30876", 30876.0), ("30.876 SECONDS", 30876.0), ("0:00:30.876000", 30876.0)],
)
def test_avoidable_delay_in_each_form(delay: str, ms: float) -> None:
    """In milliseconds whether the figure comes with its unit, without one, or as IFCID 2's h:mm:ss."""
    text = (
        "DSNB401I + BUFFERPOOL NAME BP1, BUFFERPOOL ID 1, USE COUNT 1\n"
        "DSNB409I + INCREMENTAL STATISTICS SINCE 09:00:00 NOV 22, 2026\n"
        "DSNB432I + SIMULATED BUFFER POOL ACTIVITY -\n  AVOIDABLE READ I/O -\n    SYNC READ I/O (R) = 7\n"
        f"  TOTAL AVOIDABLE SYNC I/O DELAY = {delay}\n"
    )
    r = parse(text, "d.txt", at=TEN)
    assert r.rejected == []
    [s] = r.of("pool_stats")
    assert s["sim_sync_reads_avoidable_random"] == 7 and s["sim_sync_io_delay_avoidable_ms"] == pytest.approx(ms)


def test_attributes_come_before_statistics() -> None:
    """The order the parser has always returned (and `--output` has written): every pool's
    attributes, then every pool's statistics."""
    r = parse((CORPUS / "detail_two_pools.txt").read_text(), "d.txt")
    assert [(s, x["pool"]) for s, x in r.records] == [
        ("pool_attributes", "BP2"),
        ("pool_attributes", "BP8K0"),
        ("pool_stats", "BP2"),
        ("pool_stats", "BP8K0"),
    ]


def _seed002_numbers(text: str) -> dict[str, object]:
    """What the sample itself says, read here independently of the parser."""
    size = int(re.search(r"BUFFER POOL SIZE = (\d+)", text).group(1))  # type: ignore[union-attr]
    pgfix = re.search(r"CURRENT = (\w+)", text).group(1) == "YES"  # type: ignore[union-attr]
    frames = {k: int(v) for k, v in re.findall(r"(4K|1M) PAGES (\d+)", text)}
    subsystem = re.search(r"DSNB402I =(\w+)", text).group(1)  # type: ignore[union-attr]
    return {
        "vpsize": size,
        "pgfix": pgfix,
        "frame_size": 1 << 20 if frames["1M"] > frames["4K"] else 4096,
        "source": subsystem,
    }


def test_seed002_output_is_named_by_its_command_line() -> None:
    """Seed 002, "-DISPLAY BUFFERPOOL(BP5) SERVICE=4" and its output, cut as they stand in the seed."""
    text = (CORPUS / "seed002_with_command.txt").read_text()
    r = parse(text, "seed002_with_command.txt", at=TEN)
    assert r.rejected == [] and r.of("pool_stats") == []  # no DSNB409I: no statistics, nothing to reject
    [attrs] = r.of("pool_attributes")
    want = _seed002_numbers(text)
    assert attrs["pool"] == "BP5" and attrs["event_time"] == int(TEN * 1e6)
    assert {k: attrs[k] for k in want} == want
    assert want["frame_size"] == 1 << 20  # 19968 of 20000 buffers on 1M frames


def test_seed002_output_without_its_command_line_needs_the_pool_named() -> None:
    text = (CORPUS / "seed002.txt").read_text()
    r = parse(text, "seed002.txt", at=TEN)
    assert r.records == []  # neither attributes nor statistics
    [rej] = r.rejected
    assert rej.field == "DSNB401I" and "does not name its buffer pool" in rej.reason and "--pool" in rej.reason
    [attrs] = parse(text, "seed002.txt", at=TEN, pool="BP5").of("pool_attributes")
    assert attrs["pool"] == "BP5" and attrs["vpsize"] == _seed002_numbers(text)["vpsize"]


def test_each_command_line_starts_a_new_pool() -> None:
    block = (CORPUS / "seed002.txt").read_text()
    text = f"-DISPLAY BUFFERPOOL(BP5) SERVICE=4\n{block}-DISPLAY BUFFERPOOL(BP6) SERVICE=4\n" + block.replace(
        "20000", "3000"
    )
    got = {a["pool"]: a["vpsize"] for a in parse(text, "two.txt", at=TEN).of("pool_attributes")}
    assert got == {"BP5": 20000, "BP6": 3000}


def test_no_display_time_rejects_instead_of_guessing() -> None:
    text = "\n".join(
        line[23:] if line[:4] == "2026" else line for line in (CORPUS / "detail_two_pools.txt").read_text().splitlines()
    )
    r = parse(text, "notime.txt")
    assert r.records == []  # neither statistics nor attributes
    assert {x.field for x in r.rejected} == {"time"}
    r = parse(text, "notime.txt", at=TEN)  # the caller knows when it ran the command
    assert len(r.of("pool_stats")) == 2


def test_cut_lines_bad_counts_zero_interval() -> None:
    r = parse((CORPUS / "broken.txt").read_text(), "broken.txt", at=TEN)
    reasons = {(x.field, x.line): x.reason for x in r.rejected}
    assert reasons[("SYNC READ I/O (R", 4)] == "DSNB411I is cut off: no value for SYNC READ I/O (R"
    assert reasons[("DSNB411I", 8)] == "'12X' is not a count"
    assert reasons[("interval", 9)] == "interval of 0 seconds"
    assert [s["pool"] for s in r.of("pool_stats")] == ["BP6"]
    assert r.of("pool_stats")[0]["interval_seconds"] == 600 and r.of("pool_stats")[0]["source"] == "DB2"
    assert sorted(a["pool"] for a in r.of("pool_attributes")) == ["BP5", "BP6"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "DSNB401I + BUFFERPOOL NAME BP1, BUFFERPOOL ID 1",
                "DSNB402I -DB2A BUFFER POOL SIZE = 100",
                "DSNB409I + INCREMENTAL STATISTICS SINCE 09:00:00 NOV 22, 2026",
                "DSNB411I RANDOM GETPAGE = 5",
                "   SYNC READ I/O (R) = ",
                "DSNB404I + THRESHOLDS - VERTICAL DEFERRED WRT = x, y",
                "DSNB409I + INCREMENTAL STATISTICS SINCE 99:99:99 FOO 42, 2026",
                "2026-13-45 10:00:00 DSNB411I",
                "DSNB406I + PGFIX ATTRIBUTE - CURRENT = MAYBE",
                "= = =",
                "",
            ]
        )
        | st.text(max_size=50),
        max_size=30,
    )
)
def test_parser_never_raises(lines: list[str]) -> None:
    r = parse("\n".join(lines), "fuzz", at=TEN)
    for rec in r.of("pool_stats"):
        assert rec["interval_seconds"] > 0
