"""Trace readers and `poolsight simulate`: formats, bad rows, JSON output."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poolsight.simulator.trace import Columns, TraceFormatError, TraceReader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def block_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A block trace shaped like the CloudPhysics sample (version,time,op,size,lbn), skewed."""
    rng = np.random.default_rng(5)
    n = 60_000
    lbn = 40_000_000 + (rng.zipf(1.3, n) % 20_000)
    t = 5_633_898 + np.sort(rng.integers(0, 7200, n))
    f = tmp_path_factory.mktemp("blk") / "block.csv"
    with f.open("w") as fh:
        fh.write("version,time,op,size,lbn\n")
        for i in range(n):
            fh.write(f"1,{t[i]},{'2a' if i % 3 else '28'},512,{lbn[i]}\n")
    return f


GOOD = """time,pool,object,page,access,function
0.5,BP1,DB1.TS1,10,R,GP
0.6,BP1,DB1.TS1,11,S,GP
0.7,BP1,DB1.IX1,3,L,SWI
1.0,BP2,DB2.TS1,10,random,getpage
"""


def _read(path: Path, **kw: object) -> tuple[list[int], TraceReader]:
    reader = TraceReader(path, **kw)  # type: ignore[arg-type]
    pages: list[int] = []
    for batch in reader.batches():
        pages.extend(batch.pages.tolist())
    return pages, reader


def test_project_csv_format(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text(GOOD)
    reader = TraceReader(f)
    [batch] = list(reader.batches())
    assert batch.pages.tolist() == [10, 11, 3, 10]
    assert batch.access.tolist() == [0, 1, 2, 0]
    assert batch.function.tolist() == [0, 0, 1, 0]
    assert batch.pools.tolist() == ["BP1", "BP1", "BP1", "BP2"]
    assert reader.accepted == 4 and reader.rejected == 0


def test_bad_rows_are_named_counted_and_skipped(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(
        GOOD + "1.1,BP1,DB1.TS1,-4,R,GP\n1.2,BP1,DB1.TS1,12,X,GP\nnan,BP1,DB1.TS1,13,R,GP\n"
        "1.3,BP1,DB1.TS1\n1.4,BP1,DB1.TS1,14,R,GP\n"
    )
    pages, reader = _read(f)
    assert pages == [10, 11, 3, 10, 14]  # nothing accepted is lost
    assert reader.rejected == 4
    where = [(e.line, e.field) for e in reader.errors]
    assert where == [(6, "page"), (7, "access"), (8, "time"), (9, "row")]
    assert str(reader.errors[0]).startswith(f"{f}:6: page:")
    with pytest.raises(TraceFormatError, match=r"bad.csv:6: page"):
        _read(f, strict=True)


def test_missing_column_and_bad_encoding(tmp_path: Path) -> None:
    f = tmp_path / "nopage.csv"
    f.write_text("time,pool,object\n1,BP1,X\n")
    with pytest.raises(TraceFormatError, match="no column 'page'"):
        _read(f)
    g = tmp_path / "latin1.csv"
    g.write_bytes(GOOD.encode() + b"1.5,BP1,DB1.T\xe9,15,R,GP\n1.6,BP1,DB1.TS1,16,R,GP\n")
    pages, reader = _read(g)
    assert 16 in pages and reader.rejected >= 1


def test_parquet_trace(tmp_path: Path) -> None:
    f = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "time": [0.1, 0.2, None],
                "pool": ["BP1", "BP1", "BP1"],
                "object": ["A", "A", "B"],
                "page": [5, 6, 7],
                "access": ["R", "S", "R"],
            }
        ),
        f,
    )
    pages, reader = _read(f)
    assert pages == [5, 6]  # an event without its time cannot be placed in a pane
    assert [(e.line, e.field) for e in reader.errors] == [(3, "time")]
    h = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"time": [0.1, 0.2], "pool": ["BP1"] * 2, "object": ["A"] * 2, "page": [5, None]}), h)
    pages, reader = _read(h)
    assert pages == [5] and reader.rejected == 1 and reader.errors[0].line == 2


