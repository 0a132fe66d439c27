"""The data-sharing simulation (poolsight.simulator.group): one member against the
single-system engine, hand-computed counters, the invariants of DATA-SHARING.md, the LBP
curves against the grid points, options, sampling and snapshots."""

from __future__ import annotations

import random
from dataclasses import asdict

import numpy as np
import pytest

from poolsight.simulator import SimConfig, Simulator
from poolsight.simulator.group import (
    COUNTERS,
    GbpCounters,
    GbpPoint,
    GbpSetting,
    GroupOptions,
    GroupSimulator,
    LbpPoint,
)

Event = tuple[str, str, int, int]  # (member, object, page, function)
GP, SWI, REL = 0, 1, 2


def feed(sim: GroupSimulator, events: list[Event]) -> None:
    sim.feed(
        np.array([e[0] for e in events]),
        np.array([e[1] for e in events]),
        np.array([e[2] for e in events], dtype=np.uint64),
        np.array([e[3] for e in events], dtype=np.uint8),
    )


def trace(members: list[str], n: int, pages: int, seed: int, updates: float = 0.25) -> list[Event]:
    """Skewed getpages; an update follows its getpage (as in a DB2 trace), a release now and then."""
    rng = random.Random(seed)
    out: list[Event] = []
    for _ in range(n):
        m = rng.choice(members)
        obj = rng.choice(["DB1.TS1", "DB1.IX1"])
        page = int(pages * rng.random() ** 2.5)
        out.append((m, obj, page, GP))
        if rng.random() < updates:
            out.append((m, obj, page, SWI))
        if rng.random() < 0.05:
            out.append((m, obj, page, REL))
    return out


def counters(**nonzero: int) -> GbpCounters:
    return GbpCounters(**{**dict.fromkeys((*COUNTERS, "getpages"), 0), **nonzero})


GRID = [GbpSetting(d, r) for d in (8, 32, 128, 512, 4096) for r in (2.0, 5.0)]


@pytest.mark.parametrize("size", [1, 10, 100, 700])
def test_one_member_equals_the_single_system_simulation(size: int) -> None:
    events = trace(["DB2A"], 6000, 1500, seed=size)
    single = Simulator(SimConfig(mode="exact", precision_bits=16, window_panes=1000))
    gp = [e for e in events if e[3] == GP]
    single.feed(np.zeros(len(gp)), "BP1", [e[1] for e in gp], np.array([e[2] for e in gp], dtype=np.uint64), None, None)
    want = next(c for c in single.result("BP1", [size]).curve if c.size_pages == size)
    sim = GroupSimulator(
        ["DB2A"], {"DB2A": size}, [GbpSetting(5000, 5.0)], lbp_curve_sizes={"DB2A": [1, size, 10 * size]}
    )
    feed(sim, events)
    c = sim.points()[0].members["DB2A"]
    assert c.lbp_hits == want.hits
    assert c.getpages == len(gp)
    assert c.sync_reads_xi == c.xi_due_to_writes == c.directory_reclaims == 0
    # The LBP curve at every size is the single system's.
    curve = {p.buffers: p for p in sim.lbp_curves()["DB2A"]}
    for s in (1, size, 10 * size):
        at = next(c for c in single.result("BP1", [s]).curve if c.size_pages == s)
        assert curve[s].lbp_hits == at.hits and curve[s].xi_gbp + curve[s].xi_disk == 0


def test_hand_computed_write_reclaim_and_castout() -> None:
    # 2 data entries, RATIO 2 (4 directory entries), LBPs of 3, GBPOOLT 30 %.
    sim = GroupSimulator(["A", "B"], {"A": 3, "B": 3}, [GbpSetting(2, 2.0)])
    events: list[Event] = [
        ("A", "T", 1, GP),  # A: NF, disk; directory {1}
        ("B", "T", 1, GP),  # B: NF, disk
        ("A", "T", 1, SWI),  # written: data for 1, B invalidated; 1 changed of 2 > 30 %: castout 1
        ("B", "T", 1, GP),  # B: XI read, data returned (clean in the GBP)
        ("B", "T", 2, GP),  # B: NF, disk; directory {1, 2}
        ("B", "T", 3, GP),  # B: NF, disk; directory {1, 2, 3}
        ("A", "T", 4, GP),  # A: NF, disk; directory full: {1, 2, 3, 4}
        ("A", "T", 5, GP),  # A: NF, disk; reclaim the LRU entry, 1 (data: clean): XI A and B
        ("A", "T", 1, GP),  # A: XI read (invalid), no data (freed with the entry): disk; reclaim 2: XI B
    ]
    feed(sim, events)
    p = sim.points()[0]
    assert p.members["A"] == counters(
        getpages=4,
        sync_reads_nf=3,
        nf_no_data=3,
        sync_reads_xi=1,
        xi_no_data=1,
        disk_sync_reads=4,
        changed_pages_written=1,
        castout_pages=1,
        directory_reclaims=2,
        xi_due_to_reclaims=1,
    )
    assert p.members["B"] == counters(
        getpages=4,
        sync_reads_nf=3,
        nf_no_data=3,
        disk_sync_reads=3,
        sync_reads_xi=1,
        xi_data_returned=1,
        xi_due_to_writes=1,
        xi_due_to_reclaims=2,
    )
    assert p.total.gbp_hit_ratio == 1 / 8
    d = p.as_dict(4096)
    assert d["directory_entries"] == 4 and d["structure_mb"] == (2 * 4096 + 4 * 400) / 2**20
    assert d["members"]["B"]["xi_due_to_reclaims"] == 2 and d["xi_due_to_reclaims"] == 3


