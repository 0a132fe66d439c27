"""OMEGAMON PE record trace text (TRACE LEVEL SHORT or LONG): IFCID 198 getpages, 006/007 read I/Os.

Where each label and layout comes from (IBM documentation, "om-db2" = IBM OMEGAMON for Db2
Performance Expert 5.5 / OMEGAMON AI for Db2 6.1, "om-db2-pe" = its 5.5 pages):

- Page header: LOCATION, GROUP, MEMBER, SUBSYSTEM, DB2 VERSION on five lines, the title
  "RECORD TRACE - SHORT|LONG|DUMP" on the GROUP line, ACTUAL FROM and PAGE DATE (MM/DD/YY) on the
  SUBSYSTEM and DB2 VERSION lines: ibm.com/docs/en/om-db2/6.1.0?topic=set-dump-record-trace (sample),
  ibm.com/docs/en/om-db2/5.5.0?topic=traces-short-record-trace ("RECORD TRACE - SHORT"), field
  meanings (MEMBER/GROUP N/A or N/P when absent): om-db2-pe/5.4.0?topic=layouts-headers-used-in-accounting.
- Record header: three lines under the column headings "PRIMAUTH CONNECT INSTANCE END_USER WS_NAME
  TRANSACT / ORIGAUTH CORRNAME CONNTYPE RECORD TIME DESTNO ACE IFC DESCRIPTION DATA / PLANNAME
  CORRNMBR TCB CPU TIME ID"; RECORD TIME is hh:mm:ss plus hundred-millionths (QWHSSTCK); the header
  is "rewritten if any of the header information changes": ibm.com/docs/en/om-db2/6.1.0?topic=set-record-headers.
  A record's data is "in either the DATA column or the full width of the report page"
  (om-db2-pe/5.5.0?topic=set-short-long-record-traces); the full-width form under a dashed line
  is the IFCID 477 sample (om-db2-pe/5.5.0?topic=blocks-ifcid-477-ftb-idx-alloc). Both are read.
- IFCID 198 block (DBID, PSID, BPID X'..', FUNCTION, PAGE STATUS, ACCESS, PAGE X'..', ACE,
  PAGE REFRESH, PARTITION, PAGE NUMBERING):
  ibm.com/docs/en/om-db2/6.1.0?topic=blocks-ifcid-198-buffer-manager-page-access.
- IFCID 006 block (DBID, POOL ID, ACE, OBID, FIRST X'..', READTYPE letter, PAGE NUMBERING,
  PARTITION NUMBER, TABLE_SPACE_TYPE, ZHYPERLINK REQUEST): om-db2-pe/5.5.0?topic=blocks-ifcid-006-read-io-start.
- IFCID 007 block (DBID, RETCODE, ACE, OBID, READ = pages read, PAGE NUMBERING, PARTITION NUMBER,
  DASD CACHE HIT, ZHYPERLINK REQUEST, PAGE PREFETCHED VIA IO OPERATION + X'..' list):
  om-db2-pe/5.5.0?topic=blocks-ifcid-007-read-io-stop; the 5.4 layout without colons
  ("DBID 1 RETCODE 0 ACE 1"): SSUSPA_5.4.0 .../ko2rr/r0007out.htm.
- ACE is "the relative number of the agent control element address in the ACE cross-reference
  table ... printed at the end of each location" (om-db2/6.1.0?topic=drt-ace-cross-reference-table).
- Codes: QW0198FC/PS/AT letters, QW0006F read types, QW0198P1 (page number relative to the
  partition): /work/shared/ZOS-RECORDS.md (responsivesystems bptune DSECTs, SG24-8404 p. 356).

Assumed (not in IBM's public pages, or chosen here):
- Times: the report states no zone; RECORD TIME on the page's PAGE DATE is taken as UTC. A record
  whose time of day is more than 12 h before the previous one's on the same page is on the next day.
  MM/DD/YY years: the century nearest `year_hint`, else 20YY.
- ssid: the page's SUBSYSTEM, else its MEMBER (N/P and N/A are absent).
- DBID/PSID/OBID: OMEGAMON shows a name when the input has the catalog records (IFCID 105/107);
  the numeric id is then not in the text, so such a record is rejected. N/A is 0.
- ACE: decimal, as IBM documents it (a cross-reference number); X'..' is read as hex.
- PAGE STATUS: only "PAGE HIT IN BUFFERPOOL" is in IBM's sample. A text with the word MISS, NOT or
  NO is a miss/no-read (0), one with HIT a hit (1); the raw letters H/M/N are also read. ACCESS:
  RANDOM, SEQUENTIAL (sample), RID LIST or LIST (assumed), or the raw letters R/S/L; it is read for
  GET PAGE only (access 0 otherwise). FUNCTION: GET PAGE (sample), SET WRITE INTENT, RELEASE PAGE.
- Extent of a record: it starts at its RECORD TIME line and ends before the next one, or before the
  first line that is not its own once its block began: lines with its labels (and 007's page list)
  are its own; page headers, column headings, dashed, blank and serviceability (QWnnnn) lines inside
  it are read through; one line without labels is allowed before the block (PLANNAME line).
- End of file: an unterminated last line is never read. The last record is consumed only when its
  block's documented last line is there (198: PARTITION/PAGE NUMBERING, 006: TABLE_SPACE_TYPE, 007:
  all READ pages listed); otherwise it is left for a later read (a growing file). A finished report
  ends with the ACE cross-reference table, which closes it.
- A read resumed at `start_offset` recovers its page (SUBSYSTEM, PAGE DATE) by looking back at most
  CONTEXT_LIMIT bytes for the page header and replaying that page up to the offset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import BinaryIO, TypeVar

from poolsight.ingest.zos.events import (
    READ_TYPES,
    STATUS_HIT,
    GetpageColumns,
    IoStart,
    IoStop,
    ZosBlock,
    pool_name,
)
from poolsight.simulator.trace import TraceFormatError

MAX_LINE = 64 * 1024  # longer "lines" are no report text (binary input): skipped, never held whole
RAW_LIMIT = 4096  # bytes of a rejected record kept in its TraceFormatError
CONTEXT_LIMIT = 4 << 20  # how far back a resumed read looks for its page header
CHUNK = 64 * 1024
US_PER_DAY = 86_400_000_000
HALF_DAY_US = US_PER_DAY // 2
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
T = TypeVar("T")

FUNCTIONS = {"GET PAGE": 0, "SET WRITE INTENT": 1, "RELEASE PAGE": 2}
ACCESS = {"RANDOM": 0, "SEQUENTIAL": 1, "RID LIST": 2, "LIST": 2, "R": 0, "S": 1, "L": 2}
ABSENT = {"N/P", "N/A", ""}

LABELS = {
    198: (
        "PAGE NUMBERING",
        "PAGE REFRESH",
        "PAGE STATUS",
        "PARTITION",
        "FUNCTION",
        "ACCESS",
        "DBID",
        "PSID",
        "BPID",
        "PAGE",
        "ACE",
    ),
    6: (
        "ZHYPERLINK REQUEST",
        "TABLE_SPACE_TYPE",
        "PARTITION NUMBER",
        "PAGE NUMBERING",
        "READTYPE",
        "POOL ID",
        "FIRST",
        "DBID",
        "OBID",
        "ACE",
    ),
    7: (
        "PAGE PREFETCHED VIA IO OPERATION",
        "ZHYPERLINK REQUEST",
        "PARTITION NUMBER",
        "DASD CACHE HIT",
        "PAGE NUMBERING",
        "RETCODE",
        "READ",
        "DBID",
        "OBID",
        "ACE",
    ),
}
# The block's documented last line: once seen, the record is whole even at the end of the file.
LAST_LABEL = {198: ("PARTITION", "PAGE NUMBERING"), 6: ("TABLE_SPACE_TYPE",)}
PAGE_LIST = "PAGE PREFETCHED VIA IO OPERATION"

_LABEL_RE = {i: re.compile(r"(?<!\S)(" + "|".join(map(re.escape, ls)) + r")\s*:") for i, ls in LABELS.items()}
_BARE_007 = re.compile(r"(?<!\S)(DBID|OBID|RETCODE|READ|ACE)\s+(?=\S)")  # 5.4 layout, no colons
_RECORD = re.compile(r"(?<!\S)(\d\d):(\d\d):(\d\d)\.(\d{1,8})\s+(?:\d+|N/P|N/A)\s+(?:\d+|N/P|N/A)\s+(\d{1,4})(?=\s|$)")
_LOCATION = re.compile(r"^[ 01+-]?\s*LOCATION:\s*\S+.*\bPAGE:\s*\S")
_HEADER_FIELD = re.compile(r"(?<![A-Z])(MEMBER|SUBSYSTEM|ACTUAL FROM|PAGE DATE)\s*:\s*(\S+)")
_TITLE = re.compile(r"RECORD TRACE\s*-\s*(SHORT|LONG|DUMP|SUMMARY)\b")
_HEADING = re.compile(
    r"^\W?\s*(?:PRIMAUTH\s+CONNECT|CONNECT\s+INSTANCE|ORIGAUTH\s+CORRNAME|PLANNAME\s+CORRNMBR|CORRNMBR\s+TCB)"
    r"|RECORD TIME\s+DESTNO"
)
_DASHES = re.compile(r"^[\s-]*-{3}[\s-]*$")
_SERVICE = re.compile(r"(?<!\S)QW\d{4}[A-Z0-9]*\b")
_HEX_LIST = re.compile(r"^\s*(?:X'[0-9A-Fa-f]+'\s*)+$")
_HEX = re.compile(r"X'([0-9A-Fa-f]+)'")
_DATE = re.compile(r"(\d\d)/(\d\d)/(\d\d|\d{4})")


def looks_like(head: str) -> bool:
    """The first few KB of a file's text: is it an OMEGAMON record trace?"""
    if _TITLE.search(head) and re.search(r"LOCATION:", head):
        return True
    return bool(re.search(r"RECORD TIME\s+DESTNO\s+ACE\s+IFC", head))


