"""Threshold advice from statistics alone: VDWQT from the write pattern and the objects written, and
the pools with statistics but no simulated curve (no trace yet), which get the VDWQT, PGFIX and 1 MB
frame rules and nothing that needs a simulation. Inputs are seed 000's numbers, typed in by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from poolsight.advice import settings as rules
from poolsight.advice.advisor import Budget, stats_advice
from poolsight.advice.model import STATS_ONLY, Advice, Costs, Curve, Memory, ObjectState, PoolState, StatsPool
from poolsight.advice.online import advise_sources, stats_only, stats_pool

T, C = rules.Thresholds(), Costs()
END = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)

# Seed 000, "Buffer Pool Part1" and "Part2": one day-long report of BP1 cut in two halves. The
# interval is QUANTITY / (/SECOND) (DOMAIN.md): 447.0M getpages at 5,398.69/s, 7,549.6K pages
# written at 91.18/s: 82,800 s (23 hours) within the report's rounding.
DAY = 82_800.0
PART1_BUFFERS = 232_300  # BUFFERS ALLOCATED - VPOOL 232.3K
PART1_SYNC_RANDOM = 16_414_500  # SYNCHRON. READS-RANDOM 16414.5K
PART1_SYNC = 20_658_600  # SYNCHRONOUS READS 20658.6K (random + sequential)
PART1_PREFETCH_READS = 1_492_000 + 290_500 + 8_848_100  # sequential, list and dynamic prefetch reads
PART1_PREFETCH_PAGES = 46_269_700 + 5_613_400 + 133_900_000  # pages read via each
PART2_WRITTEN = 7_549_600  # PAGES WRITTEN 7549.6K
PART2_SYNC_WRITES, PART2_ASYNC_WRITES = 17_486, 2_356_300
PART2_DWQT, PART2_VDWQT, PART2_WENA = 25_819, 5_658, 47

# Seed 000, "Buffer Pool Data - statistics": BP1 over 2,999 s (7,270.9K getpages at 2,424.49/s).
BLOCK = 2_999.0
BLOCK_BUFFERS = 40_000  # BUFFERS ALLOCATED - VPOOL 40000.00
BLOCK_WRITTEN, BLOCK_SYNC_WRITES, BLOCK_ASYNC_WRITES = 1_662_700, 1_127, 147_100
BLOCK_VDWQT = 1_593  # VERTI.DEF.WRITE THRESHOLD; HORIZ.DEF.WRITE THRESHOLD 0
BLOCK_READ_IOS = 624_500 + 1 + 2 + 0 + 233_300  # sync random + sequential, seq, list, dyn prefetch reads
BLOCK_PAGES_READ = 624_500 + 1 + 61 + 0 + 5_696_000


def part2(**kw: Any) -> StatsPool:
    """BP1 as the day's two halves give it: no trace, no attributes (VPSIZE from BUFFERS ALLOCATED)."""
    base: dict[str, Any] = {
        "source": "DSNP",
        "pool": "BP1",
        "vpsize": PART1_BUFFERS,
        "vpsize_from": "statistics (BUFFERS ALLOCATED)",
        "seconds": DAY,
        "intervals": 2,
        "measured_sync_reads_per_s": PART1_SYNC_RANDOM / DAY,
        "pages_read_per_s": (PART1_SYNC + PART1_PREFETCH_PAGES) / DAY,
        "read_ios_per_s": (PART1_SYNC + PART1_PREFETCH_READS) / DAY,
        "pages_written_per_s": PART2_WRITTEN / DAY,
        "write_ios_per_s": (PART2_SYNC_WRITES + PART2_ASYNC_WRITES) / DAY,
        "dwqt_reached": PART2_DWQT,
        "vdwqt_reached": PART2_VDWQT,
        "write_engine_not_available": PART2_WENA,
        "window_end": END,
    }
    return StatsPool(**(base | kw))


def block(**kw: Any) -> StatsPool:
    base: dict[str, Any] = {
        "source": "DSNP",
        "pool": "BP1",
        "vpsize": BLOCK_BUFFERS,
        "vpsize_from": "statistics (BUFFERS ALLOCATED)",
        "seconds": BLOCK,
        "intervals": 1,
        "measured_sync_reads_per_s": 624_500 / BLOCK,
        "pages_read_per_s": BLOCK_PAGES_READ / BLOCK,
        "read_ios_per_s": BLOCK_READ_IOS / BLOCK,
        "pages_written_per_s": BLOCK_WRITTEN / BLOCK,
        "write_ios_per_s": (BLOCK_SYNC_WRITES + BLOCK_ASYNC_WRITES) / BLOCK,
        "dwqt_reached": 0,
        "vdwqt_reached": BLOCK_VDWQT,
        "write_engine_not_available": 0,
        "window_end": END,
    }
    return StatsPool(**(base | kw))


