"""A pool's attributes record read after the first getpages of its time (the job reads both
topics together, and a getpage partition's fetch can come first): Simulate starts the pool
again from the record, so its panes are those of the order the producer sent (driven here
without Flink, with test_quiet_pools' state stand-ins and the decoder replaced by a table)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import ATTRIBUTES, GETPAGE, TAGS, Simulate
from poolsight.flink_jobs.tracker import PoolTracker
from poolsight.infra.registry_access import RegistryAccess
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.tables import BY_NAME

from .test_quiet_pools import Ctx, Runtime
from .test_tracker import _batches, _trace

KEY = "S|BP1"


def _attributes(event_us: int) -> dict[str, Any]:
    return {"source": "S", "pool": "BP1", "vpsize": 400, "vpseqt": 50.0, "pgsteal": "LRU", "event_time": event_us}


SYNC_READS = [c.name for c in BY_NAME["pool_pane"].columns].index("sim_sync_reads")


def _run(
    order: list[tuple[bytes, Any]], monkeypatch: pytest.MonkeyPatch, fail_after: int | None = None
) -> tuple[list[Any], Simulate]:
    """The records through Simulate.process_element in `order`; its pool_pane rows. With
    `fail_after`, the worker is lost after that many records and a new one goes on from the
    keyed state (no checkpoint is taken in between: Kafka's offsets stay with the state)."""
    rows, f, _ = _outputs(order, monkeypatch, fail_after)
    return rows, f


def _outputs(
    order: list[tuple[bytes, Any]], monkeypatch: pytest.MonkeyPatch, fail_after: int | None = None
) -> tuple[list[Any], Simulate, list[Any]]:
    """_run's, and the dead_letter rows beside them."""
    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)  # emitted_at, last_seen
    table = {raw: (GETPAGE if isinstance(item, GetpageBatch) else ATTRIBUTES, item) for raw, item in order}
    rt, ctx = Runtime(), Ctx(KEY)
    rows: list[Any] = []
    dead: list[Any] = []
    f = None
    for i, (raw, _) in enumerate(order):
        if f is None or i == fail_after:
            f = Simulate(SimulationOptions(RegistryAccess("http://127.0.0.1:1")))
            f.open(rt)
            monkeypatch.setattr(f, "_read", lambda raw: table[raw])
        for r in f.process_element((KEY, raw, "topic", 0, i), ctx):  # a Kafka record's row
            if not isinstance(r, tuple):
                rows.append(r)
            elif r[0] is TAGS["dead_letter"]:
                dead.append(r[1])
    assert f is not None
    return rows, f, dead


def _sync_reads(rows: list[Any]) -> list[float]:
    return [r[SYNC_READS] for r in rows]


def test_attributes_read_after_the_first_getpages_of_their_time_start_the_pool_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]
    first_us = batches[0][1].start_time
    attrs = (b"attrs", _attributes(first_us))
    sent, _ = _run([attrs, *batches], monkeypatch)
    late = [*batches[:3], attrs, *batches[3:]]
    read, f = _run(late, monkeypatch)
    assert len(sent) >= 5 and all(float(x).is_integer() for x in _sync_reads(sent))  # 400 pages: unsampled
    assert read == sent
    tr = f.trackers[KEY]
    assert tr.setting is not None and tr.setting.vpseqt == 50.0
    # The record now leads the records since the key began: a worker lost right after it
    # rebuilds the same tracker from the keyed state.
    again, _ = _run(late, monkeypatch, fail_after=4)
    assert again == sent


def test_attributes_of_a_later_time_take_effect_there_and_do_not_start_again(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]
    later = (b"attrs", _attributes(batches[3][1].start_time))  # in force from the fourth batch on
    sent, _ = _run([*batches[:3], later, *batches[3:]], monkeypatch)
    early = (b"attrs", _attributes(batches[0][1].start_time))
    from_start, _ = _run([early, *batches], monkeypatch)
    # Same settings from a later time: the first pane differs (its caches began later) ...
    assert _sync_reads(sent)[0] != _sync_reads(from_start)[0]
    # ... and equals a tracker given the record where it came, which never starts again.
    tr = PoolTracker("S", "BP1")
    want: list[Any] = []
    for i, (_, b) in enumerate(batches):
        if i == 3:
            tr.set_attributes(later[1])
        tr.feed(b, lambda e, _i: want.append(e.pool_pane["sim_sync_reads"]))
    assert _sync_reads(sent)[: len(want)] == want


def test_a_late_record_the_pool_cannot_use_goes_to_dead_letter_and_the_pool_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]
    bad = (b"bad", {"source": "S", "pool": "BP1", "event_time": batches[0][1].start_time})  # no VPSIZE
    alone, _, none = _outputs(batches, monkeypatch)
    order = [*batches[:3], bad, *batches[3:]]
    got, _, dead = _outputs(order, monkeypatch)
    assert none == [] and len(dead) == 1 and got == alone
    again, _, dead = _outputs(order, monkeypatch, fail_after=4)  # its state as it was: no record left in it
    assert len(dead) == 1 and again == alone


def test_the_first_getpage_fed_counts_a_batch_that_came_out_of_order() -> None:
    b = _batches(_trace(30_000, seed=3), size=500)
    tr = PoolTracker("S", "BP1")
    for x in (b[3], dataclasses.replace(b[0], sequence=4)):  # the same pane, the earlier batch second
        tr.feed(x, lambda e, _i: None)
    assert tr.first_fed_us == b[0].start_time
    assert not tr.starts_over(_attributes(b[1].start_time)) and tr.starts_over(_attributes(b[0].start_time))
