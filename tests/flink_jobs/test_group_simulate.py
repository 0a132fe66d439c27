"""The group operator, GroupSimulate, driven without Flink (its state and timer service
stand-ins, each record given decoded): its gbp_curve rows are the one-time-order simulation of
the whole trace, written at each pane by the members' progress and at the last by the idle
flush, and a failover anywhere (a new operator on the state the old one left: its snapshot and
the records since) changes no row."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pyflink.datastream import TimeDomain

from poolsight.flink_jobs.group_simulate import ATTRIBUTES, GETPAGE, GroupSimulate
from poolsight.flink_jobs.options import SimulationOptions
from poolsight.infra.registry_access import RegistryAccess
from poolsight.schemas.tables import BY_NAME
from poolsight.simulator.group import COUNTERS

from .test_group_tracker import _attrs, _batches, _direct, _interleaved, _trace
from .test_quiet_pools import Ctx, Runtime

MEMBERS = ("DB2A", "DB2B")
KEY = "DSG1|BP1"


def _records(seed: int) -> tuple[dict[str, Any], dict[bytes, tuple[str, Any]]]:
    """The trace and its records as Simulate hands them on (raw bytes -> decoded): each member's
    attributes, then the members' batches interleaved as their partitions are read."""
    tr = _trace(MEMBERS, n=20_000, seed=seed)
    recs: list[tuple[str, Any]] = [(ATTRIBUTES, _attrs(m)) for m in MEMBERS]
    recs += [(GETPAGE, b) for b in _interleaved(_batches(tr, MEMBERS, size=500), seed)]
    return tr, {f"r{i}".encode(): r for i, r in enumerate(recs)}


def _run(monkeypatch: pytest.MonkeyPatch, table: dict[bytes, tuple[str, Any]], failovers: set[int]) -> list[Any]:
    """Every row the operator yields for the records in order, a new operator taking over the
    state before each record numbered in `failovers`, then the idle flush once quiet."""
    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    o = SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=10.0, groups={"DSG1": list(MEMBERS)})
    rt, ctx, out = Runtime(), Ctx(KEY), list[Any]()

    def operator() -> GroupSimulate:
        f = GroupSimulate(o)
        f.open(rt)
        monkeypatch.setattr(f.decoder, "read", lambda raw: table[raw])
        return f

    f = operator()
    for i, raw in enumerate(table):
        if i in failovers:
            f = operator()
        out += f.process_element((KEY, raw), ctx)
        clock[0] += 0.01
    clock[0] += 11  # quiet for longer than the idle flush
    ctx.domain = TimeDomain.PROCESSING_TIME
    out += f.on_timer(int(clock[0] * 1000), ctx)
    return out


def _curve(rows: list[Any]) -> list[dict[str, float]]:
    names = [c.name for c in BY_NAME["gbp_curve"].columns]
    out = []
    for r in rows:
        if isinstance(r, tuple):  # gbp_member and lbp_curve rows: (tag, row)
            continue
        v = dict(zip(names, r, strict=True))
        out.append(
            {"pane": int(v["pane_start"] // 60_000), "data_entries": v["data_entries"], "ratio": v["ratio"]}
            | {c: v[c] for c in COUNTERS}
        )
    return out


def test_the_operators_rows_are_the_one_time_order_simulation_through_failovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tr, table = _records(seed=11)
    whole = _run(monkeypatch, table, set())
    got, want = _curve(whole), _direct(tr, MEMBERS)
    assert len({r["pane"] for r in got}) == 5  # 290 s of trace: every pane, the last by the idle flush
    assert [(r["pane"], r["data_entries"], r["ratio"]) for r in got] == [
        (r["pane"], r["data_entries"], r["ratio"]) for r in want
    ]
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w), (g["pane"], g["data_entries"], g["ratio"])
    sides = [r for r in whole if isinstance(r, tuple)]
    assert {tag.tag_id for tag, _ in sides} == {"group_gbp_member", "group_lbp_curve"}
    # A failover before the members' attributes, mid-stream at a few places, and just before the end.
    assert _run(monkeypatch, table, {1, 7, 23, 24, 40, len(table) - 1}) == whole
