"""Proved on clusters: a 3-broker KRaft Kafka and a Flink session cluster with 2 TaskManagers,
each a poolsight home of its own on another loopback address, used by the jobs as external
services. One broker is killed with kill -9 mid-stream and started again: every getpage is in
Iceberg exactly once and nothing is dead-lettered.

The registry, the catalog (PostgreSQL), the warehouse and Trino are the session's stack: the
jobs on the cluster write where the session's Trino reads.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from poolsight.infra.config import load_settings
from poolsight.infra.kafka_access import internal_access, kafka_access
from poolsight.infra.kafka_secrets import CERTIFICATE_NAME, CLIENT_USER, MECHANISM, PASSWORD_NAME
from poolsight.infra.kafka_service import node_name
from poolsight.infra.services import catalog_password
from poolsight.names import ATTRIBUTES_TOPIC, GETPAGE_TOPIC, TOPICS, Topic
from tests.conftest import POOLSIGHT, ROOT, poolsight
from tests.stack.conftest import SUBMIT, generate, log_lines, settings_with, truth
from tests.stack.conftest import query as _query
from tests.stack.test_pipeline import _assert_each_pane_once, _wait_getpages

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

BROKERS, TASKMANAGERS, PARALLELISM = 3, 2, 2  # 2 jobs x parallelism 2 = the 4 slots of 2 TaskManagers
KAFKA_HOST, FLINK_HOST = "127.0.0.2", "127.0.0.3"
# Ports of their own (tests/conftest.py TEST_PORTS is the session's stack, test_launcher_failures
# uses 2xxxx); broker i adds 10 * (i - 1) to the Kafka ports (infra/config.py KAFKA_PORT_STEP).
# Below the kernel's ephemeral range (32768-60999), where a client's outgoing connection may hold a
# port (test_s3's stack once found its Kafka port so taken); broker i adds 10 x (i - 1).
KAFKA_PORTS = {"KAFKA": 31092, "KAFKA_CONTROLLER": 31093, "KAFKA_INTERNAL": 31094}
FLINK_PORTS = {"FLINK_REST": 31082, "FLINK_RPC": 30123}
# Seconds of event time (8000 events/s), getpages/s: a 50 s stream. The kill comes at the jobs' first
# committed offsets, a few seconds in; the broker is back some 30 s later. A whole pane: the
# generator's last progress mark closes it (no idle flush to wait for).
DURATION, RATE = 60, 9600
DOWN_SECONDS = 15  # longer than the controller's broker session timeout (9 s): leaders move


def _home(root: Path, host: str, ports: dict[str, int], **env: str) -> dict[str, str]:
    """The environment of a poolsight home of its own under root: its folders, its bind host and
    ports; the session's download cache."""
    return {
        "POOLSIGHT_HOME": str(root),
        "POOLSIGHT_CACHE_DIR": str(load_settings().cache_dir),
        "POOLSIGHT_DATA_DIR": str(root / "var" / "data"),
        "POOLSIGHT_RUN_DIR": str(root / "var" / "run"),
        "POOLSIGHT_LOG_DIR": str(root / "var" / "log"),
        "POOLSIGHT_BIND_HOST": host,
        **{f"POOLSIGHT_{k}_PORT": str(v) for k, v in ports.items()},
        **env,
    }


class Cluster:
    """The two homes and the client's environment that names them as external."""

    def __init__(self, root: Path) -> None:
        main = load_settings()
        # Three brokers with SASL_SSL (mutual TLS between them), reached as an external Kafka.
        self.kafka_env = _home(
            root / "kafka",
            KAFKA_HOST,
            KAFKA_PORTS,
            POOLSIGHT_KAFKA_BROKERS=str(BROKERS),
            POOLSIGHT_KAFKA_SECURITY="sasl_ssl",
        )
        # The JobManager needs the catalog: the session's PostgreSQL, as an external catalog.
        self.flink_env = _home(
            root / "flink",
            FLINK_HOST,
            FLINK_PORTS,
            POOLSIGHT_FLINK_TASKMANAGERS=str(TASKMANAGERS),
            POOLSIGHT_CATALOG_URI=main.postgres_jdbc_url,
            POOLSIGHT_CATALOG_PASSWORD=catalog_password(main),
        )
        self.kafka = settings_with(self.kafka_env)
        self.flink = settings_with(self.flink_env)
        secrets = self.kafka.data_dir / "secrets"
        self.client_env = {
            "POOLSIGHT_KAFKA_BOOTSTRAP": self.kafka.kafka_bootstrap,
            "POOLSIGHT_KAFKA_SECURITY": "",
            "POOLSIGHT_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "POOLSIGHT_KAFKA_SASL_MECHANISM": MECHANISM,
            "POOLSIGHT_KAFKA_USER": CLIENT_USER,
            "POOLSIGHT_KAFKA_PASSWORD_FILE": str(secrets / PASSWORD_NAME),
            "POOLSIGHT_KAFKA_CA_FILE": str(secrets / CERTIFICATE_NAME),
            "POOLSIGHT_FLINK_REST_URL": self.flink.flink_rest_url,
        }
        self.client = settings_with(self.client_env)
        self.group = f"cluster{uuid.uuid4().hex[:6]}"  # <group>-simulation, <group>-statistics

    def status(self, env: dict[str, str]) -> dict[str, dict[str, Any]]:
        r = poolsight("status", "--json", env=env, timeout=120)
        return {row["name"]: row for row in json.loads(r.stdout)["services"]}


