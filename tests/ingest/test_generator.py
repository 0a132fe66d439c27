"""The workload generator: deterministic, self-consistent, and in agreement with the simulator."""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from poolsight.ingest.generator import FileSink, Generator
from poolsight.ingest.scenario import ScenarioError, load
from poolsight.simulator import SimConfig, Simulator
from poolsight.simulator.trace import TraceReader


def _generate(tmp: Path, scenario: str, getpages: int, seed: int = 7) -> Path:
    out = tmp / f"{scenario}-{seed}"
    Generator(load(scenario), seed=seed, event_rate=50_000).run(FileSink(out), getpages=getpages)
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_same_seed_same_workload(tmp_path: Path) -> None:
    a = _generate(tmp_path / "a", "mixed", 50_000, seed=5)
    b = _generate(tmp_path / "b", "mixed", 50_000, seed=5)
    c = _generate(tmp_path / "c", "mixed", 50_000, seed=6)
    digest = [hashlib.sha256((d / "trace.csv").read_bytes()).hexdigest() for d in (a, b, c)]
    assert digest[0] == digest[1] != digest[2]


def test_io_elapsed_times_follow_the_pools_devices(tmp_path: Path) -> None:
    """Each I/O's elapsed time varies around its pool's device median plus a transfer per
    further page; the devices change no getpage (their randomness is a stream of its own)."""
    import dataclasses
    import statistics

    def run(sc: Any, out: Path) -> list[dict[str, Any]]:
        Generator(sc, seed=3, event_rate=50_000).run(FileSink(out), getpages=300_000)
        return _jsonl(out / "io.jsonl")

    sc = load("day-posting")
    io = run(sc, tmp_path / "a")
    spec = sc.pools["BP1"]
    for kind, io_types, median_us in (
        ("read", {0}, spec.sync_read_us),
        ("read", {1, 2, 3}, spec.sync_read_us),
        ("write", {0, 1}, spec.write_us),
    ):
        own = [
            e["elapsed_us"] - (e["pages"] - 1) * spec.page_transfer_us
            for e in io
            if e["pool"] == "BP1" and e["kind"] == kind and e["io_type"] in io_types
        ]
        assert len(own) > 50, (kind, io_types)
        assert statistics.median(own) == pytest.approx(median_us, rel=0.1), (kind, io_types)
        assert min(own) > 0 and max(own) > 1.5 * median_us  # varied, never negative
    multi = [e for e in io if e["kind"] == "read" and e["pages"] > 1]
    assert statistics.mean(e["elapsed_us"] for e in multi) > spec.sync_read_us + spec.page_transfer_us

    slow = dataclasses.replace(
        sc, pools={n: dataclasses.replace(p, sync_read_us=4 * p.sync_read_us) for n, p in sc.pools.items()}
    )
    io_slow = run(slow, tmp_path / "b")
    assert (tmp_path / "a" / "trace.csv").read_bytes() == (tmp_path / "b" / "trace.csv").read_bytes()
    sync = [e["elapsed_us"] for e in io if e["kind"] == "read" and e["io_type"] == 0]
    sync_slow = [e["elapsed_us"] for e in io_slow if e["kind"] == "read" and e["io_type"] == 0]
    assert statistics.median(sync_slow) == pytest.approx(4 * statistics.median(sync), rel=0.1)


