"""Trace rows to GetpageBatch records: per (source, pool), in order, with gapless sequence numbers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.schemas.getpage import MAX_OFFSET_US, Function, GetpageBatch
from poolsight.simulator.trace import TraceBatch


def split_pool(name: str, default_source: str) -> tuple[str, str]:
    """The trace reader writes `source/pool` when the trace has a source column."""
    source, sep, pool = name.rpartition("/")
    return (source, pool) if sep else (default_source, name)


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
    uniq, index = np.unique(objects, return_inverse=True)
    return GetpageBatch(
        source,
        pool,
        sequence,
        start,
        int(t_us.max()),
        [names[int(u)] for u in uniq],
        t_us - start,
        index.reshape(-1),
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
                names=objects,
            )
            start += len(sel)
