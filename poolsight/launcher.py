"""`poolsight up | down | status`: the stack on one machine, no Docker.

`up` installs what is missing, starts what is not running in dependency
order, waits for each service's real health check and creates the shared
topics, catalog tables and namespaces. A service configured as external
(infra/endpoints.py) is neither installed nor started: `up` waits for it at its
address and creates the product's own objects there. When a start fails it stops
whatever this call started, so nothing half-started is left behind. `down` stops
only processes whose PID files it wrote, so never an external service. The nodes of a
local cluster (several Kafka brokers or TaskManagers: services.services_for) are one
group: wanted together, started together before any is waited for, stopped together.
"""

from __future__ import annotations

import fcntl
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from poolsight.bootstrap import BOOTSTRAP
from poolsight.infra.config import Settings, port_variable
from poolsight.infra.install import Installed, install_all
from poolsight.infra.memory import ceilings
from poolsight.infra.process import (
    alive,
    can_bind,
    clean_leftovers,
    log_tail,
    port_in_use,
    port_owner,
    read_started,
    rss_bytes,
    spawn,
    stop_many,
)
from poolsight.infra.s3_store import s3_store
from poolsight.infra.service_base import http_answers
from poolsight.infra.service_security import security
from poolsight.infra.services import SERVICES, Degraded, Service, Unhealthy, catalog_password, services_for


class LaunchError(Exception):
    pass


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    address: str
    pid: int | None
    state: str  # healthy | unhealthy | stopped | foreign (external ones: healthy | unhealthy)
    detail: str
    rss_mb: float
    log: str
    kind: str = "embedded"  # embedded (run by this launcher) | external (configured address)
    ceiling_mb: int | None = None  # infra/memory.py: the RSS (with child processes) it must stay under
    security: str = ""  # infra/service_security.py: TLS and how clients authenticate


def log_path(s: Settings, name: str) -> Path:
    return s.log_dir / f"{name}.log"


