"""The job's group tracker: members' batches arriving in any interleaving give the rows of one
GroupSimulator fed the whole trace in one time order and read pane by pane; one member's LBP
equals the single-system simulation; a restored tracker continues as if never stopped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
import zstandard

from poolsight.flink_jobs.group_tracker import GroupEmission, GroupTracker, parse_groups
from poolsight.flink_jobs.tracker import PoolTracker
from poolsight.ingest.batching import make_batch
from poolsight.schemas.getpage import GetpageBatch
from poolsight.simulator.group import COUNTERS, GbpSetting, GroupOptions, GroupSimulator, gbp_name
from poolsight.simulator.group_grid import gbp_grid as grid

NAMES = ["APP.A", "APP.B", "APP.C"]
T0 = 1.7e9 - (1.7e9 % 60)  # a pane boundary
VPSIZE = {"DB2A": 300, "DB2B": 200, "DB2C": 250}


def _trace(members: tuple[str, ...], n: int = 30_000, seed: int = 3) -> dict[str, Any]:
    """Getpages, a quarter of them followed by the member's set-write-intent on the same page
    (DB2 updates only a page it holds)."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.random(n) * 290) + T0 + 0.5
    m = rng.integers(0, len(members), n)
    page = (rng.zipf(1.3, n) % 2000).astype(np.uint64)
    obj = rng.integers(0, len(NAMES), n)
    upd = np.flatnonzero(rng.random(n) < 0.25)
    at = np.sort(np.concatenate([np.arange(n), upd]))  # each update right after its getpage
    fun = np.zeros(len(at), dtype=np.uint8)
    fun[1:][at[1:] == at[:-1]] = 1
    return {"t": t[at], "m": m[at], "page": page[at], "obj": obj[at], "fun": fun}


def _batches(tr: dict[str, Any], members: tuple[str, ...], size: int = 700) -> list[GetpageBatch]:
    out = []
    for mi, m in enumerate(members):
        idx = np.flatnonzero(tr["m"] == mi)
        for k, i in enumerate(range(0, len(idx), size)):
            s = idx[i : i + size]
            b = make_batch(
                m,
                "BP1",
                k,
                tr["t"][s],
                tr["obj"][s],
                tr["page"][s],
                np.zeros(len(s), dtype=np.uint8),
                tr["fun"][s],
                names=NAMES,
            )
            out.append(GetpageBatch.from_record(b.record()))
    return out


def _attrs(m: str, data_entries: int = 400, ratio: float = 4.0, at: float = T0) -> dict[str, Any]:
    """As the job decodes them: fastavro gives timestamp-micros as a datetime (here for DB2B)."""
    return {
        "source": m,
        "pool": "BP1",
        "event_time": datetime.fromtimestamp(at, UTC) if m == "DB2B" else int(at * 1e6),
        "vpsize": VPSIZE[m],
        "page_size": 4096,
        "gbp_data_entries": data_entries,
        "gbp_ratio": ratio,
    }


def _tracker(members: tuple[str, ...], **kw: Any) -> GroupTracker:
    tr = GroupTracker("DSG1", members, "BP1", 60.0, **kw)
    for m in members:
        tr.set_attributes(m, _attrs(m))
    return tr


def _fed(members: tuple[str, ...], batches: list[GetpageBatch]) -> tuple[GroupTracker, list[GroupEmission]]:
    """A new tracker given every batch: it and what it emitted (the last pane still open)."""
    t = _tracker(members)
    out: list[GroupEmission] = []
    for b in batches:
        t.add(b.source, b, out)
    return t, out


def _interleaved(batches: list[GetpageBatch], seed: int) -> list[GetpageBatch]:
    """Each member's batches in order, the members' streams interleaved at random (as partitions are)."""
    by: dict[str, list[GetpageBatch]] = {}
    for b in batches:
        by.setdefault(b.source, []).append(b)
    rng = np.random.default_rng(seed)
    out = []
    while any(by.values()):
        live = [m for m, bs in by.items() if bs]
        out.append(by[live[int(rng.integers(0, len(live)))]].pop(0))
    return out


