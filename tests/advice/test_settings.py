"""The settings rules, each from the numbers behind it."""

from __future__ import annotations

from pathlib import Path

import pytest

from poolsight.advice import settings as rules
from poolsight.advice.advisor import Budget, budget_advice
from poolsight.advice.inputs import read
from poolsight.advice.model import Costs, Curve, Memory, PoolState

T, C = rules.Thresholds(), Costs()


def pool(**kw: object) -> PoolState:
    base: dict[str, object] = {
        "source": "DB2P",
        "pool": "BP1",
        "vpsize": 20000,
        "curve": Curve((10000, 20000, 40000), (300.0, 200.0, 100.0)),
        "seconds": 600.0,
        "measured_sync_reads_per_s": 204.0,
        "sync_io_seconds": 0.002,
    }
    base.update(kw)
    return PoolState(**base)  # type: ignore[arg-type]


def test_low_pages_per_write_lowers_vdwqt() -> None:
    [a] = rules.write_thresholds(pool(pages_written_per_s=40.0, write_ios_per_s=8.0, vdwqt=5), T)
    assert a.command == ["-ALTER BUFFERPOOL(BP1) VDWQT(0,128)"]
    assert a.evidence["pages_per_write"] == 5.0
    assert rules.write_thresholds(pool(pages_written_per_s=400.0, write_ios_per_s=8.0, vdwqt=5), T) == []
    # DWQT reached more often than VDWQT is a reason of its own.
    [b] = rules.write_thresholds(
        pool(pages_written_per_s=400.0, write_ios_per_s=8.0, dwqt_reached=9, vdwqt_reached=2, vdwqt=5), T
    )
    assert "DWQT reached 9 times" in b.summary
    [c] = rules.write_thresholds(
        pool(pages_written_per_s=400.0, write_ios_per_s=8.0, write_engine_not_available=3, vdwqt=5), T
    )
    assert "write engine not available 3 times" in c.summary and c.evidence["write_engine_not_available"] == 3
    # LUW has no VDWQT.
    assert rules.write_thresholds(pool(pages_written_per_s=40.0, write_ios_per_s=8.0, platform="luw"), T) == []


def test_vpseqt_only_when_the_simulation_saves_enough() -> None:
    [a] = rules.vpseqt(pool(vpseqt=80.0, vpseqt_alternatives={20.0: 150.0, 50.0: 170.0, 100.0: 230.0}), T, C)
    assert a.command == ["-ALTER BUFFERPOOL(BP1) VPSEQT(20)"]
    assert a.predicted["avoided_sync_reads_per_s"] == pytest.approx(50.0)
    assert a.predicted["elapsed_seconds_per_24h"] == pytest.approx(50.0 * 0.002 * 86400)
    assert rules.vpseqt(pool(vpseqt=80.0, vpseqt_alternatives={20.0: 199.0, 100.0: 230.0}), T, C) == []


def test_page_fix_needs_io_and_free_memory_and_frames_follow() -> None:
    busy = pool(read_ios_per_s=450.0, write_ios_per_s=100.0, pages_read_per_s=900.0, pages_written_per_s=100.0)
    fix, frames = rules.page_fix(busy, T, Memory(10, 0.0, 4000.0, 16000.0), None)
    assert (fix.kind, frames.kind) == ("pgfix", "framesize")
    assert fix.predicted["cpu_seconds_per_24h"] == pytest.approx(550.0 * 30e-6 * 0.08 * 86400)
    assert fix.evidence["io_intensity_per_s"] == pytest.approx(1000.0 / 20000)
    # 20,000 4K buffers are 78 MB: 50 MB free is not enough.
    assert rules.page_fix(busy, T, Memory(10, 0.0, 50.0, 16000.0), None) == []
    assert rules.page_fix(busy, T, None, "the system pages") == []
    # Many pages in few I/Os (prefetch): seed 000 counts I/Os.
    assert rules.page_fix(pool(read_ios_per_s=20.0, pages_read_per_s=640.0), T, None, None) == []
    small = pool(vpsize=5000, pgfix=True)
    assert rules.page_fix(small, T, None, None) == []  # fixed, but below 6,656 buffers
    assert rules.page_fix(pool(pgfix=True, frame_size=1 << 20), T, None, None) == []  # already 1 MB frames
    [frames] = rules.page_fix(pool(pgfix=True, frame_size=4096), T, None, None)
    assert frames.command == ["-ALTER BUFFERPOOL(BP1) PGFIX(YES) FRAMESIZE(1M)"]


def test_paging_guard() -> None:
    assert rules.paging_guard(None, T) is None
    assert rules.paging_guard(Memory(4, 0.5, 4000.0, 16000.0), T) is None
    assert "12.0 page-ins/s" in (rules.paging_guard(Memory(4, 12.0, 4000.0, 16000.0), T) or "")
    assert "available" in (rules.paging_guard(Memory(4, 0.0, 400.0, 16000.0), T) or "")


def test_budget_is_capped_by_free_memory_and_stopped_by_paging() -> None:
    p = pool()
    free = Memory(3, 0.0, 16000 * 0.05 + 40.0, 16000.0)  # 40 MB above the reserve: 10,240 frames
    doc, advice = budget_advice([p], free, Budget(frames=50_000), T, C)
    assert doc["frames_used"] <= 10_240 and "capped_by_memory" in doc
    assert [a.kind for a in advice] == ["budget"]
    doc, advice = budget_advice([p], Memory(3, 30.0, 9000.0, 16000.0), Budget(frames=50_000), T, C)
    assert doc["allocation"] == {} and advice == [] and "paging_guard" in doc


def test_bad_memory_records_are_named_and_the_rest_used(tmp_path: Path) -> None:
    (tmp_path / "system_memory.csv").write_text(
        "source,interval_start,interval_end,real_storage_mb,real_storage_available_mb,pageins_per_second\n"
        "DB2P,2026-01-01T00:00:00+00:00,2026-01-01T00:01:00+00:00,16000,4000,0.1\n"
        "DB2P,yesterday,2026-01-01T00:02:00+00:00,16000,4000,0.1\n"
        "DB2P,1767225720,1767225780,16000,lots,0.1\n"
        "DB2P,1767225780,1767225840,16000,3000,-2\n"
        "DB2P,1767225840,1767225900,16000,3500,3.5\n"
    )
    (tmp_path / "attributes.jsonl").write_text('{"source": "DB2P", "pool": "BP1"}\nnot json\n')
    inputs = read(tmp_path)
    assert inputs.rejected == 5
    errs = "\n".join(inputs.errors)
    assert f"{tmp_path}/system_memory.csv:3: field interval_start: 'yesterday' is not a time" in errs
    assert "system_memory.csv:4: field real_storage_available_mb: 'lots' is not a number" in errs
    assert "system_memory.csv:5: field pageins_per_second: '-2' is negative" in errs
    assert "attributes.jsonl:1: field vpsize: None" in errs
    assert "attributes.jsonl:2: not JSON" in errs
    m = inputs.memory_of("DB2P")
    assert m == Memory(2, 3.5, 3500.0, 16000.0)
