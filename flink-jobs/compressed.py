"""The jobs' keyed state in zstd frames behind a magic of their own.

A snapshot (tens of MB) crosses PyFlink's gRPC state channel into the TaskManager's heap, where
Flink holds several copies of it on its way to RocksDB, at every pane of every key: level 1 takes
it to about a quarter (day-posting's BP1: 51 -> 13 MB in 0.1 s, before the miniature caches'
snapshots left out their index and queues; after 3 M getpages now 14.7 -> 3.8 MB in 41 ms).
Decompressing is faster.

The raw records kept since a key's snapshot go the same way, one frame each (`Records`): every
record a job reads is appended there, so flat out they are most of what the state channel and
RocksDB carry (day-posting's 34 KB getpage records: 1.88x smaller at level 1, about 65 us each).
"""

from __future__ import annotations

from collections.abc import Sequence

import zstandard

LEVEL = 1
RECORD_MAGIC = b"PSRAWZ01"  # a raw Kafka record in a frame; a record without it was kept plain (older state)


def pack(magic: bytes, parts: Sequence[bytes]) -> bytes:
    """magic + one zstd frame of the parts in order (compressed part by part, with no joined copy;
    the frame records the total size)."""
    z = zstandard.ZstdCompressor(level=LEVEL).compressobj(size=sum(len(p) for p in parts))
    return b"".join([magic, *(z.compress(p) for p in parts), z.flush()])


def unpack(magic: bytes, data: bytes, what: str = "snapshot") -> bytes | None:
    """The parts joined, when data starts with magic; None otherwise: older, plain bytes (a
    snapshot or a kept record from before compression; `what` names which, for the error). A
    frame that does not decompress raises ValueError, as a plain snapshot's bad layout does."""
    if data[: len(magic)] != magic:
        return None
    try:
        return zstandard.ZstdDecompressor().decompress(memoryview(data)[len(magic) :])
    except zstandard.ZstdError as exc:
        raise ValueError(f"a {magic.decode()} {what} of {len(data)} bytes does not decompress: {exc}") from exc


class Records:
    """Raw records to and from their kept form. One per operator: its compressor is reused (a
    fresh context per record cost a sixth more) and is not safe to share between threads.
    A kept record never starts with RECORD_MAGIC by chance: the jobs keep only records that
    decoded, and those begin with the Confluent wire format's zero byte."""

    def __init__(self) -> None:
        self._z = zstandard.ZstdCompressor(level=LEVEL)  # writes the content size: one-shot decompress

    def pack(self, raw: bytes | None) -> bytes | None:
        return None if raw is None else RECORD_MAGIC + self._z.compress(raw)

    @staticmethod
    def unpack(kept: bytes | None) -> bytes | None:
        if kept is None:
            return None
        raw = unpack(RECORD_MAGIC, kept, "kept record")
        return kept if raw is None else raw
