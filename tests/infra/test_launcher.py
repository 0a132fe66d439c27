"""The launcher with external services: what `up` starts, waits for and sets up, and what
`status` and `down` show and touch. No service runs: health checks and installs are faked."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from poolsight import launcher
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.install import Installed
from poolsight.infra.services import SERVICES, Launch, Service, Unhealthy
from tests.infra.isolated import isolated_env  # noqa: F401 (isolated_env: autouse here)


def _names(services: list[Service]) -> list[str]:
    return [svc.name for svc in services]


def test_all_embedded_by_default() -> None:
    assert _names(launcher.embedded_services(load_settings())) == [svc.name for svc in SERVICES]


def test_external_services_are_not_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "b1:9092,b2:9092")
    monkeypatch.setenv("POOLSIGHT_FLINK_REST_URL", "http://flink:8081")
    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "jdbc:postgresql://pg:5432/lake")
    s = load_settings()
    assert _names(launcher.embedded_services(s)) == [
        "registry",
        "trino",
        "dashboard",
        "alerts",
        "advice",
        "maintenance",
    ]
    # Named services bring their dependencies, but never an external one.
    assert _names(launcher.embedded_services(s, ["registry"])) == ["registry"]
    assert _names(launcher.embedded_services(s, ["dashboard"])) == ["trino", "dashboard"]
    assert _names(launcher.embedded_services(s, ["flink-taskmanager"])) == []


def _fake_services(health: dict[str, str | None]) -> tuple[Service, ...]:
    """The real services' names, ports, dependencies and endpoints with a health answer each
    (None: Unhealthy) and a prepare that must not run."""

    def prepare(s: Settings, inst: Installed) -> Launch:
        raise AssertionError("nothing is started in these tests")

    def answer(name: str):  # type: ignore[no-untyped-def]
        def check(s: Settings) -> str:
            if health.get(name) is None:
                raise Unhealthy(f"{name}: no answer")
            return str(health[name])

        return check

    return tuple(
        Service(svc.name, svc.ports, svc.depends, 0.5, prepare, answer(svc.name), svc.endpoint) for svc in SERVICES
    )


def test_status_marks_external_services(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "b1:9092,b2:9092")
    monkeypatch.setenv("POOLSIGHT_TRINO_URL", "http://trino.example:8080")
    monkeypatch.setattr(launcher, "SERVICES", _fake_services({"kafka": "3 brokers"}))
    rows = {r.name: r for r in launcher.status(load_settings())}
    assert (rows["kafka"].kind, rows["kafka"].state, rows["kafka"].detail) == ("external", "healthy", "3 brokers")
    assert rows["kafka"].address == "b1:9092,b2:9092" and rows["kafka"].pid is None
    assert (rows["trino"].kind, rows["trino"].state, rows["trino"].address) == (
        "external",
        "unhealthy",
        "http://trino.example:8080",
    )
    assert (rows["postgres"].kind, rows["postgres"].state, rows["postgres"].address) == (
        "embedded",
        "stopped",
        "127.0.0.1:5433",
    )
    dicts = {d["name"]: d for d in launcher.status_dicts(list(rows.values()))}
    assert dicts["kafka"]["kind"] == "external" and dicts["registry"]["kind"] == "embedded"
    table = launcher.format_status(list(rows.values())).splitlines()
    assert table[0].split()[:4] == ["SERVICE", "KIND", "STATE", "ADDRESS"]
    assert any(line.split()[:4] == ["kafka", "external", "healthy", "b1:9092,b2:9092"] for line in table)
    # What protects each: an external Trino over HTTP without a password has nothing; the
    # embedded catalog asks for its generated password, the dashboard stays on loopback.
    assert {n: r.security for n, r in rows.items() if n in ("trino", "postgres", "kafka", "dashboard", "advice")} == {
        "trino": "none",
        "postgres": "password (scram)",
        "kafka": "none",
        "dashboard": "none (loopback only)",
        "advice": "-",
    }
    assert table[0].split()[4] == "SECURITY"
    # An embedded service's memory against its ceiling (TaskManager: its process size + the Python worker).
    assert rows["flink-taskmanager"].ceiling_mb == 4096 + 2560 and rows["advice"].ceiling_mb == 1024


def test_a_service_over_its_memory_ceiling_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from poolsight.infra.memory import ceilings, size_mb

    monkeypatch.setenv("POOLSIGHT_CEILING_ADVICE_MB", "300")
    monkeypatch.setenv("POOLSIGHT_TRINO_HEAP", "3G")
    s = load_settings()
    assert ceilings(s)["advice"] == 300 and ceilings(s)["trino"] == 3 * 1024 + 1024
    assert [size_mb(x) for x in ("768m", "2G", "4096M", "1048576k")] == [768, 2048, 4096, 1024]
    monkeypatch.setenv("POOLSIGHT_CEILING_ADVICE_MB", "lots")
    with pytest.raises(ConfigError, match="POOLSIGHT_CEILING_ADVICE_MB='lots'"):
        ceilings(load_settings())
    monkeypatch.setenv("POOLSIGHT_CEILING_ADVICE_MB", "1")  # the test process itself stands in for it
    monkeypatch.setattr(launcher, "SERVICES", _fake_services({}))
    me = SimpleNamespace(pid=os.getpid())
    monkeypatch.setattr(launcher, "read_started", lambda run_dir, name: me if name == "advice" else None)
    monkeypatch.setattr(launcher, "alive", lambda started: started is not None)
    rows = {r.name: r for r in launcher.status(load_settings())}
    assert rows["advice"].detail.startswith("OVER ITS MEMORY CEILING (") and rows["advice"].rss_mb > 1
    line = next(x for x in launcher.format_status(list(rows.values())).splitlines() if x.startswith("advice "))
    assert f"{rows['advice'].rss_mb:.0f}/1" in line


def test_up_waits_for_external_services_and_sets_them_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "broker.example:9092")
    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "jdbc:postgresql://pg.example:5432/lake")
    monkeypatch.setenv("POOLSIGHT_CATALOG_PASSWORD", "secret")
    monkeypatch.setattr(launcher, "SERVICES", _fake_services({"kafka": "1 broker", "postgres": "PostgreSQL 16"}))
    monkeypatch.setattr(launcher, "install_all", lambda s: None)
    set_up: list[str] = []
    monkeypatch.setattr(launcher, "BOOTSTRAP", {"kafka": lambda s: set_up.append("kafka")})
    monkeypatch.setattr(launcher, "spawn", lambda *a, **k: pytest.fail("spawned an external service"))
    rows = {r.name: r for r in launcher.up(load_settings(), ["kafka", "postgres"])}
    assert set_up == ["kafka"]  # topics are the product's own: created on the external broker
    assert rows["kafka"].state == "healthy" and rows["kafka"].kind == "external"


def test_up_names_an_external_service_that_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "broker.example:9092")
    monkeypatch.setattr(launcher, "SERVICES", _fake_services({}))
    monkeypatch.setattr(launcher, "install_all", lambda s: None)
    with pytest.raises(launcher.LaunchError, match=r"external kafka at broker.example:9092 did not answer"):
        launcher.up(load_settings(), ["kafka"])


def test_down_stops_only_what_it_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_KAFKA_BOOTSTRAP", "broker.example:9092")
    s = load_settings()
    # down acts on our PID files only (process.stop): an external service has none.
    assert launcher.down(s) == []
    assert not list(s.run_dir.glob("*.pid.json"))


def test_up_asks_for_an_external_catalogs_password_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "jdbc:postgresql://pg.example:5432/lake")
    monkeypatch.setattr(launcher, "install_all", lambda s: pytest.fail("installed before the settings were checked"))
    with pytest.raises(ConfigError, match="needs a password"):
        launcher.up(load_settings(), ["postgres"])


def test_up_refuses_a_bind_host_that_is_not_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_BIND_HOST", "192.0.2.1")  # TEST-NET-1: no machine has it
    with pytest.raises(launcher.LaunchError, match=r"bind host 192\.0\.2\.1"):
        launcher.up(load_settings(), ["postgres"])


def test_up_does_not_wait_on_a_running_evaluator_whose_last_cycle_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A service already running whose last cycle failed (Trino away a moment) is reported and
    passed; one this `up` starts must become healthy (its first cycle failing is a real problem)."""
    from poolsight.infra.services import Degraded

    svc = next(s for s in SERVICES if s.name == "advice")

    def degraded(s: Settings) -> str:
        raise Degraded("last evaluation failed: TrinoQueryError")

    fake = Service(svc.name, svc.ports, svc.depends, 0.5, svc.prepare, degraded, svc.endpoint)
    monkeypatch.setattr(launcher, "alive", lambda pid: True)
    monkeypatch.setattr(launcher, "read_started", lambda run_dir, name: 1)
    detail = launcher._wait_healthy(load_settings(), fake, started_pid_check=True, running=True)
    assert detail == "running, last evaluation failed: TrinoQueryError; it tries again next cycle"
    with pytest.raises(
        launcher.LaunchError, match=r"advice did not become healthy within 0 s \(last evaluation failed"
    ):
        launcher._wait_healthy(load_settings(), fake, started_pid_check=True)


