"""Avro records to and from Kafka, in the Confluent wire format, against the registry.

Encoding is fastavro's (schemaless writer) behind the wire-format header
(magic byte 0, 4-byte schema id); schemas are registered once per subject and
cached. Topics that carry one record type use the subject `<topic>-value`;
topics that carry several use `<topic>-<record full name>` (topic record name
strategy), so each type evolves on its own.
"""

from __future__ import annotations

import io
import json
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import fastavro
from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from poolsight import schemas
from poolsight.names import EVENT_TIME_HEADER, SCHEMA_TOPICS

if TYPE_CHECKING:
    from poolsight.ingest.batching import Batch

WIRE = struct.Struct(">bI")
MAX_RAW = 64 * 1024


def subject_for(schema_name: str) -> str:
    topic = SCHEMA_TOPICS[schema_name].name
    shared = sum(1 for t in SCHEMA_TOPICS.values() if t.name == topic) > 1
    if not shared:
        return f"{topic}-value"
    full = json.loads(schemas.text(schema_name))
    return f"{topic}-{full['namespace']}.{full['name']}"


EVENT_TIME_FIELDS = ("end_time", "interval_end", "event_time", "start_time", "detected_at")


def event_time_ms(record: dict[str, Any]) -> int | None:
    """The record's event time (the latest it covers), epoch ms, from its first time field."""
    for name in EVENT_TIME_FIELDS:
        v = record.get(name)
        if v is None:
            continue
        if isinstance(v, int):
            return v // 1000
        return int(v.timestamp() * 1000)
    return None


def registry_client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "timeout": 30})


@dataclass
class Metrics:
    records: dict[str, int] = field(default_factory=dict)
    getpages: int = 0
    bytes: int = 0
    delivery_errors: int = 0
    last_error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": dict(self.records),
            "getpages": self.getpages,
            "bytes": self.bytes,
            "delivery_errors": self.delivery_errors,
            "last_error": self.last_error,
        }


