"""What the stack tests share: Trino queries and the streaming jobs as the tests submit them."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from poolsight.infra.config import Settings, load_settings
from poolsight.infra.trino import trino_rows
from poolsight.schemas.tables import Table
from poolsight.sql.rollup import metadata_table
from tests.conftest import poolsight

# Long enough that a kill can land between the last checkpoint and the flush (the failover test
# kills once the job's offsets are committed to the end; 10 s was too short once in a full run);
# short enough that a generated workload's last pane is written soon after the generator stops.
IDLE_FLUSH = 15


def query(sql: str, params: tuple[Any, ...] = (), user: str | None = None) -> list[Any]:
    """The rows of one parameterised statement (as `user`, else the writer)."""
    s = load_settings()
    return trino_rows(s, sql, params, user=user)[1] if user else trino_rows(s, sql, params)[1]


def wait_rows(sql: str, params: tuple[Any, ...], want: int) -> list[Any]:
    """The statement's rows once it returns at least `want` (up to 120 s; what it returned then)."""
    rows: list[Any] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(rows) < want:
        rows = query(sql, params)
        time.sleep(1 if len(rows) < want else 0)
    return rows


# What the simulation job has committed per pool, table by table: each sink has its own Iceberg
# committer, so a checkpoint's rows land in one table a moment before the next. A test that waited
# for pool_pane and then reads another of these tables waits for them all (wait_simulated).
_SIMULATED = {
    "pool_pane": "SELECT pool, sum(getpages) FROM iceberg.poolsight.pool_pane WHERE source = ? GROUP BY pool",
    "object_pane": "SELECT pool, sum(getpages) FROM iceberg.poolsight.object_pane WHERE source = ? GROUP BY pool",
    "sim_curve": "SELECT pool, sum(refs) FROM iceberg.poolsight.sim_curve WHERE source = ? AND is_current "
    "AND pool_policy GROUP BY pool",
}
_PANES = {
    "pool_pane": "SELECT pool, count(*) FROM iceberg.poolsight.pool_pane WHERE source = ? GROUP BY pool",
    "sim_accuracy_pane": "SELECT pool, count(*) FROM iceberg.poolsight.sim_accuracy_pane WHERE source = ? "
    "GROUP BY pool",
}


def wait_simulated(source: str, getpages: int | dict[str, int], timeout: float = 60, accuracy: bool = False) -> None:
    """Until pool_pane, object_pane and the pool-policy curve at the current size each hold
    `getpages` (a total, or per pool) and the same getpages per pool; with `accuracy`, also one
    sim_accuracy_pane row per pool_pane row. Fails with what each table held."""
    deadline = time.monotonic() + timeout
    while True:
        got = {t: {str(p): int(n) for p, n in query(sql, (source,))} for t, sql in _SIMULATED.items()}
        panes = {t: {str(p): int(n) for p, n in query(sql, (source,))} for t, sql in _PANES.items()} if accuracy else {}
        pools = got["pool_pane"]
        total = pools == getpages if isinstance(getpages, dict) else sum(pools.values()) == getpages
        if (
            total
            and all(v == pools for v in got.values())
            and len({str(sorted(v.items())) for v in panes.values()}) <= 1
        ):
            return
        assert time.monotonic() < deadline, f"getpages per pool, table by table: {got}; rows: {panes}; want {getpages}"
        time.sleep(2)


def properties_of(table: Table) -> dict[str, str]:
    """The table's Iceberg properties, as Trino lists them."""
    return {str(k): str(v) for k, v in query(f"SELECT key, value FROM {metadata_table(table, 'properties')}")}


def metadata_files(table: Table) -> list[Path]:
    """The metadata files in the folder of the table's current one, as the disk holds them."""
    [[current]] = query(
        f"SELECT file FROM {metadata_table(table, 'metadata_log_entries')} ORDER BY timestamp DESC LIMIT 1"
    )
    return sorted(Path(re.sub(r"^file:/*", "/", str(current))).parent.glob("*.metadata.json"))


# The jobs as the stack tests run them: checkpoints every 2 s; --check-panes 2: a prediction
# is checked over the 2 whole panes after an -ALTER.
# --mode exact: these tests hold the stream to the offline exact simulation; the default (auto,
# fixed-size SHARDS) is exact only below its sample budget (tests/simulator/test_auto_mode.py).
# --group-sample 1 likewise for the data-sharing group, which the generator's GBP checks counter
# for counter: auto samples the scenario's GBP1 at 0.2, and a sample holding or missing a few of
# the hottest pages moved one interval's GBP hit ratio by 10 points in one run (docs/simulator.md).
# The data-sharing group the jobs simulate together (the data-sharing scenario's run in
# test_pipeline.py sends as these members, in this group): learned from the group name their
# pool attributes carry, not given to the jobs.
# A session's own names: gbp_stats is append-only, and the test stack keeps its data.
_TAG = uuid.uuid4().hex[:4].upper()
GROUP, GROUP_MEMBERS = f"DSG{_TAG}", (f"DSA{_TAG}", f"DSB{_TAG}")
GBP2_REBUILT_AT = 120  # seconds of event time: a pane and statistics interval boundary
SUBMIT = (
    "jobs", "submit", "--checkpoint-seconds", "2", "--idle-flush", str(IDLE_FLUSH), "--check-panes", "2",
    "--mode", "exact", "--group-sample", "1",
)  # fmt: skip


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """os.environ with `env` on top, restored afterwards: another home's settings and commands."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        yield


def settings_with(env: dict[str, str]) -> Settings:
    """The settings a process with `env` on top of this one's reads."""
    with environment(env):
        return load_settings()


