"""SMF type 102 and GTF data sets of DB2 trace records, read as they come off z/OS in binary.

Framing (the kernel's `frame_records`) follows each record's RDW, inside BDW blocks when the
data set was dumped with them; spanned SMF segments and split GTF records are joined; every
record is located through its self-defining section, its IFCID taken from the product section's
standard header and its time from QWHSSTCK. IFCID 198 records are decoded with vectorised
gathers over the whole read (a Python step per record would cap the reader near 1 M records/s);
006/007 records, one per I/O, one at a time. Other IFCIDs and SMF types are counted, not read.
A record that breaks the layout is named (file, byte offset, field) and skipped; where the
lengths themselves cannot be followed, reading stops there with that message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from poolsight._kernel import frame_records
from poolsight.ingest.zos import layout as L
from poolsight.ingest.zos.events import READ_TYPES, GetpageColumns, IoColumns, ZosBlock, factorize, pool_name
from poolsight.simulator.trace import TraceFormatError

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

# Code bytes of IFCID 198 to the GetpageBatch codes; 255: not a valid code.
_FUNCTION = np.full(256, 255, np.uint8)
_FUNCTION[[L.E["G"], L.E["S"], L.E["R"]]] = [0, 1, 2]
_STATUS = np.full(256, 255, np.uint8)
_STATUS[[L.E["H"], L.E["M"], L.E["N"]]] = [1, 0, 0]
_ACCESS = np.full(256, 255, np.uint8)
_ACCESS[[L.E["R"], L.E["S"], L.E["L"]]] = [0, 1, 2]
_POOL_OK = np.array([pool_name(i) is not None for i in range(256)])
_READ_TYPE = np.full(256, 255, np.int64)
_READ_TYPE[[L.E[c] for c in READ_TYPES]] = list(READ_TYPES.values())


@dataclass(frozen=True)
class Kind:
    name: str  # smf or gtf
    header: int  # writer header length: where the self-defining section starts


SMF = Kind("smf", L.SMF_HEADER)
GTF = Kind("gtf", L.GTF_HEADER)
KINDS = {k.name: k for k in (SMF, GTF)}


def sniff(head: bytes) -> tuple[Kind, bool] | None:
    """(kind, with BDWs) when the file's first bytes are an SMF 102 or a DB2 GTF record."""
    for bdw in (False, True):
        r = head[4:] if bdw else head
        if len(r) < 16 or (bdw and head[2:4] != b"\0\0" and not head[0] & 0x80):
            continue
        rdw = int.from_bytes(r[0:2], "big")
        if rdw < 16:
            continue
        if r[L.SMF_TYPE] == L.SMF_RECORD_TYPE and rdw >= L.SMF_HEADER + 8:
            return SMF, bdw
        if int.from_bytes(r[L.GTF_EID : L.GTF_EID + 2], "big") == L.GTF_EVENT_ID and rdw >= L.GTF_HEADER:
            return GTF, bdw
    return None


