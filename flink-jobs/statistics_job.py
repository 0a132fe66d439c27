"""The statistics job: pool, object I/O, GBP and backup statistics from Kafka, derived
metrics from poolsight.simulator.metrics, the latest pool attributes joined per (source,
pool) from keyed state; into pool_stats, object_io_stats, gbp_stats, backup_stats.
The collectors' dead-letter topic and undecodable records go into dead_letter.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from poolsight.flink_jobs.common import (
    JobOptions,
    dead_letter,
    environment,
    kafka_source,
    main,
    row_type,
    run_keyed,
    to_row,
)
from poolsight.names import ATTRIBUTES_TOPIC, DEADLETTER_TOPIC, STATS_TOPIC
from poolsight.sql.tables import BY_NAME

OUTPUTS = ("pool_stats", "object_io_stats", "gbp_stats", "backup_stats", "dead_letter")
COLLECTOR = "flink-statistics"
NS = "poolsight.v1."


@dataclass(frozen=True)
class StatisticsOptions:
    registry_url: str
    cpu_us_per_sync_read: float = 30.0


def _ms(v: Any) -> int | None:
    """timestamp-micros as fastavro returns it (datetime) or as an int, to epoch ms."""
    if v is None:
        return None
    if isinstance(v, int):
        return v // 1000
    return round(float(v.timestamp()) * 1000)


def _times(rec: dict[str, Any], *names: str) -> dict[str, Any]:
    return {**rec, **{n: _ms(rec.get(n)) for n in names}}


def pool_stats_row(rec: dict[str, Any], attrs: dict[str, Any] | None) -> dict[str, Any]:
    from poolsight.simulator.metrics import pool_metrics

    m = pool_metrics(rec, None if attrs is None else attrs.get("vpsize"))
    a = attrs or {}
    return {
        **_times(rec, "interval_start", "interval_end"),
        **m,
        "flags": "; ".join(m["flags"]) or None,
        "vpsize": a.get("vpsize"),
        "vpseqt": a.get("vpseqt"),
        "dwqt": a.get("dwqt"),
        "vdwqt": a.get("vdwqt"),
        "page_size": a.get("page_size"),
    }


def object_io_row(rec: dict[str, Any], cpu_seconds_per_read: float) -> dict[str, Any]:
    out = _times(rec, "interval_start", "interval_end")
    seconds = (out["interval_end"] - out["interval_start"]) / 1000
    per_s = rec["sync_reads"] / seconds if seconds > 0 else None
    avg = rec.get("sync_read_avg_ms")
    return {
        **out,
        "seconds": seconds,
        "sync_reads_per_second": per_s,
        "sync_io_seconds_per_second": None if per_s is None or avg is None else per_s * avg / 1000,
        "cpu_seconds_per_second": None if per_s is None else per_s * cpu_seconds_per_read,
    }


def gbp_row(rec: dict[str, Any]) -> dict[str, Any]:
    from poolsight.simulator.metrics import gbp_metrics

    return {**_times(rec, "interval_start", "interval_end"), **gbp_metrics(rec)}


def backup_row(rec: dict[str, Any]) -> dict[str, Any]:
    from poolsight.simulator.metrics import backup_analysis

    a = backup_analysis(rec)
    out = {**_times(rec, "event_time"), "bottleneck": a["bottleneck"], "bottleneck_means": a["bottleneck_means"]}
    for kind in ("BM", "MC"):
        k = kind.lower()
        out[f"{k}_threads"] = sum(1 for t in rec["threads"] if t["kind"] == kind)
        for share in ("io", "msgq", "waitq"):
            out[f"{k}_{share}_share"] = a["sides"].get(kind, {}).get(share)
    out["mbytes"] = sum(t["mbytes"] for t in rec["threads"] if t["kind"] == "MC")
    return out


def _statistics_function(o: StatisticsOptions) -> Any:
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext
    from pyflink.datastream.state import ValueStateDescriptor

    tags = {name: OutputTag(name, row_type(BY_NAME[name])) for name in OUTPUTS if name != "pool_stats"}

    class Statistics(KeyedProcessFunction):  # type: ignore[misc]
        def open(self, runtime_context: RuntimeContext) -> None:
            from poolsight.schemas.wire import AvroDecoder

            self.decoder = AvroDecoder(o.registry_url)
            self.attrs = runtime_context.get_state(ValueStateDescriptor("attributes", Types.PICKLED_BYTE_ARRAY()))

        def process_element(self, value: Any, ctx: Any) -> Any:
            from poolsight.schemas.wire import DecodeError

            key = ctx.get_current_key()
            raw = bytes(value[1]) if value[1] is not None else None
            try:
                full, rec = self.decoder.decode(raw)
            except DecodeError as exc:
                yield tags["dead_letter"], dead_letter(COLLECTOR, str(exc), raw, value, key)
                return
            kind = full.removeprefix(NS)
            try:
                if kind == "PoolAttributes":
                    self.attrs.update({k: rec.get(k) for k in ("vpsize", "vpseqt", "dwqt", "vdwqt", "page_size")})
                elif kind == "PoolStats":
                    yield to_row(BY_NAME["pool_stats"], pool_stats_row(rec, self.attrs.value()))
                elif kind == "ObjectIOStats":
                    yield (
                        tags["object_io_stats"],
                        to_row(BY_NAME["object_io_stats"], object_io_row(rec, o.cpu_us_per_sync_read * 1e-6)),
                    )
                elif kind == "GbpStats":
                    yield tags["gbp_stats"], to_row(BY_NAME["gbp_stats"], gbp_row(rec))
                elif kind == "BackupStats":
                    yield tags["backup_stats"], to_row(BY_NAME["backup_stats"], backup_row(rec))
                elif kind == "DeadLetter":
                    yield (
                        tags["dead_letter"],
                        to_row(
                            BY_NAME["dead_letter"],
                            {
                                **rec,
                                "detected_at": _ms(rec.get("detected_at")) or int(time.time() * 1000),
                                "topic": value[2],
                            },
                        ),
                    )
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
                yield tags["dead_letter"], dead_letter(COLLECTOR, f"unusable {full}: {exc!r}", raw, value, key)

    return Statistics(), tags


def submit(settings: Any, job: JobOptions, o: StatisticsOptions, name: str = "poolsight-statistics") -> str:

    env, t_env = environment(settings, name, job)
    kafka_source(t_env, settings, "stats_source", [STATS_TOPIC.name, ATTRIBUTES_TOPIC.name, DEADLETTER_TOPIC.name], job)
    function, tags = _statistics_function(o)
    return run_keyed(env, t_env, "stats_source", function, "pool_stats", tags, name, "statistics")


def _main() -> None:
    main(submit, StatisticsOptions, "poolsight-statistics")


if __name__ == "__main__":
    _main()
