"""The wire format of every poolsight record: Avro in the Confluent framing, against the registry.

A record is fastavro's schemaless encoding behind the Confluent wire-format header
(magic byte 0, 4-byte big-endian schema id); a getpage batch's body is written (and read) by the
compiled kernel instead, the same bytes (schemas/getpage_binary.py). Topics that carry one record type use
the subject `<topic>-value`; topics that carry several use `<topic>-<record full
name>` (topic record name strategy), so each type evolves on its own. Producers
(`poolsight.ingest`) and the jobs (`poolsight.flink_jobs`) both use this module.

The confluent-kafka client's default subject strategy first calls a Confluent-only
"associations" API that Apicurio answers with a 404 the client can hang on: subjects
are always given explicitly here, with a timeout.
"""

from __future__ import annotations

import io
import json
import struct
import time
from typing import Any, Protocol

import fastavro
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from poolsight import schemas
from poolsight.names import SCHEMA_TOPICS
from poolsight.schemas import getpage_binary
from poolsight.schemas.getpage import GetpageBatch

WIRE = struct.Struct(">bI")
MAX_RAW = 64 * 1024  # a dead letter keeps at most this much of the record it could not use


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


def batch_event_time_ms(batch: GetpageBatch) -> int:
    """event_time_ms of the batch's record (its end_time), without building the record."""
    return batch.end_time // 1000


class Registry(Protocol):
    """How to reach the registry with credentials (infra/registry_access.py RegistryAccess): the
    wire format uses no platform module, only what a client is configured with."""

    def client_conf(self) -> dict[str, Any]: ...


def registry_client(registry: Registry | str, timeout: float = 30, retries: int | None = None) -> SchemaRegistryClient:
    """A client of `registry` (a bare URL: no credentials, the system's trust)."""
    conf: dict[str, Any] = {
        **({"url": registry} if isinstance(registry, str) else registry.client_conf()),
        "timeout": timeout,
    }
    if retries is not None:
        conf["max.retries"] = retries
    return SchemaRegistryClient(conf)


def _registry_away(exc: Exception) -> bool:
    """The registry did not answer (down, restarting, overloaded): worth waiting for. A refusal
    (the schema, the subject, the URL) is not."""
    if isinstance(exc, SchemaRegistryError):
        code = exc.http_status_code
        return code >= 500 or code in (408, 429)
    # The client's HTTP library is httpx or httpx2 (whichever Authlib uses): its transport errors
    # by class name, a URL it cannot use (UnsupportedProtocol) excepted.
    names = {c.__name__ for c in type(exc).__mro__}
    return isinstance(exc, OSError) or ("TransportError" in names and "UnsupportedProtocol" not in names)


class RegistryAway(Exception):
    """The registry did not answer within the time given (the text names its URL)."""


def registry_reachable(url: Registry | str, timeout: float) -> None:
    """The registry answers within `timeout` s, else RegistryAway naming its URL (a command that
    starts with it away ends in bounded time; an encoder waits a restart out instead)."""
    try:
        registry_client(url, timeout=timeout, retries=0).get_subjects()
    except Exception as exc:
        if not _registry_away(exc):
            raise
        raise RegistryAway(f"schema registry at {url}: no answer within {timeout:g} s ({exc})") from None


