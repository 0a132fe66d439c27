"""The simulation engine against brute force: exact LRU, FIFO, LRU with VPSEQT, panes,
working sets, SHARDS and snapshots."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter, OrderedDict

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.simulator import SimConfig, Simulator
from poolsight.simulator.engine import PolicyName
from poolsight.simulator.result import CurvePoint

Ref = tuple[str, int, int]  # (object, page, access)
EXACT = SimConfig(mode="exact", precision_bits=16, window_panes=1000)


def brute_lru(refs: list[Ref], size: int) -> tuple[list[int], dict[str, int]]:
    """Hits by access type and by object for an LRU pool of `size` buffers."""
    cache: OrderedDict[tuple[str, int], None] = OrderedDict()
    hits = [0, 0, 0]
    by_obj: dict[str, int] = {}
    for obj, page, acc in refs:
        key = (obj, page)
        if key in cache:
            hits[acc] += 1
            by_obj[obj] = by_obj.get(obj, 0) + 1
            cache.move_to_end(key)
        else:
            cache[key] = None
            if len(cache) > size:
                cache.popitem(last=False)
    return hits, by_obj


def brute_fifo(refs: list[Ref], size: int) -> list[int]:
    cache: OrderedDict[tuple[str, int], None] = OrderedDict()
    hits = [0, 0, 0]
    for obj, page, acc in refs:
        if (obj, page) in cache:
            hits[acc] += 1
        else:
            cache[(obj, page)] = None
            if len(cache) > size:
                cache.popitem(last=False)
    return hits


def brute_vpseqt(refs: list[Ref], size: int, vpseqt: float) -> list[int]:
    """DB2-style LRU with a sequential chain: a buffer sits on the chain of its last access;
    when a steal is needed and the sequential chain holds more than VPSEQT % of the pool,
    its oldest buffer goes, else the oldest buffer of either chain."""
    chains: list[OrderedDict[tuple[str, int], int]] = [OrderedDict(), OrderedDict()]
    limit = math.floor(size * vpseqt / 100)
    hits = [0, 0, 0]
    for tick, (obj, page, acc) in enumerate(refs):
        key = (obj, page)
        chain = 1 if acc == 1 else 0
        hit = False
        for c in chains:
            if key in c:
                del c[key]
                hit = True
        chains[chain][key] = tick
        if hit:
            hits[acc] += 1
            continue
        while len(chains[0]) + len(chains[1]) > size:
            if len(chains[1]) > limit:
                victim = 1
            elif not chains[1]:
                victim = 0
            elif not chains[0]:
                victim = 1
            else:
                victim = 1 if next(iter(chains[1].values())) < next(iter(chains[0].values())) else 0
            chains[victim].popitem(last=False)
    return hits


def feed(sim: Simulator, refs: list[Ref], times: list[float] | None = None, pool: str = "BP1") -> None:
    n = len(refs)
    sim.feed(
        np.zeros(n) if times is None else np.array(times),
        pool,
        np.array([r[0] for r in refs]),
        np.array([r[1] for r in refs], dtype=np.uint64),
        np.array([r[2] for r in refs], dtype=np.uint8),
    )


def curve_hits(sim: Simulator, sizes: list[int], pool: str = "BP1") -> dict[int, CurvePoint]:
    res = sim.result(pool, sizes)
    return {row.size_pages: row for row in res.curve}


def _trace(kind: str, rng: random.Random, n: int = 3000) -> list[Ref]:
    objs = ["DB1.TS1", "DB1.IX1", "DB2.TS9"]
    if kind == "random":
        return [(rng.choice(objs), int(rng.paretovariate(0.8)) % 1500, rng.choice([0, 0, 1, 2])) for _ in range(n)]
    if kind == "scan":  # sequential scan, twice
        return [("DB1.TS1", p % 1200, 1) for p in range(n)]
    if kind == "loop":  # a loop slightly larger than some sizes
        return [("DB1.TS1", p % 700, 0) for p in range(n)]
    if kind == "single":
        return [("DB1.TS1", 7, 0)] * n
    if kind == "distinct":
        return [(rng.choice(objs), p, 0) for p in range(n)]
    raise ValueError(kind)


SIZES = [1, 2, 3, 10, 64, 699, 700, 701, 1000, 1199, 1200, 1500, 5000]


@pytest.mark.parametrize("kind", ["random", "scan", "loop", "single", "distinct"])
def test_exact_equals_brute_force_lru_at_every_size(kind: str) -> None:
    refs = _trace(kind, random.Random(7))
    sim = Simulator(EXACT)
    feed(sim, refs)
    got = curve_hits(sim, SIZES)
    res = sim.result("BP1", SIZES)
    for size in SIZES:
        hits, by_obj = brute_lru(refs, size)
        row = got[size]
        assert row.hits == sum(hits), (kind, size)
        assert row.sync_reads == sum(1 for r in refs if r[2] == 0) - hits[0]
        assert row.prefetch_pages == sum(1 for r in refs if r[2] != 0) - hits[1] - hits[2]
        for obj, o in res.objects.items():
            orow = next(c for c in o.curve if c.size_pages == size)
            assert orow.hits == by_obj.get(obj, 0), (kind, size, obj)
    assert res.refs == len(refs)
    assert res.distinct_pages == len({(o, p) for o, p, _ in refs})
    assert res.cold_misses == res.distinct_pages


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["A", "B"]), st.integers(0, 60), st.integers(0, 2)), min_size=1, max_size=400)
)
def test_exact_equals_brute_force_property(refs: list[Ref]) -> None:
    sim = Simulator(EXACT)
    feed(sim, refs)
    sizes = [1, 2, 5, 17, 40, 100]
    got = curve_hits(sim, sizes)
    for size in sizes:
        assert got[size].hits == sum(brute_lru(refs, size)[0])


def test_shards_at_rate_one_equals_exact() -> None:
    refs = _trace("random", random.Random(3))
    exact, shards = (
        Simulator(EXACT),
        Simulator(SimConfig(mode="shards", rate=1.0, precision_bits=16, window_panes=1000)),
    )
    feed(exact, refs)
    feed(shards, refs)
    assert curve_hits(exact, SIZES) == curve_hits(shards, SIZES)


@pytest.mark.parametrize(
    ("policy", "vpseqt"), [("fifo", 80.0), ("lru-vpseqt", 0.0), ("lru-vpseqt", 30.0), ("lru-vpseqt", 100.0)]
)
def test_miniature_at_rate_one_equals_full_simulation(policy: str, vpseqt: float) -> None:
    rng = random.Random(11)
    refs: list[Ref] = []
    for i in range(4000):  # random OLTP interleaved with sequential scans
        if i % 500 < 150:
            refs.append(("DB1.TS1", 10_000 + i, 1))
        else:
            refs.append(("DB1.IX1", int(rng.paretovariate(0.7)) % 800, 0))
    sizes = [1, 10, 100, 300, 600, 1000]
    sim = Simulator(SimConfig(policy=policy, policy_rate=1.0, vpseqt=vpseqt, window_panes=1000))  # type: ignore[arg-type]
    sim.set_policy_sizes("BP1", sizes)
    feed(sim, refs)
    res = sim.result("BP1")
    for row in res.curve:
        size = row.size_pages
        want = brute_fifo(refs, size) if policy == "fifo" else brute_vpseqt(refs, size, vpseqt)
        assert row.hits == pytest.approx(sum(want), abs=1e-6), (policy, vpseqt, size)
    assert res.policy == policy


def test_vpseqt_100_is_plain_lru() -> None:
    refs = _trace("random", random.Random(5))
    sizes = [5, 50, 500]
    sim = Simulator(SimConfig(policy="lru-vpseqt", vpseqt=100.0, precision_bits=16, window_panes=1000))
    sim.set_policy_sizes("BP1", sizes)
    feed(sim, refs)
    res = sim.result("BP1")
    assert res.lru_curve is not None
    for row, lru in zip(res.curve, res.lru_curve, strict=True):
        assert row.hits == pytest.approx(lru.hits)


def test_snapshot_restore_mid_stream_gives_identical_results() -> None:
    rng = random.Random(9)
    refs = _trace("random", rng, 6000)
    times = [i * 0.05 for i in range(len(refs))]  # 300 s: five panes
    for config in (
        EXACT,
        SimConfig(mode="shards", rate=0.1),
        SimConfig(mode="shards", max_samples=200),
        SimConfig(policy="fifo", policy_rate=0.5),
    ):
        a = Simulator(config)
        a.set_pool_size("BP1", 400)
        feed(a, refs[:3000], times[:3000])
        snap = a.snapshot()
        b = Simulator.restore(snap)
        # The kernel writes its part into the bytes object at the size it counted first: the parts
        # join to the snapshot, and a restored state has the same size (its maps may iterate in
        # another order, so not always the same bytes).
        assert snap == b"".join(a.snapshot_parts()) and len(b.snapshot()) == len(snap), config
        feed(a, refs[3000:], times[3000:])
        feed(b, refs[3000:], times[3000:])
        assert a.results() == b.results(), config


@pytest.mark.parametrize("older", [b"PSKERN01", b"PSKERN02", b"PSKERN03", b"PSKERN04"])
def test_a_snapshot_of_an_older_kernel_format_is_refused_by_name(older: bytes) -> None:
    """The kernel's snapshot format changed (PSKERN01 -> 02 -> 03, the 16-byte page-table slots,
    -> 04, the miniature caches' queues of uses, -> 05, the LRU ones on one LRU stack): an old one
    fails clearly, not as corrupt."""
    sim = Simulator(EXACT)
    feed(sim, _trace("random", random.Random(3), 500), [0.0] * 500)
    magic, hlen, header, kernel = sim.snapshot_parts()
    assert kernel[:8] == b"PSKERN05"
    old = b"".join([magic, hlen, header, older + kernel[8:]])
    with pytest.raises(ValueError, match=rf"older format \({older.decode()}\).*reads PSKERN05"):
        Simulator.restore(old)


@pytest.mark.parametrize("policy", ["lru-vpseqt", "fifo"])
def test_miniature_caches_sharing_one_page_index_count_as_each_cache_alone(policy: PolicyName) -> None:
    """A pool's caches (a ladder of sizes, and its size at other VPSEQT values) share one page
    index; each counts exactly the hits and misses of a simulator running that cache alone."""
    rng = random.Random(17)
    refs = [
        (f"DB1.T{rng.randrange(30)}", int(rng.paretovariate(0.7)) % 2000, rng.choice([0, 1, 1, 2]))
        for _ in range(20_000)
    ]
    times = [i * 0.01 for i in range(len(refs))]  # 200 s: four panes
    shared = Simulator(EXACT)
    shared.set_pool_policy("BP1", 600, policy, vpseqt=40.0)
    feed(shared, refs, times)
    res = shared.result("BP1")
    points = [(p.size_pages, 40.0, p) for p in res.curve] + [(p.size_pages, p.vpseqt, p) for p in res.vpseqt_curve]
    assert len(points) == (13 if policy == "lru-vpseqt" else 9)  # 9 sizes (and 4 other VPSEQT)
    for size, vpseqt, point in points:
        alone = Simulator(EXACT)
        alone.set_pool_policy("BP1", 600, policy, vpseqt=vpseqt, sizes=[size])
        feed(alone, refs, times)
        (own,) = alone.result("BP1").curve
        assert (own.hits, own.sync_reads, own.prefetch_pages, own.hit_ratio_sequential) == (
            point.hits,
            point.sync_reads,
            point.prefetch_pages,
            point.hit_ratio_sequential,
        ), (size, vpseqt)
    assert 0 < res.curve[0].hits < res.curve[-1].hits < len(refs)


def test_panes_window_and_history() -> None:
    """The curve counts only the window's getpages, but distances see all history."""
    refs = [("DB1.TS1", p, 0) for p in range(100)] * 20  # a loop of 100 pages, 20 times
    times = [i * 1.0 for i in range(len(refs))]  # 2000 s: panes of 60 s
    sim = Simulator(SimConfig(window_panes=3, pane_seconds=60.0, precision_bits=16))
    feed(sim, refs, times)
    res = sim.result("BP1", [99, 100])
    # Window: panes 31, 32, 33 (events 1860..1999 s): 140 getpages.
    assert res.window.first_pane == 31 and res.window.panes == 3
    assert res.refs == 140
    assert not res.window.warmup
    # Every reference in the window re-references a page last seen 100 references ago.
    assert res.cold_misses == 0
    rows = {r.size_pages: r for r in res.curve}
    assert rows[100].hits == 140 and rows[99].hits == 0
    ws = res.working_set
    assert ws.window_pages == 100
    assert ws.pane_pages == (60, 60, 20)


