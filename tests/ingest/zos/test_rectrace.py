"""OMEGAMON PE record trace text: IFCID 198 getpages, 006/007 read I/Os, bad records, resuming.

The report text is built here from IBM's documented samples (own values, same structure): the page
header of om-db2 6.1 "Dump Record Trace" (level SHORT instead of DUMP), the record header of "Record
Headers", a record's full-width block under a dashed line as in the IFCID 477 sample, and the
IFCID 198 (om-db2 6.1), 006 and 007 (om-db2-pe 5.5) sample blocks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from poolsight.ingest.zos.events import IoPairing, IoStart, IoStop, ReadIo, Unpaired, ZosBlock
from poolsight.ingest.zos.rectrace import Row, looks_like, read_rectrace
from poolsight.simulator.trace import TraceFormatError


def page_header(ssid: str = "DB2P", day: str = "03/14/24", level: str = "SHORT", page: int = 1) -> list[str]:
    return [
        f"   LOCATION: DSNLW0A                          IBM Z OMEGAMON AI FOR DB2 (V6R1M0)             PAGE: 1-{page}",
        f"      GROUP: N/P                                    RECORD TRACE - {level:<5}"
        "                        REQUESTED FROM: NOT SPECIFIED",
        "     MEMBER: N/P                                                                                            "
        "TO: NOT SPECIFIED",
        f"  SUBSYSTEM: {ssid:<4}                                                                                  "
        f"ACTUAL FROM: {day} 10:15:20.00",
        f"DB2 VERSION: V13                                                                                     "
        f"PAGE DATE: {day}",
        "PRIMAUTH CONNECT   INSTANCE      END_USER       WS_NAME                       TRANSACT",
        "ORIGAUTH CORRNAME  CONNTYPE      RECORD TIME    DESTNO ACE IFC  DESCRIPTION   DATA",
        "PLANNAME CORRNMBR                TCB CPU TIME              ID",
        "-------- -------- ----------- ----------------- ------ --- --- -------------- " + "-" * 54,
    ]


def record(time: str, ifcid: int, desc: str, body: list[str], destno: int = 100, ace: int = 1) -> list[str]:
    """The three record header lines (Record Headers sample), a dashed line, the block full width."""
    return [
        "SYSADM   TSO      DB70F3A9C2E1 'BLANK'         'BLANK'                       'BLANK'",
        f"SYSADM   SYSADM   TSO         {time:<17} {destno:>6} {ace:>3} {ifcid:>3} {desc:<14} "
        "NETWORKID: DEIBMIPS  LUNAME: IPSAQ721  LUWSEQ:     1",
        "DSNTEP2  'BLANK'              N/P",
        "-" * 134,
        *body,
    ]


def b198(
    function: str = "GET PAGE",
    status: str = "PAGE HIT IN BUFFERPOOL",
    access: str = "RANDOM",
    page: str = "X'00000001'",
    dbid: str = "270",
    psid: str = "2",
    bpid: str = "X'00'",
    partition: int = 0,
    numbering: str = "N/A",
) -> list[str]:
    return [
        f"DBID        : {dbid:<10} PSID: {psid:<11} BPID: {bpid}",
        f"FUNCTION    : {function}",
        f"PAGE STATUS : {status}",
        f"ACCESS      : {access:<10} PAGE: {page} ACE :     1",
        "PAGE REFRESH: N/A",
        f"PARTITION   : {partition:>10} PAGE NUMBERING: {numbering}",
    ]


def b006(ace: int, dbid: int, obid: int, pool: int, first: int, readtype: str) -> list[str]:
    return [
        f"DBID: {dbid:<8} POOL ID: {pool:>10}     ACE: {ace:>10}",
        f"OBID: {obid:<8} FIRST  : X'{first:06X}' READTYPE: {readtype}",
        f"PAGE NUMBERING  : ABS   PARTITION NUMBER  : {0:>10}",
        "TABLE_SPACE_TYPE: X'00' ZHYPERLINK REQUEST: N",
    ]


def b007(ace: int, dbid: int, obid: int, pages: list[int], retcode: int = 0) -> list[str]:
    listed = [pages[i : i + 4] for i in range(0, len(pages), 4)]
    return [
        f"DBID: {dbid:<8} RETCODE: {retcode:>10}     ACE: {ace:>10}",
        f"OBID: {obid:<8} READ   : {len(pages):>10}",
        f"PAGE NUMBERING  : ABS   PARTITION NUMBER  : {0:>10}",
        "DASD CACHE HIT  : N     ZHYPERLINK REQUEST: N",
        "PAGE PREFETCHED VIA IO OPERATION:",
        *("  " + " ".join(f"X'{p:08X}'" for p in row) for row in listed),
    ]


IFCID_477 = [  # another IFCID (om-db2-pe 5.5 sample): its DBID/PSID labels must not be read as a 198's
    "ACTION : CREATE",
    "DBID: 265      PSID: 11       PARTITION NO:     1 INDEX LEVELS:     2 FTB SIZE:        2339584",
]
ACE_TABLE = ["", "ACE NUMBER  ACE ADDRESS", "         1  X'1F2E3D40'", "         2  X'1F2E5D40'"]


def us(day: str, time: str) -> int:
    """Epoch µs (UTC) of MM/DD/YY and hh:mm:ss.ffffffff."""
    hms, frac = time.split(".")
    d = datetime.strptime(f"{day} {hms}", "%m/%d/%y %H:%M:%S").replace(tzinfo=UTC)
    return int(d.timestamp()) * 1_000_000 + int(frac[:6])


def write(tmp_path: Path, lines: list[str], name: str = "rectrace.txt", end: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(("\n".join(lines) + end).encode())
    return path


def read(
    path: Path, start_offset: int = 0, start_line: int = 0, block_records: int = 65536, year_hint: int | None = None
) -> tuple[list[ZosBlock], list[TraceFormatError]]:
    rejects: list[TraceFormatError] = []
    blocks = read_rectrace(
        path,
        start_offset=start_offset,
        start_line=start_line,
        block_records=block_records,
        on_reject=rejects.append,
        year_hint=year_hint,
    )
    return list(blocks), rejects


def rows(blocks: list[ZosBlock]) -> list[Row]:
    out: list[Row] = []
    for b in blocks:
        g = b.getpages
        for i in range(len(g)):
            out.append(
                (
                    int(g.time_us[i]),
                    g.ssids[g.ssid[i]],
                    int(g.pool_id[i]),
                    int(g.dbid[i]),
                    int(g.obid[i]),
                    int(g.function[i]),
                    int(g.access[i]),
                    int(g.hit[i]),
                    int(g.page[i]),
                    int(g.partition[i]),
                )
            )
    return out


DAY = "03/14/24"


def getpage_report() -> list[str]:
    return [
        *page_header(),
        *record("10:15:23.10403543", 198, "BPOOL PAGE", b198()),
        *record("10:15:23.10403601", 198, "BPOOL PAGE", b198(status="PAGE NOT IN BUFFERPOOL", access="SEQUENTIAL",
                                                             page="X'000001F4'", bpid="X'64'")),
        *record("10:15:23.10403702", 198, "BPOOL PAGE", b198(status="NO READ REQUEST", access="RID LIST",
                                                             page="X'00000002'")),
        *record("10:15:23.10403803", 198, "BPOOL PAGE", b198(function="SET WRITE INTENT", status="N/A",
                                                             access="N/A", page="X'00000002'")),
        *record("10:15:23.10403904", 198, "BPOOL PAGE", b198(function="RELEASE PAGE", status="N/A",
                                                             access="MRU", page="X'00000002'")),
        *record("10:15:23.20000000", 477, "FTB IDX ALLOC", IFCID_477),
        *record("10:15:24.00000000", 198, "BPOOL PAGE", b198(page="X'00000010'", dbid="N/A", psid="7",
                                                             partition=3, numbering="REL")),
        *record("23:59:59.99999999", 198, "BPOOL PAGE", b198(page="X'00000011'", partition=5, numbering="ABS")),
        *record("00:00:00.00000100", 198, "BPOOL PAGE", b198(access="LIST", page="X'FFFFFFFF'")),
        *ACE_TABLE,
    ]  # fmt: skip


def test_looks_like() -> None:
    assert looks_like("\n".join(page_header()))
    assert looks_like("\n".join(page_header()[5:]))  # the column headings alone
    assert not looks_like("LOCATION: X   STATISTICS REPORT - LONG   PAGE: 1-1\nBP0 READ OPERATIONS QUANTITY")
    assert not looks_like("time,pool,object,page\n0.1,BP0,T1,5\n")


def test_getpages_of_every_function_status_and_access(tmp_path: Path) -> None:
    blocks, rejects = read(write(tmp_path, getpage_report()))
    assert rejects == []
    assert len(blocks) == 1
    tomorrow = "03/15/24"
    assert rows(blocks) == [
        (us(DAY, "10:15:23.104035"), "DB2P", 0, 270, 2, 0, 0, 1, 1, 0),
        (us(DAY, "10:15:23.104036"), "DB2P", 100, 270, 2, 0, 1, 0, 0x1F4, 0),
        (us(DAY, "10:15:23.104037"), "DB2P", 0, 270, 2, 0, 2, 0, 2, 0),
        (us(DAY, "10:15:23.104038"), "DB2P", 0, 270, 2, 1, 0, 0, 2, 0),
        (us(DAY, "10:15:23.104039"), "DB2P", 0, 270, 2, 2, 0, 0, 2, 0),
        (us(DAY, "10:15:24.000000"), "DB2P", 0, 0, 7, 0, 0, 1, 0x10, 3),  # REL: the partition counts
        (us(DAY, "23:59:59.999999"), "DB2P", 0, 270, 2, 0, 0, 1, 0x11, 0),  # ABS: partition 0
        (us(tomorrow, "00:00:00.000001"), "DB2P", 0, 270, 2, 0, 2, 1, 0xFFFFFFFF, 0),  # past midnight
    ]
    assert blocks[0].skipped == {477: 1}
    assert blocks[0].ios == []
    data = (tmp_path / "rectrace.txt").read_bytes()
    assert blocks[0].end_offset == len(data)  # the ACE table closed the last record
    assert blocks[0].end_line == data.count(b"\n")


def io_report() -> list[str]:
    return [
        *page_header(ssid="DB2A"),
        *record("10:15:24.00000000", 6, "READ I/O START", b006(2, 6, 112, 0, 0x40, "S"), ace=2),
        *record("10:15:24.00010000", 6, "READ I/O START", b006(3, 6, 2014, 0, 0x7, "R"), ace=3),
        *record("10:15:24.00050000", 7, "READ I/O STOP", b007(3, 6, 2014, [0x7]), ace=3),
        *record("10:15:24.00123456", 7, "READ I/O STOP", b007(2, 6, 112, [0x40, 0x41, 0x42, 0x43, 0x44]), ace=2),
        *record("10:15:25.00000000", 6, "READ I/O START", b006(2, 6, 112, 0, 0x80, "D"), ace=2),
        *record("10:15:25.00000500", 7, "READ I/O STOP", b007(2, 6, 112, []), ace=2),
        *record("10:15:26.00000000", 7, "READ I/O STOP", b007(9, 6, 112, [0x90]), ace=9),
        *ACE_TABLE,
    ]


def test_read_ios_in_record_order_and_their_pairing(tmp_path: Path) -> None:
    path = write(tmp_path, io_report())
    blocks, rejects = read(path)
    assert rejects == []
    ios = blocks[0].ios
    t = us(DAY, "10:15:24.000000")
    assert ios[0] == IoStart(t, "DB2A", 2, 6, 112, 0, 0x40, "S", f"{path}:{11}")
    assert ios[2] == IoStop(t + 500, "DB2A", 3, 6, 2014, 1, 0, ios[2].where)
    assert [type(e).__name__ for e in ios] == ["IoStart", "IoStart", "IoStop", "IoStop", "IoStart", "IoStop", "IoStop"]
    assert [e.read_type for e in ios if isinstance(e, IoStart)] == ["S", "R", "D"]
    assert [e.pages for e in ios if isinstance(e, IoStop)] == [1, 5, 0, 1]
    pairing = IoPairing()
    done: list[ReadIo | Unpaired | None] = []
    for e in ios:
        if isinstance(e, IoStart):
            pairing.start(e)
        else:
            done.append(pairing.stop(e))
    assert done[0] == ReadIo(t + 100, "DB2A", 0, 6, 2014, 0, 0x7, 1, 400)
    assert done[1] == ReadIo(t, "DB2A", 0, 6, 112, 1, 0x40, 5, 1234)
    assert done[2] is None and pairing.empty_prefetches == 1  # a dynamic prefetch that read nothing
    assert isinstance(done[3], Unpaired) and done[3].stop.ace == 9
    assert pairing.open_starts == 0


def test_007_of_the_54_layout_without_colons(tmp_path: Path) -> None:
    body = ["DBID 6        RETCODE 0     ACE 3", "OBID 9        READ 2", "PAGE NUMBERING: N/A PARTITION NUMBER: 0",
            "PAGE PREFETCHED VIA IO OPERATION:", "X'00000026' X'00000027'"]  # fmt: skip
    blocks, rejects = read(write(tmp_path, [*page_header(), *record("10:00:00.00000000", 7, "READ I/O STOP", body)]))
    assert rejects == []
    assert blocks[0].ios == [IoStop(us(DAY, "10:00:00.0"), "DB2P", 3, 6, 9, 2, 0, blocks[0].ios[0].where)]


def test_bad_records_are_rejected_and_reading_goes_on(tmp_path: Path) -> None:
    no_page = b198()
    no_page[3] = "ACCESS      : RANDOM     ACE :     1"
    lines = [
        *page_header(),
        *record("10:00:00.00000000", 198, "BPOOL PAGE", no_page),
        *record("10:00:01.00000000", 198, "BPOOL PAGE", b198(page="X'0000G001'")),
        *record("10:00:02.00000000", 198, "BPOOL PAGE", b198(function="GET PAGES FAST")),
        *record("10:00:03.00000000", 198, "BPOOL PAGE", b198(dbid="DB2PM")),
        *record("10:00:04.00000000", 198, "BPOOL PAGE", b198(bpid="X'FF'")),
        *record("10:00:05.00000000", 6, "READ I/O START", b006(2, 6, 112, 0, 0x40, "Q")),
        *record("10:00:06.00000000", 198, "BPOOL PAGE", b198(page="X'00000005'")),
        *ACE_TABLE,
    ]
    path = write(tmp_path, lines)
    blocks, rejects = read(path)
    assert [(r.field, r.line) for r in rejects] == [
        ("PAGE", 11),  # missing: named at the record's RECORD TIME line
        ("PAGE", 27),  # bad hex: at its own line
        ("FUNCTION", 35),
        ("DBID", 44),
        ("BPID", 54),
        ("READTYPE", 65),
    ]
    assert rejects[0].reason == "missing" and "hex" in rejects[1].reason and "name" in rejects[3].reason
    assert rejects[0].source == str(path) and rejects[0].raw.startswith(b"SYSADM   SYSADM   TSO         10:00:00")
    assert rows(blocks) == [(us(DAY, "10:00:06.0"), "DB2P", 0, 270, 2, 0, 0, 1, 5, 0)]
    with pytest.raises(TraceFormatError, match="PAGE: missing"):
        list(read_rectrace(path, strict=True))


def test_nothing_recognisable_is_one_format_reject(tmp_path: Path) -> None:
    blocks, rejects = read(write(tmp_path, ["time,pool,object,page", "0.1,BP0,T1,5"]))
    assert sum(len(b.getpages) for b in blocks) == 0
    assert [(r.line, r.field) for r in rejects] == [(1, "format")]
    assert rejects[0].raw == b"time,pool,object,page\n"


def test_a_dump_record_trace_is_refused(tmp_path: Path) -> None:
    lines = [*page_header(level="DUMP"), *record("10:00:00.00000000", 198, "BPOOL PAGE", ["0000  00060002 ..."])]
    blocks, rejects = read(write(tmp_path, lines))
    assert [(r.line, r.field) for r in rejects] == [(2, "format")]
    assert blocks[-1].skipped == {198: 1} and len(blocks[-1].getpages) == 0


def test_a_record_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    head = [*page_header(), *record("10:00:00.00000000", 198, "BPOOL PAGE", b198(page="X'00000001'"))]
    second = record("10:00:01.00000000", 198, "BPOOL PAGE", b198(page="X'00000002'"))
    path = write(tmp_path, [*head, *second[:6]], end="")  # its ACCESS line has no newline yet
    blocks, rejects = read(path)
    assert rejects == []
    assert [r[8] for r in rows(blocks)] == [1]
    data = path.read_bytes()
    end = blocks[-1].end_offset
    assert data[end:].startswith(b"SYSADM   SYSADM   TSO         10:00:01")  # its RECORD TIME line
    assert blocks[-1].end_line == len(head) + 1  # the record's first header line is consumed, it says nothing
    # Still at the end of the file with every line whole, but before its documented last line.
    path.write_bytes(data + b"\n")
    again, _ = read(path, start_offset=end, start_line=blocks[-1].end_line)
    assert rows(again) == [] and again[-1].end_offset == end
    # The writer goes on: a resumed read gets it, and the next one, once each.
    third = record("10:00:02.00000000", 198, "BPOOL PAGE", b198(page="X'00000003'"))
    path.write_bytes(data + ("\n" + "\n".join([*second[6:], *third]) + "\n").encode())
    rest, rejects = read(path, start_offset=end, start_line=blocks[-1].end_line)
    assert rejects == []
    assert rows(rest) == [
        (us(DAY, "10:00:01.0"), "DB2P", 0, 270, 2, 0, 0, 1, 2, 0),  # page context found looking back
        (us(DAY, "10:00:02.0"), "DB2P", 0, 270, 2, 0, 0, 1, 3, 0),  # whole: its PARTITION line is there
    ]
    assert rest[-1].end_offset == path.stat().st_size


def test_resuming_at_a_block_end_gives_exactly_the_rest(tmp_path: Path) -> None:
    lines = [*getpage_report()[:-4], *page_header(page=2), *io_report()[9:]]  # two pages
    path = write(tmp_path, lines)
    whole, _ = read(path)
    blocks, rejects = read(path, block_records=3)
    assert rejects == []
    assert [len(b.getpages) + len(b.ios) + sum(b.skipped.values()) for b in blocks] == [3, 3, 3, 3, 3, 1]
    assert rows(blocks) == rows(whole)
    for i, b in enumerate(blocks[:-1]):
        rest, _ = read(path, start_offset=b.end_offset, start_line=b.end_line)
        assert rows(rest) == rows(blocks[i + 1 :])
        assert [e for r in rest for e in r.ios] == [e for x in blocks[i + 1 :] for e in x.ios]
        assert {k for r in rest for k in r.skipped} == {k for x in blocks[i + 1 :] for k in x.skipped}


def test_two_digit_years_follow_the_hint(tmp_path: Path) -> None:
    lines = [*page_header(day="12/31/99"), *record("10:00:00.00000000", 198, "BPOOL PAGE", b198()), *ACE_TABLE]
    blocks, _ = read(write(tmp_path, lines), year_hint=1998)
    assert rows(blocks)[0][0] == int(datetime(1999, 12, 31, 10, tzinfo=UTC).timestamp()) * 1_000_000
    blocks, _ = read(write(tmp_path, lines))
    assert rows(blocks)[0][0] == int(datetime(2099, 12, 31, 10, tzinfo=UTC).timestamp()) * 1_000_000


def test_a_block_printed_in_the_data_column(tmp_path: Path) -> None:
    """IBM: records are shown "in either the DATA column or the full width of the report page"."""
    body = b198(page="X'0000002A'")
    lines = [
        *page_header(),
        "SYSADM   TSO      DB70F3A9C2E1 'BLANK'         'BLANK'                       'BLANK'",
        f"SYSADM   SYSADM   TSO         10:00:00.00000000    100   1 198 BPOOL PAGE     {body[0]}",
        f"DSNTEP2  'BLANK'              N/P{'':45}{body[1]}",
        *(" " * 78 + b for b in body[2:]),
        *ACE_TABLE,
    ]
    blocks, rejects = read(write(tmp_path, lines))
    assert rejects == []
    assert rows(blocks) == [(us(DAY, "10:00:00.0"), "DB2P", 0, 270, 2, 0, 0, 1, 42, 0)]
