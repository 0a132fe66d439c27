"""The simulation engine: what each buffer pool would do at other sizes and settings.

A compiled kernel (`poolsight._kernel`, Rust, in `kernel/`) keeps exact or
SHARDS-sampled LRU reuse distances, per-pane histograms per pool, object and
access type, working sets and miniature caches; this package is its typed
Python API, the trace readers and the offline `poolsight simulate`. Nothing
here imports Kafka, Flink or Trino.
"""

from poolsight.simulator.engine import CostModel, SimConfig, Simulator

__all__ = ["CostModel", "SimConfig", "Simulator"]