def test_generic_block_trace_columns(block_trace: Path) -> None:
    reader = TraceReader(
        block_trace, Columns(page="lbn", time="time", pool=None, object=None, access=None, function=None, source=None)
    )
    n = sum(len(b) for b in reader.batches())
    assert n == 60_000 and reader.rejected == 0


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_reader_never_crashes_on_garbage(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    f = tmp_path_factory.mktemp("fuzz") / "g.csv"
    f.write_bytes(b"time,pool,object,page\n" + data)
    reader = TraceReader(f)
    for _ in reader.batches():
        pass
    assert reader.accepted + reader.rejected >= 0


def test_simulate_cli_on_a_block_trace_matches_brute_force(tmp_path: Path, block_trace: Path) -> None:
    out = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "simulate",
            str(block_trace),
            "--page-column",
            "lbn",
            "--time-column",
            "time",
            "--window-panes",
            "1000",
            "--sizes",
            "100,1000,10000",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "read 60,000 rows, rejected 0" in r.stderr
    result = json.loads(out.read_text())
    bp = result["pools"]["BP0"]
    with block_trace.open() as fh:
        pages = [int(row["lbn"]) for row in csv.DictReader(fh)]
    assert bp["refs"] == 60_000 and bp["distinct_pages"] == len(set(pages))
    # Brute force LRU over the same page column, at the three sizes.
    for row in bp["curve"]:
        cache: OrderedDict[int, None] = OrderedDict()
        misses = 0
        for p in pages:
            if p in cache:
                cache.move_to_end(p)
            else:
                misses += 1
                cache[p] = None
                if len(cache) > row["size_pages"]:
                    cache.popitem(last=False)
        assert row["miss_ratio"] == pytest.approx(misses / len(pages), abs=1e-12)
    assert set(bp["curve"][0]) >= {"size_pages", "hit_ratio", "miss_ratio"}
    assert "ALL" in bp["objects"]


def test_simulate_cli_reports_bad_rows_and_strict(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text(GOOD + "2.0,BP1,DB1.TS1,zz,R,GP\n")
    cmd = [sys.executable, "-m", "poolsight.cli", "simulate", str(f), "--sizes", "1,2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and f"{f}:6: page" in r.stderr and "rejected 1" in r.stderr
    r = subprocess.run([*cmd, "--strict"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"{f}:6: page" in r.stderr


def test_block_fast_path_and_line_path_agree(tmp_path: Path) -> None:
    """Blocks parsed whole and blocks read line by line (one holds a bad row) give the same rows,
    and the bad row keeps its exact line number."""
    f = tmp_path / "many.csv"
    rows = [
        f"{i * 0.01:.2f},BP{i % 3},DB.TS{i % 7},{i},{'RSL'[i % 3]},{'GP' if i % 5 else 'SWI'}\n" for i in range(5000)
    ]
    rows[3210] = "32.10,BP0,DB.TS1,-1,R,GP\n"
    f.write_text("time,pool,object,page,access,function\n" + "".join(rows))
    small = TraceReader(f, block_bytes=4096)
    got = [(b.pools.tolist(), b.pages.tolist(), b.access.tolist(), b.function.tolist()) for b in small.batches()]
    pages = [p for g in got for p in g[1]]
    assert pages == [i for i in range(5000) if i != 3210]
    assert [(e.line, e.field) for e in small.errors] == [(3212, "page")]
    whole = TraceReader(f)  # one block: all of it by the line path
    assert [p for b in whole.batches() for p in b.pages.tolist()] == pages
    assert small.accepted == whole.accepted == 4999
    assert small.end_offset == whole.end_offset == f.stat().st_size


@pytest.mark.parametrize("bad_row", [None, 2500])
def test_every_batch_ends_at_a_resumable_position(tmp_path: Path, bad_row: int | None) -> None:
    """Batches cut from one block (fast path) or read line by line each carry the byte offset and
    line just after their own last row: resuming there reads exactly the rows after them."""
    f = tmp_path / "t.csv"
    rows = [f"{i * 0.01:.2f},BP{i % 3},DB.TS{i % 7},{i},R,GP\n" for i in range(5000)]
    if bad_row is not None:
        rows[bad_row] = "25.00,BP0,DB.TS1,-1,R,GP\n"  # sends the block down the line path
    f.write_text("time,pool,object,page,access,function\n" + "".join(rows))
    want = [i for i in range(5000) if i != bad_row]
    batches = list(TraceReader(f, batch_rows=700).batches())
    assert len(batches) > 5
    seen = 0
    for b in batches:
        seen += len(b)
        rest = TraceReader(f, batch_rows=700, start_offset=b.end_offset, start_line=b.end_line)
        got = [p for r in rest.batches() for p in r.pages.tolist()]
        assert got == want[seen:], f"resuming after {seen} rows"
        errors = [(e.line, e.field) for e in rest.errors]
        if bad_row is not None and seen <= bad_row:  # the bad row is still ahead, at its true line
            assert errors == [(bad_row + 2, "page")]


def test_fast_path_names_match_the_line_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dictionary-coded names (source/pool pairs, blanks around names, empty defaults) read
    by the block path equal what the csv-module line path reads from the same rows."""
    rows = [
        f"{i * 0.01:.2f},{['DB2A', '', ' DB2B'][i % 3]},{[' BP1', 'BP1 ', 'BP2', ''][i % 4]},"
        f"{['A.TS', ' A.TS', 'B.IX', ''][i % 5 % 4]},{i},{'rSl'[i % 3]},{['GP', 'swi', ''][i % 3]}\n"
        for i in range(3000)
    ]
    header = "time,source,pool,object,page,access,function\n"
    fast, slow = tmp_path / "fast.csv", tmp_path / "slow.csv"
    fast.write_text(header + "".join(rows))
    slow.write_text(header + rows[0].replace(",DB2A,", ',"DB2A",') + "".join(rows[1:]))  # a quote: line path

    def read(f: Path) -> list[tuple[str, str, int, int, int]]:
        out = []
        for b in TraceReader(f).batches():
            out += list(
                zip(
                    b.pools.tolist(),
                    b.objects.tolist(),
                    b.pages.tolist(),
                    b.access.tolist(),
                    b.function.tolist(),
                    strict=True,
                )
            )
        return out

    line_path = TraceReader._lines
    used: list[str] = []

    def counting(self: TraceReader, *a: Any) -> Any:
        used.append(self.path.name)
        return line_path(self, *a)

    monkeypatch.setattr(TraceReader, "_lines", counting)
    got = read(fast)
    assert got == read(slow)
    assert used == ["slow.csv"]  # the fast file was read by the block path only
    assert {p for p, *_ in got} == {
        "DB2A/BP1",
        "DB2A/BP2",
        "DB2B/BP1",
        "DB2B/BP2",
        "BP1",
        "BP2",
        "DB2A/BP0",
        "DB2B/BP0",
        "BP0",
    }
    assert {o for _, o, *_ in got} == {"A.TS", "B.IX", "ALL"}
