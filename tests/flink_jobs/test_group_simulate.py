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
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.tables import BY_NAME
from poolsight.simulator.group import COUNTERS

from .test_group_tracker import T0, _attrs, _batches, _direct, _interleaved, _same_rows, _silent_after, _trace
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
    got = _curve(whole)
    assert len({r["pane"] for r in got}) == 5  # 290 s of trace: every pane, the last by the idle flush
    _same_rows(got, _direct(tr, MEMBERS))
    sides = [r for r in whole if isinstance(r, tuple)]
    assert {tag.tag_id for tag, _ in sides} == {"group_gbp_member", "group_lbp_curve"}
    # A failover before the members' attributes, mid-stream at a few places, and just before the end.
    assert _run(monkeypatch, table, {1, 7, 23, 24, 40, len(table) - 1}) == whole


def _drive(
    monkeypatch: pytest.MonkeyPatch, table: dict[bytes, tuple[str, Any]], step: Any, watermark: bool = False
) -> tuple[list[Any], list[Any]]:
    """One operator given the records in order, the clock moved by `step(raw)` seconds after
    each; with `watermark`, an event-time timer years ahead fires after each record (what another
    source's watermark did to the group). Then every processing-time timer asked for, in time
    order, as Flink fires them. The rows yielded before the first of those timers, and all."""
    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    o = SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=10.0, groups={"DSG1": list(MEMBERS)})
    rt, ctx, out = Runtime(), Ctx(KEY), list[Any]()
    f = GroupSimulate(o)
    f.open(rt)
    monkeypatch.setattr(f.decoder, "read", lambda raw: table[raw])
    fired: set[int] = set()

    def due_timers(until: float) -> None:
        nonlocal out
        for t in sorted(set(ctx.timers) - fired):
            if t <= until * 1000:
                fired.add(t)
                ctx.domain = TimeDomain.PROCESSING_TIME
                out += f.on_timer(t, ctx)

    for raw in table:
        out += f.process_element((KEY, raw), ctx)
        if watermark:
            ctx.domain = TimeDomain.EVENT_TIME
            out += f.on_timer(4_000_000_000_000, ctx)
        clock[0] += step(raw)
        due_timers(clock[0])
    streamed = list(out)
    for _ in range(20):  # quiet: the timers asked for fire as the clock reaches them
        clock[0] += 1
        due_timers(clock[0])
    return streamed, out


def test_another_sources_watermark_closes_no_group_pane(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's watermark is one for every source: a live source's later event time passed a
    replayed group's panes while its members still sent. An event-time timer far ahead after
    every record changes no row (before, it fed whatever was buffered and the lagging member's
    getpages came late)."""
    tr, table = _records(seed=11)
    _, rows = _drive(monkeypatch, table, lambda raw: 0.01, watermark=True)
    got = _curve(rows)
    assert len({r["pane"] for r in got}) == 5
    _same_rows(got, _direct(tr, MEMBERS))


def test_a_member_silent_while_the_other_sends_is_passed_after_the_idle_flush(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DB2B stops sending at T0 + 100 s while DB2A streams on, a second a batch: once DB2B has
    been silent for the idle flush the group goes on without it, pane by pane while DB2A still
    sends (not only when everything is quiet), the rows the one-time-order simulation of what was
    sent."""
    tr = _silent_after(_trace(MEMBERS, n=20_000, seed=11), 1, T0 + 100)
    recs: list[tuple[str, Any]] = [(ATTRIBUTES, _attrs(m)) for m in MEMBERS]
    recs += [(GETPAGE, b) for b in _interleaved(_batches(tr, MEMBERS, size=500), 11)]
    table = {f"r{i}".encode(): r for i, r in enumerate(recs)}
    last_b = max(i for i, (_, r) in enumerate(recs) if isinstance(r, GetpageBatch) and r.source == "DB2B")
    after_b = {f"r{i}".encode() for i in range(last_b + 1, len(recs))}
    assert len(after_b) >= 14  # DB2A sends for longer than the idle flush after DB2B's last batch
    # Both members stream (0.01 s a record), then DB2A alone, a second a batch.
    streamed, rows = _drive(monkeypatch, table, lambda raw: 1.0 if raw in after_b else 0.01)
    assert len({r["pane"] for r in _curve(streamed)}) == 4  # while DB2A sent: all but its open pane
    _same_rows(_curve(rows), _direct(tr, MEMBERS))