def _up(env: dict[str, str], service: str, log_dir: str) -> None:
    r = poolsight("up", service, env=env, timeout=400)
    assert r.returncode == 0, f"poolsight up {service} failed:\n{r.stdout}\n{r.stderr}\nlogs in {log_dir}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        # The homes share no launcher lock, run, data or log folder, address or port, and the software
        # in the shared cache is installed (the session's `up`): they start side by side. Both are
        # awaited before a failure is raised, so `down` below never races an `up`.
        with ThreadPoolExecutor(2) as pool:
            ups = [
                pool.submit(_up, env, service, env["POOLSIGHT_LOG_DIR"])
                for env, service in ((c.kafka_env, "kafka"), (c.flink_env, "flink-taskmanager"))
            ]
        errors = [e for e in (f.exception() for f in ups) if e is not None]
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise BaseExceptionGroup("poolsight up failed in both homes", errors)
        yield c
    finally:
        poolsight("jobs", "cancel", "--all", "--no-savepoint", env=c.client_env, timeout=180)
        downs = [poolsight("down", env=env, timeout=300) for env in (c.flink_env, c.kafka_env)]
    failed = [f"{r.stdout}{r.stderr}" for r in downs if r.returncode != 0]
    assert not failed, f"poolsight down failed: {failed}"


def _admin(c: Cluster) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(kafka_access(c.client).client_config(**{"socket.timeout.ms": 10000}))


def _isr(c: Cluster) -> dict[str, list[int]]:
    """In-sync replicas of every partition of the product's topics."""
    meta = _admin(c).list_topics(timeout=10)
    return {
        f"{t.name}/{p}": sorted(part.isrs) for t in TOPICS for p, part in sorted(meta.topics[t.name].partitions.items())
    }


