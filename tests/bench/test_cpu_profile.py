"""The benchmark's CPU profile: processes of the stack by their command lines, from a /proc laid out here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench import cpu_profile as cp


def _proc(root: Path, pid: int, ppid: int, cmd: list[str], ticks: tuple[int, int]) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "cmdline").write_bytes(b"\0".join(c.encode() for c in cmd) + b"\0")
    # pid (comm) state ppid ... utime is field 14, stime 15 (1-based); the name holds a space and a ')'.
    fields = ["S", str(ppid), *["0"] * 9, str(ticks[0]), str(ticks[1]), *["0"] * 30]
    (d / "stat").write_text(f"{pid} (odd name) x) {' '.join(fields)}\n")


def test_parts_by_command_line() -> None:
    assert cp.part_of("java -cp x org.apache.flink.runtime.taskexecutor.TaskManagerRunner", 5, 1) == (
        "flink taskmanager (JVM)"
    )
    assert str(cp.part_of("/v/bin/python -m pyflink.fn_execution.beam.beam_boot --id=1", 5, 1)).startswith(
        "python worker"
    )
    assert cp.part_of("java -cp lib/* io.trino.server.TrinoServer", 5, 1) == "trino"
    assert cp.part_of("java kafka.Kafka server.properties", 5, 1) == "kafka"
    assert cp.part_of("anything", 7, 7) == cp.OWN
    assert cp.part_of("bash -c sleep", 5, 1) is None


def test_cpu_seconds_of_the_stack_and_its_descendants_only(tmp_path: Path) -> None:
    proc, run = tmp_path / "proc", tmp_path / "run"
    run.mkdir()
    (run / "flink-taskmanager.pid.json").write_text(json.dumps({"pid": 10}))
    (run / "broken.pid.json").write_text("{")
    tick = cp.TICK
    _proc(proc, 10, 1, ["java", "TaskManagerRunner"], (2 * tick, tick))
    _proc(proc, 11, 10, ["python", "-m", "pyflink.fn_execution.beam.beam_boot"], (5 * tick, 0))
    _proc(proc, 12, 11, ["python", "-m", "pyflink.fn_execution.beam.beam_worker"], (tick, tick))
    _proc(proc, 20, 1, ["java", "io.trino.server.TrinoServer"], (100 * tick, 0))  # another stack's Trino
    _proc(proc, 30, 1, ["python", "bench"], (tick, 0))
    before = cp.snapshot(run, proc, own_pid=30)
    assert set(before) == {10, 11, 12, 30}
    assert before[10] == ("flink taskmanager (JVM)", 3.0)
    # Later: the worker used 4 s more, a new worker started, the benchmark 1 s more.
    for pid in (11, 30):
        (proc / str(pid)).rename(tmp_path / f"old{pid}")
    _proc(proc, 11, 10, ["python", "-m", "pyflink.fn_execution.beam.beam_boot"], (9 * tick, 0))
    _proc(proc, 13, 10, ["python", "-m", "pyflink.x"], (tick // 2, 0))
    _proc(proc, 30, 1, ["python", "bench"], (2 * tick, 0))
    used = cp.used(before, cp.snapshot(run, proc, own_pid=30))
    assert used == {"python worker (jobs' Python functions)": 4.5, cp.OWN: 1.0, "flink taskmanager (JVM)": 0.0}
    text = cp.table(used, 1_000_000, 2.0)
    assert "python worker" in text and text.splitlines()[-1].split()[1:3] == ["5.5", "100.0%"]


def _thread(root: Path, pid: int, tid: int, name: str, ticks: tuple[int, int]) -> None:
    d = root / str(pid) / "task" / str(tid)
    d.mkdir(parents=True)
    fields = ["S", "1", *["0"] * 9, str(ticks[0]), str(ticks[1]), *["0"] * 30]
    (d / "stat").write_text(f"{tid} ({name}) {' '.join(fields)}\n")


def test_a_jvms_cpu_and_its_jit_compiler_threads_share(tmp_path: Path) -> None:
    proc, tick = tmp_path / "proc", cp.TICK
    _thread(proc, 20, 20, "java", (tick, 0))
    _thread(proc, 20, 21, "C2 CompilerThre", (3 * tick, tick))
    _thread(proc, 20, 22, "C1 CompilerThre", (tick, 0))
    _thread(proc, 20, 23, "dispatcher-quer", (2 * tick, 2 * tick))
    _thread(proc, 20, 24, "Compiler) x", (tick, 0))  # a name holding ')' is not a compiler thread's
    threads = cp.jvm_threads(20, proc)
    assert threads == {20: (1.0, False), 21: (4.0, True), 22: (1.0, True), 23: (4.0, False), 24: (1.0, False)}
    assert cp.jvm_used({}, threads) == (11.0, 5.0)  # all of it since the JVM started
    assert cp.jvm_threads(99, proc) == {}  # ended


def test_a_compiler_thread_that_ended_between_two_snapshots_takes_nothing_away(tmp_path: Path) -> None:
    proc, tick = tmp_path / "proc", cp.TICK
    _thread(proc, 20, 21, "C2 CompilerThre", (40 * tick, 0))
    _thread(proc, 20, 23, "dispatcher-quer", (10 * tick, 0))
    before = cp.jvm_threads(20, proc)
    assert before == {21: (40.0, True), 23: (10.0, False)}
    shutil.rmtree(proc / "20" / "task" / "21")  # HotSpot ended the idle compiler thread
    (proc / "20" / "task" / "23").rename(proc / "old")
    _thread(proc, 20, 23, "dispatcher-quer", (13 * tick, 0))
    _thread(proc, 20, 30, "C1 CompilerThre", (2 * tick, 0))  # a compiler thread started in between
    assert cp.jvm_used(before, cp.jvm_threads(20, proc)) == (5.0, 2.0)


def test_machine_busy_is_all_but_idle_and_iowait(tmp_path: Path) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice, in ticks (guest is inside user)
    (tmp_path / "stat").write_text("cpu  1000 20 300 5000 70 4 6 10 500 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    assert cp.machine_busy(tmp_path) == (1000 + 20 + 300 + 4 + 6 + 10) / cp.TICK
