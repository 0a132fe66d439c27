"""Db2 LUW backup/restore "Performance statistics" records from db2diag.log (seed 003).

A db2diag.log record starts with its time stamp line
(`2016-01-20-11.07.26.882298-300 E243498A1912 LEVEL: Info`); among all
records, those whose MESSAGE is "Performance statistics" carry
Parallelism, Number of buffers, Buffer size and two thread tables, BM#
(buffer manipulators) and MC# (media controllers), with Total, I/O, MsgQ,
WaitQ (seconds), Buffers and MBytes per thread and a TOT line. The record
does not say whether it was a backup or a restore: the nearest earlier
record of the same database that starts one says; else UNKNOWN.

Checked: every row has its seven columns and numbers; each table's Buffers
add up to its TOT line. A record that fails goes to the dead-letter topic.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected, StatsFormat

HEADER = re.compile(r"^(\d{4})-(\d\d)-(\d\d)-(\d\d)\.(\d\d)\.(\d\d)\.(\d{6})([+-]\d+)\s")
ROW = re.compile(r"^(\d{3})\s")


def _time(m: re.Match[str]) -> int:
    y, mo, d, h, mi, s, us, off = m.groups()
    local = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int(us), tzinfo=UTC)
    return int((local - timedelta(minutes=int(off))).timestamp() * 1e6)  # offset: minutes east of UTC


def _records(lines: list[str]) -> list[tuple[int, list[str]]]:
    out: list[tuple[int, list[str]]] = []
    for n, line in enumerate(lines, start=1):
        if HEADER.match(line):
            out.append((n, [line]))
        elif out:
            out[-1][1].append(line)
    return out


def _field(lines: list[str], name: str) -> str | None:
    for line in lines:
        if m := re.search(rf"(?:^|\s){re.escape(name)}\s*[:=]\s*(\S+)", line):
            return m.group(1)
    return None


def _threads(kind: str, lines: list[str], first: int, name: str) -> tuple[list[dict[str, Any]], Rejected | None]:
    threads: list[dict[str, Any]] = []
    in_table = False
    total_buffers: int | None = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(f"{kind}#"):
            in_table = True
            continue
        if not in_table:
            continue
        if s.startswith("---") or not s:
            continue
        cols = s.split()
        if cols[0] == "TOT":
            try:
                total_buffers = int(cols[5])
            except (IndexError, ValueError):
                return threads, Rejected(name, first + i, f"{kind} TOT", f"unreadable total line {s!r}", "")
            break
        if not ROW.match(s):
            break
        if len(cols) != 7:
            return threads, Rejected(name, first + i, f"{kind}#{cols[0]}", f"{len(cols)} columns, expected 7", "")
        try:
            total, io, msgq, waitq = (float(c) for c in cols[1:5])
            buffers, mbytes = int(cols[5]), float(cols[6])
        except ValueError:
            return threads, Rejected(name, first + i, f"{kind}#{cols[0]}", f"a number does not parse in {s!r}", "")
        threads.append(
            {
                "kind": kind,
                "number": int(cols[0]),
                "total_seconds": total,
                "io_seconds": io,
                "msgq_seconds": msgq,
                "waitq_seconds": waitq,
                "buffers": buffers,
                "mbytes": mbytes,
            }
        )
    if not threads:
        return threads, Rejected(name, first, kind, f"no {kind} thread table", "")
    if total_buffers is None:
        return threads, Rejected(name, first, f"{kind} TOT", f"the {kind} table is cut off before its TOT line", "")
    if sum(t["buffers"] for t in threads) != total_buffers:
        return threads, Rejected(
            name,
            first,
            f"{kind} TOT",
            f"{kind} buffers add up to {sum(t['buffers'] for t in threads)}, TOT says {total_buffers}",
            "",
        )
    return threads, None


def parse(text: str, source_name: str, default_source: str = "DB2LUW") -> Parsed:
    result = Parsed()
    last_operation: dict[str, str] = {}  # database -> BACKUP/RESTORE most recently started
    started: dict[str, int] = {}  # database -> when it started (epoch us)
    for first, lines in _records(text.splitlines()):
        body = "\n".join(lines)
        db = _field(lines, "DB") or ""
        upper = body.upper()
        if "PERFORMANCE STATISTICS" not in upper:
            result.skipped += 1
            if "MESSAGE" in upper and ("RESTORE" in upper or "BACKUP" in upper) and "STARTING" in upper:
                last_operation[db] = "RESTORE" if "RESTORE" in upper else "BACKUP"
                if start := HEADER.match(lines[0]):
                    started[db] = _time(start)
            continue
        header = HEADER.match(lines[0])
        assert header is not None
        bm, err = _threads("BM", lines, first, source_name)
        mc, err2 = _threads("MC", lines, first, source_name) if err is None else ([], None)
        err = err or err2
        if err is not None:
            result.rejected.append(Rejected(err.file, err.line, err.field, err.reason, body))
            continue
        size = _field(lines, "Buffer size")
        end = _time(header)
        begun = started.pop(db, None)
        elapsed = (end - begun) / 1e6 if begun is not None and begun <= end else None
        instance = _field(lines, "INSTANCE")

        def _int(v: str | None) -> int | None:
            return int(v) if v is not None and v.isdigit() else None

        result.add(
            "backup_stats",
            {
                "source": f"{instance}/{db}" if instance and db else default_source,
                "event_time": end,
                "operation": last_operation.get(db, "UNKNOWN"),
                "database": db or None,
                "parallelism": _int(_field(lines, "Parallelism")),
                "buffers": _int(_field(lines, "Number of buffers")),
                "buffer_size": _int(size),
                "threads": bm + mc,
                "position": f"{source_name}:{first}",
                "elapsed_seconds": elapsed,
            },
        )
    return result


def read(text: str, source_name: str, options: ParseOptions) -> Parsed:
    return parse(text, source_name, options.source or "DB2LUW")


FORMAT = StatsFormat(
    "db2diag-backup",
    "backup/restore performance statistics in a db2diag.log",
    read,
    # The message line of a performance statistics record (linear to find, whatever the log's size).
    re.compile(r"^MESSAGE\s*:\s*Performance statistics", re.MULTILINE | re.IGNORECASE),
)