def test_status_says_the_embedded_trino_asks_for_tls_and_a_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from poolsight.infra.service_security import security

    s = load_settings()
    assert s.trino_url.startswith("https://") and security(s, "trino") == "TLS, password"
    monkeypatch.setenv("POOLSIGHT_TRINO_URL", "https://trino.example:8443")
    monkeypatch.setenv("POOLSIGHT_TRINO_PASSWORD", "from-the-environment")
    assert security(load_settings(), "trino") == "TLS, password"
    monkeypatch.delenv("POOLSIGHT_TRINO_PASSWORD")
    assert security(load_settings(), "trino") == "TLS"


def _timed(services: tuple[Service, ...], fail: str | None = None, slow: float = 0.3):  # type: ignore[no-untyped-def]
    """Run `up`'s scheduler over `services` with a bring_up that takes `slow` s (and raises for
    `fail`); returns (start, end) per service that came up, and the error raised if any."""
    import threading
    import time

    spans: dict[str, tuple[float, float]] = {}
    lock = threading.Lock()

    def bring_up(svc: Service) -> None:
        t0 = time.monotonic()
        time.sleep(slow)
        if svc.name == fail:
            raise launcher.LaunchError(f"{svc.name} did not start")
        with lock:
            spans[svc.name] = (t0, time.monotonic())

    error: BaseException | None = None
    try:
        launcher._in_dependency_order(list(services), bring_up, threading.Event())
    except launcher.LaunchError as exc:
        error = exc
    return spans, error


