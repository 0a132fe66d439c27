"""The embedded Flink session cluster: its configuration (shared with every PyFlink client), the
JobManager, and one TaskManager or [flink].taskmanagers of them.

TaskManagers bind ephemeral ports on the bind host and find the JobManager through its RPC
address. TaskManager 1 is the service `flink-taskmanager`, TaskManager i `flink-taskmanager-i`,
each with its own log and PID file; when there are several, each also gets its own working
folder (<run>/flink/<name>) and a resource id per start, by which its health check finds it in
the JobManager's list.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
from pathlib import Path

from .config import Settings
from .install import Installed
from .java import find_java
from .s3_store import aws_env
from .service_base import CONF_DIR, JVM_PRETOUCH, Launch, Service, Unhealthy, base_env, fresh_dir, http_get
from .versions import pins


def flink_env(s: Settings, flink_home: Path, flink_lib: Path) -> dict[str, str]:
    """Environment for Flink processes and PyFlink clients (same jars, same config)."""
    java = find_java(exact=int(pins()["java"]["flink"]), purpose="Flink")
    env = base_env(java.home)
    conf = s.run_dir / "flink" / "conf"
    if not (conf / "config.yaml").exists():  # Flink is external: the clients still read a config folder
        write_flink_conf(s)
    env.update(
        FLINK_HOME=str(flink_home),
        FLINK_LIB_DIR=str(flink_lib),
        FLINK_CONF_DIR=str(conf),
        FLINK_LOG_DIR=str(s.log_dir),
        FLINK_PID_DIR=str(s.run_dir / "flink"),
    )
    return env | aws_env(s)


# PyFlink's client JVM (the job's graph built and submitted, then gone) with the C1 compiler only:
# C2 spent its short life compiling. A submission of both jobs took 22-32 s, 16 s so (three
# alternating runs each on the 2-core machine). The cluster's JVMs keep C2: they run for days.
CLIENT_JVM_ARGS = "-XX:TieredStopAtLevel=1"


def client_env(s: Settings, flink_home: Path, flink_lib: Path) -> dict[str, str]:
    """flink_env for a PyFlink client process (a job's submission, Flink SQL statements)."""
    return flink_env(s, flink_home, flink_lib) | {"JVM_ARGS": CLIENT_JVM_ARGS}


FLINK_MODULE_OPENS = tuple(
    [
        f"--add-exports={m}=ALL-UNNAMED"
        for m in (
            "java.base/sun.net.util",
            "java.rmi/sun.rmi.registry",
            "jdk.compiler/com.sun.tools.javac.api",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.compiler/com.sun.tools.javac.parser",
            "jdk.compiler/com.sun.tools.javac.tree",
            "jdk.compiler/com.sun.tools.javac.util",
            "java.security.jgss/sun.security.krb5",
        )
    ]
    + [
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in (
            "java.lang",
            "java.net",
            "java.io",
            "java.nio",
            "sun.nio.ch",
            "java.lang.reflect",
            "java.text",
            "java.time",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "java.util.concurrent.locks",
        )
    ]
)


EXIT_ON_OOM = "-XX:+ExitOnOutOfMemoryError"


def flink_conf_entries(s: Settings) -> dict[str, object]:
    """config.yaml of the embedded cluster, and of every PyFlink client (whose REST address is
    the configured one: the embedded JobManager's, or an external cluster's)."""
    state = s.data_dir / "flink"
    rest_host, rest_port = s.flink_rest_address
    return {
        "jobmanager.rpc.address": s.bind_host,
        "jobmanager.rpc.port": s.ports["flink_rpc"],
        "jobmanager.bind-host": s.bind_host,
        "jobmanager.memory.process.size": s.flink_jobmanager_memory,
        "taskmanager.host": s.bind_host,
        "taskmanager.bind-host": s.bind_host,
        "taskmanager.numberOfTaskSlots": s.flink_slots,
        "taskmanager.memory.process.size": s.flink_taskmanager_memory,
        # PyFlink's gRPC channel to the Python worker (records, keyed state) allocates direct
        # buffers: with only network + framework off-heap (~400 MB) a busy job ran out
        # (OutOfMemoryError in netty) and hung with its checkpoints stuck.
        "taskmanager.memory.task.off-heap.size": "768m",
        # The JVM heap carries the Python operators' state writes on their way to RocksDB: a tracker
        # snapshot is tens of MB and a bundle may write one per key. With Flink's default managed
        # share (0.4: 1.34 GB for RocksDB of a 4 GB TaskManager, 819 MB of heap) a stack test's three
        # scenarios (four members) closing panes at once ran the heap out (OutOfMemoryError on a gRPC thread, which
        # Flink only logs) and the job hung. RocksDB here holds tens of MB per key: 0.2 is plenty.
        "taskmanager.memory.managed.fraction": 0.2,
        # A checkpoint that cannot finish fails in time (3 tolerated, then the job restarts).
        "execution.checkpointing.timeout": "3 min",
        "rest.address": rest_host,
        "rest.bind-address": s.bind_host,
        "rest.port": rest_port,
        "blob.server.port": 0,
        "parallelism.default": 1,
        "io.tmp.dirs": str(state / "tmp"),
        # Keyed state off the heap, checkpoints incremental: a tracker's snapshot is tens of MB,
        # and on the heap (819 MB here) twenty of them left the JVM in GC with the job stalled,
        # each checkpoint a full 580 MB copy every 2 s. RocksDB writes only what changed.
        "state.backend.type": "rocksdb",
        "execution.checkpointing.incremental": True,
        "execution.checkpointing.dir": (state / "checkpoints").as_uri(),
        "execution.checkpointing.savepoint-dir": (state / "savepoints").as_uri(),
        # A checkpoint that fails on a busy 2-core machine is retried, not a job restart.
        "execution.checkpointing.tolerable-failed-checkpoints": 3,
        # A JobManager killed and started again at the same address is not an RPC failure to the
        # TaskManager (its heartbeats land as dead letters there): it notices only at the heartbeat
        # timeout, and until then the resubmitted jobs wait for its slots. Flink's 50 s was most
        # of a JobManager restart's delay; 20 s is still four missed heartbeats.
        "heartbeat.interval": "5 s",
        "heartbeat.timeout": "20 s",
        "jobmanager.execution.failover-strategy": "region",
        "restart-strategy.type": "exponential-delay",
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        # Flink's own module opens (its default config.yaml) plus ours: PyFlink's
        # DataStream translation reflects into java.util.
        "env.java.opts.all": " ".join((*FLINK_MODULE_OPENS, "-XX:+UseG1GC", *JVM_PRETOUCH, "-Djava.awt.headless=true")),
        # An OutOfMemoryError on a thread that is not a task's (a gRPC thread carrying a Python
        # operator's state write) is only logged by Flink: the worker's state thread died and the
        # job hung with no failover. A JVM that ran out exits instead: `status` shows the process
        # dead, the data_stale alert fires, and `up` brings it back to resume from its checkpoint.
        "env.java.opts.jobmanager": EXIT_ON_OOM,
        "env.java.opts.taskmanager": EXIT_ON_OOM,
    }


def write_flink_conf(s: Settings) -> Path:
    conf = fresh_dir(s.run_dir / "flink" / "conf")
    entries = flink_conf_entries(s)
    fresh_dir(Path(str(entries["io.tmp.dirs"])))
    (conf / "config.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in entries.items()))
    for name in ("log4j-console.properties", "log4j.properties", "log4j-cli.properties"):
        shutil.copyfile(CONF_DIR / "flink-log4j.properties", conf / name)
    return conf


def prepare_flink_jobmanager(s: Settings, inst: Installed) -> Launch:
    write_flink_conf(s)
    return Launch(
        command=["bash", str(inst.flink_home / "bin" / "jobmanager.sh"), "start-foreground"],
        env=flink_env(s, inst.flink_home, inst.flink_lib),
        cwd=s.run_dir / "flink",
    )


def taskmanager_name(node: int) -> str:
    return "flink-taskmanager" if node == 1 else f"flink-taskmanager-{node}"


def _resource_id_file(s: Settings, node: int) -> Path:
    return s.run_dir / "flink" / f"{taskmanager_name(node)}.resource-id"


# glibc settings for the TaskManager and its Python workers (they inherit its environment). The
# simulation job's Python worker copies each pool's snapshot (18-32 MB) several times a pane on
# several threads (kernel, pickle, Beam's stream, gRPC); with glibc's dynamic mmap threshold those
# copies land in up to 8 arenas per core whose freed gaps stay resident: a saw-tooth RSS rising
# 20 % per 10 minutes in `make soak`. Two arenas, and blocks of 1 MB and more mmapped (returned to
# the system when freed). The worker's hot path holds the GIL, so two arenas cost it no contention.
# The TaskManager's JVM takes them too: its heap is the JVM's own, and its native allocations
# (threads, Netty, the state backend) are what glibc's per-thread arenas fragment (the usual advice
# for JVMs and RocksDB is 2 to 4); in `make soak` its RSS peak fell from 2,484 MB to 1,848 MB.
TASKMANAGER_MALLOC = {
    "MALLOC_ARENA_MAX": "2",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(16 << 20),
}


def prepare_flink_taskmanager(s: Settings, inst: Installed, node: int = 1) -> Launch:
    write_flink_conf(s)
    command = ["bash", str(inst.flink_home / "bin" / "taskmanager.sh"), "start-foreground"]
    cwd = s.run_dir / "flink"
    # A resource id of its own, new at every start, finds this TaskManager in the JobManager's
    # list, where the one it replaces (killed) lingers until its heartbeat times out: counting
    # TaskManagers would call the new one healthy before it has registered.
    resource_id = f"{taskmanager_name(node)}-{secrets.token_hex(4)}"
    _resource_id_file(s, node).parent.mkdir(parents=True, exist_ok=True)
    _resource_id_file(s, node).write_text(resource_id)
    command.append(f"-Dtaskmanager.resource-id={resource_id}")
    if s.flink_taskmanagers > 1:
        cwd = fresh_dir(s.run_dir / "flink" / taskmanager_name(node))
    env = flink_env(s, inst.flink_home, inst.flink_lib) | TASKMANAGER_MALLOC
    return Launch(command=command, env=env, cwd=cwd)


def _flink_overview(s: Settings) -> dict[str, object]:
    body = http_get(f"{s.flink_rest_url}/overview")
    try:
        return dict(json.loads(body))
    except ValueError as exc:
        raise Unhealthy(f"Flink REST answered non-JSON: {body[:80]!r}") from exc


def health_flink_jobmanager(s: Settings) -> str:
    o = _flink_overview(s)
    return f"Flink {o.get('flink-version')}, {o.get('jobs-running')} jobs running"


def health_flink_taskmanager(s: Settings) -> str:
    """The single TaskManager: registered under the resource id it was started with (an external
    or older start without one: any TaskManager registered)."""
    if "flink-taskmanager" not in s.external and _resource_id_file(s, 1).exists():
        health_flink_taskmanager_node(s, 1)
    o = _flink_overview(s)
    tms = int(str(o.get("taskmanagers", 0)))
    if tms < 1:
        raise Unhealthy("no TaskManager registered with the JobManager")
    return f"{tms} TaskManager, {o.get('slots-available')}/{o.get('slots-total')} slots free"


def health_flink_taskmanager_node(s: Settings, node: int) -> str:
    """TaskManager `node` of several is registered with the JobManager under the resource id it
    was started with."""
    try:
        resource_id = _resource_id_file(s, node).read_text().strip()
    except OSError:
        raise Unhealthy(f"{taskmanager_name(node)} was not started here") from None
    body = http_get(f"{s.flink_rest_url}/taskmanagers")
    try:
        registered = list(json.loads(body)["taskmanagers"])
    except (ValueError, KeyError, TypeError) as exc:
        raise Unhealthy(f"Flink REST /taskmanagers answered {body[:80]!r}") from exc
    mine = next((tm for tm in registered if tm.get("id") == resource_id), None)
    if mine is None:
        raise Unhealthy(f"{resource_id} is not registered with the JobManager ({len(registered)} TaskManagers are)")
    return (
        f"{resource_id}: {mine.get('freeSlots')}/{mine.get('slotsNumber')} slots free, "
        f"{len(registered)} of {s.flink_taskmanagers} TaskManagers registered"
    )


def flink_endpoint(s: Settings) -> str:
    return s.flink_rest_url


def taskmanager_node(node: int, taskmanagers: int) -> Service:
    """The service running TaskManager `node` of `taskmanagers`; a single one is `flink-taskmanager`
    as it always was."""
    if taskmanagers == 1:
        return Service(
            "flink-taskmanager",
            (),
            ("flink-jobmanager",),
            120,
            prepare_flink_taskmanager,
            health_flink_taskmanager,
            flink_endpoint,
        )

    def prepare(s: Settings, inst: Installed) -> Launch:
        return prepare_flink_taskmanager(s, inst, node)

    def health(s: Settings) -> str:
        return health_flink_taskmanager_node(s, node)

    return Service(
        taskmanager_name(node),
        (),
        ("flink-jobmanager",),
        120,
        prepare,
        health,
        flink_endpoint,
        group="flink-taskmanager",
    )