def _gather(b: U8, at: I64, width: int, dtype: str) -> I64:
    """Big-endian integers of `width` bytes at byte offsets `at`: one gather from the view that
    starts at each offset's remainder (unaligned numpy views cost nothing; gathering the bytes
    one by one costs `width` times more). Records are usually all aligned alike: one view."""
    shift = width.bit_length() - 1
    rem = at & (width - 1)
    if not len(at) or (rem == rem[0]).all():
        k = int(rem[0]) if len(at) else 0
        view = np.frombuffer(b.data, dtype=dtype, offset=k, count=(len(b) - k) // width)
        out: I64 = view[(at - k) >> shift].astype(np.int64)
        return out
    out = np.empty(len(at), np.int64)
    for k in range(width):
        view = np.frombuffer(b.data, dtype=dtype, offset=k, count=(len(b) - k) // width)
        sel = rem == k
        out[sel] = view[(at[sel] - k) >> shift]
    return out


def _u16(b: U8, at: I64) -> I64:
    return _gather(b, at, 2, ">u2")


def _u32(b: U8, at: I64) -> I64:
    return _gather(b, at, 4, ">u4")


@dataclass
class _Decoded:
    """IFCID 198 rows of one buffer, with the index of the record each came from."""

    record: I64
    getpages: GetpageColumns


@dataclass
class BinaryReader:
    """Blocks (ZosBlock) of an SMF or GTF file, from `start_offset` (a record or block boundary)."""

    path: Path
    kind: Kind | None = None  # None: as the first record shows
    with_bdw: bool | None = None
    start_offset: int = 0
    records_before: int = 0
    block_bytes: int = 16 << 20
    complete_only: bool = False  # a growing file: leave a record cut off at the end for later
    on_reject: Callable[[TraceFormatError], None] | None = None
    strict: bool = False
    records: int = 0
    rejected: int = 0
    skipped: dict[int, int] = field(default_factory=dict)
    other_types: dict[int, int] = field(default_factory=dict)  # SMF types / GTF event ids not DB2's
    seen_bdw: bool = False

    def _reject(self, offset: int, fld: str, reason: str, raw: bytes = b"") -> None:
        err = TraceFormatError(str(self.path), offset, fld, reason, raw[:4096], unit="byte")
        if self.strict:
            raise err
        self.rejected += 1
        if self.on_reject is not None:
            self.on_reject(err)

    def blocks(self) -> Iterator[ZosBlock]:
        src = str(self.path)
        try:
            fh = self.path.open("rb")
        except OSError as exc:
            raise TraceFormatError(src, 0, "file", str(exc), unit="byte") from exc
        with fh:
            if self.kind is None or self.with_bdw is None:
                fh.seek(0)
                found = sniff(fh.read(64))
                if found is None:
                    raise TraceFormatError(
                        src, 0, "RDW", "not an SMF type 102 or DB2 GTF record (with or without a BDW)", unit="byte"
                    )
                self.kind, self.with_bdw = self.kind or found[0], found[1] if self.with_bdw is None else self.with_bdw
            self.seen_bdw = bool(self.with_bdw)
            pos, size = self.start_offset, self.block_bytes
            self.records = self.records_before
            while True:
                fh.seek(pos)
                data = fh.read(size)
                if not data:
                    return
                framed = frame_records(data, bool(self.with_bdw), self.kind.header)
                starts_b, lengths_b, segs_b, consumed, error = framed
                starts = np.frombuffer(starts_b, dtype="<i8")
                lengths = np.frombuffer(lengths_b, dtype="<i8")
                segs = np.frombuffer(segs_b, dtype=np.uint8)
                if self.kind is GTF and len(starts):
                    segs = self._gtf_segments(np.frombuffer(data, dtype=np.uint8), starts, lengths)
                cut = self._whole_chains(segs)
                if cut < len(starts) and error is None:  # a spanned record continues in the next read
                    consumed = self._boundary_before(data, int(starts[cut]))
                    keep = starts < consumed
                    starts, lengths, segs = starts[keep], lengths[keep], segs[keep]
                if consumed == 0 and error is None:
                    if len(data) == size:
                        size *= 2  # a block or a spanned record longer than the read
                        continue
                    if not self.complete_only:
                        why = f"the last record is cut off by the end of the file ({len(data)} bytes left)"
                        self._reject(pos, "RDW", why)
                    return
                yield self._decode(np.frombuffer(data, dtype=np.uint8), data, starts, lengths, segs, pos, consumed)
                if error is not None:
                    at, fld, why = error
                    self._reject(pos + at, fld, f"{why}; the rest of the file cannot be framed", data[at : at + 64])
                    return
                pos += consumed
                size = self.block_bytes

    def _gtf_segments(self, buf: U8, starts: I64, lengths: I64) -> U8:
        """QWGTDSCC of each DB2 GTF record (0 for others: they are single records)."""
        ok = lengths >= L.GTF_HEADER
        at = np.where(ok, starts, 0)
        db2 = ok & (_u16(buf, at + L.GTF_EID) == L.GTF_EVENT_ID)
        out: U8 = np.where(db2, buf[at + L.GTF_DSCC], 0).astype(np.uint8)
        return out

    @staticmethod
    def _whole_chains(segs: U8) -> int:
        """Index of the first segment of a spanned record not finished in this read (len: none)."""
        spanned = np.flatnonzero(segs != L.SEG_WHOLE)
        if not len(spanned):
            return len(segs)
        last = spanned[-1]
        if segs[last] == L.SEG_LAST:
            return len(segs)
        firsts = spanned[segs[spanned] == L.SEG_FIRST]
        return int(firsts[-1]) if len(firsts) else len(segs)

    def _boundary_before(self, data: bytes, offset: int) -> int:
        """The last record (or, with BDWs, block) boundary at or before offset."""
        if not self.with_bdw:
            return offset
        at = 0
        while True:
            raw = int.from_bytes(data[at : at + 4], "big")
            n = raw & 0x7FFFFFFF if raw & 0x80000000 else raw >> 16
            if at + n > offset:
                return at
            at += n

    # ------------------------------------------------------------ records

    def _decode(self, buf: U8, data: bytes, starts: I64, lengths: I64, segs: U8, pos: int, consumed: int) -> ZosBlock:
        kind = self.kind or SMF
        n = len(starts)
        skipped: dict[int, int] = {}
        whole = segs == L.SEG_WHOLE
        # Records that are DB2's: SMF type 102 / GTF event id X'EFB9'.
        at = np.where(lengths >= kind.header, starts, 0)
        if kind is SMF:
            mark = buf[at + L.SMF_TYPE].astype(np.int64)
            db2 = mark == L.SMF_RECORD_TYPE
        else:
            mark = _u16(buf, at + L.GTF_EID)
            db2 = mark == L.GTF_EVENT_ID
        for m, c in zip(*np.unique(mark[~db2 & whole], return_counts=True), strict=True):
            self.other_types[int(m)] = self.other_types.get(int(m), 0) + int(c)
        sel = whole & db2
        parts = [self._decode_whole(buf, data, starts[sel], lengths[sel], np.flatnonzero(sel), pos + starts[sel])]
        if not whole.all():
            joined, jstarts, jlengths, jrec = self._join(data, starts, lengths, segs, pos)
            if len(jstarts):
                jbuf = np.frombuffer(joined, dtype=np.uint8)
                jdb2 = (
                    jbuf[jstarts + L.SMF_TYPE] == L.SMF_RECORD_TYPE
                    if kind is SMF
                    else _u16(jbuf, jstarts + L.GTF_EID) == L.GTF_EVENT_ID
                )
                jr = jrec[jdb2]
                parts.append(self._decode_whole(jbuf, joined, jstarts[jdb2], jlengths[jdb2], jr, pos + starts[jr]))
        for p in parts:
            for k, v in p[2].items():
                skipped[k] = skipped.get(k, 0) + v
        gp = [p[0] for p in parts if len(p[0].record)]
        if len(gp) > 1:
            order = np.argsort(np.concatenate([d.record for d in gp]), kind="stable")
            getpages = _concat([d.getpages for d in gp], order)
        else:
            getpages = gp[0].getpages if gp else GetpageColumns.from_rows([])
        io = parts[0][1][1]
        if len(parts) > 1:  # spanned I/O records back in record order
            io = IoColumns.concat([p[1][1] for p in parts]).take(
                np.argsort(np.concatenate([p[1][0] for p in parts]), kind="stable")
            )
        for k, v in skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v
        self.records += n
        return ZosBlock(getpages, [], skipped, pos + consumed, self.records, io)

    def _join(self, data: bytes, starts: I64, lengths: I64, segs: U8, pos: int) -> tuple[bytes, I64, I64, I64]:
        """Spanned records joined into one buffer: the first segment whole, then each later
        segment without its header. Returns (buffer, starts, lengths, index of first segment)."""
        kind = self.kind or SMF
        skip = 4 if kind is SMF else L.GTF_HEADER
        out = bytearray()
        js: list[int] = []
        jl: list[int] = []
        jr: list[int] = []
        chain: list[int] = []
        for i in np.flatnonzero(segs != L.SEG_WHOLE):
            s, n, seg = int(starts[i]), int(lengths[i]), int(segs[i])
            if seg == L.SEG_FIRST:
                if chain:
                    self._reject(pos + int(starts[chain[0]]), "segment", "a spanned record without its last segment")
                chain = [int(i)]
            elif seg in (L.SEG_MIDDLE, L.SEG_LAST):
                if not chain:
                    self._reject(pos + s, "segment", "a middle or last segment without its first", data[s : s + n])
                    continue
                chain.append(int(i))
                if seg == L.SEG_LAST:
                    begin = len(out)
                    for k, j in enumerate(chain):
                        a, b = int(starts[j]), int(starts[j] + lengths[j])
                        out += data[a:b] if k == 0 else data[a + skip : b]
                    js.append(begin)
                    jl.append(len(out) - begin)
                    jr.append(chain[0])
                    chain = []
            else:
                self._reject(pos + s, "segment", f"segment descriptor X'{seg:02X}' is not 0-3", data[s : s + 8])
        return bytes(out), np.array(js, np.int64), np.array(jl, np.int64), np.array(jr, np.int64)

    def _decode_whole(
        self, buf: U8, data: bytes, s: I64, n: I64, rec: I64, at: I64
    ) -> tuple[_Decoded, tuple[I64, IoColumns], dict[int, int]]:
        """Whole DB2 records at starts s (lengths n) of buf (data: the same bytes); rec: each
        record's index in the read, at: its file offset (a spanned record's first segment's)."""
        kind = self.kind or SMF
        h = kind.header
        fail = np.zeros(len(s), np.uint8)  # the first check each record fails (0: none)
        reasons: list[str] = []

        def check(bad: npt.NDArray[np.bool_], reason: str) -> None:
            reasons.append(reason)
            fail[(fail == 0) & bad] = len(reasons)

        check(n < h + 8, "SDS|record too short for the self-defining section")
        safe = fail == 0
        p_off = np.where(safe, _u32(buf, np.where(safe, s + h + L.SDS_OFFSET, 0)), 0)
        check(~((p_off >= h + 8) & (p_off + L.QWHS_MIN <= n)), "SDS|product section offset outside the record")
        safe = fail == 0
        p = np.where(safe, s + p_off, 0)
        check(buf[p + L.QWHSTYP] != 1, "QWHSTYP|not the standard header (type 1)")
        safe = fail == 0
        ifcid = np.where(safe, _u16(buf, p + L.QWHSIID), -1)
        stck_hi, stck_lo = _u32(buf, p + L.QWHSSTCK), _u32(buf, p + L.QWHSSTCK + 4)
        time_us = ((stck_hi << 20) | (stck_lo >> 12)) - L.STCK_EPOCH_US
        ssid_raw = _u32(buf, p + L.QWHSSSID)
        is198 = safe & (ifcid == L.IFCID_GETPAGE)
        # Data section 1 of a 198: its triplet, then bounds and the published section lengths.
        t = np.where(is198, s + h + L.SDS_ITEM, 0)
        check(is198 & (n < h + 2 * L.SDS_ITEM), "SDS|no data section triplet")
        ok = is198 & (fail == 0)
        d_off = np.where(ok, _u32(buf, t), 0)
        d_len = np.where(ok, _u16(buf, t + L.SDS_LENGTH), 0)
        d_cnt = np.where(ok, _u16(buf, t + L.SDS_COUNT), 0)
        check(ok & (d_cnt == 0), "SDS|data section absent (count 0)")
        check(
            ok & (d_cnt > 0) & ~np.isin(d_len, L.QW0198_LENGTHS),
            "QW0198|section length is not a public layout (16 or 24 bytes)",
        )
        check(ok & ((d_off < h + 16) | (d_off + d_len * d_cnt > n)), "SDS|data section outside the record")
        ok = is198 & (fail == 0)
        cnt = np.where(ok, d_cnt, 0)
        rows = np.repeat(np.arange(len(s)), cnt)
        k = np.arange(len(rows)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        item = s[rows] + d_off[rows] + k * d_len[rows]
        fc = _FUNCTION[buf[item + L.QW0198FC]]
        ps = _STATUS[buf[item + L.QW0198PS]]
        ac = _ACCESS[buf[item + L.QW0198AT]]
        bp = buf[item + L.QW0198BP]
        getpage = fc == 0
        item_reasons = [
            (fc == 255, "QW0198FC|function is not G, S or R"),
            (getpage & (ps == 255), "QW0198PS|page status of a getpage is not H, M or N"),
            (getpage & (ac == 255), "QW0198AT|access type of a getpage is not S, R or L"),
            (~_POOL_OK[bp], "QW0198BP|not a buffer pool id (0-49, 80-89, 100-109, 120-129)"),
        ]
        for bad, reason in item_reasons:
            bad_record = np.zeros(len(s), np.bool_)
            bad_record[rows[bad]] = True
            check(bad_record, reason)
        good = fail[rows] == 0
        rows, item = rows[good], item[good]
        fc, ps, ac, bp = fc[good], ps[good], ac[good], bp[good]
        getpage = fc == 0
        long = d_len[rows] == 24
        flag = np.where(long, buf[np.where(long, item + L.QW0198P, 0)], 0)
        part = np.where(long & (flag & L.QW0198P_RELATIVE != 0), _u32(buf, np.where(long, item + L.QW0198PT, 0)), 0)
        ssid_codes, ssid_index = factorize(ssid_raw[rows])
        cols = GetpageColumns(
            time_us=time_us[rows].astype(np.int64),
            ssid=ssid_index.reshape(-1).astype(np.int32),
            ssids=[L.ebcdic(int(v).to_bytes(4, "big")) for v in ssid_codes],
            pool_id=bp.astype(np.int16),
            dbid=_u16(buf, item + L.QW0198DB).astype(np.int32),
            obid=_u16(buf, item + L.QW0198OB).astype(np.int32),
            function=fc,
            access=np.where(getpage, ac, 0).astype(np.uint8),
            hit=np.where(getpage, ps, 0).astype(np.uint8),
            page=_u32(buf, item + L.QW0198PN).astype(np.uint64),
            partition=part.astype(np.int32),
        )
        decoded = _Decoded(rec[rows], cols)
        # I/O records, vectorised like the getpages; other IFCIDs counted; failures named.
        is_io = (fail == 0) & np.isin(ifcid, (L.IFCID_READ_START, L.IFCID_READ_END))
        check(is_io & (n < h + 2 * L.SDS_ITEM), "SDS|no data section triplet")
        ok = is_io & (fail == 0)
        t = np.where(ok, s + h + L.SDS_ITEM, 0)
        i_off, i_len, i_cnt = _u32(buf, t), _u16(buf, t + L.SDS_LENGTH), _u16(buf, t + L.SDS_COUNT)
        start = ifcid == L.IFCID_READ_START
        check(ok & (i_cnt != 1), "SDS|expected one data section item")
        check(ok & start & (i_len != L.QW0006_LENGTH), "QW0006|section length is not the public layout (16 bytes)")
        check(
            ok & ~start & ~np.isin(i_len, L.QW0007_LENGTHS), "QW0007|section length is not the public layout (14 or 16)"
        )
        check(ok & ((i_off < h + 16) | (i_off + i_len > n)), "SDS|data section outside the record")
        ok = is_io & (fail == 0)
        d = np.where(ok, s + i_off, 0)
        rt = _READ_TYPE[buf[d + L.QW0006F]]
        bp6 = _u32(buf, d + L.QW0006BP)
        check(ok & start & (rt == 255), "QW0006F|read type is not R, S, L or D")
        check(ok & start & ((bp6 > 255) | ~_POOL_OK[np.minimum(bp6, 255)]), "QW0006BP|not a buffer pool id")
        sel = np.flatnonzero(is_io & (fail == 0))
        ds, st = d[sel], start[sel]
        z = np.zeros(len(sel), np.int64)
        io = IoColumns(
            is_start=st,
            time_us=time_us[sel],
            ssid=ssid_raw[sel],
            ace=np.where(st, _u32(buf, ds + L.QW0006AC), _u32(buf, ds + L.QW0007AC)),
            dbid=np.where(st, _u16(buf, ds + L.QW0006DB), _u16(buf, ds + L.QW0007DB)),
            obid=np.where(st, _u16(buf, ds + L.QW0006OB), _u16(buf, ds + L.QW0007OB)),
            pool_id=np.where(st, bp6[sel], z),
            first_page=np.where(st, _u32(buf, ds + L.QW0006PN) >> 8, z),  # XL3: the fullword's top 3 bytes
            read_type=np.where(st, rt[sel], z).astype(np.int64),
            pages=np.where(st, z, _u16(buf, ds + L.QW0007NP)),
            retcode=np.where(st, z, _u32(buf, ds + L.QW0007MM)),
            offset=at[sel],
        )
        other = (fail == 0) & ~is_io & (ifcid != L.IFCID_GETPAGE) & (ifcid >= 0)
        skipped = {int(k): int(v) for k, v in zip(*np.unique(ifcid[other], return_counts=True), strict=True)}
        for i in np.flatnonzero(fail):
            fld, why = reasons[fail[i] - 1].split("|")
            a = int(s[i])
            self._reject(int(at[i]), fld, why, data[a : a + int(n[i])])
        return decoded, (rec[sel], io), skipped


def _concat(parts: list[GetpageColumns], order: I64) -> GetpageColumns:
    ssids = sorted({x for p in parts for x in p.ssids})
    index = {x: i for i, x in enumerate(ssids)}
    remapped = [np.array([index[x] for x in p.ssids], np.int32)[p.ssid] for p in parts]

    def cat(name: str) -> npt.NDArray[np.generic]:
        out: npt.NDArray[np.generic] = np.concatenate([getattr(p, name) for p in parts])[order]
        return out

    return GetpageColumns(
        time_us=cat("time_us"),  # type: ignore[arg-type]
        ssid=np.concatenate(remapped)[order],
        ssids=ssids,
        pool_id=cat("pool_id"),  # type: ignore[arg-type]
        dbid=cat("dbid"),  # type: ignore[arg-type]
        obid=cat("obid"),  # type: ignore[arg-type]
        function=cat("function"),  # type: ignore[arg-type]
        access=cat("access"),  # type: ignore[arg-type]
        hit=cat("hit"),  # type: ignore[arg-type]
        page=cat("page"),  # type: ignore[arg-type]
        partition=cat("partition"),  # type: ignore[arg-type]
    )