def _offsets(c: Cluster, group: str, topics: tuple[Topic, ...]) -> list[tuple[str, int, int]]:
    """(partition, the group's committed offset, end offset) on the cluster."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(kafka_access(c.client).client_config(**{"group.id": group, "enable.auto.commit": False}))
    try:
        parts = [TopicPartition(t.name, p) for t in topics for p in range(t.partitions)]
        return [
            (f"{tp.topic}/{tp.partition}", tp.offset, consumer.get_watermark_offsets(tp, timeout=10)[1])
            for tp in consumer.committed(parts, timeout=10)
        ]
    finally:
        consumer.close()


def _diagnosis(c: Cluster) -> str:
    """The jobs on the cluster, their checkpoints and lag, the brokers' ISRs, the TaskManagers'
    complaints and what went to dead_letter: shown when a wait ends short."""
    from poolsight.flink_jobs.submit import _rest, exceptions, list_jobs

    out: list[str] = []
    try:
        for j in list_jobs(c.client):
            counts = _rest(c.client, f"/jobs/{j['jid']}/checkpoints").get("counts")
            out.append(f"{j['name']} {j['state']} checkpoints {counts}: {exceptions(c.client, j['jid'])[:1200]}")
    except Exception as e:  # a diagnosis must not hide the failure it explains
        out.append(f"Flink: {e}")
    for attempt in (_offsets_text, _isr_text):
        try:
            out.append(attempt(c))
        except Exception as e:
            out.append(f"{attempt.__name__}: {e}")
    for i in range(1, TASKMANAGERS + 1):
        name = "flink-taskmanager" if i == 1 else f"flink-taskmanager-{i}"
        out += log_lines(name, re.compile("caught_up|ERROR|Exception"), 8, Path(c.flink_env["POOLSIGHT_LOG_DIR"]))
    dead = _query(
        "SELECT source, substr(reason, 1, 120), count(*) FROM iceberg.poolsight.dead_letter "
        "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5"
    )
    out += [f"dead letter {n}x {src}: {reason}" for src, reason, n in dead]
    return "\n".join(out)


def _offsets_text(c: Cluster) -> str:
    """For messages only: never raises (a diagnosis must not hide the failure it explains)."""
    from confluent_kafka import KafkaException

    try:
        lag = {p: end - done if done >= 0 else f"none of {end}" for p, done, end in _offsets(c, *_sim_group(c))}
    except KafkaException as exc:  # e.g. the group's coordinator is the broker just killed
        return f"{c.group}-simulation lag unknown: {exc}"
    return f"{c.group}-simulation lag: {lag}"


def _isr_text(c: Cluster) -> str:
    return f"in-sync replicas: {_isr(c)}"


def _sim_group(c: Cluster) -> tuple[str, tuple[Topic, ...]]:
    return f"{c.group}-simulation", (GETPAGE_TOPIC, ATTRIBUTES_TOPIC)


def test_every_node_runs_on_its_own_address(cluster: Cluster) -> None:
    c = cluster
    kafka = c.status(c.kafka_env)
    nodes = [node_name(i) for i in range(1, BROKERS + 1)]
    assert [kafka[n]["address"] for n in nodes] == c.kafka.kafka_bootstrap.split(",")
    assert all(kafka[n]["state"] == "healthy" and kafka[n]["pid"] for n in nodes), kafka
    assert len({kafka[n]["pid"] for n in nodes}) == BROKERS
    flink = c.status(c.flink_env)
    tms = ["flink-taskmanager", *(f"flink-taskmanager-{i}" for i in range(2, TASKMANAGERS + 1))]
    assert all(flink[n]["state"] == "healthy" for n in ("flink-jobmanager", *tms)), flink
    assert flink["flink-jobmanager"]["address"] == f"{FLINK_HOST}:{FLINK_PORTS['FLINK_REST']}"
    assert flink["postgres"]["kind"] == "external" and flink["postgres"]["state"] == "healthy"
    from poolsight.flink_jobs.submit import _rest

    overview = _rest(c.client, "/overview")
    assert (overview["taskmanagers"], overview["slots-total"]) == (TASKMANAGERS, TASKMANAGERS * c.flink.flink_slots)


def test_kafka_takes_only_tls_clients_that_log_in(cluster: Cluster) -> None:
    """The cluster runs with SASL_SSL: a plaintext client, a wrong password and a TLS client
    without the brokers' key on a broker's internal listener are refused; the product's login
    (as an external Kafka's settings give it) and the launcher's mutual TLS get in. Its
    password is in no command line and no log of its home."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    c = cluster
    good = kafka_access(c.client)

    def topics(conf: dict[str, Any]) -> int | str:
        try:
            return len(AdminClient({**conf, "log_level": 0}).list_topics(timeout=4).topics)
        except KafkaException as exc:
            return type(exc).__name__

    internal = internal_access(c.kafka, 2)
    no_cert = {"bootstrap.servers": internal.bootstrap, "security.protocol": "SSL"}
    no_cert["ssl.ca.location"] = str(internal.ca_file)
    refused = {
        "plaintext": topics({"bootstrap.servers": good.bootstrap}),
        "wrong password": topics({**good.client_config(), "sasl.password": "not-" + good.password()}),
        "no client certificate": topics(no_cert),
    }
    assert refused == dict.fromkeys(refused, "KafkaException")
    expected = len(AdminClient(internal.client_config()).list_topics(timeout=10).topics)
    assert topics(good.client_config()) == expected and expected >= len(TOPICS)
    password = good.password().encode()
    found = [pid for pid in os.listdir("/proc") if pid.isdigit() and password in _cmdline(pid)]
    found += [
        str(p) for p in Path(c.kafka_env["POOLSIGHT_LOG_DIR"]).rglob("*") if p.is_file() and password in p.read_bytes()
    ]
    assert found == []
    assert c.status(c.kafka_env)["kafka"]["security"] == "TLS, SCRAM-SHA-512; brokers: mutual TLS"
    assert c.status(c.client_env)["kafka"]["security"] == "TLS, SCRAM-SHA-512"  # as an external Kafka


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def test_topics_have_three_replicas_and_need_two_in_sync(cluster: Cluster) -> None:
    from confluent_kafka.admin import ConfigResource, ResourceType  # type: ignore[attr-defined]

    admin = _admin(cluster)  # held: a destroyed client fails its pending futures
    meta = admin.list_topics(timeout=10)
    for t in TOPICS:
        parts = meta.topics[t.name].partitions
        assert len(parts) == t.partitions, t.name
        assert all(len(p.replicas) == 3 for p in parts.values()), (t.name, {i: p.replicas for i, p in parts.items()})
    futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, t.name) for t in TOPICS])
    for resource, future in futures.items():
        assert future.result(timeout=30)["min.insync.replicas"].value == "2", resource


