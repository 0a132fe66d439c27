"""The trace reader process: same records as reading in-process, rejects in file order,
file-level errors raised, and a reader stopped mid-file does not leak into the next job."""

from __future__ import annotations

from pathlib import Path

import pytest

from poolsight.ingest.batching import batches_from_trace
from poolsight.ingest.reader_process import Chunk, Done, ReaderProcess, ReadJob
from poolsight.simulator.trace import PROJECT_COLUMNS, TraceFormatError, TraceReader

HEADER = "time,source,pool,object,page,access,function\n"


def _rows(a: int, b: int) -> str:
    return "".join(
        f"{1_700_000_000 + i * 0.001:.6f},DB2A,BP{i % 2},DB1.TS{i % 5},{i * 7 % 1000},R,GP\n" for i in range(a, b)
    )


def _job(path: Path, **kw: object) -> ReadJob:
    args = {
        "path": path,
        "columns": PROJECT_COLUMNS,
        "start_offset": 0,
        "start_line": 1,
        "follow": False,
        "sequences": {},
        "max_getpages": 500,
        "default_source": "X",
        **kw,
    }
    return ReadJob(**args)  # type: ignore[arg-type]


def test_same_records_as_in_process_and_rejects_in_order(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text(HEADER + _rows(0, 3000) + "1700000009.0,DB2A,BP1,DB1.TS1,notapage,R,GP\n" + _rows(3000, 4000))
    seq: dict[str, int] = {}
    want = [
        (b.key, b.record())
        for tb in TraceReader(f).batches()
        for b in batches_from_trace(tb, seq, max_getpages=500, default_source="X")
    ]
    rp = ReaderProcess()
    try:
        items = list(rp.read(_job(f)))
        got = [(b.key, b.record()) for it in items if isinstance(it, Chunk) for b in it.batches]
        assert got == want
        rejects = [it for it in items if isinstance(it, TraceFormatError)]
        assert [(e.line, e.field) for e in rejects] == [(3002, "page")]
        done = items[-1]
        assert isinstance(done, Done) and (done.accepted, done.rejected) == (4000, 1)
        assert done.end_offset == f.stat().st_size
        last = [it for it in items if isinstance(it, Chunk)][-1]
        assert last.sequences == seq  # the sequence numbers reached, for the collector's position

        # Stopped after the first item: the next job starts clean (a new child).
        it = rp.read(_job(f))
        next(it)
        it.close()
        again = list(rp.read(_job(f, start_offset=done.end_offset, start_line=4002)))
        assert len(again) == 1 and isinstance(again[0], Done) and again[0].accepted == 0

        empty = tmp_path / "empty.csv"
        empty.write_text("")
        with pytest.raises(TraceFormatError, match="empty file"):
            list(rp.read(_job(empty)))
    finally:
        rp.close()