def read_rectrace(
    path: Path,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    block_records: int = 65536,
    on_reject: Callable[[TraceFormatError], None] | None = None,
    strict: bool = False,
    year_hint: int | None = None,
) -> Iterator[ZosBlock]:
    """The getpages and read I/Os of a record trace, a block every `block_records` records and at the
    end. `start_offset`/`start_line` resume where a block's end_offset/end_line said."""
    if block_records < 1:
        raise ValueError("block_records must be at least 1")
    with path.open("rb") as f:
        page = _recover_page(f, start_offset, year_hint) if start_offset else _Page(year_hint)
        f.seek(start_offset)
        reader = _Reader(str(path), page, block_records, on_reject, strict, start_offset, start_line, start_offset == 0)
        for line in _lines(f, start_offset, start_line):
            yield from reader.feed(line)
        yield from reader.finish(any_bytes=f.tell() > start_offset)


# Lines -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    start: int  # byte offset of its first byte
    end: int  # byte offset just after its newline
    number: int
    raw: bytes
    text: str | None  # None: longer than MAX_LINE


def _lines(f: BinaryIO, offset: int, number: int) -> Iterator[_Line]:
    """Complete lines from the current position; an unterminated last line is still being written."""
    while True:
        raw = f.readline(MAX_LINE)
        if raw.endswith(b"\n"):
            number += 1
            text = raw.rstrip(b"\r\n").decode("utf-8", "replace")
            yield _Line(offset, offset + len(raw), number, raw, text)
            offset += len(raw)
        elif len(raw) < MAX_LINE:
            return
        else:
            end = _skip_line(f)
            if end is None:
                return
            number += 1
            yield _Line(offset, end, number, raw[:RAW_LIMIT], None)
            offset = end


