"""A quiet pool leaves the Python worker's memory, and its keyed state goes after the state TTL
(Simulate's timers, driven here without Flink: its state and timer service stand-ins)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pyflink.datastream import TimeDomain

from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import Simulate
from poolsight.flink_jobs.tracker import PoolTracker
from poolsight.infra.registry_access import RegistryAccess
from poolsight.schemas.getpage import Function
from poolsight.schemas.tables import BY_NAME

from .test_tracker import _batches, _trace


class Value:
    def __init__(self) -> None:
        self.v: Any = None

    def value(self) -> Any:
        return self.v

    def update(self, v: Any) -> None:
        self.v = v

    def clear(self) -> None:
        self.v = None


class Listed(Value):
    def __init__(self) -> None:
        self.v: list[Any] = []

    def get(self) -> list[Any]:
        return list(self.v)

    def add(self, v: Any) -> None:
        self.v.append(v)

    def clear(self) -> None:
        self.v = []


class Runtime:
    def __init__(self) -> None:
        self.states: dict[str, Value] = {}

    def get_state(self, d: Any) -> Value:
        return self.states.setdefault(d.name, Value())

    def get_list_state(self, d: Any) -> Listed:
        return self.states.setdefault(d.name, Listed())  # type: ignore[return-value]


class Ctx:
    def __init__(self, key: str) -> None:
        self.key, self.timers, self.domain = key, list[int](), TimeDomain.PROCESSING_TIME

    def get_current_key(self) -> str:
        return self.key

    def timer_service(self) -> Ctx:
        return self

    def register_processing_time_timer(self, t: int) -> None:
        self.timers.append(t)

    def register_event_time_timer(self, t: int) -> None:
        pass

    def time_domain(self) -> Any:
        return self.domain


def test_a_quiet_pool_leaves_memory_and_its_state_goes_after_the_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])  # the module's clock (simulation_job imports time)
    f = Simulate(
        SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=10.0, state_ttl_seconds=3600.0)
    )
    rt = Runtime()
    f.open(rt)
    # The pool's state as the job left it: a snapshot with an open pane.
    tr = PoolTracker("S", "BP1")
    tr.set_size(500)
    for b in _batches(_trace(3000))[:2]:
        tr.feed(b, lambda e, i: None)
    assert tr.open_pane is not None
    rt.states["tracker"].update(tr.snapshot())
    key, ctx = "S|BP1", Ctx("S|BP1")
    f._tracker(key)  # in memory, as the job had it, last seen now
    clock[0] += 11  # quiet longer than the idle flush: its pane is written, it leaves memory
    rows = list(f.on_timer(int(clock[0] * 1000), ctx))
    assert rows and key not in f.trackers and rt.states["tracker"].value() is not None
    assert ctx.timers == [(1_000_000 + 3600) * 1000]  # the TTL, from when it was last seen

    # From here no timer restores it: it had nothing open when it left (a backstop, the TTL).
    def no_restore(data: bytes) -> PoolTracker:
        raise AssertionError("restored for a timer with nothing to do")

    monkeypatch.setattr(PoolTracker, "restore", staticmethod(no_restore))
    clock[0] = 1_000_000.0 + 1800  # a timer before the TTL: nothing happens, the TTL stays
    assert list(f.on_timer(int(clock[0] * 1000), ctx)) == [] and key not in f.trackers
    assert rt.states["tracker"].value() is not None and ctx.timers[-1] == (1_000_000 + 3600) * 1000
    clock[0] = 1_000_000.0 + 3600
    assert list(f.on_timer(int(clock[0] * 1000), ctx)) == []
    assert rt.states["tracker"].value() is None and rt.states["since_snapshot"].value() == []
    assert key not in f.trackers and key not in f.last_seen
    clock[0] += 90  # a backstop after the state went: no empty tracker made for it
    assert list(f.on_timer(int(clock[0] * 1000), ctx)) == []
    assert key not in f.trackers and key not in f.last_seen


def test_a_restored_job_closes_the_pane_from_the_backstop_when_the_idle_timer_was_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A timer that fires while a stop-with-savepoint is taken can lose the one it registers (chaos:
    old-trace-resubmit); the backstop registered with it is in the savepoint and closes the pane."""
    clock = [1_000_000.5]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    o = SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=5.0, state_ttl_seconds=3600.0)
    before, rt = Simulate(o), Runtime()
    before.open(rt)
    tr = PoolTracker("S", "BP1")
    tr.set_size(500)
    trace = _trace(3000)
    for b in _batches(trace)[:2]:
        tr.feed(b, lambda e, i: None)  # the panes before the last are closed by later getpages
    first = slice(0, 2000)
    in_open = (trace["t"][first] // 60 == tr.open_pane) & (trace["fun"][first] == Function.GETPAGE)
    rt.states["tracker"].update(tr.snapshot())
    key, ctx = "S|BP1", Ctx("S|BP1")
    before.last_seen[key] = clock[0]
    before._idle_timer(key, ctx)
    # The idle timer (whole seconds) and its backstop (a whole minute, 1-2 minutes on).
    assert ctx.timers == [1_000_006_000, 1_000_080_000]
    # The savepoint kept the state and the backstop only; the job is restored from it.
    after, ctx = Simulate(o), Ctx(key)
    after.open(rt)
    clock[0] = 1_000_080.0
    assert list(after.on_timer(1_000_080_000, ctx)) == []  # just restored: not quiet yet
    assert ctx.timers == [1_000_085_000, 1_000_200_000]
    clock[0] = 1_000_085.0
    rows = list(after.on_timer(1_000_085_000, ctx))
    panes = [r for r in rows if not isinstance(r, tuple)]  # pool_pane rows are the main output
    getpages = [c.name for c in BY_NAME["pool_pane"].columns].index("getpages")
    assert len(panes) == 1 and panes[0][getpages] == int(in_open.sum()) == 277
