"""SMF 102 and GTF readers against records built here byte by byte from the offsets in
docs/zos-traces.md (not from ingest/zos/layout.py or the writer): every offset below is a literal."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from poolsight.ingest.zos.catalog import Catalog
from poolsight.ingest.zos.source import ZosTraceReader
from poolsight.simulator.trace import TraceBatch, TraceFormatError

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00 UTC in epoch microseconds


def ebc(s: str) -> bytes:
    return s.encode("cp037")


def stck(us: int) -> bytes:
    # Bit 51 is one microsecond; the TOD epoch is 1900-01-01 (2,208,988,800 s before 1970).
    return ((us + 2_208_988_800 * 1_000_000) << 12).to_bytes(8, "big")


def qwhs(ifcid: int, us: int, ssid: str = "DB2A") -> bytes:
    """Product section standard header: QWHSLEN 0, QWHSTYP 2, QWHSIID 4, QWHSNSDA 6, QWHSSSID X'C',
    QWHSSTCK X'10'; 0x50 bytes as DB2 12 writes it."""
    b = bytearray(0x50)
    b[0:2] = (0x50).to_bytes(2, "big")
    b[2] = 1
    b[4:6] = ifcid.to_bytes(2, "big")
    b[6] = 1
    b[0x0C:0x10] = ebc(ssid)
    b[0x10:0x18] = stck(us)
    return bytes(b)


def g198(dbid: int, obid: int, bp: int, fc: str, ps: str, at: str, page: int, part: int | None = None) -> bytes:
    """IFCID 198 data section: DB 0, OB 2, BP 4, FC 5, PS 6, AT 7, PN 8, AC 12 (+ P 16, PT 20)."""
    codes = b"".join(ebc(c) if c else b"\0" for c in (fc, ps, at))
    b = struct.pack(">HHB", dbid, obid, bp) + codes + struct.pack(">II", page, 0x0B00)
    if part is not None:
        b += bytes([0x80, 0, 0, 0]) + struct.pack(">I", part)
    return b


def i006(dbid: int, obid: int, bp: int, first: int, rt: str, ace: int) -> bytes:
    """DB 0, OB 2, BP 4 (F), PN 8 (XL3), F 11, AC 12."""
    return struct.pack(">HHI", dbid, obid, bp) + first.to_bytes(3, "big") + ebc(rt) + struct.pack(">I", ace)


def i007(dbid: int, obid: int, ace: int, pages: int, mm: int = 0) -> bytes:
    """MM 0 (F), DB 4, OB 6, AC 8, NP 12 (H), padded to 16."""
    return struct.pack(">IHHIH", mm, dbid, obid, ace, pages) + b"\0\0"


def smf(ifcid: int, us: int, data: bytes, item_len: int | None = None, count: int = 1, ssid: str = "DB2A") -> bytes:
    """SMF header (RDW 0, type 5 = 102, SID 14, SSI 18; 28 bytes), self-defining section at 28
    (product triplet, data triplet), product section, data section."""
    prod = qwhs(ifcid, us, ssid)
    prod_off, data_off = 28 + 16, 28 + 16 + len(prod)
    rec = bytearray(28)
    rec[5] = 102
    rec[14:18], rec[18:22] = ebc("SYSA"), ebc(ssid)
    rec += struct.pack(">IHH", prod_off, len(prod), 1)
    rec += struct.pack(">IHH", data_off, item_len if item_len is not None else len(data), count)
    rec += prod + data
    rec[0:2] = len(rec).to_bytes(2, "big")
    return bytes(rec)


def gtf(ifcid: int, us: int, data: bytes, item_len: int | None = None) -> bytes:
    """GTF header DSNDQWGT: LEN 0, TIME 6, EID 14 = X'EFB9', DLEN 28, DSCC 30, SSID 32; 40 bytes."""
    prod = qwhs(ifcid, us)
    prod_off, data_off = 40 + 16, 40 + 16 + len(prod)
    rec = bytearray(40)
    rec[4] = 0xFF
    rec[6:14] = stck(us)
    rec[14:16] = b"\xef\xb9"
    rec[32:36] = ebc("DB2A")
    rec += struct.pack(">IHH", prod_off, len(prod), 1)
    rec += struct.pack(">IHH", data_off, item_len if item_len is not None else len(data), 1)
    rec += prod + data
    rec[0:2] = len(rec).to_bytes(2, "big")
    rec[28:30] = (len(rec) - 28).to_bytes(2, "big")
    return bytes(rec)


def blocked(*records: bytes) -> bytes:
    """One VBS block: a BDW (length, 0) before the records."""
    body = b"".join(records)
    return (len(body) + 4).to_bytes(2, "big") + b"\0\0" + body


GETPAGES = [
    # (dbid, obid, bp, fc, ps, at, page) -> expected (function, access, hit)
    ((260, 2, 1, "G", "H", "R", 10), (0, 0, 1)),
    ((260, 2, 1, "G", "M", "S", 11), (0, 1, 0)),
    ((260, 3, 1, "G", "N", "L", 12), (0, 2, 0)),
    ((260, 3, 1, "S", "", "", 12), (1, 0, 0)),
    ((260, 3, 1, "R", "", "N", 12), (2, 0, 0)),
    ((261, 2, 100, "G", "H", "R", 70_000), (0, 0, 1)),
]


def getpage_records(kind: str = "smf") -> list[bytes]:
    make = smf if kind == "smf" else gtf
    return [make(198, T0 + 10 * i, g198(*args)) for i, (args, _) in enumerate(GETPAGES)]


def read(path: Path, fmt: str, catalog: Catalog | None = None, **kw: object) -> tuple[ZosTraceReader, list[TraceBatch]]:
    r = ZosTraceReader(path, fmt, catalog=catalog or Catalog(), **kw)  # type: ignore[arg-type]
    return r, list(r.batches())


def rows(batches: list[TraceBatch]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for b in batches:
        assert b.hit is not None
        for i in range(len(b)):
            out.append(
                (
                    round(float(b.times[i]) * 1e6),
                    str(b.pools[i]),
                    str(b.objects[i]),
                    int(b.pages[i]),
                    int(b.function[i]),
                    int(b.access[i]),
                    int(b.hit[i]),
                )
            )
    return out


def expected(names: dict[tuple[int, int], str] | None = None) -> list[tuple[object, ...]]:
    pools = {1: "DB2A/BP1", 100: "DB2A/BP8K0"}
    out: list[tuple[object, ...]] = []
    for i, ((db, ob, bp, _, _, _, page), codes) in enumerate(GETPAGES):
        name = (names or {}).get((db, ob), f"{db}/{ob}")
        out.append((T0 + 10 * i, pools[bp], name, page, *codes))
    return out


@pytest.mark.parametrize("kind", ["smf", "gtf"])
def test_getpages_of_every_function_status_and_access(tmp_path: Path, kind: str) -> None:
    p = tmp_path / f"t.{kind}"
    p.write_bytes(b"".join(getpage_records(kind)))
    r, batches = read(p, kind)
    assert rows(batches) == expected()
    assert (r.accepted, r.rejected) == (6, 0)


def test_blocks_with_bdws_read_as_without(tmp_path: Path) -> None:
    recs = getpage_records()
    p = tmp_path / "t.smf"
    p.write_bytes(blocked(*recs[:4]) + blocked(*recs[4:]))
    r, batches = read(p, "smf")
    assert rows(batches) == expected()
    assert r.summary.blocks_with_bdw


def test_catalog_names_objects_and_checks_their_pool(tmp_path: Path) -> None:
    cat = tmp_path / "cat.csv"
    # As unloaded: the tables' own column names, CHAR values padded, one object in another pool.
    cat.write_text('DBID,PSID,DBNAME,NAME,BPOOL\n260,2,"APP     ","ORDERS  ",BP1\n261,2,APP2,HIST,BP2\n')
    p = tmp_path / "t.smf"
    p.write_bytes(b"".join(getpage_records()))
    r, batches = read(p, "smf", Catalog.load([cat]))
    assert rows(batches) == expected({(260, 2): "APP.ORDERS", (261, 2): "APP2.HIST"})
    assert r.summary.pool_mismatches == {"APP2.HIST (BP2 in the catalog, BP8K0 in the trace)": 1}


def test_partition_of_the_24_byte_section_names_the_object(tmp_path: Path) -> None:
    p = tmp_path / "t.smf"
    p.write_bytes(
        smf(198, T0, g198(260, 2, 1, "G", "H", "R", 5, part=3)) + smf(198, T0 + 1, g198(260, 2, 1, "G", "H", "R", 6))
    )
    _, batches = read(p, "smf")
    assert [o for _, _, o, *_ in rows(batches)] == ["260/2:P3", "260/2"]


def test_several_items_in_one_data_section(tmp_path: Path) -> None:
    items = g198(260, 2, 1, "G", "H", "R", 1) + g198(260, 2, 1, "G", "M", "R", 2)
    p = tmp_path / "t.smf"
    p.write_bytes(smf(198, T0, items, item_len=16, count=2))
    _, batches = read(p, "smf")
    assert [(pg, hit) for _, _, _, pg, _, _, hit in rows(batches)] == [(1, 1), (2, 0)]


def test_spanned_smf_and_split_gtf_records_are_joined(tmp_path: Path) -> None:
    rec = smf(198, T0, g198(260, 2, 1, "G", "H", "R", 42))
    body = rec[4:]  # a spanned record: each segment its own RDW (byte 2: 1 first, 3 middle, 2 last)
    parts = [body[:50], body[50:100], body[100:]]
    segs = b"".join(
        (len(x) + 4).to_bytes(2, "big") + bytes([code, 0]) + x for x, code in zip(parts, (1, 3, 2), strict=True)
    )
    p = tmp_path / "t.smf"
    p.write_bytes(getpage_records()[0] + segs + getpage_records()[1])
    _, batches = read(p, "smf")
    assert [pg for _, _, _, pg, *_ in rows(batches)] == [10, 42, 11]

    g = gtf(198, T0, g198(260, 2, 1, "G", "M", "S", 43))
    head, data = g[:40], g[40:]
    split = b""
    for piece, code in ((data[:60], 1), (data[60:], 2)):  # QWGTDSCC: 1 first, 2 last
        h = bytearray(head)
        h[0:2] = (40 + len(piece)).to_bytes(2, "big")
        h[28:30] = (12 + len(piece)).to_bytes(2, "big")
        h[30] = code
        split += bytes(h) + piece
    p = tmp_path / "t.gtf"
    p.write_bytes(split + gtf(198, T0 + 5, g198(260, 2, 1, "G", "H", "R", 44)))
    _, batches = read(p, "gtf")
    assert [(pg, acc, hit) for _, _, _, pg, _, acc, hit in rows(batches)] == [(43, 1, 0), (44, 0, 1)]


def test_read_ios_are_006_paired_with_007(tmp_path: Path) -> None:
    recs = [
        smf(6, T0, i006(260, 2, 1, 100, "R", 0xA1)),
        smf(6, T0 + 50, i006(260, 2, 1, 200, "S", 0xA2)),
        smf(198, T0 + 60, g198(260, 2, 1, "G", "M", "R", 100)),
        smf(7, T0 + 300, i007(260, 2, 0xA2, 32)),  # the prefetch ends first
        smf(7, T0 + 450, i007(260, 2, 0xA1, 1)),
        smf(6, T0 + 500, i006(260, 2, 1, 300, "D", 0xA3)),
        smf(7, T0 + 700, i007(260, 2, 0xA3, 0)),  # a prefetch that read nothing: no I/O
        smf(7, T0 + 800, i007(260, 2, 0xA9, 1)),  # no 006 for it
    ]
    p = tmp_path / "t.smf"
    p.write_bytes(b"".join(recs))
    r, batches = read(p, "smf")
    io = batches[0].io
    assert io is not None
    got = sorted(
        zip(
            np.round(io.times * 1e6).astype(int).tolist(),
            io.io_type.tolist(),
            io.first_page.tolist(),
            io.pages.tolist(),
            io.elapsed_us.tolist(),
            strict=True,
        )
    )
    assert got == [(T0, 0, 100, 1, 450), (T0 + 50, 1, 200, 32, 250)]
    assert list(io.pool_names.values()) == ["DB2A/BP1", "DB2A/BP1"]
    assert r.summary.empty_prefetches == 1
    assert r.rejected == 1
    assert (r.errors[0].field, r.errors[0].line) == ("IFCID 007", sum(len(x) for x in recs[:7]))


def test_other_ifcids_and_record_types_are_counted_not_read(tmp_path: Path) -> None:
    other = bytearray(getpage_records()[0])
    other[5] = 30  # an SMF type 30 record in the same data set
    p = tmp_path / "t.smf"
    p.write_bytes(smf(3, T0, b"\0" * 40) + bytes(other) + getpage_records()[1])
    r, batches = read(p, "smf")
    assert len(rows(batches)) == 1
    assert (r.summary.skipped_ifcids, r.summary.other_records, r.rejected) == ({3: 1}, {30: 1}, 0)


def corrupt(rec: bytes, at: int, value: bytes) -> bytes:
    b = bytearray(rec)
    b[at : at + len(value)] = value
    return bytes(b)


@pytest.mark.parametrize(
    ("change", "fld"),
    [
        (lambda r: corrupt(r, 28, (5000).to_bytes(4, "big")), "SDS"),  # product section offset outside
        (lambda r: corrupt(r, 44 + 2, b"\x02"), "QWHSTYP"),
        (lambda r: corrupt(r, 44 + 0x50 + 4, b"\x4d"), "QW0198BP"),  # pool id 77
        (lambda r: corrupt(r, 44 + 0x50 + 5, ebc("X")), "QW0198FC"),
        (lambda r: corrupt(r, 44 + 0x50 + 6, ebc("Z")), "QW0198PS"),
        (lambda r: corrupt(r, 36 + 4, (20).to_bytes(2, "big")), "QW0198"),  # section length 20
        (lambda r: corrupt(r, 36, (4000).to_bytes(4, "big")), "SDS"),  # data section outside
    ],
)
def test_a_malformed_record_is_named_and_the_rest_read(tmp_path: Path, change: object, fld: str) -> None:
    recs = getpage_records()
    bad = change(recs[1])  # type: ignore[operator]
    p = tmp_path / "t.smf"
    p.write_bytes(recs[0] + bad + recs[2])
    r, batches = read(p, "smf")
    assert [pg for _, _, _, pg, *_ in rows(batches)] == [10, 12]
    assert [(e.field, e.line, e.unit) for e in r.errors] == [(fld, len(recs[0]), "byte")]
    assert r.errors[0].raw == bad
    assert f"t.smf:byte {len(recs[0])}: {fld}:" in str(r.errors[0])


def test_a_truncated_last_record_and_a_broken_length(tmp_path: Path) -> None:
    recs = getpage_records()
    p = tmp_path / "t.smf"
    p.write_bytes(recs[0] + recs[1][:50])
    r, batches = read(p, "smf")
    assert len(rows(batches)) == 1 and [(e.field, e.line) for e in r.errors] == [("RDW", len(recs[0]))]
    r, _ = read(p, "smf", complete_lines_only=True)  # a growing file: the rest is awaited, not rejected
    assert (r.rejected, r.end_offset) == (0, len(recs[0]))
    p.write_bytes(recs[0] + corrupt(recs[1], 0, b"\x00\x05") + recs[2])  # a length that cannot be followed
    r, batches = read(p, "smf")
    assert len(rows(batches)) == 1
    assert (r.errors[0].field, r.errors[0].line) == ("RDW", len(recs[0]))
    assert "cannot be framed" in r.errors[0].reason


def test_resuming_at_a_block_end_reads_exactly_the_rest(tmp_path: Path) -> None:
    recs = getpage_records()
    p = tmp_path / "t.smf"
    p.write_bytes(b"".join(recs))
    first = len(recs[0]) + len(recs[1])
    r, batches = read(p, "smf", start_offset=first, start_line=2)
    assert rows(batches) == expected()[2:]
    assert (r.end_offset, r.end_line) == (p.stat().st_size, 6)


def test_not_a_trace_is_refused_with_the_file_and_field(tmp_path: Path) -> None:
    p = tmp_path / "x.smf"
    p.write_bytes(b"time,pool,object,page\n1,BP1,A,1\n")
    with pytest.raises(TraceFormatError, match=r"x\.smf:byte 0: RDW: not an SMF type 102 or DB2 GTF record"):
        read(p, "smf")


def test_catalog_errors_name_file_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "cat.csv"
    bad.write_text("DBID,OBID,DBNAME\n1,2,A\n")
    with pytest.raises(TraceFormatError, match=r"cat\.csv:1: SPACE: no column SPACE"):
        Catalog.load([bad])
    bad.write_text("DBID,OBID,DBNAME,SPACE\n1,x,A,B\n")
    with pytest.raises(TraceFormatError, match=r"cat\.csv:2: DBID/OBID: not integers"):
        Catalog.load([bad])


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "poolsight.cli", *args], capture_output=True, text=True, timeout=300)


def test_the_same_workload_as_csv_smf_and_gtf_simulates_identically(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    g = run("generate", "mixed", "--output", str(out), "--getpages", "60000", "--trace-format", "csv,smf,gtf")
    assert g.returncode == 0, g.stderr
    docs = {}
    for fmt in ("csv", "smf", "gtf"):
        js = tmp_path / f"{fmt}.json"
        r = run(
            "simulate", str(out / f"trace.{fmt}"), "--catalog", str(out / "catalog.csv"), "--sync-io-ms", "1",
            "--json", str(js),
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        docs[fmt] = json.loads(js.read_text())
    assert docs["smf"]["pools"] == docs["csv"]["pools"] == docs["gtf"]["pools"]
    assert docs["smf"]["input"]["accepted_rows"] == docs["csv"]["input"]["accepted_rows"]
    # The generator's own read I/Os (io.jsonl) are what the 006/007 pairs give back.
    reads = [json.loads(x) for x in (out / "io.jsonl").read_text().splitlines()]
    sync = [x["elapsed_us"] for x in reads if x["kind"] == "read" and x["io_type"] == 0]
    for fmt in ("smf", "gtf"):
        assert docs[fmt]["input"]["measured_sync_reads"] == len(sync)
        assert docs[fmt]["input"]["measured_sync_io_ms"] == pytest.approx(sum(sync) / len(sync) / 1000)


def test_simulate_refuses_a_file_it_cannot_read(tmp_path: Path) -> None:
    p = tmp_path / "junk.smf"
    p.write_bytes(b"\x00\x10\x00\x00" + b"\x00" * 12)
    r = run("simulate", str(p), "--format", "smf")
    assert r.returncode == 2
    assert "junk.smf:byte 0: RDW" in r.stderr