def _skip_line(f: BinaryIO) -> int | None:
    """Past the newline of an overlong line (its offset), or None at the end of the file."""
    while True:
        chunk = f.readline(MAX_LINE)
        if not chunk:
            return None
        if chunk.endswith(b"\n"):
            return f.tell()


# Page context ----------------------------------------------------------------------------------


@dataclass
class _Page:
    """What the current page header says: subsystem, date, report level."""

    year_hint: int | None
    subsystem: str | None = None
    member: str | None = None
    day: date | None = None
    level: str | None = None
    last_tod: int | None = None  # time of day (µs) of the page's previous record
    header_left: int = 0  # lines of the page header still to come

    @property
    def ssid(self) -> str | None:
        return self.subsystem or self.member

    def header_line(self, text: str) -> bool:
        """Reads a page header line; False: not one."""
        if _LOCATION.search(text):
            self.subsystem = self.member = None
            self.header_left = 4
        elif self.header_left > 0:
            self.header_left -= 1
        else:
            return False
        title = _TITLE.search(text)
        if title:
            self.level = title.group(1)
        for m in _HEADER_FIELD.finditer(text):
            self._field(m.group(1), m.group(2))
        return True

    def _field(self, label: str, value: str) -> None:
        if label in ("SUBSYSTEM", "MEMBER"):
            setattr(self, label.lower(), None if value in ABSENT else value)
        elif label == "PAGE DATE" or (label == "ACTUAL FROM" and self.day is None):
            day = _parse_date(value, self.year_hint)
            if day is not None and day != self.day:
                self.day, self.last_tod = day, None

    def stamp(self, tod: int) -> int | None:
        """A record's time of day as epoch µs (UTC); None: no page date yet."""
        if self.day is None:
            return None
        if self.last_tod is not None and tod < self.last_tod - HALF_DAY_US:
            self.day += timedelta(days=1)  # the trace went past midnight within the page
        self.last_tod = tod
        return (self.day.toordinal() - EPOCH_ORDINAL) * US_PER_DAY + tod