def test_working_set_equals_distinct_pages_per_pane() -> None:
    rng = random.Random(2)
    refs = [(rng.choice(["A", "B"]), rng.randrange(300), 0) for _ in range(5000)]
    times = [rng.uniform(0, 600) for _ in refs]
    times.sort()
    sim = Simulator(SimConfig(window_panes=4, pane_seconds=60.0))
    feed(sim, refs, times)
    res = sim.result("BP1", [10])
    panes: dict[int, set[tuple[str, int]]] = {}
    for (o, p, _), t in zip(refs, times, strict=True):
        panes.setdefault(int(t // 60), set()).add((o, p))
    window_ids = sorted(panes)[-4:]
    assert res.working_set.pane_pages == tuple(len(panes[i]) for i in window_ids)
    assert res.working_set.window_pages == len(set().union(*(panes[i] for i in window_ids)))
    obj_a = res.objects["A"].working_set
    assert obj_a.pane_pages == tuple(len({k for k in panes[i] if k[0] == "A"}) for i in window_ids)


def _zipf_trace(n: int, pages: int, seed: int) -> npt.NDArray[np.uint64]:
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.1, n) % pages).astype(np.uint64)


def _mae(a: Simulator, b: Simulator, sizes: list[int]) -> float:
    ra, rb = a.result("BP1", sizes), b.result("BP1", sizes)
    pairs = [(x.miss_ratio, y.miss_ratio) for x, y in zip(ra.curve, rb.curve, strict=True)]
    return float(np.mean([abs(x - y) for x, y in pairs if x is not None and y is not None]))