def _direct(tr: dict[str, Any], members: tuple[str, ...], sample: float = 1.0) -> list[dict[str, float]]:
    """The truth: one simulator fed the whole trace in (time, member) order, read at each pane end."""
    sim = GroupSimulator(
        members,
        {m: VPSIZE[m] for m in members},
        grid(GbpSetting(400, 4.0)),
        GroupOptions(reference=False, infer_dependence=True, sample=sample),
    )
    order = np.lexsort((tr["m"], tr["t"]))
    panes = np.floor(tr["t"][order] / 60).astype(np.int64)
    rows = []
    for p in np.unique(panes):
        sel = order[panes == p]
        sim.feed(
            np.asarray(members)[tr["m"][sel]],
            np.asarray(NAMES)[tr["obj"][sel]],
            tr["page"][sel],
            tr["fun"][sel],
            tr["t"][sel],
        )
        for pt in sim.take_points():
            rows.append(
                {"pane": int(p), "data_entries": pt.setting.data_entries, "ratio": pt.setting.ratio}
                | {c: float(getattr(pt.total, c)) for c in COUNTERS}
            )
    return rows


def _curve(ems: list[GroupEmission]) -> list[dict[str, float]]:
    out = []
    for e in ems:
        for r in e.rows["gbp_curve"]:
            out.append(
                {"pane": int(r["pane_start"] // 60_000), "data_entries": r["data_entries"], "ratio": r["ratio"]}
                | {c: r[c] for c in COUNTERS}
            )
    return out


def _same_rows(got: list[dict[str, float]], want: list[dict[str, float]]) -> None:
    """The same panes and grid points, each row's counters equal to rounding."""
    assert [(r["pane"], r["data_entries"], r["ratio"]) for r in got] == [
        (r["pane"], r["data_entries"], r["ratio"]) for r in want
    ]
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w), (g["pane"], g["data_entries"], g["ratio"])


def test_group_specs_and_gbp_names() -> None:
    assert parse_groups(["DSG1=DB2A, DB2B", "DSG2=DB2C"]) == {"DSG1": ("DB2A", "DB2B"), "DSG2": ("DB2C",)}
    with pytest.raises(ValueError, match="already in group DSG1"):
        parse_groups(["DSG1=DB2A,DB2B", "DSG2=DB2B"])
    with pytest.raises(ValueError, match="NAME=MEMBER"):
        parse_groups(["DSG1"])
    with pytest.raises(ValueError, match="not a group or member name"):
        parse_groups(["DSG1=DB2A,'; DROP"])
    assert (gbp_name("BP1"), gbp_name("BP8K0"), gbp_name("BP32K")) == ("GBP1", "GBP8K0", "GBP32K")
    g = grid(GbpSetting(1000, 5.0))
    assert g[0] == GbpSetting(1000, 5.0) and len(g) == len(set(g)) == 15
    assert {p.ratio for p in g} == {2.5, 5.0, 10.0}
    # Sizes in MB: 1,000 data entries of 4 KB and 5,000 directory entries of 400 bytes, 5.81 MB;
    # at RATIO 10 the same MB holds (5.81 x 2**20) // (10 x 400 + 4096) = 752 data entries.
    mb = (1000 * 4096 + 5000 * 400) / 2**20
    assert GbpSetting(int(mb * 2**20 // (10 * 400 + 4096)), 10.0) in g
    assert GbpSetting(int(mb * 2**20 // (10 * 400 + 4096)), 10.0).data_entries == 752
    assert sorted({round(p.structure_mb(4096) / mb, 2) for p in g}) == [0.25, 0.5, 1.0, 2.0, 4.0]


@pytest.mark.parametrize("seed", [1, 2])
def test_members_interleaved_at_random_give_the_one_time_order_simulation(seed: int) -> None:
    members = ("DB2A", "DB2B", "DB2C")
    tr = _trace(members)
    t = _tracker(members)
    ems: list[GroupEmission] = []
    for b in _interleaved(_batches(tr, members), seed):
        assert t.add(b.source, b, ems) == 0
    t.flush(ems)
    _same_rows(_curve(ems), _direct(tr, members))
    # Each point's members add up to its total, and the current point is marked.
    first = ems[0].rows
    current = [r for r in first["gbp_curve"] if r["is_current"]]
    assert [(r["data_entries"], r["ratio"]) for r in current] == [(400, 4.0)]
    per_member = [r for r in first["gbp_member"] if r["is_current"]]
    assert sorted(r["member"] for r in per_member) == list(members)
    for c in COUNTERS:
        assert sum(r[c] for r in per_member) == pytest.approx(current[0][c])


def test_a_restored_tracker_continues_as_if_never_stopped() -> None:
    """Restored from its snapshot (PSGRPZ01 + a zstd frame of its pickle) and, every other time,
    from the plain pickle inside, as a checkpoint from before compression holds it."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=7)
    batches = _interleaved(_batches(tr, members), 5)
    t, whole = _fed(members, batches)
    t.flush(whole)
    parts: list[GroupEmission] = []
    t = _tracker(members)
    for i, b in enumerate(batches):
        if i % 17 == 16:
            snap = t.snapshot()
            assert snap[:8] == b"PSGRPZ01"
            plain = zstandard.ZstdDecompressor().decompress(snap[8:])
            assert plain[:2] == b"\x80\x05"  # pickle protocol 5
            t = GroupTracker.restore(plain if i % 34 == 16 else snap)
        t.add(b.source, b, parts)
    t.flush(parts)
    assert _curve(parts) == _curve(whole)


def test_one_member_lbp_hits_are_the_single_system_lru_hits() -> None:
    members = ("DB2A",)
    tr = _trace(members, seed=11)
    batches = _batches(tr, members)
    t = _tracker(members)
    ems: list[GroupEmission] = []
    for b in batches:
        t.add(b.source, b, ems)
    t.flush(ems)
    pool = PoolTracker("DB2A", "BP1", pool_policy=False)
    pool.set_size(VPSIZE["DB2A"])
    single: list[Any] = []
    for b in batches:
        pool.feed(b, lambda e, _i: single.append(e))
    pool.flush(10**12, lambda e, _i: single.append(e))
    lru = {
        int(r["pane_start"] // 60_000): r["hits"]
        for e in single
        for r in e.sim_curve
        if r["model"] == "lru-stack" and r["size_pages"] == VPSIZE["DB2A"]
    }
    lbp = {int(r["pane_start"] // 60_000): r["lbp_hits"] for e in ems for r in e.rows["lbp_curve"] if r["is_current"]}
    assert lbp == pytest.approx(lru) and len(lbp) == 5
    for e in ems:  # one member alone never makes an object GBP-dependent: the GBP is never used
        assert {r["getpages"] for r in e.rows["gbp_curve"]} == {0.0}


def test_a_gbp_change_read_before_the_getpages_before_it_applies_at_its_time() -> None:
    """The attributes topic runs ahead: a rebuild at T0 + 120 s read first still leaves the panes
    before it at the old setting, and the new one is a point of the same grid (no restart)."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=4)
    t = _tracker(members)
    new = grid(GbpSetting(400, 4.0))[5]
    for m in members:
        t.set_attributes(m, _attrs(m, new.data_entries, new.ratio, at=T0 + 120))
    ems: list[GroupEmission] = []
    for b in _interleaved(_batches(tr, members), 3):
        t.add(b.source, b, ems)
    t.flush(ems)
    current = [
        (e.pane - int(T0 // 60), r["data_entries"], r["ratio"], r["warmup"])
        for e in ems
        for r in e.rows["gbp_curve"]
        if r["is_current"]
    ]
    old = (400, 4.0)
    assert current == [
        (0, *old, True),
        (1, *old, False),
        (2, new.data_entries, new.ratio, False),
        (3, new.data_entries, new.ratio, False),
        (4, new.data_entries, new.ratio, False),
    ]


def test_the_catalog_says_which_objects_use_the_gbp() -> None:
    """One member alone and an object the catalog marks GBP-dependent: its getpages are counted at
    the GBP (without the catalog, one member never makes an object GBP-dependent)."""
    members = ("DB2A",)
    tr = _trace(members, seed=6)
    t = _tracker(members)
    for n in NAMES:
        t.set_catalog({"source": "DB2A", "pool": "BP1", "object": n, "gbp_dependent": n == "APP.B"})
    ems: list[GroupEmission] = []
    for b in _batches(tr, members):
        t.add(b.source, b, ems)
    t.flush(ems)
    counted = sum(r["getpages"] for e in ems for r in e.rows["gbp_curve"] if r["is_current"])
    fun, obj = tr["fun"], tr["obj"]
    assert counted == int(((fun == 0) & (obj == NAMES.index("APP.B"))).sum())


def test_a_sampled_group_gives_the_sampled_simulation_and_says_its_rate() -> None:
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=9)
    t = _tracker(members, sample=0.25)
    ems: list[GroupEmission] = []
    for b in _interleaved(_batches(tr, members), 2):
        t.add(b.source, b, ems)
    t.flush(ems)
    assert {r["sampling_rate"] for e in ems for r in e.rows["gbp_curve"]} == {0.25}
    got, want = _curve(ems), _direct(tr, members, sample=0.25)
    assert got == [pytest.approx(w) for w in want]
    assert got != _direct(tr, members)  # sampling changed the answer: the rate reached the simulator


def test_a_member_far_ahead_fills_the_buffer_only_to_its_bound_and_nothing_is_lost() -> None:
    """All of DB2A's batches before any of DB2B's (one partition read far ahead): the buffer sheds
    its older half whenever it passes max_buffer, DB2B's getpages before the fed time are late,
    and every getpage is still counted once."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=12)
    batches = sorted(_batches(tr, members), key=lambda b: b.source)  # DB2A's first
    t = _tracker(members, max_buffer=4000)
    ems: list[GroupEmission] = []
    late = 0
    for b in batches:
        late += t.add(b.source, b, ems)
        assert t.buffered <= 4000 + 700 and t.buffered == sum(len(c.times) for c in t.buffer)
    t.flush(ems)
    getpages = int((tr["fun"] == 0).sum())
    assert sum(r["getpages"] for e in ems for r in e.rows["lbp_curve"] if r["is_current"]) == getpages
    assert sum(r["late_getpages"] for e in ems for r in e.rows["gbp_curve"] if r["is_current"]) == late
    # DB2A arrived alone, so everything it sent before the last shed was fed before DB2B's getpages
    # of the same times: DB2B's getpages up to there are late, the rest are not.
    b_getpages = int(((tr["fun"] == 0) & (tr["m"] == 1)).sum())
    assert 0 < late < b_getpages


def test_a_snapshot_taken_before_the_buffer_held_codes_restores_to_the_same_answers() -> None:
    """A tracker pickled by the previous version (object names as strings in the buffer, none of
    the code table's fields) continues exactly as one never stopped."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=13)
    all_batches = _interleaved(_batches(tr, members), 1)
    batches = [b for b in all_batches if b.source == "DB2A"][:10]  # DB2A's first: all buffered
    rest = [b for b in all_batches if not any(b is a for a in batches)]
    whole: list[GroupEmission] = []
    t = _tracker(members)
    for b in [*batches, *rest]:
        t.add(b.source, b, whole)
    t.flush(whole)
    t = _tracker(members)
    part: list[GroupEmission] = []
    for b in batches:
        t.add(b.source, b, part)
    assert t.buffered > 0
    state = t.__getstate__()
    names = np.asarray(state["object_names"], dtype=np.str_)
    old_buffer = [type(c)(c.member, c.times, names[c.objects], c.pages, c.function) for c in state["buffer"]]
    old = {
        k: v
        for k, v in state.items()
        if k not in {"buffered", "object_names", "object_codes", "sample", "rate", "max_buffer"}
    }
    old["buffer"] = old_buffer
    restored = GroupTracker.__new__(GroupTracker)
    restored.__setstate__(old)
    for b in rest:
        restored.add(b.source, b, part)
    restored.flush(part)
    assert _curve(part) == _curve(whole)


def test_a_group_learned_from_its_records_equals_the_configured_one_once_both_members_came() -> None:
    """No members given: DB2A's batches wait for a second member (one member alone is no group),
    then the group runs as if both had been configured in the order they came."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=21)
    batches = _interleaved(_batches(tr, members), 4)
    first = batches[0].source
    order = (first, *(m for m in members if m != first))
    learned = GroupTracker("DSG1", (), "BP1", 60.0)
    for m in order:  # attributes arrive in the same order as the members' first batches
        learned.set_attributes(m, _attrs(m))
    assert learned.members == order and learned.configured is False
    given = _tracker(order)
    got: list[GroupEmission] = []
    want: list[GroupEmission] = []
    for b in batches:
        learned.add(b.source, b, got)
        given.add(b.source, b, want)
    learned.flush(got)
    given.flush(want)
    assert _curve(got) == _curve(want) and len(got) == 5


def test_getpages_read_before_a_members_attributes_wait_for_them_and_none_is_lost() -> None:
    """The attributes topic is read beside the getpages' and may lag them: DB2B's VPSIZE comes
    after a third of the batches. Nothing is fed before it (a simulator cannot be built without
    it), so the group's panes are those of a tracker that had every attribute first."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=23)
    batches = _interleaved(_batches(tr, members), 8)
    late = GroupTracker("DSG1", members, "BP1", 60.0)
    late.set_attributes("DB2A", _attrs("DB2A"))
    given = _tracker(members)
    got: list[GroupEmission] = []
    want: list[GroupEmission] = []
    for i, b in enumerate(batches):
        if i == len(batches) // 3:
            assert not got and late.buffered > 0 and late.open_pane is None
            late.set_attributes("DB2B", _attrs("DB2B"))
        late.add(b.source, b, got)
        given.add(b.source, b, want)
    late.flush(got)
    given.flush(want)
    getpages = int((tr["fun"] == 0).sum())
    assert sum(r["getpages"] for e in got for r in e.rows["lbp_curve"] if r["is_current"]) == getpages
    assert _curve(got) == _curve(want) and len(got) == 5


def test_a_member_that_joins_later_restarts_the_group_simulation() -> None:
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=22)
    t = _tracker(members)
    ems: list[GroupEmission] = []
    for b in _interleaved(_batches(tr, members), 6):
        t.add(b.source, b, ems)
    t.add_member("DB2A")  # known: nothing changes
    assert t.members == members
    t.set_attributes("DB2C", {**_attrs("DB2A"), "source": "DB2C"})
    assert list(t.members) == [*members, "DB2C"] and t._sim is None


def test_another_sampling_rate_on_resubmit_restarts_the_simulation_at_it() -> None:
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=23)
    batches = _interleaved(_batches(tr, members), 7)
    t = _tracker(members)
    ems: list[GroupEmission] = []
    for b in batches[:20]:
        t.add(b.source, b, ems)
    restored = GroupTracker.restore(t.snapshot())
    restored.set_sample(None)  # the same: nothing restarts
    assert restored.sim_bytes is not None
    restored.set_sample(0.5)
    assert restored.sim_bytes is None and restored._sim is None
    for b in batches[20:]:
        restored.add(b.source, b, ems)
    restored.flush(ems)
    assert {r["sampling_rate"] for r in ems[-1].rows["gbp_curve"]} == {0.5}


def test_a_vpsize_change_restarts_a_tracker_just_restored() -> None:
    """Restored, the simulation waits pickled (sim_bytes) until the next event: a VPSIZE change
    read first must drop that one too, not only a running one."""
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=24)
    t = _tracker(members)
    ems: list[GroupEmission] = []
    for b in _interleaved(_batches(tr, members), 8)[:20]:
        t.add(b.source, b, ems)
    restored = GroupTracker.restore(t.snapshot())
    assert restored.sim_bytes is not None
    restored.set_attributes("DB2A", {**_attrs("DB2A"), "vpsize": 999})
    assert restored.sim_bytes is None and restored.member_state["DB2A"].vpsize == 999


def test_every_members_progress_mark_closes_the_last_pane_as_the_quiet_flush_would() -> None:
    members = ("DB2A", "DB2B")
    tr = _trace(members, seed=9)
    batches = _interleaved(_batches(tr, members), 2)
    t, flushed = _fed(members, batches)
    open_panes = len(flushed)
    t.flush(flushed)
    end_us = round((T0 + 300) * 1e6)  # the trace's last pane ends at T0 + 300 s
    t, marked = _fed(members, batches)
    assert len(marked) == open_panes  # the last pane waits for every member
    t.add("DB2A", GetpageBatch.mark("DB2A", "BP1", 99, end_us), marked)
    assert len(marked) == open_panes  # DB2B may still send getpages of it
    t.add("DB2B", GetpageBatch.mark("DB2B", "BP1", 99, end_us - 1), marked)
    assert len(marked) == open_panes  # nor until DB2B's mark passes its end
    t.add("DB2B", GetpageBatch.mark("DB2B", "BP1", 100, end_us), marked)
    assert len(marked) == open_panes + 1
    assert _curve(marked) == _curve(flushed)


def _silent_after(tr: dict[str, Any], member: int, t: float) -> dict[str, Any]:
    """The trace without one member's events from time `t` on (it stopped there)."""
    keep = (tr["m"] != member) | (tr["t"] < t)
    return {k: v[keep] for k, v in tr.items()}


def test_a_quiet_member_holds_the_group_back_no_more_until_its_next_record() -> None:
    """DB2B stops at T0 + 100 s while DB2A goes on: the group waits for DB2B (it may still send)
    until it is called quiet, then goes on with DB2A alone, the rows the one-time-order simulation
    of what was sent; DB2B's next record makes it hold the group back again."""
    members = ("DB2A", "DB2B")
    tr = _silent_after(_trace(members, seed=13), 1, T0 + 100)
    t, out = _fed(members, _interleaved(_batches(tr, members), 5))
    assert [e.pane for e in out] == [int(T0 // 60)]  # DB2B passed T0 + 99 s only: pane 1 waits
    t.member_quiet("DB2B", out)
    assert [e.pane for e in out] == [int(T0 // 60) + k for k in range(4)]  # as far as DB2A has passed
    assert t.late == 0
    t.flush(out)
    _same_rows(_curve(out), _direct(tr, members))

    t, out = _fed(members, _interleaved(_batches(tr, members), 5))
    t.member_quiet("DB2B", out)
    fed = t.fed_until
    t.add("DB2B", GetpageBatch.mark("DB2B", "BP1", 99, round((T0 + 310) * 1e6)), out)  # heard again
    t.add("DB2A", GetpageBatch.mark("DB2A", "BP1", 99, round((T0 + 400) * 1e6)), out)
    assert t.fed_until == T0 + 310 and fed is not None and fed < T0 + 310  # DB2B's time holds it again


def test_a_learned_group_with_one_member_is_fed_alone_once_told_to() -> None:
    """No members given and only DB2A has come: its batches wait for a second member, until the
    operator says none came for the idle flush (go_alone); then the group is DB2A alone."""
    tr = _trace(("DB2A",), seed=17)
    learned = GroupTracker("DSG1", (), "BP1", 60.0)
    learned.set_attributes("DB2A", _attrs("DB2A"))
    given = _tracker(("DB2A",))
    got: list[GroupEmission] = []
    want: list[GroupEmission] = []
    for b in _batches(tr, ("DB2A",)):
        learned.add(b.source, b, got)
        given.add(b.source, b, want)
    assert got == [] and len(want) == 4
    learned.go_alone(got)
    assert _curve(got) == _curve(want)
    restored = GroupTracker.restore(learned.snapshot())
    assert restored.alone is True
