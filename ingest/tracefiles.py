"""Which reader a trace file needs, by `--format` or by its content, and the options that go with
it: the project's CSV/Parquet (simulator/trace.py), SMF type 102 and GTF data sets and OMEGAMON
PE record-trace text (ingest/zos/). Every command that reads a trace opens it here, so
`simulate`, `advise` and `ingest trace` read the same formats the same way."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from poolsight.argtypes import InputFile
from poolsight.ingest.zos.binary import sniff
from poolsight.ingest.zos.catalog import Catalog
from poolsight.ingest.zos.source import ZosTraceReader
from poolsight.simulator import cli as simulate_cli
from poolsight.simulator.trace import (
    PROJECT_COLUMNS,
    Columns,
    TraceFormatError,
    TraceReader,
    TraceSource,
    columns_from_args,
)

FORMATS = ("smf", "gtf", "omegamon-rectrace", "csv", "parquet")
ZOS_FORMATS = ("smf", "gtf", "omegamon-rectrace")


def detect(path: Path) -> str:
    """The format a file's content shows (raises TraceFormatError when it cannot be opened)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise TraceFormatError(str(path), 0, "file", str(exc)) from exc
    if head[:4] == b"PAR1" or path.suffix.lower() in (".parquet", ".pq"):
        return "parquet"
    found = sniff(head)
    if found is not None:
        return found[0].name
    # lazy: the record-trace reader only when a text file may be one
    from poolsight.ingest.zos.rectrace import looks_like

    if looks_like(head.decode("latin-1")):
        return "omegamon-rectrace"
    return "csv"


def open_trace(
    path: Path,
    *,
    fmt: str | None = None,
    columns: Columns = PROJECT_COLUMNS,
    catalog: Catalog | None = None,
    strict: bool = False,
    start_offset: int = 0,
    start_line: int = 1,
    follow: bool = False,
    on_reject: Callable[[TraceFormatError], None] | None = None,
) -> TraceSource:
    """A reader of path in fmt (None: as detected). A z/OS trace's position is a byte offset
    and a record count (start_line), a CSV's a byte offset and a line number."""
    fmt = fmt or detect(path)
    if fmt in ZOS_FORMATS:
        return ZosTraceReader(
            path,
            fmt,
            catalog=catalog or Catalog(),
            strict=strict,
            start_offset=start_offset,
            start_line=0 if start_offset == 0 else start_line,
            complete_lines_only=follow,
            on_reject=on_reject,
        )
    if fmt == "parquet" and path.suffix.lower() not in (".parquet", ".pq"):
        raise TraceFormatError(str(path), 0, "file", "Parquet traces need a .parquet or .pq name")
    return TraceReader(
        path,
        columns,
        strict=strict,
        start_offset=start_offset,
        start_line=start_line,
        complete_lines_only=follow,
        on_reject=on_reject,
    )


def add_format_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("trace format (docs/trace-format.md, docs/zos-traces.md)")
    g.add_argument("--format", choices=FORMATS, help="the files' format (default: as each file's content shows)")
    g.add_argument(
        "--catalog",
        type=InputFile(),
        action="append",
        default=[],
        metavar="FILE",
        help="z/OS traces: DBID/OBID to DATABASE.SPACE and BPOOL, a CSV unloaded from the DB2 catalog "
        "(repeatable; without it objects are named DBID/OBID)",
    )


def catalog_from_args(a: argparse.Namespace) -> Catalog:
    """Raises TraceFormatError naming the catalog file, line and column."""
    return Catalog.load(list(a.catalog))


def simulate(a: argparse.Namespace) -> int:
    """`poolsight simulate`: the simulator's command, reading every format."""
    try:
        catalog = catalog_from_args(a)
    except TraceFormatError as exc:
        print(f"poolsight simulate: --catalog: {exc}", file=sys.stderr)
        return 2
    columns = columns_from_args(a)
    return simulate_cli.run(
        a, open_reader=lambda p: open_trace(p, fmt=a.format, columns=columns, catalog=catalog, strict=a.strict)
    )
