"""A local cluster: [kafka].brokers KRaft nodes and [flink].taskmanagers TaskManagers. The default
(one of each) is exactly the stack as it always was; more are nodes of their own (names, ports,
folders), started together and stopped together. No service runs here."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from poolsight import bootstrap, launcher
from poolsight.infra import flink_service, kafka_service
from poolsight.infra.config import DEFAULT_PORTS, ConfigError, Settings, load_settings
from poolsight.infra.install import Installed
from poolsight.infra.kafka_access import KafkaAccess
from poolsight.infra.kafka_service import kafka_server_properties
from poolsight.infra.process import Started
from poolsight.infra.services import SERVICES, Launch, Service, Unhealthy, registry_options, services_for
from tests.infra.isolated import isolated_env, settings_with  # noqa: F401 (isolated_env: autouse here)


def _names(services: tuple[Service, ...] | list[Service]) -> list[str]:
    return [svc.name for svc in services]


# ---------------------------------------------------------------- the default is what it was


def test_the_default_is_one_node_of_each_exactly_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch)
    assert (s.kafka_brokers, s.flink_taskmanagers) == (1, 1)
    assert s.ports == DEFAULT_PORTS and s.kafka_bootstrap == "127.0.0.1:9092"
    assert services_for(s) is SERVICES
    assert _names(launcher.stack(s)) == [
        "postgres",
        "kafka",
        "registry",
        "flink-jobmanager",
        "flink-taskmanager",
        "trino",
        "dashboard",
        "alerts",
        "advice",
        "maintenance",
    ]
    assert all(svc.group == "" for svc in SERVICES)
    kafka = SERVICES[1]
    assert (kafka.ports, kafka.address(s), kafka.start_timeout) == (
        ("kafka", "kafka_controller", "kafka_internal"),
        "127.0.0.1:9092",
        90,
    )
    data = s.data_dir / "kafka"
    assert kafka_server_properties(s) == (
        "process.roles=broker,controller\n"
        "node.id=1\n"
        "controller.quorum.voters=1@127.0.0.1:9093\n"
        "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"
        "advertised.listeners=PLAINTEXT://127.0.0.1:9092\n"
        "controller.listener.names=CONTROLLER\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        f"log.dirs={data}\n"
        "num.partitions=4\n"
        "offsets.topic.replication.factor=1\n"
        "transaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\n"
        "share.coordinator.state.topic.replication.factor=1\n"
        "share.coordinator.state.topic.min.isr=1\n"
        "group.initial.rebalance.delay.ms=0\n"
        "auto.create.topics.enable=false\n"
        "message.max.bytes=8388608\n"
    )


def test_the_single_taskmanager_starts_as_before(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    s = settings_with(monkeypatch)
    monkeypatch.setattr(flink_service, "flink_env", lambda *a: {})
    launch = flink_service.prepare_flink_taskmanager(s, _installed(tmp_path))
    # As before but for its resource id, new at every start: its health looks for it.
    rid = (s.run_dir / "flink" / "flink-taskmanager.resource-id").read_text()
    assert rid.startswith("flink-taskmanager-")
    assert launch.command == [
        "bash",
        str(tmp_path / "flink" / "bin" / "taskmanager.sh"),
        "start-foreground",
        f"-Dtaskmanager.resource-id={rid}",
    ]
    assert launch.cwd == s.run_dir / "flink"
    again = flink_service.prepare_flink_taskmanager(s, _installed(tmp_path))
    assert again.command[-1] != launch.command[-1]


def _installed(tmp_path: Path) -> Installed:
    return Installed(None, None, None, None, tmp_path / "lib", tmp_path / "flink", None, tmp_path / "assets")


# ---------------------------------------------------------------- settings


def test_nodes_from_the_file_then_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text("[kafka]\nbrokers = 3\n[flink]\ntaskmanagers = 4\n")
    s = load_settings()
    assert (s.kafka_brokers, s.flink_taskmanagers) == (3, 4)
    monkeypatch.setenv("POOLSIGHT_FLINK_TASKMANAGERS", "2")
    assert load_settings().flink_taskmanagers == 2


def test_brokers_get_ports_derived_from_the_configured_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(
        monkeypatch,
        KAFKA_BROKERS="3",
        BIND_HOST="127.0.0.2",
        KAFKA_PORT="29092",
        KAFKA_CONTROLLER_PORT="29093",
        KAFKA_INTERNAL_PORT="29094",
    )
    assert {k: v for k, v in s.ports.items() if k.startswith("kafka")} == {
        "kafka": 29092,
        "kafka_controller": 29093,
        "kafka_internal": 29094,
        "kafka_2": 29102,
        "kafka_controller_2": 29103,
        "kafka_internal_2": 29104,
        "kafka_3": 29112,
        "kafka_controller_3": 29113,
        "kafka_internal_3": 29114,
    }
    assert s.kafka_bootstrap == "127.0.0.2:29092,127.0.0.2:29102,127.0.0.2:29112"
    assert "-Dapicurio.kafkasql.bootstrap.servers=" + s.kafka_bootstrap in registry_options(s)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"POOLSIGHT_KAFKA_BROKERS": "0"}, "POOLSIGHT_KAFKA_BROKERS / [kafka].brokers: '0' is not a whole number"),
        ({"POOLSIGHT_KAFKA_BROKERS": "three"}, "'three' is not a whole number from 1 to 9"),
        ({"POOLSIGHT_KAFKA_BROKERS": "10"}, "'10' is not a whole number"),
        ({"POOLSIGHT_FLINK_TASKMANAGERS": "1.5"}, "POOLSIGHT_FLINK_TASKMANAGERS / [flink].taskmanagers: '1.5'"),
        # broker 2's listener would land on the registry's port
        ({"POOLSIGHT_KAFKA_BROKERS": "2", "POOLSIGHT_REGISTRY_PORT": "9102"}, "ports configured twice: [9102]"),
        ({"POOLSIGHT_KAFKA_BROKERS": "3", "POOLSIGHT_KAFKA_PORT": "65520"}, "broker 3's port 65540 is out of range"),
    ],
)
def test_bad_node_settings_name_the_setting(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError, match=__import__("re").escape(message)):
        load_settings()


def test_a_bad_count_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "poolsight.toml").write_text("[kafka]\nbrokers = true\n")
    with pytest.raises(ConfigError, match=r"\[kafka\]\.brokers: True"):
        load_settings()


def test_an_external_kafka_or_flink_stays_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(
        monkeypatch,
        KAFKA_BROKERS="3",
        FLINK_TASKMANAGERS="2",
        KAFKA_BOOTSTRAP="b1:9092,b2:9092",
        FLINK_REST_URL="http://flink:8081",
    )
    assert s.ports == DEFAULT_PORTS and s.kafka_bootstrap == "b1:9092,b2:9092"
    assert services_for(s) is SERVICES


# ---------------------------------------------------------------- nodes


def test_three_brokers_and_two_taskmanagers_are_nodes_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3", FLINK_TASKMANAGERS="2")
    services = launcher.stack(s)
    assert _names(services) == [
        "postgres",
        "kafka",
        "kafka-2",
        "kafka-3",
        "registry",
        "flink-jobmanager",
        "flink-taskmanager",
        "flink-taskmanager-2",
        "trino",
        "dashboard",
        "alerts",
        "advice",
        "maintenance",
    ]
    by = {svc.name: svc for svc in services}
    assert [by[n].address(s) for n in ("kafka", "kafka-2", "kafka-3")] == [
        "127.0.0.1:9092",
        "127.0.0.1:9102",
        "127.0.0.1:9112",
    ]
    assert by["kafka-3"].ports == ("kafka_3", "kafka_controller_3", "kafka_internal_3")
    assert {by[n].group for n in ("kafka", "kafka-2", "kafka-3")} == {"kafka"}
    assert {by[n].group for n in ("flink-taskmanager", "flink-taskmanager-2")} == {"flink-taskmanager"}
    assert by["flink-taskmanager-2"].depends == ("flink-jobmanager",) and by["flink-taskmanager-2"].ports == ()
    assert by["registry"].group == "" and by["postgres"] is SERVICES[0]
    # A cluster is wanted whole: any node brings the others, a dependant brings them all.
    assert _names(launcher.embedded_services(s, ["kafka-2"])) == ["kafka", "kafka-2", "kafka-3"]
    assert _names(launcher.embedded_services(s, ["registry"])) == ["kafka", "kafka-2", "kafka-3", "registry"]
    assert _names(launcher.embedded_services(s, ["flink-taskmanager"])) == [
        "postgres",
        "flink-jobmanager",
        "flink-taskmanager",
        "flink-taskmanager-2",
    ]


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_each_broker_is_a_voter_with_its_own_ports_and_storage(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3", BIND_HOST="127.0.0.2")
    nodes = {i: _props(kafka_server_properties(s, i)) for i in (1, 2, 3)}
    voters = "1@127.0.0.2:9093,2@127.0.0.2:9103,3@127.0.0.2:9113"
    for i, p in nodes.items():
        port = 9092 + 10 * (i - 1)
        assert p["node.id"] == str(i) and p["process.roles"] == "broker,controller"
        assert p["controller.quorum.voters"] == voters
        assert p["listeners"] == f"PLAINTEXT://127.0.0.2:{port},CONTROLLER://127.0.0.2:{port + 1}"
        assert p["advertised.listeners"] == f"PLAINTEXT://127.0.0.2:{port}"
        assert p["log.dirs"] == str(s.data_dir / ("kafka" if i == 1 else f"kafka-{i}"))
        for key in ("offsets.topic", "transaction.state.log", "share.coordinator.state.topic"):
            assert p[f"{key}.replication.factor"] == "3"
        assert p["transaction.state.log.min.isr"] == p["share.coordinator.state.topic.min.isr"] == "2"
        assert (p["default.replication.factor"], p["min.insync.replicas"]) == ("3", "2")
    two = _props(kafka_server_properties(settings_with(monkeypatch, KAFKA_BROKERS="2"), 2))
    assert (two["offsets.topic.replication.factor"], two["min.insync.replicas"]) == ("2", "1")


def _fake_storage_tool(calls: list[list[str]], fail_node: int | None = None) -> Any:
    """StorageTool stand-in: `random-uuid` answers an id, `format` writes meta.properties where
    the node's server.properties says."""

    def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        if "random-uuid" in cmd:
            return subprocess.CompletedProcess(cmd, 0, f"id-{len(calls)}\n", "")
        props = _props(Path(cmd[cmd.index("-c") + 1]).read_text())
        if int(props["node.id"]) == fail_node:
            return subprocess.CompletedProcess(cmd, 1, "", "boom")
        Path(props["log.dirs"], "meta.properties").write_text(
            f"cluster.id={cmd[cmd.index('-t') + 1]}\nnode.id={props['node.id']}\n"
        )
        return subprocess.CompletedProcess(cmd, 0, "", "")

    return run


