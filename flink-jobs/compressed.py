"""The jobs' keyed-state snapshots as zstd frames behind a magic of their own.

A snapshot (tens of MB) crosses PyFlink's gRPC state channel into the TaskManager's heap, where
Flink holds several copies of it on its way to RocksDB, at every pane of every key: level 1 takes
it to about a quarter (day-posting's BP1: 51 -> 13 MB in 0.1 s, before the miniature caches'
snapshots left out their index and queues; after 3 M getpages now 14.7 -> 3.8 MB in 41 ms).
Decompressing is faster.
"""

from __future__ import annotations

from collections.abc import Sequence

import zstandard

LEVEL = 1


def pack(magic: bytes, parts: Sequence[bytes]) -> bytes:
    """magic + one zstd frame of the parts in order (compressed part by part, with no joined copy;
    the frame records the total size)."""
    z = zstandard.ZstdCompressor(level=LEVEL).compressobj(size=sum(len(p) for p in parts))
    return b"".join([magic, *(z.compress(p) for p in parts), z.flush()])


def unpack(magic: bytes, data: bytes) -> bytes | None:
    """The parts joined, when data starts with magic; None otherwise (an older, plain snapshot).
    A frame that does not decompress raises ValueError, as a plain snapshot's bad layout does."""
    if data[: len(magic)] != magic:
        return None
    try:
        return zstandard.ZstdDecompressor().decompress(memoryview(data)[len(magic) :])
    except zstandard.ZstdError as exc:
        raise ValueError(f"a {magic.decode()} snapshot of {len(data)} bytes does not decompress: {exc}") from exc
