"""Each long-running process's memory ceiling: what `poolsight status` and `make soak` hold its
resident memory (with its child processes) against.

The defaults follow the memory each service is given: a JVM's heap or process size and what it
uses beside it, the TaskManager's process size plus its Python worker (the jobs' Python
functions, a child process, whose trackers are bounded by the job's options), and 1 GB or less
for the Python services, whose reads are bounded (advice/recent.py). `[memory.ceiling]` in
poolsight.toml (service = MB) or POOLSIGHT_CEILING_<SERVICE>_MB (dashes as underscores)
overrides one.
"""

from __future__ import annotations

import os
import re
from typing import Any

from poolsight.infra.config import ConfigError, Settings

PYTHON_WORKER_MB = 2560  # the TaskManager's Python worker: live trackers, decode buffers, the simulator
JVM_NATIVE_MB = 512  # beside a heap: metaspace, threads, code cache, direct buffers
SERVICE_MB = {"postgres": 512, "dashboard": 512, "alerts": 512, "advice": 1024, "maintenance": 512}


def size_mb(text: str) -> int:
    """'2G', '4096m', '768M' as MB."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[bB]?\s*", text)
    if not m:
        raise ConfigError(f"{text!r} is not a memory size (e.g. 512m, 2G)")
    n, unit = int(m.group(1)), m.group(2).lower()
    return {"k": n // 1024, "m": n, "g": n * 1024, "": n // 2**20}[unit]


def default_ceilings(s: Settings) -> dict[str, int]:
    out = dict(SERVICE_MB)
    out["kafka"] = 768 + JVM_NATIVE_MB
    out["registry"] = 512 + JVM_NATIVE_MB
    out["trino"] = size_mb(s.trino_heap) + 1024
    out["flink-jobmanager"] = size_mb(s.flink_jobmanager_memory) + 256
    out["flink-taskmanager"] = size_mb(s.flink_taskmanager_memory) + PYTHON_WORKER_MB
    for i in range(2, s.kafka_brokers + 1):
        out[f"kafka-{i}"] = out["kafka"]
    for i in range(2, s.flink_taskmanagers + 1):
        out[f"flink-taskmanager-{i}"] = out["flink-taskmanager"]
    return out


def ceilings(s: Settings, env: dict[str, str] | None = None) -> dict[str, int]:
    """Per service, its ceiling in MB: the defaults, `[memory.ceiling]`, then the environment."""
    env = dict(os.environ) if env is None else env
    out = default_ceilings(s)
    for name, value in s.ceiling_conf.items():
        if name not in out:
            raise ConfigError(f"[memory.ceiling].{name}: no such service (one of {', '.join(sorted(out))})")
        out[name] = _mb(f"[memory.ceiling].{name}", value)
    for name in list(out):
        var = f"POOLSIGHT_CEILING_{name.upper().replace('-', '_')}_MB"
        if env.get(var):
            out[name] = _mb(var, env[var])
    return out


def _mb(where: str, value: Any) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}={value!r}: a whole number of MB") from None
    if n <= 0:
        raise ConfigError(f"{where}={value!r}: must be above 0")
    return n