def _parse_date(text: str, year_hint: int | None) -> date | None:
    m = _DATE.fullmatch(text)
    if not m:
        return None
    month, day, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if len(m.group(3)) == 2 and year_hint is None:
        year += 2000
    elif len(m.group(3)) == 2 and year_hint is not None:
        hint = year_hint
        base = hint - hint % 100
        year = min((base - 100 + year, base + year, base + 100 + year), key=lambda y: abs(y - hint))
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _record_tod(m: re.Match[str]) -> int | None:
    """RECORD TIME (hh:mm:ss.ffffffff) as µs since midnight; None: not a time."""
    h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if h > 23 or mi > 59 or s > 59:
        return None
    return ((h * 60 + mi) * 60 + s) * 1_000_000 + int(m.group(4).ljust(8, "0")[:6])


def _recover_page(f: BinaryIO, offset: int, year_hint: int | None) -> _Page:
    """The page state at `offset`: its header found looking back, then that page replayed."""
    page = _Page(year_hint)
    start = _page_start(f, offset)
    if start is None:
        return page
    f.seek(start)
    for line in _lines(f, start, 0):
        if line.start >= offset:
            break
        if line.text is None or page.header_line(line.text):
            continue
        m = _RECORD.search(line.text)
        tod = _record_tod(m) if m else None
        if tod is not None:
            page.stamp(tod)  # keeps the midnight roll-over of the page's earlier records
    return page


