"""The statistics job's rows: statistics records to the columns of pool_stats,
object_io_stats, gbp_stats and backup_stats, with the metrics of
poolsight.simulator.metrics. Plain functions, without PyFlink."""

from __future__ import annotations

from typing import Any

from poolsight.simulator.metrics import backup_analysis, gbp_metrics, pool_metrics


def ms(v: Any) -> int | None:
    """timestamp-micros as fastavro returns it (datetime) or as an int, to epoch ms."""
    if v is None:
        return None
    if isinstance(v, int):
        return v // 1000
    return round(float(v.timestamp()) * 1000)


def _times(rec: dict[str, Any], *names: str) -> dict[str, Any]:
    return {**rec, **{n: ms(rec.get(n)) for n in names}}


def pool_stats_row(rec: dict[str, Any], attrs: dict[str, Any] | None) -> dict[str, Any]:
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
        "pgsteal": a.get("pgsteal"),
        "pgfix": a.get("pgfix"),
        "frame_size": a.get("frame_size"),
        "spsize": a.get("spsize") or None,  # 0: no simulated pool
        "spseqt": a.get("spseqt") if a.get("spsize") else None,
    }


def memory_row(rec: dict[str, Any]) -> dict[str, Any]:
    return _times(rec, "interval_start", "interval_end")


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
    return {**_times(rec, "interval_start", "interval_end"), **gbp_metrics(rec)}


def backup_row(rec: dict[str, Any]) -> dict[str, Any]:
    a = backup_analysis(rec)
    out = {**_times(rec, "event_time"), "bottleneck": a["bottleneck"], "bottleneck_means": a["bottleneck_means"]}
    for kind in ("BM", "MC"):
        k = kind.lower()
        out[f"{k}_threads"] = sum(1 for t in rec["threads"] if t["kind"] == kind)
        for share in ("io", "msgq", "waitq"):
            out[f"{k}_{share}_share"] = a["sides"].get(kind, {}).get(share)
    out["mbytes"] = sum(t["mbytes"] for t in rec["threads"] if t["kind"] == "MC")
    out["findings"] = "; ".join(a["findings"]) or None
    return out


def backup_thread_rows(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """One backup_thread row per BM and MC thread of a BackupStats record."""
    a = backup_analysis(rec)
    base = {
        "source": rec["source"],
        "event_time": ms(rec["event_time"]),
        "operation": rec.get("operation"),
        "database": rec.get("database"),
        "position": rec.get("position"),
    }
    return [{**base, **t, "thread": t["number"]} for t in a["threads"]]
