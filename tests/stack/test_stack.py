"""The real stack, started by the launcher, checked end to end over 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlparse

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from poolsight.infra.config import load_settings
from poolsight.infra.flinksql import run_sql
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.process import port_in_use, read_stat, thread_priorities
from poolsight.infra.services import SERVICES
from poolsight.infra.trino import trino_connection
from poolsight.names import NAMESPACE, TOPICS
from poolsight.schemas.wire import AvroDecoder, DecodeError
from tests.conftest import poolsight

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]


@pytest.fixture(scope="module", autouse=True)
def no_jobs() -> None:
    """The session's streaming jobs stopped (the modules before shared them): this module's Flink
    SQL needs a free slot, and `down` then `up` would submit them again."""
    r = poolsight("jobs", "cancel", "--all", "--no-savepoint")
    assert r.returncode == 0, r.stderr


SMOKE_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "Smoke",
        "namespace": "poolsight.test",
        "doc": "launcher smoke record",
        "fields": [
            {"name": "pool", "type": "string", "doc": "buffer pool name"},
            {"name": "getpages", "type": "long", "doc": "count"},
            {"name": "pages", "type": {"type": "array", "items": "long"}, "doc": "page numbers"},
        ],
    }
)


def _status() -> dict[str, dict[str, Any]]:
    r = poolsight("status", "--json")
    return {row["name"]: row for row in json.loads(r.stdout)["services"]}


def _produce_avro(topic: str, value: dict[str, Any]) -> None:
    s = load_settings()
    admin = AdminClient(kafka_access(s).client_config())
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result()
    registry = SchemaRegistryClient({"url": s.registry_url, "timeout": 30})
    # An explicit strategy: the client's default first asks the Confluent-only
    # "associations" API, which Apicurio answers with a 404 that can leave the
    # client waiting for ever.
    ser = AvroSerializer(registry, SMOKE_SCHEMA, conf={"subject.name.strategy": topic_subject_name_strategy})
    producer = Producer(kafka_access(s).client_config(**{"enable.idempotence": True, "acks": "all"}))
    producer.produce(topic, key=b"SSID1|BP1", value=ser(value, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0


def _consume_avro(topic: str, n: int) -> list[tuple[bytes, dict[str, Any]]]:
    s = load_settings()
    registry = SchemaRegistryClient({"url": s.registry_url, "timeout": 30})
    de = AvroDeserializer(registry)
    consumer = Consumer(
        kafka_access(s).client_config(
            **{"group.id": f"test-{uuid.uuid4()}", "auto.offset.reset": "earliest", "enable.auto.commit": False}
        )
    )
    consumer.subscribe([topic])
    out: list[tuple[bytes, dict[str, Any]]] = []
    deadline = time.monotonic() + 60
    try:
        while len(out) < n and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            raw = msg.value()
            assert raw is not None
            out.append((raw, de(raw, SerializationContext(topic, MessageField.VALUE))))
    finally:
        consumer.close()
    return out


def _trino_rows(sql: str) -> list[list[Any]]:
    with trino_connection(load_settings(), schema=NAMESPACE) as conn:
        cur = conn.cursor()
        cur.execute(sql)
        return [list(r) for r in cur.fetchall()]


def _flink_write_table(table: str, rows: list[tuple[int, str]]) -> None:
    values = ", ".join(f"({i}, '{name}')" for i, name in rows)
    run_sql(
        load_settings(),
        [
            f"CREATE TABLE poolsight.{NAMESPACE}.{table} (id INT, name STRING)",
            f"INSERT INTO poolsight.{NAMESPACE}.{table} VALUES {values}",
        ],
    )


def test_status_shows_every_service_healthy_on_loopback() -> None:
    rows = _status()
    # The file:// warehouse is a row of its own: a folder here, no process.
    warehouse = rows.pop("warehouse")
    assert (warehouse["state"], warehouse["address"], warehouse["pid"]) == (
        "healthy",
        str(load_settings().data_dir / "warehouse"),
        None,
    )
    assert set(rows) == {svc.name for svc in SERVICES}
    for name, row in rows.items():
        assert row["state"] == "healthy", (name, row)
        assert row["address"].startswith("127.0.0.1"), row
        assert isinstance(row["pid"], int) and row["pid"] > 0
        assert os.path.exists(f"/proc/{row['pid']}")


def test_launcher_created_every_topic() -> None:
    s = load_settings()
    meta = AdminClient(kafka_access(s).client_config()).list_topics(timeout=10)
    for topic in TOPICS:
        assert topic.name in meta.topics, topic.name
        assert len(meta.topics[topic.name].partitions) == topic.partitions


def _committed(group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets as a separate client reads them (-1001: none)."""
    from confluent_kafka import TopicPartition

    c = Consumer(kafka_access(load_settings()).client_config(**{"group.id": group, "enable.auto.commit": False}))
    try:
        return {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)])}
    finally:
        c.close()