def _feed_pages(sim: Simulator, pages: npt.NDArray[np.uint64]) -> None:
    sim.feed(np.zeros(len(pages)), "BP1", "DB1.TS1", pages)


def test_shards_fixed_rate_and_fixed_size_track_the_exact_curve() -> None:
    pages = _zipf_trace(400_000, 100_000, 1)
    sizes = [2**k for k in range(6, 18)]
    exact = Simulator(SimConfig(window_panes=1000))
    _feed_pages(exact, pages)
    rate = Simulator(SimConfig(mode="shards", rate=0.1, window_panes=1000))
    _feed_pages(rate, pages)
    fixed = Simulator(SimConfig(mode="shards", max_samples=4000, window_panes=1000))
    _feed_pages(fixed, pages)
    assert _mae(exact, rate, sizes) < 0.01
    assert _mae(exact, fixed, sizes) < 0.02
    info = fixed.result("BP1", sizes)
    assert info.tracked_pages <= 4000
    assert info.sampling_rate < 0.2


def test_fixed_size_state_is_bounded_whatever_the_footprint() -> None:
    sizes_seen = []
    for footprint in (50_000, 400_000):
        sim = Simulator(SimConfig(mode="shards", max_samples=2000, window_panes=2))
        _feed_pages(sim, np.arange(footprint, dtype=np.uint64))
        sizes_seen.append(len(sim.snapshot()))
        assert sim.result("BP1", [10]).tracked_pages <= 2000
    assert sizes_seen[1] < 1.2 * sizes_seen[0]


