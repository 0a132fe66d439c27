"""docker-compose.yml against the native launcher, without containers: each image's file list (its
Dockerfile's COPY/ADD lines and .dockerignore), build arguments against infra/versions.toml, ports
and addresses against the settings, Kafka's listeners, the init service's bootstrap, and the
generated configuration files. `make compose-check` runs the stack itself (bench/compose_check.py)."""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from poolsight.cli import _cmd_up, build_parser
from poolsight.infra import compose
from poolsight.infra.config import (
    CATALOG_DATABASE,
    CATALOG_ROLE,
    DEFAULT_PORTS,
    KAFKA_PORT_STEP,
    load_settings,
    port_variable,
)
from poolsight.infra.container import ROLES, container_properties
from poolsight.infra.kafka_service import kafka_server_properties
from poolsight.infra.services import SERVICES
from poolsight.infra.versions import pins
from poolsight.launcher import embedded_services

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_FOLDERS = sorted(set(PYPROJECT["tool"]["setuptools"]["package-dir"].values()))
NOT_IN_WHEEL = ("bench", "tests")
# poolsight's own Python services
PYTHON_SERVICES = ("dashboard", "alerts", "advice", "maintenance")
FLINK_SERVICES = ("flink-jobmanager", "flink-taskmanager", "init")
# Build arguments for a build behind a TLS-intercepting proxy (a CA bundle), never in compose.
PROXY_ARGS = ("PIP_CERT", "CARGO_HTTP_CAINFO", "SSL_CERT_FILE")
# compose service -> (DEFAULT_PORTS key, port inside the container)
PUBLISHED = {
    "postgres": ("postgres", DEFAULT_PORTS["postgres"]),
    "kafka": ("kafka", compose.KAFKA_HOST_CONTAINER_PORT),
    "registry": ("registry", DEFAULT_PORTS["registry"]),
    "flink-jobmanager": ("flink_rest", DEFAULT_PORTS["flink_rest"]),
    "trino": ("trino", DEFAULT_PORTS["trino"]),
    "dashboard": ("dashboard", DEFAULT_PORTS["dashboard"]),
}


def _load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / name).read_text())
    assert isinstance(data, dict)
    return data


def _compose() -> dict[str, Any]:
    return _load("docker-compose.yml")


def _cluster() -> dict[str, Any]:
    return _load("docker-compose.cluster.yml")


_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*)|:?\?[^}]*)?\}")


def _default(value: object) -> str:
    """A compose value with each ${VAR:-default} as its default (what runs when VAR is unset)."""
    return _VAR.sub(lambda m: m[2] or "", str(value))


# ------------------------------------------------------------------ each image's files


@dataclass
class Stage:
    name: str
    base: str
    args: dict[str, str] = field(default_factory=dict)
    sources: list[tuple[str, str]] = field(default_factory=list)  # (context path, image path)
    from_stages: list[str] = field(default_factory=list)  # COPY --from=<stage>
    declared: dict[str, str] = field(default_factory=dict)  # ARG name -> default in the Dockerfile


def _instructions(dockerfile: Path) -> list[str]:
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def _stages(dockerfile: Path, build_args: dict[str, str]) -> dict[str, Stage]:
    """The stages of a Dockerfile, with their COPY/ADD sources from the build context resolved
    with the build arguments (the ARG defaults when compose gives none)."""
    global_args: dict[str, str] = {}
    global_declared: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    current: Stage | None = None

    def expand(text: str, args: dict[str, str]) -> str:
        return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], m[0]), text)

    for line in _instructions(dockerfile):
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "ARG":
            key, _, value = rest.partition("=")
            args = current.args if current else global_args
            args[key] = build_args.get(key, value)
            (current.declared if current else global_declared)[key] = value
        elif op == "FROM":
            words = rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else f"stage{len(stages)}"
            base = expand(words[0], {**global_args})
            current = Stage(name, base, args=dict(global_args), declared=dict(global_declared))
            if base in stages:
                current.from_stages.append(base)
            stages[name] = current
        elif op in ("COPY", "ADD"):
            assert current is not None
            words = rest.split()
            flags = [w for w in words if w.startswith("--")]
            paths = [expand(w, current.args) for w in words if not w.startswith("--")]
            source_stage = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
            if source_stage is not None:
                current.from_stages.append(expand(source_stage, current.args))
                continue
            *sources, dest = paths
            current.sources += [(src.rstrip("/"), dest) for src in sources]
    return stages