@pytest.mark.parametrize("scenario", ["day-posting", "data-sharing"])
def test_statistics_add_up_to_the_trace(tmp_path: Path, scenario: str) -> None:
    out = _generate(tmp_path, scenario, 400_000)
    with (out / "trace.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    gp: Counter[tuple[str, str]] = Counter()
    upd: Counter[tuple[str, str]] = Counter()
    for r in rows:
        key = (r["source"], r["pool"])
        if r["function"] == "GP":
            gp[key] += 1
        elif r["function"] == "SWI":
            upd[key] += 1
    io = _jsonl(out / "io.jsonl")
    sync: Counter[tuple[str, str]] = Counter()
    written: Counter[tuple[str, str]] = Counter()
    for e in io:
        key = (e["source"], e["pool"])
        if e["kind"] == "read" and e["io_type"] == 0:
            sync[key] += 1
        elif e["kind"] == "write":
            written[key] += e["pages"]
    stats: Counter[tuple[str, str, str]] = Counter()
    for s in _jsonl(out / "pool_stats.jsonl"):
        for k in ("getpages_random", "getpages_sequential", "buffer_updates", "pages_written"):
            stats[(s["source"], s["pool"], k)] += s[k]
        # A data-sharing group reads a sequential getpage of a GBP-dependent page synchronously.
        stats[(s["source"], s["pool"], "sync_reads")] += s["sync_reads_random"] + s["sync_reads_sequential"]
    assert set(gp) == {(s, p) for s, p, _ in stats}
    for source, pool in gp:
        assert (
            stats[(source, pool, "getpages_random")] + stats[(source, pool, "getpages_sequential")]
            == gp[(source, pool)]
        )
        assert stats[(source, pool, "sync_reads")] == sync[(source, pool)]
        assert stats[(source, pool, "buffer_updates")] == upd[(source, pool)]
        assert stats[(source, pool, "pages_written")] == written[(source, pool)]
    if scenario == "data-sharing":  # a read from disk is an outcome 2 or 4 (XI or NF, no data), one sync read each
        from_disk = Counter((r["source"], r["pool"]) for r in rows if r["outcome"] in ("2", "4"))
        assert from_disk == sync
        returned = Counter((r["source"], r["pool"]) for r in rows if r["outcome"] in ("1", "3"))
        gbp: Counter[tuple[str, str]] = Counter()
        for g in _jsonl(out / "gbp_stats.jsonl"):
            if g["scope"] == "member":
                gbp[(g["source"], g["gbp"][1:])] += g["xi_reads_data_returned"] + g["nf_reads_data_returned"]
        assert +gbp == returned


@pytest.mark.parametrize("scenario", ["mixed", "data-sharing", "paging"])
def test_statistics_report_reads_back_as_the_same_counters(tmp_path: Path, scenario: str) -> None:
    """The generator's statistics report text, read by the OMEGAMON parser (an independent
    reader of that format), gives every interval's mapped counters exactly (paging: the page-ins
    for read and write too)."""
    from poolsight.ingest.stats_omegamon import COUNTERS, parse

    out = tmp_path / "g"
    Generator(load(scenario), seed=4, event_rate=2_000).run(FileSink(out), getpages=400_000)
    want = _jsonl(out / "pool_stats.jsonl")
    got = parse((out / "statistics-report.txt").read_text(), "statistics-report.txt")
    assert got.rejected == [] and not got.unknown
    assert len(got.of("pool_stats")) == len(want) > 4  # several intervals (and members) of several pools
    last = max(w["interval_end"] for w in want)
    assert {round(w["interval_seconds"], 6) for w in want if w["interval_end"] < last} == {60.0}  # STATIME, exactly
    fields = sorted({f for _, f in COUNTERS.values()})
    for w, g in zip(want, got.of("pool_stats"), strict=True):
        assert (g["source"], g["pool"]) == (w["source"], w["pool"])
        assert 0 <= w["interval_start"] - g["interval_start"] < 10_000  # the report prints hundredths
        assert 0 <= w["interval_end"] - g["interval_end"] < 10_000
        assert {f: g[f] for f in fields} == {f: w[f] for f in fields}, (w["source"], w["pool"])
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "stats",
            str(out / "statistics-report.txt"),
            "--format",
            "omegamon",
            "--output",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == len(want)


def test_simulate_exact_reproduces_the_generators_sync_reads(tmp_path: Path) -> None:
    """Two independent implementations of the same semantics: the generator's buffer-by-buffer
    pool and the simulator's stack distances, at each pool's configured size, within 1%."""
    sc = load("day-posting")
    out = _generate(tmp_path, "day-posting", 1_500_000)
    sim = Simulator(SimConfig(window_panes=1000))
    for batch in TraceReader(out / "trace.csv").batches():
        sim.feed(batch.times, batch.pools, batch.objects, batch.pages, batch.access, batch.function)
    generated: Counter[str] = Counter()
    for s in _jsonl(out / "pool_stats.jsonl"):
        generated[f"{s['source']}/{s['pool']}"] += s["sync_reads_random"]
    for key, reads in generated.items():
        size = sc.pools[key.split("/")[1]].vpsize
        [row] = sim.result(key, [size]).curve
        assert reads > 1000
        assert abs(row.sync_reads - reads) / reads < 0.01, (key, row.sync_reads, reads)


def test_scenario_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "pools: [{name: BP1, vpsize: 10}]\nobjects: [{name: A, pool: BP9, pages: 5}]\n"
        "patterns: [{name: p, kind: random, share: 1, objects: {A: 1}}]\n"
    )
    with pytest.raises(ScenarioError, match=r"bad.yaml: object A is in unknown pool BP9"):
        load(bad)
    bad.write_text(
        "pools: [{name: BP1, vpsize: 10}]\nobjects: [{name: A, pool: BP1, pages: 5}]\n"
        "patterns: [{name: p, kind: random, share: 0.5, objects: {A: 1}}]\n"
    )
    with pytest.raises(ScenarioError, match=r"add up to 0\.5"):
        load(bad)
    bad.write_text(
        "pools: [{name: BP1, vpsize: 10, sync_read_us: -1}]\nobjects: [{name: A, pool: BP1, pages: 5}]\n"
        "patterns: [{name: p, kind: random, share: 1, objects: {A: 1}}]\n"
    )
    with pytest.raises(ScenarioError, match=r"pool BP1: I/O times and io_sigma must be >= 0"):
        load(bad)
    bad.write_text("pools: [\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load(bad)
    known = "consolidation, data-sharing, day-posting, mixed, night-balancing, paging, write-storm"
    with pytest.raises(ScenarioError, match=f"known: {known}"):
        load("no-such-scenario")


# ---------------------------------------------------------------- DB2's simulated pool (SPSIZE)

SPSIZE_SCENARIO = """
name: simulated-pool
members: [DB2A]
interval_seconds: 1
pools:
  - {name: BP3, vpsize: 800, vpseqt: 80, dwqt: 30, vdwqt: 5, spsize: 400}
objects:
  - {name: APP.T, pool: BP3, pages: 6000}
  - {name: APP.T~0, pool: BP3, pages: 1500, type: INDEXSPACE, index_levels: 3}
patterns:
  - {name: probe, kind: random, share: 1.0, objects: {APP.T: 1}, index: APP.T~0, skew: 0.8, update_ratio: 0.3}
"""


def _brute_force_avoidable(out: Path, pool: str, spsize: int) -> list[tuple[int, int, int, int]]:
    """Per statistics interval (by its end, µs): (sync reads, avoidable sync reads, avoidable
    delay µs), from the trace and I/O events alone, with two plain LRU lists: the pool at its
    VPSIZE and DB2's simulated pool at VPSIZE + SPSIZE, both resized at an -ALTER."""
    from collections import OrderedDict

    attrs = [a for a in _jsonl(out / "attributes.jsonl") if a["pool"] == pool]
    sizes = [(a["event_time"], a["vpsize"]) for a in attrs]  # the first, then one per -ALTER
    ends = [s["interval_end"] for s in _jsonl(out / "pool_stats.jsonl") if s["pool"] == pool]
    # The pool's sync reads in order, with their elapsed times: one per random miss.
    elapsed = iter(
        e["elapsed_us"]
        for e in _jsonl(out / "io.jsonl")
        if e["pool"] == pool and e["kind"] == "read" and e["io_type"] == 0
    )
    small: OrderedDict[tuple[str, str], None] = OrderedDict()
    big: OrderedDict[tuple[str, str], None] = OrderedDict()
    cap = 0
    out_rows = {end: [0, 0, 0] for end in ends}
    interval = iter(ends)
    end = next(interval)
    with (out / "trace.csv").open() as fh:
        for r in csv.DictReader(fh):
            if r["pool"] != pool or r["function"] != "GP":
                continue  # an update changes no page's place in the LRU list
            t_us = round(float(r["time"]) * 1e6)
            while sizes and sizes[0][0] <= t_us:
                cap = sizes.pop(0)[1]
            while t_us >= end:
                end = next(interval)
            key = (r["object"], r["page"])
            hits = []
            for lru, size in ((small, cap), (big, cap + spsize)):
                hits.append(key in lru)
                lru[key] = None
                lru.move_to_end(key)
                while len(lru) > size:
                    lru.popitem(last=False)
            assert hits[0] == (r["hit"] == "Y"), r  # the generator's pool is this LRU list
            if not hits[0]:
                us = next(elapsed)
                out_rows[end][0] += 1
                if hits[1]:
                    out_rows[end][1] += 1
                    out_rows[end][2] += us
    assert next(elapsed, None) is None
    return [(end, *v) for end, v in out_rows.items()]


def test_simulated_pool_counts_what_a_bigger_lru_list_would_have_found(tmp_path: Path) -> None:
    """DSNB432I's avoidable sync reads and delay per interval equal a brute-force count: random
    getpages the pool missed and an LRU list of VPSIZE + SPSIZE held, before and after an -ALTER
    of VPSIZE (the simulated pool follows it: SPSIZE stays on top of the new VPSIZE)."""
    from poolsight.ingest.generator import Alter

    path = tmp_path / "sp.yaml"
    path.write_text(SPSIZE_SCENARIO)
    out = tmp_path / "g"
    gen = Generator(load(path), seed=9, event_rate=50_000, alters=[Alter.parse("BP3:VPSIZE=1200@2.5")])
    gen.run(FileSink(out), getpages=200_000)
    stats = [s for s in _jsonl(out / "pool_stats.jsonl") if s["pool"] == "BP3"]
    want = _brute_force_avoidable(out, "BP3", 400)
    assert len(stats) == len(want) >= 4
    for s, (end, sync, avoidable, delay_us) in zip(stats, want, strict=True):
        assert s["interval_end"] == end and s["sync_reads_random"] == sync
        assert s["sim_sync_reads_avoidable_random"] == avoidable
        assert s["sim_sync_io_delay_avoidable_ms"] == pytest.approx(delay_us / 1e3, abs=1e-9)
        assert (s["sim_sync_reads_avoidable_sequential"], s["sim_async_pages_avoidable"]) == (0, 0)  # random only
    assert sum(w[2] for w in want) > 1000  # the bigger pool avoids a good share: the check has teeth
    assert sum(w[2] for w in want) < sum(w[1] for w in want)
    attrs = [a for a in _jsonl(out / "attributes.jsonl") if a["pool"] == "BP3"]
    assert [(a["vpsize"], a["spsize"], a["spseqt"]) for a in attrs] == [(800, 400, 80.0), (1200, 400, 80.0)]


def test_a_pool_without_spsize_reports_no_simulated_pool(tmp_path: Path) -> None:
    out = _generate(tmp_path, "mixed", 50_000)
    for s in _jsonl(out / "pool_stats.jsonl"):
        has = s["pool"] == "BP2"  # the mixed scenario's pool with an SPSIZE
        assert (s["sim_sync_reads_avoidable_random"] is not None) == has
        assert (s["sim_sync_io_delay_avoidable_ms"] is not None) == has
    for a in _jsonl(out / "attributes.jsonl"):
        assert (a["spsize"], a["spseqt"]) == ((5000, 50.0) if a["pool"] == "BP2" else (None, None))


def test_display_output_reads_back_as_the_same_intervals(tmp_path: Path) -> None:
    """display-bufferpool.txt (one -DISPLAY BUFFERPOOL(BPn) DETAIL per pool and interval, with
    DSNB431I/432I for the pool with SPSIZE), read by the display parser, gives every interval's
    counters and DB2's simulated-pool figures; `poolsight ingest stats` reads it whole."""
    from poolsight.ingest.stats_display import STATS, parse

    out = tmp_path / "g"
    Generator(load("mixed"), seed=4, event_rate=5_000).run(FileSink(out), getpages=1_500_000)
    want = _jsonl(out / "pool_stats.jsonl")
    got = parse((out / "display-bufferpool.txt").read_text(), "display-bufferpool.txt")
    assert got.rejected == []
    assert len(got.of("pool_stats")) == len(want) > 8
    fields = sorted({f for pairs in STATS.values() for _, f in pairs} - {"pageins_read", "pageins_write"})
    for w, g in zip(want, got.of("pool_stats"), strict=True):
        assert (g["source"], g["pool"], g["origin"]) == (w["source"], w["pool"], "display")
        assert abs(w["interval_end"] - g["interval_end"]) < 10_000  # the console prints hundredths
        assert abs(w["interval_start"] - g["interval_start"]) <= 500_000  # DSNB409I prints seconds
        assert {f: g[f] for f in fields if w[f] is not None} == {f: w[f] for f in fields if w[f] is not None}
        if w["pool"] == "BP2":
            assert g["sim_sync_io_delay_avoidable_ms"] == pytest.approx(w["sim_sync_io_delay_avoidable_ms"], abs=0.5)
        else:
            assert g["sim_sync_reads_avoidable_random"] is None and g["sim_sync_io_delay_avoidable_ms"] is None
    assert sum(w["sim_sync_reads_avoidable_random"] or 0 for w in want) > 0
    for a in got.of("pool_attributes"):
        sp = (5000, 50.0) if a["pool"] == "BP2" else (None, None)
        assert (a["vpsize"], a["vpseqt"], a["spsize"], a["spseqt"]) == (
            {"BP1": 30000, "BP2": 15000}[a["pool"]],
            {"BP1": 40.0, "BP2": 50.0}[a["pool"]],
            *sp,
        )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "stats",
            str(out / "display-bufferpool.txt"),
            "--output",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert sum(1 for x in lines if x["schema"] == "pool_stats") == len(want)


@pytest.mark.parametrize("prefetch", ["getpages", "page-list"])
def test_a_gbp_dependent_scan_reads_by_prefetch_only_with_page_lists(tmp_path: Path, prefetch: str) -> None:
    """APP.HISTORY made GBP-dependent: by default (the reference model) each sequential getpage of
    a page not in the pool is a sync read (SYNC READ I/O (S)); with page-list prefetch it is read
    by a dynamic prefetch (outcome 5) and no scan getpage reads synchronously."""
    import dataclasses

    base = load("data-sharing")
    history = dataclasses.replace(base.objects["APP.HISTORY"], gbp_dependent=True)
    gbp1 = dataclasses.replace(base.gbps["GBP1"], prefetch=prefetch)
    sc = dataclasses.replace(base, objects={**base.objects, "APP.HISTORY": history}, gbps={**base.gbps, "GBP1": gbp1})
    out = tmp_path / prefetch
    Generator(sc, seed=4, event_rate=20_000).run(FileSink(out), getpages=200_000)
    with (out / "trace.csv").open() as fh:
        scan = Counter(r["outcome"] for r in csv.DictReader(fh) if r["object"] == "APP.HISTORY")
    bp1 = [p for p in _jsonl(out / "pool_stats.jsonl") if p["pool"] == "BP1"]
    sequential_sync = sum(p["sync_reads_sequential"] for p in bp1)
    requests = sum(p["dyn_prefetch_requests"] for p in bp1)
    if prefetch == "getpages":
        assert (scan["5"], requests) == (0, 0)
        assert sequential_sync == scan["2"] + scan["4"] > 0
    else:
        assert scan["1"] + scan["2"] + scan["3"] + scan["4"] + sequential_sync == 0
        assert requests == scan["5"] > 0


def test_paged_out_buffers_count_page_ins_from_the_pages_read_and_written(tmp_path: Path) -> None:
    """The paging scenario: 5 % of the unfixed BP1's buffers paged out, BP2 page-fixed. Each interval's
    PAGE-INS REQUIRED FOR READ/WRITE are 5 % of the pages its read and write I/O events (io.jsonl,
    counted here) moved for BP1, and none for BP2; a scenario without `memory` states none. (The 5 %
    is the model's own rule, ingest/README.md; what is independent here is the count of pages.)"""
    out = tmp_path / "paging"
    Generator(load("paging"), seed=7, event_rate=3_000).run(FileSink(out), duration=240)
    moved: Counter[tuple[str, str, int]] = Counter()
    stats = _jsonl(out / "pool_stats.jsonl")
    ends = sorted({s["interval_end"] for s in stats})
    for io in _jsonl(out / "io.jsonl"):
        end = next(e for e in ends if io["time"] * 1e6 <= e)
        moved[io["pool"], io["kind"], end] += io["pages"]
    assert len(stats) == 2 * len(ends) == 8
    for s in stats:
        read, written = moved[s["pool"], "read", s["interval_end"]], moved[s["pool"], "write", s["interval_end"]]
        share = 0.05 if s["pool"] == "BP1" else 0.0
        assert (s["pageins_read"], s["pageins_write"]) == (round(share * read), round(share * written)), s
    assert sum(s["pageins_read"] for s in stats) > 1000 and sum(s["pageins_write"] for s in stats) > 100
    plain = _jsonl(_generate(tmp_path, "day-posting", 50_000) / "pool_stats.jsonl")
    assert {(s["pageins_read"], s["pageins_write"]) for s in plain} == {(None, None)}


def test_a_write_storm_writes_synchronously_what_the_pool_steals_changed(tmp_path: Path) -> None:
    """The write-storm scenario (BP3 small, DWQT/VDWQT 90 %, update-heavy): every BP3 write I/O in
    io.jsonl is a one-page synchronous write, the statistics count them as sync writes, and they are
    above 5 % of the write I/Os and 1/s (sync_writes_high's thresholds)."""
    out = tmp_path / "storm"
    Generator(load("write-storm"), seed=7, event_rate=3_000).run(FileSink(out), duration=240)
    writes = [io for io in _jsonl(out / "io.jsonl") if io["kind"] == "write" and io["pool"] == "BP3"]
    stats = [s for s in _jsonl(out / "pool_stats.jsonl") if s["pool"] == "BP3"]
    assert sum(s["sync_writes"] for s in stats) == len(writes) > 10_000
    assert {(io["io_type"], io["pages"]) for io in writes} == {(0, 1)}
    for s in stats:
        assert s["sync_writes"] / s["interval_seconds"] > 1
        assert s["sync_writes"] > 0.05 * (s["sync_writes"] + s["async_writes"])
