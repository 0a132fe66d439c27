"""Benchmarks, chaos and profiling: run by `make bench-*` and `make chaos` from the checkout, never
shipped in the wheel (the peers they measure against, libcachesim (GPL) and Playwright, are
benchmark-only)."""