def objects(n: int, updated: int | None = None) -> list[ObjectState]:
    """n objects of a traced pool, the first `updated` of them updated (None: all)."""
    k = n if updated is None else updated
    return [
        ObjectState(f"DB.TS{i}", "TABLESPACE", 10.0, 0.0, 100.0, 200.0, 500, 1.0, 2.0 if i < k else 0.0)
        for i in range(n)
    ]


def traced(n_objects: int, updated: int | None = None, **kw: Any) -> PoolState:
    """Part2's write pattern in a pool with a trace and a curve (its objects known from object_pane)."""
    sp = part2()
    base: dict[str, Any] = {
        "source": sp.source,
        "pool": sp.pool,
        "vpsize": sp.vpsize,
        "curve": Curve((sp.vpsize // 2, sp.vpsize, sp.vpsize * 2), (300.0, 200.0, 150.0)),
        "seconds": 900.0,
        "pages_written_per_s": sp.pages_written_per_s,
        "write_ios_per_s": sp.write_ios_per_s,
        "dwqt_reached": PART2_DWQT,
        "vdwqt_reached": PART2_VDWQT,
        "write_engine_not_available": PART2_WENA,
        "objects": objects(n_objects, updated),
    }
    return PoolState(**(base | kw))


# ---------------------------------------------------------------- VDWQT from the write pattern and the objects


def test_seed_000_part2_without_a_trace_gets_the_seeds_default_and_says_the_objects_are_unknown() -> None:
    [a] = rules.write_thresholds(part2(), T)
    assert a.kind == "vdwqt" and a.command == ["-ALTER BUFFERPOOL(BP1) VDWQT(0,128)"]
    e = a.evidence
    ppw = PART2_WRITTEN / (PART2_SYNC_WRITES + PART2_ASYNC_WRITES)
    assert e["pages_per_write"] == pytest.approx(ppw, rel=1e-12)
    assert round(ppw, 2) == 3.18  # the report's PAGES WRITTEN PER WRITE I/O
    assert (e["dwqt_reached"], e["vdwqt_reached"], e["write_engine_not_available"]) == (25_819, 5_658, 47)
    assert e["advised_vdwqt_buffers"] == 128 and e["objects"] is None
    assert e["objects_from"] == "statistics only: no trace names the pool's objects"
    # DWQT not stated: Db2's default 30 % of 232,300 buffers, 69,690; 128 each keeps VDWQT first for 544 data sets.
    assert (e["dwqt_percent"], e["dwqt_assumed"], e["dwqt_buffers"], e["data_sets_under_dwqt"]) == (
        30.0,
        True,
        69_690,
        544,
    )
    assert e["rule"] == (
        "objects unknown (statistics only: no trace names the pool's objects): seed 000's VDWQT(0,128); it keeps "
        "VDWQT, not DWQT, the trigger while at most 544 data sets hold updated pages at once (DWQT's 69,690 "
        "buffers (30 % of 232,300, Db2 default))"
    )
    assert a.summary == (
        "BP1: lower VDWQT to 0 % with 128 buffers (objects unknown: seed 000's default): 3.2 pages per write "
        "(below 10); DWQT reached 25,819 times, VDWQT 5,658 (DWQT should be the rare one); write engine not "
        "available 47 times (writes come in bursts the engines cannot take)"
    )
    assert e["from"] == "pool_stats"
    assert a.confidence["basis"] == "statistics" and a.confidence["sim_error"] is None
    assert a.confidence["note"] == STATS_ONLY and "only" in STATS_ONLY and "not" in STATS_ONLY


def test_seed_000s_statistics_block_writes_as_the_seed_likes_and_gets_no_vdwqt_advice() -> None:
    # 11.22 pages per write, VDWQT reached 1,593 times and DWQT never, no write engine shortage.
    p = block()
    assert round(p.pages_written_per_s / p.write_ios_per_s, 2) == 11.22  # type: ignore[operator]
    assert rules.write_thresholds(p, T) == []
    assert rules.write_thresholds(block(), T) == rules.write_thresholds(block(dwqt=30.0), T) == []


@pytest.mark.parametrize(
    ("n", "updated", "vpsize", "dwqt", "buffers", "basis"),
    [
        # Part2's pool (232,300 buffers, DWQT 30 %: 69,690): fewer than 100 objects all fit at 128 ...
        (20, None, PART1_BUFFERS, 30.0, 128, "20 objects x 128 within DWQT's 69,690 buffers"),
        (99, None, PART1_BUFFERS, 30.0, 128, "99 objects x 128 within DWQT's 69,690 buffers"),
        # ... hundreds are the lowest whatever the pool (seed 000: "hundreds or thousands, lower is better").
        (100, None, PART1_BUFFERS, 30.0, 40, "100 objects: the lowest"),
        (600, None, PART1_BUFFERS, 30.0, 40, "600 objects: the lowest"),
        # Only the objects updated count when the trace shows updates: 600 in the pool, 30 written.
        (600, 30, PART1_BUFFERS, 30.0, 128, "30 objects x 128 within DWQT's 69,690 buffers"),
        # The statistics block's pool (40,000 buffers): DWQT 30 % is 12,000 buffers.
        (93, None, BLOCK_BUFFERS, 30.0, 128, "93 objects x 128 within DWQT's 12,000 buffers"),  # 11,904
        (95, None, BLOCK_BUFFERS, 30.0, 80, "95 objects x 80 within DWQT's 12,000 buffers"),  # 12,160 > 12,000
        (60, None, BLOCK_BUFFERS, 10.0, 40, "60 objects x 40 within DWQT's 4,000 buffers"),  # 60 x 80 = 4,800
        (99, None, BLOCK_BUFFERS, 5.0, 40, "99 objects x 40 above DWQT's 2,000 buffers"),  # none fits
    ],
)
def test_the_objects_written_and_dwqts_buffers_choose_40_80_or_128(
    n: int, updated: int | None, vpsize: int, dwqt: float, buffers: int, basis: str
) -> None:
    [a] = rules.write_thresholds(traced(n, updated, vpsize=vpsize, dwqt=dwqt), T)
    assert a.command == [f"-ALTER BUFFERPOOL(BP1) VDWQT(0,{buffers})"]
    e = a.evidence
    assert (e["advised_vdwqt_buffers"], e["objects"], e["dwqt_percent"], e["dwqt_assumed"]) == (
        buffers,
        updated or n,
        dwqt,
        False,
    )
    assert e["dwqt_buffers"] == int(dwqt * vpsize / 100) and e["data_sets_under_dwqt"] == e["dwqt_buffers"] // buffers
    assert f"({basis})" in a.summary
    assert e["from"] == "pool_stats; the objects from the trace"


def test_the_rule_in_words_names_its_inputs() -> None:
    fits = rules.vdwqt_buffers(95, "objects the trace shows updated in the window", 40_000, 30.0, T)
    assert fits.rule == (
        "95 objects x 80 buffers = 7,600, within DWQT's 12,000 buffers (30 % of 40,000): the largest of 128, 80, "
        "40 that keeps VDWQT, not DWQT, the trigger"
    )
    many = rules.vdwqt_buffers(600, "x", 232_300, None, T)
    assert many.rule == '600 objects, 100 or more (seed 000: "hundreds or thousands, lower is better"): the lowest, 40'
    over = rules.vdwqt_buffers(99, "x", 40_000, 5.0, T)
    assert over.buffers == 40 and over.data_sets_under_dwqt == 50
    assert over.rule.endswith("the lowest, 40; DWQT is still reached when all of them hold updated pages at once")


def test_objects_written_from_the_trace() -> None:
    assert rules.objects_written(traced(12, 5)) == (5, "objects the trace shows updated in the window")
    assert rules.objects_written(traced(12, 0)) == (
        12,
        "objects the trace shows in the pool (it shows no updates in the window: all counted)",
    )
    assert rules.objects_written(traced(0)) == (None, "the trace names no object of the pool")
    # Updates not reported at all (None) count as not shown.
    unknown = [ObjectState("DB.TS", "TABLESPACE", 1.0, 0.0, 1.0, 1.0, 1, 0.0)]
    assert rules.objects_written(traced(0, objects=unknown))[0] == 1


def test_the_write_pattern_decides_whether() -> None:
    # Pages per write alone (Part2's DWQT and engine counts gone) is a reason; so is each of the others alone.
    [a] = rules.write_thresholds(part2(dwqt_reached=0, vdwqt_reached=0, write_engine_not_available=0), T)
    assert a.summary.endswith(": 3.2 pages per write (below 10)")
    healthy = {"pages_written_per_s": 20.0 * 12, "write_ios_per_s": 20.0}  # 12 pages per write
    [b] = rules.write_thresholds(part2(**healthy, dwqt_reached=9, vdwqt_reached=2, write_engine_not_available=0), T)
    assert b.summary.endswith(": DWQT reached 9 times, VDWQT 2 (DWQT should be the rare one)")
    assert rules.write_thresholds(part2(**healthy, dwqt_reached=0, write_engine_not_available=0), T) == []
    # VDWQT already in buffers (0 %) and enough pages per write: DWQT counts alone do not lower it blindly.
    assert rules.write_thresholds(part2(**healthy, vdwqt=0.0), T) == []
    # A VDWQT % that is already fewer buffers per data set than the rule's is not raised: 5 % of 2,000 = 100.
    assert rules.write_thresholds(part2(vpsize=2_000, vdwqt=5.0), T) == []
    [c] = rules.write_thresholds(part2(vdwqt=5.0), T)  # 5 % (Db2's default) = 11,615 buffers per data set
    assert c.command == ["-ALTER BUFFERPOOL(BP1) VDWQT(0,128)"]
    # Too few writes to judge, and LUW (no VDWQT).
    assert rules.write_thresholds(part2(write_ios_per_s=0.5), T) == []
    assert rules.write_thresholds(part2(platform="luw"), T) == []


# ---------------------------------------------------------------- pools with statistics and no curve


def test_page_fix_from_statistics_alone_says_so() -> None:
    # Seed 000: "Two pools with 500+ IO/Sec - One has 50,000 buffers": 450 reads and 60 writes a second.
    busy = part2(vpsize=50_000, read_ios_per_s=450.0, write_ios_per_s=60.0, pages_written_per_s=900.0)
    fix, frames = rules.page_fix(busy, T, Memory(4, 0.0, 4_000.0, 16_000.0), None)
    assert fix.command == ["-ALTER BUFFERPOOL(BP1) PGFIX(YES)"]
    assert fix.predicted["cpu_seconds_per_24h"] == pytest.approx(510.0 * 30e-6 * 0.08 * 86_400)
    assert frames.command == ["-ALTER BUFFERPOOL(BP1) PGFIX(YES) FRAMESIZE(1M)"]
    assert fix.confidence["note"] == STATS_ONLY + "; the CPU share varies by workload (seed 000)"
    assert frames.confidence["note"] == STATS_ONLY + "; a rule of the platform"
    assert fix.confidence["vpsize_from"] == "statistics (BUFFERS ALLOCATED)"
    # Seed 000's own pools are below 500 I/Os a second: Part1 + Part2 407, the statistics block 335.
    assert [a.kind for a in stats_advice(part2(), None, T)] == ["vdwqt"]
    assert stats_advice(block(), None, T) == []
    # A paging system: no page fixing (and the VDWQT advice still stands).
    paging = Memory(4, 12.0, 4_000.0, 16_000.0)
    assert [a.kind for a in stats_advice(busy, paging, T)] == ["vdwqt"]


def _row(pool: str, **kw: Any) -> tuple[Any, ...]:
    """An `advice_stats_pools` row as Trino returns it, Part1 + Part2 summed as the query sums them."""
    r: dict[str, Any] = {
        "source": "DSNP",
        "pool": pool,
        "end": END,
        "intervals": 2,
        "read_seconds": DAY,  # only Part1 states reads
        "sync_random": PART1_SYNC_RANDOM,
        "pages_read": PART1_SYNC + PART1_PREFETCH_PAGES,
        "read_ios": PART1_SYNC + PART1_PREFETCH_READS,
        "write_seconds": DAY,  # only Part2 states writes
        "written": PART2_WRITTEN,
        "write_ios": PART2_SYNC_WRITES + PART2_ASYNC_WRITES,
        "dwqt_hits": PART2_DWQT,
        "vdwqt_hits": PART2_VDWQT,
        "wena": PART2_WENA,
        "vpsize": PART1_BUFFERS,
        "from_attributes": False,
        "page_size": None,
        "dwqt": None,
        "vdwqt": None,
        "pgsteal": None,
        "pgfix": None,
        "frame_size": None,
        "origin": "omegamon",
        "start": datetime(2025, 12, 31, 9, 0, tzinfo=UTC),
    }
    return tuple((r | kw).values())


def test_the_querys_rows_become_pools_known_from_statistics_and_pools_with_a_curve_are_skipped() -> None:
    rows = [_row("BP2"), _row("BP1"), _row("BP3", vpsize=None), _row("BP4", read_seconds=None, write_seconds=None)]
    [p] = stats_only(rows, {"DSNP/BP2"})
    assert p == part2(
        vpsize_from="statistics (BUFFERS ALLOCATED)", window_start=datetime(2025, 12, 31, 9, 0, tzinfo=UTC)
    )
    assert (p.page_size, p.platform, p.pgsteal, p.pgfix) == (4096, "zos", "LRU", False)
    # A half alone: only writes stated, the read rates unknown (not zero).
    writes = stats_pool(_row("BP1", read_seconds=None, intervals=1, vpsize=5_000, from_attributes=True))
    assert writes is not None and writes.vpsize_from == "pool attributes"
    assert (writes.read_ios_per_s, writes.pages_read_per_s, writes.write_ios_per_s) == (
        None,
        None,
        (PART2_SYNC_WRITES + PART2_ASYNC_WRITES) / DAY,
    )
    reads = stats_pool(_row("BP1", write_seconds=None))
    assert reads is not None and (reads.pages_written_per_s, reads.dwqt_reached) == (None, None)
    assert rules.write_thresholds(reads, T) == []
    assert stats_pool(_row("BP1", origin="luw-bufferpool")).platform == "luw"  # type: ignore[union-attr]


def _kinds(advice: list[Advice]) -> list[tuple[str, str]]:
    return sorted((a.pool, a.kind) for a in advice)


def test_a_pool_known_from_statistics_alone_gets_no_budget_shrink_vpseqt_fifo_or_placement() -> None:
    # BP2 has a curve that a budget grows; BP1 (seed 000's day) only statistics.
    bp2 = PoolState(
        source="DSNP",
        pool="BP2",
        vpsize=20_000,
        curve=Curve((10_000, 20_000, 40_000), (300.0, 200.0, 50.0)),
        seconds=900.0,
        measured_sync_reads_per_s=200.0,
    )
    placement = Advice("placement", "DSNP", "BP1", ["DB.TS"], {}, {"avoided_sync_reads_per_s": 9.0}, {}, [], "x")
    out = advise_sources(
        [bp2],
        [part2()],
        {},
        Budget(frames=20_000, redistribute=True),
        T,
        C,
        placements={"DSNP/BP1": [placement]},  # for a pool the curve rules never saw: not used
    )
    doc, advice = out["DSNP"]
    assert _kinds(advice) == [("BP1", "vdwqt"), ("BP2", "budget")]
    assert set(doc["allocation"]) == {"BP2"} and "BP1" not in doc["pools"]
    assert doc["statistics_only"]["pools"] == ["BP1"]
    [v] = [a for a in advice if a.pool == "BP1"]
    assert v.confidence["note"] == STATS_ONLY
    # A source with statistics alone: the budget has no curve to spend memory on.
    out = advise_sources([], [part2(pool="BP3")], {}, Budget(frames=20_000), T, C)
    doc, advice = out["DSNP"]
    assert _kinds(advice) == [("BP3", "vdwqt")]
    assert doc["allocation"] == {} and doc["statistics_only"]["pools"] == ["BP3"]
    # A source whose statistics give nothing to advise still gets its (empty) evaluation.
    assert advise_sources([], [block()], {}, Budget(), T, C)["DSNP"][1] == []


def test_the_source_memory_guards_page_fixing_of_a_statistics_only_pool() -> None:
    busy = part2(vpsize=50_000, read_ios_per_s=450.0, write_ios_per_s=60.0, pages_written_per_s=900.0)
    free = advise_sources([], [busy], {"DSNP": Memory(4, 0.0, 4_000.0, 16_000.0)}, Budget(), T, C)
    assert _kinds(free["DSNP"][1]) == [("BP1", "framesize"), ("BP1", "pgfix"), ("BP1", "vdwqt")]
    short = advise_sources([], [busy], {"DSNP": Memory(4, 0.0, 100.0, 16_000.0)}, Budget(), T, C)
    # 100 MB free: below the pool's 195 MB (50,000 4K buffers) and the 5 % reserve of real storage.
    assert _kinds(short["DSNP"][1]) == [("BP1", "vdwqt")]