def test_up_starts_each_service_after_what_it_depends_on_and_the_rest_side_by_side() -> None:
    services = _fake_services({})
    spans, error = _timed(services)
    assert error is None and set(spans) == {svc.name for svc in services}
    for svc in services:  # the real dependencies: nothing begins before what it needs has ended
        for dep in svc.depends:
            assert spans[svc.name][0] >= spans[dep][1], (svc.name, dep)
    # What needs nothing of each other overlaps: Kafka beside PostgreSQL, the JobManager beside
    # Trino (both after PostgreSQL), the evaluators beside one another.
    for a, b in (("kafka", "postgres"), ("flink-jobmanager", "trino"), ("alerts", "maintenance")):
        assert spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1], (a, b, spans[a], spans[b])
    whole = max(e for _, e in spans.values()) - min(s for s, _ in spans.values())
    assert whole < 0.3 * 6, whole  # three levels deep (the advice after the registry), not ten in a row


def test_what_depends_on_one_node_of_a_cluster_waits_for_the_whole_cluster() -> None:
    def prepare(s: Settings, inst: Installed) -> Launch:
        return Launch(["true"], {}, Path())

    names = ("kafka", "kafka-2", "kafka-3")
    nodes = tuple(Service(n, (), (), 0.5, prepare, lambda s: "ok", group="kafka") for n in names)
    registry = Service("registry", (), ("kafka",), 0.5, prepare, lambda s: "ok")
    spans, error = _timed((*nodes, registry), slow=0.05)
    assert error is None
    # The last node sets the cluster up: the registry begins after it, not after the first node.
    assert spans["registry"][0] >= spans["kafka-3"][1] >= spans["kafka-2"][1] >= spans["kafka"][1]


def test_a_service_that_fails_stops_what_depends_on_it_and_is_raised() -> None:
    spans, error = _timed(_fake_services({}), fail="trino")
    assert isinstance(error, launcher.LaunchError) and "trino did not start" in str(error)
    assert not {"trino", "dashboard", "alerts", "advice", "maintenance"} & set(spans)
    assert {"postgres", "kafka"} <= set(spans)  # begun before the failure, not undone by the scheduler
