"""The getpage batch (`getpage_batch.v1.avsc`) as one typed value, and its codes.

Producers build a `GetpageBatch` and encode `record()`; the simulation job decodes
a record and reads it back with `GetpageBatch.from_record`. The columns stay numpy
arrays: they cross process boundaries as buffers (pickling lists of ints costs
several times more) and feed the simulator without a Python object per getpage.

The access and function codes are the schema's (one byte per event); every reader,
writer and report takes them, their names and their trace letters from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt


class Access(IntEnum):
    """`access` byte: how DB2 reached the page."""

    RANDOM = 0
    SEQUENTIAL = 1  # sequential or dynamic prefetch
    RID_LIST = 2  # list prefetch


class Function(IntEnum):
    """`function` byte: what the event was. Only GETPAGE counts as a getpage."""

    GETPAGE = 0
    SET_WRITE_INTENT = 1  # the page is updated
    RELEASE = 2


ACCESS_NAMES = ("random", "sequential", "rid")  # by code: metric and column names
ACCESS_LETTERS = ("R", "S", "L")  # by code: the trace format's letters
FUNCTION_NAMES = ("getpage", "set-write-intent", "release")
FUNCTION_LETTERS = ("GP", "SWI", "REL")

# Spellings a trace file may use (lower case), to codes.
ACCESS_CODES: dict[str, int] = {
    **{name: a.value for a, name in zip(Access, ACCESS_NAMES, strict=True)},
    **{letter.lower(): a.value for a, letter in zip(Access, ACCESS_LETTERS, strict=True)},
    **{str(a.value): a.value for a in Access},
    "seq": Access.SEQUENTIAL.value,
    "list": Access.RID_LIST.value,
    "rid-list": Access.RID_LIST.value,
}
FUNCTION_CODES: dict[str, int] = {
    **{name: f.value for f, name in zip(Function, FUNCTION_NAMES, strict=True)},
    **{letter.lower(): f.value for f, letter in zip(Function, FUNCTION_LETTERS, strict=True)},
    **{str(f.value): f.value for f in Function},
    "update": Function.SET_WRITE_INTENT.value,
}

MAX_OFFSET_US = 2**31 - 1  # time offsets are Avro ints


def micros(v: Any) -> int:
    """A timestamp-micros field as fastavro gives it (int, or datetime when logical types are read)."""
    if isinstance(v, int):
        return v
    micros: int = round(v.timestamp() * 1e6)
    return micros


@dataclass
class GetpageBatch:
    """One GetpageBatch record: the getpages of one (source, pool), in order."""

    source: str
    pool: str
    sequence: int
    start_time: int  # epoch microseconds
    end_time: int
    object_names: list[str]
    time_offset: npt.NDArray[np.int64]  # microseconds after start_time
    objects: npt.NDArray[np.intp]  # index into object_names
    pages: npt.NDArray[np.int64]
    access: bytes  # one Access code per event
    function: bytes  # one Function code per event
    hit: bytes | None  # 1 per event found in the pool; None when the source did not observe it
    getpages: int  # function GETPAGE only (set-write-intent and release are events, not getpages)
    partitions: npt.NDArray[np.int64] | None = None  # None: every getpage in partition 0

    @property
    def key(self) -> str:
        """The Kafka key: a pool's batches share a partition, so they stay in order."""
        return f"{self.source}|{self.pool}"

    @property
    def events(self) -> int:
        return len(self.pages)

    @property
    def is_mark(self) -> bool:
        """A batch with no events is the source's progress mark: every getpage of the pool
        before `end_time` has been sent (so a pane ending by then can close at once)."""
        return len(self.pages) == 0

    @classmethod
    def mark(cls, source: str, pool: str, sequence: int, before_us: int) -> GetpageBatch:
        """The progress mark of (source, pool) at `before_us` (epoch microseconds)."""
        empty = np.zeros(0, dtype=np.int64)
        return cls(
            source, pool, sequence, before_us, before_us, [], empty, empty.astype(np.intp), empty, b"", b"", None, 0
        )

    def times(self) -> npt.NDArray[np.float64]:
        """Event times in seconds since the epoch."""
        out: npt.NDArray[np.float64] = (self.start_time + self.time_offset.astype(np.int64, copy=False)) / 1e6
        return out

    def access_codes(self) -> npt.NDArray[np.uint8]:
        return np.frombuffer(self.access, dtype=np.uint8)

    def function_codes(self) -> npt.NDArray[np.uint8]:
        return np.frombuffer(self.function, dtype=np.uint8)

    def hits(self) -> npt.NDArray[np.uint8] | None:
        return None if self.hit is None else np.frombuffer(self.hit, dtype=np.uint8)

    def record(self) -> dict[str, Any]:
        """The Avro record (lists where the encoder needs them)."""
        return {
            "source": self.source,
            "pool": self.pool,
            "sequence": self.sequence,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "object_names": self.object_names,
            "time_offset": self.time_offset.tolist(),
            "object": self.objects.tolist(),
            "partition": None if self.partitions is None else self.partitions.tolist(),
            "page": self.pages.tolist(),
            "access": self.access,
            "function": self.function,
            "hit": self.hit,
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> GetpageBatch:
        """A decoded record. Raises ValueError naming the field when the columns disagree."""
        n = len(rec["time_offset"])
        offsets = np.asarray(rec["time_offset"], dtype=np.int64)
        objects = np.asarray(rec["object"], dtype=np.intp)
        pages = np.asarray(rec["page"], dtype=np.int64)
        access, function, hit = bytes(rec["access"]), bytes(rec["function"]), rec.get("hit")
        part = rec.get("partition")
        for name, length in (
            ("object", len(objects)),
            ("page", len(pages)),
            ("access", len(access)),
            ("function", len(function)),
            ("hit", n if hit is None else len(hit)),
            ("partition", n if part is None else len(part)),
        ):
            if length != n:
                raise ValueError(f"field {name}: {length} entries for {n} events")
        names = list(rec["object_names"])
        if n and (int(objects.min()) < 0 or int(objects.max()) >= len(names)):
            raise ValueError(f"field object: index outside object_names ({len(names)} names)")
        codes = np.frombuffer(function, dtype=np.uint8)
        return cls(
            source=rec["source"],
            pool=rec["pool"],
            sequence=int(rec["sequence"]),
            start_time=micros(rec["start_time"]),
            end_time=micros(rec["end_time"]),
            object_names=names,
            time_offset=offsets,
            objects=objects,
            pages=pages,
            access=access,
            function=function,
            hit=None if hit is None else bytes(hit),
            getpages=int((codes == Function.GETPAGE).sum()),
            partitions=None if part is None else np.asarray(part, dtype=np.int64),
        )
