"""`make chaos`: each service killed with kill -9 while a fixed workload streams in, brought
back with `poolsight up`; then the getpages per pool in Iceberg must equal what the generator
produced, and dead_letter must hold nothing of it.

The jobs run on consumer groups of their own (started at `latest`, pinned at submission:
flink-jobs/start_offsets.py), so earlier data on the topics does not count. Each trial is a
new member (source) of the generator: a fixed number of getpages at a fixed rate, the fault
`--kill-after` seconds in, the service started again after `--down` seconds (60 s for the
Kafka outage). A killed JobManager takes its jobs with it (no HA in a one-machine stack):
after `up`, the jobs it forgot are submitted again as `poolsight up` does (resume.py),
resuming from their retained checkpoints. `none` is the same workload without a fault: the
reference for how long results take.

Prints a table (fault, trial, produced, in Iceberg, dead-lettered, up seconds, seconds from
the end of the stream until the totals were exact) and a JSON last line; exits 1 if any trial
lost, doubled or dead-lettered a getpage.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import numpy.typing as npt

from poolsight.flink_jobs import submit as jobs
from poolsight.flink_jobs.options import JobOptions, SimulationOptions, StatisticsOptions
from poolsight.flink_jobs.resume import resume_forgotten
from poolsight.infra.config import Settings, load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.registry_access import registry_access
from poolsight.infra.trino import trino_rows
from poolsight.ingest.generator import Chunk, Generator, KafkaSink
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.scenario import load
from poolsight.launcher import LaunchError, status, up
from poolsight.schemas.getpage import Function
from poolsight.sql.history import cycle
from poolsight.sql.retention import Retention

OLD_TRACE = "old-trace-resubmit"
OLD_DAYS = 60
# (fault, the service killed, seconds it stays down); None: no fault, the reference.
FAULTS: dict[str, tuple[str | None, float | None]] = {
    "none": (None, None),
    "kafka": ("kafka", None),
    "registry": ("registry", None),
    "postgres": ("postgres", None),
    "flink-jobmanager": ("flink-jobmanager", None),
    "flink-taskmanager": ("flink-taskmanager", None),
    "trino": ("trino", None),
    "kafka-outage-60s": ("kafka", 60.0),
    # No service killed: the trace is 60 days old, and the jobs are cancelled (savepoint) and
    # submitted again on the same consumer group mid-stream, maintenance cycles running through.
    OLD_TRACE: (None, None),
}
# Every trial runs a maintenance cycle (rollups, then retention keeping 14 days of panes) during
# its fault and after the stream: hours and days must hold what the panes hold.
RETENTION = Retention(pane_days=14, hour_months=13, day_months=None)


class CountingSink(KafkaSink):
    """KafkaSink counting the getpages it sent per pool (the batches' getpage events): the truth
    Iceberg is checked against."""

    def __init__(self, producer: AvroProducer) -> None:
        super().__init__(producer)
        self.sent: Counter[str] = Counter()

    def getpages(self, source: str, pool: str, c: Chunk, sel: npt.NDArray[np.bool_], names: list[str]) -> None:
        super().getpages(source, pool, c, sel, names)
        self.sent[pool] += int(np.count_nonzero(c.function[sel] == Function.GETPAGE))  # not SWI, REL


@dataclass
class Trial:
    fault: str
    trial: int
    sent: dict[str, int]  # getpages per pool, as the generator handed them to the producer
    in_iceberg_by_pool: dict[str, int]
    dead_lettered: int
    up_seconds: float | None
    complete_seconds: float | None  # from the end of the stream until the totals were exact
    resubmitted: list[str]  # jobs a restarted JobManager forgot, submitted again
    in_hours_by_pool: dict[str, int] = field(default_factory=dict)  # pool_hour after the last cycle
    in_days_by_pool: dict[str, int] = field(default_factory=dict)  # pool_day
    cycles: list[str] = field(default_factory=list)  # each maintenance cycle: ok, or why it failed
    error: str | None = None  # the generator's or producer's, or jobs not running after up
    member: str = ""  # the generator's source of this trial
    seconds: float = 0.0  # the trial's wall time, maintenance cycles included

    @property
    def produced(self) -> int:
        return sum(self.sent.values())

    @property
    def in_iceberg(self) -> int:
        return sum(self.in_iceberg_by_pool.values())

    def ok(self) -> bool:
        return (
            self.error is None
            and self.complete_seconds is not None
            and self.in_iceberg_by_pool == self.sent
            and self.in_hours_by_pool == self.sent
            and self.in_days_by_pool == self.sent
            and self.dead_lettered == 0
        )


def _per_pool(s: Settings, member: str, table: str = "pool_pane") -> dict[str, int] | None:
    try:
        _, rows = trino_rows(
            s, f"SELECT pool, sum(getpages) FROM iceberg.poolsight.{table} WHERE source = ? GROUP BY pool", (member,)
        )
    except Exception:  # Trino down or starting (its own fault): ask again
        return None
    return {str(p): int(n) for p, n in rows}


def _maintain(s: Settings, cycles: list[str]) -> None:
    """One maintenance cycle, as the service runs it; a cycle a fault breaks is noted, not fatal."""
    try:
        cycle(s, RETENTION)
        cycles.append("ok")
    except Exception as exc:
        cycles.append(f"{type(exc).__name__}: {str(exc)[:80]}")


def _dead(s: Settings, member: str) -> int:
    _, rows = trino_rows(s, "SELECT count(*) FROM iceberg.poolsight.dead_letter WHERE source LIKE ?", (f"{member}%",))
    return int(rows[0][0])


def _kill(s: Settings, service: str) -> None:
    pid = next(r.pid for r in status(s) if r.name == service)
    if pid is None:
        raise RuntimeError(f"{service} is not running: nothing to kill")
    os.kill(pid, signal.SIGKILL)


def _alive(s: Settings) -> set[str]:
    """Names of the jobs the cluster has in any state but an ended one."""
    return {j["name"] for j in jobs.list_jobs(s) if j["state"] not in ("FINISHED", "CANCELED", "FAILED")}


def _submit(s: Settings, job: JobOptions, fresh: bool) -> None:
    options: dict[str, SimulationOptions | StatisticsOptions] = {
        "simulation": SimulationOptions(registry_access(s), idle_flush_seconds=5.0),
        "statistics": StatisticsOptions(registry_access(s)),
    }
    # A consumer group per job, as `jobs submit` names them: two jobs committing offsets of the
    # topic they share (attributes) in one group would each see the other's as its own progress.
    subs = [
        jobs.Submission(kind, replace(job, group=f"{job.group}-{kind}"), options[kind], fresh) for kind in jobs.JOBS
    ]
    _, errors = jobs.submit_all(s, subs)
    if errors:
        raise RuntimeError("; ".join(f"{kind}: {exc}" for kind, exc in errors.items()))


def _rolled(s: Settings, t: Trial, member: str) -> None:
    t.in_hours_by_pool = _answer(s, member, "pool_hour")
    t.in_days_by_pool = _answer(s, member, "pool_day")


def _answer(s: Settings, member: str, table: str, tries: int = 10) -> dict[str, int]:
    """`_per_pool` asked until Trino answers: a statement that failed is not an empty table (one
    trial read "0 in days" with its hours whole; pool_day held every getpage when asked later)."""
    for _ in range(tries):
        got = _per_pool(s, member, table)
        if got is not None:
            return got
        time.sleep(3)
    return {}


def _trial(s: Settings, a: argparse.Namespace, job: JobOptions, fault: str, n: int) -> Trial:
    service, down = FAULTS[fault]
    began = time.monotonic()
    member = f"C{uuid.uuid4().hex[:6].upper()}"
    sc = load(a.scenario)
    sc = type(sc)(**{**sc.__dict__, "members": [member]})
    producer = AvroProducer(kafka_access(s), registry_access(s), client_id="chaos")
    sink = CountingSink(producer)
    start = int(time.time()) // 60 * 60 - (OLD_DAYS * 86400 if fault == OLD_TRACE else 0)
    gen = Generator(sc, seed=n + 1, event_rate=a.rate, start_time=float(start))
    failed: list[str] = []
    cycles: list[str] = []
    each = a.maintenance == "each"

    def stream() -> None:
        try:
            gen.run(sink, getpages=a.getpages, rate=a.rate)  # flushes the producer at its end
        except Exception as exc:  # reported in the trial: not the pipeline's loss
            failed.append(f"{type(exc).__name__}: {exc}")

    writer = threading.Thread(target=stream, daemon=True)
    writer.start()
    up_seconds: float | None = None
    resubmitted: list[str] = []
    if fault == OLD_TRACE:
        writer.join(a.kill_after)
        if each:
            _maintain(s, cycles)
        jobs.cancel_all(s)  # with savepoints
        if each:
            _maintain(s, cycles)
        _submit(s, job, fresh=False)
    if service is not None:
        writer.join(a.kill_after)  # sooner if the stream already ended
        _kill(s, service)
        if each:
            _maintain(s, cycles)  # during the fault: may fail (Trino, the catalog), must lose nothing
        time.sleep(down if down is not None else a.down)
        t0 = time.monotonic()
        for attempt in range(3):  # a failed `up` fails the trial; the suite goes on once one succeeds
            try:
                up(s)
                break
            except LaunchError as exc:
                failed.insert(0, f"poolsight up failed (attempt {attempt + 1}): {str(exc)[:300]}")
        else:
            raise LaunchError(f"{fault} #{n}: the stack did not come back in three `up`s: {failed[0]}")
        up_seconds = round(time.monotonic() - t0, 1)
        resubmitted, not_resumed = resume_forgotten(s)  # as `poolsight up` does after the services
        if not_resumed:
            failed.insert(0, f"not resumed by up: {', '.join(not_resumed)}")
        missing = [name for _, name in jobs.JOBS.values() if name not in _alive(s)]
        if missing:
            failed.append(f"not running after up: {', '.join(missing)}")
    writer.join()
    ended = time.monotonic()
    want = dict(sink.sent)
    got: dict[str, int] | None = None
    complete: float | None = None
    while time.monotonic() < ended + a.timeout:
        got = _per_pool(s, member) or got
        if got == want:
            complete = round(time.monotonic() - ended, 1)
            break
        time.sleep(2)
    if complete is not None:
        time.sleep(a.settle)  # a doubled pane would show after the totals were first exact
        got = _per_pool(s, member) or got
    trial = Trial(fault, n, want, got or {}, _dead(s, member), up_seconds, complete, resubmitted, cycles=cycles)
    trial.error = failed[0] if failed else None
    if each:
        _maintain(s, cycles)  # rolls up what the panes hold now
        _rolled(s, trial, member)
    trial.member = member
    trial.seconds = round(time.monotonic() - began, 1)
    return trial


def _table(rows: list[Trial]) -> str:
    head = (
        f"{'fault':<18} {'trial':>5} {'produced':>10} {'in Iceberg':>11} {'in hours':>10} {'in days':>10} "
        f"{'dead':>5} {'up s':>6} {'exact after s':>13} cycles"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.fault:<18} {r.trial:>5} {r.produced:>10,} {r.in_iceberg:>11,} "
            f"{sum(r.in_hours_by_pool.values()):>10,} {sum(r.in_days_by_pool.values()):>10,} {r.dead_lettered:>5} "
            f"{'-' if r.up_seconds is None else r.up_seconds:>6} "
            f"{'never' if r.complete_seconds is None else r.complete_seconds:>13} "
            f"{sum(c == 'ok' for c in r.cycles)}/{len(r.cycles)} ok"
            + (f"  ({', '.join(r.resubmitted)} resumed by up)" if r.resubmitted else "")
            + (f"  failed: {r.error}" if r.error else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=1, help="times each fault is repeated")
    p.add_argument(
        "--first-trial",
        type=int,
        default=0,
        help="number of the first trial (its workload's seed is the number + 1): a run that goes on from another",
    )
    p.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of: {', '.join(FAULTS)}")
    p.add_argument("--getpages", type=int, default=600_000, help="getpages per trial")
    p.add_argument("--rate", type=float, default=20_000.0, help="getpages per second, paced")
    p.add_argument("--kill-after", type=float, default=10.0, help="seconds into the stream")
    p.add_argument("--down", type=float, default=5.0, help="seconds a killed service stays down")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for exact totals")
    p.add_argument("--settle", type=float, default=15.0, help="seconds to look again after exact totals")
    p.add_argument("--scenario", default="day-posting")
    p.add_argument(
        "--maintenance",
        choices=("each", "end"),
        default="each",
        help="each: a maintenance cycle during every fault and after every trial (default); end: one "
        "after all trials (quicker), the hours and days then checked for every trial",
    )
    a = p.parse_args(argv)
    faults = [f for f in a.faults.split(",") if f]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        p.error(f"unknown fault(s) {', '.join(unknown)}: use {', '.join(FAULTS)}")
    # TERM as Ctrl-C: a run in the background (SIGINT ignored there) stopped with `kill` still prints its table.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    s = load_settings()
    up(s)
    job = JobOptions(group=f"chaos-{uuid.uuid4().hex[:8]}", checkpoint_seconds=2.0, start_from="latest")
    _submit(s, job, fresh=True)
    rows: list[Trial] = []
    try:
        try:
            for n in range(a.first_trial, a.first_trial + a.trials):
                for fault in faults:
                    rows.append(_trial(s, a, job, fault, n))
                    gc.collect()  # the trial's producer, held in cycles: else it reconnects through later faults
                    r = rows[-1]
                    print(
                        f"{r.fault} #{r.trial}: {r.in_iceberg:,} of {r.produced:,} in Iceberg, "
                        f"{sum(r.in_hours_by_pool.values()):,} in hours, {sum(r.in_days_by_pool.values()):,} in days, "
                        f"{r.dead_lettered} dead-lettered, exact after {r.complete_seconds} s; "
                        f"the trial took {r.seconds} s",
                        flush=True,
                    )
        except KeyboardInterrupt:  # SIGINT or TERM: the table of the trials that ended, not nothing
            print(f"interrupted: {len(rows)} trials ended", flush=True)
        except LaunchError as exc:  # a stack that does not come back ends the run, not its table
            print(f"stopped: {exc}", flush=True)
            rows.append(Trial("(stack)", -1, {}, {}, 0, None, None, [], error=str(exc)[:300]))
        if a.maintenance == "end":
            ended: list[str] = []
            _maintain(s, ended)
            for r in rows:
                r.cycles += ended
                _rolled(s, r, r.member)
    finally:
        jobs.cancel_all(s, savepoint=False)
    print(_table(rows))
    faulted = [r.complete_seconds for r in rows if r.fault != "none"]
    worst = None if None in faulted or not faulted else max(x for x in faulted if x is not None)
    print(
        json.dumps(
            {
                "trials": [{**asdict(r), "produced": r.produced, "in_iceberg": r.in_iceberg} for r in rows],
                "all_exact": all(r.ok() for r in rows),
                "lost_getpages": sum(max(r.produced - r.in_iceberg, 0) for r in rows),
                "extra_getpages": sum(max(r.in_iceberg - r.produced, 0) for r in rows),
                "dead_lettered": sum(r.dead_lettered for r in rows),
                "worst_complete_seconds": worst,
            }
        )
    )
    sys.exit(0 if all(r.ok() for r in rows) else 1)


if __name__ == "__main__":
    main()
