"""`-DISPLAY BUFFERPOOL(...) DETAIL` console output: the DSNB4xxI messages.

Each DSNB message has the form `DSNBnnnI <prefix><subsystem> KEY = value ...`
(the command prefix and subsystem name may be absent, e.g. `+` alone), with
continuation lines indented under it. Pairs are read as KEY = value wherever
they stand, so the older one-line layouts (seed 002) and the newer one pair
per line layout both parse. A pool is named by DSNB401I; output without it
(seed 002) by the `-DISPLAY BUFFERPOOL(name)` command line kept in front of it,
or by the caller (`--pool`). Per pool the parser yields:

- a PoolAttributes record: size (DSNB402I), thresholds (DSNB404I: VPSEQT,
  SPSEQT, DWQT, VDWQT and its buffer count, VPXSEQT), PGFIX and page stealing
  (DSNB406I), simulated pool size (DSNB431I);
- a PoolStats record of the incremental statistics (DSNB411I-415I, 420I,
  421I, the simulated pool's avoidable sync and async reads and avoidable sync
  I/O delay DSNB432I) for the interval from DSNB409I's "SINCE" to the time of
  the display. The display does not print its own time: it comes from the
  last timestamp leading the console lines of that display (`2026-11-22
  10:00:00.12`; an output of several displays, one per interval, gives each
  display its own) or from the caller (`at`); without it the statistics are
  rejected, not guessed.

DSNB999I service output (SERVICE=4) gives the frame size backing most buffers.
Ignored knowingly: other DSNB999I service output, use count, VPSIZE minimum and
maximum, AUTOSIZE, in-use counts, SEQUENTIAL/VPSEQT HIT/RECLASSIFY of
DSNB411I, the simulated pool's allocated and in-use buffers (DSNB431I), its
avoidable GBP reads and pages moved into it (DSNB432I), parallel activity
(DSNB440I), LPL (DSNB441I), data set statistics (DSNB450I+).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected, StatsFormat, empty_pool_stats

MESSAGE = re.compile(r"^\s*(?:(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)\s+)?(DSN[A-Z0-9]\d{3,4}I)\s+(.*)$")
LEADING_TIME = re.compile(r"^\s*(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)\s")
FRAMES = re.compile(r"\b(4K|1M|2G)\s+PAGES\s+(\d+)")
FRAME_BYTES = {"4K": 4096, "1M": 1 << 20, "2G": 1 << 31}
# The command itself, when the output is kept with it: it names the pool the output is about.
COMMAND = re.compile(r"DISPLAY\s+BUFFERPOOL\s*\(\s*(\w+)\s*\)", re.IGNORECASE)
SINCE = re.compile(r"SINCE\s+(\d\d:\d\d:\d\d)\s+([A-Z]{3})\s+(\d{1,2}),\s*(\d{4}|YYYY)")

# (message, key suffix) -> PoolStats field, in the order they are tried.
STATS: dict[str, list[tuple[str, str]]] = {
    "DSNB411I": [
        ("RANDOM GETPAGE", "getpages_random"),
        ("SYNC READ I/O (R)", "sync_reads_random"),
        ("SEQ. GETPAGE", "getpages_sequential"),
        ("SYNC READ I/O (S)", "sync_reads_sequential"),
        ("DMTH HIT", "dm_threshold_reached"),
        ("PAGE-INS REQUIRED", "pageins_read"),
    ],
    "DSNB412I": [
        ("REQUESTS", "seq_prefetch_requests"),
        ("PREFETCH I/O", "seq_prefetch_reads"),
        ("PAGES READ", "seq_prefetch_pages"),
    ],
    "DSNB413I": [
        ("REQUESTS", "list_prefetch_requests"),
        ("PREFETCH I/O", "list_prefetch_reads"),
        ("PAGES READ", "list_prefetch_pages"),
    ],
    "DSNB414I": [
        ("REQUESTS", "dyn_prefetch_requests"),
        ("PREFETCH I/O", "dyn_prefetch_reads"),
        ("PAGES READ", "dyn_prefetch_pages"),
    ],
    "DSNB415I": [("NO BUFFER", "prefetch_disabled_no_buffer"), ("NO READ ENGINE", "prefetch_disabled_no_read_engine")],
    "DSNB420I": [
        ("SYS PAGE UPDATES", "buffer_updates"),
        ("SYS PAGES WRITTEN", "pages_written"),
        ("ASYNC WRITE I/O", "async_writes"),
        ("SYNC WRITE I/O", "sync_writes"),
        ("PAGE-INS REQUIRED", "pageins_write"),
    ],
    "DSNB421I": [
        ("VERTICAL DWT HIT", "vdwqt_reached"),
        ("DWT HIT", "dwqt_reached"),
        ("NO WRITE ENGINE", "write_engine_not_available"),
    ],
    "DSNB432I": [
        ("SYNC READ I/O (R)", "sim_sync_reads_avoidable_random"),
        ("SYNC READ I/O (S)", "sim_sync_reads_avoidable_sequential"),
        ("ASYNC READ I/O", "sim_async_pages_avoidable"),
    ],
}
# Units a value may carry (DSNB432I's delay): words after the last value that are not a key.
UNITS = {"MILLISECONDS": 1.0, "MSEC": 1.0, "MS": 1.0, "SECONDS": 1e3, "SEC": 1e3, "MICROSECONDS": 1e-3}
DELAY = re.compile(r"AVOIDABLE\s+SYNC\s+I/O\s+DELAY\s*=\s*([\d:.,]+)\s*([A-Z]+)?")
MONTHS = {
    m: i
    for i, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), start=1)
}


def pairs(text: str) -> list[tuple[str, str | None]]:
    """`A B = 1 C = 80, 0 D =` -> [("A B", "1"), ("C", "80,0"), ("D", None)] (None: the value is cut off)."""
    parts = text.split("=")
    out: list[tuple[str, str | None]] = []
    key = parts[0]
    for part in parts[1:]:
        tokens = part.split()
        if not tokens:
            out.append((_norm(key), None))
            key = ""
            continue
        value = [tokens[0]]
        rest = tokens[1:]
        while value[-1].endswith(",") and rest and rest[0].rstrip(",").isdigit():
            value.append(rest.pop(0))
        out.append((_norm(key), "".join(value).rstrip(",")))
        key = " ".join(rest)
    if len(parts) > 1 and _norm(key) not in ("", "BUFFERS", "PAGES", *UNITS):
        out.append((_norm(key), None))  # words after the last value: a pair cut before its "="
    return [(k, v) for k, v in out if k]


def _norm(key: str) -> str:
    return " ".join(key.upper().split())


def _delay_ms(value: str, unit: str | None) -> float:
    """DSNB432I's TOTAL AVOIDABLE SYNC I/O DELAY in milliseconds: a number with its unit
    (milliseconds without one), or a time h:mm:ss.ffffff as IFCID 2 reports print it."""
    v = value.replace(",", "")
    if ":" in v:
        seconds = 0.0
        for part in v.split(":"):
            seconds = seconds * 60 + float(part)
        return seconds * 1e3
    if unit is not None and unit not in UNITS:
        raise ValueError(f"avoidable sync I/O delay in {unit!r}")
    return float(v) * UNITS.get(unit or "MILLISECONDS", 1.0)


def _count(value: str) -> int:
    v = value.replace(",", "")
    if not v.isdigit():
        raise ValueError(f"{value!r} is not a count")
    return int(v)


@dataclass
class _Pool:
    name: str
    line: int
    subsystem: str | None
    display: int  # which display of the output (each has its own time)
    attrs: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)
    since: str | None = None
    error: Rejected | None = None
    lines: list[str] = field(default_factory=list)
    frames: dict[int, int] = field(default_factory=dict)  # frame size in bytes -> buffers (SERVICE=4)
    delay_ms: float | None = None  # DSNB432I TOTAL AVOIDABLE SYNC I/O DELAY


def _iso(text: str) -> float:
    return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=UTC).timestamp()


def parse(
    text: str, source_name: str, default_source: str = "DB2", at: float | None = None, pool: str | None = None
) -> Parsed:
    """All pools of a DISPLAY BUFFERPOOL output; `at`: the time of the display (epoch seconds);
    `pool`: the pool an output without DSNB401I (and without its command line) is about."""
    result = Parsed()
    pools: list[_Pool] = []
    current: _Pool | None = None
    msg: tuple[str, int, list[str]] | None = None  # (message id, line, text pieces)
    # The time of each display in the output: its last console timestamp. A display begins at a
    # command line, or at a DSNB401I of a pool the display showed already (output kept without
    # its commands); an output of several displays (one per interval) gives each its own time.
    times: list[float | None] = [None]
    shown: set[str] = set()  # pools of the current display
    commanded = pool  # the pool the latest command line (or the caller) names

    def close_message() -> None:
        if msg is None or current is None:
            return
        mid, line, pieces = msg
        _apply(current, mid, line, " ".join(pieces), source_name)

    def new_display() -> None:
        if any(p.display == len(times) - 1 for p in pools[-1:]):
            times.append(None)
            shown.clear()

    for n, raw in enumerate(text.splitlines(), start=1):
        m = MESSAGE.match(raw)
        c = None if m else COMMAND.search(raw)
        if c:
            close_message()
            new_display()
            named = c.group(1).upper()
            msg, current = None, None
            commanded = pool if named in ("ACTIVE", "*") else named
        elif m:
            close_message()
            mid, rest = m.group(2), m.group(3)
            subsystem = None
            if rest and not rest[0].isalnum():  # the command prefix, with the subsystem name glued on
                token, _, rest = rest.partition(" ")
                subsystem = token[1:] or None
            msg = (mid, n, [rest])
            if mid == "DSNB401I":
                pm = re.search(r"BUFFERPOOL NAME\s+(\w+)", rest.upper())
                name = pm.group(1) if pm else "?"
                if name in shown:
                    new_display()
                shown.add(name)
                current = _Pool(name, n, subsystem, len(times) - 1)
                pools.append(current)
            elif current is None and mid.startswith("DSNB4"):
                # Output of one pool without its DSNB401I (seed 002): named by its command line or
                # the caller, else not named (and rejected).
                current = _Pool(commanded or "?", n, subsystem, len(times) - 1)
                pools.append(current)
            if current is not None:
                current.lines.append(raw)
        elif msg is not None and raw.strip():
            msg[2].append(raw.strip())
            if current is not None:
                current.lines.append(raw)
        if (t := LEADING_TIME.match(raw)) and at is None:
            try:
                times[-1] = _iso(t.group(1))
            except ValueError:
                pass
    close_message()
    for p in pools:
        _emit(p, result, source_name, default_source, at if at is not None else times[p.display])
    result.records.sort(key=lambda r: r[0] != "pool_attributes")  # all attributes first, then the statistics
    return result


def _apply(p: _Pool, mid: str, line: int, text: str, source_name: str) -> None:
    u = text.upper()
    try:
        if mid == "DSNB402I":
            for k, v in pairs(u):
                if v is None:
                    raise KeyError(k)
                if k.endswith("BUFFER POOL SIZE"):
                    p.attrs["vpsize"] = _count(v)
                elif k.endswith("ALLOCATED") and "buffers_allocated" not in p.stats:
                    p.stats["buffers_allocated"] = _count(v)
        elif mid == "DSNB404I":
            for k, v in pairs(u):
                if v is None:
                    raise KeyError(k)
                if k.endswith("VERTICAL DEFERRED WRT"):
                    pct, _, buffers = v.partition(",")
                    p.attrs["vdwqt"] = float(pct)
                    p.attrs["vdwqt_buffers"] = int(buffers) if buffers else None
                elif k.endswith("VP SEQUENTIAL"):
                    p.attrs["vpseqt"] = float(v)
                elif k.endswith("SP SEQUENTIAL"):  # the simulated pool's SPSEQT (DB2 12+)
                    p.attrs["spseqt"] = float(v)
                elif k.endswith("DEFERRED WRITE"):
                    p.attrs["dwqt"] = float(v)
                elif k.endswith("ASSISTING PARALLEL SEQ") or k.endswith("ASSISTING PARALLEL SEQT"):
                    pass
                elif k.endswith("PARALLEL SEQUENTIAL"):
                    p.attrs["vpxseqt"] = float(v)
        elif mid == "DSNB999I":
            # -DISPLAY BUFFERPOOL(..) SERVICE=4: how many buffers each real storage frame size backs.
            if fm := FRAMES.search(u):
                p.frames[FRAME_BYTES[fm.group(1)]] = int(fm.group(2))
        elif mid == "DSNB406I":
            seen_pgfix = False
            for k, v in pairs(u):
                if v is None:
                    raise KeyError(k)
                if "STEALING" in k:
                    p.attrs["pgsteal"] = v
                elif k.endswith("CURRENT") and not seen_pgfix:
                    p.attrs["pgfix"] = v == "YES"
                    seen_pgfix = True
        elif mid == "DSNB409I":
            if (sm := SINCE.search(u)) is None:
                raise ValueError("no 'SINCE hh:mm:ss MON dd, yyyy'")
            p.since = " ".join(sm.groups())
        elif mid == "DSNB431I":
            for k, v in pairs(u):
                if v is not None and k.endswith("SIMULATED BUFFER POOL SIZE"):
                    p.attrs["spsize"] = _count(v)
                elif v is not None and k.endswith("SIMULATED SEQUENTIAL THRESHOLD"):
                    p.attrs["spseqt"] = float(v)
        elif mid in STATS:
            if mid == "DSNB432I" and (dm := DELAY.search(u)):
                p.delay_ms = _delay_ms(dm.group(1), dm.group(2))
            for k, v in pairs(u):
                if v is None:
                    raise KeyError(k)  # a pair cut off: the rest of the message is lost with it
                for suffix, fld in STATS[mid]:
                    if k.endswith(suffix):
                        p.stats[fld] = _count(v)
                        break
    except KeyError as exc:
        if p.error is None:
            p.error = Rejected(
                source_name, line, str(exc.args[0]), f"{mid} is cut off: no value for {exc.args[0]}", text
            )
    except ValueError as exc:
        if p.error is None:
            p.error = Rejected(source_name, line, mid, str(exc), text)


def _since(p: _Pool, display_time: float) -> float | None:
    assert p.since is not None
    clock, mon, day, year = p.since.split()
    end = datetime.fromtimestamp(display_time, UTC)
    y = end.year if year == "YYYY" else int(year)
    h, mi, s = (int(x) for x in clock.split(":"))
    try:
        return datetime(y, MONTHS[mon], int(day), h, mi, s, tzinfo=UTC).timestamp()
    except (KeyError, ValueError):
        return None


def _emit(p: _Pool, result: Parsed, source_name: str, default_source: str, display_time: float | None) -> None:
    raw = "\n".join(p.lines)
    source = p.subsystem or default_source
    if p.error is not None:
        result.rejected.append(p.error)
        return
    if p.name == "?":
        result.rejected.append(
            Rejected(
                source_name,
                p.line,
                "DSNB401I",
                "no DSNB401I line: the output does not name its buffer pool (keep the "
                "-DISPLAY BUFFERPOOL(name) command line with it, or give --pool)",
                raw,
            )
        )
        return
    if display_time is None:
        result.rejected.append(
            Rejected(
                source_name,
                p.line,
                "time",
                "the output has no time of display (no console timestamps, no --at): "
                "attributes and statistics cannot be placed in time",
                raw,
            )
        )
        return
    if "vpsize" in p.attrs:
        attrs: dict[str, Any] = {
            "source": source,
            "pool": p.name,
            "event_time": int(display_time * 1e6),
            "vpsize": p.attrs["vpsize"],
            "page_size": _page_size(p.name),
            "vpseqt": None,
            "vpxseqt": None,
            "dwqt": None,
            "vdwqt": None,
            "vdwqt_buffers": None,
            "pgsteal": None,
            "pgfix": None,
            # The frame size backing most of the pool's buffers (SERVICE=4 output), when shown.
            "frame_size": max(p.frames, key=lambda k: p.frames[k]) if p.frames else None,
            "spsize": None,
            "spseqt": None,
        }
        attrs.update({k: v for k, v in p.attrs.items() if k in attrs})
        if attrs["pgsteal"] not in (None, "LRU", "FIFO", "NONE"):
            attrs["pgsteal"] = None
        result.add("pool_attributes", attrs)
    counters: dict[str, Any] = {k: v for k, v in p.stats.items() if k != "buffers_allocated"}
    if p.delay_ms is not None:
        counters["sim_sync_io_delay_avoidable_ms"] = p.delay_ms
    if not counters:
        return
    start = _since(p, display_time) if p.since else None
    if start is None:
        result.rejected.append(
            Rejected(
                source_name, p.line, "DSNB409I", "incremental statistics without their start (DSNB409I SINCE)", raw
            )
        )
        return
    if display_time - start <= 0:
        result.rejected.append(
            Rejected(source_name, p.line, "interval", f"interval of {display_time - start:g} seconds", raw)
        )
        return
    rec: dict[str, Any] = empty_pool_stats()
    rec.update(
        {
            "source": source,
            "pool": p.name,
            "interval_start": int(start * 1e6),
            "interval_end": int(display_time * 1e6),
            "interval_seconds": display_time - start,
            "origin": "display",
            **p.stats,
            "sim_sync_io_delay_avoidable_ms": p.delay_ms,
        }
    )
    result.add("pool_stats", rec)


def _page_size(pool: str) -> int:
    m = re.match(r"BP(8K|16K|32K)", pool)
    return {"8K": 8192, "16K": 16384, "32K": 32768}[m.group(1)] if m else 4096


def read(text: str, source_name: str, options: ParseOptions) -> Parsed:
    return parse(text, source_name, options.source or "DB2", at=options.at, pool=options.pool)


FORMAT = StatsFormat(
    "display",
    "-DISPLAY BUFFERPOOL DETAIL output (DSNB4xxI messages)",
    read,
    re.compile(r"DSNB4\d\dI|-DISPLAY\s+BUFFERPOOL", re.IGNORECASE),
)
