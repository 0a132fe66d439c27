"""poolsight records into Kafka (an idempotent producer, dead letters) and out of it (a
simple consumer loop). The wire format itself is poolsight.schemas.wire's."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from poolsight.infra.config import Unreachable
from poolsight.infra.kafka_access import KafkaAccess
from poolsight.infra.registry_access import RegistryAccess
from poolsight.ingest.interrupt import deferred_interrupt
from poolsight.names import EVENT_TIME_HEADER, SCHEMA_TOPICS
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import (
    MAX_RAW,
    AvroEncoder,
    RegistryAway,
    batch_event_time_ms,
    event_time_ms,
    registry_reachable,
)


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


class _Repeats(logging.Filter):
    """librdkafka says the same thing many times a second while a broker is away: each message
    (its text with the numbers taken out) once a minute."""

    def __init__(self, every: float = 60.0) -> None:
        super().__init__()
        self.every = every
        self.seen: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = re.sub(r"\d+", "#", record.getMessage())
        now = time.monotonic()
        if now - self.seen.get(key, -self.every) < self.every:
            return False
        if len(self.seen) >= 1000:  # bounded, whatever the broker says
            self.seen.clear()
        self.seen[key] = now
        return True


# The clients' own log (librdkafka's), through Python's logging: one line a minute per message, not
# hundreds while a broker is away (the service logs and a command's stderr stay readable).
KAFKA_LOG = logging.getLogger("poolsight.kafka")
KAFKA_LOG.addFilter(_Repeats())


def reachable(client: Producer | Consumer, bootstrap: str | KafkaAccess, timeout: float) -> None:
    """A broker answers within `timeout` s, else Unreachable naming the address: a command that
    starts with Kafka away ends in bounded time (a broker lost later is ridden out instead)."""
    try:
        client.list_topics(timeout=timeout)
    except KafkaException as exc:
        why = exc.args[0].str() if exc.args and isinstance(exc.args[0], KafkaError) else str(exc)
        raise Unreachable(f"Kafka at {bootstrap}: no broker answered within {timeout:g} s ({why})") from None


def check_services(kafka: KafkaAccess, registry_url: RegistryAccess | str, timeout: float) -> None:
    """The schema registry and a Kafka broker answer within `timeout` s each, else Unreachable
    naming the one that did not: what a collector checks before it reads anything."""
    try:
        registry_reachable(registry_url, timeout)
    except RegistryAway as exc:
        raise Unreachable(str(exc)) from None
    reachable(Producer(kafka.client_config(logger=KAFKA_LOG)), kafka, timeout)


# librdkafka retries a record until this (its message.timeout.ms): the outage a producer rides out.
DELIVERY_TIMEOUT_S = 300.0
FLUSH_TIMEOUT_S = DELIVERY_TIMEOUT_S + 30.0


class AvroProducer:
    """Idempotent (acks=all) producer of poolsight records; keys keep a pool's batches in order."""

    def __init__(
        self,
        kafka: KafkaAccess,
        registry_url: RegistryAccess | str,
        *,
        linger_ms: int = 20,
        batch_bytes: int = 1 << 20,
        compression: str = "lz4",
        client_id: str = "poolsight",
        registry_patience: float | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        """`connect_timeout`: a broker must answer within it now (Unreachable otherwise)."""
        self.encoder = AvroEncoder(registry_url, registry_patience)
        self._producer = Producer(
            kafka.client_config(
                **{
                    "logger": KAFKA_LOG,
                    "client.id": client_id,
                    "enable.idempotence": True,
                    "acks": "all",
                    "message.timeout.ms": int(DELIVERY_TIMEOUT_S * 1000),
                    "linger.ms": linger_ms,
                    "batch.size": batch_bytes,
                    "compression.type": compression,
                    "message.max.bytes": 8 * 1024 * 1024,
                    "queue.buffering.max.kbytes": 512 * 1024,
                }
            )
        )
        self.metrics = Metrics()
        if connect_timeout is not None:
            reachable(self._producer, kafka, connect_timeout)

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

    def send_batch(self, batch: GetpageBatch) -> None:
        value = self.encoder.encode_batch(batch)
        self.send_encoded("getpage_batch", batch.key, value, batch_event_time_ms(batch), getpages=batch.getpages)

    def send_batches(self, batches: list[GetpageBatch]) -> None:
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

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Wait for delivery of everything sent; Ctrl-C meanwhile is raised after the wait. The
        default outlasts the producer's own delivery timeout, so a broker outage shorter than
        that delays the flush instead of failing it (what is not delivered by then fails in
        the delivery callback, named there). Waits in 1 s steps, so Ctrl-C is raised within a
        second, not after the whole wait."""
        deadline = time.monotonic() + timeout
        while True:
            with deferred_interrupt():
                left = self._producer.flush(min(1.0, max(deadline - time.monotonic(), 0.0)))
            if not left or time.monotonic() >= deadline:
                break
        if left:
            raise RuntimeError(f"{left} records not delivered within {timeout:.0f} s")
        if self.metrics.delivery_errors:
            raise RuntimeError(f"{self.metrics.delivery_errors} records failed: {self.metrics.last_error}")


def consume(
    kafka: KafkaAccess,
    topics: list[str],
    group: str,
    handle: Callable[[Message], bool],
    *,
    idle_seconds: float = 5.0,
    from_beginning: bool = True,
) -> int:
    """Poll topics until `handle` returns False or nothing arrives for idle_seconds; return messages seen."""
    consumer = Consumer(
        kafka.client_config(
            **{
                "logger": KAFKA_LOG,
                "group.id": group,
                "enable.auto.commit": True,
                "auto.offset.reset": "earliest" if from_beginning else "latest",
            }
        )
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


def read_from(
    kafka: KafkaAccess,
    topic: str,
    since_ms: int,
    handle: Callable[[Message], None],
    starts: Mapping[int, int] | None = None,
    timeout: float = 300.0,
    until: Mapping[int, int] | None = None,
) -> tuple[int, dict[int, int]]:
    """Every record of `topic` written since `since_ms` (broker time, epoch ms) up to the end as it is
    when called, all partitions, without a consumer group's commits; but a partition in `starts` is
    read from that offset (where an earlier read ended), one retention removed since from its oldest
    record kept.
    With `until`, only its partitions are read, each up to its offset there (not past its end).
    Returns the records read and each partition's next offset (its end as it was when called)."""
    consumer = Consumer(
        kafka.client_config(
            **{
                "logger": KAFKA_LOG,
                "group.id": f"poolsight-read-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",  # a start offset retention removed: from the oldest kept
            }
        )
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        known = starts or {}
        wanted = sorted(p for p in meta.partitions if until is None or p in until)
        # Each end before the start by time: a record written between the two is then read now
        # or, past the end, by the next read on from it, never skipped.
        ends: dict[int, int] = {}
        for part in wanted:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, part), timeout=10)
            ends[part] = high if until is None else min(high, until[part])
        by_time = [TopicPartition(topic, p, since_ms) for p in wanted if p not in known]
        found = consumer.offsets_for_times(by_time, timeout=10) if by_time else []
        for tp in found:
            if tp.error is not None:  # not "nothing since" (-1): the broker could not say
                raise RuntimeError(f"{topic}: partition {tp.partition}'s offset at {since_ms} ms: {tp.error}")
        firsts = {tp.partition: tp.offset for tp in found} | {p: o for p, o in known.items() if p in wanted}
        todo: dict[int, int] = {}
        assign = []
        for part, first in sorted(firsts.items()):
            high = ends[part]
            if 0 <= first < high:  # -1: nothing written since
                todo[part] = high
                assign.append(TopicPartition(topic, part, first))
        consumer.assign(assign)
        seen = 0
        deadline = time.monotonic() + timeout
        while todo and time.monotonic() < deadline:
            msgs = consumer.consume(1000, 1.0)
            if not msgs:  # transaction markers can end a partition below its mark
                for tp in consumer.position([TopicPartition(topic, q) for q in list(todo)]):
                    if tp.offset >= todo[tp.partition]:
                        del todo[tp.partition]
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(str(err))
                p, offset = msg.partition(), msg.offset()
                if p is None or offset is None or p not in todo:
                    continue
                if offset < todo[p]:  # one past the end (the one before it a marker) is the next read's
                    handle(msg)
                    seen += 1
                if offset + 1 >= todo[p]:
                    del todo[p]
                    consumer.pause([TopicPartition(topic, p)])  # done: its new records are not wanted
        if todo:
            raise RuntimeError(f"{topic}: partitions {sorted(todo)} not read to their end within {timeout:.0f} s")
        return seen, ends
    finally:
        consumer.close()
