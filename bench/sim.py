"""`make bench-sim`: simulator throughput and accuracy, against libcachesim in the same run.

Traces: the CloudPhysics block trace of ../shared/data/traces and a generated
DB2-like trace (>= 10 M getpages over >= 1 M pages). For each: the refs/s of
the exact whole-curve simulation, of SHARDS at R = 0.01 and of fixed-size
SHARDS, beside libcachesim's LRU at one size (reading its own binary format,
its fastest path); the miss ratio at that size from both (they must agree);
and the mean absolute error of each sampled curve against the exact one.
Speeds are medians of `--runs` rounds (3) in which every peer runs once, and
the ratio is the median of the rounds' ratios. The last line is one JSON object.

libcachesim is GPL-3.0: a benchmark peer only (the `bench` extra), never
imported by poolsight at run time.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.simulator import SimConfig, Simulator
from poolsight.simulator.result import CurvePoint, PoolResult

ROOT = Path(__file__).resolve().parent.parent
CLOUDPHYSICS = ROOT.parent / "shared" / "data" / "traces" / "cloudPhysicsIO.csv"
BATCH = 1 << 16
FIXED_SIZE_SAMPLES = 32_768
Pages = npt.NDArray[np.uint64]


def cloudphysics_pages(path: Path = CLOUDPHYSICS) -> Pages:
    if not path.exists():
        raise SystemExit(f"bench-sim: {path} not found; give the CloudPhysics trace with --cloudphysics PATH")
    with path.open() as fh:
        return np.array([int(row["lbn"]) for row in csv.DictReader(fh)], dtype=np.uint64)


def generated_pages(n: int, footprint: int, seed: int = 42) -> Pages:
    """A DB2-like mix: skewed random getpages over table and index pages (a few hot
    index pages, a long Zipf tail), interleaved with sequential scans."""
    rng = np.random.default_rng(seed)
    kinds = rng.random(n)
    pages = np.empty(n, dtype=np.uint64)
    hot = kinds < 0.55  # Zipf over the whole footprint, hot pages spread by a permutation
    perm = rng.permutation(footprint).astype(np.uint64)
    pages[hot] = perm[(rng.zipf(1.2, hot.sum()) - 1) % footprint]
    uni = (kinds >= 0.55) & (kinds < 0.85)  # uniform random: the cold tail
    pages[uni] = rng.integers(0, footprint, uni.sum(), dtype=np.uint64)
    seq = kinds >= 0.85  # sequential scans of runs of 64 pages
    k = int(seq.sum())
    starts = rng.integers(0, footprint // 64, (k + 63) // 64, dtype=np.uint64) * 64
    pages[seq] = np.repeat(starts, 64)[:k] + np.tile(np.arange(64, dtype=np.uint64), (k + 63) // 64)[:k]
    return pages


def run_sim(pages: Pages, config: SimConfig, sizes: list[int]) -> tuple[float, PoolResult, int]:
    sim = Simulator(config)
    # Filled, not np.zeros: calloc's pages would fault in (zero pages, 96 MB) inside the timed feed,
    # charging the harness's allocation to the simulator (4-5 % of the exact run).
    zeros = np.full(len(pages), 0.0)
    t0 = time.perf_counter()
    for i in range(0, len(pages), BATCH):
        sim.feed(zeros[i : i + BATCH], "BP1", "OBJ", pages[i : i + BATCH])
    elapsed = time.perf_counter() - t0
    return len(pages) / elapsed, sim.result("BP1", sizes), len(sim.snapshot())


def run_libcachesim(pages: Pages, size: int) -> tuple[float, float]:
    import libcachesim as lcs

    dt = np.dtype([("ts", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
    rec = np.zeros(len(pages), dtype=dt)
    rec["id"], rec["size"], rec["next"] = pages, 1, -1
    with tempfile.NamedTemporaryFile(suffix=".oracleGeneral") as fh:
        rec.tofile(fh.name)
        reader = lcs.TraceReader(fh.name, lcs.TraceType.ORACLE_GENERAL_TRACE)
        cache = lcs.LRU(cache_size=size)
        t0 = time.perf_counter()
        miss_ratio, _ = cache.process_trace(reader)
        elapsed = time.perf_counter() - t0
    return len(pages) / elapsed, float(miss_ratio)


def _miss_ratio(c: CurvePoint) -> float:
    if c.miss_ratio is None:
        raise ValueError(f"no getpages at size {c.size_pages}: no miss ratio")
    return c.miss_ratio


def mae(a: PoolResult, b: PoolResult) -> float:
    return float(np.mean([abs(_miss_ratio(x) - _miss_ratio(y)) for x, y in zip(a.curve, b.curve, strict=True)]))


def bench_trace(name: str, pages: Pages, runs: int) -> dict[str, Any]:
    distinct = len(np.unique(pages))
    # 40 sizes, log-spaced from 1/1000 of the footprint to all of it.
    sizes = sorted({max(1, int(x)) for x in np.geomspace(max(1, distinct / 1000), distinct, 40)})
    one_size = max(1, distinct // 10)
    sizes = sorted({*sizes, one_size})
    window = SimConfig(window_panes=2)
    rounds = []
    for r in range(runs):
        # Peers alternate within a round, and the figures are medians over rounds: on a noisy
        # 2-core machine a single run of either swings by a quarter.
        exact_rps, exact, exact_bytes = run_sim(pages, window, sizes)
        shards_rps, shards, shards_bytes = run_sim(pages, SimConfig(mode="shards", rate=0.01, window_panes=2), sizes)
        fixed_rps, fixed, fixed_bytes = run_sim(
            pages, SimConfig(mode="shards", max_samples=FIXED_SIZE_SAMPLES, window_panes=2), sizes
        )
        lcs_rps, lcs_miss = run_libcachesim(pages, one_size)
        rounds.append((exact_rps, shards_rps, fixed_rps, lcs_rps))
        print(
            f"  {name} round {r + 1}/{runs}: exact {exact_rps / 1e6:.2f} M refs/s, libcachesim "
            f"{lcs_rps / 1e6:.2f} M refs/s, {exact_rps / lcs_rps:.2f}x",
            flush=True,
        )
    exact_rps, shards_rps, fixed_rps, lcs_rps = (float(np.median([x[k] for x in rounds])) for k in range(4))
    ratios = [x[0] / x[3] for x in rounds]
    exact_ratio = float(np.median(ratios))
    ours = next(_miss_ratio(r) for r in exact.curve if r.size_pages == one_size)
    out = {
        "trace": name,
        "getpages": len(pages),
        "distinct_pages": distinct,
        "lru_size": one_size,
        "exact_refs_per_s": exact_rps,
        "shards_refs_per_s": shards_rps,
        "fixed_size_refs_per_s": fixed_rps,
        "libcachesim_lru_refs_per_s": lcs_rps,
        "runs": runs,
        "exact_vs_libcachesim": exact_ratio,
        "exact_vs_libcachesim_per_run": ratios,
        "shards_vs_libcachesim": shards_rps / lcs_rps,
        "fixed_size_vs_libcachesim": fixed_rps / lcs_rps,
        "exact_miss_ratio_at_lru_size": ours,
        "libcachesim_miss_ratio": lcs_miss,
        "shards_mae": mae(exact, shards),
        "fixed_size_mae": mae(exact, fixed),
        "fixed_size_rate": fixed.sampling_rate,
        "fixed_size_state_bytes": fixed_bytes,
        "shards_state_bytes": shards_bytes,
        "exact_state_bytes": exact_bytes,
    }
    print(f"\n{name}: {len(pages):,} getpages over {distinct:,} pages; LRU at {one_size:,} buffers")
    print(f"  medians of {runs} runs:")
    print(f"  {'exact (whole curve)':28} {exact_rps / 1e6:8.2f} M refs/s  {exact_ratio:6.2f}x libcachesim")
    print(
        f"  {'SHARDS R=0.01':28} {shards_rps / 1e6:8.2f} M refs/s  {shards_rps / lcs_rps:6.2f}x   "
        f"MAE {out['shards_mae']:.4f}"
    )
    print(
        f"  {f'SHARDS fixed size {FIXED_SIZE_SAMPLES}':28} {fixed_rps / 1e6:8.2f} M refs/s  "
        f"{fixed_rps / lcs_rps:6.2f}x   MAE {out['fixed_size_mae']:.4f}  state {fixed_bytes / 2**20:.1f} MiB "
        f"(final rate {fixed.sampling_rate:.4g})"
    )
    print(f"  {'libcachesim LRU, one size':28} {lcs_rps / 1e6:8.2f} M refs/s")
    print(f"  miss ratio at {one_size:,}: poolsight exact {ours:.6f}, libcachesim {lcs_miss:.6f}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--getpages", type=int, default=12_000_000)
    p.add_argument("--footprint", type=int, default=2_000_000)
    p.add_argument("--cloudphysics", type=Path, default=CLOUDPHYSICS)
    p.add_argument("--runs", type=int, default=3, help="rounds of every peer; figures are medians (default 3)")
    a = p.parse_args()
    if a.runs < 1:
        p.error("--runs must be at least 1")
    results = [bench_trace("cloudPhysicsIO", cloudphysics_pages(a.cloudphysics), a.runs)]
    gen = generated_pages(a.getpages, a.footprint)
    results.append(bench_trace("generated", gen, a.runs))
    big = results[-1]
    summary = {
        k: big[k]
        for k in (
            "exact_refs_per_s",
            "shards_refs_per_s",
            "libcachesim_lru_refs_per_s",
            "exact_vs_libcachesim",
            "shards_vs_libcachesim",
        )
    }
    summary.update(
        {
            "shards_mae": max(r["shards_mae"] for r in results),
            "fixed_size_mae": max(r["fixed_size_mae"] for r in results),
            "fixed_size_state_bytes": max(r["fixed_size_state_bytes"] for r in results),
            "traces": {r["trace"]: r for r in results},
        }
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
