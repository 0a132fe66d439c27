"""Trace rows to GetpageBatch records: per (source, pool), in order, with gapless sequence numbers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.schemas.getpage import MAX_OFFSET_US, Function, GetpageBatch
from poolsight.simulator.trace import ReadIos, TraceBatch


def split_pool(name: str, default_source: str) -> tuple[str, str]:
    """The trace reader writes `source/pool` when the trace has a source column."""
    source, sep, pool = name.rpartition("/")
    return (source, pool) if sep else (default_source, name)


def used_codes(codes: npt.NDArray[Any], table: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """np.unique(codes, return_inverse=True) for codes into a table of `table` entries: by a
    presence mask when the table is not much larger than the codes (no sort: the trace
    collector cuts every batch this way), else by np.unique."""
    if len(codes) == 0 or table > 16 * len(codes):
        uniq, index = np.unique(codes, return_inverse=True)
        return uniq.astype(np.int64), index.reshape(-1).astype(np.int64)
    present = np.zeros(table, dtype=bool)
    present[codes] = True
    uniq = np.flatnonzero(present)
    lut = np.zeros(table, dtype=np.int64)
    lut[uniq] = np.arange(len(uniq))
    return uniq, lut[codes]


def make_batch(
    source: str,
    pool: str,
    sequence: int,
    times: npt.NDArray[np.float64],
    objects: npt.NDArray[Any],
    pages: npt.NDArray[np.uint64],
    access: npt.NDArray[np.uint8],
    function: npt.NDArray[np.uint8],
    hit: npt.NDArray[np.uint8] | None = None,
    *,
    names: list[str],
) -> GetpageBatch:
    """objects: integer codes into names (the record keeps only the names it uses)."""
    t_us = np.round(times * 1e6).astype(np.int64)
    start = int(t_us.min())
    uniq, index = used_codes(objects, len(names))
    return GetpageBatch(
        source,
        pool,
        sequence,
        start,
        int(t_us.max()),
        [names[int(u)] for u in uniq],
        t_us - start,
        index,
        pages.astype(np.int64),
        access.astype(np.uint8).tobytes(),
        function.astype(np.uint8).tobytes(),
        None if hit is None else hit.astype(np.uint8).tobytes(),
        int((function == Function.GETPAGE).sum()),
    )


def batches_from_trace(
    batch: TraceBatch, sequences: dict[str, int], *, max_getpages: int, default_source: str
) -> Iterator[GetpageBatch]:
    """Cut a reader batch into records of at most max_getpages events per (source, pool),
    keeping event order and each batch's time span within an Avro int of microseconds.
    `sequences` (key -> next sequence number) is advanced."""
    pools = batch.pool_names
    objects = list(batch.object_names.table)
    used, first = np.unique(pools.codes, return_index=True)
    for code in used[np.argsort(first)]:  # first-seen order
        idx = np.nonzero(pools.codes == code)[0]
        source, pool = split_pool(str(pools.table[code]), default_source)
        key = f"{source}|{pool}"
        start = 0
        while start < len(idx):
            sel = idx[start : start + max_getpages]
            t = batch.times[sel]
            span = np.nonzero((t - t.min()) * 1e6 > MAX_OFFSET_US)[0]
            if len(span):
                sel = sel[: max(1, int(span[0]))]
                t = batch.times[sel]
            seq = sequences.get(key, 0)
            sequences[key] = seq + 1
            yield make_batch(
                source,
                pool,
                seq,
                t,
                batch.object_names.codes[sel],
                batch.pages[sel],
                batch.access[sel],
                batch.function[sel],
                None if batch.hit is None else batch.hit[sel],
                names=objects,
            )
            start += len(sel)


def read_io_records(
    io: ReadIos, sequences: dict[str, int], *, default_source: str, max_ios: int = 65_536
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Measured read I/Os as ReadIoBatch records (Kafka key, record), one per (source, pool) and
    start-time span (an Avro int of microseconds), with their own gapless sequence numbers
    (`read_io_batch|source|pool` in `sequences`)."""
    pools = io.pool_names
    objects = list(io.object_names.table)
    for code in np.unique(pools.codes):
        source, pool = split_pool(str(pools.table[code]), default_source)
        idx = np.nonzero(pools.codes == code)[0]
        t_all = np.round(io.times[idx] * 1e6).astype(np.int64)
        order = np.argsort(t_all, kind="stable")  # I/Os come in end order; records go by start
        idx, t_all = idx[order], t_all[order]
        a = 0
        while a < len(idx):
            b = min(len(idx), a + max_ios, int(np.searchsorted(t_all, t_all[a] + MAX_OFFSET_US, side="right")))
            sel, t = idx[a:b], t_all[a:b]
            a = b
            start = int(t[0])
            uniq, inv = np.unique(io.object_names.codes[sel], return_inverse=True)
            key = f"read_io_batch|{source}|{pool}"
            seq = sequences.get(key, 0)
            sequences[key] = seq + 1
            yield (
                f"{source}|{pool}",
                {
                    "source": source,
                    "pool": pool,
                    "sequence": seq,
                    "start_time": start,
                    "object_names": [objects[int(u)] for u in uniq],
                    "time_offset": (t - start).tolist(),
                    "object": inv.reshape(-1).tolist(),
                    "io_type": io.io_type[sel].astype(int).tolist(),
                    "first_page": io.first_page[sel].astype(int).tolist(),
                    "pages": io.pages[sel].astype(int).tolist(),
                    "elapsed": np.minimum(io.elapsed_us[sel], MAX_OFFSET_US).astype(int).tolist(),
                },
            )