def test_costs_follow_the_avoided_sync_reads() -> None:
    refs = [("DB1.TS1", p, 0) for p in range(200)] * 10
    times = [i * 0.01 for i in range(len(refs))]  # 20 s
    from poolsight.simulator import CostModel

    sim = Simulator(SimConfig(precision_bits=16), CostModel(cpu_seconds_per_sync_read=40e-6, sync_io_seconds=0.001))
    sim.set_pool_size("BP1", 100)
    feed(sim, refs, times)
    rows = {r.size_pages: r for r in sim.result("BP1", [100, 200]).curve}
    seconds = sim.result("BP1", [100]).window.seconds
    avoided = rows[100].sync_reads - rows[200].sync_reads
    assert avoided == 1800  # at 200 buffers the loop fits: only the 200 cold misses remain
    assert rows[200].avoided_sync_reads_per_s == pytest.approx(avoided / seconds)
    assert rows[200].cpu_seconds_saved_per_24h == pytest.approx(avoided / seconds * 40e-6 * 86400)
    assert rows[200].elapsed_seconds_saved_per_s == pytest.approx(avoided / seconds * 0.001)
    assert rows[100].avoided_sync_reads == 0


def test_default_ladder_spans_an_eighth_to_eight_times() -> None:
    sim = Simulator()
    sim.set_pool_size("BP1", 1000)
    feed(sim, [("A", 1, 0)])
    sizes = [r.size_pages for r in sim.result("BP1").curve]
    assert sizes[0] == 125 and sizes[-1] == 8000 and 1000 in sizes and len(sizes) == 13


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        SimConfig(mode="magic")  # type: ignore[arg-type]
    sim = Simulator()
    with pytest.raises(ValueError, match="pages has 2 values"):
        sim.feed(np.zeros(3), "BP1", "A", np.zeros(2, dtype=np.uint64))