def _page_start(f: BinaryIO, offset: int) -> int | None:
    """Byte offset of the last page header line (LOCATION ... PAGE:) before `offset`."""
    end, carry = offset, b""
    while end > 0 and offset - end < CONTEXT_LIMIT:
        begin = max(0, end - CHUNK)
        f.seek(begin)
        data = f.read(end - begin) + carry
        parts = data.split(b"\n")
        starts = [begin]
        for part in parts[:-1]:
            starts.append(starts[-1] + len(part) + 1)
        first = 0 if begin == 0 else 1  # parts[0] may begin in the chunk before
        for i in range(len(parts) - 1, first - 1, -1):
            if _LOCATION.search(parts[i].decode("utf-8", "replace")):
                return starts[i]
        end, carry = begin, parts[0]
    return None


# Records ---------------------------------------------------------------------------------------


class _Bad(Exception):
    """A field of a record that cannot be read."""

    def __init__(self, label: str, line: int, reason: str) -> None:
        super().__init__(reason)
        self.label, self.line, self.reason = label, line, reason


@dataclass
class _Record:
    """An IFCID 198, 006 or 007 record being collected line by line."""

    ifcid: int
    line: int
    start: int
    time_us: int | None
    ssid: str | None
    fields: dict[str, tuple[str, int]] = field(default_factory=dict)
    raw: bytearray = field(default_factory=bytearray)
    end: int = 0
    end_line: int = 0
    began: bool = False  # a line with the block's labels was seen
    spare: int = 1  # lines without labels allowed before the block (the PLANNAME line)
    listing: bool = False  # 007: inside PAGE PREFETCHED VIA IO OPERATION
    listed: int = 0

    def add(self, line: _Line) -> None:
        self.end, self.end_line = line.end, line.number
        self.raw += line.raw[: max(0, RAW_LIMIT - len(self.raw))]

    def labels(self, text: str, number: int) -> bool:
        """Takes the block's `LABEL: value` pairs of a line; False: none there."""
        found = list(_LABEL_RE[self.ifcid].finditer(text))
        if not found and self.ifcid == 7 and text.split()[:1] in (["DBID"], ["OBID"]):
            found = list(_BARE_007.finditer(text))
        if not found:
            return False
        ends = [m.start() for m in found[1:]] + [len(text)]  # a value runs up to the next label
        for m, end in zip(found, ends, strict=True):
            self.fields.setdefault(m.group(1), (" ".join(text[m.end() : end].split()), number))
        self.began = True
        self.listing = self.listing or PAGE_LIST in self.fields
        return True

    def whole(self) -> bool:
        """Its block's documented last line is there (read at the end of the file)."""
        if self.ifcid == 7:
            read = self.fields.get("READ", ("", 0))[0]
            return self.listing and read.isdigit() and self.listed >= int(read)
        return any(label in self.fields for label in LAST_LABEL[self.ifcid])

    def get(self, label: str) -> tuple[str, int]:
        if label not in self.fields:
            raise _Bad(label, self.line, "missing")
        return self.fields[label]


def _field(rec: _Record, label: str, convert: Callable[[str], T]) -> T:
    value, line = rec.get(label)
    try:
        return convert(value)
    except ValueError as e:
        raise _Bad(label, line, f"{value!r}: {e}") from None


def _hex(value: str) -> int:
    m = _HEX.fullmatch(value)
    if not m:
        raise ValueError("not X'hex'")
    return int(m.group(1), 16)


def _number(value: str) -> int:
    """Decimal, or X'hex'."""
    if value.isdigit():
        return int(value)
    return _hex(value)


def _object_id(value: str) -> int:
    if value == "N/A":
        return 0  # IBM: N/A when the id is 0
    if value.isdigit():
        return int(value)
    raise ValueError("a name, not the decimal id: the id is not in the report (names come from IFCID 105/107)")


def _ace(value: str) -> int:
    return 0 if value in ABSENT else _number(value)


def _pool(value: str) -> int:
    pid = _number(value)
    if pool_name(pid) is None:
        raise ValueError("not a buffer pool id")
    return pid


