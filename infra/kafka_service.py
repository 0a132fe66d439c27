"""The embedded Kafka: one KRaft node, or a local cluster of [kafka].brokers nodes.

Each node is broker and controller (combined mode), node ids 1..N, every one a voter of the
static quorum (controller.quorum.voters). Node 1 is the service `kafka` on the configured ports,
with its data in <data>/kafka and its configuration in <run>/kafka; node i is `kafka-i`, on the
ports derived from those (config.KAFKA_PORT_STEP), with <data>/kafka-i, <run>/kafka-i and its
own log and PID file. A cluster's nodes are formatted together, once, with one cluster id.
With [kafka].security = sasl_ssl the client listener is SASL_SSL (SCRAM-SHA-512, the generated
client user: kafka_secrets.py), and brokers and controllers meet over mutual TLS on the internal
and controller listeners; the health check sets the client user's credentials over the internal
listener when the client cannot log in yet (a new cluster, a new password).
Topics get min(3, N) replicas and from 3 brokers on min.insync.replicas 2: the producers ask
acks=all, so a record is acknowledged only once two brokers hold it and losing one broker
(kill -9) loses nothing while writes go on.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .config import Settings, kafka_port_keys
from .endpoints import hostport
from .install import Installed
from .java import find_java
from .kafka_access import KafkaAccess, internal_access, kafka_access
from .kafka_secrets import CLIENT_USER, SCRAM_ITERATIONS, kafka_secured, kafka_tls
from .service_base import CONF_DIR, JVM_PRETOUCH, Launch, Service, Unhealthy, base_env, fresh_dir, need
from .versions import pins

MAX_REPLICATION = 3


def replication_factor(brokers: int) -> int:
    """Replicas of every topic on an embedded cluster of `brokers` nodes."""
    return min(MAX_REPLICATION, brokers)


def min_insync_replicas(brokers: int) -> int:
    """2 from 3 brokers on (one can be lost while writes go on); below that every replica is needed."""
    return 2 if brokers >= MAX_REPLICATION else 1


def node_name(node: int) -> str:
    return "kafka" if node == 1 else f"kafka-{node}"


def node_address(s: Settings, node: int) -> str:
    return hostport(s.bind_host, s.ports[kafka_port_keys(node)[0]])


def _controller_address(s: Settings, node: int) -> str:
    return hostport(s.bind_host, s.ports[kafka_port_keys(node)[1]])


def _log_dir(s: Settings, node: int) -> Path:
    return s.data_dir / node_name(node)


def _conf_file(s: Settings, node: int) -> Path:
    return s.run_dir / node_name(node) / "server.properties"


def kafka_server_properties(s: Settings, node: int = 1) -> str:
    """Node `node`'s server.properties (KRaft, listening on the bind host); one node alone is
    configured exactly as the single broker always was."""
    n = s.kafka_brokers
    rf, isr = replication_factor(n), min_insync_replicas(n)
    voters = ",".join(f"{i}@{_controller_address(s, i)}" for i in range(1, n + 1))
    lines = [
        "process.roles=broker,controller",
        f"node.id={node}",
        f"controller.quorum.voters={voters}",
        *(_secured_listeners(s, node) if kafka_secured(s) else _plain_listeners(s, node)),
        f"log.dirs={_log_dir(s, node)}",
        "num.partitions=4",
        f"offsets.topic.replication.factor={rf}",
        f"transaction.state.log.replication.factor={rf}",
        f"transaction.state.log.min.isr={isr}",
        f"share.coordinator.state.topic.replication.factor={rf}",
        f"share.coordinator.state.topic.min.isr={isr}",
        "group.initial.rebalance.delay.ms=0",
        "auto.create.topics.enable=false",
        "message.max.bytes=8388608",
    ]
    if n > 1:  # topics created without these (the registry's journal) are replicated too
        lines += [f"default.replication.factor={rf}", f"min.insync.replicas={isr}"]
    return "\n".join([*lines, ""])


def _plain_listeners(s: Settings, node: int) -> list[str]:
    broker, controller = node_address(s, node), _controller_address(s, node)
    return [
        f"listeners=PLAINTEXT://{broker},CONTROLLER://{controller}",
        f"advertised.listeners=PLAINTEXT://{broker}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    ]


def _secured_listeners(s: Settings, node: int) -> list[str]:
    """Clients: SASL_SSL with SCRAM (no password here: the credentials live in the cluster's
    metadata). Brokers, controllers and the launcher: mutual TLS with the brokers' own key."""
    broker, controller = node_address(s, node), _controller_address(s, node)
    internal = internal_access(s, node).bootstrap
    keystore, certificate = kafka_tls(s)
    return [
        f"listeners=SASL_SSL://{broker},INTERNAL://{internal},CONTROLLER://{controller}",
        f"advertised.listeners=SASL_SSL://{broker},INTERNAL://{internal}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=INTERNAL",
        "listener.security.protocol.map=SASL_SSL:SASL_SSL,INTERNAL:SSL,CONTROLLER:SSL",
        "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type=PEM",
        f"ssl.keystore.location={keystore}",
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={certificate}",
        "listener.name.internal.ssl.client.auth=required",
        "listener.name.controller.ssl.client.auth=required",
    ]