def test_the_nodes_are_formatted_together_once(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3")
    calls: list[list[str]] = []
    monkeypatch.setattr("subprocess.run", _fake_storage_tool(calls))
    kafka_service.format_storage(s, "java", "cp/*", {})
    ids = {(s.data_dir / d / "meta.properties").read_text().splitlines()[0] for d in ("kafka", "kafka-2", "kafka-3")}
    assert ids == {"cluster.id=id-1"} and len(calls) == 4  # one id, three formats
    kafka_service.format_storage(s, "java", "cp/*", {})
    assert len(calls) == 4  # formatted: nothing to do
    (s.data_dir / "kafka-2" / "meta.properties").unlink()  # a node's storage lost
    with pytest.raises(Unhealthy, match=r"does not match \[kafka\]\.brokers = 3"):
        kafka_service.format_storage(s, "java", "cp/*", {})
    one = settings_with(monkeypatch, KAFKA_BROKERS="1")
    with pytest.raises(Unhealthy, match="kafka-3"):  # a larger cluster's node is still there
        kafka_service.format_storage(one, "java", "cp/*", {})


def test_a_failed_format_leaves_no_node_formatted(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3")
    monkeypatch.setattr("subprocess.run", _fake_storage_tool([], fail_node=2))
    with pytest.raises(Unhealthy, match="boom"):
        kafka_service.format_storage(s, "java", "cp/*", {})
    assert not list(s.data_dir.glob("kafka*/meta.properties"))


class _Meta:
    def __init__(self, brokers: list[int]) -> None:
        self.brokers = {b: object() for b in brokers}
        self.topics = {"t": object()}


def test_a_broker_is_healthy_once_it_is_a_live_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3")
    asked: list[str] = []

    def metadata(access: KafkaAccess) -> _Meta:
        asked.append(access.bootstrap)
        return _Meta([1, 3])

    monkeypatch.setattr(kafka_service, "_metadata", metadata)
    assert kafka_service.health_kafka_node(s, 3) == "node 3, 2 of 3 brokers live, 1 topics"
    with pytest.raises(Unhealthy, match=r"node 2 answers but is no live broker yet \(live: \[1, 3\]\)"):
        kafka_service.health_kafka_node(s, 2)
    assert asked == ["127.0.0.1:9112", "127.0.0.1:9102"]  # each node on its own listener


def test_taskmanagers_get_their_own_folder_and_resource_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    s = settings_with(monkeypatch, FLINK_TASKMANAGERS="2")
    monkeypatch.setattr(flink_service, "flink_env", lambda *a: {})
    launch = flink_service.prepare_flink_taskmanager(s, _installed(tmp_path), 2)
    rid = (s.run_dir / "flink" / "flink-taskmanager-2.resource-id").read_text()
    assert rid.startswith("flink-taskmanager-2-")
    assert launch.command[-1] == f"-Dtaskmanager.resource-id={rid}"
    assert launch.cwd == s.run_dir / "flink" / "flink-taskmanager-2" and launch.cwd.is_dir()
    again = flink_service.prepare_flink_taskmanager(s, _installed(tmp_path), 2)
    assert again.command[-1] != launch.command[-1]  # a new id per start
    answer = {"taskmanagers": [{"id": rid, "freeSlots": 1, "slotsNumber": 2}]}
    monkeypatch.setattr(flink_service, "http_get", lambda url: json.dumps(answer).encode())
    with pytest.raises(Unhealthy, match="is not registered with the JobManager"):  # the one it replaced
        flink_service.health_flink_taskmanager_node(s, 2)
    answer["taskmanagers"][0]["id"] = again.command[-1].split("=", 1)[1]
    assert "1/2 slots free, 1 of 2 TaskManagers registered" in flink_service.health_flink_taskmanager_node(s, 2)
    with pytest.raises(Unhealthy, match="was not started here"):
        flink_service.health_flink_taskmanager_node(s, 1)


# ---------------------------------------------------------------- topics


class _Future:
    def result(self) -> None:
        return None


class _Admin:
    created: ClassVar[list[Any]] = []

    def __init__(self, conf: dict[str, Any]) -> None:
        pass

    def list_topics(self, timeout: float) -> Any:
        return _Meta([])

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, _Future]:
        _Admin.created = topics
        return {t.topic: _Future() for t in topics}


@pytest.mark.parametrize(
    ("env", "replication", "min_isr"),
    [
        ({}, 1, None),  # as before
        ({"KAFKA_BROKERS": "2"}, 2, None),
        ({"KAFKA_BROKERS": "3"}, 3, "2"),
        ({"KAFKA_BROKERS": "5"}, 3, "2"),
        ({"KAFKA_BOOTSTRAP": "b:9092", "KAFKA_BROKERS": "3"}, -1, None),  # the cluster's defaults
    ],
)
def test_topics_are_replicated_on_a_cluster(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], replication: int, min_isr: str | None
) -> None:
    import confluent_kafka.admin

    from poolsight.names import TOPICS

    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", _Admin)
    bootstrap.bootstrap_kafka(settings_with(monkeypatch, **env))
    assert [t.topic for t in _Admin.created] == [t.name for t in TOPICS]
    for new in _Admin.created:
        assert new.replication_factor == replication
        assert new.config.get("min.insync.replicas") == min_isr
        assert set(new.config) == {"retention.ms", "max.message.bytes"} | (
            {"min.insync.replicas"} if min_isr else set()
        )


