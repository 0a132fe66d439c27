"""Where a benchmark's CPU time goes: CPU seconds per part of the stack, from /proc.

Each process of the stack (the launcher's services, from their pid files in the run folder,
and their descendants, like the Python workers a TaskManager starts) and the benchmark itself is
put in a part by its command line; two snapshots give the CPU seconds each part used in between.
A process that ended in between is missed (its time is not in /proc any more): the benchmark
takes its snapshots while the jobs run. Another stack on the machine is not counted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from poolsight.infra.process import stat_fields

# (part, test on the command line's words) in order: the first that matches names the process.
RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("python worker (jobs' Python functions)", lambda c: "pyflink" in c and "java" not in c.split(" ", 1)[0]),
    ("flink taskmanager (JVM)", lambda c: "TaskManagerRunner" in c),
    ("flink jobmanager (JVM)", lambda c: "StandaloneSessionClusterEntrypoint" in c or "ClusterEntrypoint" in c),
    ("kafka", lambda c: "kafka.Kafka" in c),
    ("trino", lambda c: "io.trino" in c or "TrinoServer" in c),
    ("registry", lambda c: "apicurio" in c.lower() or "quarkus" in c.lower()),
    ("postgres", lambda c: c.startswith("postgres") or "/postgres " in c or "bin/postgres" in c),
    ("poolsight services", lambda c: "poolsight." in c and " -m " in f" {c} "),
)
OWN = "benchmark (generator, producer)"
TICK = os.sysconf("SC_CLK_TCK")


def part_of(cmdline: str, pid: int, own_pid: int) -> str | None:
    """The part a process belongs to (None: not the stack's)."""
    if pid == own_pid:
        return OWN
    for name, test in RULES:
        if test(cmdline):
            return name
    return None


def _cpu_seconds(stat: str) -> float:
    fields = stat_fields(stat)
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15: utime, stime


def _parent(stat: str) -> int:
    return int(stat_fields(stat)[1])  # field 4: ppid


def stack_pids(run_dir: Path) -> set[int]:
    """The launcher's services in this run folder (their pid files)."""
    out: set[int] = set()
    for f in run_dir.glob("*.pid.json"):
        try:
            out.add(int(json.loads(f.read_text())["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def snapshot(run_dir: Path, proc: Path = Path("/proc"), own_pid: int | None = None) -> dict[int, tuple[str, float]]:
    """pid -> (part, CPU seconds so far) of the stack's processes, their descendants and the benchmark."""
    own = os.getpid() if own_pid is None else own_pid
    stats: dict[int, str] = {}
    for d in proc.iterdir():
        if d.name.isdigit():
            try:
                stats[int(d.name)] = (d / "stat").read_text()
            except OSError:
                continue  # ended while read
    roots = stack_pids(run_dir) | {own}
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(_parent(stat), []).append(pid)
    ours, todo = set(), [p for p in roots if p in stats]
    while todo:
        pid = todo.pop()
        if pid not in ours:
            ours.add(pid)
            todo.extend(children.get(pid, []))
    out: dict[int, tuple[str, float]] = {}
    for pid in ours:
        try:
            cmd = (proc / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        out[pid] = (part_of(cmd, pid, own) or "other", _cpu_seconds(stats[pid]))
    return out


def machine_busy(proc: Path = Path("/proc")) -> float:
    """CPU seconds the whole machine has been busy since boot, every process and the kernel's own
    work (/proc/stat's first line: all but idle and iowait). Beside the parts' sum it shows what
    ran that is not the stack's, and whether the cores were saturated."""
    fields = [int(v) for v in (proc / "stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK  # user .. steal; guest is in user already


def part_pid(run_dir: Path, part: str) -> int | None:
    """The process of the stack's part (e.g. "trino"), if it runs."""
    return next((pid for pid, (p, _) in snapshot(run_dir).items() if p == part), None)


# HotSpot's JIT compiler threads ("C1 CompilerThread0", "C2 CompilerThread1"; the name is cut at 15 characters).
JIT_THREAD = "CompilerThre"


def jvm_threads(pid: int, proc: Path = Path("/proc")) -> dict[int, tuple[float, bool]]:
    """Each live thread of the JVM: (CPU seconds so far, whether it is a JIT compiler thread)."""
    out: dict[int, tuple[float, bool]] = {}
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # ended while read
        out[int(task.name)] = (_cpu_seconds(stat), JIT_THREAD in stat[stat.index("(") : stat.rindex(")")])
    return out


def jvm_used(before: dict[int, tuple[float, bool]], after: dict[int, tuple[float, bool]]) -> tuple[float, float]:
    """(CPU seconds, of them the JIT's) the threads alive at `after` used since `before` (a thread
    started in between from 0). A thread that ended in between is not counted: HotSpot ends idle
    compiler threads, and their totals leaving the sum made a span's JIT time negative."""
    total = jit = 0.0
    for tid, (seconds, is_jit) in after.items():
        used = max(0.0, seconds - before.get(tid, (0.0, is_jit))[0])
        total += used
        jit += used if is_jit else 0.0
    return total, jit


def used(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per part between two snapshots (a process started in between counts from 0)."""
    out: dict[str, float] = {}
    for pid, (part, cpu) in after.items():
        start = before.get(pid, (part, 0.0))[1]
        out[part] = out.get(part, 0.0) + max(0.0, cpu - start)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def table(profile: dict[str, float], getpages: int, wall_seconds: float) -> str:
    """The profile as lines: part, CPU seconds, share, CPU seconds per million getpages, cores busy."""
    total = sum(profile.values()) or 1.0
    lines = [f"{'part':42} {'CPU s':>8} {'share':>6} {'s/M getpages':>13} {'cores':>6}"]
    for part, cpu in profile.items():
        lines.append(
            f"{part:42} {cpu:8.1f} {cpu / total:6.1%} {cpu / max(getpages, 1) * 1e6:13.3f} "
            f"{cpu / max(wall_seconds, 1e-9):6.2f}"
        )
    lines.append(f"{'all':42} {total:8.1f} {1:6.1%} {total / max(getpages, 1) * 1e6:13.3f} {total / wall_seconds:6.2f}")
    return "\n".join(lines)