def _needed(stages: dict[str, Stage], target: str) -> list[Stage]:
    """The target stage and every stage it is built from or copies from."""
    out: list[str] = []
    todo = [target]
    while todo:
        name = todo.pop()
        if name in stages and name not in out:
            out.append(name)
            todo += stages[name].from_stages
    return [stages[n] for n in out]


def _ignore_rules() -> list[tuple[bool, str]]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append((line.startswith("!"), line.lstrip("!").strip("/")))
    return rules


def _matches(pattern: str, path: str) -> bool:
    """Docker's .dockerignore matching: the pattern names the path or one of its parent folders
    (`**` any number of folders, `*` within one)."""
    regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    regex = regex.replace(r"\?", "[^/]")
    parts = path.split("/")
    return any(re.fullmatch(regex, "/".join(parts[:i])) for i in range(1, len(parts) + 1))


def _in_context(path: str, rules: list[tuple[bool, str]]) -> bool:
    included = True
    for negated, pattern in rules:
        if _matches(pattern, path):
            included = negated
    return included


def _context_files(source: str) -> list[str]:
    """The checkout's files under a COPY source that the build context holds."""
    rules = _ignore_rules()
    base = ROOT / source
    files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
    return [rel for p in files if _in_context(rel := p.relative_to(ROOT).as_posix(), rules)]


