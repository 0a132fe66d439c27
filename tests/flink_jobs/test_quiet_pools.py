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
    f = Simulate(SimulationOptions("http://127.0.0.1:1", idle_flush_seconds=10.0, state_ttl_seconds=3600.0))
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
    f.last_seen[key] = clock[0]
    clock[0] += 11  # quiet longer than the idle flush: its pane is written, it leaves memory
    rows = list(f.on_timer(int(clock[0] * 1000), ctx))
    assert rows and key not in f.trackers and rt.states["tracker"].value() is not None
    assert ctx.timers == [(1_000_000 + 3600) * 1000]  # the TTL, from when it was last seen
    clock[0] = 1_000_000.0 + 1800  # a timer before the TTL: restored for it, out of memory again
    assert list(f.on_timer(int(clock[0] * 1000), ctx)) == [] and key not in f.trackers
    assert rt.states["tracker"].value() is not None
    clock[0] = 1_000_000.0 + 3600
    assert list(f.on_timer(int(clock[0] * 1000), ctx)) == []
    assert rt.states["tracker"].value() is None and rt.states["since_snapshot"].value() == []
    assert key not in f.trackers and key not in f.last_seen
