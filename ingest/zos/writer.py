"""SMF type 102 and GTF files of IFCID 198/006/007 records (`poolsight generate --trace-format`),
laid out as ingest/zos/layout.py says, so the generated workload can be read as a shop's would.

Getpage records are built a chunk at a time as one byte matrix (one row per record); I/O ends
(007) wait in a heap until the getpages written pass their time, so the file is in time order.
"""

from __future__ import annotations

import datetime as dt
import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from poolsight.ingest.zos import layout as L
from poolsight.ingest.zos.catalog import write_catalog
from poolsight.ingest.zos.events import pool_id

QWHS_LEN = 0x50  # a standard header of DB2 12's length; the bytes after QWHSWSEQ stay zero
BLOCK = 27998  # half a 3390 track: the usual block size of a VBS data set
READ_LETTERS = "RSLD"  # ReadIoBatch.io_type -> QW0006F


def _be(values: npt.ArrayLike, dtype: str, n: int) -> npt.NDArray[np.uint8]:
    out: npt.NDArray[np.uint8] = np.asarray(values).astype(dtype).view(np.uint8).reshape(n, -1)
    return out


@dataclass
class ZosTraceWriter:
    """One file of one kind (smf or gtf), with or without BDW blocks."""

    path: Path
    kind: str = "smf"
    bdw: bool = False
    long198: bool = True  # DB2 12's 24-byte IFCID 198 section
    system: str = "SYSA"
    segment: int = 0  # longest segment before a record is spanned (SMF) or split (GTF); 0: z/OS's
    _fh: BinaryIO | None = None
    _pending: list[tuple[int, int, bytes]] = field(default_factory=list)  # (time, seq, record) heap
    _seq: int = 0
    _ace: int = 0x1000
    _block: bytearray = field(default_factory=bytearray)
    objects: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # name -> dbid, obid, pool
    _dbids: dict[str, int] = field(default_factory=dict)
    records: int = 0

    def __post_init__(self) -> None:
        self._fh = self.path.open("wb")
        self.header = L.SMF_HEADER if self.kind == "smf" else L.GTF_HEADER
        self.sds = 2 * L.SDS_ITEM
        if not self.segment:  # SMF: 32756 bytes; GTF: 256 bytes of data after QWGTDLEN
            self.segment = 32756 if self.kind == "smf" else L.GTF_DLEN + L.GTF_MAX_SEGMENT

    # ------------------------------------------------------------ ids

    def ids(self, name: str, pool: str) -> tuple[int, int]:
        """DBID/OBID of an object, assigned in order of first use (DBIDs from 260, OBIDs from 2)."""
        if name not in self.objects:
            db = name.partition(".")[0]
            dbid = self._dbids.setdefault(db, 260 + len(self._dbids))
            obid = 2 + sum(1 for d, _, _ in self.objects.values() if d == dbid)
            self.objects[name] = (dbid, obid, pool)
        dbid, obid, _ = self.objects[name]
        return dbid, obid

    # ------------------------------------------------------------ records

    def _head(
        self, n: int, length: int, time_us: npt.NDArray[np.int64], ssid: str, ifcid: int
    ) -> npt.NDArray[np.uint8]:
        """n records of `length` bytes: writer header, self-defining section (product + one data
        section triplet) and product section filled; the data section left to the caller."""
        r = np.zeros((n, length), np.uint8)
        r[:, 0:2] = _be(np.full(n, length), ">u2", n)
        stck = (time_us + L.STCK_EPOCH_US).astype(np.uint64) << np.uint64(L.STCK_US_SHIFT)
        ss = np.frombuffer(ssid.ljust(4)[:4].encode(L.EBCDIC), np.uint8)
        if self.kind == "smf":
            r[:, L.SMF_TYPE] = L.SMF_RECORD_TYPE
            days = time_us // 86_400_000_000
            r[:, L.SMF_TIME : L.SMF_TIME + 4] = _be((time_us % 86_400_000_000) // 10_000, ">u4", n)
            r[:, L.SMF_DATE : L.SMF_DATE + 4] = _be([_packed_date(int(d)) for d in days], ">u4", n)
            r[:, L.SMF_SID : L.SMF_SID + 4] = np.frombuffer(self.system.ljust(4)[:4].encode(L.EBCDIC), np.uint8)
            r[:, L.SMF_SSI : L.SMF_SSI + 4] = ss
        else:
            r[:, L.GTF_AID] = 0xFF
            r[:, L.GTF_TIME : L.GTF_TIME + 8] = _be(stck, ">u8", n)
            r[:, L.GTF_EID : L.GTF_EID + 2] = _be(np.full(n, L.GTF_EVENT_ID), ">u2", n)
            r[:, L.GTF_JOBN : L.GTF_JOBN + 8] = np.frombuffer(f"{ssid}MSTR".ljust(8)[:8].encode(L.EBCDIC), np.uint8)
            r[:, L.GTF_DLEN : L.GTF_DLEN + 2] = _be(np.full(n, length - L.GTF_DLEN), ">u2", n)
            r[:, L.GTF_SSID : L.GTF_SSID + 4] = ss
        h, p = self.header, self.header + self.sds
        d = p + QWHS_LEN
        r[:, h : h + 4] = _be(np.full(n, p), ">u4", n)
        r[:, h + 4 : h + 6] = _be(np.full(n, QWHS_LEN), ">u2", n)
        r[:, h + 6 : h + 8] = _be(np.full(n, 1), ">u2", n)
        r[:, h + 8 : h + 12] = _be(np.full(n, d), ">u4", n)
        r[:, h + 12 : h + 14] = _be(np.full(n, length - d), ">u2", n)
        r[:, h + 14 : h + 16] = _be(np.full(n, 1), ">u2", n)
        r[:, p + L.QWHSLEN : p + 2] = _be(np.full(n, QWHS_LEN), ">u2", n)
        r[:, p + L.QWHSTYP] = 1
        r[:, p + L.QWHSRMID] = 10  # buffer manager
        r[:, p + L.QWHSIID : p + L.QWHSIID + 2] = _be(np.full(n, ifcid), ">u2", n)
        r[:, p + L.QWHSNSDA] = 1
        r[:, p + L.QWHSRN] = 0xD1
        r[:, p + L.QWHSSSID : p + L.QWHSSSID + 4] = ss
        r[:, p + L.QWHSSTCK : p + L.QWHSSTCK + 8] = _be(stck, ">u8", n)
        return r

    def getpages(
        self,
        ssid: str,
        pool: str,
        time_us: npt.NDArray[np.int64],
        names: list[str],
        objects: npt.NDArray[Any],
        pages: npt.NDArray[Any],
        access: npt.NDArray[np.uint8],
        function: npt.NDArray[np.uint8],
        hit: npt.NDArray[np.uint8],
    ) -> None:
        """IFCID 198 records of one pool, in time order (codes as GetpageBatch's)."""
        n = len(time_us)
        if not n:
            return
        self._release(int(time_us[0]))
        ids = np.array([self.ids(nm, pool) for nm in names], np.int64).reshape(-1, 2)
        length = self.header + self.sds + QWHS_LEN + (24 if self.long198 else 16)
        r = self._head(n, length, time_us, ssid, L.IFCID_GETPAGE)
        d = self.header + self.sds + QWHS_LEN
        e = L.E
        r[:, d + L.QW0198DB : d + 2] = _be(ids[objects, 0], ">u2", n)
        r[:, d + L.QW0198OB : d + 4] = _be(ids[objects, 1], ">u2", n)
        bp = pool_id(pool)
        if bp is None:
            raise ValueError(f"{pool}: not a DB2 buffer pool name")
        r[:, d + L.QW0198BP] = bp
        r[:, d + L.QW0198FC] = np.array([e["G"], e["S"], e["R"]], np.uint8)[function]
        g = function == 0
        r[:, d + L.QW0198PS] = np.where(g, np.where(hit == 1, e["H"], e["M"]), 0)
        r[:, d + L.QW0198AT] = np.where(g, np.array([e["R"], e["S"], e["L"]], np.uint8)[access], 0)
        r[:, d + L.QW0198PN : d + 12] = _be(pages, ">u4", n)
        r[:, d + L.QW0198AC : d + 16] = _be(np.full(n, 0x0A000000), ">u4", n)
        self._emit(r)
        self._release(int(time_us[-1]))

    def read_ios(
        self,
        ssid: str,
        pool: str,
        names: list[str],
        times_s: list[float],
        objects: list[int],
        first_pages: list[int],
        pages: list[int],
        io_types: list[int],
        elapsed_us: list[int],
    ) -> None:
        """006/007 pairs: the 006 at the I/O's start, the 007 held until its end."""
        bp = pool_id(pool)
        if bp is None:
            raise ValueError(f"{pool}: not a DB2 buffer pool name")
        for t, o, first, npages, kind, us in zip(
            times_s, objects, first_pages, pages, io_types, elapsed_us, strict=True
        ):
            start = round(t * 1e6)
            dbid, obid = self.ids(names[o], pool)
            self._ace = (self._ace + 1) & 0xFFFFFFFF
            s = self._head(1, self.header + self.sds + QWHS_LEN + L.QW0006_LENGTH, np.array([start]), ssid, 6)
            d = self.header + self.sds + QWHS_LEN
            s[0, d : d + 8] = np.frombuffer(
                dbid.to_bytes(2, "big") + obid.to_bytes(2, "big") + bp.to_bytes(4, "big"), np.uint8
            )
            s[0, d + 8 : d + 11] = np.frombuffer((first & 0xFFFFFF).to_bytes(3, "big"), np.uint8)
            s[0, d + 11] = L.E[READ_LETTERS[kind]]
            s[0, d + 12 : d + 16] = np.frombuffer(self._ace.to_bytes(4, "big"), np.uint8)
            self._push(start, s[0].tobytes())
            end = start + int(us)
            e = self._head(1, self.header + self.sds + QWHS_LEN + 16, np.array([end]), ssid, 7)
            e[0, d + 4 : d + 14] = np.frombuffer(
                dbid.to_bytes(2, "big")
                + obid.to_bytes(2, "big")
                + self._ace.to_bytes(4, "big")
                + npages.to_bytes(2, "big"),
                np.uint8,
            )
            self._push(end, e[0].tobytes())

    # ------------------------------------------------------------ output

    def _push(self, t: int, rec: bytes) -> None:
        self._seq += 1
        heapq.heappush(self._pending, (t, self._seq, rec))

    def _release(self, upto: int) -> None:
        while self._pending and self._pending[0][0] <= upto:
            self._write(heapq.heappop(self._pending)[2])

    def _emit(self, r: npt.NDArray[np.uint8]) -> None:
        if self.bdw or (self.kind == "gtf" and r.shape[1] > self.segment):
            for row in r:
                self._write(row.tobytes())
            return
        assert self._fh is not None
        self._fh.write(r.tobytes())
        self.records += len(r)

    def _write(self, rec: bytes) -> None:
        for seg in self._segments(rec):
            self.records += 1
            if not self.bdw:
                assert self._fh is not None
                self._fh.write(seg)
                continue
            if len(self._block) + len(seg) > BLOCK:
                self._flush_block()
            if not self._block:
                self._block += b"\0\0\0\0"
            self._block += seg

    def _segments(self, rec: bytes) -> list[bytes]:
        """A record as it is written: whole, or spanned (SMF) / split (GTF) into segments."""
        if len(rec) <= self.segment:
            return [rec]
        skip = 4 if self.kind == "smf" else L.GTF_HEADER
        body, head = rec[skip:], rec[:skip]
        room = self.segment - skip
        pieces = [body[i : i + room] for i in range(0, len(body), room)]
        out = []
        for i, piece in enumerate(pieces):
            code = L.SEG_FIRST if i == 0 else L.SEG_LAST if i == len(pieces) - 1 else L.SEG_MIDDLE
            if self.kind == "smf":
                h = (len(piece) + 4).to_bytes(2, "big") + bytes([code, 0])
                out.append(h + piece)
            else:
                g = bytearray(head)
                g[0:2] = (len(piece) + L.GTF_HEADER).to_bytes(2, "big")
                g[L.GTF_DLEN : L.GTF_DLEN + 2] = (len(piece) + L.GTF_HEADER - L.GTF_DLEN).to_bytes(2, "big")
                g[L.GTF_DSCC] = code
                out.append(bytes(g) + piece)
        return out

    def _flush_block(self) -> None:
        if self._block:
            self._block[0:2] = len(self._block).to_bytes(2, "big")
            assert self._fh is not None
            self._fh.write(self._block)
            self._block = bytearray()

    def close(self, catalog: Path | None = None) -> None:
        self._release(2**62)
        self._flush_block()
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if catalog is not None:
            write_catalog(catalog, self.objects)


def _packed_date(days: int) -> int:
    """Days since 1970-01-01 as SMF's packed 0cyydddF (c: 1 for 2000 and later)."""
    d = dt.date(1970, 1, 1) + dt.timedelta(days=days)
    c = 1 if d.year >= 2000 else 0
    digits = f"{c}{d.year % 100:02d}{d.timetuple().tm_yday:03d}"
    return int(digits, 16) << 4 | 0xF
