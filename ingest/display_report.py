"""PoolStats records written as `-DISPLAY BUFFERPOOL(BPn) DETAIL` console output (DSNB4xxI
messages), for `poolsight generate --output DIR` (display-bufferpool.txt).

One display per pool and statistics interval, as an operator issuing the command at every
interval's end would get (DETAIL(INTERVAL): the counts since the previous display): the
command line, DSNB401I-406I (size and thresholds from the pool's latest attributes), DSNB409I
(the interval's start, to the second), DSNB411I-421I (the counters), and for a pool with a
simulated pool (SPSIZE) DSNB431I and DSNB432I with DB2's avoidable reads and delay. Each line
leads with the console time (the interval's end, to the hundredth), so `poolsight ingest stats
--format display` reads every interval back at its own time. Figures the generator does not
model are left out rather than invented (DSNB402I's in-use counts, DSNB431I's simulated buffers
in use, DSNB432I's GBP reads and pages moved into the simulated pool).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
INDENT = " " * 39  # continuation lines under the message text


def _num(v: Any) -> str:
    """A count or a percentage as DB2 prints it: whole numbers without a fraction."""
    if v is None:
        return "0"
    f = float(v)
    return str(int(f)) if f == int(f) else f"{f:g}"


def _when(t_us: int) -> str:
    """Console time to the hundredth (truncated: the display is not later than the interval's end)."""
    seconds, micros = divmod(t_us, 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.") + f"{micros // 10_000:02d}"


def _pair(key: str, value: Any, width: int = 17) -> str:
    return f"{key:<{width}} = {_num(value):>8}"


def display(rec: dict[str, Any], attrs: dict[str, Any] | None) -> str:
    """One pool's -DISPLAY BUFFERPOOL(name) DETAIL output for the interval of `rec` (a pool_stats
    record), with its attributes (a pool_attributes record, or None: size from the record)."""
    a = attrs or {}
    sub = f"-{rec['source']}"
    when = _when(int(rec["interval_end"]))
    since = datetime.fromtimestamp(round(int(rec["interval_start"]) / 1e6), UTC)
    g = rec.get
    msgs: list[tuple[str, list[str]]] = [
        ("DSNB401I", [f"BUFFERPOOL NAME {rec['pool']}, BUFFERPOOL ID 0, USE COUNT 1"]),
        (
            "DSNB402I",
            [
                f"BUFFER POOL SIZE             = {_num(a.get('vpsize', g('buffers_allocated')))}",
                "AUTOSIZE                     = NO",
                f"ALLOCATED      = {_num(g('buffers_allocated'))}        TO BE DELETED    = 0",
            ],
        ),
        (
            "DSNB404I",
            [
                "THRESHOLDS -",
                f"  VP SEQUENTIAL         = {_num(a.get('vpseqt'))}",
                *([f"  SP SEQUENTIAL         = {_num(a.get('spseqt'))}"] if a.get("spsize") else []),
                f"  DEFERRED WRITE        = {_num(a.get('dwqt'))}   VERTICAL DEFERRED WRT = {_num(a.get('vdwqt'))},  0",
            ],
        ),
        (
            "DSNB406I",
            [
                "PGFIX ATTRIBUTE -",
                f"  CURRENT  =  {'YES' if a.get('pgfix') else 'NO'}",
                f"  PENDING  =  {'YES' if a.get('pgfix') else 'NO'}",
                "PAGE STEALING METHOD -",
                f"  CURRENT                   = {a.get('pgsteal') or 'LRU'}",
                f"  PENDING                   = {a.get('pgsteal') or 'LRU'}",
            ],
        ),
        (
            "DSNB409I",
            [f"INCREMENTAL STATISTICS SINCE {since:%H:%M:%S} {MONTHS[since.month - 1]} {since.day}, {since.year}"],
        ),
        (
            "DSNB411I",
            [
                f"{_pair('RANDOM GETPAGE', g('getpages_random'))} {_pair('SYNC READ I/O (R)', g('sync_reads_random'))}",
                f"{_pair('SEQ.   GETPAGE', g('getpages_sequential'))} "
                f"{_pair('SYNC READ I/O (S)', g('sync_reads_sequential'))}",
                f"{_pair('DMTH HIT', g('dm_threshold_reached'))} {_pair('PAGE-INS REQUIRED', g('pageins_read'))}",
            ],
        ),
    ]
    for mid, title, kind in (
        ("DSNB412I", "SEQUENTIAL PREFETCH -", "seq"),
        ("DSNB413I", "LIST PREFETCH -", "list"),
        ("DSNB414I", "DYNAMIC PREFETCH -", "dyn"),
    ):
        msgs.append(
            (
                mid,
                [
                    title,
                    f"{_pair('REQUESTS', g(f'{kind}_prefetch_requests'))} "
                    f"{_pair('PREFETCH I/O', g(f'{kind}_prefetch_reads'))}",
                    _pair("PAGES READ", g(f"{kind}_prefetch_pages")),
                ],
            )
        )
    msgs += [
        (
            "DSNB415I",
            [
                "PREFETCH DISABLED -",
                f"{_pair('NO BUFFER', g('prefetch_disabled_no_buffer'))} "
                f"{_pair('NO READ ENGINE', g('prefetch_disabled_no_read_engine'))}",
            ],
        ),
        (
            "DSNB420I",
            [
                f"{_pair('SYS PAGE UPDATES', g('buffer_updates'))} {_pair('SYS PAGES WRITTEN', g('pages_written'))}",
                f"{_pair('ASYNC WRITE I/O', g('async_writes'))} {_pair('SYNC WRITE I/O', g('sync_writes'))}",
                _pair("PAGE-INS REQUIRED", g("pageins_write")),
            ],
        ),
        ("DSNB421I", [f"{_pair('DWT HIT', g('dwqt_reached'))} {_pair('VERTICAL DWT HIT', g('vdwqt_reached'))}"]),
    ]
    if a.get("spsize"):
        sp = _num(a["spsize"])
        delay_ms = round(g("sim_sync_io_delay_avoidable_ms") or 0)
        msgs += [
            ("DSNB431I", [f"SIMULATED BUFFER POOL SIZE = {sp} BUFFERS -", f"  ALLOCATED       = {sp}"]),
            (
                "DSNB432I",
                [
                    "SIMULATED BUFFER POOL ACTIVITY -",
                    "  AVOIDABLE READ I/O -",
                    f"    SYNC READ I/O (R)  = {_num(g('sim_sync_reads_avoidable_random')):>8}",
                    f"    SYNC READ I/O (S)  = {_num(g('sim_sync_reads_avoidable_sequential')):>8}",
                    f"    ASYNC READ I/O     = {_num(g('sim_async_pages_avoidable')):>8}",
                    f"  TOTAL AVOIDABLE SYNC I/O DELAY = {delay_ms} MILLISECONDS",
                ],
            ),
        ]
    lines = [f"{when} {sub} DISPLAY BUFFERPOOL({rec['pool']}) DETAIL"]
    for mid, text in msgs:
        lines.append(f"{when} {mid} {sub} {text[0]}")
        lines += [f"{INDENT}{t}" for t in text[1:]]
    lines.append(f"{when} DSN9022I {sub} DSNB1CMD '-DISPLAY BUFFERPOOL' NORMAL COMPLETION")
    return "\n".join(lines) + "\n"