def test_fixed_size_sampling_keeps_exactly_the_lowest_hashes() -> None:
    """Evictions (backward-shift deletes in the page table) must leave every kept page findable:
    with a sample bigger than the footprint nothing is evicted and the result is exact; with a
    small sample, re-references of kept pages are never mistaken for first touches."""
    rng = random.Random(4)
    refs = [("A", rng.randrange(5000), 0) for _ in range(40_000)]
    big = Simulator(SimConfig(mode="shards", max_samples=10_000, precision_bits=16, window_panes=1000))
    exact = Simulator(SimConfig(precision_bits=16, window_panes=1000))
    feed(big, refs)
    feed(exact, refs)
    assert curve_hits(big, SIZES) == curve_hits(exact, SIZES)
    small = Simulator(SimConfig(mode="shards", max_samples=300, window_panes=1000))
    feed(small, refs)
    res = small.result("BP1", [10])
    # Each kept page is cold once; all later touches of it are re-references. The cold
    # weight is then about the footprint (5000), not the sampled touches (~40000 * 300/5000).
    assert res.tracked_pages == 300
    assert 3000 < res.cold_misses < 8000


def test_histogram_export_accounts_for_every_re_reference() -> None:
    """The kernel's histogram export (what the pipeline writes per pane): its weights add up to
    the getpages that were not first touches, in the buckets brute force puts them."""
    refs = _trace("random", random.Random(8), 2000)
    sim = Simulator(EXACT)
    feed(sim, refs)
    k = sim._kernel
    hist = {a: dict(k.histogram(0, a)) for a in range(3)}
    res = sim.result("BP1", [1])
    assert sum(sum(h.values()) for h in hist.values()) == res.refs - res.cold_misses
    # Distances by brute force, bucketed as the kernel reports them.
    stack: list[tuple[str, int]] = []
    want: Counter[tuple[int, int]] = Counter()
    for obj, page, acc in refs:
        key = (obj, page)
        if key in stack:
            d = len(stack) - 1 - stack.index(key)
            stack.remove(key)
            lo = next(i for i in range(d + 1) if k.bucket_range(i)[0] <= d < sum(k.bucket_range(i)))
            want[(acc, lo)] += 1
        stack.append(key)
    got = Counter({(a, b): int(w) for a, h in hist.items() for b, w in h.items()})
    assert got == want


def test_histogram_bounds_are_the_stack_depths_each_bucket_holds() -> None:
    """(lowest, highest depth) per bucket: depth d hits in any pool of at least d buffers. The
    buckets tile the depths without gaps, and brute force puts every re-reference in its bucket."""
    refs = _trace("random", random.Random(9), 4000)
    sim = Simulator(SimConfig(mode="exact", precision_bits=4, window_panes=1000))  # wide buckets above 16
    feed(sim, refs)
    hist = sim.histogram("BP1", 0, panes=1000)
    assert hist[0][0] == 1
    for (_, hi, _), (lo2, _, _) in itertools.pairwise(sorted(hist)):
        assert lo2 > hi  # no overlap (gaps only where no getpage fell)
    depths: Counter[int] = Counter()
    stack: list[tuple[str, int]] = []
    for obj, page, acc in refs:
        if (obj, page) in stack:
            if acc == 0:
                depths[len(stack) - stack.index((obj, page))] += 1
            stack.remove((obj, page))
        stack.append((obj, page))
    for lo, hi, count in hist:
        assert count == sum(n for d, n in depths.items() if lo <= d <= hi), (lo, hi)
    assert any(hi - lo >= 1 for lo, hi, _ in hist), "no bucket wider than one depth: the test tested nothing"
