"""Derived buffer pool metrics, computed exactly as ../shared/DOMAIN.md defines them.

One module for every collector and for the Flink statistics job. Inputs are
PoolStats records (schemas/pool_stats.v1.avsc): counters may be null, and a
metric whose inputs are missing is None, never a guess. A negative system hit
ratio is kept and flagged (seed 000), never clamped.
"""

from __future__ import annotations

from typing import Any

PREFETCH_PAGES = ("seq_prefetch_pages", "list_prefetch_pages", "dyn_prefetch_pages")
PREFETCH_READS = ("seq_prefetch_reads", "list_prefetch_reads", "dyn_prefetch_reads")
SYNC_READS = ("sync_reads_random", "sync_reads_sequential")


def _sum(rec: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    total = 0
    for k in keys:
        v = rec.get(k)
        if v is None:
            return None
        total += int(v)
    return total


def _div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def pool_metrics(rec: dict[str, Any], vpsize: int | None = None) -> dict[str, Any]:
    """Application and system hit ratio, read I/O per second, pages per write, I/O intensity.

    vpsize: the pool's size in buffers (from pool attributes); else buffers_allocated."""
    getpages = _sum(rec, ("getpages_random", "getpages_sequential"))
    sync_reads = _sum(rec, SYNC_READS)
    prefetch_pages = _sum(rec, PREFETCH_PAGES)
    prefetch_reads = _sum(rec, PREFETCH_READS)
    seconds = rec.get("interval_seconds")
    pages_read = None if sync_reads is None or prefetch_pages is None else sync_reads + prefetch_pages
    read_ios = None if sync_reads is None or prefetch_reads is None else sync_reads + prefetch_reads
    writes = _sum(rec, ("sync_writes", "async_writes"))
    written = rec.get("pages_written")
    buffers = vpsize or rec.get("buffers_allocated")
    app_hr = _div(None if getpages is None or sync_reads is None else getpages - sync_reads, getpages)
    sys_hr = _div(None if getpages is None or pages_read is None else getpages - pages_read, getpages)
    ppw = _div(written, writes)
    out: dict[str, Any] = {
        "getpages": getpages,
        "application_hit_ratio": app_hr,
        "system_hit_ratio": sys_hr,
        "read_ios_per_second": _div(read_ios, seconds),
        "sync_reads_per_second": _div(sync_reads, seconds),
        "pages_read_per_second": _div(pages_read, seconds),
        "pages_per_write": ppw,
        "io_intensity": _div(None if pages_read is None or written is None else pages_read + written, buffers),
        "flags": [],
    }
    found, async_found, lreads = (
        rec.get("lbp_pages_found"),
        rec.get("lbp_async_pages_found"),
        rec.get("lbp_logical_reads"),
    )
    # Seed 004: (pool_data_lbp_pages_found - pool_async_data_lbp_pages_found) / logical reads.
    out["luw_lbp_hit_ratio"] = None if found is None or async_found is None else _div(found - async_found, lreads)
    out["luw_hit_ratio"] = luw_hit_ratio(
        rec.get("lbp_logical_reads"), rec.get("lbp_physical_reads"), rec.get("lbp_async_reads")
    )
    if sys_hr is not None and sys_hr < 0:
        out["flags"].append("negative system hit ratio: prefetch reads pages nobody asks for (seed 000)")
    if ppw is not None and ppw < 10:
        out["flags"].append("pages per write below 10: consider lowering VDWQT (seed 000)")
    return out


def luw_hit_ratio(logical: float | None, physical: float | None, async_reads: float | None) -> float | None:
    """Db2 LUW: (l_reads - (p_reads - async_reads)) / l_reads (seed 004)."""
    if logical is None or physical is None or async_reads is None:
        return None
    return _div(logical - (physical - async_reads), logical)


GROUP_READS = (
    "reads_data_returned",
    "reads_no_data_dir_existed",
    "reads_no_data_dir_created",
    "reads_no_data_dir_not_created",
)


def gbp_metrics(rec: dict[str, Any]) -> dict[str, Any]:
    """z/OS: data returned over all XI and NF reads; LUW pureScale: (GBP logical - physical) / logical.

    A member's record (XI and NF reads) gives its GBP hit ratio, disk sync reads and XI reads per
    1000 GBP-dependent getpages; a group's (GDETAIL) its read hit ratio over the structure's
    reads, the share of data entries holding changed pages, and the reclaims per second. Rates
    need the record's interval; counters a record lacks give None."""
    luw = None
    if rec.get("gbp_logical_reads") is not None and rec.get("gbp_physical_reads") is not None:
        luw = _div(rec["gbp_logical_reads"] - rec["gbp_physical_reads"], rec["gbp_logical_reads"])
    seconds = _seconds(rec.get("interval_start"), rec.get("interval_end"))
    xi_data, xi_nodata = rec.get("xi_reads_data_returned"), rec.get("xi_reads_no_data")
    disk = None if xi_nodata is None or rec.get("nf_reads_no_data") is None else xi_nodata + rec["nf_reads_no_data"]
    reads = _sum(rec, GROUP_READS)
    return {
        "gbp_hit_ratio": gbp_hit_ratio(
            xi_data, xi_nodata, rec.get("nf_reads_data_returned"), rec.get("nf_reads_no_data")
        ),
        "luw_gbp_hit_ratio": luw,
        # Seed 004: 10000 * NUM_GBP_FULL / COMMIT_SQL_STMTS; great 0, good below 5.
        "gbp_full_per_10k_commits": _scaled(rec.get("write_failed_no_storage"), rec.get("commits"), 10_000),
        "cf_wait_us_per_call": _scaled(rec.get("cf_wait_ms"), rec.get("cf_waits"), 1000),
        # DATA-SHARING.md: a member's disk sync reads are its XI and NF reads the GBP returned no data for.
        "disk_sync_reads_per_second": _div(disk, seconds),
        "xi_reads_per_1000_getpages": _scaled(
            None if xi_data is None or xi_nodata is None else xi_data + xi_nodata,
            rec.get("gbp_dependent_getpages"),
            1000,
        ),
        "castout_pages_per_second": _div(rec.get("castout_pages"), seconds),
        # GDETAIL: the structure's reads (DSNB784I/785I), all members together, prefetch included.
        "group_read_hit_ratio": _div(rec.get("reads_data_returned"), reads),
        "directory_reclaims_per_second": _div(rec.get("directory_reclaims"), seconds),
        "xi_due_to_reclaims_per_second": _div(rec.get("xi_due_to_reclaims"), seconds),
        # Changed pages held (snapshot) over data entries: compare with GBPOOLT (%, castout threshold).
        "changed_pages_share": _div(rec.get("changed_pages_snapshot"), rec.get("data_entries")),
    }


def _seconds(start: Any, end: Any) -> float | None:
    """An interval's length from its ends: epoch microseconds, or datetimes as fastavro reads them."""
    if start is None or end is None:
        return None
    if isinstance(start, int | float) and isinstance(end, int | float):
        return (end - start) / 1e6
    return float((end - start).total_seconds())


def _scaled(num: float | None, den: float | None, scale: float) -> float | None:
    ratio = None if num is None else _div(num, den)
    return None if ratio is None else scale * ratio


def gbp_hit_ratio(
    xi_data: float | None, xi_nodata: float | None, nf_data: float | None, nf_nodata: float | None
) -> float | None:
    """z/OS GBP: reads with data returned / all four XI and NF reads (seed 001, 6.1)."""
    parts = (xi_data, xi_nodata, nf_data, nf_nodata)
    if any(p is None for p in parts):
        return None
    return _div(xi_data + nf_data, sum(parts))  # type: ignore[operator,arg-type]


def backup_analysis(rec: dict[str, Any]) -> dict[str, Any]:
    """Seed 003: per thread, the share of its time in I/O, MsgQ (waiting for a buffer) and WaitQ
    (waiting for a control message), averaged per side; the side whose threads spend the larger
    share in I/O is the bottleneck (BM: reading the table spaces on backup, writing them on
    restore; MC: the backup media)."""
    sides: dict[str, dict[str, float]] = {}
    for kind in ("BM", "MC"):
        rows = [t for t in rec["threads"] if t["kind"] == kind and t["total_seconds"] > 0]
        if not rows:
            continue
        sides[kind] = {
            share: sum(t[f"{share}_seconds"] / t["total_seconds"] for t in rows) / len(rows)
            for share in ("io", "msgq", "waitq")
        }
    bottleneck = None
    if len(sides) == 2:
        bottleneck = "MC" if sides["MC"]["io"] >= sides["BM"]["io"] else "BM"
    what = {
        ("MC", "BACKUP"): "writing to the backup target (add sessions or devices)",
        ("MC", "RESTORE"): "reading the backup image",
        ("BM", "BACKUP"): "reading the table spaces",
        ("BM", "RESTORE"): "writing the table spaces",
    }
    means = what.get((bottleneck or "", rec.get("operation") or ""), None)
    threads = backup_threads(rec)
    return {
        "sides": sides,
        "bottleneck": bottleneck,
        "bottleneck_means": means,
        "threads": threads,
        "findings": _backup_findings(rec, sides, bottleneck, means, threads),
    }


IDLE_WAITQ = 0.9  # a BM thread waiting for work this much of its time has no table space to read
BUFFER_MSGQ = 0.5  # a BM thread waiting for buffers this much of its time is held back by the MC side


def backup_threads(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Seed 003's spreadsheet, one row per thread: its I/O, MsgQ and WaitQ shares, and what they mean."""
    out: list[dict[str, Any]] = []
    for t in rec["threads"]:
        total = t["total_seconds"]
        shares = {s: (t[f"{s}_seconds"] / total if total > 0 else None) for s in ("io", "msgq", "waitq")}
        finding = None
        if t["kind"] == "BM" and (shares["waitq"] or 0) >= IDLE_WAITQ:
            finding = "idle: waits for work (WaitQ); no table space left for it to read"
        elif t["kind"] == "BM" and (shares["msgq"] or 0) >= BUFFER_MSGQ:
            finding = "waits for buffers (MsgQ): the media side frees them too slowly"
        elif t["kind"] == "MC" and (shares["io"] or 0) >= IDLE_WAITQ:
            finding = "busy with the backup media (I/O) all along"
        out.append({**t, **{f"{s}_share": v for s, v in shares.items()}, "finding": finding})
    return out


def _backup_findings(
    rec: dict[str, Any],
    sides: dict[str, dict[str, float]],
    bottleneck: str | None,
    means: str | None,
    threads: list[dict[str, Any]],
) -> list[str]:
    """Seed 003's reading of one backup or restore, as sentences."""
    out: list[str] = []
    if bottleneck is not None:
        out.append(
            f"bottleneck: the {bottleneck} threads ({sides[bottleneck]['io']:.1%} of their time in I/O)"
            + (f", {means}" if means else "")
        )
    bm = sides.get("BM")
    if bm is not None and bm["msgq"] >= BUFFER_MSGQ:
        out.append(
            f"BM threads wait {bm['msgq']:.1%} of their time for buffers (MsgQ): allocate more buffers "
            "(UTIL_HEAP_SZ) or more target sessions or devices"
        )
    bms = [t for t in threads if t["kind"] == "BM"]
    idle = [t for t in bms if (t["waitq_share"] or 0) >= IDLE_WAITQ]
    if idle:
        out.append(
            f"{len(idle)} of {len(bms)} BM threads are idle (WaitQ >= {IDLE_WAITQ:.0%}): parallelism "
            f"{rec.get('parallelism')} is above the number of table spaces worth reading at once; "
            "spread the data more evenly over the table spaces"
        )
    return out
