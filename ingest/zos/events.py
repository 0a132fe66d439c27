"""What every z/OS trace reader (binary SMF/GTF, OMEGAMON record-trace text) produces, and the
steps they share: pool ids to names, I/O starts (IFCID 006) paired with their ends (IFCID 007)."""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

# IFCID 198 QW0198PS (getpage status) to the GetpageBatch `hit` byte: H hit -> 1, M miss and
# N no-read request (the page is formatted, never read) -> 0.
STATUS_HIT = {"H": 1, "M": 0, "N": 0}

# IFCID 006 QW0006F read type to ReadIoBatch.io_type (0 sync, 1 sequential, 2 list, 3 dynamic).
READ_TYPES = {"R": 0, "S": 1, "L": 2, "D": 3}


def pool_name(pool_id: int) -> str | None:
    """A buffer pool's internal id (DSNB401I, IFCID 198 QW0198BP) as its name; None: not a pool id."""
    if 0 <= pool_id <= 49:
        return f"BP{pool_id}"
    if pool_id == 80:
        return "BP32K"
    if 81 <= pool_id <= 89:
        return f"BP32K{pool_id - 80}"
    if 100 <= pool_id <= 109:
        return f"BP8K{pool_id - 100}"
    if 120 <= pool_id <= 129:
        return f"BP16K{pool_id - 120}"
    return None


def pool_id(name: str) -> int | None:
    """The inverse of pool_name (writers, and the catalog's BPOOL check)."""
    n = name.strip().upper()
    for prefix, base, first in (("BP32K", 80, 0), ("BP16K", 120, 0), ("BP8K", 100, 0), ("BP", 0, 0)):
        if n.startswith(prefix):
            rest = n[len(prefix) :]
            if prefix == "BP32K" and rest == "":
                return 80
            if rest.isdigit():
                pid = base + int(rest) + first
                return pid if pool_name(pid) == n else None
    return None