class AvroEncoder:
    """Records to Confluent-framed Avro; schemas registered once per subject and cached."""

    def __init__(self, registry_url: str) -> None:
        self._registry = registry_client(registry_url)
        self._registry_url = registry_url
        self._ids: dict[str, int] = {}

    def schema_id(self, schema_name: str) -> int:
        if schema_name not in self._ids:
            subject = subject_for(schema_name)
            try:
                self._ids[schema_name] = self._registry.register_schema(
                    subject, Schema(schemas.text(schema_name), "AVRO")
                )
            except Exception as exc:  # name the registry and subject: the client's own error does not
                raise RuntimeError(
                    f"registry {self._registry_url}: registering {subject}: {type(exc).__name__}: {exc}"
                ) from exc
        return self._ids[schema_name]

    def encode(self, schema_name: str, record: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        buf.write(WIRE.pack(0, self.schema_id(schema_name)))
        fastavro.schemaless_writer(buf, schemas.parsed(schema_name), record)
        return buf.getvalue()


class AvroProducer:
    """Idempotent (acks=all) producer of poolsight records; keys keep a pool's batches in order."""

    def __init__(
        self,
        bootstrap: str,
        registry_url: str,
        *,
        linger_ms: int = 20,
        batch_bytes: int = 1 << 20,
        compression: str = "lz4",
        client_id: str = "poolsight",
    ) -> None:
        self.encoder = AvroEncoder(registry_url)
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": client_id,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": linger_ms,
                "batch.size": batch_bytes,
                "compression.type": compression,
                "message.max.bytes": 8 * 1024 * 1024,
                "queue.buffering.max.kbytes": 512 * 1024,
            }
        )
        self.metrics = Metrics()

    def encode(self, schema_name: str, record: dict[str, Any]) -> bytes:
        return self.encoder.encode(schema_name, record)

    def _delivered(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            self.metrics.delivery_errors += 1
            self.metrics.last_error = str(err)

    def send(self, schema_name: str, key: str, record: dict[str, Any], *, getpages: int = 0) -> None:
        self.send_encoded(schema_name, key, self.encode(schema_name, record), event_time_ms(record), getpages=getpages)

    def send_encoded(self, schema_name: str, key: str, value: bytes, et: int | None, *, getpages: int = 0) -> None:
        """A record encoded by `encode` (here or in another process); et: its event time, epoch ms."""
        topic = SCHEMA_TOPICS[schema_name].name
        headers: list[tuple[str, str | bytes | None]] | None = (
            None if et is None else [(EVENT_TIME_HEADER, str(et).encode())]
        )
        while True:
            try:
                self._producer.produce(
                    topic, key=key.encode(), value=value, headers=headers, on_delivery=self._delivered
                )
                break
            except BufferError:  # local queue full: let deliveries drain
                self._producer.poll(0.05)
        self._producer.poll(0)
        self.metrics.records[schema_name] = self.metrics.records.get(schema_name, 0) + 1
        self.metrics.getpages += getpages
        self.metrics.bytes += len(value)

    def send_batch(self, batch: Batch) -> None:
        self.send("getpage_batch", batch.key, batch.record, getpages=batch.getpages)

    def send_batches(self, batches: list[Batch]) -> None:
        for b in batches:
            self.send_batch(b)

    def dead_letter(
        self, source: str, position: str, reason: str, raw: bytes, *, collector: str, field_name: str | None = None
    ) -> None:
        self.send(
            "dead_letter",
            source,
            {
                "source": source,
                "position": position,
                "field": field_name,
                "reason": reason,
                "raw": raw[:MAX_RAW],
                "detected_at": int(time.time() * 1e6),
                "collector": collector,
            },
        )

    def flush(self, timeout: float = 60.0) -> None:
        left = self._producer.flush(timeout)
        if left:
            raise RuntimeError(f"{left} records not delivered within {timeout:.0f} s")
        if self.metrics.delivery_errors:
            raise RuntimeError(f"{self.metrics.delivery_errors} records failed: {self.metrics.last_error}")


class DecodeError(Exception):
    pass


class AvroDecoder:
    """Decodes Confluent-framed Avro with the writer's schema from the registry (cached by id)
    resolved to this version's reader schema."""

    def __init__(self, registry_url: str) -> None:
        self._registry = registry_client(registry_url)
        self._writers: dict[int, tuple[dict[str, Any], str]] = {}
        self._readers: dict[str, dict[str, Any]] = {}
        for name in schemas.NAMES:
            s = json.loads(schemas.text(name))
            self._readers[f"{s['namespace']}.{s['name']}"] = schemas.parsed(name)

    def decode(self, value: bytes | None) -> tuple[str, dict[str, Any]]:
        """(record full name, record). Raises DecodeError with the reason."""
        if value is None or len(value) < 5:
            raise DecodeError("shorter than the 5-byte wire-format header")
        magic, schema_id = WIRE.unpack_from(value)
        if magic != 0:
            raise DecodeError(f"magic byte {magic}, not 0: not Confluent wire format")
        if schema_id not in self._writers:
            try:
                text = self._registry.get_schema(schema_id).schema_str
            except Exception as exc:
                raise DecodeError(f"schema id {schema_id}: {exc}") from exc
            raw = json.loads(str(text))
            writer_schema = fastavro.parse_schema(raw)
            if not isinstance(writer_schema, dict):
                raise DecodeError(f"schema id {schema_id} is not a record schema")
            self._writers[schema_id] = (writer_schema, f"{raw.get('namespace')}.{raw['name']}")
        writer, full = self._writers[schema_id]
        reader = self._readers.get(full, writer)
        try:
            record = fastavro.schemaless_reader(io.BytesIO(value[5:]), writer, reader)
        except Exception as exc:
            raise DecodeError(f"undecodable {full} body: {exc}") from exc
        return full, record  # type: ignore[return-value]


def consume(
    bootstrap: str,
    topics: list[str],
    group: str,
    handle: Callable[[Message], bool],
    *,
    idle_seconds: float = 5.0,
    from_beginning: bool = True,
) -> int:
    """Poll topics until `handle` returns False or nothing arrives for idle_seconds; return messages seen."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": True,
            "auto.offset.reset": "earliest" if from_beginning else "latest",
        }
    )
    consumer.subscribe(topics)
    seen = 0
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle_seconds:
            msgs = consumer.consume(1000, 0.5)
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(str(err))
                seen += 1
                last = time.monotonic()
                if not handle(msg):
                    return seen
    finally:
        consumer.close()
    return seen