# ---------------------------------------------------------------- up and down


def _fake_cluster(monkeypatch: pytest.MonkeyPatch, running: set[str]) -> list[str]:
    """Three fake brokers (a quorum: healthy only once two run) and a registry on them; `running`
    holds what runs. Returns the events: spawn X, healthy X, bootstrap X."""
    events: list[str] = []

    def prepare(s: Settings, inst: Installed) -> Launch:
        return Launch(["true"], {}, Path())

    def health(name: str) -> Any:
        def check(s: Settings) -> str:
            quorum = len({"kafka", "kafka-2", "kafka-3"} & running) >= 2
            if name not in running or not quorum:
                raise Unhealthy(f"{name}: no quorum")
            events.append(f"healthy {name}")
            return "ok"

        return check

    brokers = [Service(n, (), (), 0.5, prepare, health(n), group="kafka") for n in ("kafka", "kafka-2", "kafka-3")]
    registry = Service("registry", (), ("kafka",), 0.5, prepare, health("registry"))
    monkeypatch.setattr(launcher, "stack", lambda s: (*brokers, registry))
    monkeypatch.setattr(launcher, "install_all", lambda s: None)
    monkeypatch.setattr(launcher, "BOOTSTRAP", {"kafka": lambda s: events.append("bootstrap kafka")})
    # Nothing here is a real process: the launcher's process calls answer from `running`.
    monkeypatch.setattr(launcher, "read_started", lambda run_dir, name: Started(os.getpid(), 0, [name]))
    monkeypatch.setattr(launcher, "alive", lambda started: started is not None and started.command[0] in running)
    monkeypatch.setattr(launcher, "clean_leftovers", lambda started: [])
    monkeypatch.setattr(launcher, "stop_many", lambda run_dir, names: pytest.fail(f"stopped {names}"))

    def spawn(name: str, *a: Any, **k: Any) -> None:
        events.append(f"spawn {name}")
        running.add(name)

    monkeypatch.setattr(launcher, "spawn", spawn)
    return events


