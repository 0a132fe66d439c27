"""A data-sharing member found by the group_name of its pool attributes (discover_groups): the
getpages Simulate reads before the key's first attributes record reach the group operator once
that record names the group, right after it (driven without Flink, as test_late_attributes)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import ATTRIBUTES, GETPAGE, GROUP_FEED, Simulate
from poolsight.infra.registry_access import RegistryAccess
from poolsight.schemas.getpage import GetpageBatch

from .test_late_attributes import KEY, _attributes
from .test_quiet_pools import Ctx, Runtime
from .test_tracker import _batches, _trace


def _member(event_us: int, group: str | None = "DSG1") -> tuple[bytes, dict[str, Any]]:
    return b"attrs", {**_attributes(event_us), "group_name": group}


def _feed(
    order: list[tuple[bytes, Any]],
    monkeypatch: pytest.MonkeyPatch,
    fail_after: int | None = None,
    groups: dict[str, list[str]] | None = None,
) -> tuple[list[tuple[str, bytes]], list[int], Simulate]:
    """The records through Simulate in `order`: what went to the group operator (key, raw), the
    indexes of the records that emitted a pane, and the last worker. With `fail_after`, the
    worker is lost after that many records and a new one goes on from the keyed state."""
    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)
    table = {raw: (GETPAGE if isinstance(item, GetpageBatch) else ATTRIBUTES, item) for raw, item in order}
    rt, ctx = Runtime(), Ctx(KEY)
    fed: list[tuple[str, bytes]] = []
    emitted: list[int] = []
    f = None
    for i, (raw, _) in enumerate(order):
        if f is None or i == fail_after:
            f = Simulate(SimulationOptions(RegistryAccess("http://127.0.0.1:1"), groups=groups or {}))
            f.open(rt)
            monkeypatch.setattr(f, "_read", lambda raw: table[raw])
        for r in f.process_element((KEY, raw, "topic", 0, i), ctx):
            if isinstance(r, tuple) and r[0] is GROUP_FEED:
                key, (inner_key, routed) = r[1]  # keyed in the JVM by the first field (common.keyed)
                assert inner_key == key
                fed.append((key, routed))
            elif not isinstance(r, tuple) and i not in emitted:
                emitted.append(i)
    assert f is not None
    return fed, emitted, f


def _gp() -> list[tuple[bytes, GetpageBatch]]:
    """60 batches over 400 s: a 60 s pane closes every nine or so."""
    return [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]


def test_getpages_read_before_the_first_attributes_follow_them_to_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _gp()
    attrs = _member(batches[0][1].start_time)
    first, _, _ = _feed([attrs, *batches], monkeypatch)
    raws = [b"attrs", *(raw for raw, _ in batches)]
    assert first == [("DSG1|BP1", r) for r in raws]
    late, emitted, f = _feed([*batches[:3], attrs, *batches[3:]], monkeypatch)
    assert emitted[0] > 3  # no pane closed before the record: every early batch is still waiting
    assert late == first  # the record, then the three read before it, then the rest
    assert list(f.unrouted.get()) == []
    # The waiting batches are keyed state: a worker lost before the record still routes them.
    again, _, _ = _feed([*batches[:3], attrs, *batches[3:]], monkeypatch, fail_after=2)
    assert again == first


def test_a_progress_mark_read_before_the_attributes_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _gp()
    b = batches[2][1]
    mark = (b"mark", GetpageBatch.mark("S", "BP1", b.sequence + 1, b.end_time))
    rest = [(raw, dataclasses.replace(x, sequence=x.sequence + 1)) for raw, x in batches[3:]]
    fed, _, _ = _feed([*batches[:3], mark, _member(batches[0][1].start_time), *rest], monkeypatch)
    assert [r for _, r in fed][:5] == [b"attrs", b"gp0", b"gp1", b"gp2", b"gp3"]


def test_a_key_in_no_group_keeps_nothing_once_its_attributes_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _gp()
    alone = _member(batches[0][1].start_time, group=None)
    fed, _, f = _feed([*batches[:3], alone, *batches[3:]], monkeypatch)
    assert fed == [] and list(f.unrouted.get()) == []
    assert f.group_state.value() == ""  # attributes seen: later getpages are not kept


def test_what_waits_is_bounded_by_the_keys_first_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _gp()  # several panes
    attrs = _member(batches[0][1].start_time)
    fed, emitted, f = _feed([*batches, attrs], monkeypatch)
    assert emitted, "no pane closed: the test does not reach a snapshot"
    # Kept until the first pane's snapshot, then dropped; none kept after it.
    assert fed == [("DSG1|BP1", b"attrs")] and list(f.unrouted.get()) == []
    early, emitted, f = _feed([*batches[: emitted[0]], attrs, *batches[emitted[0] :]], monkeypatch)
    assert [r for _, r in early][: emitted[0] + 2] == [b"attrs", *(raw for raw, _ in batches[: emitted[0] + 1])]


def test_a_configured_member_keeps_nothing_back(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _gp()
    order = [*batches[:3], _member(batches[0][1].start_time), *batches[3:]]
    fed, _, f = _feed(order, monkeypatch, groups={"PLEX": ["S"]})
    assert [k for k, _ in fed] == ["PLEX|BP1"] * (len(batches) + 1)
    assert [r for _, r in fed][:4] == [b"gp0", b"gp1", b"gp2", b"attrs"]  # routed as they came
    assert list(f.unrouted.get()) == []
