"""Processes the launcher started: PID files, identity checks, stopping, port checks.

A PID file records the PID and the kernel's start time of that process, so a
PID reused by an unrelated program is never mistaken for ours (and never
killed by `poolsight down`).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Started:
    pid: int
    start_ticks: int
    command: list[str]


def stat_fields(stat: str) -> list[str]:
    """The fields of a /proc/PID/stat line from field 3 (the state) on: index i is field i + 3 of
    proc(5). They follow the command name, which may hold spaces and parentheses."""
    return stat[stat.rindex(")") + 2 :].split()


def thread_priorities(pid: int) -> set[tuple[int, int]]:
    """(nice, scheduling policy) of each of pid's threads: what the evaluator services lower
    (evaluator.yield_cores)."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = stat_fields(Path(f"/proc/{pid}/task/{tid}/stat").read_text())
        except OSError:
            continue  # the thread ended meanwhile
        out.add((int(fields[16]), int(fields[38])))  # fields 19 and 41: nice, policy
    return out


def read_stat(pid: int) -> list[str] | None:
    """stat_fields of pid; None when it has ended."""
    try:
        return stat_fields(Path(f"/proc/{pid}/stat").read_text())
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    fields = read_stat(pid)
    return None if fields is None else int(fields[19])  # field 22: starttime


def _is_zombie(pid: int) -> bool:
    fields = read_stat(pid)
    return fields is None or fields[0] == "Z"


def pidfile(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.pid.json"


def read_started(run_dir: Path, name: str) -> Started | None:
    path = pidfile(run_dir, name)
    try:
        raw = json.loads(path.read_text())
        return Started(int(raw["pid"]), int(raw["start_ticks"]), list(raw["command"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(started: Started | None) -> bool:
    """True when the recorded process still runs and is the same process."""
    if started is None:
        return False
    ticks = _start_ticks(started.pid)
    return ticks == started.start_ticks and not _is_zombie(started.pid)


def spawn(
    name: str,
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    log_file: Path,
    run_dir: Path,
    user: str | None = None,
) -> Started:
    """Start a detached process (its own session) logging to log_file; record its PID."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as log:
        log.write(f"\n==== poolsight starting {name}: {' '.join(command)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=user,
        )
    ticks = _start_ticks(proc.pid)
    started = Started(proc.pid, ticks if ticks is not None else -1, command)
    pidfile(run_dir, name).write_text(
        json.dumps({"pid": started.pid, "start_ticks": started.start_ticks, "command": command})
    )
    return started


def session_members(sid: int) -> list[int]:
    """Processes of session sid (the PID of the service we started: each runs in its own session)."""
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = read_stat(int(entry.name))
        if fields is not None and int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: session id
            out.append(int(entry.name))
    return out


def clean_leftovers(started: Started | None, *, timeout: float = 10.0) -> list[int]:
    """Stop what remains of a service whose own process died (a TaskManager's Python workers).

    While any process of a session is alive the kernel does not hand its ID out again, so
    every process still in the dead service's session is ours."""
    if started is None or alive(started):
        return []
    left = [p for p in session_members(started.pid) if p != started.pid]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(_start_ticks(p) is not None and not _is_zombie(p) for p in left):
            time.sleep(0.1)
    return left


def stop(run_dir: Path, name: str, *, timeout: float = 30.0) -> bool:
    """Stop the process group we started for name, and what is left of it if its own process
    died. False when nothing of ours ran."""
    return bool(stop_many(run_dir, [name], timeout=timeout))


def stop_many(run_dir: Path, names: list[str], *, timeout: float = 30.0) -> list[str]:
    """Stop the services `names` together: SIGTERM to each one's process group first, then wait
    for all (SIGKILL after `timeout`), so none waits for peers already gone (a KRaft node's clean
    shutdown needs most of its quorum). Returns the names of which something of ours ran."""
    running: dict[str, Started] = {}
    stopped: set[str] = set()
    for name in names:
        started = read_started(run_dir, name)
        if alive(started):
            assert started is not None
            running[name] = started
            _signal_group(started.pid, signal.SIGTERM)
        else:
            if clean_leftovers(started):
                stopped.add(name)
            pidfile(run_dir, name).unlink(missing_ok=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(st) for st in running.values()):
        for st in running.values():
            _reap(st.pid)
        time.sleep(0.2)
    for name, st in running.items():
        if alive(st):
            _signal_group(st.pid, signal.SIGKILL)
            while alive(st):
                _reap(st.pid)
                time.sleep(0.1)
        clean_leftovers(st)  # members that left the process group but not the session
        pidfile(run_dir, name).unlink(missing_ok=True)
        stopped.add(name)
    return [n for n in names if n in stopped]


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def port_in_use(port: int, host: str) -> bool:
    """Whether port is taken on host (the address the service would bind)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def can_bind(host: str) -> bool:
    """Whether host is an address of this machine (the embedded services bind it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, 0))
        except OSError:
            return False
    return True


def port_owner(port: int) -> str:
    """Best-effort description of who listens on port (PID and command)."""
    try:
        out = subprocess.run(
            ["ss", "-H", "-ltnp", f"sport = :{port}"], capture_output=True, text=True, timeout=5
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "another process"
    return out.split("users:")[-1].strip() if "users:" in out else "another process"


def children(pid: int) -> list[int]:
    """The child processes of pid, whichever of its threads started them (a JVM starts the
    TaskManager's Python workers from a thread other than its main one)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


def own_rss_bytes(pid: int) -> int:
    """Resident memory of pid alone (0 if it has ended)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def private_bytes(pid: int) -> int:
    """The resident pages only pid holds (Private_Clean + Private_Dirty of smaps_rollup); its
    VmRSS where that cannot be read; 0 if it has ended."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return own_rss_bytes(pid)
    return sum(int(ln.split()[1]) * 1024 for ln in lines if ln.startswith(("Private_Clean:", "Private_Dirty:")))


def rss_bytes(pid: int) -> int:
    """Resident memory of pid and its descendants, each page once: pid's RSS and the pages each
    descendant holds alone. A sum of their RSS counted PostgreSQL's shared buffers once per
    backend (22 MB each, 20 of them shared: 25 catalog connections read as 540 MB)."""
    return own_rss_bytes(pid) + sum(private_bytes(p) for p in descendants(pid))


def log_tail(log_file: Path, lines: int = 25) -> str:
    try:
        return "\n".join(log_file.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