def _cluster_id(log_dir: Path) -> str | None:
    """The cluster id a node's storage was formatted with; None when it is not formatted."""
    try:
        text = (log_dir / "meta.properties").read_text()
    except FileNotFoundError:
        return None
    return next((ln.split("=", 1)[1].strip() for ln in text.splitlines() if ln.startswith("cluster.id=")), "")


def _stray_nodes(s: Settings) -> list[Path]:
    """Formatted storage of nodes beyond [kafka].brokers (a cluster once configured larger)."""
    out = []
    for path in sorted(s.data_dir.glob("kafka-*")):
        m = re.fullmatch(r"kafka-(\d+)", path.name)
        if m and int(m[1]) > s.kafka_brokers and _cluster_id(path) is not None:
            out.append(path)
    return out


def format_storage(s: Settings, java: str, classpath: str, env: dict[str, str]) -> None:
    """Format every node's storage with one new cluster id, unless all already are. A cluster
    formatted for another number of nodes is refused: its voters and replicas would not match."""
    n = s.kafka_brokers
    ids = {i: _cluster_id(_log_dir(s, i)) for i in range(1, n + 1)}
    formatted = {i: c for i, c in ids.items() if c is not None}
    stray = _stray_nodes(s)
    if stray or 0 < len(formatted) < n or len(set(formatted.values())) > 1:
        raise Unhealthy(
            f"Kafka's storage in {s.data_dir} does not match [kafka].brokers = {n} (POOLSIGHT_KAFKA_BROKERS): "
            f"formatted: {[str(_log_dir(s, i)) for i in formatted] + [str(p) for p in stray]}, "
            f"cluster ids {sorted(set(formatted.values()))}. A cluster's nodes are formatted together: set the "
            f"number back, or stop the stack and remove {s.data_dir}/kafka* to start Kafka over (its data goes too)"
        )
    if formatted:
        return
    tool = [java, "-cp", classpath, "kafka.tools.StorageTool"]
    new_id = subprocess.run([*tool, "random-uuid"], capture_output=True, text=True, check=True, env=env)
    cluster_id = new_id.stdout.strip().splitlines()[-1]
    done: list[Path] = []
    try:
        for i in range(1, n + 1):
            props = _conf_file(s, i)
            fresh_dir(props.parent)
            props.write_text(kafka_server_properties(s, i))
            fresh_dir(_log_dir(s, i))
            proc = subprocess.run(
                [*tool, "format", "-t", cluster_id, "-c", str(props)], capture_output=True, text=True, env=env
            )
            if proc.returncode != 0:
                raise Unhealthy(f"formatting Kafka storage failed: {proc.stdout}{proc.stderr}")
            done.append(_log_dir(s, i))
    except BaseException:
        for log_dir in done:  # all or none: the next `up` formats the whole cluster again
            (log_dir / "meta.properties").unlink(missing_ok=True)
        raise


