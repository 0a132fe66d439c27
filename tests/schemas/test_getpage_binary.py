"""The compiled GetpageBatch decoder against today's path (fastavro + GetpageBatch.from_record):
the same batch from every body, a DecodeError naming the field and byte for every malformed one,
and the kernel only for writer schemas of the v1 layout. No registry: writer schemas are given
to the decoder directly (AvroDecoder.remember)."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import numpy as np
import pytest

from poolsight import schemas
from poolsight.schemas import getpage_binary
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import WIRE, AvroDecoder, DecodeError, UnusableBatch

CURRENT, RELEASED = 1, 2
I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)


def released_text() -> str:
    return (schemas.RELEASED_DIR / "getpage_batch.v1.avsc").read_text()


@pytest.fixture
def decoder() -> AvroDecoder:
    d = AvroDecoder("http://127.0.0.1:9", patience=0)  # never asked: every id is remembered
    d.remember(CURRENT, schemas.text("getpage_batch"))
    d.remember(RELEASED, released_text())
    return d


# ------------------------------------------------------------ records and encoders


def random_record(rng: np.random.Generator, n: int) -> dict[str, Any]:
    names = [f"DB{i}.TS{i}" for i in range(int(rng.integers(1, 5)))] + ["DBÄ.ÎX€", "表"]
    pages = rng.integers(*I64, size=n, dtype=np.int64, endpoint=True)
    pages[: min(n, 4)] = [*I64, 0, -1][: min(n, 4)]
    offsets = rng.integers(*I32, size=n, dtype=np.int64, endpoint=True)
    offsets[: min(n, 2)] = list(I32)[: min(n, 2)]
    partitions = rng.integers(*I32, size=n, dtype=np.int64, endpoint=True)
    return {
        "source": "DSNP/DB2A" if n % 2 else "ＬＵＷ/実例",
        "pool": "BP8K0",
        "sequence": int(rng.integers(*I64, dtype=np.int64)),
        # timestamp-micros: fastavro turns them into datetimes, so within datetime's range.
        "start_time": int(rng.integers(-(10**15), 4 * 10**15)),
        "end_time": int(rng.integers(-(10**15), 4 * 10**15)),
        "object_names": names,
        "time_offset": offsets.tolist(),
        "object": rng.integers(0, len(names), size=n).tolist(),
        "partition": partitions.tolist() if rng.random() < 0.5 else None,
        "page": pages.tolist(),
        "access": rng.integers(0, 3, size=n, dtype=np.uint8).tobytes(),
        "function": rng.integers(0, 3, size=n, dtype=np.uint8).tobytes(),
        "hit": rng.integers(0, 2, size=n, dtype=np.uint8).tobytes() if rng.random() < 0.5 else None,
    }


def framed(rec: dict[str, Any], schema_id: int = CURRENT, schema: Any = None) -> bytes:
    buf = io.BytesIO()
    buf.write(WIRE.pack(0, schema_id))
    fastavro.schemaless_writer(buf, schema or schemas.parsed("getpage_batch"), rec)
    return buf.getvalue()


def zigzag(v: int) -> bytes:
    z = ((v << 1) ^ (v >> 63)) & (2**64 - 1)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def blob(b: bytes) -> bytes:
    return zigzag(len(b)) + b


def blocks(items: list[bytes], rng: np.random.Generator) -> bytes:
    """An array in blocks of random sizes, most with a negative count and their byte size."""
    out, i = bytearray(), 0
    while i < len(items):
        k = int(rng.integers(1, 9))
        chunk = b"".join(items[i : i + k])
        n = len(items[i : i + k])
        out += zigzag(-n) + zigzag(len(chunk)) + chunk if rng.random() < 0.7 else zigzag(n) + chunk
        i += k
    return bytes(out + zigzag(0))


def hand_body(rec: dict[str, Any], rng: np.random.Generator) -> bytes:
    """The body as a writer that blocks its arrays (Java's does) would write it."""

    def ints(xs: list[int]) -> bytes:
        return blocks([zigzag(x) for x in xs], rng)

    part = rec["partition"]
    return b"".join(
        [
            blob(rec["source"].encode()),
            blob(rec["pool"].encode()),
            zigzag(rec["sequence"]),
            zigzag(rec["start_time"]),
            zigzag(rec["end_time"]),
            blocks([blob(s.encode()) for s in rec["object_names"]], rng),
            ints(rec["time_offset"]),
            ints(rec["object"]),
            zigzag(0) if part is None else zigzag(1) + ints(part),
            ints(rec["page"]),
            blob(rec["access"]),
            blob(rec["function"]),
            zigzag(0) if rec["hit"] is None else zigzag(1) + blob(rec["hit"]),
        ]
    )


def peer(decoder: AvroDecoder, value: bytes) -> GetpageBatch:
    """Today's path: fastavro with schema resolution, then from_record."""
    _, rec = decoder.decode(value)
    return GetpageBatch.from_record(rec)


def assert_same(got: Any, want: GetpageBatch) -> None:
    assert isinstance(got, GetpageBatch)
    for name in ("source", "pool", "sequence", "start_time", "end_time", "object_names"):
        assert getattr(got, name) == getattr(want, name), name
    for name in ("access", "function", "hit", "getpages"):
        assert getattr(got, name) == getattr(want, name), name
    for name in ("time_offset", "objects", "pages", "partitions"):
        a, b = getattr(got, name), getattr(want, name)
        if b is None:
            assert a is None, name
            continue
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.writeable, name
        assert np.array_equal(a, b), name


# ------------------------------------------------------------ same batches


SIZES = [0, 1, 2, 3, 5, 17, 128, 1000, 4096, 16_384]


@pytest.mark.parametrize("n", SIZES)
def test_fastavro_bodies_decode_as_fastavro_and_from_record_do(decoder: AvroDecoder, n: int) -> None:
    rng = np.random.default_rng(n)
    for trial in range(3):
        rec = random_record(rng, n)
        for sid in (CURRENT, RELEASED):
            value = framed(rec, sid)
            full, got = decoder.read(value)
            assert full == getpage_binary.FULL_NAME
            assert_same(got, peer(decoder, value))
            assert isinstance(got, GetpageBatch)
            assert got.sequence == rec["sequence"] and got.start_time == rec["start_time"], trial


@pytest.mark.parametrize("n", SIZES[:8])
def test_hand_written_blocks_with_negative_counts_decode_alike(decoder: AvroDecoder, n: int) -> None:
    rng = np.random.default_rng(1000 + n)
    for _ in range(5):
        rec = random_record(rng, n)
        value = WIRE.pack(0, CURRENT) + hand_body(rec, rng)
        assert_same(decoder.read(value)[1], peer(decoder, value))
        assert_same(getpage_binary.decode_body(value, 5), peer(decoder, value))


def test_other_records_come_back_as_dicts(decoder: AvroDecoder) -> None:
    decoder.remember(7, schemas.text("dead_letter"))
    rec = {
        "source": "s",
        "position": "p",
        "field": None,
        "reason": "r",
        "raw": b"x",
        "detected_at": 5,
        "collector": "c",
    }
    full, got = decoder.read(framed(rec, 7, schemas.parsed("dead_letter")))
    assert full == "poolsight.v1.DeadLetter" and isinstance(got, dict) and got["reason"] == "r"


# ------------------------------------------------------------ malformed bodies


def small_record() -> dict[str, Any]:
    return {
        "source": "DB2P",
        "pool": "BP0",
        "sequence": 3,
        "start_time": 1_700_000_000_000_000,
        "end_time": 1_700_000_000_000_900,
        "object_names": ["A.B", "C.D"],
        "time_offset": [0, 450, 900],
        "object": [0, 1, 1],
        "partition": [0, 0, 2],
        "page": [10, 2**40, -5],
        "access": b"\x00\x01\x02",
        "function": b"\x00\x00\x01",
        "hit": b"\x01\x00\x01",
    }


def test_every_truncation_is_a_decode_error_naming_the_field_and_byte(decoder: AvroDecoder) -> None:
    value = framed(small_record())
    assert_same(decoder.read(value)[1], peer(decoder, value))
    for cut in range(5, len(value)):
        with pytest.raises(
            DecodeError, match=r"undecodable poolsight\.v1\.GetpageBatch body: field \w+: .* at byte \d+"
        ):
            decoder.read(value[:cut])


def body_with(**fields: bytes) -> bytes:
    """The small record's framed body with some fields' encodings replaced by raw bytes."""
    rec = small_record()
    parts = {
        "source": blob(rec["source"].encode()),
        "pool": blob(rec["pool"].encode()),
        "sequence": zigzag(rec["sequence"]),
        "start_time": zigzag(rec["start_time"]),
        "end_time": zigzag(rec["end_time"]),
        "object_names": zigzag(2) + b"".join(blob(s.encode()) for s in rec["object_names"]) + zigzag(0),
        "time_offset": zigzag(3) + b"".join(zigzag(v) for v in rec["time_offset"]) + zigzag(0),
        "object": zigzag(3) + b"".join(zigzag(v) for v in rec["object"]) + zigzag(0),
        "partition": zigzag(1) + zigzag(3) + b"".join(zigzag(v) for v in rec["partition"]) + zigzag(0),
        "page": zigzag(3) + b"".join(zigzag(v) for v in rec["page"]) + zigzag(0),
        "access": blob(rec["access"]),
        "function": blob(rec["function"]),
        "hit": zigzag(1) + blob(rec["hit"]),
    }
    parts.update(fields)
    return WIRE.pack(0, CURRENT) + b"".join(parts.values())


def ints3(*xs: int) -> bytes:
    """One block of ints, then the end."""
    return zigzag(len(xs)) + b"".join(zigzag(v) for v in xs) + zigzag(0)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"partition": zigzag(2)}, r"field partition: union branch 2, not 0 \(null\) or 1 at byte \d+"),
        ({"hit": zigzag(-1)}, r"field hit: union branch -1"),
        ({"page": zigzag(3) + b"\xff" * 11}, r"field page: varint longer than 10 bytes at byte \d+"),
        ({"page": zigzag(3) + b"\xff" * 9 + b"\x7f"}, r"field page: varint overflows 64 bits"),
        (
            {"page": zigzag(1) + b"\x80\x80", "access": b"", "function": b"", "hit": b""},
            r"field page: varint runs past the end at byte \d+",
        ),
        ({"time_offset": ints3(0, 2**31, 1)}, r"field time_offset: int 2147483648 outside the 32-bit range"),
        ({"object": ints3(0, -(2**31) - 1, 1)}, r"field object: int -2147483649 outside the 32-bit range"),
        ({"partition": zigzag(1) + ints3(0, 0, 2**40)}, r"field partition: int 1099511627776 outside"),
        ({"source": blob(b"DB2\xff")}, r"field source: invalid UTF-8"),
        ({"object_names": zigzag(1) + blob(b"\xc3(") + zigzag(0)}, r"field object_names: invalid UTF-8"),
        ({"access": zigzag(-1)}, r"field access: negative length -1 at byte \d+"),
        ({"pool": zigzag(-3)}, r"field pool: negative length -3"),
        ({"access": zigzag(10**6)}, r"field access: length 1000000 runs past the end"),
        ({"page": zigzag(-3) + zigzag(-2)}, r"field page: negative block size -2"),
        ({"page": zigzag(2**60)}, r"field page: block of \d+ items runs past the end"),
        ({"hit": zigzag(0) + b"\x00\x01"}, r"after field hit: 2 trailing bytes at byte \d+"),
    ],
)
def test_malformed_bodies_are_decode_errors_naming_the_field(
    decoder: AvroDecoder, fields: dict[str, bytes], message: str
) -> None:
    with pytest.raises(DecodeError, match=message):
        decoder.read(body_with(**fields))


