"""`poolsight ingest trace`: getpage trace files into Kafka as GetpageBatch records.

Replays at recorded speed, a multiple of it, or as fast as possible; with
`follow` it tails a growing file. After each flushed chunk it records, per
file, the byte offset and line reached and the next sequence number of each
(source, pool), so a restart neither repeats nor skips rows (a crash between
a flush and the position write repeats at most that chunk, with the same
sequence numbers, which consumers drop as duplicates). Bad rows go to the
dead-letter topic with file, line and reason.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from poolsight.ingest.batching import batches_from_trace
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.positions import read_state, write_state
from poolsight.simulator.trace import PROJECT_COLUMNS, Columns, TraceBatch, TraceFormatError, TraceReader

COLLECTOR = "ingest-trace"


@dataclass
class Position:
    path: str
    inode: int
    offset: int = 0
    line: int = 1
    sequences: dict[str, int] = field(default_factory=dict)
    done: bool = False


@dataclass
class Summary:
    files: int = 0
    accepted: int = 0
    rejected: int = 0
    getpages: int = 0
    records: int = 0
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


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


_END = object()


def read_ahead(reader: TraceReader, depth: int = 2) -> Iterator[TraceBatch | TraceFormatError]:
    """The reader's batches and the rows it rejects, in file order, read in a thread up to
    `depth` items ahead: pyarrow parses without the GIL while the caller encodes and sends."""
    q: queue.Queue[Any] = queue.Queue(depth)
    stop = threading.Event()

    def put(item: Any) -> None:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def run() -> None:
        try:
            for b in reader.batches():
                put(b)
            put(_END)
        except BaseException as exc:  # re-raised in the caller's thread
            put(_Failed(exc))

    reader.on_reject = put
    thread = threading.Thread(target=run, name=f"read {reader.path.name}", daemon=True)
    thread.start()
    try:
        while (item := q.get()) is not _END:
            if isinstance(item, _Failed):
                raise item.exc
            yield item
    finally:
        stop.set()
        thread.join()


@dataclass
class TraceCollector:
    producer: AvroProducer
    state: PositionStore
    columns: Columns = PROJECT_COLUMNS
    source: str = "TRACE"
    speed: float = 0.0  # 0: as fast as possible; 1: recorded speed; 10: ten times faster
    max_getpages: int = 4096
    summary: Summary = field(default_factory=Summary)
    _t0: tuple[float, float] | None = None  # (first event time, wall clock then)

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
        self.producer.dead_letter(str(path), f"line {err.line}", err.reason, err.raw or str(err).encode(),
                                  collector=COLLECTOR, field_name=err.field)

    def collect(self, path: Path, *, follow: bool = False) -> Position:
        """Send the rows of path not sent before; return the position reached."""
        pos = self.state.load(path)
        if pos.done:
            return pos
        parquet = path.suffix.lower() in (".parquet", ".pq")
        reader = TraceReader(path, self.columns, start_offset=pos.offset, start_line=pos.line,
                             complete_lines_only=follow)
        started = time.monotonic()
        for batch in read_ahead(reader):
            if isinstance(batch, TraceFormatError):
                self._reject(path, batch)
                continue
            for b in batches_from_trace(batch, pos.sequences, max_getpages=self.max_getpages,
                                        default_source=self.source):
                self._pace(b.record["start_time"] / 1e6)
                self.producer.send("getpage_batch", b.key, b.record, getpages=b.getpages)
                self.summary.records += 1
                self.summary.getpages += len(b.record["page"])
            if not parquet:
                self.producer.flush()
                pos.offset, pos.line = batch.end_offset, batch.end_line
                self.state.save(path, pos)
        self.producer.flush()
        if parquet:
            pos.done = True
        else:
            pos.offset, pos.line = reader.end_offset, reader.end_line
        self.state.save(path, pos)
        self.summary.accepted += reader.accepted
        self.summary.rejected += reader.rejected
        self.summary.seconds += time.monotonic() - started
        return pos

    def run(self, paths: list[Path], *, follow: bool = False, poll_seconds: float = 1.0,
            idle_stop_seconds: float | None = None) -> Summary:
        """Collect every file; with follow, keep tailing until idle for idle_stop_seconds (None: for ever)."""
        self.summary.files = len(paths)
        idle_since = time.monotonic()
        while True:
            grew = False
            for path in paths:
                before = self.state.load(path).offset if path.exists() else 0
                if not path.exists():
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
