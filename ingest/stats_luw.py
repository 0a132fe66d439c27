"""Db2 LUW MON_GET_BUFFERPOOL / MON_GET_GROUP_BUFFERPOOL exports (CSV with IBM's column names).

The monitor functions return counters accumulated since the buffer pool (or
database) was activated, so an interval needs two snapshots of the same
pool: the export must carry the time of each snapshot in a column
(SNAPSHOT_TIME, TS or CURRENT_TIMESTAMP: `SELECT CURRENT TIMESTAMP AS
SNAPSHOT_TIME, t.* FROM TABLE(MON_GET_BUFFERPOOL(NULL, -2)) t`, run every
minute). Consecutive snapshots of a (member, pool) give one PoolStats record
(LBP logical, physical and prefetch reads, pages written) and, in pureScale,
one GbpStats record (GBP logical and physical reads, invalid pages;
NUM_GBP_FULL from MON_GET_GROUP_BUFFERPOOL). A counter that went down
(reactivation) or a file without snapshot times is rejected, not guessed.

Columns used: POOL_{DATA,INDEX,XDA,COL}_{L,P}_READS and their TEMP_ variants,
POOL_ASYNC_{DATA,INDEX,XDA,COL}_READS, POOL_{DATA,INDEX,XDA,COL}_WRITES,
POOL_{DATA,INDEX,XDA,COL}_GBP_{L_READS,P_READS,INVALID_PAGES}, NUM_GBP_FULL,
POOL_[ASYNC_]{DATA,INDEX,XDA,COL}_LBP_PAGES_FOUND (LBP hit ratio), CF_WAITS and
CF_WAIT_TIME (CF wait per call), COMMIT_SQL_STMTS or TOTAL_APP_COMMITS when the
export joins SNAPDB or MON_GET_TRANSACTION_LOG in (GBP full per 10,000
commits, seed 004), BP_NAME, MEMBER. Everything else is knowingly ignored.
"""

from __future__ import annotations

import csv
import re
from datetime import UTC, datetime
from typing import Any

from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected, StatsFormat, empty_pool_stats

KINDS = ("DATA", "INDEX", "XDA", "COL")
TIME_COLUMNS = ("SNAPSHOT_TIME", "TS", "CURRENT_TIMESTAMP", "TIMESTAMP")
SUMS: dict[str, list[str]] = {
    "lbp_logical_reads": [f"POOL_{t}{k}_L_READS" for k in KINDS for t in ("", "TEMP_")],
    "lbp_physical_reads": [f"POOL_{t}{k}_P_READS" for k in KINDS for t in ("", "TEMP_")],
    "lbp_async_reads": [f"POOL_ASYNC_{k}_READS" for k in KINDS],
    "pages_written": [f"POOL_{k}_WRITES" for k in KINDS],
    "gbp_logical_reads": [f"POOL_{k}_GBP_L_READS" for k in KINDS],
    "gbp_physical_reads": [f"POOL_{k}_GBP_P_READS" for k in KINDS],
    "gbp_invalid_pages": [f"POOL_{k}_GBP_INVALID_PAGES" for k in KINDS],
    "write_failed_no_storage": ["NUM_GBP_FULL"],
    "lbp_pages_found": [f"POOL_{k}_LBP_PAGES_FOUND" for k in KINDS],
    "lbp_async_pages_found": [f"POOL_ASYNC_{k}_LBP_PAGES_FOUND" for k in KINDS],
    "cf_waits": ["CF_WAITS", "TOTAL_CF_REQUESTS"],  # MON_GET_DATABASE/WORKLOAD, or MON_GET_CF_WAIT_TIME
    "cf_wait_ms": ["CF_WAIT_TIME"],
    "cf_wait_us": ["TOTAL_CF_WAIT_TIME_MICRO"],  # MON_GET_CF_WAIT_TIME, per CF command
}
FIRST_ONLY = ("commits", "cf_waits")  # alternative columns for one counter: the first present counts
# Group-level exports (no BP_NAME): one group pool per member, named GBP.
GROUP_COLUMNS = ("NUM_GBP_FULL", "COMMIT_SQL_STMTS", "TOTAL_APP_COMMITS", "CF_WAITS", "TOTAL_CF_REQUESTS")
# Commits, when the export joins them in (seed 004: `... FROM TABLE(MON_GET_GROUP_BUFFERPOOL(-2)),
# SYSIBMADM.SNAPDB`): the first of these columns present counts; summing both would count twice.
COMMIT_COLUMNS = ("COMMIT_SQL_STMTS", "TOTAL_APP_COMMITS")
SUMS["commits"] = list(COMMIT_COLUMNS)


