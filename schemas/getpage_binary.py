"""GetpageBatch v1 bodies decoded by the compiled kernel: numpy columns, no Python object per getpage.

The kernel (`decode_getpage_batch`, simulator/kernel/src/getpage_avro.rs) reads the v1 field
layout only, in its order. So it may decode a record only when the writer's schema has exactly
the layout of the released or the current v1 schema (docs aside: they change no byte); any other
writer schema (a v2, a reordered copy) goes through fastavro with schema resolution
(`wire.AvroDecoder.read` chooses).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np

from poolsight import schemas
from poolsight._kernel import AvroError, decode_getpage_batch
from poolsight.schemas.getpage import GetpageBatch

__all__ = ["AvroError", "decode_body", "kernel_layout", "layout"]

FULL_NAME = "poolsight.v1.GetpageBatch"


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "doc"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def layout(schema: dict[str, Any]) -> str:
    """A schema's layout: its JSON without docs, keys sorted (field order kept)."""
    return json.dumps(_strip(schema), sort_keys=True, separators=(",", ":"))


@cache
def _known() -> frozenset[str]:
    texts = (schemas.text("getpage_batch"), (schemas.RELEASED_DIR / "getpage_batch.v1.avsc").read_text())
    return frozenset(layout(json.loads(t)) for t in texts)


def kernel_layout(schema: dict[str, Any]) -> bool:
    """Whether records written with `schema` (parsed JSON, as the registry gives it) may be
    decoded by the kernel: exactly the released or current v1 GetpageBatch layout."""
    return layout(schema) in _known()


def decode_body(data: bytes, start: int = 0) -> GetpageBatch:
    """The GetpageBatch v1 Avro body in data[start:] (start=5 skips the Confluent header).
    Raises AvroError when malformed (the message names the field and the byte, counted from
    data[0]), ValueError when the columns disagree (GetpageBatch.from_record's messages)."""
    (source, pool, sequence, t0, t1, names, offsets, objects, partitions, pages, access, function, hit, getpages) = (
        decode_getpage_batch(data, start)
    )
    # Writable int64 views of the kernel's bytearrays, as from_record's arrays are.
    return GetpageBatch(
        source=source,
        pool=pool,
        sequence=sequence,
        start_time=t0,
        end_time=t1,
        object_names=names,
        time_offset=np.frombuffer(offsets, dtype="<i8"),
        objects=np.frombuffer(objects, dtype="<i8").astype(np.intp, copy=False),
        pages=np.frombuffer(pages, dtype="<i8"),
        access=access,
        function=function,
        hit=hit,
        getpages=getpages,
        partitions=None if partitions is None else np.frombuffer(partitions, dtype="<i8"),
    )