def test_a_broker_killed_mid_stream_loses_nothing(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    r = poolsight(
        *SUBMIT, "--parallelism", str(PARALLELISM), "--group", c.group, "--fresh", env=c.client_env, timeout=600
    )
    assert r.returncode == 0, f"jobs submit on the cluster failed:\n{r.stdout}\n{r.stderr}"
    from poolsight.flink_jobs.submit import _rest

    for job_id in json.loads(r.stdout).values():
        vertices = _rest(c.client, f"/jobs/{job_id}")["vertices"]
        assert max(v["parallelism"] for v in vertices) == PARALLELISM, vertices
    # Started with Python workers on both TaskManagers (a checkpoint completed) before the stream
    # begins: on a loaded machine a slow start let the 80 s stream end before the jobs read it.
    deadline = time.monotonic() + 180
    for job_id in json.loads(r.stdout).values():
        while not (_rest(c.client, f"/jobs/{job_id}/checkpoints").get("counts") or {}).get("completed"):
            assert time.monotonic() < deadline, f"job {job_id} completed no checkpoint in 180 s:\n" + _diagnosis(c)
            time.sleep(1)
    member = f"B{uuid.uuid4().hex[:6].upper()}"
    generate(member, tmp_path, duration=DURATION)  # the trace, same seed, to files
    counted = truth(tmp_path / "trace.csv")
    gen = subprocess.Popen(
        [*POOLSIGHT, "generate", "day-posting", "--members", member, "--seed", "7", "--duration", str(DURATION),
         "--event-rate", "8000", "--rate", str(RATE)],
        cwd=ROOT,
        env={**os.environ, **c.client_env},
    )  # fmt: skip
    try:
        # The jobs read from the cluster and a checkpoint committed their offsets: mid-stream.
        deadline = time.monotonic() + 120
        while not any(done > 0 for _, done, _ in _offsets(c, *_sim_group(c))):
            assert time.monotonic() < deadline, "the jobs committed nothing in 120 s:\n" + _diagnosis(c)
            assert gen.poll() is None, f"the generator ended ({gen.returncode}) before the jobs read anything"
            time.sleep(1)
        assert gen.poll() is None, "the generator finished before the kill: not the middle of the stream"
        # The leader of the getpage topic's first partition (each broker leads some partitions).
        leader = _admin(c).list_topics(timeout=10).topics[GETPAGE_TOPIC.name].partitions[0].leader
        victim = node_name(leader)
        pid = c.status(c.kafka_env)[victim]["pid"]
        before = _offsets_text(c)  # asked before the kill: the victim may be the group's coordinator
        os.kill(pid, signal.SIGKILL)
        print(f"killed {victim} (node {leader}, PID {pid}) at offsets {before}")
        time.sleep(DOWN_SECONDS)
        assert c.status(c.kafka_env)[victim]["state"] == "stopped"
        _up(c.kafka_env, "kafka", c.kafka_env["POOLSIGHT_LOG_DIR"])
        assert gen.wait(timeout=300) == 0, "the generator failed: a record was not acknowledged"
    finally:
        if gen.poll() is None:
            gen.kill()
    deadline = time.monotonic() + 120
    while any(len(isr) < 3 for isr in _isr(c).values()):  # the restarted broker caught up
        assert time.monotonic() < deadline, "the restarted broker never rejoined every ISR:\n" + _diagnosis(c)
        time.sleep(2)
    got = _wait_getpages(member, counted, timeout=300)
    assert got == counted, f"in Iceberg {got}, sent {counted}:\n" + _diagnosis(c)
    dead = _query("SELECT count(*) FROM iceberg.poolsight.dead_letter WHERE source LIKE ?", (f"{member}%",))
    assert dead == [[0]], dead
    _assert_each_pane_once(member, counted)
