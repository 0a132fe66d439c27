"""The engine's reference group simulation against the brute force of the reference model
(`group_bruteforce.py`), counter for counter, per member and in total, on random
three-member traces over a grid of GBP sizes and ratios where directory reclaims, data
entry reclaims, failed writes and castouts all happen; and the invariants of
DATA-SHARING.md on the brute force itself."""

from __future__ import annotations

import itertools
import random
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from poolsight.simulator.group import GbpCounters, GbpSetting, GroupOptions, GroupSimulator
from tests.simulator.group_bruteforce import GETPAGE, NAMES, RELEASE, SWI, Event, Group, brute_force

MEMBERS = ("DB1A", "DB1B", "DB1C")
LBP_SIZES = {"DB1A": 20, "DB1B": 32, "DB1C": 45}
OBJECTS = {"DB1.TS1": 180, "DB1.TS2": 110, "DB1.IX1": 60, "DB1.IX2": 25}  # pages each
DATA_ENTRIES = (3, 7, 16, 48)
RATIOS = (2.0, 2.5, 5.0)
GRID = [GbpSetting(data_entries=d, ratio=r) for d in DATA_ENTRIES for r in RATIOS]


def random_trace(seed: int, n: int) -> list[Event]:
    """`n` events in global time order: members interleaved, pages skewed (weight 1/(k+1)
    over a shuffled page order per object), about 30 % SWIs -- most on the member's last
    getpage, possibly after other members' events in between, some on a page the member
    may not hold (the implied getpage) -- and a few releases."""
    rng = random.Random(seed)
    objects = list(OBJECTS)
    obj_weights = [OBJECTS[o] for o in objects]
    pages = {o: rng.sample(range(10_000, 10_000 + 3 * k), k) for o, k in OBJECTS.items()}
    page_weights = {o: [1 / (i + 1) for i in range(k)] for o, k in OBJECTS.items()}
    last: dict[str, tuple[str, int]] = {}

    def draw() -> tuple[str, int]:
        obj = rng.choices(objects, obj_weights)[0]
        return obj, rng.choices(pages[obj], page_weights[obj])[0]

    events: list[Event] = []
    while len(events) < n:
        m = rng.choices(MEMBERS, (5, 3, 2))[0]
        u = rng.random()
        if u < 0.26 and m in last:
            events.append((m, *last.pop(m), SWI))
        elif u < 0.30:
            events.append((m, *draw(), SWI))
        elif u < 0.33 and m in last:
            events.append((m, *last[m], RELEASE))
        else:
            obj, page = draw()
            last[m] = (obj, page)
            events.append((m, obj, page, GETPAGE))
    return events


def engine(
    events: Sequence[Event],
    gbpoolt: float,
    chunks: int,
    lbp_sizes: Mapping[str, int] = LBP_SIZES,
    grid: Sequence[GbpSetting] = GRID,
) -> list[tuple[GbpSetting, dict[str, dict[str, int]]]]:
    sim = GroupSimulator(MEMBERS, lbp_sizes, grid, GroupOptions(reference=True, gbpoolt=gbpoolt))
    bounds = np.linspace(0, len(events), chunks + 1).astype(int)
    for lo, hi in itertools.pairwise(bounds):
        part = events[lo:hi]
        sim.feed(
            np.array([e[0] for e in part]),
            np.array([e[1] for e in part]),
            np.array([e[2] for e in part], dtype=np.uint64),
            np.array([e[3] for e in part], dtype=np.uint8),
        )
    out = []
    for point in sim.points():
        got = {m: as_dict(c) for m, c in point.members.items()}
        got["total"] = as_dict(point.total)
        out.append((point.setting, got))
    return out


def as_dict(c: GbpCounters) -> dict[str, int]:
    return {name: getattr(c, name) for name in NAMES}


@pytest.mark.parametrize(("seed", "gbpoolt"), [(1, 30.0), (2, 30.0), (3, 100.0)])
def test_reference_equals_brute_force(seed: int, gbpoolt: float) -> None:
    events = random_trace(seed, 4000)
    got = engine(events, gbpoolt, chunks=3)
    assert [s for s, _ in got] == GRID
    mismatches: list[str] = []
    seen: dict[str, int] = dict.fromkeys(NAMES, 0)
    paths: Counter[str] = Counter()
    for setting, counters in got:
        group = Group(MEMBERS, LBP_SIZES, setting.data_entries, setting.ratio, gbpoolt)
        group.feed(events)
        want = group.counters()
        paths += group.paths
        assert set(counters) == set(want)
        for who in want:
            for name in NAMES:
                if counters[who][name] != want[who][name]:
                    mismatches.append(f"{setting} {who} {name}: engine {counters[who][name]} brute {want[who][name]}")
        for name in NAMES:
            seen[name] += want["total"][name] > 0
    assert mismatches == []
    # The grid exercises every rule somewhere (at least at some points).
    for name in ("directory_reclaims", "xi_due_to_reclaims", "xi_due_to_writes", "castout_pages"):
        assert seen[name] > 0, name
    for name in ("xi_data_returned", "xi_no_data", "nf_data_returned", "nf_no_data", "lbp_hits"):
        assert seen[name] == len(GRID), name
    # ... and every branch where the model text left a choice (group_bruteforce's docstring).
    branches = {"swi_implies_getpage", "swi_on_invalid_buffer", "write_creates_directory_entry"}
    branches |= {"steal_frees_directory_entry", "steal_frees_bare_entry", "data_reclaim_leaves_bare_entry"}
    branches |= {"directory_reclaim_frees_data"}
    assert branches <= set(paths), branches - set(paths)
    if gbpoolt == 100.0:
        assert seen["writes_failed_no_storage"] > 0
        assert paths["write_retried"] == sum(c["total"]["writes_failed_no_storage"] for _, c in got)
    else:  # castouts at GBPOOLT keep changed pages under the data entries: no failed write
        assert seen["writes_failed_no_storage"] == 0
        assert seen["data_entry_reclaims"] > 0