def test_invariants_at_every_point() -> None:
    members = ["A", "B", "C"]
    sim = GroupSimulator(members, {"A": 50, "B": 120, "C": 200}, GRID, GroupOptions(gbpoolt=100.0))
    events = trace(members, 20_000, 3000, seed=1)
    feed(sim, events)
    getpages = {m: sum(1 for e in events if e[0] == m and e[3] == GP) for m in members}
    for p in sim.points():
        for m, c in p.members.items():
            assert c.getpages == c.lbp_hits + c.sync_reads_xi + c.sync_reads_nf
            assert c.disk_sync_reads == c.xi_no_data + c.nf_no_data
            assert c.sync_reads_xi == c.xi_data_returned + c.xi_no_data
            assert c.sync_reads_nf == c.nf_data_returned + c.nf_no_data
            assert c.getpages == getpages[m]  # every update follows its getpage: none implied
        assert p.total == GbpCounters.total(list(p.members.values()))
        # Every update is written at once (GBPCACHE CHANGED, no commit delay).
        assert p.total.changed_pages_written == sum(1 for e in events if e[3] == SWI)


def test_reclaims_and_failed_writes_fall_as_the_gbp_grows() -> None:
    members = ["A", "B", "C"]
    sim = GroupSimulator(members, dict.fromkeys(members, 150), GRID, GroupOptions(gbpoolt=100.0))
    feed(sim, trace(members, 20_000, 3000, seed=2))
    points = sim.points()
    for ratio in (2.0, 5.0):
        row = [p.total for p in points if p.setting.ratio == ratio]
        reclaims = [c.directory_reclaims for c in row]
        failed = [c.writes_failed_no_storage for c in row]
        assert reclaims == sorted(reclaims, reverse=True) and reclaims[0] > 0 and reclaims[-1] == 0
        assert failed == sorted(failed, reverse=True) and failed[0] > 0 and failed[-1] == 0
    # The LBPs are the same at every point: hits and XI reads trade places, their sum does not.
    assert len({p.total.lbp_hits + p.total.sync_reads_xi for p in points}) == 1


def test_lbp_curves_at_the_current_size_equal_the_first_point() -> None:
    members = ["A", "B"]
    lbp = {"A": 80, "B": 200}
    sim = GroupSimulator(
        members,
        lbp,
        [GbpSetting(40, 2.0), GbpSetting(400, 5.0)],
        lbp_curve_sizes={"A": [20, 80, 300], "B": [200, 50]},
    )
    feed(sim, trace(members, 20_000, 2500, seed=3))
    first = sim.points()[0]
    assert first.total.directory_reclaims > 0 and first.total.xi_due_to_writes > 0
    curves = sim.lbp_curves()
    assert [p.buffers for p in curves["B"]] == [50, 200]
    for m in members:
        c = first.members[m]
        at = next(p for p in curves[m] if p.buffers == lbp[m])
        assert at == LbpPoint(
            lbp[m],
            c.getpages,
            c.lbp_hits,
            c.xi_data_returned,
            c.xi_no_data,
            c.nf_data_returned,
            c.nf_no_data,
        )


def test_without_reclaims_the_curve_equals_a_run_at_each_size() -> None:
    """A GBP bigger than the footprint never reclaims: the curve is then exact at every size."""
    members = ["A", "B"]
    events = trace(members, 8000, 600, seed=4)
    big = [GbpSetting(10_000, 5.0)]
    sizes = [1, 7, 40, 150, 1000]
    sim = GroupSimulator(members, {"A": 40, "B": 90}, big, lbp_curve_sizes={"A": sizes})
    feed(sim, events)
    for p in sim.lbp_curves()["A"]:
        other = GroupSimulator(members, {"A": p.buffers, "B": 90}, big)
        feed(other, events)
        c = other.points()[0].members["A"]
        assert (p.lbp_hits, p.xi_gbp, p.xi_disk, p.nf_gbp, p.nf_disk) == (
            c.lbp_hits,
            c.xi_data_returned,
            c.xi_no_data,
            c.nf_data_returned,
            c.nf_no_data,
        )