def _running() -> set[str]:
    from poolsight.flink_jobs.submit import JOBS, list_jobs

    names = {name for _, name in JOBS.values()}
    return {j["name"] for j in list_jobs(load_settings()) if j["name"] in names and j["state"] == "RUNNING"}


@pytest.fixture(scope="session")
def session_jobs() -> Iterator[None]:
    """The streaming jobs, submitted afresh once a session (modules keep their keys apart by
    their own members) and cancelled at its end."""
    poolsight("jobs", "cancel", "--all", "--no-savepoint")
    r = poolsight(*SUBMIT, "--fresh", timeout=600)
    assert r.returncode == 0, f"jobs submit failed:\n{r.stdout}\n{r.stderr}"
    yield
    poolsight("jobs", "cancel", "--all", "--no-savepoint")


def _ensure_jobs() -> None:
    """The session's jobs running: submitted again, from their last checkpoint, when a module
    before stopped them (test_chaos runs jobs of its own)."""
    if len(_running()) < 2:
        poolsight("jobs", "cancel", "--all", "--no-savepoint")
        r = poolsight(*SUBMIT, timeout=600)
        assert r.returncode == 0, f"jobs submit failed:\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="module")
def jobs(session_jobs: None) -> None:
    """The session's jobs, running. A submission costs half a minute of the 2 cores: modules
    share one where they can."""
    _ensure_jobs()


SIZES = {"BP1": 40000, "BP2": 20000}  # day-posting.yaml


def generate(member: str, out: Path | None, *extra: str, duration: int = 150) -> dict[str, Any]:
    """day-posting as `member` (seed 7, 8,000 getpages per second of event time): to Kafka, or
    with `out` the same trace and statistics as files. Its last JSON line."""
    args = ["generate", "day-posting", "--members", member, "--seed", "7", "--duration", str(duration)]
    args += ["--event-rate", "8000", *extra]
    if out is not None:
        args += ["--output", str(out)]
    r = poolsight(*args)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def truth(trace: Path) -> dict[str, int]:
    """Getpages per pool of a trace file, counted row by row."""
    t = pacsv.read_csv(trace)
    gp = t.filter(pc.equal(t["function"], "GP"))
    return {str(p): int(pc.sum(pc.equal(gp["pool"], p)).as_py()) for p in SIZES}


@pytest.fixture(scope="session")
def day_posting(session_jobs: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict[str, int]]:
    """day-posting for 150 s (1.2 M getpages) as one member, in Kafka and as files, with its
    getpages per pool counted from the files: the workload test_grafana and test_pipeline both
    read, generated once a session. (member, files, truth)"""
    _ensure_jobs()
    member = f"E{uuid.uuid4().hex[:6].upper()}"
    files = tmp_path_factory.mktemp("e2e")
    generate(member, files)
    produced = generate(member, None)
    counted = truth(files / "trace.csv")
    assert sum(counted.values()) == produced["getpages"]
    return member, files, counted


# A log line of level ERROR or FATAL, or a JVM's end (the Python workers' dumps also say "exit code").
_COMPLAINT = re.compile(r"^\d{4}-\d\d-\d\d \S+ +(ERROR|FATAL) |OutOfMemoryError|Terminating TaskManager|fatal error")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A stack test that fails reports the services' states and the Flink processes' last
    complaints: a TaskManager gone between tests shows why (CI keeps only this output)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    from poolsight.launcher import status

    lines = [
        f"{r.name}: {r.state} pid {r.pid} rss {r.rss_mb:.0f} MB"
        for r in status(load_settings())
        if r.kind == "embedded"
    ]
    lines += [x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith(("MemTotal", "MemAvailable"))]
    for service in ("flink-taskmanager", "flink-jobmanager"):
        lines += log_lines(service, _COMPLAINT, 12) + log_lines(service, None, 5)
    report.sections.append(("stack state", "\n".join(lines)))


def log_lines(service: str, match: re.Pattern[str] | None, last: int, log_dir: Path | None = None) -> list[str]:
    """The service's last `last` log lines that `match` finds (all lines when None), cut to 400
    characters; from `log_dir` (another home's) or the session's."""
    try:
        text = ((log_dir or load_settings().log_dir) / f"{service}.log").read_text(errors="replace").splitlines()
    except OSError as e:
        return [f"{service}.log: {e}"]
    return [f"{service}.log: {x[:400]}" for x in text if match is None or match.search(x)][-last:]