def _status(value: str) -> int:
    """PAGE STATUS as the `hit` byte."""
    if value in STATUS_HIT:
        return STATUS_HIT[value]
    if re.search(r"\b(MISS|NOT|NO)\b", value):
        return 0
    if re.search(r"\bHIT\b", value):
        return 1
    raise ValueError("unknown page status")


def _code(table: dict[str, int], what: str) -> Callable[[str], int]:
    def convert(value: str) -> int:
        if value not in table:
            raise ValueError(f"unknown {what}")
        return table[value]

    return convert


def _read_type(value: str) -> str:
    if value not in READ_TYPES:
        raise ValueError("unknown read type (R, S, L or D)")
    return value


Row = tuple[int, str, int, int, int, int, int, int, int, int]


def _getpage(rec: _Record, time_us: int, ssid: str) -> Row:
    function = _field(rec, "FUNCTION", _code(FUNCTIONS, "function"))
    hit = access = 0
    if function == 0:
        hit = _field(rec, "PAGE STATUS", _status)
        access = _field(rec, "ACCESS", _code(ACCESS, "access type"))
    dbid = _field(rec, "DBID", _object_id)
    obid = _field(rec, "PSID", _object_id)
    pool = _field(rec, "BPID", _pool)
    page = _field(rec, "PAGE", _hex)
    relative = rec.fields.get("PAGE NUMBERING", ("",))[0] == "REL"
    partition = _field(rec, "PARTITION", _number) if relative else 0
    return (time_us, ssid, pool, dbid, obid, function, access, hit, page, partition)


def _io_start(rec: _Record, time_us: int, ssid: str, where: str) -> IoStart:
    return IoStart(
        time_us,
        ssid,
        _field(rec, "ACE", _ace),
        _field(rec, "DBID", _object_id),
        _field(rec, "OBID", _object_id),
        _field(rec, "POOL ID", _pool),
        _field(rec, "FIRST", _hex),
        _field(rec, "READTYPE", _read_type),
        where,
    )


def _io_stop(rec: _Record, time_us: int, ssid: str, where: str) -> IoStop:
    return IoStop(
        time_us,
        ssid,
        _field(rec, "ACE", _ace),
        _field(rec, "DBID", _object_id),
        _field(rec, "OBID", _object_id),
        _field(rec, "READ", _number),
        _field(rec, "RETCODE", _number),
        where,
    )


# The reader ------------------------------------------------------------------------------------