def test_a_group_started_at_latest_is_pinned_at_the_end_offsets_it_has_no_commit_for() -> None:
    """What a job started with `--from latest` commits before its first run (start_offsets.py):
    each partition's end where the group has no commit, nothing where it has one, so a restore
    before the job read a partition resumes there instead of at a later `latest`."""
    from confluent_kafka import TopicPartition

    from poolsight.flink_jobs.start_offsets import pin_latest

    s = load_settings()
    topic = f"test.pin.{uuid.uuid4().hex[:8]}"
    admin = AdminClient(kafka_access(s).client_config())  # kept: its futures fail once it is gone
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])[topic].result()
    producer = Producer(kafka_access(s).client_config())
    for partition, n in ((0, 5), (1, 2)):  # partition 2 stays empty
        for i in range(n):
            producer.produce(topic, value=b"%d" % i, partition=partition)
    assert producer.flush(30) == 0
    new, old = f"test-pin-{uuid.uuid4().hex[:6]}", f"test-pin-{uuid.uuid4().hex[:6]}"
    c = Consumer(kafka_access(s).client_config(**{"group.id": old, "enable.auto.commit": False}))
    c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)  # a group that read one record
    c.close()

    assert pin_latest(kafka_access(s), new, [topic]) == {(topic, 0): 5, (topic, 1): 2, (topic, 2): 0}
    assert _committed(new, topic, 3) == {0: 5, 1: 2, 2: 0}
    assert pin_latest(kafka_access(s), old, [topic]) == {(topic, 1): 2, (topic, 2): 0}
    assert _committed(old, topic, 3) == {0: 1, 1: 2, 2: 0}  # its own commit kept
    producer.produce(topic, value=b"later", partition=2)
    assert producer.flush(30) == 0
    assert pin_latest(kafka_access(s), new, [topic]) == {}  # every partition committed: left alone
    assert _committed(new, topic, 3) == {0: 5, 1: 2, 2: 0}
    with pytest.raises(RuntimeError, match=r"topic test\.pin\.missing"):
        pin_latest(kafka_access(s), new, ["test.pin.missing"])


def test_avro_record_round_trips_through_registry() -> None:
    topic = f"test.smoke.{uuid.uuid4().hex[:8]}"
    value = {"pool": "BP1", "getpages": 12345, "pages": [1, 2, 3, 2**40]}
    _produce_avro(topic, value)
    [(raw, decoded)] = _consume_avro(topic, 1)
    assert decoded == value
    # Confluent wire format: magic byte 0, then the registry's 4-byte schema id.
    assert raw[0] == 0
    schema_id = int.from_bytes(raw[1:5], "big")
    registry = SchemaRegistryClient({"url": load_settings().registry_url})
    assert json.loads(str(registry.get_schema(schema_id).schema_str))["name"] == "Smoke"
    assert f"{topic}-value" in registry.get_subjects()


