"""Reading getpage traces: the project's trace format (CSV or Parquet, see
docs/trace-format.md) and any CSV with a header given the name of its page
column (generic block traces such as CloudPhysics').

A row that cannot be read is reported with file, line and reason and counted;
reading goes on unless strict.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from poolsight.schemas.getpage import ACCESS_CODES, ACCESS_LETTERS, FUNCTION_CODES, FUNCTION_LETTERS
from poolsight.simulator.csv_block import Block, parse_block

TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class TraceFormatError(Exception):
    """A row (or file) that cannot be read: names the source, the line and the field."""

    def __init__(self, source: str, line: int, field: str, reason: str, raw: bytes = b"", unit: str = "line") -> None:
        # unit "byte": `line` is the byte offset of a binary record (SMF, GTF)
        where = f"byte {line}" if unit == "byte" else str(line)
        super().__init__(f"{source}:{where}: {field}: {reason}")
        self.source, self.line, self.field, self.reason, self.raw, self.unit = source, line, field, reason, raw, unit

    @property
    def position(self) -> str:
        """`line 12` or `byte 4096`: where in its file, for dead letters and summaries."""
        return f"{self.unit} {self.line}"

    def __reduce__(self) -> tuple[type, tuple[str, int, str, str, bytes, str]]:  # crosses process boundaries
        return (TraceFormatError, (self.source, self.line, self.field, self.reason, self.raw, self.unit))


@dataclass(frozen=True)
class Columns:
    """Which header column holds what; None: absent (defaults: time 0, pool/object from
    `default_pool`/`default_object`, access random, function getpage)."""

    page: str = "page"
    time: str | None = "time"
    pool: str | None = "pool"
    object: str | None = "object"
    access: str | None = "access"
    function: str | None = "function"
    source: str | None = "source"
    time_unit: str = "s"
    default_pool: str = "BP0"
    default_object: str = "ALL"


PROJECT_COLUMNS = Columns()
OPTIONAL_IN_PROJECT_FORMAT = {"access", "function", "source"}


@dataclass(frozen=True)
class Names:
    """A column of names as codes into a small table: a trace has few distinct pools and
    objects, so rows carry no strings (readers and collectors never build one per row)."""

    codes: npt.NDArray[np.int32]
    table: npt.NDArray[np.str_]

    @classmethod
    def of(cls, values: Any) -> Names:
        table, codes = np.unique(np.asarray(values, dtype=np.str_), return_inverse=True)
        return cls(codes.reshape(-1).astype(np.int32), table)

    def values(self) -> npt.NDArray[np.str_]:
        out: npt.NDArray[np.str_] = self.table[self.codes]
        return out

    def __getitem__(self, sel: Any) -> Names:
        return Names(self.codes[sel], self.table)

    def __len__(self) -> int:
        return len(self.codes)


@dataclass
class ReadIos:
    """Measured read I/Os (IFCID 006 paired with 007) that came with a trace, in start order."""

    times: npt.NDArray[np.float64]  # start, seconds since the epoch
    pool_names: Names  # as TraceBatch.pool_names
    object_names: Names
    io_type: npt.NDArray[np.uint8]  # 0 sync, 1 sequential, 2 list, 3 dynamic prefetch
    first_page: npt.NDArray[np.int64]
    pages: npt.NDArray[np.int32]
    elapsed_us: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.times)


@dataclass
class TraceBatch:
    times: npt.NDArray[np.float64]
    pool_names: Names  # "source/pool" when the trace has a source column
    object_names: Names
    pages: npt.NDArray[np.uint64]
    access: npt.NDArray[np.uint8]
    function: npt.NDArray[np.uint8]
    end_offset: int = 0  # byte offset just after the batch's last line (CSV) or record (SMF, GTF)
    end_line: int = 0
    hit: npt.NDArray[np.uint8] | None = None  # observed: 1 the page was in the pool; None not observed
    io: ReadIos | None = None  # read I/Os finished within the batch's part of the file

    def __len__(self) -> int:
        return len(self.times)

    @property
    def pools(self) -> npt.NDArray[np.str_]:
        return self.pool_names.values()

    @property
    def objects(self) -> npt.NDArray[np.str_]:
        return self.object_names.values()

    def __getitem__(self, sel: slice) -> TraceBatch:
        return TraceBatch(
            self.times[sel],
            self.pool_names[sel],
            self.object_names[sel],
            self.pages[sel],
            self.access[sel],
            self.function[sel],
            self.end_offset,
            self.end_line,
            None if self.hit is None else self.hit[sel],
            self.io if sel.start in (0, None) else None,  # the I/Os travel with the first part
        )


class TraceSource(Protocol):
    """What every trace reader offers its caller (this module's for CSV/Parquet; the ingest
    layer's for z/OS traces, see ingest/tracefiles.py)."""

    accepted: int
    errors: list[TraceFormatError]
    end_offset: int
    end_line: int

    @property
    def rejected(self) -> int: ...

    def batches(self) -> Iterator[TraceBatch]: ...


@dataclass
class TraceReader:
    path: Path
    columns: Columns = PROJECT_COLUMNS
    strict: bool = False
    batch_rows: int = 65_536
    accepted: int = 0
    errors: list[TraceFormatError] = field(default_factory=list)
    max_kept_errors: int = 1000
    start_offset: int = 0  # resume a CSV at this byte offset (after a line end)
    start_line: int = 1  # the line number of the line before start_offset
    complete_lines_only: bool = False  # leave a last line without its newline for later (--follow)
    block_bytes: int = 8 << 20
    on_reject: Callable[[TraceFormatError], None] | None = None

    @property
    def rejected(self) -> int:
        return self._rejected

    def __post_init__(self) -> None:
        self._rejected = 0
        self.end_offset, self.end_line = self.start_offset, self.start_line
        if self.columns.time_unit not in TIME_UNITS:
            raise ValueError(f"time unit {self.columns.time_unit!r}: use one of {sorted(TIME_UNITS)}")

    def _reject(self, err: TraceFormatError) -> None:
        if self.strict:
            raise err
        self._rejected += 1
        if self.on_reject is not None:
            self.on_reject(err)
        if len(self.errors) < self.max_kept_errors:
            self.errors.append(err)

    def batches(self) -> Iterator[TraceBatch]:
        if self.path.suffix.lower() in (".parquet", ".pq"):
            yield from self._parquet()
        else:
            yield from self._csv()

    # ------------------------------------------------------------ CSV

    def _header_map(self, header: list[str]) -> dict[str, int | None]:
        c = self.columns
        wanted = {
            "page": c.page,
            "time": c.time,
            "pool": c.pool,
            "object": c.object,
            "access": c.access,
            "function": c.function,
            "source": c.source,
        }
        idx: dict[str, int | None] = {}
        names = [h.strip() for h in header]
        for key, col in wanted.items():
            if col is None:
                idx[key] = None
            elif col in names:
                idx[key] = names.index(col)
            elif col == getattr(PROJECT_COLUMNS, key) and key in OPTIONAL_IN_PROJECT_FORMAT:
                idx[key] = None
            else:
                raise TraceFormatError(str(self.path), 1, col, f"no column {col!r} in header {names}")
        return idx

    def _csv(self) -> Iterator[TraceBatch]:
        """Blocks of complete lines: each parsed at once (csv_block.py: the kernel, else pyarrow)
        and checked with vectorised tests; a block with anything wrong in it is read again line
        by line, so that every bad row is named (file, line, field) and every good one kept."""
        src = str(self.path)
        try:
            fh = self.path.open("rb")
        except OSError as exc:
            raise TraceFormatError(src, 0, "file", str(exc)) from exc
        with fh:
            first = fh.readline()
            if not first.strip():
                raise TraceFormatError(src, 1, "header", "empty file or empty header")
            try:
                header = [h.strip() for h in next(csv.reader([first.decode("utf-8-sig")]))]
            except (UnicodeDecodeError, csv.Error) as exc:
                raise TraceFormatError(src, 1, "header", f"unreadable header: {exc}") from None
            idx = self._header_map(header)
            offset = max(self.start_offset, len(first))
            line = max(self.start_line, 1)
            while True:
                fh.seek(offset)
                data = fh.read(self.block_bytes)
                if not data:
                    break
                cut = data.rfind(b"\n") + 1
                if len(data) < self.block_bytes and cut < len(data) and not self.complete_lines_only:
                    cut = len(data)  # the file's last line, without a newline
                if cut == 0:
                    if len(data) < self.block_bytes:
                        break  # a line still being written
                    cut = len(data)  # a single line longer than a block: the line path names it
                block = data[:cut]
                parsed = parse_block(block, header, idx, self.batch_rows)
                fast = None if parsed is None else self._fast_block(parsed, offset + cut, line + parsed.rows)
                if parsed is not None and fast is not None:
                    lines = parsed.rows
                    self.accepted += len(fast)
                    yield from self._split(fast, parsed.ends, block, offset, line)
                else:
                    lines = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
                    yield from self._lines(block, header, idx, offset, line)
                offset += cut
                line += lines
            self.end_offset, self.end_line = offset, line

    def _split(
        self, b: TraceBatch, every: npt.NDArray[np.int64] | None, block: bytes, offset: int, line: int
    ) -> Iterator[TraceBatch]:
        """A fast block (one row per line) in batches, each ending with its own position: a
        collector that resumes at a batch's end must neither skip nor repeat the block's rest.
        `every`: the offsets after every batch_rows-th line, when the parser gave them."""
        if len(b) <= self.batch_rows:
            yield b
            return
        if every is None:
            every = (np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == ord("\n")) + 1)[
                self.batch_rows - 1 :: self.batch_rows
            ]
        for k, i in enumerate(range(0, len(b), self.batch_rows)):
            part = b[i : i + self.batch_rows]
            j = i + len(part)
            if j < len(b):  # the last part keeps the block's end (its last line may lack a newline)
                part.end_offset, part.end_line = offset + int(every[k]), line + j
            yield part

    def _lines(
        self, block: bytes, header: list[str], idx: dict[str, int | None], offset: int, line: int
    ) -> Iterator[TraceBatch]:
        """The exact path: one line at a time."""
        src = str(self.path)
        scale = TIME_UNITS[self.columns.time_unit]
        width = len(header)
        buf: list[tuple[float, str, str, int, int, int]] = []
        for raw in block.splitlines(keepends=True):
            line += 1
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                row = next(csv.reader([raw.decode("utf-8")]))
            except UnicodeDecodeError as exc:
                self._reject(TraceFormatError(src, line, "row", f"not UTF-8 at byte {exc.start}", raw))
                continue
            except csv.Error as exc:
                self._reject(TraceFormatError(src, line, "row", f"unreadable: {exc}", raw))
                continue
            if len(row) != width:
                self._reject(TraceFormatError(src, line, "row", f"{len(row)} fields, header has {width}", raw))
                continue
            parsed = self._parse_row(row, idx, scale, src, line, raw)
            if parsed is not None:
                buf.append(parsed)
                if len(buf) >= self.batch_rows:
                    yield self._to_batch(buf, offset, line)
                    buf = []
        if buf:
            yield self._to_batch(buf, offset, line)

    def _fast_block(self, parsed: Block, end_offset: int, end_line: int) -> TraceBatch | None:
        """The block parsed at once (csv_block.py) as a batch, or None when any row needs the
        line-by-line path."""
        c = self.columns
        n = parsed.rows
        if n and int(parsed.pages.min()) < 0:
            return None
        times = np.zeros(n)
        if parsed.times is not None:
            times = parsed.times * TIME_UNITS[c.time_unit]
            if not np.isfinite(times).all():
                return None

        def dictionary(key: str) -> tuple[list[str], npt.NDArray[np.int32]]:
            values, indices = parsed.texts[key]
            return [v.strip() for v in values], indices

        def codes(key: str, table: dict[str, int]) -> npt.NDArray[np.uint8] | None:
            if key not in parsed.texts:
                return np.zeros(n, dtype=np.uint8)
            values, indices = dictionary(key)
            lookup = []
            for v in values:
                code = 0 if v == "" else table.get(v.lower())
                if code is None:
                    return None
                lookup.append(code)
            return np.array(lookup, dtype=np.uint8)[indices] if lookup else np.zeros(n, np.uint8)

        access, function = codes("access", ACCESS_CODES), codes("function", FUNCTION_CODES)
        if access is None or function is None:
            return None

        def text(key: str, default: str) -> Names:
            if key not in parsed.texts:
                return Names(np.zeros(n, dtype=np.int32), np.array([default]))
            values, indices = dictionary(key)
            # Values that differ only in surrounding blanks are one name.
            table, remap = np.unique(np.array([v or default for v in values] or [default]), return_inverse=True)
            return Names(remap.reshape(-1).astype(np.int32)[indices], table)

        pools = text("pool", c.default_pool)
        if "source" in parsed.texts:
            source = text("source", "")
            pair = source.codes.astype(np.int64) * len(pools.table) + pools.codes
            used, code = np.unique(pair, return_inverse=True)
            src, pool = source.table[used // len(pools.table)], pools.table[used % len(pools.table)]
            table, remap = np.unique(
                np.where(src != "", np.char.add(np.char.add(src, "/"), pool), pool), return_inverse=True
            )
            pools = Names(remap.reshape(-1).astype(np.int32)[code.reshape(-1)], table)
        return TraceBatch(
            times=times.astype(np.float64),
            pool_names=pools,
            object_names=text("object", c.default_object),
            pages=parsed.pages.astype(np.uint64),
            access=access,
            function=function,
            end_offset=end_offset,
            end_line=end_line,
        )

    def _parse_row(
        self,
        row: list[str],
        idx: dict[str, int | None],
        scale: float,
        src: str,
        line: int,
        raw: bytes = b"",
    ) -> tuple[float, str, str, int, int, int] | None:
        c = self.columns

        def cell(key: str) -> str | None:
            i = idx[key]
            return None if i is None else row[i].strip()

        page_s = cell("page")
        try:
            page = int(page_s or "")
            if page < 0 or page >= 2**64:
                raise ValueError
        except ValueError:
            self._reject(
                TraceFormatError(src, line, c.page, f"page number {page_s!r} is not a non-negative integer", raw)
            )
            return None
        t = 0.0
        if (t_s := cell("time")) is not None:
            try:
                t = float(t_s) * scale
                if not math.isfinite(t):
                    raise ValueError
            except ValueError:
                self._reject(TraceFormatError(src, line, str(c.time), f"time {t_s!r} is not a finite number", raw))
                return None
        pool = cell("pool") or c.default_pool
        if source := cell("source"):
            pool = f"{source}/{pool}"
        obj = cell("object") or c.default_object
        access = 0
        if (a_s := cell("access")) is not None and a_s != "":
            code = ACCESS_CODES.get(a_s.lower())
            if code is None:
                self._reject(TraceFormatError(src, line, str(c.access), f"access type {a_s!r}: use R, S or L", raw))
                return None
            access = code
        function = 0
        if (f_s := cell("function")) is not None and f_s != "":
            fcode = FUNCTION_CODES.get(f_s.lower())
            if fcode is None:
                self._reject(TraceFormatError(src, line, str(c.function), f"function {f_s!r}: use GP, SWI or REL", raw))
                return None
            function = fcode
        self.accepted += 1
        return (t, pool, obj, page, access, function)

    @staticmethod
    def _to_batch(
        buf: list[tuple[float, str, str, int, int, int]], end_offset: int = 0, end_line: int = 0
    ) -> TraceBatch:
        t, pools, objs, pages, acc, fun = zip(*buf, strict=True)
        return TraceBatch(
            times=np.array(t, dtype=np.float64),
            pool_names=Names.of(pools),
            object_names=Names.of(objs),
            pages=np.array(pages, dtype=np.uint64),
            access=np.array(acc, dtype=np.uint8),
            function=np.array(fun, dtype=np.uint8),
            end_offset=end_offset,
            end_line=end_line,
        )

    # ------------------------------------------------------------ Parquet

    def _parquet(self) -> Iterator[TraceBatch]:
        # lazy: pyarrow, for Parquet traces only
        import pyarrow as pa
        import pyarrow.parquet as pq

        src = str(self.path)
        try:
            pf = pq.ParquetFile(self.path)
        except (OSError, pa.ArrowException) as exc:
            raise TraceFormatError(src, 0, "file", f"not a readable Parquet file: {exc}") from exc
        names = pf.schema_arrow.names
        strs = [str(n) for n in names]
        idx = self._header_map(strs)
        row0 = 0
        for rb in pf.iter_batches(batch_size=self.batch_rows):
            n = rb.num_rows
            cols = {key: (None if i is None else rb.column(i).to_pylist()) for key, i in idx.items()}
            buf = []
            for r in range(n):
                row = [
                    "" if cols[k] is None or cols[k][r] is None else str(cols[k][r])  # type: ignore[index]
                    for k in ("page", "time", "pool", "object", "access", "function", "source")
                ]
                fake_idx: dict[str, int | None] = {
                    k: (None if idx[k] is None else j)
                    for j, k in enumerate(("page", "time", "pool", "object", "access", "function", "source"))
                }
                parsed = self._parse_row(row, fake_idx, TIME_UNITS[self.columns.time_unit], src, row0 + r + 1)
                if parsed is not None:
                    buf.append(parsed)
            row0 += n
            if buf:
                yield self._to_batch(buf)


def write_trace_csv(path: Path, batch: TraceBatch, *, append: bool = False) -> None:
    """Write rows in the project's trace format (used by tests and the generator)."""
    access = np.array(ACCESS_LETTERS)
    function = np.array(FUNCTION_LETTERS)
    new = not append or not path.exists()
    with path.open("a" if append else "w", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["time", "pool", "object", "page", "access", "function"])
        for i in range(len(batch)):
            w.writerow(
                [
                    repr(float(batch.times[i])),
                    batch.pools[i],
                    batch.objects[i],
                    int(batch.pages[i]),
                    access[batch.access[i]],
                    function[batch.function[i]],
                ]
            )


def add_column_arguments(p: argparse.ArgumentParser) -> None:
    """The options that map a generic CSV's header to the trace fields (simulate, ingest trace)."""
    g = p.add_argument_group("generic CSV columns (default: the project's trace format)")
    g.add_argument("--page-column", help="column holding the page (block) number")
    g.add_argument("--time-column", help="column holding the event time")
    g.add_argument("--time-unit", choices=sorted(TIME_UNITS), default="s", help="unit of the time column")
    g.add_argument("--pool-column")
    g.add_argument("--object-column")
    g.add_argument("--access-column", help="R/S/L (random, sequential, RID-list)")
    g.add_argument("--function-column", help="GP/SWI/REL")
    g.add_argument("--pool", default="BP0", help="pool name when the trace has no pool column")


def columns_from_args(a: argparse.Namespace) -> Columns:
    if a.page_column is None:
        return Columns(time_unit=a.time_unit, default_pool=a.pool)
    return Columns(
        page=a.page_column,
        time=a.time_column,
        pool=a.pool_column,
        object=a.object_column,
        access=a.access_column,
        function=a.function_column,
        source=None,
        time_unit=a.time_unit,
        default_pool=a.pool,
    )
