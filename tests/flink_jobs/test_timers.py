"""A worker asks Flink for each timer once until a timer of its key fires (timers.py
`Registered`): the timers Flink holds are those it held when every record asked for them."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pyflink.datastream import TimeDomain

from poolsight.flink_jobs import timers
from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import GETPAGE, Simulate
from poolsight.flink_jobs.timers import Registered
from poolsight.infra.registry_access import RegistryAccess

from .test_quiet_pools import Runtime
from .test_tracker import _batches, _trace


class Asked:
    """A timer service that notes every timer asked for, in order, with its domain."""

    def __init__(self, key: str = "S|BP1") -> None:
        self.key, self.asked, self.domain = key, list[tuple[str, int]](), TimeDomain.PROCESSING_TIME
        self.by_key = list[tuple[str, str, int]]()  # the same, with the key current when asked

    def get_current_key(self) -> str:
        return self.key

    def timer_service(self) -> Asked:
        return self

    def register_processing_time_timer(self, t: int) -> None:
        self.asked.append(("processing", t))
        self.by_key.append((self.key, "processing", t))

    def register_event_time_timer(self, t: int) -> None:
        self.asked.append(("event", t))
        self.by_key.append((self.key, "event", t))

    def time_domain(self) -> Any:
        return self.domain


def test_a_timer_is_asked_for_once_until_one_of_its_key_fires() -> None:
    r, ctx = Registered(), Asked()
    r.wake_at(ctx, "A", 1_000.2)
    r.wake_at(ctx, "A", 1_000.9)  # the same whole second, the same backstop
    r.wake_at(ctx, "B", 1_000.2)  # another key's
    plain = Asked()
    timers.wake_at(plain, 1_000.2)
    assert ctx.asked == [*plain.asked, *plain.asked]
    r.fired("A")
    r.wake_at(ctx, "A", 1_000.2)  # asked again after a timer of the key fired
    r.wake_at(ctx, "B", 1_000.2)  # not: B's did not fire
    assert ctx.asked[2 * len(plain.asked) :] == plain.asked


def test_a_key_asking_for_many_times_forgets_them_and_asks_again() -> None:
    r, ctx = Registered(), Asked()
    for s in range(2 * Registered.LIMIT):  # a timer a second, with their backstops
        r.wake_at(ctx, "A", 1_000 + s)
        assert len(r.keys["A"]) <= Registered.LIMIT
    n = len(ctx.asked)
    r.wake_at(ctx, "A", 1_000)  # forgotten when the limit was reached: asked again
    assert ("processing", 1_000_000) in ctx.asked[n:]


def _asked(monkeypatch: pytest.MonkeyPatch, every_time: bool) -> list[tuple[str, str, int]]:
    """The timers Simulate asks for over two pools' batches (each batch to both: the same times
    for two keys), the clock moving 50 ms a batch, with a timer of each key firing (the idle
    flush, not yet quiet) every tenth batch."""
    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]
    table = {raw: (GETPAGE, b) for raw, b in batches}
    f = Simulate(SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=10.0))
    f.open(Runtime())
    monkeypatch.setattr(f, "_read", lambda raw: table[raw])
    if every_time:
        monkeypatch.setattr(f.asked, "_new", lambda key, timer: True)
    ctx = Asked()
    for i, (raw, _) in enumerate(batches):
        for key in ("S|BP1", "S|BP2"):
            ctx.key = key
            list(f.process_element((key, raw, "topic", 0, i), ctx))
        clock[0] += 0.05
        if i % 10 == 9:
            for key in ("S|BP1", "S|BP2"):
                ctx.key = key
                list(f.on_timer(int(clock[0] * 1000), ctx))
    return ctx.by_key


def test_the_timers_flink_holds_are_those_asked_for_by_every_record(monkeypatch: pytest.MonkeyPatch) -> None:
    every = _asked(monkeypatch, every_time=True)
    once = _asked(monkeypatch, every_time=False)
    # Flink keeps one timer per (key, time): the same timers, for each key (the two keys ask
    # for the same times: a worker that kept them by time alone would lose the second key's).
    assert set(once) == set(every)
    assert {k for k, _, _ in every} == {"S|BP1", "S|BP2"}
    assert len(every) >= 2 * 2 * 60  # two a record at least (the idle flush, its backstop), for each key
    assert len(once) < len(every) // 4
    assert {kind for _, kind, _ in every} == {"processing"}  # panes close on the pool's own time
