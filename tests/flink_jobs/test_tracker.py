"""The simulation job's per-pool logic without Flink: panes, late batches, restore."""

from __future__ import annotations

import dataclasses
import itertools
import json
import struct
from typing import Any

import numpy as np
import pytest
import zstandard

from poolsight.flink_jobs.tracker import Emission, PoolTracker
from poolsight.ingest.batching import make_batch
from poolsight.schemas.getpage import GetpageBatch
from poolsight.simulator import SimConfig, Simulator

NAMES = ["DB.A", "DB.B", "DB.C"]


def _trace(n: int = 60_000, seed: int = 1) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {
        "t": np.sort(rng.random(n) * 400) + 1.7e9,
        "page": (rng.zipf(1.2, n) % 3000).astype(np.uint64),
        "obj": rng.integers(0, 3, n),
        "acc": rng.integers(0, 3, n).astype(np.uint8),
        "fun": (rng.random(n) < 0.1).astype(np.uint8),
        "hit": (rng.random(n) < 0.7).astype(np.uint8),
    }


def _batches(tr: dict[str, Any], size: int = 1000) -> list[GetpageBatch]:
    """Batches as the job reads them: built by a producer, through their Avro record."""
    out = []
    for i in range(0, len(tr["t"]), size):
        s = slice(i, i + size)
        out.append(
            GetpageBatch.from_record(
                make_batch(
                    "S",
                    "BP1",
                    i // size,
                    tr["t"][s],
                    tr["obj"][s],
                    tr["page"][s],
                    tr["acc"][s],
                    tr["fun"][s],
                    hit=tr["hit"][s],
                    names=NAMES,
                ).record()
            )
        )
    return out


def _run(batches: list[GetpageBatch]) -> list[Emission]:
    t = PoolTracker("S", "BP1")
    t.set_size(500)
    ems: list[Emission] = []
    for b in batches:
        t.feed(b, lambda e, _i: ems.append(e))
    t.flush(10**12, lambda e, _i: ems.append(e))
    return ems


def _strip(e: Emission) -> dict[str, Any]:
    rows = e.rows()
    rows["pool_pane"] = [{k: v for k, v in r.items() if k != "emitted_at"} for r in rows["pool_pane"]]
    return rows