def prepare_kafka(s: Settings, inst: Installed, node: int = 1) -> Launch:
    java = find_java(exact=int(pins()["java"]["flink"]), purpose="Kafka")
    props = _conf_file(s, node)
    fresh_dir(props.parent)
    props.write_text(kafka_server_properties(s, node))
    classpath = f"{need(inst.kafka_lib, 'kafka')}/*"
    env = base_env(java.home)
    format_storage(s, java.java, classpath, env)
    return Launch(
        command=[
            java.java,
            "-Xms768m",
            "-Xmx768m",
            *JVM_PRETOUCH,
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={CONF_DIR / 'kafka-log4j2.properties'}",
            f"-Dkafka.logs.dir={s.log_dir}",
            "-cp",
            classpath,
            "kafka.Kafka",
            str(props),
        ],
        env=env,
        cwd=props.parent,
    )


def _metadata(access: KafkaAccess, timeout: float = 5):  # type: ignore[no-untyped-def]
    # lazy: `status` and `down` import the services and need no Kafka client
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    try:
        # log_level 0: a refused connection is the answer here, not something to print.
        admin = AdminClient(access.client_config(**{"socket.timeout.ms": 3000, "log_level": 0}))
        return admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise Unhealthy(f"Kafka metadata request: {exc}") from exc


def _client_logs_in(s: Settings) -> None:
    """The product's client user logs in on the client listener; where it cannot (a cluster
    new, or a password file new since), its SCRAM credentials are set over the internal
    listener, and the next check must find the login working."""
    try:
        _metadata(kafka_access(s), timeout=3)
        return
    except Unhealthy:
        pass
    # lazy: as above
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(internal_access(s).client_config(**{"socket.timeout.ms": 3000, "log_level": 0}))
    upsert = UserScramCredentialUpsertion(
        CLIENT_USER,
        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
        kafka_access(s).password().encode(),
    )
    try:
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=10)
    except Exception as exc:  # a KafkaException, or the future's own timeout
        raise Unhealthy(f"setting the SCRAM credentials of {CLIENT_USER!r}: {exc}") from exc
    raise Unhealthy(f"the SCRAM credentials of {CLIENT_USER!r} were set; its login is checked next")


def _access(s: Settings, node: int | None = None) -> KafkaAccess:
    """What a health check connects with: the embedded SASL_SSL brokers over their internal
    listener (the client's login is checked on its own), else as the product's clients do."""
    if kafka_secured(s):
        return internal_access(s, node or 1)
    return kafka_access(s) if node is None else KafkaAccess(node_address(s, node))


def health_kafka(s: Settings) -> str:
    meta = _metadata(_access(s))
    if not meta.brokers:
        raise Unhealthy("Kafka metadata: no brokers")
    if kafka_secured(s):
        _client_logs_in(s)
    return f"{len(meta.brokers)} broker, {len(meta.topics)} topics"


def health_kafka_node(s: Settings, node: int) -> str:
    """Node `node` of a cluster answers on its own listener and is a live broker (registered
    with the controller quorum, not fenced)."""
    meta = _metadata(_access(s, node))
    if node not in meta.brokers:
        raise Unhealthy(f"node {node} answers but is no live broker yet (live: {sorted(meta.brokers)})")
    if kafka_secured(s) and node == 1:
        _client_logs_in(s)
    return f"node {node}, {len(meta.brokers)} of {s.kafka_brokers} brokers live, {len(meta.topics)} topics"


def kafka_endpoint(s: Settings) -> str:
    return s.kafka_bootstrap


def kafka_node(node: int, brokers: int) -> Service:
    """The service running node `node` of `brokers`; a single node is `kafka` as it always was."""
    if brokers == 1:
        return Service("kafka", kafka_port_keys(1), (), 90, prepare_kafka, health_kafka, kafka_endpoint)

    def prepare(s: Settings, inst: Installed) -> Launch:
        return prepare_kafka(s, inst, node)

    def health(s: Settings) -> str:
        return health_kafka_node(s, node)

    # A quorum of JVMs starting together on a small machine: more time than one node.
    return Service(node_name(node), kafka_port_keys(node), (), 120, prepare, health, kafka_endpoint, group="kafka")
