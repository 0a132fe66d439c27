"""GetpageBatch v1 bodies decoded and encoded by the compiled kernel: numpy columns, no Python
object per getpage.

The kernel (`decode_getpage_batch`, simulator/kernel/src/getpage_avro.rs) reads the v1 field
layout only, in its order. So it may decode a record only when the writer's schema has exactly
the layout of the released or the current v1 schema (docs aside: they change no byte); any other
writer schema (a v2, a reordered copy) goes through fastavro with schema resolution
(`wire.AvroDecoder.read` chooses).

The encoder (`encode_getpage_batch`, simulator/kernel/src/getpage_encode.rs) writes fastavro's
bytes for the same record, so a producer uses it only while the schema it registers (the
current one) has that layout (`wire.AvroEncoder.encode_batch` chooses).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight import schemas
from poolsight._kernel import AvroError, decode_getpage_batch, encode_getpage_batch
from poolsight.schemas.getpage import GetpageBatch

__all__ = ["AvroError", "current_kernel_layout", "decode_body", "encode_body", "kernel_layout", "layout"]

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


@cache
def current_kernel_layout() -> bool:
    """Whether the current getpage_batch schema (the one producers register) has the v1 layout."""
    return kernel_layout(json.loads(schemas.text("getpage_batch")))


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


def _int64(a: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    # No copy for the usual int64 (intp) columns; a float column is refused, not truncated.
    return np.ascontiguousarray(a.astype(np.int64, casting="same_kind", copy=False))


def encode_body(batch: GetpageBatch, header: bytes = b"") -> bytes:
    """`header` (e.g. the Confluent one) and the GetpageBatch v1 Avro body of `batch`: the bytes
    fastavro.schemaless_writer writes for batch.record(). Raises ValueError naming the field when
    time_offset, object or partition holds a value outside the Avro int (32-bit) range."""
    return encode_getpage_batch(
        header,
        batch.source,
        batch.pool,
        batch.sequence,
        batch.start_time,
        batch.end_time,
        batch.object_names,
        _int64(batch.time_offset),
        _int64(batch.objects),
        None if batch.partitions is None else _int64(batch.partitions),
        _int64(batch.pages),
        bytes(batch.access),
        bytes(batch.function),
        None if batch.hit is None else bytes(batch.hit),
    )
