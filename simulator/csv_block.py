"""A block of complete trace CSV lines parsed at once into columns, for the CSV reader's fast
path (trace.py): by the compiled kernel when every line is plain (unquoted, one field per
header column, numbers as plain decimals), else by pyarrow; None when neither can, and the
reader then goes line by line, naming each bad row. Both give the same Block for a block the
kernel accepts (tests/simulator/test_csv_block.py holds them to it).

Text columns come back dictionary-encoded: no string per row, only per distinct value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poolsight._kernel import parse_csv_block

TEXT_KEYS = ("pool", "object", "access", "function", "source")


@dataclass(frozen=True)
class Block:
    rows: int  # the block's lines: each is a row
    times: npt.NDArray[np.float64] | None  # as written (no unit applied); None: no time column
    pages: npt.NDArray[np.int64]
    # per text key present: its distinct values (unstripped) and each row's index into them
    texts: dict[str, tuple[list[str], npt.NDArray[np.int32]]]
    # the byte offset after every `every`-th line (parse_block's); None: not known, count them
    ends: npt.NDArray[np.int64] | None = None


def parse_block(block: bytes, header: list[str], idx: dict[str, int | None], every: int = 0) -> Block | None:
    """`idx`: each key's column in `header` (None: absent); page is required. A block that is
    not one row per line gives None."""
    return kernel_block(block, header, idx, every) or arrow_block(block, header, idx)


def kernel_block(block: bytes, header: list[str], idx: dict[str, int | None], every: int = 0) -> Block | None:
    page = idx["page"]
    assert page is not None
    columns = {k: i for k in TEXT_KEYS if (i := idx.get(k)) is not None}
    got = parse_csv_block(block, len(header), idx.get("time"), page, list(columns.values()), every)
    if got is None:
        return None
    rows, times, pages, texts, ends = got
    return Block(
        rows,
        None if times is None else np.frombuffer(times, dtype="<f8"),
        np.frombuffer(pages, dtype="<i8"),
        {k: (values, np.frombuffer(codes, dtype="<i4")) for k, (codes, values) in zip(columns, texts, strict=True)},
        np.frombuffer(ends, dtype="<i8") if every else None,
    )


def arrow_block(block: bytes, header: list[str], idx: dict[str, int | None]) -> Block | None:
    """pyarrow's reading of the block: what the kernel leaves (blanks around numbers, other
    number spellings pyarrow reads), and the peer the kernel's reading is tested against."""
    # lazy: pyarrow takes a second to load; only a block the kernel leaves needs it
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if b'"' in block:
        return None  # quoted fields: leave them to the csv module
    cols = {key: header[i] for key, i in idx.items() if i is not None}
    types: dict[str, pa.DataType] = {name: pa.dictionary(pa.int32(), pa.string()) for name in header}
    types[cols["page"]] = pa.int64()
    if "time" in cols:
        types[cols["time"]] = pa.float64()
    try:
        tbl = pacsv.read_csv(
            pa.py_buffer(block),
            read_options=pacsv.ReadOptions(column_names=header, use_threads=False, block_size=len(block) + 1),
            parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                include_columns=list(cols.values()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    if tbl.num_rows != block.count(b"\n") + (0 if block.endswith(b"\n") else 1):
        return None  # empty lines skipped, or a lone CR read as a line end
    page = tbl[cols["page"]]
    times = None
    if "time" in cols:
        t = tbl[cols["time"]]
        if t.null_count:
            return None
        times = t.to_numpy().astype(np.float64)
    if page.null_count:
        return None

    def dictionary(key: str) -> tuple[list[str], npt.NDArray[np.int32]]:
        col = tbl[cols[key]].unify_dictionaries() if tbl[cols[key]].num_chunks > 1 else tbl[cols[key]]
        if col.num_chunks == 0:
            return [], np.zeros(0, dtype=np.int32)
        indices = np.concatenate([ch.indices.to_numpy(zero_copy_only=False) for ch in col.chunks])
        return list(col.chunk(0).dictionary.to_pylist()), indices.astype(np.int32)

    return Block(
        tbl.num_rows,
        times,
        page.to_numpy().astype(np.int64),
        {k: dictionary(k) for k in TEXT_KEYS if k in cols},
    )