def _image_sources(service: str, services: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    build = (services or _compose()["services"])[service]["build"]
    args = {k: _default(v) for k, v in build.get("args", {}).items()}
    stages = _stages(ROOT / build["dockerfile"], args)
    target = build.get("target", list(stages)[-1])
    return [src for stage in _needed(stages, target) for src in stage.sources]


def test_the_context_keeps_out_what_no_image_needs() -> None:
    rules = _ignore_rules()
    for path in (".venv/bin/python", "var/log/kafka.log", "tests/infra/test_compose.py", "bench/chaos.py"):
        assert not _in_context(path, rules), path
    assert not _in_context(".cache/m2/org/x.jar", rules) and not _in_context(".cache/pip/x.whl", rules)
    assert not _in_context("simulator/kernel/target/release/libx.so", rules)
    assert not _in_context("infra/__pycache__/config.cpython-311.pyc", rules)
    assert _in_context("infra/config.py", rules) and _in_context(".cache/jars/kafka-4.3.1/kafka.jar", rules)


@pytest.mark.parametrize("service", ["dashboard", "flink-jobmanager", "init"])
def test_every_package_folder_is_in_the_poolsight_images(service: str) -> None:
    """`pip install /src` in the image builds what pyproject.toml maps: every folder of its
    package-dir must be copied whole to the same place (advice/ once was not); bench/ and tests/
    are not part of the package and stay out."""
    sources = _image_sources(service)
    copied = {src: dest for src, dest in sources}
    for folder in PACKAGE_FOLDERS:
        assert copied.get(folder) == f"/src/{folder}", f"{folder}/ is not copied to /src/{folder} for {service}"
        files = _context_files(folder)
        assert any(f.endswith(".py") for f in files), f"{folder}/: no sources in the build context"
    for extra in ("pyproject.toml", "README.md"):
        assert copied.get(extra) == "/src/", extra
    in_image = {f for src, _ in sources for f in _context_files(src)}
    for folder in NOT_IN_WHEEL:
        assert not any(f.split("/")[0] == folder for f in in_image), f"{folder}/ is in the {service} image"
    assert not any(f.endswith((".so", ".pyc")) or "/target/" in f for f in in_image)


def test_the_flink_image_carries_the_launchers_flink_jars() -> None:
    services = _compose()["services"]
    version = pins()["flink"]["version"]
    for name in FLINK_SERVICES:
        assert services[name]["build"]["target"] == "flink", name
        assert services[name]["image"] == f"poolsight/flink:{version}", name
        sources = dict(_image_sources(name))
        # infra/install.py flink_lib: maven_jars(f"flink-{version}-extra", ...) under .cache/jars
        assert sources[f".cache/jars/flink-{version}-extra"].endswith(f"/.cache/jars/flink-{version}-extra")
    for name in PYTHON_SERVICES:
        assert services[name]["build"]["target"] == "poolsight", name
        assert services[name]["image"] == f"poolsight/poolsight:{PYPROJECT['project']['version']}", name


def test_every_copied_path_is_in_the_build_context() -> None:
    """A COPY of something .dockerignore leaves out fails the build; the .cache/ ones are what
    `poolsight install` writes, named with the pinned versions."""
    p = pins()
    expected_cache = {
        "kafka": f".cache/jars/kafka-{p['kafka']['version']}",
        "registry": f".cache/apicurio-registry-{p['registry']['version']}",
        "trino": f".cache/downloads/trino-server-{p['trino']['version']}.tar.gz",
    }
    rules = _ignore_rules()
    for name in _compose()["services"]:
        sources = [src for src, _ in _image_sources(name)]
        for src in sources:
            assert _in_context(src, rules), (name, src)
            if not src.startswith(".cache/"):
                assert (ROOT / src).exists(), (name, src)
        if name in expected_cache:
            assert expected_cache[name] in sources, (name, sources)


# ------------------------------------------------------------------ versions


def _expected_args() -> dict[str, str]:
    p = pins()
    return {
        "BASE_IMAGE": f"${{POOLSIGHT_BASE_IMAGE:-{p['docker']['base_image']}}}",
        "JAVA_IMAGE": f"${{POOLSIGHT_JAVA_IMAGE:-{p['docker']['java_image']}}}",
        "KAFKA_VERSION": p["kafka"]["version"],
        "REGISTRY_VERSION": p["registry"]["version"],
        "TRINO_VERSION": p["trino"]["version"],
        "POSTGRES_MAJOR": p["postgres"]["major"],
        "FLINK_VERSION": p["flink"]["version"],
    }


def _check_build(name: str, svc: dict[str, Any]) -> None:
    expected = _expected_args()
    build = svc["build"]
    args = {k: str(v) for k, v in build.get("args", {}).items()}
    for key, value in args.items():
        assert value == expected[key], (name, key, value)
    stages = _stages(ROOT / build["dockerfile"], {})
    declared: dict[str, str] = {}
    for stage in _needed(stages, build.get("target", list(stages)[-1])):
        declared |= stage.declared
    for key, default in declared.items():
        if default:  # the Dockerfile's own default is the pin too
            assert default == _default(expected[key]), (name, key)
        elif key not in PROXY_ARGS:
            assert key in args, f"{name}: build argument {key} has no value"
    assert set(args) <= set(declared), (name, set(args) - set(declared))


def test_build_args_and_tags_equal_the_pins() -> None:
    p = pins()
    tags = {
        "postgres": f"poolsight/postgres:{p['postgres']['major']}",
        "kafka": f"poolsight/kafka:{p['kafka']['version']}",
        "registry": f"poolsight/registry:{p['registry']['version']}",
        "trino": f"poolsight/trino:{p['trino']['version']}",
    }
    services = _compose()["services"]
    for name, svc in services.items():
        assert "build" in svc, f"{name}: every image is built here (no registry image to pull)"
        _check_build(name, svc)
        if name in tags:
            assert svc["image"] == tags[name], name
    for name, svc in _cluster()["services"].items():
        if "build" in svc:
            _check_build(name, svc)
            assert svc["image"] == tags["kafka"], name


# ------------------------------------------------------------------ ports and addresses


def test_ports_are_the_launchers_published_on_loopback() -> None:
    """Each container listens on the launcher's port; the host side is the launcher's own
    POOLSIGHT_<NAME>_PORT, defaulting to the same port, and only on 127.0.0.1."""
    services = _compose()["services"]
    for name, svc in services.items():
        ports = svc.get("ports", [])
        if name not in PUBLISHED:
            assert not ports, name
            continue
        key, inside = PUBLISHED[name]
        assert ports == [f"127.0.0.1:${{{port_variable(key)}:-{DEFAULT_PORTS[key]}}}:{inside}"], name


def test_every_native_service_has_a_container() -> None:
    services = _compose()["services"]
    for svc in SERVICES:
        assert svc.name in services, f"{svc.name} has no counterpart in docker-compose.yml"


def test_poolsight_containers_reach_the_others_by_name() -> None:
    """poolsight's containers get every address as configuration (infra/endpoints.py): the other
    services, by their compose names and container ports, are external to them."""
    services = _compose()["services"]
    env = compose.service_env()
    for name in (*PYTHON_SERVICES, *FLINK_SERVICES):
        svc = services[name]
        assert "network_mode" not in svc, name
        given = {k: _default(v) for k, v in svc["environment"].items()}
        assert given.pop("POOLSIGHT_CATALOG_PASSWORD") == "", name  # from the environment, required
        assert given == env, name
    s = compose.container_settings()
    assert s.external == {"postgres", "kafka", "registry", "flink-jobmanager", "flink-taskmanager", "trino"}
    assert s.kafka_bootstrap == f"kafka:{DEFAULT_PORTS['kafka']}"
    assert s.registry_url.startswith(f"http://registry:{DEFAULT_PORTS['registry']}/")
    assert s.flink_rest_address == ("flink-jobmanager", DEFAULT_PORTS["flink_rest"])
    assert s.trino_url == f"http://trino:{DEFAULT_PORTS['trino']}"
    assert s.postgres_jdbc_url == f"jdbc:postgresql://postgres:{DEFAULT_PORTS['postgres']}/{CATALOG_DATABASE}"


def _kafka_props(env: dict[str, Any]) -> dict[str, str]:
    """server.properties as kafka-run.sh writes it from the KAFKA_* variables."""
    return {k[6:].lower().replace("_", "."): _default(v) for k, v in env.items() if k.startswith("KAFKA_")}


_ADDRESS_KEYS = {
    "listeners",
    "advertised.listeners",
    "controller.quorum.voters",
    "log.dirs",
    "listener.security.protocol.map",
}


def _by_name(value: str, sep: str = "://") -> dict[str, str]:
    """NAME -> what follows it, of a listeners value (NAME://host:port,...) or a protocol map."""
    return dict(item.split(sep, 1) for item in value.split(","))  # type: ignore[misc]


def _check_kafka_node(name: str, env: dict[str, Any], ports: list[str], native: dict[str, str]) -> None:
    props = _kafka_props(env)
    for key, value in native.items():
        if key not in _ADDRESS_KEYS:
            assert props.get(key) == value, (name, key, props.get(key), value)
    listeners = _by_name(props["listeners"])
    advertised = _by_name(str(env["KAFKA_ADVERTISED_LISTENERS"]))
    protocols = _by_name(props["listener.security.protocol.map"], ":")
    assert set(listeners) == set(protocols) == {"PLAINTEXT", "CONTROLLER", compose.KAFKA_HOST_LISTENER}
    assert set(advertised) == {"PLAINTEXT", compose.KAFKA_HOST_LISTENER}
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["controller.listener.names"] == "CONTROLLER"
    # The containers' listener: the service name and the launcher's Kafka port.
    assert listeners["PLAINTEXT"] == f":{DEFAULT_PORTS['kafka']}"
    assert advertised["PLAINTEXT"] == f"{name}:{DEFAULT_PORTS['kafka']}"
    # The host's listener: advertised as 127.0.0.1 and the very port compose publishes it on.
    host = advertised[compose.KAFKA_HOST_LISTENER]
    assert host.startswith("127.0.0.1:${"), (name, host)
    host_port = host.removeprefix("127.0.0.1:")
    assert listeners[compose.KAFKA_HOST_LISTENER] == f":{compose.KAFKA_HOST_CONTAINER_PORT}"
    assert ports == [f"127.0.0.1:{host_port}:{compose.KAFKA_HOST_CONTAINER_PORT}"], name


def test_kafka_is_the_launchers_broker_with_a_listener_for_the_host(monkeypatch: Any) -> None:
    for key in [k for k in os.environ if k.startswith("POOLSIGHT_")]:
        monkeypatch.delenv(key)
    native = dict(ln.split("=", 1) for ln in kafka_server_properties(load_settings()).splitlines() if ln)
    kafka = _compose()["services"]["kafka"]
    _check_kafka_node("kafka", kafka["environment"], kafka["ports"], native)
    assert _default(kafka["environment"]["KAFKA_ADVERTISED_LISTENERS"]).endswith(f":{DEFAULT_PORTS['kafka']}")
    voters = _kafka_props(kafka["environment"])["controller.quorum.voters"]
    assert voters == f"1@kafka:{DEFAULT_PORTS['kafka_controller']}"


def test_registry_runs_with_the_launchers_options() -> None:
    assert _compose()["services"]["registry"]["command"] == compose.registry_command()


def test_postgres_is_the_launchers_catalog_database() -> None:
    env = _compose()["services"]["postgres"]["environment"]
    assert str(env["PGPORT"]) == str(DEFAULT_PORTS["postgres"])
    assert (env["CATALOG_ROLE"], env["CATALOG_DATABASE"]) == (CATALOG_ROLE, CATALOG_DATABASE)


def test_generated_files_are_current() -> None:
    for path, text in compose.generated_files().items():
        assert (ROOT / path).read_text() == text, f"{path} is stale: run `python -m poolsight.infra.compose`"


def test_trino_reads_the_generated_configuration() -> None:
    dockerfile = (ROOT / "infra/docker/trino.Dockerfile").read_text()
    assert "COPY infra/docker/trino/ /etc/trino/" in dockerfile
    assert "COPY infra/conf/trino-jvm.config infra/conf/trino-log.properties /etc/trino/" in dockerfile
    config = compose.generated_files()["infra/docker/trino/config.properties"]
    assert f"http-server.http.port={DEFAULT_PORTS['trino']}" in config.splitlines()


def test_shared_volumes_sit_where_the_settings_put_them() -> None:
    """Flink's checkpoints and the file:// warehouse are read and written by several containers:
    each mounts them at the path the settings give (Trino reads the warehouse the jobs write)."""
    s = compose.container_settings()
    warehouse = s.warehouse.removeprefix("file://")
    services = _compose()["services"]
    mounts = {name: dict(str(v).split(":")[:2] for v in svc.get("volumes", [])) for name, svc in services.items()}
    for name in ("flink-jobmanager", "flink-taskmanager", "init"):
        assert mounts[name]["flink-state"] == str(s.data_dir / "flink"), name
        assert mounts[name]["warehouse"] == warehouse, name
    assert mounts["trino"]["warehouse"] == warehouse


def test_flink_containers_run_the_launchers_flink() -> None:
    services = _compose()["services"]
    for role in ROLES:
        assert services[role]["command"] == ["python", "-m", "poolsight.infra.container", role]
    s = compose.container_settings()
    jm = container_properties(s, "flink-jobmanager", "10.0.0.2")
    tm = container_properties(s, "flink-taskmanager", "10.0.0.3")
    assert jm["jobmanager.rpc.address"] == tm["jobmanager.rpc.address"] == "flink-jobmanager"
    assert tm["taskmanager.host"] == "10.0.0.3" and "taskmanager.host" not in jm


def test_python_services_run_the_launchers_commands() -> None:
    services = _compose()["services"]
    for name in PYTHON_SERVICES:
        assert services[name]["command"] == compose.service_command(name), (
            f"{name}: docker-compose.yml's command is not the launcher's {compose.service_command(name)}"
        )


# ------------------------------------------------------------------ the init service


def test_init_runs_the_launchers_bootstrap_and_the_services_wait_for_it(monkeypatch: Any) -> None:
    """`init` is `poolsight up` over every service that is external to the containers: it starts
    nothing, waits for each health check and runs the bootstrap (poolsight/bootstrap.py)."""
    services = _compose()["services"]
    init = services["init"]
    command = init["command"]
    assert command[:2] == ["poolsight", "up"]
    args = build_parser().parse_args(command[1:])
    assert args.func is _cmd_up
    s = compose.container_settings()
    assert args.services == [svc.name for svc in SERVICES if svc.name in s.external]
    assert embedded_services(s, args.services) == []
    assert set(init["depends_on"]) == set(args.services)
    assert init["restart"] == "on-failure"
    for name in PYTHON_SERVICES:
        assert services[name]["depends_on"] == {"init": {"condition": "service_completed_successfully"}}, name


# ------------------------------------------------------------------ the cluster option


def _environment(name: str) -> dict[str, str]:
    """A service's environment with the cluster option (compose merges it key by key)."""
    base, over = _compose()["services"], _cluster()["services"]
    env = {**base.get(name, {}).get("environment", {}), **over.get(name, {}).get("environment", {})}
    return {k: str(v) for k, v in env.items()}


def test_cluster_option_is_one_kraft_quorum_of_three(monkeypatch: Any) -> None:
    for key in [k for k in os.environ if k.startswith("POOLSIGHT_")]:
        monkeypatch.delenv(key)
    base, over = _compose()["services"], _cluster()["services"]
    names = sorted(n for n in over if n == "kafka" or n.startswith("kafka-"))
    assert names == ["kafka", "kafka-2", "kafka-3"]
    envs = {n: _environment(n) for n in names}
    ids = {n: int(envs[n]["KAFKA_NODE_ID"]) for n in names}
    assert sorted(ids.values()) == [1, 2, 3]
    voters = {f"{ids[n]}@{n}:{DEFAULT_PORTS['kafka_controller']}" for n in names}
    assert len({env["CLUSTER_ID"] for env in envs.values()}) == 1
    # The native 3-broker cluster's settings (infra/kafka_service.py), node by node.
    monkeypatch.setenv("POOLSIGHT_KAFKA_BROKERS", "3")
    s = load_settings()
    volumes = set()
    for n in names:
        native = dict(ln.split("=", 1) for ln in kafka_server_properties(s, ids[n]).splitlines() if ln)
        native.pop("node.id")
        ports = over[n].get("ports", base.get(n, {}).get("ports", []))
        _check_kafka_node(n, envs[n], ports, native)
        assert set(envs[n]["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")) == voters, n
        # Node i's host port is the launcher's for broker i.
        assert _default(ports[0]).split(":")[1] == str(DEFAULT_PORTS["kafka"] + KAFKA_PORT_STEP * (ids[n] - 1)), n
        image = over[n].get("image", base.get(n, {}).get("image"))
        assert image == f"poolsight/kafka:{pins()['kafka']['version']}", n
        mounts = [str(v).split(":") for v in over[n].get("volumes", base.get(n, {}).get("volumes", []))]
        [volume] = [src for src, target, *_ in mounts if target == envs[n]["KAFKA_LOG_DIRS"]]
        volumes.add(volume)
    assert len(volumes) == 3 and volumes <= set(_compose()["volumes"]) | set(_cluster()["volumes"])
    # Every client of Kafka is given all three brokers.
    bootstrap = ",".join(f"{n}:{DEFAULT_PORTS['kafka']}" for n in names)
    registry = [o for o in over["registry"]["command"] if "bootstrap.servers" in o]
    assert registry == [f"-Dapicurio.kafkasql.bootstrap.servers={bootstrap}"]
    assert [o for o in over["registry"]["command"] if "bootstrap" not in o] == [
        o for o in compose.registry_command() if "bootstrap" not in o
    ]
    for name in (*PYTHON_SERVICES, *FLINK_SERVICES):
        assert _environment(name)["POOLSIGHT_KAFKA_BOOTSTRAP"] == bootstrap, name
    # Two TaskManagers: replicas of one service, which publishes nothing and has no fixed name.
    assert over["flink-taskmanager"]["deploy"]["replicas"] == 2
    assert not {"ports", "container_name"} & set(base["flink-taskmanager"])


def test_package_folders_are_the_wheels() -> None:
    """The folder list the image checks read is the real one (and bench/, tests/ are outside it)."""
    assert "advice" in PACKAGE_FOLDERS and "flink-jobs" in PACKAGE_FOLDERS
    assert not set(NOT_IN_WHEEL) & set(PACKAGE_FOLDERS)
    assert fnmatch.fnmatch("poolsight.advice", "poolsight.*")
