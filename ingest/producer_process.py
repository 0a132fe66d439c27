"""An AvroProducer in a child process: Avro encoding and sending on a core of their own.

Producing (encoding, librdkafka's compression and sending) and generating (workload and
buffer-pool models) both need the GIL. The split was made when fastavro encoded the getpage
arrays, at about the cost of generating them; the compiled kernel encodes them now
(AvroEncoder.encode_batch). The generator hands records and getpage batches (numpy columns,
cheap to pickle) to this process over a bounded queue, so the two halves run on two cores; the
queue's bound keeps a fast producer side from piling up memory. A failure in the child
(registry or Kafka unreachable, a record the schema refuses) is raised in the caller at its
next call; the child ends when its parent does.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
from dataclasses import dataclass
from typing import Any

from poolsight.infra.kafka_access import KafkaAccess
from poolsight.infra.registry_access import RegistryAccess
from poolsight.ingest.kafka_io import FLUSH_TIMEOUT_S, AvroProducer, Metrics
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroEncoder, batch_event_time_ms


@dataclass(frozen=True)
class _Config:
    kafka: KafkaAccess  # carries no password: the child reads it from its file
    registry_url: RegistryAccess | str
    client_id: str
    linger_ms: int
    parent: int
    registry_patience: float | None


def _serve(cfg: _Config, items: Any, replies: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it flushes or stops us
    try:
        producer = AvroProducer(
            cfg.kafka,
            cfg.registry_url,
            client_id=cfg.client_id,
            linger_ms=cfg.linger_ms,
            registry_patience=cfg.registry_patience,
        )
        replies.put(("ready", None))
        while True:
            try:
                item = items.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != cfg.parent:  # orphaned (the parent was killed): nobody to report to
                    return
                continue
            if item is None:
                producer.flush()
                replies.put(("closed", producer.metrics))
                return
            kind, payload = item
            if kind == "batches":
                for b in payload:
                    producer.send_batch(b)
            elif kind == "encoded":  # batches the parent encoded while this process was behind
                for key, value, et, getpages in payload:
                    producer.send_encoded("getpage_batch", key, value, et, getpages=getpages)
            elif kind == "record":
                schema_name, key, record = payload
                producer.send(schema_name, key, record)
            elif kind == "flush":
                producer.flush()
                replies.put(("flushed", producer.metrics))
    except Exception as exc:  # reported to the parent, which raises it
        replies.put(("error", f"{type(exc).__name__}: {exc}"))


class ProducerProcess:
    """Sends like an AvroProducer (`send`, `send_batches`, `flush`, `metrics`), from a child process."""

    def __init__(
        self,
        kafka: KafkaAccess,
        registry_url: RegistryAccess | str,
        *,
        client_id: str = "poolsight",
        linger_ms: int = 20,
        depth: int = 16,
        start_timeout: float = 60.0,
        registry_patience: float | None = None,  # None: schemas.wire.REGISTRY_PATIENCE
    ) -> None:
        ctx = mp.get_context("spawn")  # not fork: librdkafka threads may already run here
        self._items = ctx.Queue(depth)
        self._replies = ctx.Queue()
        self._proc = ctx.Process(
            target=_serve,
            name="poolsight-producer",
            daemon=True,
            args=(
                _Config(kafka, registry_url, client_id, linger_ms, os.getpid(), registry_patience),
                self._items,
                self._replies,
            ),
        )
        self._proc.start()
        self.metrics = Metrics()
        self._failed: str | None = None  # what the child reported before it ended
        self._depth = depth
        self._registry_url = registry_url
        self._registry_patience = registry_patience
        self._encoder: AvroEncoder | None = None
        self.encoded_here = 0  # batches this process encoded itself
        self._reply("ready", start_timeout)

    def _reply(self, want: str, timeout: float) -> Any:
        waited = 0.0
        while True:
            # Alive before reading: a child that replied and then exited has its reply read below.
            alive = self._proc.is_alive()
            try:
                kind, payload = self._replies.get(timeout=1.0)
            except queue.Empty:
                waited += 1.0
                if not alive:
                    raise RuntimeError(f"the producer process died (exit {self._proc.exitcode})") from None
                if waited >= timeout:
                    raise RuntimeError(f"the producer process did not answer {want!r} within {timeout:.0f} s") from None
                continue
            if kind == "error":
                self._fail(payload)
            if kind == want:
                return payload

    def _fail(self, reason: str) -> None:
        self._failed = reason
        self._proc.join(5)
        raise RuntimeError(f"producer process: {reason}")

    def _put(self, item: Any) -> None:
        if self._failed is not None:
            raise RuntimeError(f"producer process: {self._failed}")
        while True:
            try:
                self._items.put(item, timeout=1.0)
                return
            except queue.Full:
                alive = self._proc.is_alive()  # before reading, as in _reply
                self._raise_reported()
                if not alive:
                    raise RuntimeError(f"the producer process died (exit {self._proc.exitcode})") from None

    def _raise_reported(self) -> None:
        """While sending, the child only ever replies with an error."""
        try:
            kind, payload = self._replies.get(timeout=0.1)
        except queue.Empty:
            return
        if kind == "error":
            self._fail(payload)

    def send(self, schema_name: str, key: str, record: dict[str, Any], *, getpages: int = 0) -> None:
        self._put(("record", (schema_name, key, record)))

    def send_batches(self, batches: list[GetpageBatch]) -> None:
        """Getpage batches, in order, as one message to the child. When the child is behind (its
        queue nearly full) they are encoded here instead of waiting idle for room."""
        if not batches:
            return
        if self._items.qsize() < self._depth - 1:
            self._put(("batches", batches))
            return
        if self._encoder is None:
            self._encoder = AvroEncoder(self._registry_url, self._registry_patience)
        enc = self._encoder
        encoded = []
        try:
            for b in batches:
                encoded.append((b.key, enc.encode_batch(b), batch_event_time_ms(b), b.getpages))
        except Exception as exc:  # the child would fail the same way: the whole sender has failed
            self._failed = f"{type(exc).__name__}: {exc}"
            raise RuntimeError(f"producer process: {self._failed}") from exc
        self.encoded_here += len(batches)
        self._put(("encoded", encoded))

    def send_batch(self, batch: GetpageBatch) -> None:
        self.send_batches([batch])

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Wait until everything sent so far is delivered (raises what the child reports)."""
        self._put(("flush", None))
        self.metrics = self._reply("flushed", timeout + 10)

    def close(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Deliver what is queued, then stop the child."""
        if self._failed is None and self._proc.is_alive():
            self._put(None)
            self.metrics = self._reply("closed", timeout + 10)
        self._proc.join(5)
        if self._proc.is_alive():  # failed here, not there: nothing it holds can be delivered as a whole
            self._proc.terminate()
            self._proc.join(5)