def test_snapshot_mid_trace_continues_as_an_uninterrupted_run() -> None:
    members = ["A", "B"]
    events = trace(members, 10_000, 1000, seed=5)
    args = (members, {"A": 60, "B": 60}, GRID[:4])
    kw = {"lbp_curve_sizes": {"A": [30, 60]}}
    whole = GroupSimulator(*args, **kw)  # type: ignore[arg-type]
    feed(whole, events)
    half = GroupSimulator(*args, **kw)  # type: ignore[arg-type]
    feed(half, events[:5000])
    first = half.take_points()
    resumed = GroupSimulator.restore(half.snapshot())
    feed(resumed, events[5000:])
    assert resumed.points() == whole.points()
    assert resumed.lbp_curves() == whole.lbp_curves()
    # take_points after the restore: only the second half; the halves add up.
    second = resumed.take_points()
    for a, b, w in zip(first, second, whole.points(), strict=True):
        assert GbpCounters.total([a.total, b.total]) == w.total


def test_sampling_at_one_is_exact_and_a_sample_is_scaled_back() -> None:
    members = ["A", "B"]
    events = trace(members, 20_000, 4000, seed=6)
    exact = GroupSimulator(members, {"A": 400, "B": 400}, [GbpSetting(400, 5.0)])
    one = GroupSimulator(members, {"A": 400, "B": 400}, [GbpSetting(400, 5.0)], GroupOptions(sample=1.0))
    half = GroupSimulator(members, {"A": 400, "B": 400}, [GbpSetting(400, 5.0)], GroupOptions(sample=0.5))
    for s in (exact, one, half):
        feed(s, events)
    assert one.points() == exact.points()
    e, h = exact.points()[0], half.points()[0]
    assert h.sample == 0.5 and h.as_dict(4096)["sample"] == 0.5
    # Half the pages, scaled back: getpages within 10 %.
    assert abs(h.total.getpages - e.total.getpages) < 0.1 * e.total.getpages


def test_options_beyond_the_reference_are_refused_with_it() -> None:
    with pytest.raises(ValueError, match="commit_every, gbpcache"):
        GroupOptions(commit_every=3, gbpcache={"T": "ALL"})
    with pytest.raises(ValueError, match="RATIO >= 2"):
        GroupSimulator(["A"], {"A": 5}, [GbpSetting(10, 1.5)])
    with pytest.raises(ValueError, match=r"ratio 0\.5"):
        GbpSetting(10, 0.5)
    with pytest.raises(ValueError, match="member 'C'"):
        feed(GroupSimulator(["A"], {"A": 5}, [GbpSetting(10, 2.0)]), [("C", "T", 1, GP)])
    # RATIO 1: every directory entry can hold changed data. Page 3's getpage finds none to
    # reclaim: all changed pages are cast out first (a write would count as failed).
    sim = GroupSimulator(["A"], {"A": 5}, [GbpSetting(2, 1.0)], GroupOptions(reference=False, gbpoolt=100.0))
    feed(sim, [("A", "T", p, f) for p in (1, 2, 3) for f in (GP, SWI)])
    assert sim.points()[0].total == counters(
        getpages=3,
        sync_reads_nf=3,
        nf_no_data=3,
        disk_sync_reads=3,
        changed_pages_written=3,
        castout_pages=2,
        directory_reclaims=1,
        xi_due_to_reclaims=1,
    )


def test_objects_that_are_not_gbp_dependent_and_gbpcache() -> None:
    events: list[Event] = [
        ("A", "LOCAL", 1, GP),
        ("B", "LOCAL", 1, GP),
        ("A", "LOCAL", 1, SWI),
        ("B", "LOCAL", 1, GP),  # not GBP-dependent: a plain LBP hit, not counted
        ("A", "NOCACHE", 1, GP),
        ("B", "NOCACHE", 1, GP),
        ("A", "NOCACHE", 1, SWI),  # GBPCACHE NONE: B invalidated, nothing written to the GBP
        ("B", "NOCACHE", 1, GP),  # XI read from disk
    ]
    opts = GroupOptions(reference=False, not_gbp_dependent=frozenset({"LOCAL"}), gbpcache={"NOCACHE": "NONE"})
    sim = GroupSimulator(["A", "B"], {"A": 5, "B": 5}, [GbpSetting(10, 5.0)], opts)
    feed(sim, events)
    p = sim.points()[0]
    assert p.members["A"] == counters(getpages=1, sync_reads_nf=1, nf_no_data=1, disk_sync_reads=1)
    assert p.members["B"] == counters(
        getpages=2, sync_reads_nf=1, nf_no_data=1, sync_reads_xi=1, xi_no_data=1, disk_sync_reads=2, xi_due_to_writes=1
    )
    # Inferred: LOCAL becomes GBP-dependent when A updates it after B read it; B's buffer,
    # cached before, is refreshed (an XI read, from the GBP that A's write filled).
    sim = GroupSimulator(
        ["A", "B"], {"A": 5, "B": 5}, [GbpSetting(10, 5.0)], GroupOptions(reference=False, infer_dependence=True)
    )
    feed(sim, events[:4])
    p = sim.points()[0]
    assert (p.members["A"].getpages, p.members["B"].getpages, p.members["B"].xi_data_returned) == (0, 1, 1)


