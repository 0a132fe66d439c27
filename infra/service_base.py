"""What a service of the stack is to the launcher, and what every definition of one shares.

services.py defines the stack; kafka_service.py and flink_service.py define Kafka's nodes and
Flink's, which can be several (a local cluster).
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config import Settings
from .endpoints import hostport
from .install import Installed

CONF_DIR = Path(__file__).with_name("conf")
# The JVMs touch their whole heap (-Xms = -Xmx) at start: their resident memory is then what they
# were given from the first minute, and growth after warm-up in `make soak` is a leak, not a heap
# that is still being touched for the first time (Trino +11 %, the JobManager +14 % per 10 minutes).
JVM_PRETOUCH = ("-XX:+AlwaysPreTouch",)


class Unhealthy(Exception):
    pass


class Degraded(Unhealthy):
    """Running and beating, but its last cycle failed (a service it reads was away): it tries again
    next cycle. `status` shows it unhealthy; `up` does not wait on it for a service already running."""


@dataclass(frozen=True)
class Launch:
    command: list[str]
    env: dict[str, str]
    cwd: Path
    user: str | None = None


@dataclass(frozen=True)
class Service:
    name: str
    ports: tuple[str, ...]  # keys of Settings.ports this service binds
    depends: tuple[str, ...]
    start_timeout: float
    prepare: Callable[[Settings, Installed], Launch]
    health: Callable[[Settings], str]  # returns a short description; raises Unhealthy
    endpoint: Callable[[Settings], str] | None = None  # its address when external; None: always embedded
    # Nodes of one cluster share a group: wanted together, and `up` starts every stopped one
    # before it waits for any (a KRaft quorum answers only once most of its voters run).
    group: str = ""

    def address(self, s: Settings) -> str:
        if self.endpoint is not None and self.name in s.external:
            return self.endpoint(s)
        if not self.ports:  # e.g. the TaskManager: ephemeral ports, found through its JobManager
            return s.bind_host
        return hostport(s.bind_host, s.ports[self.ports[0]])


def base_env(java_home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAVA_", "_JAVA", "FLINK_"))}
    if java_home is not None:
        env["JAVA_HOME"] = str(java_home)
        env["PATH"] = f"{java_home}/bin:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def http_get(url: str, timeout: float = 5.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (our own http:// URLs)
            return bytes(resp.read())
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise Unhealthy(f"GET {url}: {exc}") from exc


def http_answers(url: str, timeout: float = 5.0) -> str:
    """Whether anything answers HTTP at url: its status, whatever it is (an object store refuses an
    unsigned request, and that is an answer)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (a configured endpoint)
            return f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise Unhealthy(f"GET {url}: {exc}") from exc


def fresh_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def need(path: Path | None, service: str) -> Path:
    if path is None:  # install_all skips what is configured as external
        raise Unhealthy(f"{service} is configured as external: it was not installed here")
    return path
