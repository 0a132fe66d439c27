"""The compiled GetpageBatch encoder against fastavro, an independent writer: the same bytes for
every batch (empty ones, extreme values, unicode, partition and hit null or present), a
ValueError naming the field for an int out of range, and the producers' path (AvroEncoder,
AvroProducer) using it only while the current schema has the v1 layout. No registry, no Kafka."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import numpy as np
import pytest

from poolsight import schemas
from poolsight.infra.kafka_access import KafkaAccess
from poolsight.ingest.batching import make_batch
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.names import EVENT_TIME_HEADER, SCHEMA_TOPICS
from poolsight.schemas import getpage_binary
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import WIRE, AvroEncoder, event_time_ms
from tests.schemas.test_getpage_binary import I32, I64, SIZES, assert_same, random_record

SCHEMA_ID = 7


def fastavro_body(b: GetpageBatch) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schemas.parsed("getpage_batch"), b.record())
    return buf.getvalue()


def random_batch(rng: np.random.Generator, n: int) -> GetpageBatch:
    """test_getpage_binary's random record (int32/int64 extremes, unicode names) as a batch;
    the extremes of sequence and times too, which the decoder's tests keep datetime-sized."""
    rec = random_record(rng, n)
    for name in ("sequence", "start_time", "end_time"):
        rec[name] = int(rng.choice([*I64, 0, -1, int(rng.integers(*I64, dtype=np.int64))]))
    return GetpageBatch.from_record(rec)


@pytest.mark.parametrize("n", SIZES)
def test_the_kernel_writes_fastavros_bytes(n: int) -> None:
    rng = np.random.default_rng(500 + n)
    seen = set()
    for _ in range(8):
        b = random_batch(rng, n)
        seen.add((b.partitions is None, b.hit is None))
        body = getpage_binary.encode_body(b)
        assert body == fastavro_body(b)
        assert_same(getpage_binary.decode_body(body), b)
    if n:
        assert len(seen) > 1  # partition and hit both null and present across the trials


def test_every_null_and_present_combination_and_an_empty_progress_mark() -> None:
    rng = np.random.default_rng(3)
    for n in (0, 1, 9):
        base = random_batch(rng, n)
        for partitions in (None, rng.integers(*I32, size=n, endpoint=True)):
            for hit in (None, bytes(n), b"\x01" * n):
                b = GetpageBatch(**{**base.__dict__, "partitions": partitions, "hit": hit})
                assert getpage_binary.encode_body(b) == fastavro_body(b)
    empty = GetpageBatch("DB2P", "BP0", 0, 5, 5, [], *(np.zeros(0, dtype=np.int64),) * 3, b"", b"", None, 0)
    assert getpage_binary.encode_body(empty) == fastavro_body(empty)


def test_the_header_comes_first_and_other_int_dtypes_are_taken() -> None:
    b = random_batch(np.random.default_rng(4), 50)
    header = WIRE.pack(0, SCHEMA_ID)
    assert getpage_binary.encode_body(b, header) == header + fastavro_body(b)
    narrow = GetpageBatch(
        **{
            **b.__dict__,
            "time_offset": b.time_offset.astype(np.int32),
            "objects": b.objects.astype(np.uint8),
            "pages": b.pages[::-1].copy()[::-1],  # a reversed view: not contiguous
        }
    )
    assert getpage_binary.encode_body(narrow) == fastavro_body(b)


def test_a_float_column_is_refused_not_truncated() -> None:
    b = random_batch(np.random.default_rng(5), 3)
    with pytest.raises(TypeError):
        getpage_binary.encode_body(GetpageBatch(**{**b.__dict__, "time_offset": b.time_offset + 0.5}))


@pytest.mark.parametrize(
    ("field", "attr", "value"),
    [
        ("time_offset", "time_offset", 2**31),
        ("time_offset", "time_offset", -(2**31) - 1),
        ("object", "objects", 2**31),
        ("object", "objects", -(2**63)),
        ("partition", "partitions", 2**40),
        ("partition", "partitions", -(2**31) - 1),
    ],
)
def test_ints_out_of_range_are_value_errors_naming_the_field(field: str, attr: str, value: int) -> None:
    b = random_batch(np.random.default_rng(6), 5)
    b.partitions = np.zeros(5, dtype=np.int64)
    col = getattr(b, attr).copy()
    col[3] = value
    setattr(b, attr, col)
    with pytest.raises(ValueError, match=rf"^field {field}: value {value} at index 3 outside the Avro int"):
        getpage_binary.encode_body(b)


# ------------------------------------------------------------ the producers' path


@pytest.fixture
def encoder(monkeypatch: pytest.MonkeyPatch) -> AvroEncoder:
    enc = AvroEncoder("http://127.0.0.1:9", patience=0)  # never asked: the id is given
    monkeypatch.setattr(enc, "schema_id", lambda _name: SCHEMA_ID)
    return enc


def test_encode_batch_frames_what_encode_frames(encoder: AvroEncoder) -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 300):
        b = random_batch(rng, n)
        assert encoder.encode_batch(b) == encoder.encode("getpage_batch", b.record())


def test_fastavro_writes_when_the_kernel_is_off_or_the_schema_is_not_v1(
    encoder: AvroEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = random_batch(np.random.default_rng(8), 20)
    want = encoder.encode("getpage_batch", b.record())
    monkeypatch.setattr(getpage_binary, "encode_body", lambda *_: pytest.fail("kernel used"))
    encoder.kernel = False
    assert encoder.encode_batch(b) == want
    encoder.kernel = True
    monkeypatch.setattr(getpage_binary, "current_kernel_layout", lambda: False)
    assert encoder.encode_batch(b) == want


class FakeKafka:
    def __init__(self) -> None:
        self.produced: list[tuple[str, dict[str, Any]]] = []

    def produce(self, topic: str, **kw: Any) -> None:
        self.produced.append((topic, kw))

    def poll(self, _timeout: float) -> int:
        return 0


def test_send_batch_sends_what_send_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Value, key, event-time header and metrics as `send("getpage_batch", key, record())` gave them."""
    n = 10
    b = make_batch(
        "S",
        "BP1",
        4,
        1.7e9 + np.arange(n) / 1e3,
        np.zeros(n, dtype=np.uint32),
        np.arange(n, dtype=np.uint64),
        np.zeros(n, dtype=np.uint8),
        np.array([0, 1] * 5, dtype=np.uint8),
        names=["DB.TS"],
    )
    runs = []
    for path in ("send", "send_batch"):
        p = AvroProducer(KafkaAccess("127.0.0.1:1"), "http://127.0.0.1:9")
        fake = FakeKafka()
        monkeypatch.setattr(p, "_producer", fake)
        monkeypatch.setattr(p.encoder, "schema_id", lambda _name: SCHEMA_ID)
        if path == "send":
            p.send("getpage_batch", b.key, b.record(), getpages=b.getpages)
        else:
            p.send_batch(b)
        produced = [(t, {k: v for k, v in kw.items() if k != "on_delivery"}) for t, kw in fake.produced]
        runs.append((produced, p.metrics.records, p.metrics.getpages, p.metrics.bytes))
    assert runs[0] == runs[1]
    topic, kw = runs[1][0][0]
    assert kw["headers"] == [(EVENT_TIME_HEADER, str(event_time_ms(b.record())).encode())]
    assert topic == SCHEMA_TOPICS["getpage_batch"].name and runs[1][2] == 5 and kw["key"] == b"S|BP1"
