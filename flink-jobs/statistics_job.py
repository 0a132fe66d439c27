"""The statistics job: what the subsystem measured. Pool, object I/O, GBP and backup
statistics and the host's memory from Kafka, derived metrics from poolsight.simulator.metrics,
the latest pool attributes joined per (source, pool) from keyed state; into pool_stats,
object_io_stats, gbp_stats, backup_stats, system_memory. The I/O events (read and write I/O batches) added up per pool,
object, pane and I/O type in keyed state (io_panes.py) into io_pane. The collectors'
dead-letter topic and undecodable records go into dead_letter.
"""

from __future__ import annotations

import time
from typing import Any

from pyflink.common.typeinfo import Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

from poolsight.flink_jobs.bundle_timing import untimed_bundles
from poolsight.flink_jobs.common import Keyed, dead_letter, environment, kafka_source, main, row_type, run_keyed, to_row
from poolsight.flink_jobs.heap_trim import HeapTrim
from poolsight.flink_jobs.io_panes import KINDS, IoPanes
from poolsight.flink_jobs.options import JobOptions, StatisticsOptions
from poolsight.flink_jobs.statistics_rows import (
    backup_row,
    backup_thread_rows,
    gbp_row,
    memory_row,
    ms,
    object_io_row,
    pool_stats_row,
)
from poolsight.flink_jobs.timers import wake_at
from poolsight.names import ATTRIBUTES_TOPIC, DEADLETTER_TOPIC, IO_TOPIC, STATS_TOPIC
from poolsight.schemas.tables import BY_NAME
from poolsight.schemas.wire import AvroDecoder, DecodeError

OUTPUTS = (
    "pool_stats",
    "object_io_stats",
    "io_pane",
    "gbp_stats",
    "backup_stats",
    "backup_thread",
    "system_memory",
    "dead_letter",
)
COLLECTOR = "flink-statistics"
# The pool attributes pool_stats rows carry (the latest seen for the key).
ATTRIBUTE_KEYS = (
    "vpsize",
    "vpseqt",
    "dwqt",
    "vdwqt",
    "page_size",
    "pgsteal",
    "pgfix",
    "frame_size",
    "spsize",
    "spseqt",
)
NS = "poolsight.v1."
# pool_stats is the main output; every other table is a side output.
TAGS = {name: OutputTag(name, row_type(BY_NAME[name])) for name in OUTPUTS if name != "pool_stats"}


class Statistics(KeyedProcessFunction):  # type: ignore[misc]
    """Statistics records to table rows; the latest pool attributes per key in keyed state."""

    def __init__(self, options: StatisticsOptions) -> None:
        super().__init__()
        self.o = options

    def open(self, runtime_context: RuntimeContext) -> None:
        self.decoder = AvroDecoder(self.o.registry)
        self.attrs = runtime_context.get_state(ValueStateDescriptor("attributes", Types.PICKLED_BYTE_ARRAY()))
        self.io = runtime_context.get_state(ValueStateDescriptor("io_panes", Types.PICKLED_BYTE_ARRAY()))
        self.trim = HeapTrim()
        untimed_bundles()  # bundle_timing.py: a bundle ends with its work

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.trim.maybe()
        key = ctx.get_current_key()
        raw = bytes(value[1]) if value[1] is not None else None
        try:
            full, rec = self.decoder.decode(raw)
        except DecodeError as exc:
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, str(exc), raw, value, key)
            return
        kind = full.removeprefix(NS)
        if full in KINDS:
            yield from self._io(key, full, rec, raw, value, ctx)
            return
        try:
            if kind == "PoolAttributes":
                self.attrs.update({k: rec.get(k) for k in ATTRIBUTE_KEYS})
            elif kind == "PoolStats":
                yield to_row(BY_NAME["pool_stats"], pool_stats_row(rec, self.attrs.value()))
            elif kind == "ObjectIOStats":
                yield (
                    TAGS["object_io_stats"],
                    to_row(BY_NAME["object_io_stats"], object_io_row(rec, self.o.cpu_us_per_sync_read * 1e-6)),
                )
            elif kind == "SystemMemory":
                yield TAGS["system_memory"], to_row(BY_NAME["system_memory"], memory_row(rec))
            elif kind == "GbpStats":
                yield TAGS["gbp_stats"], to_row(BY_NAME["gbp_stats"], gbp_row(rec))
            elif kind == "BackupStats":
                yield TAGS["backup_stats"], to_row(BY_NAME["backup_stats"], backup_row(rec))
                for t in backup_thread_rows(rec):
                    yield TAGS["backup_thread"], to_row(BY_NAME["backup_thread"], t)
            elif kind == "DeadLetter":
                yield (
                    TAGS["dead_letter"],
                    to_row(
                        BY_NAME["dead_letter"],
                        {
                            **rec,
                            "detected_at": ms(rec.get("detected_at")) or int(time.time() * 1000),
                            "topic": value[2],
                        },
                    ),
                )
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, f"unusable {full}: {exc!r}", raw, value, key)

    def _io(self, key: str, full: str, rec: dict[str, Any], raw: bytes | None, value: Any, ctx: Any) -> Any:
        panes: IoPanes | None = self.io.value()
        if panes is None:
            source, _, pool = key.partition("|")
            panes = IoPanes(source, pool, self.o.pane_seconds, self.o.cpu_us_per_sync_read)
        try:
            panes.add(full, rec)
        except (KeyError, TypeError, ValueError) as exc:
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, f"unusable {full}: {exc}", raw, value, key)
            return
        rows = panes.due(self.o.lateness_seconds)
        panes.last_wall = time.time()
        self.io.update(panes)
        for r in rows:
            yield TAGS["io_pane"], to_row(BY_NAME["io_pane"], r)
        # The pool's last panes: written after a quiet spell (whole seconds: one timer per burst).
        wake_at(ctx, time.time() + self.o.idle_flush_seconds)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        panes: IoPanes | None = self.io.value()
        if panes is None or not panes.cells:
            return
        if time.time() - panes.last_wall < self.o.idle_flush_seconds - 1e-3:
            return  # records came since: their own timer is due later
        rows = panes.take()
        self.io.update(panes)
        for r in rows:
            yield TAGS["io_pane"], to_row(BY_NAME["io_pane"], r)


def submit(settings: Any, job: JobOptions, o: StatisticsOptions, name: str = "poolsight-statistics") -> str:
    """Build the job and submit it to the session cluster; return its job id."""
    env, t_env = environment(settings, name, job)
    topics = [STATS_TOPIC.name, IO_TOPIC.name, ATTRIBUTES_TOPIC.name, DEADLETTER_TOPIC.name]
    kafka_source(t_env, settings, "stats_source", topics, job)
    return run_keyed(env, t_env, "stats_source", name, Keyed(Statistics(o), "pool_stats", TAGS, "statistics"))


def _main() -> None:
    main(submit, StatisticsOptions, "poolsight-statistics")


if __name__ == "__main__":
    _main()