def test_the_byte_named_is_where_the_bad_value_starts(decoder: AvroDecoder) -> None:
    good = body_with()
    bad = body_with(partition=zigzag(2))
    at = next(i for i, (a, b) in enumerate(zip(good, bad, strict=False)) if a != b)
    with pytest.raises(DecodeError, match=f"at byte {at}$"):
        decoder.read(bad)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"page": ints3(1, 2)}, "field page: 2 entries for 3 events"),
        ({"access": blob(b"\x00")}, "field access: 1 entries for 3 events"),
        ({"hit": zigzag(1) + blob(b"")}, "field hit: 0 entries for 3 events"),
        ({"partition": zigzag(1) + ints3(1, 2, 3, 4)}, "field partition: 4 entries for 3 events"),
        ({"object": ints3(0, 2, 1)}, r"field object: index outside object_names \(2 names\)"),
        ({"object": ints3(0, -1, 1)}, r"field object: index outside object_names \(2 names\)"),
    ],
)
def test_columns_that_disagree_are_unusable_as_from_record_says(
    decoder: AvroDecoder, fields: dict[str, bytes], message: str
) -> None:
    value = body_with(**fields)
    with pytest.raises(UnusableBatch, match=message) as kernel:
        decoder.read(value)
    with pytest.raises(ValueError, match=message) as today:
        peer(decoder, value)
    assert str(kernel.value) == str(today.value)