def test_a_decoder_waits_out_a_registry_outage_and_still_refuses_an_unknown_id() -> None:
    """A schema id the decoder has not cached while the registry is down (a TaskManager restarted
    during an outage): the record waits for the registry instead of going to dead_letter."""
    topic = f"test.outage.{uuid.uuid4().hex[:8]}"
    value = {"pool": "BP3", "getpages": 9, "pages": [7, 2**33]}
    _produce_avro(topic, value)
    [(raw, _)] = _consume_avro(topic, 1)
    unknown = raw[:1] + (999_999).to_bytes(4, "big") + raw[5:]
    decoder = AvroDecoder(load_settings().registry_url, patience=600)  # longer than any `up` of the registry
    pid = _status()["registry"]["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _status()["registry"]["state"] != "stopped":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    got: dict[str, Any] = {}

    def decode() -> None:
        try:
            got["record"] = decoder.decode(raw)
        except Exception as exc:  # the assertion below shows it
            got["error"] = exc

    worker = threading.Thread(target=decode, daemon=True)
    worker.start()
    worker.join(5)
    assert worker.is_alive() and not got, got  # waiting, not refusing
    r = poolsight("up")
    assert r.returncode == 0, r.stderr
    worker.join(60)
    assert got == {"record": ("poolsight.test.Smoke", value)}
    started = time.monotonic()
    with pytest.raises(DecodeError, match="schema id 999999"):
        decoder.decode(unknown)
    assert time.monotonic() - started < 10  # the registry's answer, not a timeout


@pytest.fixture(scope="module")
def flink_table() -> tuple[str, list[tuple[int, str]]]:
    """A table a Flink SQL job wrote, once for the module (a job's start is 15-20 s): Trino reads
    it, and it is still there after `down` and `up`."""
    table = f"smoke_{uuid.uuid4().hex[:8]}"
    rows = [(1, "BP0"), (2, "BP1"), (3, "BP8K0")]
    _flink_write_table(table, rows)
    return table, rows


def test_iceberg_table_written_by_flink_is_read_by_trino(flink_table: tuple[str, list[tuple[int, str]]]) -> None:
    table, rows = flink_table
    assert _trino_rows(f"SELECT id, name FROM {table} ORDER BY id") == [list(r) for r in rows]
    # And the table's files sit in the file:// warehouse the settings name.
    [[path]] = _trino_rows(f'SELECT file_path FROM "{table}$files" LIMIT 1')
    # (Hadoop's FileIO writes file:/x, the settings say file:///x: the same place.)
    where, warehouse = urlparse(path), urlparse(load_settings().warehouse)
    assert where.scheme == "file" and where.path.startswith(warehouse.path + "/")


def test_flink_processes_are_started_to_exit_when_their_heap_runs_out() -> None:
    """Flink only logs an OutOfMemoryError on a thread that is not a task's, and the job then hung
    (a Python operator's state write on a gRPC thread): its JVMs must carry the JVM's exit flag,
    which its scripts take from env.java.opts.jobmanager / .taskmanager."""
    rows = _status()
    for name in ("flink-jobmanager", "flink-taskmanager"):
        with open(f"/proc/{rows[name]['pid']}/cmdline", "rb") as fh:
            args = fh.read().split(b"\0")
        assert args[0].endswith(b"java"), (name, args[:3])
        assert b"-XX:+ExitOnOutOfMemoryError" in args, (name, args)


def _niceness(pid: int) -> int:
    fields = read_stat(pid)
    assert fields is not None, f"{pid} has ended"
    return int(fields[16])  # field 19: nice


def test_the_periodic_services_yield_the_cores_to_the_pipeline_and_the_pages() -> None:
    rows = _status()
    base = os.nice(0)  # the launcher's, inherited from this session
    got = {name: _niceness(rows[name]["pid"]) for name in ("alerts", "advice", "maintenance", "dashboard", "trino")}
    low = min(19, base + 10)
    assert got == {"alerts": low, "advice": low, "maintenance": low, "dashboard": base, "trino": base}
    # Every thread: advice and maintenance run only on idle cores, alerts keep their share.
    threads = {name: thread_priorities(rows[name]["pid"]) for name in ("alerts", "advice", "maintenance")}
    assert threads == {
        "alerts": {(low, os.SCHED_OTHER)},
        "advice": {(low, os.SCHED_IDLE)},
        "maintenance": {(low, os.SCHED_IDLE)},
    }


def test_killed_service_is_reported_and_up_brings_it_back() -> None:
    # Both killed, each seen stopped, then one `up` (a registry start is 20-30 s) brings each back.
    names = ("flink-taskmanager", "registry")
    before = _status()
    pids = {name: before[name]["pid"] for name in names}
    for name in names:
        os.kill(pids[name], signal.SIGKILL)
    deadline = time.monotonic() + 30
    killed = _status()
    while time.monotonic() < deadline and any(killed[name]["state"] == "healthy" for name in names):
        time.sleep(1)
        killed = _status()
    for name in names:
        assert killed[name]["state"] == "stopped", name
    r = poolsight("up")
    assert r.returncode == 0, r.stdout + r.stderr
    after = _status()
    for name in names:
        assert after[name]["state"] == "healthy", name
        assert after[name]["pid"] != pids[name], name
    assert all(row["state"] == "healthy" for row in after.values()), after


def test_down_then_up_keeps_data(flink_table: tuple[str, list[tuple[int, str]]]) -> None:
    topic = f"test.restart.{uuid.uuid4().hex[:8]}"
    value = {"pool": "BP2", "getpages": 7, "pages": [42]}
    _produce_avro(topic, value)
    table, rows = flink_table
    assert _trino_rows(f"SELECT id, name FROM {table} ORDER BY id") == [list(r) for r in rows]

    r = poolsight("down")
    assert r.returncode == 0, r.stderr
    s = load_settings()
    assert all(row["state"] == "stopped" for name, row in _status().items() if name != "warehouse")  # a folder
    assert not any(port_in_use(p, s.bind_host) for p in s.ports.values())

    t0 = time.monotonic()
    r = poolsight("up")
    restart_s = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert "downloading" not in r.stderr and "Downloaded from" not in r.stderr
    print(f"restart after down: {restart_s:.1f} s")

    assert [v for _, v in _consume_avro(topic, 1)] == [value]
    assert _trino_rows(f"SELECT id, name FROM {table} ORDER BY id") == [list(r) for r in rows]


def _trino_post(url: str, user: str, password: str | None, verify: str | bool) -> Any:
    import requests  # lazy: the Trino client's HTTP library, only for this module's raw requests

    auth = (user, password) if password is not None else None
    return requests.post(url, data="SELECT 1", headers={"X-Trino-User": user}, auth=auth, verify=verify, timeout=30)


def test_trino_asks_every_client_for_its_password_over_https() -> None:
    from poolsight.infra.trino_secrets import certificate_path, embedded_password
    from poolsight.names import TRINO_READER_USER, TRINO_WRITER_USER

    s = load_settings()
    ca, url = str(certificate_path(s)), f"{s.trino_url}/v1/statement"
    writer, reader = embedded_password(s, TRINO_WRITER_USER), embedded_password(s, TRINO_READER_USER)
    assert url.startswith("https://") and writer and reader and writer != reader
    assert _trino_post(url, TRINO_WRITER_USER, writer, ca).status_code == 200
    assert _trino_post(url, TRINO_READER_USER, reader, ca).status_code == 200
    refused = _trino_post(url, TRINO_WRITER_USER, None, ca)  # no password: asked for one
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Basic")
    assert _trino_post(url, TRINO_WRITER_USER, writer + "x", ca).status_code == 401
    assert _trino_post(url, TRINO_READER_USER, writer, ca).status_code == 401  # another user's password
    assert _trino_post(url, "anyone", writer, ca).status_code == 401
    # Plain HTTP on the port Trino's own requests use: refused to anyone without the shared secret.
    internal = f"http://{s.bind_host}:{s.ports['trino_internal']}/v1/statement"
    answer = _trino_post(internal, TRINO_WRITER_USER, writer, True)
    assert answer.status_code == 403 and "Authentication over HTTP is not enabled" in answer.text
    # The certificate is checked: without trusting it the client stops.
    import requests  # lazy: as above

    with pytest.raises(requests.exceptions.SSLError):
        _trino_post(url, TRINO_WRITER_USER, writer, True)


def test_no_secret_in_a_command_line_a_log_the_runtime_folder_or_a_table() -> None:
    s = load_settings()
    folder = s.data_dir / "secrets"
    secrets = {
        p.name: p.read_text().strip() for p in folder.iterdir() if p.suffix not in (".pem", ".crt", ".properties")
    }
    assert {
        "catalog-password",
        "trino-writer-password",
        "trino-reader-password",
        "trino-shared-secret",
    } <= set(secrets)
    keys = {
        f"{name} TLS private key": (folder / f"{name}-tls.pem").read_text().split("-----BEGIN CERTIFICATE-----")[0]
        for name in ("trino", "kafka")
        if (folder / f"{name}-tls.pem").exists()  # Kafka's: a stack once run with [kafka].security
    }
    needles = {name: value.encode() for name, value in (secrets | keys).items()}
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        found += [f"command line of {pid}: {n}" for n, v in needles.items() if v in cmdline]
    for path in [*s.log_dir.rglob("*"), *s.run_dir.rglob("*")]:
        if path.is_file() and path.name != "password.db":  # its PBKDF2 hashes, not the passwords
            data = path.read_bytes()
            found += [f"{path}: {n}" for n, v in needles.items() if v in data]
    # The tables that hold free text (a dead letter's reason and bytes, an alert's message, advice).
    with trino_connection(s) as conn:
        cur = conn.cursor()
        for table, column in (
            ("dead_letter", "reason"), ("dead_letter", "from_utf8(raw)"), ("alert", "message"), ("advice", "evidence"),
        ):  # fmt: skip
            for name, value in secrets.items():
                cur.execute(f"SELECT count(*) FROM iceberg.{NAMESPACE}.{table} WHERE strpos({column}, ?) > 0", [value])
                if cur.fetchall()[0][0]:
                    found.append(f"{table}.{column}: {name}")
    assert found == []
