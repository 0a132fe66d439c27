"""`poolsight ingest trace`: getpage trace files into Kafka as GetpageBatch records.

Replays at recorded speed, a multiple of it, or as fast as possible; with
`follow` it tails a growing file. At each checkpoint (every `checkpoint_seconds`
and at the end of every pass over a file) it flushes the producer and records,
per file, the byte offset and line reached and the next sequence number of
each (source, pool), so a restart neither repeats nor skips rows (a crash
between checkpoints repeats what was sent since the last one, with the same
sequence numbers, which consumers drop as duplicates). Checkpoints are timed,
not per chunk, because each flush waits for Kafka's acknowledgements and
stalls sending. Bad rows go to the dead-letter topic with file, line and reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.positions import read_state, write_state
from poolsight.ingest.reader_process import Chunk, ReaderProcess, ReadJob
from poolsight.simulator.trace import PROJECT_COLUMNS, Columns, TraceFormatError

COLLECTOR = "ingest-trace"


@dataclass
class Position:
    path: str
    inode: int
    offset: int = 0
    line: int = 1
    sequences: dict[str, int] = field(default_factory=dict)
    done: bool = False
    open_ios: list[list[object]] = field(default_factory=list)  # z/OS: read I/Os begun, not ended


@dataclass
class Summary:
    files: int = 0
    accepted: int = 0
    rejected: int = 0
    getpages: int = 0
    records: int = 0
    read_ios: int = 0  # z/OS traces: IFCID 006/007 pairs sent as ReadIoBatch records
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["getpages_per_s"] = self.getpages / self.seconds if self.seconds else None
        return out


class PositionStore:
    def __init__(self, state_dir: Path) -> None:
        self.dir = state_dir

    def load(self, path: Path) -> Position:
        inode = path.stat().st_ino
        try:
            pos = Position(**(read_state(self.dir, path) or {}))
        except TypeError:
            return Position(str(path.resolve()), inode)
        if pos.inode != inode or pos.offset > path.stat().st_size:
            return Position(str(path.resolve()), inode)  # replaced or truncated: start over
        return pos

    def save(self, path: Path, pos: Position) -> None:
        write_state(self.dir, path, pos.__dict__)


@dataclass
class TraceCollector:
    producer: AvroProducer
    state: PositionStore
    columns: Columns = PROJECT_COLUMNS
    fmt: str | None = None  # --format; None: as each file's content shows
    catalog: tuple[Path, ...] = ()  # --catalog files (z/OS traces)
    source: str = "TRACE"
    speed: float = 0.0  # 0: as fast as possible; 1: recorded speed; 10: ten times faster
    max_getpages: int = 4096
    checkpoint_seconds: float = 1.0
    summary: Summary = field(default_factory=Summary)
    _t0: tuple[float, float] | None = None  # (first event time, wall clock then)
    _reader: ReaderProcess = field(default_factory=ReaderProcess)
    # Files of this run that were read from their start and gave no row, with why (for the exit code).
    unread: dict[Path, str] = field(default_factory=dict)
    _first_error: dict[Path, str] = field(default_factory=dict)

    def _pace(self, event_time: float) -> None:
        if self.speed <= 0:
            return
        if self._t0 is None:
            self._t0 = (event_time, time.monotonic())
            return
        due = self._t0[1] + (event_time - self._t0[0]) / self.speed
        delay = due - time.monotonic()
        if delay > 0:
            self.producer.flush()  # what is due now is on its way before we wait
            time.sleep(delay)

    def _reject(self, path: Path, err: TraceFormatError) -> None:
        self._first_error.setdefault(path, f"{err.position}, {err.field}: {err.reason}")
        self.producer.dead_letter(
            str(path),
            err.position,
            err.reason,
            err.raw or str(err).encode(),
            collector=COLLECTOR,
            field_name=err.field,
        )

    def collect(self, path: Path, *, follow: bool = False) -> Position:
        """Send the rows of path not sent before; return the position reached."""
        pos = self.state.load(path)
        if pos.done:
            return pos
        fresh = pos.offset == 0 and pos.line == 0
        accepted_before = self.summary.accepted
        parquet = path.suffix.lower() in (".parquet", ".pq")
        job = ReadJob(
            path,
            self.columns,
            pos.offset,
            pos.line,
            follow,
            dict(pos.sequences),
            self.max_getpages,
            self.source,
            self.fmt,
            self.catalog,
            tuple(tuple(x) for x in pos.open_ios),
        )
        started = time.monotonic()
        try:
            self._read(path, pos, job, parquet)
        except KeyboardInterrupt:  # what was sent is delivered and remembered before stopping
            self.producer.flush()
            if not parquet:
                self.state.save(path, pos)
            raise
        finally:
            self.summary.seconds += time.monotonic() - started
        if fresh and not follow and self.summary.accepted == accepted_before:
            self.unread[path] = self._first_error.get(path, "empty, or no rows")
        return pos

    def _read(self, path: Path, pos: Position, job: ReadJob, parquet: bool) -> None:
        last_checkpoint = time.monotonic()
        for item in self._reader.read(job):
            if isinstance(item, TraceFormatError):
                self._reject(path, item)
            elif isinstance(item, Chunk):
                for b in item.batches:
                    self._pace(b.start_time / 1e6)
                    self.producer.send_batch(b)
                    self.summary.records += 1
                    self.summary.getpages += b.events
                for key, rec in item.reads:
                    self.producer.send("read_io_batch", key, rec)
                    self.summary.read_ios += len(rec["time_offset"])
                pos.sequences, pos.open_ios = item.sequences, item.open_ios
                if not parquet:  # a Parquet file is resumed only as a whole (done or not)
                    pos.offset, pos.line = item.end_offset, item.end_line
                    if time.monotonic() - last_checkpoint >= self.checkpoint_seconds:
                        self.producer.flush()
                        self.state.save(path, pos)
                        last_checkpoint = time.monotonic()
            else:
                self.producer.flush()
                if parquet:
                    pos.done = True
                else:
                    pos.offset, pos.line = item.end_offset, item.end_line
                self.state.save(path, pos)
                self.summary.accepted += item.accepted
                self.summary.rejected += item.rejected

    def close(self) -> None:
        """Stop the reader process (it is also stopped when this process exits)."""
        self._reader.close()

    def run(
        self,
        paths: list[Path],
        *,
        follow: bool = False,
        poll_seconds: float = 1.0,
        idle_stop_seconds: float | None = None,
    ) -> Summary:
        """Collect every file; with follow, keep tailing until idle for idle_stop_seconds (None: for ever)."""
        self.summary.files = len(paths)
        idle_since = time.monotonic()
        while True:
            grew = False
            for path in paths:
                before = self.state.load(path).offset if path.exists() else 0
                if not path.exists():
                    if not follow:
                        self.unread[path] = "no such file"
                    continue
                after = self.collect(path, follow=follow).offset
                grew = grew or after != before
            if not follow:
                return self.summary
            if grew:
                idle_since = time.monotonic()
            elif idle_stop_seconds is not None and time.monotonic() - idle_since > idle_stop_seconds:
                return self.summary
            time.sleep(poll_seconds)