def test_panes_add_up_to_the_offline_simulation() -> None:
    tr = _trace()
    ems = _run(_batches(tr))
    assert [e.pane for e in ems] == sorted({int(x // 60) for x in tr["t"]})
    gp = tr["fun"] == 0
    assert sum(e.pool_pane["getpages"] for e in ems) == int(gp.sum())
    assert sum(e.pool_pane["observed_hits"] for e in ems) == int(tr["hit"][gp].sum())
    assert sum(r["getpages"] for e in ems for r in e.object_panes) == int(gp.sum())
    sim = Simulator(SimConfig(window_panes=1000))
    sim.feed(tr["t"], "BP1", np.array(NAMES)[tr["obj"]], tr["page"], tr["acc"], tr["fun"])
    for size in (250, 500, 1000):
        want = sim.result("BP1", [size], panes=1000).curve[0].misses
        got = sum(r["misses"] for e in ems for r in e.sim_curve if r["size_pages"] == size)
        assert got == pytest.approx(want, abs=1e-6)
    assert all(r["is_current"] == (r["size_pages"] == 500) for e in ems for r in e.sim_curve)


def test_restore_from_an_emission_snapshot_continues_without_repeating() -> None:
    batches = _batches(_trace(), size=777)  # batches straddle pane boundaries
    whole = _run(batches)
    t = PoolTracker("S", "BP1")
    t.set_size(500)
    ems: list[Emission] = []
    saved: list[tuple[bytes, int, int]] = []  # (snapshot, batch index, resume position)
    for i, b in enumerate(batches):

        def emitted(e: Emission, resume: int, i: int = i) -> None:
            ems.append(e)
            saved.append((t.snapshot(), i, resume))

        t.feed(b, emitted)
    snap, i, resume = saved[2]  # a restart after the third emission
    again = PoolTracker.restore(snap)
    assert t.sim.background and again.sim.background  # the job's trackers feed in the kernel's thread
    rest: list[Emission] = []
    again.feed(batches[i], lambda e, _r: rest.append(e), resume)
    for b in batches[i + 1 :]:
        again.feed(b, lambda e, _r: rest.append(e))
    again.flush(10**12, lambda e, _r: rest.append(e))
    assert [_strip(e) for e in rest] == [_strip(e) for e in whole[3:]]


def test_a_snapshot_is_compressed_and_one_from_before_compression_still_restores() -> None:
    """PSTRK002 + a zstd frame of what PSTRK001 held as it is (u32 LE header length, JSON header,
    the simulator's snapshot): a job's checkpoint from before compression still resumes."""
    batches = _batches(_trace())
    whole = _run(batches)
    t = PoolTracker("S", "BP1")
    t.set_size(500)
    ems: list[Emission] = []
    for b in batches[:25]:
        t.feed(b, lambda e, _i: ems.append(e))
    snap = t.snapshot()
    assert snap[:8] == b"PSTRK002"
    body = zstandard.ZstdDecompressor().decompress(snap[8:])
    (n,) = struct.unpack("<I", body[:4])
    assert json.loads(body[4 : 4 + n])["pool"] == "BP1"
    assert body[4 + n : 4 + n + 8] == b"PSSIM001"
    assert len(snap) * 3 < len(body), (len(snap), len(body))
    for data in (snap, b"PSTRK001" + body):
        again = PoolTracker.restore(data)
        rest = list(ems)
        for b in batches[25:]:
            again.feed(b, lambda e, _i: rest.append(e))  # noqa: B023 (called before the next round)
        again.flush(10**12, lambda e, _i: rest.append(e))  # noqa: B023
        assert [_strip(e) for e in rest] == [_strip(e) for e in whole]
    with pytest.raises(ValueError, match="not a poolsight tracker snapshot"):
        PoolTracker.restore(b"PSTRK003" + body)
    with pytest.raises(ValueError, match=f"a PSTRK002 snapshot of {len(snap) - 100} bytes does not decompress"):
        PoolTracker.restore(snap[:-100])


def test_a_batch_for_an_emitted_pane_is_simulated_in_the_open_pane_and_counted_late() -> None:
    tr = _trace()
    batches = _batches(tr)
    late = dataclasses.replace(batches[0], sequence=30)  # a new batch (sequence 30) with old times
    ems = _run([*batches[:30], late, *batches[30:]])
    open_pane = int(tr["t"][29_999] // 60)  # the pane open when it came
    gp = tr["fun"] == 0
    n_late = int(gp[:1000].sum())
    assert {e.pane: e.pool_pane["late_getpages"] for e in ems if e.pool_pane["late_getpages"]} == {open_pane: n_late}
    assert sum(e.pool_pane["getpages"] for e in ems) == int(gp.sum()) + n_late
    in_pane = int(gp[(tr["t"] // 60).astype(int) == open_pane].sum())
    assert next(e.pool_pane["getpages"] for e in ems if e.pane == open_pane) == in_pane + n_late
    # The simulation saw them there: an offline run over the same getpages, the late ones at the pane's start.
    order = np.r_[np.arange(30_000), np.arange(1000), np.arange(30_000, len(tr["t"]))]
    t = tr["t"][order].copy()
    t[30_000:31_000] = open_pane * 60.0
    sim = Simulator(SimConfig(window_panes=1000))
    sim.feed(t, "BP1", np.array(NAMES)[tr["obj"][order]], tr["page"][order], tr["acc"][order], tr["fun"][order])
    for size in (250, 500, 1000):
        want = sim.result("BP1", [size], panes=1000).curve[0].misses
        got = sum(r["misses"] for e in ems for r in e.sim_curve if r["size_pages"] == size)
        assert got == pytest.approx(want, abs=1e-6)


def test_a_late_batch_after_a_flush_opens_the_next_pane() -> None:
    batches = _batches(_trace())
    t = PoolTracker("S", "BP1")
    ems: list[Emission] = []
    for b in batches[:30]:
        t.feed(b, lambda e, _i: ems.append(e))
    flushed = t.open_pane
    assert flushed is not None and t.flush(flushed + 1, lambda e, _i: ems.append(e))  # the pool went quiet
    late = dataclasses.replace(batches[5], sequence=30)
    t.feed(late, lambda e, _i: ems.append(e))
    assert t.open_pane == flushed + 1
    restored = PoolTracker.restore(t.snapshot())  # the count survives a failover
    restored.flush(10**12, lambda e, _i: ems.append(e))
    assert ems[-1].pane == flushed + 1
    n_late = int((late.function_codes() == 0).sum())
    assert ems[-1].pool_pane["late_getpages"] == ems[-1].pool_pane["getpages"] == n_late


def test_duplicates_after_a_producer_restart_are_skipped_and_a_new_run_is_fed() -> None:
    tr = _trace()
    batches = _batches(tr)
    whole = _run(batches)
    # Restarted after its last checkpoint, a collector sends batches 20-29 again, same numbers.
    again = _run(batches[:30] + batches[20:30] + batches[30:])
    assert [_strip(e) for e in again] == [_strip(e) for e in whole]

    # The same across a snapshot: the last batch fed is part of the state.
    t = PoolTracker("S", "BP1")
    t.set_size(500)
    for b in batches[:30]:
        t.feed(b, lambda _e, _i: None)
    restored = PoolTracker.restore(t.snapshot())
    assert restored.feed(batches[29], lambda _e, _i: None) == 0 and restored.duplicates == 1

    # A new run of the producer numbers from 0 again, with later times: fed, not dropped.
    later = {**tr, "t": tr["t"] + 1000}
    more = _run(batches + _batches(later))
    assert sum(e.pool_pane["getpages"] for e in more) == 2 * sum(e.pool_pane["getpages"] for e in whole)


def test_working_set_change_per_object_follows_the_panes() -> None:
    tr = _trace()
    ems = _run(_batches(tr))
    gp = tr["fun"] == 0
    pane_of = (tr["t"] // 60).astype(int)
    distinct: dict[tuple[int, str], int] = {}
    for p in set(pane_of.tolist()):
        for o, name in enumerate(NAMES):
            sel = gp & (pane_of == p) & (tr["obj"] == o)
            distinct[(p, name)] = len(set(tr["page"][sel].tolist()))
    rows = 0
    for prev, e in itertools.pairwise(ems):
        for r in e.working_set:
            if r["object"] is None:
                continue
            assert r["pane_pages"] == distinct[(e.pane, r["object"])]
            assert r["change_pages"] == distinct[(e.pane, r["object"])] - distinct.get((prev.pane, r["object"]), 0)
            rows += 1
    assert rows >= 3 * (len(ems) - 1)
    assert all(r["change_pages"] is None for r in ems[0].working_set)


def test_a_progress_mark_closes_the_panes_it_passed_and_only_those() -> None:
    tr = _trace()
    batches = _batches(tr)
    last = int(tr["t"].max() // 60)
    t = PoolTracker("S", "BP1")
    t.set_size(500)
    ems: list[Emission] = []
    for b in batches:
        t.feed(b, lambda e, _i: ems.append(e))
    assert ems[-1].pane == last - 1

    def mark(seq: int, before_s: float) -> GetpageBatch:
        return GetpageBatch.from_record(GetpageBatch.mark("S", "BP1", seq, round(before_s * 1e6)).record())

    assert t.feed(mark(len(batches), (last + 1) * 60 - 1e-6), lambda e, _i: ems.append(e)) == 0
    assert ems[-1].pane == last - 1  # a getpage of the last pane may still come
    t.feed(mark(len(batches) + 1, (last + 1) * 60), lambda e, _i: ems.append(e))
    assert [_strip(e) for e in ems] == [_strip(e) for e in _run(batches)]  # as the quiet flush closes it
    t.feed(mark(len(batches) + 1, (last + 1) * 60), lambda e, _i: ems.append(e))  # sent again: skipped
    assert t.duplicates == 1 and t.open_pane is None
