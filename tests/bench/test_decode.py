"""`make bench-decode` runs end to end on a small corpus and reports both paths, decoding and encoding."""

from __future__ import annotations

from bench import decode as bench_decode


def test_bench_decode_reports_both_paths_both_ways_on_a_small_corpus() -> None:
    r = bench_decode.main(["--getpages", "20000", "--runs", "1", "--job-runs", "1", "--mode", "shards"])
    assert r["getpages"] >= 40_000
    for key in (
        "kernel_getpages_per_s",
        "fastavro_getpages_per_s",
        "job_kernel_getpages_per_s",
        "encode_kernel_getpages_per_s",
        "encode_fastavro_getpages_per_s",
    ):
        assert r[key] > 0
    assert r["ratio"] > 0 and r["job_path_ratio"] > 0 and r["encode_ratio"] > 0
    # The pool-policy phase: both jobs over the same records, a snapshot of every pool the
    # mixed scenario's generator sends getpages for.
    assert r["job_lru_only_getpages_per_s"] > 0 and r["job_pool_policy_getpages_per_s"] > 0
    pools = {b.pool for b in bench_decode.corpus("mixed", 20000, 4096, seed=3)[2]}
    assert set(r["snapshot_mb"]) == set(r["snapshot_ms"]) == pools