class AvroEncoder:
    """Records to Confluent-framed Avro; schemas registered once per subject and cached."""

    def __init__(self, registry_url: Registry | str, patience: float | None = None, kernel: bool = True) -> None:
        self._registry = registry_client(registry_url)
        self.kernel = kernel  # False: fastavro for getpage batches too (a comparison, or a fallback)
        self._registry_url = registry_url
        self._patience = REGISTRY_PATIENCE if patience is None else patience
        self._ids: dict[str, int] = {}

    def schema_id(self, schema_name: str) -> int:
        """The registry's id of the schema, registered at first use. A registry that does not
        answer is waited for (`patience`, REGISTRY_PATIENCE): a restart delays a producer, never fails it;
        a registry that refuses the schema fails at once."""
        if schema_name not in self._ids:
            subject = subject_for(schema_name)
            deadline = time.monotonic() + self._patience
            pause = 0.5
            while True:
                try:
                    self._ids[schema_name] = self._registry.register_schema(
                        subject, Schema(schemas.text(schema_name), "AVRO")
                    )
                    break
                except Exception as exc:  # name the registry and subject: the client's own error does not
                    if not _registry_away(exc) or time.monotonic() + pause > deadline:
                        raise RuntimeError(
                            f"registry {self._registry_url}: registering {subject}: {type(exc).__name__}: {exc}"
                        ) from exc
                    time.sleep(pause)
                    pause = min(pause * 2, 5.0)
        return self._ids[schema_name]

    def encode(self, schema_name: str, record: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        buf.write(WIRE.pack(0, self.schema_id(schema_name)))
        fastavro.schemaless_writer(buf, schemas.parsed(schema_name), record)
        return buf.getvalue()

    def encode_batch(self, batch: GetpageBatch) -> bytes:
        """`encode("getpage_batch", batch.record())`, byte for byte. While the current schema has
        the v1 layout the compiled kernel writes the body from the numpy columns (no list per
        column, no fastavro); a value outside an int field's range raises ValueError naming it."""
        if not (self.kernel and getpage_binary.current_kernel_layout()):
            return self.encode("getpage_batch", batch.record())
        return getpage_binary.encode_body(batch, WIRE.pack(0, self.schema_id("getpage_batch")))


class DecodeError(Exception):
    """The record itself cannot be used: it goes to dead_letter."""


class UnusableBatch(ValueError):
    """A getpage batch decoded, but its columns disagree (GetpageBatch.from_record's checks):
    it goes to dead_letter as unusable."""


class RegistryUnavailable(RuntimeError):
    """The registry gave no answer in time. Not the record's fault, so never a dead letter: the
    caller fails and is retried (a Flink task restarts from its checkpoint and reads it again)."""


REGISTRY_PATIENCE = 120.0  # seconds a decoder waits out a registry outage (under a checkpoint's timeout)


class AvroDecoder:
    """Decodes Confluent-framed Avro with the writer's schema from the registry (cached by id)
    resolved to this version's reader schema."""

    def __init__(self, registry_url: Registry | str, patience: float = REGISTRY_PATIENCE, kernel: bool = True) -> None:
        # No retries inside the client: its own (30 s a try) would stretch `patience` past a
        # checkpoint's timeout; _writer_schema retries.
        self._registry = registry_client(registry_url, timeout=10, retries=0)
        self._url = registry_url
        self.patience = patience
        self.kernel = kernel  # False: fastavro for every record (a comparison, or a fallback)
        # id -> (parsed writer schema, record full name, whether the kernel may decode it)
        self._writers: dict[int, tuple[dict[str, Any], str, bool]] = {}
        self._readers: dict[str, dict[str, Any]] = {}
        for name in schemas.NAMES:
            s = json.loads(schemas.text(name))
            self._readers[f"{s['namespace']}.{s['name']}"] = schemas.parsed(name)

    def remember(self, schema_id: int, text: str) -> None:
        """Cache the writer schema of an id (as the registry gives it; tests give it directly)."""
        raw = json.loads(text)
        writer_schema = fastavro.parse_schema(raw)
        if not isinstance(writer_schema, dict):
            raise DecodeError(f"schema id {schema_id} is not a record schema")
        full = f"{raw.get('namespace')}.{raw['name']}"
        kernel = full == getpage_binary.FULL_NAME and getpage_binary.kernel_layout(raw)
        self._writers[schema_id] = (writer_schema, full, kernel)

    def _writer(self, value: bytes | None) -> tuple[dict[str, Any], str, bool]:
        """The writer schema of a framed record, from its header. Raises DecodeError."""
        if value is None or len(value) < 5:
            raise DecodeError("shorter than the 5-byte wire-format header")
        magic, schema_id = WIRE.unpack_from(value)
        if magic != 0:
            raise DecodeError(f"magic byte {magic}, not 0: not Confluent wire format")
        if schema_id not in self._writers:
            self.remember(schema_id, self._writer_schema(schema_id))
        return self._writers[schema_id]

    def decode(self, value: bytes | None) -> tuple[str, dict[str, Any]]:
        """(record full name, record). Raises DecodeError with the reason."""
        writer, full, _ = self._writer(value)
        assert value is not None  # _writer checked the header
        reader = self._readers.get(full, writer)
        buf = io.BytesIO(value)  # shares the bytes; positions count from the record's first byte
        buf.seek(5)
        try:
            record = fastavro.schemaless_reader(buf, writer, reader)
        except Exception as exc:
            raise DecodeError(f"undecodable {full} body: {exc} (stopped at byte {buf.tell()})") from exc
        return full, record  # type: ignore[return-value]

    def read(self, value: bytes | None) -> tuple[str, GetpageBatch | dict[str, Any]]:
        """(record full name, value): a getpage batch as a GetpageBatch, any other record as its dict.
        A batch whose writer schema has the v1 layout is decoded by the compiled kernel (numpy
        columns, no Python object per getpage); any other writer schema by fastavro with schema
        resolution. Raises DecodeError (undecodable; the text names the field and the byte) or
        UnusableBatch (a batch whose columns disagree)."""
        _, full, kernel = self._writer(value)
        assert value is not None
        if kernel and self.kernel:
            try:
                return full, getpage_binary.decode_body(bytes(value), 5)
            except getpage_binary.AvroError as exc:
                raise DecodeError(f"undecodable {full} body: {exc}") from exc
            except ValueError as exc:
                raise UnusableBatch(str(exc)) from exc
        full, rec = self.decode(value)
        if full != getpage_binary.FULL_NAME:
            return full, rec
        try:
            return full, GetpageBatch.from_record(rec)
        except (ValueError, KeyError, TypeError) as exc:
            raise UnusableBatch(str(exc)) from exc

    def _writer_schema(self, schema_id: int) -> str:
        """The schema text of an id. The registry's 404 is the record's fault (DecodeError);
        no answer at all (down, restarting, a timeout, a 5xx) is waited out for `patience` s."""
        deadline = time.monotonic() + self.patience
        delay = 0.25
        while True:
            try:
                return str(self._registry.get_schema(schema_id).schema_str)
            except Exception as exc:
                if getattr(exc, "http_status_code", None) == 404:
                    raise DecodeError(f"schema id {schema_id}: {exc}") from exc
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RegistryUnavailable(
                        f"registry {self._url}: schema id {schema_id}: no answer in {self.patience:g} s: {exc}"
                    ) from exc
            time.sleep(min(delay, left))
            delay = min(2 * delay, 5.0)
