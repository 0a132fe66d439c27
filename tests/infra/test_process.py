"""A service whose own process died leaves nothing running: its session is cleaned up."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from poolsight.infra.process import alive, read_started, read_stat, session_members, spawn, stop, stop_many

# A "service" whose child (a PyFlink worker, say) outlives it, in a process group of its own but
# the service's session: the leader prints its child's PID.
SERVICE = [
    sys.executable,
    "-c",
    "import subprocess, sys, time\n"
    "c = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgid(0, 0); time.sleep(600)'])\n"
    "print(c.pid, flush=True)\n"
    "time.sleep(600)\n",
]


def _child(log: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = [x for x in log.read_text().splitlines() if x.strip().isdigit()]
        if lines:
            return int(lines[0])
        time.sleep(0.1)
    raise AssertionError(f"no child PID in {log}: {log.read_text()}")


def _running(pid: int) -> bool:
    fields = read_stat(pid)
    return fields is not None and fields[0] != "Z"


def test_stop_cleans_up_after_a_killed_service(tmp_path: Path) -> None:
    log = tmp_path / "svc.log"
    started = spawn("svc", SERVICE, env=dict(os.environ), cwd=tmp_path, log_file=log, run_dir=tmp_path)
    child = _child(log)
    assert set(session_members(started.pid)) >= {started.pid, child}
    os.kill(started.pid, signal.SIGKILL)  # kill -9 the service, as the TaskManager
    os.waitpid(started.pid, 0)
    assert not alive(read_started(tmp_path, "svc")) and _running(child)  # the orphan lives on
    assert stop(tmp_path, "svc") is True  # something of ours was still running
    assert not _running(child) and session_members(started.pid) == []
    assert read_started(tmp_path, "svc") is None
    assert stop(tmp_path, "svc") is False


def test_stop_of_a_live_service_takes_its_whole_session(tmp_path: Path) -> None:
    log = tmp_path / "svc.log"
    started = spawn("svc", SERVICE, env=dict(os.environ), cwd=tmp_path, log_file=log, run_dir=tmp_path)
    child = _child(log)
    assert stop(tmp_path, "svc", timeout=5) is True
    assert not _running(child) and not _running(started.pid)


def test_stop_many_signals_every_service_before_it_waits(tmp_path: Path) -> None:
    """Like the nodes of a KRaft quorum: `slow` exits on SIGTERM only once `quick` has stopped
    too. Stopped one after the other, `slow` would wait for the timeout and be killed."""
    marker = tmp_path / "quick-stopped"
    quick = (
        "import pathlib, signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path({str(marker)!r}).touch(), sys.exit(0)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    slow = (
        "import pathlib, signal, sys, time\n"
        "def term(*a):\n"
        f"    while not pathlib.Path({str(marker)!r}).exists(): time.sleep(0.05)\n"
        "    print('clean exit', flush=True); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, term)\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    for name, code in (("slow", slow), ("quick", quick)):
        spawn(
            name,
            [sys.executable, "-c", code],
            env=dict(os.environ),
            cwd=tmp_path,
            log_file=tmp_path / name,
            run_dir=tmp_path,
        )
    deadline = time.monotonic() + 60  # a loaded machine starts Pythons slowly
    # Whole lines: the log's first line is the command, which holds the words too.
    while not all("ready" in (tmp_path / n).read_text().splitlines() for n in ("slow", "quick")):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    t0 = time.monotonic()
    assert stop_many(tmp_path, ["slow", "quick", "never-started"], timeout=30) == ["slow", "quick"]
    # One after the other, `slow` would take the whole timeout and be killed without its clean exit.
    assert time.monotonic() - t0 < 20 and "clean exit" in (tmp_path / "slow").read_text().splitlines()
    assert read_started(tmp_path, "slow") is None and read_started(tmp_path, "quick") is None


FORKED = """
import os, sys, time
block = bytearray(160 * 2**20)  # touched: resident in the parent
for i in range(0, len(block), 4096):
    block[i] = 1
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:  # a child shares the parent's pages until it writes them (as a postgres backend does)
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
print(" ".join(map(str, kids)), flush=True)
time.sleep(60)
"""


def test_a_service_tree_counts_its_shared_pages_once() -> None:
    import subprocess

    from poolsight.infra.process import descendants, own_rss_bytes, rss_bytes

    proc = subprocess.Popen([sys.executable, "-c", FORKED], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        kids = [int(p) for p in proc.stdout.readline().split()]
        assert sorted(descendants(proc.pid)) == sorted(kids)
        mb = 2**20
        each = [own_rss_bytes(p) / mb for p in (proc.pid, *kids)]
        assert all(x > 160 for x in each), each  # every RSS counts the shared block: 4 x 160 MB
        tree = rss_bytes(proc.pid) / mb
        assert each[0] < tree < each[0] + 3 * 20, (tree, each)  # the parent's, and the children's own pages
    finally:
        proc.kill()
        proc.wait()
