"""The one service loop: alerts, advice and maintenance are evaluators it runs.

An evaluator is a class with one method, `evaluate()`, that does one cycle and says what the
heartbeat shows. The loop runs it every `--every` seconds (default: POOLSIGHT_<NAME>_EVERY, else
EVERY_SECONDS), writes the heartbeat after each cycle (and one before the first, which may take
minutes), and survives a failed cycle: the error goes into the heartbeat and the log, the next
cycle tries again. `poolsight status` reads the heartbeat (infra/services.py `_health_beat`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from poolsight.argtypes import POSITIVE_COUNT, SECONDS, UsageParser
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.settings_schema import EVERY_SECONDS as EVERY_SECONDS
from poolsight.infra.trino import client_source

MIN_EVERY = 5.0
BACKGROUND_NICE = 10  # added to the launcher's niceness (CFS: about a tenth of a core's share against nice 0)

JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]
log = logging.getLogger("poolsight.evaluator")


@dataclass
class Report:
    """One cycle: what the heartbeat shows, and a problem the cycle survived (a broken rules
    edit, a degraded rollup) or None."""

    summary: dict[str, JSONValue] = field(default_factory=dict)
    error: str | None = None


class Evaluator(Protocol):
    name: str  # the service's name: its heartbeat folder, its POOLSIGHT_<NAME>_EVERY

    def evaluate(self) -> Report: ...


def evaluator_every(name: str) -> float:
    """Seconds between evaluations: each one scans the tables it reads, which competes for CPU
    with the jobs on a small machine (POOLSIGHT_ALERTS_EVERY, _ADVICE_EVERY, _MAINTENANCE_EVERY;
    the tests evaluate on demand)."""
    var = f"POOLSIGHT_{name.upper()}_EVERY"
    raw = os.environ.get(var, "")
    try:
        return max(MIN_EVERY, float(raw)) if raw else EVERY_SECONDS[name]
    except ValueError:
        raise ConfigError(f"{var}={raw!r} is not a number of seconds") from None


def heartbeat_path(s: Settings, name: str) -> Path:
    return s.run_dir / name / "heartbeat.json"


def write_heartbeat(path: Path, beat: dict[str, JSONValue]) -> None:
    """An evaluator's heartbeat (its time added), replaced whole, never half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"time": time.time(), **beat}))
    os.replace(tmp, path)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim (a GNU extension), looked up once: find_library runs ldconfig."""
    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None


def release_memory() -> None:
    """Give a cycle's freed memory back to the system. A cycle allocates and frees hundreds of MB
    (advice's replay), and glibc keeps freed chunks in its arenas: the suspected cause of the
    advice service's +17 % per 10 minutes in `make soak` while its live data stayed bounded."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def run_loop(ev: Evaluator, s: Settings, every: float, cycles: int | None = None) -> None:
    """Evaluate every `every` seconds for ever (or `cycles` times)."""
    beat = heartbeat_path(s, ev.name)
    # Alive before the first evaluation (advice replays its look-back first, minutes on a busy
    # topic): `poolsight up` must not time out waiting for it.
    write_heartbeat(beat, {"cycles": 0, "phase": "starting", "error": None})
    done = 0
    while cycles is None or done < cycles:
        started = time.monotonic()
        try:
            out = ev.evaluate()
        except Exception as exc:  # Trino down or refusing, a commit conflict: the next cycle tries again
            out = Report(error=f"{type(exc).__name__}: {exc}"[:500])
        done += 1
        entry: dict[str, JSONValue] = {
            **out.summary,
            "cycles": done,
            "seconds": round(time.monotonic() - started, 2),
            "error": out.error,
        }
        if out.error:
            log.error("%s: %s", ev.name, out.error)
        else:
            log.info("%s: %s", ev.name, json.dumps(out.summary))
        write_heartbeat(beat, entry)
        release_memory()
        if cycles is None or done < cycles:
            time.sleep(max(0.0, every - (time.monotonic() - started)))


def yield_cores(idle: bool) -> None:
    """Every thread of this process (a client made in `make` may have started some; threads
    started later inherit it) at nice +BACKGROUND_NICE, and with `idle` also SCHED_IDLE: run only
    on cores nothing else wants. Nice +10 still left an advice evaluation half a core of a 2-core
    machine's flat-out pipeline (bench/README.md, where a flat-out phase's cores go)."""
    for tid in [int(t) for t in os.listdir("/proc/self/task")]:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE))
            if idle:
                os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        except ProcessLookupError:  # the thread ended meanwhile
            continue


def serve(
    name: str, make: Callable[[Settings], Evaluator], argv: Sequence[str] | None = None, idle: bool = False
) -> int:
    """The evaluator service's command line, the same for each: `--every SECONDS`, `--cycles N`.
    `idle`: batch work whose results can wait (yield_cores)."""
    p = UsageParser(prog=f"poolsight {name} service", description=f"the {name} evaluator, in a loop")
    p.add_argument("--every", type=SECONDS, default=None, metavar="SECONDS", help="seconds between evaluations")
    p.add_argument("--cycles", type=POSITIVE_COUNT, default=None, help="stop after this many (default: for ever)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    client_source(f"poolsight-{name}")
    try:
        s = load_settings()
        every = max(MIN_EVERY, a.every) if a.every is not None else evaluator_every(name)
        ev = make(s)  # a broken rules file at the start: fail, so the launcher shows why
    except (ConfigError, ValueError) as exc:
        print(f"poolsight {name}: {exc}", file=sys.stderr)
        return 2
    # Periodic batch work yields the cores to the pipeline and the pages people wait on: an
    # advice evaluation (15-20 s of CPU every 5 minutes) landed on panes' freshness.
    yield_cores(idle)
    try:
        run_loop(ev, s, every, a.cycles)
    except KeyboardInterrupt:
        return 130
    return 0