def test_a_commit_delay_writes_at_the_commit() -> None:
    opts = GroupOptions(reference=False, commit_every=2)
    sim = GroupSimulator(["A", "B"], {"A": 5, "B": 5}, [GbpSetting(10, 5.0)], opts)
    feed(sim, [("B", "T", 1, GP), ("A", "T", 1, GP), ("A", "T", 1, SWI), ("B", "T", 1, GP)])
    assert sim.points()[0].members["B"].lbp_hits == 1  # A's change not yet written
    feed(sim, [("A", "T", 2, GP), ("A", "T", 2, SWI), ("B", "T", 1, GP)])  # the 2nd SWI commits
    p = sim.points()[0]
    assert (p.members["B"].xi_data_returned, p.members["A"].changed_pages_written) == (1, 2)
    # A commit every 10 s of a member's events: A's change is written at its first event after t=10.
    opts = GroupOptions(reference=False, commit_seconds=10.0)
    sim = GroupSimulator(["A", "B"], {"A": 5, "B": 5}, [GbpSetting(10, 5.0)], opts)
    ev: list[Event] = [("B", "T", 1, GP), ("A", "T", 1, GP), ("A", "T", 1, SWI), ("B", "T", 1, GP)]
    ev += [("A", "T", 2, GP), ("B", "T", 1, GP)]
    sim.feed(
        [e[0] for e in ev],
        [e[1] for e in ev],
        np.array([e[2] for e in ev], np.uint64),
        np.array([e[3] for e in ev], np.uint8),
        np.array([0.0, 0.0, 1.0, 5.0, 11.0, 12.0]),
    )
    p = sim.points()[0]
    assert (p.members["B"].lbp_hits, p.members["B"].xi_data_returned, p.members["A"].changed_pages_written) == (1, 1, 1)
    # A GBP checkpoint needs times.
    timed = GroupSimulator(
        ["A"], {"A": 5}, [GbpSetting(10, 5.0)], GroupOptions(reference=False, checkpoint_seconds=60.0)
    )
    with pytest.raises(ValueError, match="need the events' times"):
        feed(timed, [("A", "T", 1, GP)])
    pages, functions = np.array([1, 2], np.uint64), np.array([SWI, GP], np.uint8)
    timed.feed(["A", "A"], ["T", "T"], pages, functions, np.array([0.0, 61.0]))
    assert timed.points()[0].total.castout_pages == 1


def test_a_point_as_dict_has_every_counter() -> None:
    p = GbpPoint(GbpSetting(100, 5.0), counters(getpages=4, sync_reads_nf=4, nf_data_returned=1), {})
    d = p.as_dict(8192)
    assert list(d) == [
        "data_entries",
        "ratio",
        "directory_entries",
        "structure_mb",
        *COUNTERS,
        "getpages",
        "gbp_hit_ratio",
        "sample",
        "members",
    ]
    assert d["gbp_hit_ratio"] == 0.25 and d["structure_mb"] == (100 * 8192 + 500 * 400) / 2**20
    assert asdict(GbpSetting(10, 2.3)) == {"data_entries": 10, "ratio": 2.3}
    assert GbpSetting(10, 2.3).directory_entries == 23  # not 22 (2.3 * 10 = 22.999...)


def test_auto_sample_bounds_the_pages_that_can_hold_state() -> None:
    from poolsight.simulator.group_grid import auto_sample

    # Two LBPs of 20,000 buffers; the largest directory 1,000 x 10 = 10,000 entries: 50,000 pages.
    settings = [GbpSetting(500, 5.0), GbpSetting(1000, 10.0)]
    assert auto_sample({"A": 20_000, "B": 20_000}, settings, budget=50_000) == 1.0
    assert auto_sample({"A": 20_000, "B": 20_000}, settings, budget=10_000) == 0.2
    with pytest.raises(ValueError, match="budget"):
        auto_sample({"A": 1}, settings, budget=0)