def _time(text: str) -> float:
    """2026-11-22-10.00.00.000000 (Db2) or ISO; taken as UTC."""
    t = text.strip()
    if len(t) >= 19 and t[10] == "-" and t[13] == ".":
        t = t[:10] + "T" + t[11:19].replace(".", ":") + t[19:]
    return datetime.fromisoformat(t).replace(tzinfo=UTC).timestamp()


def parse(text: str, source_name: str, default_source: str = "DB2LUW", columns: list[str] | None = None) -> Parsed:
    """columns: the column names of a DEL export (EXPORT TO ... OF DEL writes no header line)."""
    result = Parsed()
    rows: list[list[str]] = []
    for lineno, raw_line in enumerate(text.splitlines(), start=1):
        try:
            rows.append(next(csv.reader([raw_line]), []))
        except csv.Error as exc:  # e.g. a stray carriage return: this line only
            result.rejected.append(Rejected(source_name, lineno, "row", f"unreadable: {exc}", raw_line))
            rows.append([])
    if not rows:
        result.rejected.append(Rejected(source_name, 1, "header", "empty file", ""))
        return result
    if columns:
        rows.insert(0, columns)  # line numbers stay those of the file: the header is not in it
    header = [h.strip().upper() for h in rows[0]]
    if "BP_NAME" not in header and any(c in header for c in GROUP_COLUMNS):
        header.append("BP_NAME")  # MON_GET_GROUP_BUFFERPOOL, SNAPDB, MON_GET_CF_WAIT_TIME: per member
        rows = [rows[0], *[[*r, "GBP"] if r else r for r in rows[1:]]]
    if "BP_NAME" not in header:
        result.rejected.append(
            Rejected(
                source_name,
                1,
                "header",
                "no BP_NAME column: export with a header line of IBM's column names",
                text[:200],
            )
        )
        return result
    tcol = next((c for c in TIME_COLUMNS if c in header), None)
    if tcol is None:
        result.rejected.append(
            Rejected(
                source_name,
                1,
                "SNAPSHOT_TIME",
                "counters accumulate since activation; without the time of each "
                "snapshot (a SNAPSHOT_TIME column) no interval can be formed",
                text[:200],
            )
        )
        return result
    col = {name: i for i, name in enumerate(header)}
    previous: dict[tuple[str, str], tuple[int, float, dict[str, int | None]]] = {}
    snapshots: dict[tuple[float, str, str, int], tuple[int, float, dict[str, int | None], str]] = {}
    for line, row in enumerate(rows[1:], start=1 if columns else 2):
        if not any(c.strip() for c in row):
            continue
        raw = ",".join(row)
        if len(row) != len(header):
            result.rejected.append(
                Rejected(source_name, line, "row", f"{len(row)} fields, header has {len(header)}", raw)
            )
            continue
        try:
            when = _time(row[col[tcol]])
        except ValueError:
            result.rejected.append(Rejected(source_name, line, tcol, f"{row[col[tcol]]!r} is not a time", raw))
            continue
        values: dict[str, int | None] = {}
        bad = None
        for out, names in SUMS.items():
            present = [n for n in names if n in col]
            if out in FIRST_ONLY:
                present = present[:1]
            if not present:
                values[out] = None
                continue
            total = 0
            for n in present:
                cell = row[col[n]].strip()
                if cell in ("", "-"):
                    continue
                if not cell.isdigit():
                    bad = Rejected(source_name, line, n, f"{cell!r} is not a counter", raw)
                    break
                total += int(cell)
            if bad:
                break
            values[out] = total
        if bad:
            result.rejected.append(bad)
            continue
        member = row[col["MEMBER"]].strip() if "MEMBER" in col else "0"
        pool = row[col["BP_NAME"]].strip()
        # MON_GET_CF_WAIT_TIME has one row per CF command and snapshot: those rows add up. Any other
        # repeated snapshot row stays apart (and is rejected as a 0-second interval).
        snap = (when, member, pool, 0 if "CF_CMD_NAME" in col else line)
        if snap in snapshots:
            first_line, same = snapshots[snap][0], snapshots[snap][2]
            for k, v in values.items():
                same[k] = v if same[k] is None else same[k] if v is None else same[k] + v  # type: ignore[operator]
            snapshots[snap] = (first_line, when, same, raw)
        else:
            snapshots[snap] = (line, when, values, raw)
    for (_, member, pool, _), (line, when, values, raw) in snapshots.items():
        if values["cf_wait_ms"] is None and values["cf_wait_us"] is not None:
            values["cf_wait_ms"] = values["cf_wait_us"] // 1000
        key = (member, pool)
        if key in previous:
            _interval(result, source_name, default_source, key, previous[key], (line, when, values), raw)
        previous[key] = (line, when, values)
    result.records.sort(key=lambda r: r[0] == "gbp_stats")  # all pool statistics first, then the group pools'
    return result


