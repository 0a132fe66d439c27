"""Statistics files into Kafka (or JSON lines), once, or following files as they grow.

Statistics files are small and their units (report intervals, DISPLAY
outputs, log records, snapshot pairs) span many lines, so each pass parses a
whole file and sends only what it has not sent before: per file it keeps the
latest interval end (or event time) sent per (record type, source, pool) and
the rejections already reported. Those marks are saved after every flushed
pass, so a restart neither repeats nor skips. With `follow`, a file is read
again only once it has stopped growing for one poll, so a block still being
written is not mistaken for a truncated one (a writer that pauses longer
than `settle_seconds` in the middle of a block can still split it: the
first half then counts as the block).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poolsight.ingest.positions import read_state, write_state
from poolsight.ingest.stats_common import Parsed, Rejected
from poolsight.simulator.metrics import backup_analysis, gbp_metrics, pool_metrics

TIME_KEYS = ("interval_end", "event_time")


def with_metrics(schema: str, rec: dict[str, Any]) -> dict[str, Any]:
    """A record as a JSON line of `--output`: its schema, its fields and its derived metrics."""
    derived: dict[str, Any] = {}
    if schema == "pool_stats":
        derived = {"metrics": pool_metrics(rec)}
    elif schema == "backup_stats":
        derived = {"analysis": backup_analysis(rec)}
    elif schema == "gbp_stats":
        derived = {"metrics": gbp_metrics(rec)}
    return {"schema": schema, **rec, **derived}


def _mark_key(schema: str, rec: dict[str, Any]) -> str:
    # A GDETAIL record named by the member that issued the command shares source and GBP with
    # that member's MDETAIL record: the scope keeps them apart.
    scope = f"|{rec['scope']}" if rec.get("scope") else ""
    return f"{schema}|{rec.get('source')}|{rec.get('pool', rec.get('gbp', rec.get('position', '')))}{scope}"


def _when(rec: dict[str, Any]) -> int:
    return int(next(rec[k] for k in TIME_KEYS if rec.get(k) is not None))


@dataclass
class FileState:
    inode: int = 0
    size: int = 0
    marks: dict[str, int] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)


@dataclass
class StatsCollector:
    parse: Callable[[str, str], Parsed]
    send: Callable[[str, dict[str, Any]], None]
    reject: Callable[[Rejected], None]
    flush: Callable[[], None]
    state_dir: Path
    sent: int = 0
    rejected: int = 0
    found: dict[str, int] = field(default_factory=dict)  # records the parser found per file (new or not)
    first_rejection: dict[str, Rejected] = field(default_factory=dict)  # per file

    def _load(self, path: Path) -> FileState:
        try:
            st = FileState(**(read_state(self.state_dir, path) or {}))
        except TypeError:
            return FileState()
        if st.inode != path.stat().st_ino:
            return FileState()  # another file under this name: start over
        return st

    def collect(self, path: Path) -> bool:
        """Send what is new in path; True when something was new."""
        st = self._load(path)
        size = path.stat().st_size
        if size == st.size and st.inode:
            return False
        text = path.read_bytes().decode("utf-8", errors="replace")  # a damaged byte fails its own block
        parsed = self.parse(text, str(path))
        if parsed.unknown:
            print(f"{path}: counters not known, ignored: {dict(parsed.unknown)}", file=sys.stderr)
        records, rejections = parsed.records, parsed.rejected
        self.found[str(path)] = len(records)
        if rejections:
            self.first_rejection.setdefault(str(path), rejections[0])
        new = False
        for schema, rec in records:
            key, when = _mark_key(schema, rec), _when(rec)
            if when > st.marks.get(key, -1):
                self.send(schema, rec)
                st.marks[key] = when
                self.sent += 1
                new = True
        seen = set(st.rejected)
        for r in rejections:
            tag = f"{r.line}|{r.field}|{r.reason}"
            if tag not in seen:
                self.reject(r)
                st.rejected.append(tag)
                seen.add(tag)
                self.rejected += 1
                new = True
        self.flush()
        st.inode, st.size = path.stat().st_ino, size
        write_state(self.state_dir, path, st.__dict__)
        return new

    def run(
        self,
        paths: list[Path],
        *,
        follow: bool = False,
        poll_seconds: float = 1.0,
        settle_seconds: float = 2.0,
        idle_stop_seconds: float | None = None,
    ) -> None:
        if not follow:
            for p in paths:
                self.collect(p)
            return
        changed: dict[Path, tuple[int, float]] = {}  # size and when it was first seen
        idle_since = time.monotonic()
        while True:
            now = time.monotonic()
            for p in paths:
                if not p.exists():
                    continue
                size = p.stat().st_size
                if p not in changed or changed[p][0] != size:
                    changed[p] = (size, now)
                    idle_since = now
                elif now - changed[p][1] >= settle_seconds and self.collect(p):  # stable: safe to read
                    idle_since = now
            if idle_stop_seconds is not None and time.monotonic() - idle_since > idle_stop_seconds:
                return
            time.sleep(poll_seconds)
