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