def factorize(values: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(distinct values, each value's index among them), by hashing: np.unique sorts, which costs
    more than all the decoding for the few distinct subsystems, pools and objects of a read."""
    # lazy: pyarrow (hash-based dictionary encoding) loads with the first read, not on import
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(values):
        return values, values
    enc = pc.dictionary_encode(pa.array(values, type=pa.int64()))
    return enc.dictionary.to_numpy(zero_copy_only=False), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


@dataclass
class GetpageColumns:
    """IFCID 198 records (function G, S or R), one entry each, in record order. Codes are the
    GetpageBatch's (schemas/getpage.py): function 0 getpage, 1 set write intent, 2 release; access
    0 random, 1 sequential, 2 RID list (0 for S and R records); hit 1 found in the pool."""

    time_us: npt.NDArray[np.int64]  # QWHSSTCK as epoch microseconds
    ssid: npt.NDArray[np.int32]  # index into ssids
    ssids: list[str]
    pool_id: npt.NDArray[np.int16]  # QW0198BP
    dbid: npt.NDArray[np.int32]
    obid: npt.NDArray[np.int32]
    function: npt.NDArray[np.uint8]
    access: npt.NDArray[np.uint8]
    hit: npt.NDArray[np.uint8]
    page: npt.NDArray[np.uint64]
    partition: npt.NDArray[np.int32]  # QW0198PT where the page number is relative to it, else 0

    def __len__(self) -> int:
        return len(self.time_us)

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[int, str, int, int, int, int, int, int, int, int]]) -> GetpageColumns:
        """rows: (time_us, ssid, pool_id, dbid, obid, function, access, hit, page, partition)."""
        ssids = sorted({r[1] for r in rows})
        index = {s: i for i, s in enumerate(ssids)}
        cols = list(zip(*rows, strict=True)) if rows else [()] * 10
        return cls(
            np.array(cols[0], dtype=np.int64),
            np.array([index[s] for s in cols[1]], dtype=np.int32),
            ssids,
            np.array(cols[2], dtype=np.int16),
            np.array(cols[3], dtype=np.int32),
            np.array(cols[4], dtype=np.int32),
            np.array(cols[5], dtype=np.uint8),
            np.array(cols[6], dtype=np.uint8),
            np.array(cols[7], dtype=np.uint8),
            np.array(cols[8], dtype=np.uint64),
            np.array(cols[9], dtype=np.int32),
        )


@dataclass(frozen=True)
class IoStart:
    """IFCID 006: a read I/O began."""

    time_us: int  # QWHSSTCK as epoch microseconds
    ssid: str
    ace: int  # QW0006AC
    dbid: int
    obid: int
    pool_id: int
    first_page: int
    read_type: str  # QW0006F: R, S, L or D
    where: str  # source and byte offset (or line) of the record, for messages


@dataclass(frozen=True)
class IoStop:
    """IFCID 007: a read I/O ended."""

    time_us: int
    ssid: str
    ace: int  # QW0007AC
    dbid: int
    obid: int
    pages: int  # QW0007NP
    retcode: int  # QW0007MM
    where: str


@dataclass(frozen=True)
class ReadIo:
    """A 006 matched with its 007."""

    time_us: int
    ssid: str
    pool_id: int
    dbid: int
    obid: int
    io_type: int  # READ_TYPES value
    first_page: int
    pages: int
    elapsed_us: int


@dataclass(frozen=True)
class Unpaired:
    """A 007 with no 006 before it (same subsystem, ACE, DBID, OBID)."""

    stop: IoStop


@dataclass
class IoPairing:
    """Matches each 007 with the oldest open 006 of the same subsystem, ACE, DBID and OBID (the
    order DB2 writes them). Open starts carry over between blocks and, for a followed file, runs."""

    open: dict[tuple[str, int, int, int], deque[IoStart]] = field(default_factory=dict)
    max_open: int = 1_000_000  # bound: beyond it the oldest open start is dropped and counted
    dropped_starts: int = 0
    empty_prefetches: int = 0  # a prefetch whose 007 read 0 pages did no I/O
    failed: int = 0  # QW0007MM != 0
    _open_count: int = 0

    def start(self, s: IoStart) -> None:
        key = (s.ssid, s.ace, s.dbid, s.obid)
        self.open.setdefault(key, deque()).append(s)
        self._open_count += 1
        if self._open_count > self.max_open:
            oldest = min(self.open, key=lambda k: self.open[k][0].time_us)
            self._pop(oldest)
            self.dropped_starts += 1

    def _pop(self, key: tuple[str, int, int, int]) -> IoStart:
        q = self.open[key]
        s = q.popleft()
        if not q:
            del self.open[key]
        self._open_count -= 1
        return s

    def stop(self, e: IoStop) -> ReadIo | Unpaired | None:
        """The finished I/O; Unpaired when no 006 is open for it; None when it did no I/O."""
        key = (e.ssid, e.ace, e.dbid, e.obid)
        if key not in self.open:
            return Unpaired(e)
        s = self._pop(key)
        if e.retcode != 0:
            self.failed += 1
            return None
        if e.pages == 0:
            self.empty_prefetches += 1
            return None
        return ReadIo(
            s.time_us,
            s.ssid,
            s.pool_id,
            s.dbid,
            s.obid,
            READ_TYPES.get(s.read_type, 0),
            s.first_page,
            e.pages,
            max(0, e.time_us - s.time_us),
        )

    @property
    def open_starts(self) -> int:
        return self._open_count

    def snapshot(self) -> list[list[object]]:
        """The open starts as JSON-able lists (a collector's position keeps them across restarts)."""
        return [list(dataclasses.astuple(s)) for q in self.open.values() for s in q]

    def restore(self, saved: list[list[object]]) -> None:
        for fields in sorted(saved, key=lambda f: int(str(f[0]))):
            self.start(IoStart(*fields))  # type: ignore[arg-type]


@dataclass
class ZosBlock:
    """What a reader yields per block of its input: the getpages, the I/O records in record order,
    records skipped by IFCID (other IFCIDs, layouts not public) and where the block ends (a
    collector that resumes there neither skips nor repeats a record)."""

    getpages: GetpageColumns
    ios: list[IoStart | IoStop]
    skipped: dict[int, int]
    end_offset: int  # byte offset just after the block's last complete record (or line)
    end_line: int  # text: the line number reached; binary: records read so far
    io_columns: IoColumns | None = None  # binary readers: the 006/007 records as columns (not in ios)


@dataclass
class IoColumns:
    """IFCID 006 and 007 records of one read, in record order, as columns (binary readers)."""

    is_start: npt.NDArray[np.bool_]
    time_us: npt.NDArray[np.int64]
    ssid: npt.NDArray[np.int64]  # the raw 4 EBCDIC bytes as an integer (a key, named at the end)
    ace: npt.NDArray[np.int64]
    dbid: npt.NDArray[np.int64]
    obid: npt.NDArray[np.int64]
    pool_id: npt.NDArray[np.int64]  # starts only
    first_page: npt.NDArray[np.int64]  # starts only
    read_type: npt.NDArray[np.int64]  # starts only: READ_TYPES value
    pages: npt.NDArray[np.int64]  # stops only
    retcode: npt.NDArray[np.int64]  # stops only
    offset: npt.NDArray[np.int64]  # the record's byte offset in its file

    def __len__(self) -> int:
        return len(self.time_us)

    def take(self, sel: npt.NDArray[np.intp] | npt.NDArray[np.bool_]) -> IoColumns:
        return IoColumns(*(getattr(self, f.name)[sel] for f in dataclasses.fields(self)))

    @classmethod
    def concat(cls, parts: list[IoColumns]) -> IoColumns:
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(cls)))


@dataclass
class PairedIos:
    """Finished read I/Os as columns (ssid still raw EBCDIC as an integer)."""

    time_us: npt.NDArray[np.int64]
    ssid: npt.NDArray[np.int64]
    pool_id: npt.NDArray[np.int64]
    dbid: npt.NDArray[np.int64]
    obid: npt.NDArray[np.int64]
    io_type: npt.NDArray[np.int64]
    first_page: npt.NDArray[np.int64]
    pages: npt.NDArray[np.int64]
    elapsed_us: npt.NDArray[np.int64]


def _paired(allc: IoColumns, s: npt.NDArray[np.intp], e: npt.NDArray[np.intp]) -> PairedIos:
    """The I/Os of starts s ended by e (the start's fields, the end's pages, their time apart)."""
    return PairedIos(
        allc.time_us[s],
        allc.ssid[s],
        allc.pool_id[s],
        allc.dbid[s],
        allc.obid[s],
        allc.read_type[s],
        allc.first_page[s],
        allc.pages[e],
        np.maximum(0, allc.time_us[e] - allc.time_us[s]),
    )


def pair_columns(c: IoColumns, carried: IoColumns) -> tuple[PairedIos, npt.NDArray[np.int64], IoColumns, int, int]:
    """FIFO matching of each 007 with the oldest open 006 of the same (subsystem, ACE, DBID, OBID),
    as IoPairing does, vectorised: within a key the k-th end matches the k-th start. `carried`:
    starts left open by earlier reads (they come first). Returns (finished I/Os, byte offsets of
    ends without a start, the starts still open, empty prefetches, failed I/Os)."""
    allc = IoColumns.concat([carried, c])
    order = np.arange(len(allc))
    # The key's 96 bits as one integer in two steps.
    _, agent = factorize((allc.ssid << 32) | allc.ace)
    _, group = factorize((agent << 32) | (allc.dbid << 16) | allc.obid)

    def ranks(sel: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        idx = np.flatnonzero(sel)
        o = idx[np.lexsort((order[idx], group[idx]))]
        g = group[o]
        first = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
        counts = np.diff(np.r_[first, len(o)])
        rank = np.arange(len(o)) - np.repeat(first, counts)
        return o, (g << 32) | rank

    s_idx, s_key = ranks(allc.is_start)
    e_idx, e_key = ranks(~allc.is_start)
    pos = np.searchsorted(s_key, e_key) if len(s_key) else np.zeros(len(e_key), np.intp)
    found = (pos < len(s_key)) & (s_key[np.minimum(pos, max(len(s_key) - 1, 0))] == e_key) if len(s_key) else pos < 0
    matched_start = s_idx[np.minimum(pos, max(len(s_idx) - 1, 0))] if len(s_idx) else pos
    ok = found & (matched_start < e_idx)
    if not ok.all():  # an end before (or without) its start: FIFO step by step
        return _pair_slowly(allc, len(carried))
    start, end = matched_start, e_idx
    used = np.zeros(len(allc), np.bool_)
    used[start] = True
    still_open = allc.take(allc.is_start & ~used)
    good = (allc.retcode[end] == 0) & (allc.pages[end] > 0)
    empty = int(((allc.retcode[end] == 0) & (allc.pages[end] == 0)).sum())
    failed = int((allc.retcode[end] != 0).sum())
    s, e = start[good], end[good]
    paired = _paired(allc, s, e)
    return paired, np.zeros(0, np.int64), still_open, empty, failed


def _pair_slowly(allc: IoColumns, n_carried: int) -> tuple[PairedIos, npt.NDArray[np.int64], IoColumns, int, int]:
    open_: dict[tuple[int, int, int, int], deque[int]] = {}
    starts: list[int] = []
    ends: list[int] = []
    unpaired: list[int] = []
    empty = failed = 0
    for i in range(len(allc)):
        key = (int(allc.ssid[i]), int(allc.ace[i]), int(allc.dbid[i]), int(allc.obid[i]))
        if allc.is_start[i]:
            open_.setdefault(key, deque()).append(i)
            continue
        q = open_.get(key)
        if not q:
            unpaired.append(int(allc.offset[i]))
            continue
        s = q.popleft()
        if allc.retcode[i] != 0:
            failed += 1
        elif allc.pages[i] == 0:
            empty += 1
        else:
            starts.append(s)
            ends.append(i)
    left = sorted(i for q in open_.values() for i in q)
    s_a, e_a = np.array(starts, np.intp), np.array(ends, np.intp)
    paired = _paired(allc, s_a, e_a)
    return paired, np.array(unpaired, np.int64), allc.take(np.array(left, np.intp)), empty, failed


def no_ios() -> IoColumns:
    z = np.zeros(0, np.int64)
    return IoColumns(np.zeros(0, np.bool_), z, z, z, z, z, z, z, z, z, z, z)