@pytest.mark.parametrize("seed", range(20, 26))
def test_reference_equals_brute_force_at_the_edges(seed: int) -> None:
    """LBPs down to one buffer, one data entry, GBPOOLT 0 (a castout after every write)
    and 100 (none), fractional ratios: still counter for counter."""
    rng = random.Random(seed)
    events = random_trace(seed, 1500)
    lbp_sizes = {m: rng.choice([1, 2, 5, 20, 60]) for m in MEMBERS}
    grid = [GbpSetting(data_entries=d, ratio=r) for d in (1, 2, 5, 30, 200) for r in (2.0, 3.3, 10.0)]
    gbpoolt = rng.choice([0.0, 12.5, 70.0, 100.0])
    for setting, counters in engine(events, gbpoolt, chunks=2, lbp_sizes=lbp_sizes, grid=grid):
        want = brute_force(events, MEMBERS, lbp_sizes, setting.data_entries, setting.ratio, gbpoolt)
        assert counters == want, (setting, lbp_sizes, gbpoolt)


def test_the_engine_feed_in_one_chunk_or_many_is_the_same() -> None:
    events = random_trace(4, 1500)
    assert engine(events, 30.0, chunks=1) == engine(events, 30.0, chunks=7)


@pytest.mark.parametrize(("seed", "gbpoolt"), [(1, 30.0), (3, 100.0)])
def test_brute_force_invariants(seed: int, gbpoolt: float) -> None:
    events = random_trace(seed, 4000)
    for setting in [*GRID, GbpSetting(data_entries=2000, ratio=2.0)]:
        got = brute_force(events, MEMBERS, LBP_SIZES, setting.data_entries, setting.ratio, gbpoolt)
        for who, c in got.items():
            assert c["getpages"] == c["lbp_hits"] + c["sync_reads_xi"] + c["sync_reads_nf"], who
            assert c["sync_reads_xi"] == c["xi_data_returned"] + c["xi_no_data"], who
            assert c["sync_reads_nf"] == c["nf_data_returned"] + c["nf_no_data"], who
            assert c["disk_sync_reads"] == c["xi_no_data"] + c["nf_no_data"], who
        for name in NAMES:
            assert got["total"][name] == sum(got[m][name] for m in MEMBERS), name
        # Every SWI writes once; every getpage (explicit, or implied by an SWI) is counted.
        assert got["total"]["changed_pages_written"] == sum(e[3] == SWI for e in events)
        explicit = sum(e[3] == GETPAGE for e in events)
        assert explicit <= got["total"]["getpages"] <= explicit + got["total"]["changed_pages_written"]
    # A GBP larger than every page of the trace: no reclaim of either kind, no failed write.
    big = got["total"]
    assert big["directory_reclaims"] == big["data_entry_reclaims"] == big["writes_failed_no_storage"] == 0
    assert big["xi_due_to_reclaims"] == 0


def test_brute_force_one_member_is_a_plain_lru() -> None:
    """One member and a GBP larger than the trace: no XI, no reclaim, so its LBP is an LRU
    of its size (an SWI on a page not held is a getpage, as in the reference)."""
    events = [e for e in random_trace(5, 4000) if e[0] == "DB1A"]
    lru: OrderedDict[tuple[str, int], None] = OrderedDict()
    hits = getpages = 0
    for _, obj, page, function in events:
        key = (obj, page)
        if function == GETPAGE or (function == SWI and key not in lru):
            getpages += 1
            if key in lru:
                hits += 1
                lru.move_to_end(key)
            else:
                lru[key] = None
                if len(lru) > LBP_SIZES["DB1A"]:
                    lru.popitem(last=False)
    got = brute_force(events, ["DB1A"], LBP_SIZES, data_entries=2000, ratio=2.0)["DB1A"]
    assert (got["getpages"], got["lbp_hits"], got["sync_reads_nf"]) == (getpages, hits, getpages - hits)
    assert got["sync_reads_xi"] == got["directory_reclaims"] == 0
    # Small GBPs: a directory reclaim may invalidate the member's own buffers, never a write.
    for setting in GRID:
        small = brute_force(events, ["DB1A"], LBP_SIZES, setting.data_entries, setting.ratio)["DB1A"]
        assert small["xi_due_to_writes"] == 0
        assert small["sync_reads_xi"] <= small["xi_due_to_reclaims"]