@contextmanager
def _locked(s: Settings) -> Iterator[None]:
    s.run_dir.mkdir(parents=True, exist_ok=True)
    with (s.run_dir / "launcher.lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# Between health checks: most services answer within a second or two of their start, so a
# start is seen a quarter of a second after it happened rather than up to a second.
HEALTH_POLL_S = 0.25


class _Aborted(Exception):
    """Another service of the same `up` failed: this one stops waiting."""


def _wait_healthy(
    s: Settings,
    svc: Service,
    *,
    started_pid_check: bool,
    running: bool = False,
    abort: threading.Event | None = None,
) -> str:
    """Its health detail once healthy. `running`: it was running before this `up`: a last cycle
    that failed (Degraded: a service it reads was away, say) is no reason to wait, it tries again.
    `abort`: set when another service of the same `up` failed."""
    deadline = time.monotonic() + svc.start_timeout
    last = "no answer yet"
    external = svc.name in s.external
    while time.monotonic() < deadline:
        if abort is not None and abort.is_set():
            raise _Aborted(svc.name)
        if started_pid_check and not external and not alive(read_started(s.run_dir, svc.name)):
            raise LaunchError(
                f"{svc.name} exited during start-up. Last lines of {log_path(s, svc.name)}:\n"
                f"{log_tail(log_path(s, svc.name))}"
            )
        try:
            return svc.health(s)
        except Degraded as exc:
            if running:
                return f"running, {exc}; it tries again next cycle"
            last = str(exc)
        except Unhealthy as exc:
            last = str(exc)
        time.sleep(HEALTH_POLL_S)
    if external:
        raise LaunchError(
            f"external {svc.name} at {svc.address(s)} did not answer within {svc.start_timeout:.0f} s ({last})"
        )
    raise LaunchError(
        f"{svc.name} did not become healthy within {svc.start_timeout:.0f} s ({last}). "
        f"Last lines of {log_path(s, svc.name)}:\n{log_tail(log_path(s, svc.name))}"
    )


def stack(s: Settings) -> tuple[Service, ...]:
    """The services as configured, in start order (SERVICES with each cluster's nodes)."""
    return services_for(s, SERVICES)


def embedded_services(s: Settings, names: list[str] | None = None) -> list[Service]:
    """What `up` starts: the named services (all if none) and their dependencies, in start order,
    without those configured as external (it waits for those instead)."""
    services = stack(s)
    wanted = _with_dependencies(services, names)
    return [svc for svc in services if svc.name in wanted and svc.name not in s.external]


def _start(s: Settings, svc: Service, inst: Installed) -> None:
    """Start one service that is not running (clearing what a dead run of it left)."""
    left = clean_leftovers(read_started(s.run_dir, svc.name))
    if left:
        _say(f"{svc.name:18} had died; stopped what it left running: PIDs {left}")
    for key in svc.ports:
        port = s.ports[key]
        if port_in_use(port, s.bind_host):
            raise LaunchError(
                f"cannot start {svc.name}: port {port} ({key}) on {s.bind_host} is taken "
                f"by {port_owner(port)}. Stop it, or choose another port with {port_variable(key)}."
            )
    try:
        launch = svc.prepare(s, inst)
    except Unhealthy as exc:
        raise LaunchError(f"cannot prepare {svc.name}: {exc}") from exc
    spawn(
        svc.name,
        launch.command,
        env=launch.env,
        cwd=launch.cwd,
        log_file=log_path(s, svc.name),
        run_dir=s.run_dir,
        user=launch.user,
    )


def up(s: Settings, names: list[str] | None = None) -> list[ServiceStatus]:
    """Start every service (or the named ones and what they depend on) and wait for health;
    external ones are waited for at their configured address, never started. Each service
    starts once what it depends on is healthy and set up, beside the others that can: Kafka and
    the registry, Flink, and Trino with its readers come up side by side, not one after another."""
    services = stack(s)
    wanted = _with_dependencies(services, names)
    embedded = {svc.name for svc in services if svc.name in wanted and svc.name not in s.external}
    if embedded and not can_bind(s.bind_host):
        raise LaunchError(f"bind host {s.bind_host} (POOLSIGHT_BIND_HOST / [bind].host) is no address of this machine")
    if "postgres" in wanted and "postgres" in s.external and not s.catalog_is_rest:
        catalog_password(s)  # a missing password is a ConfigError now, not a health check timing out
    with _locked(s):
        inst = install_all(s)
        started_now: list[str] = []
        abort = threading.Event()
        lock = threading.Lock()

        def start(svc: Service) -> None:
            _start(s, svc, inst)
            with lock:
                started_now.append(svc.name)

        def bring_up(svc: Service) -> None:
            t0 = time.monotonic()
            peers = [p for p in services if svc.group and p.group == svc.group and p.name in wanted]
            for peer in peers:  # every stopped node of the cluster, before any is waited for
                if peer.name in embedded and peer.name not in started_now:
                    if not alive(read_started(s.run_dir, peer.name)):
                        start(peer)
            if svc.name not in embedded:
                detail = _wait_healthy(s, svc, started_pid_check=False, abort=abort)
                _say(f"{svc.name:18} external at {svc.address(s)}: {detail}")
            elif svc.name in started_now:
                detail = _wait_healthy(s, svc, started_pid_check=True, abort=abort)
                _say(f"{svc.name:18} started in {time.monotonic() - t0:5.1f} s: {detail}")
            elif alive(read_started(s.run_dir, svc.name)):
                detail = _wait_healthy(s, svc, started_pid_check=True, running=True, abort=abort)
                _say(f"{svc.name:18} already running: {detail}")
            else:
                start(svc)
                detail = _wait_healthy(s, svc, started_pid_check=True, abort=abort)
                _say(f"{svc.name:18} started in {time.monotonic() - t0:5.1f} s: {detail}")
            # A cluster is set up once all its nodes answer (a topic's replicas need its brokers).
            setup = svc.group or svc.name
            if setup in BOOTSTRAP and (not peers or svc.name == peers[-1].name):
                t1 = time.monotonic()
                try:
                    BOOTSTRAP[setup](s)
                except Exception as exc:
                    raise LaunchError(f"setting up {setup} failed: {exc}") from exc
                _wait_healthy(s, svc, started_pid_check=True, abort=abort)  # health may cover what was just set up
                _say(f"{setup:18} set up in {time.monotonic() - t1:5.1f} s")

        try:
            _in_dependency_order([svc for svc in services if svc.name in wanted], bring_up, abort)
        except BaseException:
            abort.set()
            for name in reversed(started_now):
                _say(f"stopping {name} (started by this failed `up`)")
            _stop_in_groups(s, services, list(reversed(started_now)))
            raise
    return status(s)


def _in_dependency_order(services: list[Service], bring_up: Callable[[Service], None], abort: threading.Event) -> None:
    """Run `bring_up` for each service on a thread of its own once every service it depends on
    (among these) has come up, and the node before it in its cluster (a cluster's first node
    starts them all; its last sets the cluster up, so a dependency on any node waits for it).
    The first failure sets `abort`, the others stop waiting, and it is raised once every thread
    has ended."""
    names = {svc.name for svc in services}
    done = {svc.name: threading.Event() for svc in services}
    failed: list[BaseException] = []

    last_node = {p.group: p.name for p in services if p.group}  # the node that sets its cluster up
    group_of = {p.name: p.group for p in services}

    def after(svc: Service) -> list[str]:
        # Depending on one node of a cluster is depending on the cluster, set up.
        deps = [last_node[group_of[d]] if group_of[d] else d for d in svc.depends if d in names]
        nodes = [p.name for p in services if svc.group and p.group == svc.group]
        if nodes and nodes.index(svc.name) > 0:
            deps.append(nodes[nodes.index(svc.name) - 1])
        return deps

    def run(svc: Service) -> None:
        try:
            for dep in after(svc):
                while not done[dep].wait(0.1):
                    if abort.is_set():
                        return
            if not abort.is_set():
                bring_up(svc)
                done[svc.name].set()
        except BaseException as exc:  # handed to the caller, whatever it is
            if not isinstance(exc, _Aborted):
                failed.append(exc)
            abort.set()

    threads = [threading.Thread(target=run, args=(svc,), name=f"up-{svc.name}") for svc in services]
    for th in threads:
        th.start()
    try:
        for th in threads:
            th.join()
    except BaseException:  # Ctrl-C: the threads stop waiting at their next look
        abort.set()
        for th in threads:
            th.join()
        raise
    if failed:
        raise failed[0]


def _with_dependencies(services: tuple[Service, ...], names: list[str] | None) -> set[str]:
    by_name = {svc.name: svc for svc in services}
    if not names:
        return set(by_name)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise LaunchError(f"unknown service(s) {unknown}; known: {sorted(by_name)}")
    out: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            svc = by_name[name]
            todo.extend(svc.depends)
            todo.extend(p.name for p in services if svc.group and p.group == svc.group)  # a cluster is whole
    return out


# Nodes 2.. of a cluster (kafka_service.py, flink_service.py): PID files `down` stops even when
# the configuration no longer asks for that many.
_NODE = re.compile(r"(kafka|flink-taskmanager)-\d+")


def down(s: Settings) -> list[str]:
    """Stop, in reverse order, every service this launcher started; return their names. Only
    processes with our PID files are stopped: an external service is never touched (an embedded
    one left from before it was configured external is ours, and stopped). A cluster's nodes
    stop together: each broker's clean shutdown needs a majority of the quorum still running."""
    services = stack(s)
    known = {svc.name for svc in services}
    with _locked(s):
        extra = sorted(
            name
            for p in s.run_dir.glob("*.pid.json")
            if _NODE.fullmatch(name := p.name.removesuffix(".pid.json")) and name not in known
        )
        stopped = stop_many(s.run_dir, extra)
        for name in stopped:
            _say(f"stopped {name}")
        return stopped + _stop_in_groups(s, services, [svc.name for svc in reversed(services)], say=True)


def _stop_in_groups(s: Settings, services: tuple[Service, ...], names: list[str], say: bool = False) -> list[str]:
    """Stop `names` in this order, each cluster's nodes together (at its first node in the list);
    return those that ran."""
    group = {svc.name: svc.group for svc in services}
    batches: list[list[str]] = []
    for name in names:
        g = group.get(name, "")
        batch = [n for n in names if group.get(n, "") == g] if g else [name]
        if batch not in batches:
            batches.append(batch)
    stopped: list[str] = []
    for batch in batches:
        for name in stop_many(s.run_dir, batch):
            if say:
                _say(f"stopped {name}")
            stopped.append(name)
    return stopped


def status(s: Settings) -> list[ServiceStatus]:
    out = []
    limits = ceilings(s)
    for svc in stack(s):
        started = read_started(s.run_dir, svc.name)
        running = alive(started)
        try:
            detail = svc.health(s)
            healthy = True
        except Unhealthy as exc:
            detail, healthy = str(exc), False
        if svc.name in s.external:
            if running and started:
                detail += f"; an embedded {svc.name} started earlier still runs (PID {started.pid}): `down` stops it"
            out.append(
                ServiceStatus(
                    name=svc.name,
                    address=svc.address(s),
                    pid=None,
                    state="healthy" if healthy else "unhealthy",
                    detail=detail,
                    rss_mb=0.0,
                    log="",
                    kind="external",
                    security=security(s, svc.name),
                )
            )
            continue
        if running:
            state = "healthy" if healthy else "unhealthy"
        else:
            # Something answers where our service should be, but we did not start it.
            state = "foreign" if healthy and svc.ports else "stopped"
            if not healthy:
                detail = "not running" + (" (exited; see its log)" if started else "")
        pid = started.pid if running and started else None
        rss = round(rss_bytes(pid) / 2**20, 1) if pid else 0.0
        ceiling = limits.get(svc.name)
        if ceiling is not None and rss > ceiling:
            detail = f"OVER ITS MEMORY CEILING ({rss:,.0f} MB > {ceiling:,} MB); {detail}"
        out.append(
            ServiceStatus(
                name=svc.name,
                address=svc.address(s),
                pid=pid,
                state=state,
                detail=detail,
                rss_mb=rss,
                log=str(log_path(s, svc.name)),
                ceiling_mb=ceiling,
                security=security(s, svc.name),
            )
        )
    return [*out, warehouse_status(s)]


def warehouse_status(s: Settings) -> ServiceStatus:
    """The warehouse as a row of `status`: a folder here, or an object store that must answer."""
    store = s3_store(s)
    if store is None:
        folder = Path(s.warehouse.removeprefix("file://"))
        ok = folder.is_dir() and os.access(folder, os.W_OK)
        detail = "writable" if ok else "not a writable folder (yet: `up` creates the tables in it)"
        return ServiceStatus(
            "warehouse",
            str(folder),
            None,
            "healthy" if ok else "unhealthy",
            detail,
            0.0,
            "",
            security=security(s, "warehouse"),
        )
    try:
        detail = f"{s.warehouse}: the object store answers ({http_answers(store.endpoint)})"
        state = "healthy"
    except Unhealthy as exc:
        detail, state = f"{s.warehouse}: {exc}", "unhealthy"
    return ServiceStatus(
        "warehouse", store.endpoint, None, state, detail, 0.0, "", kind="external", security=security(s, "warehouse")
    )


def status_dicts(rows: list[ServiceStatus]) -> list[dict[str, object]]:
    return [asdict(r) for r in rows]


def format_status(rows: list[ServiceStatus]) -> str:
    width = max([16, *(len(r.address) for r in rows)])
    sec = max([8, *(len(r.security) for r in rows)])
    lines = [
        f"{'SERVICE':18} {'KIND':8} {'STATE':10} {'ADDRESS':{width}} {'SECURITY':{sec}} {'PID':>7} "
        f"{'RSS/CEILING MB':>14}  DETAIL"
    ]
    for r in rows:
        mem = f"{r.rss_mb:.0f}/{r.ceiling_mb}" if r.ceiling_mb and r.kind == "embedded" else "-"
        lines.append(
            f"{r.name:18} {r.kind:8} {r.state:10} {r.address:{width}} {r.security:{sec}} {r.pid or '-':>7} "
            f"{mem:>14}  {r.detail}"
        )
    return "\n".join(lines)
