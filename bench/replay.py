"""A flat-out phase's records generated ahead and sent from memory, so the generator's CPU is not
in the window the pipeline is measured in (issue 31: the bench's producer must not be what caps
its figure; on two cores, a live generator took a seventh of the CPU the stack had).

`Recorder` takes the producer's place while the generator runs: it encodes each record as the
producer does (the producer's own methods and encoder) and keeps it, in order, with its key,
event-time header and getpages. `replay` then sends them all through the real producer, as fast
as it takes them, and says when each noted (pool, pane) was sent: the generator's output, byte
for byte, arriving at Kafka at the rate of a producer that only sends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from poolsight.ingest.kafka_io import AvroProducer

PaneKey = tuple[str, int]  # ("source/pool", pane number)


@dataclass(frozen=True)
class Recorded:
    schema: str
    key: str
    value: bytes
    event_time_ms: int | None
    getpages: int


class Recorder(AvroProducer):
    """The producer, recording instead of sending: its own `send`, `send_batch` and
    `send_batches` encode with its encoder and come to `send_encoded`, which keeps the record."""

    def __init__(self, producer: AvroProducer) -> None:  # no Kafka client of its own
        self.encoder = producer.encoder
        self.records: list[Recorded] = []
        self.notes: dict[int, list[PaneKey]] = {}  # record index -> panes whose batch it is
        self.bytes = 0
        self.getpages = 0

    def send_encoded(self, schema_name: str, key: str, value: bytes, et: int | None, *, getpages: int = 0) -> None:
        self.records.append(Recorded(schema_name, key, value, et, getpages))
        self.bytes += len(value)
        self.getpages += getpages

    def flush(self, timeout: float = 0.0) -> None:
        """Nothing to deliver yet: `replay` sends."""

    def note(self, panes: Iterable[PaneKey]) -> None:
        """The latest record carries getpages of these panes (stamped when it is sent)."""
        self.notes.setdefault(len(self.records) - 1, []).extend(panes)


def replay(rec: Recorder, producer: AvroProducer, sent: Callable[[list[PaneKey], float], None]) -> float:
    """Send every record in order through `producer`, flat out, calling `sent(panes, now)` after a
    noted record; returns the seconds until all were delivered."""
    t0 = time.monotonic()
    for i, r in enumerate(rec.records):
        producer.send_encoded(r.schema, r.key, r.value, r.event_time_ms, getpages=r.getpages)
        if (panes := rec.notes.get(i)) is not None:
            sent(panes, time.time())
    producer.flush()
    return time.monotonic() - t0