def test_up_starts_every_broker_before_it_waits_and_sets_up_the_cluster_once(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _fake_cluster(monkeypatch, set())
    launcher.up(load_settings(), ["registry"])
    assert events[:3] == ["spawn kafka", "spawn kafka-2", "spawn kafka-3"]
    assert events.index("healthy kafka-3") < events.index("bootstrap kafka") < events.index("spawn registry")
    assert events.count("bootstrap kafka") == 1


def test_up_restarts_only_the_broker_that_died(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _fake_cluster(monkeypatch, {"kafka", "kafka-3", "registry"})
    launcher.up(load_settings(), ["kafka"])
    assert [e for e in events if e.startswith("spawn")] == ["spawn kafka-2"]
    assert events[0] == "spawn kafka-2"  # before the first node is waited for


def test_down_stops_a_clusters_nodes_together(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings_with(monkeypatch, KAFKA_BROKERS="3", FLINK_TASKMANAGERS="2")
    s.run_dir.mkdir(parents=True)
    (s.run_dir / "flink-taskmanager-3.pid.json").write_text("{}")  # from when there were three
    (s.run_dir / "postgres-2.pid.json").write_text("{}")  # no node name: not ours to guess
    batches: list[list[str]] = []

    def stop_many(run_dir: Path, names: list[str], timeout: float = 30.0) -> list[str]:
        batches.append(list(names))
        return list(names)

    monkeypatch.setattr(launcher, "stop_many", stop_many)
    launcher.down(s)
    assert batches == [
        ["flink-taskmanager-3"],
        ["maintenance"],
        ["advice"],
        ["alerts"],
        ["dashboard"],
        ["trino"],
        ["flink-taskmanager-2", "flink-taskmanager"],
        ["flink-jobmanager"],
        ["registry"],
        ["kafka-3", "kafka-2", "kafka"],
        ["postgres"],
    ]