def test_mutated_bodies_never_crash(decoder: AvroDecoder) -> None:
    rng = np.random.default_rng(9)
    value = bytearray(framed(small_record()))
    for _ in range(3000):
        bad = bytearray(value)
        for _ in range(int(rng.integers(1, 4))):
            bad[int(rng.integers(5, len(bad)))] = int(rng.integers(0, 256))
        try:
            decoder.read(bytes(bad))
        except (DecodeError, UnusableBatch):
            pass


# ------------------------------------------------------------ which writer schemas the kernel reads


def modified(change: str) -> dict[str, Any]:
    s: dict[str, Any] = json.loads(schemas.text("getpage_batch"))
    fields = s["fields"]
    if change == "docs":
        s["doc"] = "other words"
        for f in fields:
            f["doc"] = f"{f['name']}, said differently"
    elif change == "v2":  # a field added at the end, with its default
        fields.append({"name": "tenant", "type": "string", "default": ""})
    elif change == "reordered":
        i, j = (next(k for k, f in enumerate(fields) if f["name"] == n) for n in ("access", "function"))
        fields[i], fields[j] = fields[j], fields[i]
    elif change == "narrow":  # pages written as ints, read as longs: resolvable, another layout
        next(f for f in fields if f["name"] == "page")["type"]["items"] = "int"
    return s