def _interval(
    result: Parsed,
    name: str,
    default_source: str,
    key: tuple[str, str],
    before: tuple[int, float, dict[str, int | None]],
    after: tuple[int, float, dict[str, int | None]],
    raw: str,
) -> None:
    member, pool = key
    (_, t0, v0), (line, t1, v1) = before, after
    if t1 <= t0:
        result.rejected.append(Rejected(name, line, "SNAPSHOT_TIME", f"interval of {t1 - t0:g} seconds", raw))
        return
    delta: dict[str, int | None] = {}
    for k in SUMS:
        a, b = v0.get(k), v1.get(k)
        delta[k] = None if a is None or b is None else b - a
        if delta[k] is not None and delta[k] < 0:  # type: ignore[operator]
            result.rejected.append(
                Rejected(name, line, k, f"{k} went down ({a} -> {b}): the pool was reactivated", raw)
            )
            return
    source = f"{default_source}/{member}"
    span = {"interval_start": int(t0 * 1e6), "interval_end": int(t1 * 1e6)}
    lbp = ("lbp_logical_reads", "lbp_physical_reads", "lbp_async_reads", "pages_written")
    if all(delta[k] is None for k in lbp):  # a MON_GET_GROUP_BUFFERPOOL export: group pool counters only
        _gbp(result, source, pool, span, delta, only_activity=False)
        return
    rec: dict[str, Any] = empty_pool_stats()
    rec.update(
        {
            "source": source,
            "pool": pool,
            **span,
            "interval_seconds": t1 - t0,
            "origin": "luw-bufferpool",
            "lbp_logical_reads": delta["lbp_logical_reads"],
            "lbp_physical_reads": delta["lbp_physical_reads"],
            "lbp_async_reads": delta["lbp_async_reads"],
            "pages_written": delta["pages_written"],
            "lbp_pages_found": delta["lbp_pages_found"],
            "lbp_async_pages_found": delta["lbp_async_pages_found"],
        }
    )
    result.add("pool_stats", rec)
    _gbp(result, source, pool, span, delta, only_activity=True)  # pureScale GBP columns, when there was traffic


def _gbp(
    result: Parsed, source: str, pool: str, span: dict[str, int], delta: dict[str, int | None], *, only_activity: bool
) -> None:
    values = [
        delta[k]
        for k in (
            "gbp_logical_reads",
            "gbp_physical_reads",
            "gbp_invalid_pages",
            "write_failed_no_storage",
            "commits",
            "cf_waits",
        )
    ]
    if any(values) if only_activity else any(v is not None for v in values):
        result.add(
            "gbp_stats",
            {
                "source": source,
                "gbp": pool,
                **span,
                "xi_reads_data_returned": None,
                "xi_reads_no_data": None,
                "nf_reads_data_returned": None,
                "nf_reads_no_data": None,
                "changed_pages_written": None,
                "castout_pages": None,
                "directory_reclaims": None,
                "data_entry_reclaims": None,
                "write_failed_no_storage": delta["write_failed_no_storage"],
                "commits": delta["commits"],
                "gbp_logical_reads": delta["gbp_logical_reads"],
                "gbp_physical_reads": delta["gbp_physical_reads"],
                "gbp_invalid_pages": delta["gbp_invalid_pages"],
                "cf_waits": delta["cf_waits"],
                "cf_wait_ms": delta["cf_wait_ms"],
            },
        )


def read(text: str, source_name: str, options: ParseOptions) -> Parsed:
    return parse(text, source_name, options.source or "DB2LUW", options.columns)


FORMAT = StatsFormat(
    "luw-bufferpool",
    "MON_GET_BUFFERPOOL / MON_GET_GROUP_BUFFERPOOL (and commit, CF wait) CSV exports with a SNAPSHOT_TIME column",
    read,
    # A CSV export whose header names the snapshot time and a pool, commit or CF counter.
    re.compile(r"\A\s*(?=[^\n]*SNAPSHOT_TIME)(?=[^\n]*(?:BP_NAME|GBP|COMMIT|CF_WAITS|TOTAL_CF_REQUESTS))", re.I),
)
