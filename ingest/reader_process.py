"""Trace files read and cut into GetpageBatch records in a child process.

Parsing (simulator/csv_block.py: the kernel, pyarrow for what it leaves) and cutting
(numpy, Python lists for Avro) run there, Avro encoding and sending in the collector's
process: two cores instead of one GIL.
The child streams, in file order, one item per reader batch (its records, the
sequence numbers reached and the byte offset and line after it) and every
rejected row, then a last item with the reader's totals.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from poolsight.ingest.batching import batches_from_trace, read_io_records
from poolsight.ingest.tracefiles import open_trace
from poolsight.ingest.zos.catalog import Catalog
from poolsight.ingest.zos.source import ZosTraceReader
from poolsight.schemas.getpage import GetpageBatch
from poolsight.simulator.trace import Columns, TraceFormatError


@dataclass(frozen=True)
class ReadJob:
    path: Path
    columns: Columns
    start_offset: int
    start_line: int
    follow: bool
    sequences: dict[str, int]
    max_getpages: int
    default_source: str
    fmt: str | None = None  # None: as the content shows
    catalog: tuple[Path, ...] = ()
    open_ios: tuple[tuple[object, ...], ...] = ()  # z/OS: I/O starts still waiting for their end


@dataclass(frozen=True)
class Chunk:
    batches: list[GetpageBatch]
    sequences: dict[str, int]  # next sequence number per key after these batches
    end_offset: int
    end_line: int
    reads: list[tuple[str, dict[str, Any]]]  # ReadIoBatch records (Kafka key, record)
    open_ios: list[list[object]]  # the position's I/O starts still open after these batches


@dataclass(frozen=True)
class Done:
    accepted: int
    rejected: int
    end_offset: int
    end_line: int


@dataclass(frozen=True)
class Failed:
    error: TraceFormatError  # the file could not be read on (header, I/O): raised in the caller


def _serve(jobs: Any, out: Any) -> None:
    while (job := jobs.get()) is not None:
        seq = dict(job.sequences)
        try:
            reader = open_trace(
                job.path,
                fmt=job.fmt,
                columns=job.columns,
                catalog=Catalog.load(list(job.catalog)),
                start_offset=job.start_offset,
                start_line=job.start_line,
                follow=job.follow,
                on_reject=out.put,
            )
            zos = reader if isinstance(reader, ZosTraceReader) else None
            if zos is not None:
                zos.restore_open([list(x) for x in job.open_ios])
            for b in reader.batches():
                cut = list(batches_from_trace(b, seq, max_getpages=job.max_getpages, default_source=job.default_source))
                reads = [] if b.io is None else list(read_io_records(b.io, seq, default_source=job.default_source))
                ios = [] if zos is None else zos.open_ios()
                out.put(Chunk(cut, dict(seq), b.end_offset, b.end_line, reads, ios))
            out.put(Done(reader.accepted, reader.rejected, reader.end_offset, reader.end_line))
        except TraceFormatError as exc:
            out.put(Failed(exc))
        except Exception as exc:  # handed to the caller, which raises it
            out.put(Failed(TraceFormatError(str(job.path), 0, "file", f"{type(exc).__name__}: {exc}")))


class ReaderProcess:
    """One child serving read jobs one after the other; started on first use."""

    def __init__(self, depth: int = 4) -> None:
        self._depth = depth
        self._proc: Any = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")  # not fork: the parent runs librdkafka threads
        self._jobs, self._out = ctx.Queue(), ctx.Queue(self._depth)
        self._proc = ctx.Process(
            target=_serve, args=(self._jobs, self._out), name="poolsight-trace-reader", daemon=True
        )
        self._proc.start()

    def read(self, job: ReadJob) -> Generator[Chunk | TraceFormatError | Done, None, None]:
        """The job's items in file order, ending with Done. A file-level error (unreadable
        header, missing file) is raised; a rejected row is yielded as a TraceFormatError."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._jobs.put(job)
        finished = False
        try:
            while True:
                try:
                    item = self._out.get(timeout=5)
                except queue.Empty:
                    if not self._proc.is_alive():
                        raise RuntimeError(f"the trace reader process died (exit {self._proc.exitcode})") from None
                    continue
                if isinstance(item, Failed):
                    finished = True
                    raise item.error
                yield item
                if isinstance(item, Done):
                    finished = True
                    return
        finally:
            if not finished:  # the caller stopped early: the child may be blocked mid-file
                self.close()

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._proc = None