def test_the_layout_check_accepts_v1_released_current_and_new_docs() -> None:
    assert getpage_binary.kernel_layout(json.loads(schemas.text("getpage_batch")))
    assert getpage_binary.kernel_layout(json.loads(released_text()))
    assert getpage_binary.kernel_layout(modified("docs"))
    for change in ("v2", "reordered", "narrow"):
        assert not getpage_binary.kernel_layout(modified(change)), change


@pytest.mark.parametrize("change", ["docs", "v2", "reordered", "narrow"])
def test_other_layouts_fall_back_to_fastavro_and_decode_alike(
    decoder: AvroDecoder, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    schema = modified(change)
    decoder.remember(40, json.dumps(schema))
    rng = np.random.default_rng(40)
    rec = {**random_record(rng, 300), "tenant": "t1"}
    rec["page"] = [p % 2**31 for p in rec["page"]]  # fits the narrow layout's ints too
    value = framed(rec, 40, fastavro.parse_schema(schema))
    want = GetpageBatch.from_record({k: v for k, v in rec.items() if k != "tenant"})
    if change != "docs":  # the kernel must not be asked
        monkeypatch.setattr(getpage_binary, "decode_body", lambda *_: pytest.fail("kernel used"))
    full, got = decoder.read(value)
    assert full == getpage_binary.FULL_NAME
    assert_same(got, want)


def test_a_fallback_error_is_a_decode_error_with_its_position(decoder: AvroDecoder) -> None:
    decoder.remember(41, json.dumps(modified("v2")))
    value = framed({**small_record(), "tenant": "x"}, 41, fastavro.parse_schema(modified("v2")))
    with pytest.raises(DecodeError, match=r"undecodable poolsight\.v1\.GetpageBatch body: .*at byte \d+"):
        decoder.read(value[:-3])