@dataclass
class _Reader:
    source: str
    page: _Page
    block_records: int
    on_reject: Callable[[TraceFormatError], None] | None
    strict: bool
    consumed: int  # byte offset just after the last line fully consumed
    consumed_line: int
    from_start: bool = False  # this read began at the file's first byte
    rows: list[Row] = field(default_factory=list)
    ios: list[IoStart | IoStop] = field(default_factory=list)
    skipped: dict[int, int] = field(default_factory=dict)
    records: int = 0  # records in the current block
    open: _Record | None = None  # a 198/006/007 record whose end has not been seen
    recognised: bool = False
    level_rejected: bool = False
    first_raw: bytes = b""

    def feed(self, line: _Line) -> Iterator[ZosBlock]:
        if not self.first_raw:
            self.first_raw = line.raw[:200]
        rec = self.open
        if rec is not None:
            if self._takes(rec, line):
                return
            self.open = None  # this line is the first after it: the record is whole
            yield from self._close(rec)
        yield from self._fresh(line)

    def finish(self, *, any_bytes: bool) -> Iterator[ZosBlock]:
        rec = self.open
        if rec is not None and rec.whole():
            self.open = None
            yield from self._close(rec)
        # Otherwise it may still be being written: left for a read resumed at `consumed`.
        if self.from_start and not self.recognised and any_bytes:
            reason = "no OMEGAMON record trace here: no RECORD TRACE page header, no RECORD TIME record line"
            self._reject(TraceFormatError(self.source, 1, "format", reason, self.first_raw))
        yield self._cut()

    def _fresh(self, line: _Line) -> Iterator[ZosBlock]:
        """A line outside any open record: page header, record line or text between records."""
        text = line.text
        m = None
        if text is not None and self.page.header_line(text):
            self.recognised = True
            self._check_level(line)
        elif text is not None:
            m = _RECORD.search(text)
        tod = _record_tod(m) if m else None
        if m is None or tod is None or text is None:
            self.consumed, self.consumed_line = line.end, line.number
            return
        self.recognised = True
        time_us = self.page.stamp(tod)
        ifcid = int(m.group(5))
        if ifcid in LABELS and self.page.level not in ("DUMP", "SUMMARY"):
            rec = _Record(ifcid, line.number, line.start, time_us, self.page.ssid)
            rec.add(line)
            rec.labels(text[m.end() + 16 :], line.number)  # a block printed in the DATA column
            self.open = rec
            return
        self.skipped[ifcid] = self.skipped.get(ifcid, 0) + 1
        self.consumed, self.consumed_line = line.end, line.number
        yield from self._counted()

    def _takes(self, rec: _Record, line: _Line) -> bool:
        """Whether a line belongs to the open record: its own, or one read through (page breaks)."""
        text = line.text
        if text is None or _RECORD.search(text):
            return False
        own = bool(
            self.page.header_line(text)
            or not text.strip()
            or _HEADING.search(text)
            or _DASHES.match(text)
            or _SERVICE.search(text)
            or rec.labels(text, line.number)
        )
        if not own and rec.listing and _HEX_LIST.match(text):
            rec.listed += len(_HEX.findall(text))
            own = True
        if not own and not rec.began and rec.spare > 0:
            rec.spare -= 1  # the PLANNAME line of the record header
            own = True
        if own:
            rec.add(line)
        return own

    def _close(self, rec: _Record) -> Iterator[ZosBlock]:
        """A record whose last line has been read: its row, its I/O or a reject."""
        try:
            self._emit(rec)
        except _Bad as bad:
            self._reject(TraceFormatError(self.source, bad.line, bad.label, bad.reason, bytes(rec.raw)))
        self.consumed, self.consumed_line = rec.end, rec.end_line
        yield from self._counted()

    def _emit(self, rec: _Record) -> None:
        if rec.time_us is None:
            raise _Bad("PAGE DATE", rec.line, "no page header with a PAGE DATE before this record")
        if rec.ssid is None:
            raise _Bad("SUBSYSTEM", rec.line, "no page header with a SUBSYSTEM or MEMBER before this record")
        where = f"{self.source}:{rec.line}"
        if rec.ifcid == 198:
            self.rows.append(_getpage(rec, rec.time_us, rec.ssid))
        elif rec.ifcid == 6:
            self.ios.append(_io_start(rec, rec.time_us, rec.ssid, where))
        else:
            self.ios.append(_io_stop(rec, rec.time_us, rec.ssid, where))

    def _check_level(self, line: _Line) -> None:
        if self.page.level in ("DUMP", "SUMMARY") and not self.level_rejected:
            self.level_rejected = True
            reason = (
                f"RECORD TRACE - {self.page.level}: only TRACE LEVEL(SHORT) or (LONG) shows the IFCID 198, 006 "
                "and 007 fields; its records are counted as skipped"
            )
            self._reject(TraceFormatError(self.source, line.number, "format", reason, line.raw[:RAW_LIMIT]))

    def _counted(self) -> Iterator[ZosBlock]:
        self.records += 1
        if self.records >= self.block_records:
            yield self._cut()

    def _cut(self) -> ZosBlock:
        getpages = GetpageColumns.from_rows(self.rows)
        block = ZosBlock(getpages, self.ios, self.skipped, self.consumed, self.consumed_line)
        self.rows, self.ios, self.skipped, self.records = [], [], {}, 0
        return block

    def _reject(self, err: TraceFormatError) -> None:
        if self.strict:
            raise err
        if self.on_reject is not None:
            self.on_reject(err)
