"""`make bench-pipeline`: generator -> Kafka -> Flink -> Iceberg -> Trino, every service running.

Two phases, each a new member from the generator in this process; a sink wrapper
notes when the last batch of each (pool, pane) left, a poller asks Trino which panes
are visible whenever pool_pane's metadata file in the catalog changed (looked up
every 0.1 s in PostgreSQL: a Trino query costs the pipeline a tenth of a core-second).
Flat out: the generator first records --ahead-getpages, on to the end of the pane of event
time they reach into (at most --seconds of its wall time), into memory, encoded as it
would send them (replay.py): the last pane closes on the generator's progress mark, not on
the job's idle flush, which would add its quiet seconds to the window; the measured window starts
when they are sent, as fast as the producer takes them, so the generator's CPU is not
in it (`--live-generator`: generated while measured, as before); throughput = getpages
visible in Iceberg over the wall time from the first send to the last pane visible.
Paced: the generator runs at --fresh-share of that throughput, over whole panes of
event time ended by the generator's progress mark; freshness of a pane = first seen
in Trino minus its last batch sent (below capacity, so it measures the pipeline, not
a backlog), split into stages (`stages`), the commit's from the
JobManager's checkpoint history.

The peers in the same run: the flat-out phase again with the job relaxed for throughput
(RELAXED: 5 s checkpoints, PyFlink's 1 s bundles), with Kafka's security the other way
(plaintext against SASL_SSL: Kafka and the registry restarted with [kafka].security flipped,
then back), with the getpage batches decoded by
fastavro instead of the compiled kernel (`jobs submit --no-kernel-decode`: the job as it was
before the kernel decoded them), and with the simulation on the LRU stack only (`jobs submit
--no-pool-policy`), with the stream cut mid-pane (the measure before whole panes: the last
pane waits for the idle flush inside the window), and with the generator live in the window, so
the cost of each is a ratio of two throughputs measured minutes apart. `--rounds N` runs the
configured job and the relaxed, fastavro, LRU-only and cut peers N times in rotated order and
prints medians (ratios: the median of each round's); one uncounted phase goes first
(`--no-warmup`: none). On a 2-core host single runs of one setting spread by a quarter or more.
Each flat-out phase also prints where the CPU time went, per part of the stack (cpu_profile.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from confluent_kafka import Consumer, TopicPartition

from bench import cpu_profile
from bench.replay import PaneKey, Recorder, replay
from poolsight.flink_jobs import submit as jobs
from poolsight.flink_jobs.options import JobOptions, SimulationOptions
from poolsight.infra.commit_watch import CommitWatch
from poolsight.infra.config import Settings, load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.process import stop_many
from poolsight.infra.registry_access import registry_access
from poolsight.infra.trino import trino_rows
from poolsight.ingest.generator import Chunk, Generator, KafkaSink
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.scenario import load
from poolsight.launcher import up
from poolsight.names import ATTRIBUTES_TOPIC, GETPAGE_TOPIC
from poolsight.schemas.tables import GBP_CURVE, POOL_PANE

PANE_SECONDS = 60.0  # the job's default pane
# The job's settings as they were before freshness was worked on (issue 31): what the defaults'
# shorter checkpoints and bundles cost flat out is the ratio to this peer.
RELAXED: dict[str, Any] = {"checkpoint_seconds": 5.0, "bundle_ms": 1000}
# The poller asks Trino only after a commit: it looks up the tables' metadata files in the catalog
# every WATCH_SECONDS (a pane's `visible` stage includes up to this), and asks Trino anyway after
# QUIET_SECONDS without a commit (BLIND_SECONDS when the catalog cannot say). Asking Trino
# every second, as before, took a quarter of the 2 cores flat out (0.5 s polls) from the pipeline.
WATCH_SECONDS, QUIET_SECONDS = 0.1, 5.0
# Without a catalog version (a REST catalog, PostgreSQL away), and after a failed query, Trino is
# asked at most this often: the old poll interval, not at every look.
BLIND_SECONDS = 1.0
# How often the JobManager's checkpoint history is read (it keeps only the latest few).
CHECKPOINT_SECONDS = 1.0


class TimedSink(KafkaSink):
    """KafkaSink noting the wall time each (pool, pane) was last sent: now, or, when the producer
    is a `Recorder` (records generated ahead), when `replay` sends the record."""

    def __init__(self, producer: AvroProducer, pane_seconds: float) -> None:
        super().__init__(producer)
        self.pane_seconds = pane_seconds
        self.sent: dict[PaneKey, float] = {}
        self.first_send: float | None = None

    def getpages(self, source: str, pool: str, c: Chunk, sel: Any, names: list[str]) -> None:
        super().getpages(source, pool, c, sel, names)
        panes = np.unique(np.floor(c.times[sel] / self.pane_seconds)).astype(np.int64).tolist()
        keys = [(f"{source}/{pool}", pane) for pane in panes]
        if isinstance(self.producer, Recorder):
            self.producer.note(keys)
        else:
            self.mark_sent(keys, time.time())

    def mark_sent(self, keys: list[PaneKey], now: float) -> None:
        self.first_send = self.first_send or now
        for k in keys:
            self.sent[k] = now


def _visible(members: list[str], since: float) -> dict[tuple[str, int], tuple[int, float]]:
    """Each visible pane from `since` (epoch s) on: its getpages and when the job emitted it (epoch
    s). The bound lets Trino skip older files by their pane_start range: the poll is the bench's
    own load on the stack."""
    marks = ",".join("?" * len(members))
    _, rows = trino_rows(
        load_settings(),
        "SELECT source, pool, to_unixtime(pane_start), getpages, to_unixtime(emitted_at) "
        f"FROM iceberg.poolsight.pool_pane WHERE source IN ({marks}) AND pane_start >= from_unixtime(?)",
        (*members, since),
    )
    return {(f"{s}/{p}", round(float(t)) // int(PANE_SECONDS)): (int(n), float(e)) for s, p, t, n, e in rows}


def _commits(since: float) -> list[float]:
    """When pool_pane's snapshots since `since` were committed (epoch s), in order."""
    _, rows = trino_rows(
        load_settings(),
        'SELECT to_unixtime(committed_at) FROM iceberg.poolsight."pool_pane$snapshots" '
        "WHERE committed_at >= from_unixtime(?) ORDER BY 1",
        (since,),
    )
    return [float(r[0]) for r in rows]


STAGES = ("close", "commit", "visible")
# `commit` in parts, when the JobManager still knew the pane's checkpoint.
COMMIT_PARTS = ("checkpoint_wait", "checkpoint", "iceberg_commit")


def stages(
    sent: float, emitted: float, seen: float, commits: list[float], checkpoints: Sequence[tuple[float, float]] = ()
) -> dict[str, float] | None:
    """Where a pane's freshness went: `close` from its last batch sent to the job emitting it
    (the batch's way through Kafka and the Python bundle to the tracker, which emits the pane at
    its pool's next getpage or progress mark; else the idle flush), `commit`
    from there to the Iceberg commit that made it visible, `visible` from that commit to Trino
    showing it (metadata caching, this poller's interval and its query). With the checkpoints
    (trigger, completed), `commit` splits into `checkpoint_wait` (to the next checkpoint's
    trigger), `checkpoint` (its barriers through the job) and `iceberg_commit` (from its
    completion to the snapshot: the committers' work). None when no commit lies in between."""
    made = [c for c in commits if emitted <= c <= seen]
    if not made:
        return None
    cp = min((c for c in checkpoints if c[0] >= emitted), default=None)
    after = [c for c in made if cp is not None and c >= cp[1]]
    if cp is None or not after:  # the checkpoint is no longer in the JobManager's history
        return {"close": emitted - sent, "commit": made[-1] - emitted, "visible": seen - made[-1]}
    c = after[0]
    return {
        "close": emitted - sent,
        "commit": c - emitted,
        "visible": seen - c,
        "checkpoint_wait": cp[0] - emitted,
        "checkpoint": cp[1] - cp[0],
        "iceberg_commit": c - cp[1],
    }


def _group_done(group: str) -> float | None:
    """The end (epoch s) of the group's latest pane in gbp_curve, None before any."""
    _, rows = trino_rows(
        load_settings(),
        "SELECT to_unixtime(max(pane_end)) FROM iceberg.poolsight.gbp_curve WHERE group_name = ?",
        (group,),
    )
    return float(rows[0][0]) if rows and rows[0][0] is not None else None


def members_for(sc: Any) -> list[str]:
    """Fresh source names for a phase: one per member of the scenario (a group's stay a group)."""
    tag = uuid.uuid4().hex[:5].upper()
    return [f"B{tag}{i}" for i in range(len(sc.members))]


@dataclass
class Phase:
    produced: int
    visible: int
    generator_seconds: float
    wall_seconds: float
    freshness: list[float]
    cpu: dict[str, float]  # CPU seconds per part of the stack over the phase (cpu_profile.py)
    stages: dict[str, list[float]]  # per stage (STAGES), each pane's seconds in it
    trino_polls: int  # the poller's queries: the bench's own load on Trino
    send_seconds: float | None = None  # records generated ahead: the seconds sending them took
    recorded_bytes: int | None = None  # and their encoded size
    machine_cpu: float = 0.0  # CPU seconds of the whole machine over the phase (cpu_profile.machine_busy)
    jit_cpu: float = 0.0  # of the TaskManager's, its JIT compiler threads' (cpu_profile.jvm_used)

    def stage_pcts(self) -> dict[str, dict[str, float | None]]:
        return {k: {f"p{q}": _percentile(v, q, 2) for q in (50, 95)} for k, v in self.stages.items()}

    def cpu_table(self) -> str:
        """Where the CPU went over the phase, per part (cpu_profile.table), then the whole
        machine's busy cores beside the parts' and the TaskManager's JIT compiling."""
        per_m = 1e6 / max(self.visible, 1)
        return (
            f"{cpu_profile.table(self.cpu, self.visible, self.wall_seconds)}\n"
            f"machine: {self.machine_cores():.2f} of {os.cpu_count()} cores busy (every process and the kernel; "
            f"the parts above {sum(self.cpu.values()) / max(self.wall_seconds, 1e-9):.2f}); the TaskManager's JIT "
            f"compilers {self.jit_cpu:.1f} CPU s ({self.jit_cpu * per_m:.3f} s/M getpages), in its row above"
        )

    def machine_cores(self) -> float:
        return self.machine_cpu / max(self.wall_seconds, 1e-9)

    def profile(self) -> dict[str, float]:
        """CPU seconds per million visible getpages, per part."""
        return {k: round(v / max(self.visible, 1) * 1e6, 3) for k, v in self.cpu.items()}

    def rate(self) -> float:
        return self.visible / max(self.wall_seconds, 1e-9)

    def pct(self, q: float) -> float | None:
        return _percentile(self.freshness, q, 1)


def rotated(items: Sequence[str], r: int) -> list[str]:
    """The phases of round r, in an order rotated by r: no phase always runs first after the
    stack's idle minutes or always last."""
    k = r % max(1, len(items))
    return [*items[k:], *items[:k]]


def median_phase(phases: Sequence[Phase]) -> Phase:
    """The round whose rate is the median (the lower middle of an even count): its rate is the
    figure reported, and its getpages, seconds, CPU table and saturated freshness are printed."""
    return sorted(phases, key=lambda x: x.rate())[(len(phases) - 1) // 2]


def play_rounds(
    enabled: Sequence[str],
    rounds: int,
    run: Callable[[str, Callable[[str, Phase], None] | None], Phase],
    paced: Callable[[str, list[Phase]], None],
) -> dict[str, list[Phase]]:
    """`rounds` rounds of one flat-out phase per enabled kind, in an order rotated each round:
    `run(kind, then)` runs one, calling `then(job id, its phase)` on its job before cancelling it.
    The last configured round's `then` is `paced(job id, every configured round's phase)`: the
    paced phase on a job warm from its flat-out phase, at a rate from all the rounds."""
    runs: dict[str, list[Phase]] = {k: [] for k in enabled}
    for r in range(rounds):
        for k in rotated(enabled, r):
            final = k == "configured" and r == rounds - 1
            runs[k].append(run(k, (lambda jid, last: paced(jid, [*runs["configured"], last])) if final else None))
            print(f"round {r + 1}/{rounds}: {k:10} {runs[k][-1].rate():,.0f} getpages/s", flush=True)
    return runs


def median_ratio(a: Sequence[Phase], b: Sequence[Phase]) -> float:
    """The median over rounds of a's rate over b's in the same round (runs minutes apart in one
    round share the host's mood; runs rounds apart less so)."""
    return float(np.median([x.rate() / y.rate() for x, y in zip(a, b, strict=True)]))


def _percentile(values: list[float], q: float, digits: int) -> float | None:
    return round(float(np.percentile(values, q)), digits) if values else None


def flat_out_span(getpages: int, event_rate: float) -> float | None:
    """Seconds of event time from a pane's start through the end of the pane that `getpages`
    getpages at `event_rate` reach into (None for no count: the wall clock ends the run)."""
    if getpages <= 0:
        return None
    return math.ceil(getpages / event_rate / PANE_SECONDS) * PANE_SECONDS


def _phase(
    sc: Any,
    producer: AvroProducer,
    seconds: float,
    event_rate: float,
    rate: float | None,
    members: list[str] | None = None,
    group: str | None = None,
    whole_panes: bool = False,
    job_id: str | None = None,
    ahead: int = 0,
    getpages: int | None = None,
) -> Phase:
    """The scenario's workload, as `members`, for `seconds` of wall time; waits until Trino shows
    all of it (and, with `group`, the group simulation's last pane). With `whole_panes` (paced:
    the wall clock is not the limit) the run covers whole panes of event time, and its last
    progress mark closes the last pane as the next pane's getpages close the others (a stream
    cut mid-pane leaves that pane to the job's idle flush). With `ahead` (flat out), the generator
    first records up to that many getpages (for `seconds` of wall time at most) and the measured
    window starts when they are sent from memory (replay.py); else flat out stops at `getpages`
    too, when given. Flat out with `whole_panes`, those counts run on to the end of the pane of
    event time they reach into."""
    members = members or members_for(sc)
    sc = type(sc)(**{**sc.__dict__, "members": members})
    recorder = Recorder(producer) if ahead and not rate else None
    sink = TimedSink(recorder or producer, PANE_SECONDS)
    start = float(int(time.time()) // 60 * 60)
    gen = Generator(sc, seed=11, event_rate=event_rate, start_time=start)
    # Flat out, the last pane closes on the generator's progress mark, as a stream that goes on
    # closes it with its next records; a stream cut mid-pane waits for the job's idle flush
    # (5 s of quiet, then the consumer group's next commit), seconds that are not throughput.
    span = flat_out_span(ahead or getpages or 0, event_rate) if whole_panes and not rate else None
    if recorder is not None:
        totals = gen.run(sink, getpages=None if span else ahead, duration=span or seconds * 1000, wall_limit=seconds)
    seen: dict[tuple[str, int], float] = {}
    counts: dict[tuple[str, int], int] = {}
    emitted: dict[tuple[str, int], float] = {}
    since = time.time()
    stop = threading.Event()
    group_end: list[float | None] = [None]  # the group's latest pane end, and when each was first seen
    group_seen: dict[float, float] = {}
    checkpoints: dict[int, tuple[float, float]] = {}  # the JobManager keeps only the latest few
    watch = CommitWatch(load_settings(), [POOL_PANE.name, *([GBP_CURVE.name] if group else [])])
    polls = [0]

    def poll() -> None:
        asked: tuple[str, ...] | None = None
        asked_at = read_at = retry_at = 0.0
        while not stop.is_set():
            # The version is read before Trino is asked: a commit in between is asked about next time.
            version = watch.version()
            now = time.time()
            changed = version is not None and version != asked
            due = now - asked_at >= (QUIET_SECONDS if version is not None else BLIND_SECONDS)
            if (changed or due) and now >= retry_at:
                asked_at = now
                try:
                    vis = _visible(members, start)
                    done = _group_done(group) if group else None
                    asked = version
                    polls[0] += 1
                except Exception:  # Trino busy: try again a little later
                    vis, done = {}, None
                    retry_at = now + BLIND_SECONDS
                now = time.time()
                for k, (n, e) in vis.items():
                    seen.setdefault(k, now)
                    emitted.setdefault(k, e)
                    counts[k] = n
                if done is not None:
                    group_end[0] = done
                    group_seen.setdefault(done, now)
            if job_id and time.time() - read_at >= CHECKPOINT_SECONDS:
                read_at = time.time()
                try:
                    checkpoints.update(jobs.completed_checkpoints(load_settings(), job_id))
                except (OSError, ValueError):
                    pass
            stop.wait(WATCH_SECONDS)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    run_dir = load_settings().run_dir
    before = cpu_profile.snapshot(run_dir)
    tm = next((pid for pid, (part, _) in before.items() if part == "flink taskmanager (JVM)"), None)
    tm_before = cpu_profile.jvm_threads(tm) if tm else {}
    busy_before = cpu_profile.machine_busy()
    t0 = time.time()
    send_seconds = None
    if recorder is not None:
        send_seconds = replay(recorder, producer, sink.mark_sent)
    elif whole_panes and rate:
        panes = max(1, round(seconds * rate / event_rate / PANE_SECONDS))
        totals = gen.run(sink, duration=panes * PANE_SECONDS, rate=rate, wall_limit=2 * seconds)
    else:
        totals = gen.run(
            sink, getpages=None if span else getpages, duration=span or seconds * 1000, rate=rate, wall_limit=seconds
        )
    if span and gen.t < start + span - 1e-6:
        print("  the generator stopped at --seconds before its last pane's end: that pane waits for the idle flush")
    deadline = time.time() + 600
    while time.time() < deadline and sum(counts.values()) < totals.getpages:
        time.sleep(1)
    last_pane = (max(k[1] for k in counts) + 1) * PANE_SECONDS if counts else 0.0
    while group and time.time() < deadline and (group_end[0] or 0.0) < last_pane:
        time.sleep(1)
    after = cpu_profile.snapshot(run_dir)
    busy = cpu_profile.machine_busy() - busy_before
    jit = cpu_profile.jvm_used(tm_before, cpu_profile.jvm_threads(tm))[1] if tm else 0.0
    stop.set()
    poller.join()
    watch.close()
    try:
        commits = _commits(since)
    except Exception:  # Trino busy: no breakdown this phase
        commits = []
    per_stage: dict[str, list[float]] = {k: [] for k in (*STAGES, *COMMIT_PARTS)}
    marks = sorted(checkpoints.values())
    for k in seen:
        st = stages(sink.sent[k], emitted[k], seen[k], commits, marks) if k in sink.sent else None
        for name, v in (st or {}).items():
            per_stage[name].append(v)
    last = max(
        [*seen.values(), *([group_seen[group_end[0]]] if group and group_end[0] in group_seen else [])] or [time.time()]
    )
    return Phase(
        totals.getpages,
        sum(counts.values()),
        totals.seconds,
        last - (sink.first_send or t0),
        sorted(seen[k] - sink.sent[k] for k in seen if k in sink.sent),
        cpu_profile.used(before, after),
        {k: sorted(v) for k, v in per_stage.items()},
        polls[0],
        send_seconds,
        None if recorder is None else recorder.bytes,
        busy,
        jit,
    )


def _start_at_ends(s: Settings, group: str) -> None:
    """The job's new consumer group committed at the ends of the topics it reads, so it reads
    from there however late its source starts: with "latest" the source resolves its start at its
    first fetch, and over SASL_SSL that came after the generator had begun (a third of the first
    pane was never read)."""
    c = Consumer(kafka_access(s).client_config(**{"group.id": group, "enable.auto.commit": False}))
    try:
        ends = [
            TopicPartition(t.name, p, c.get_watermark_offsets(TopicPartition(t.name, p), timeout=10)[1])
            for t in (GETPAGE_TOPIC, ATTRIBUTES_TOPIC)
            for p in range(t.partitions)
        ]
        c.commit(offsets=ends, asynchronous=False)
    finally:
        c.close()


def _kafka_security(s: Settings, security: str) -> Settings:
    """The stack with the embedded Kafka secured as `security`: Kafka and the registry (whose
    journal is a Kafka client) restarted with it; their data stays."""
    if s.kafka_security == security:
        return s
    stop_many(s.run_dir, ["registry", "kafka"])
    os.environ["POOLSIGHT_KAFKA_SECURITY"] = security
    flipped = load_settings()
    up(flipped)
    return flipped


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=75.0, help="wall seconds the generator runs flat out")
    p.add_argument("--scenario", default="day-posting")
    p.add_argument("--event-rate", type=float, default=100_000.0, help="getpages per second of event time")
    p.add_argument("--checkpoint-seconds", type=float, default=JobOptions.checkpoint_seconds)
    p.add_argument("--bundle-ms", type=int, default=JobOptions.bundle_ms, help="the jobs' Python bundle time")
    p.add_argument("--fresh-seconds", type=float, default=90.0, help="wall seconds of the paced phase")
    p.add_argument(
        "--fresh-share",
        type=float,
        default=0.5,
        help="the paced phase runs at this share of the throughput measured flat out",
    )
    p.add_argument(
        "--ahead-getpages",
        type=int,
        default=40_000_000,
        help="flat-out phases: the generator records this many getpages and on to the end of the pane of event "
        "time they reach into (or --seconds of them) before the measured window, which starts when they are "
        "sent from memory (about 12 bytes each, held until the phase ends; the producer's queue copies up to "
        "512 MB more while sending)",
    )
    p.add_argument(
        "--cut-mid-pane",
        action="store_true",
        help="flat-out phases end at --ahead-getpages, mid-pane, as before: that pane then closes only by the "
        "job's idle flush (5 s of quiet, then the consumer group's next commit), inside the measured window "
        "(by default they run on to the end of that pane of event time and its progress mark closes it)",
    )
    p.add_argument(
        "--live-generator",
        action="store_true",
        help="flat-out phases generate while measured, the generator sharing the CPU with the stack",
    )
    p.add_argument("--skip-live", action="store_true", help="skip the peer phase with the generator live in the window")
    p.add_argument("--parallelism", type=int, default=1, help="the simulation job's parallelism (slots)")
    p.add_argument("--skip-lru-only", action="store_true", help="skip the peer phase (LRU stack only)")
    p.add_argument(
        "--skip-cut",
        action="store_true",
        help="skip the peer phase whose stream is cut mid-pane (--cut-mid-pane's measure: the last pane waits "
        "for the idle flush, in the window)",
    )
    p.add_argument(
        "--skip-relaxed",
        action="store_true",
        help="skip the peer phase with the job's settings relaxed for throughput (checkpoints every 5 s, "
        "PyFlink's 1 s bundles: the defaults before freshness was worked on)",
    )
    p.add_argument("--skip-fastavro", action="store_true", help="skip the peer phase (fastavro decoding)")
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="flat-out rounds: each round runs the job as configured and the relaxed, fastavro, LRU-only and cut "
        "peers, in an order rotated each round; each one's rate is its median round's (the lower middle of an "
        "even count), whose getpages, seconds, saturated freshness and CPU are printed; ratios are the median "
        "of the rounds' own; the live, group and security peers run once, after them (the security peer on "
        "Kafka just restarted, unwarmed)",
    )
    p.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one flat-out phase first, not counted: a stack just started runs its first phase slower "
        "(bench/README.md, rounds and a warm-up)",
    )
    p.add_argument(
        "--skip-security",
        action="store_true",
        help="skip the peer phase with the embedded Kafka's security flipped (plaintext against sasl_ssl)",
    )
    p.add_argument(
        "--skip-group",
        action="store_true",
        help="skip the phase with the group simulation (scenarios with several members: data-sharing)",
    )
    a = p.parse_args()
    if a.rounds < 1:
        p.error("--rounds: at least 1")
    s = load_settings()
    up(s)
    jobs.cancel_all(s)
    sc = load(a.scenario)
    producer = AvroProducer(kafka_access(s), registry_access(s), client_id="bench-pipeline")
    ahead = 0 if a.live_generator else a.ahead_getpages

    def flat_out(
        group: str | None = None,
        job_settings: dict[str, Any] | None = None,
        live: bool = False,
        cut: bool = False,
        then: Callable[[str, Phase], None] | None = None,
        **options: Any,
    ) -> Phase:
        """A flat-out phase on a job of its own (options as `jobs submit` takes them; without the
        group simulation unless `group`: the scenario's members name theirs, not discovered here),
        then `then` on the same job, cancelled after."""
        job = JobOptions(
            **{
                "group": f"bench-{uuid.uuid4().hex[:8]}",
                "checkpoint_seconds": a.checkpoint_seconds,
                "start_from": "latest",
                "bundle_ms": a.bundle_ms,
                "parallelism": a.parallelism,
                **(job_settings or {}),
            }
        )
        members = members_for(sc)
        if group:
            options["groups"] = {group: members}
        o = SimulationOptions(registry_access(s), idle_flush_seconds=5.0, discover_groups=False, **options)
        _start_at_ends(s, job.group)
        jid = jobs.submit(s, "simulation", job, o)
        try:
            n = 0 if live else ahead
            cap = ahead if live else None  # as many getpages as the phases generated ahead
            phase = _phase(
                sc,
                producer,
                a.seconds,
                a.event_rate,
                None,
                members,
                group,
                whole_panes=not (cut or a.cut_mid_pane),
                job_id=jid,
                ahead=n,
                getpages=cap,
            )
            if then is not None:
                then(jid, phase)
            return phase
        finally:
            jobs.cancel(s, jid)

    kinds: dict[str, dict[str, Any]] = {
        "configured": {},
        "relaxed": {"job_settings": RELAXED},
        "fastavro": {"kernel_decode": False},
        "lru": {"pool_policy": False},
        "cut": {"cut": True},
    }
    skipped = {
        "relaxed": a.skip_relaxed,
        "fastavro": a.skip_fastavro,
        "lru": a.skip_lru_only,
        "cut": a.skip_cut or a.cut_mid_pane,  # with --cut-mid-pane the configured phase is cut
    }
    enabled = [k for k in kinds if not skipped.get(k, False)]
    if a.warmup:
        warm = flat_out()
        print(f"warm-up (not counted): {warm.rate():,.0f} getpages/s", flush=True)
    paced_runs: list[tuple[float, Phase]] = []

    def paced_on(jid: str, configured: list[Phase]) -> None:
        """Freshness at --fresh-share of the configured rounds' median rate, event time running
        10x wall time (a 60 s pane closes every 6 s)."""
        rate = max(1000.0, median_phase(configured).rate() * a.fresh_share)
        paced_runs.append((rate, _phase(sc, producer, a.fresh_seconds, rate / 10, rate, whole_panes=True, job_id=jid)))

    runs = play_rounds(enabled, a.rounds, lambda k, then: flat_out(**kinds[k], then=then), paced_on)
    flat = median_phase(runs["configured"])
    relaxed, fastavro, lru, cut = (
        median_phase(runs[k]) if k in runs else None for k in ("relaxed", "fastavro", "lru", "cut")
    )
    [(paced_rate, paced)] = paced_runs

    # The generator running in the measured window, as before records were generated ahead.
    live = None if a.skip_live or not ahead else flat_out(live=True)
    # The same stream with the members' pools also simulated together with their GBPs.
    grouped = None if a.skip_group or len(sc.members) < 2 else flat_out(group=f"G{uuid.uuid4().hex[:5].upper()}")
    secured = s.kafka_security
    other: Phase | None = None
    if not a.skip_security and "kafka" not in s.external:
        configured = os.environ.get("POOLSIGHT_KAFKA_SECURITY")
        s = _kafka_security(s, "plaintext" if secured == "sasl_ssl" else "sasl_ssl")
        producer = AvroProducer(kafka_access(s), registry_access(s), client_id="bench-pipeline-security")
        try:
            other = flat_out()
        finally:
            producer.flush()
            s = _kafka_security(s, secured)  # the stack as configured again
            if configured is None:
                os.environ.pop("POOLSIGHT_KAFKA_SECURITY", None)
            else:
                os.environ["POOLSIGHT_KAFKA_SECURITY"] = configured
    rates = {secured: flat.rate()}
    if other is not None:
        rates["plaintext" if secured == "sasl_ssl" else "sasl_ssl"] = other.rate()

    def ratio(peer: str) -> float | None:
        """The configured job's rate over the peer's: the median of the rounds' ratios."""
        return None if peer not in runs else round(median_ratio(runs["configured"], runs[peer]), 3)

    result = {
        "scenario": a.scenario,
        "checkpoint_seconds": a.checkpoint_seconds,
        "produced_getpages": flat.produced,
        "visible_getpages": flat.visible,
        "generator_seconds": round(flat.generator_seconds, 1),
        "wall_seconds": round(flat.wall_seconds, 1),
        "generator_getpages_per_s": round(flat.produced / flat.generator_seconds),
        "generated_ahead": flat.send_seconds is not None,
        "whole_panes": not a.cut_mid_pane,
        "sender_getpages_per_s": None if flat.send_seconds is None else round(flat.produced / flat.send_seconds),
        "recorded_mb": None if flat.recorded_bytes is None else round(flat.recorded_bytes / 1e6, 1),
        "pipeline_getpages_per_s": round(flat.rate()),
        "rounds": len(runs["configured"]),
        "warmup": a.warmup,
        "getpages_per_s_by_round": {k: [round(x.rate()) for x in v] for k, v in runs.items()},
        "saturated_freshness_p50_s": flat.pct(50),
        "saturated_freshness_p95_s": flat.pct(95),
        "paced_getpages_per_s": round(paced_rate),
        "paced_visible_getpages": paced.visible,
        "paced_produced_getpages": paced.produced,
        "panes": len(paced.freshness),
        "freshness_p50_s": paced.pct(50),
        "freshness_p95_s": paced.pct(95),
        "freshness_stages_s": paced.stage_pcts(),
        "bundle_ms": a.bundle_ms,
        "parallelism": a.parallelism,
        "relaxed_settings": RELAXED,
        "relaxed_getpages_per_s": None if relaxed is None else round(relaxed.rate()),
        "latency_settings_throughput_ratio": ratio("relaxed"),
        "lru_only_getpages_per_s": None if lru is None else round(lru.rate()),
        "lru_only_visible_getpages": None if lru is None else lru.visible,
        "pool_policy_throughput_ratio": ratio("lru"),
        "cut_mid_pane_getpages_per_s": None if cut is None else round(cut.rate()),
        "whole_panes_throughput_ratio": ratio("cut"),
        "fastavro_getpages_per_s": None if fastavro is None else round(fastavro.rate()),
        "kernel_decode_throughput_ratio": ratio("fastavro"),
        "group_getpages_per_s": None if grouped is None else round(grouped.rate()),
        "group_visible_getpages": None if grouped is None else grouped.visible,
        "group_throughput_ratio": None if grouped is None else round(grouped.rate() / flat.rate(), 3),
        "kafka_security": secured,
        "plaintext_getpages_per_s": round(rates["plaintext"]) if "plaintext" in rates else None,
        "sasl_ssl_getpages_per_s": round(rates["sasl_ssl"]) if "sasl_ssl" in rates else None,
        "sasl_ssl_throughput_ratio": round(rates["sasl_ssl"] / rates["plaintext"], 3) if len(rates) == 2 else None,
        "cpu_s_per_m_getpages": flat.profile(),
        "machine_cores_busy": round(flat.machine_cores(), 2),
        "taskmanager_jit_s_per_m_getpages": round(flat.jit_cpu / max(flat.visible, 1) * 1e6, 3),
        "trino_polls": {"flat_out": flat.trino_polls, "paced": paced.trino_polls},
        "fastavro_cpu_s_per_m_getpages": None if fastavro is None else fastavro.profile(),
        "lru_only_cpu_s_per_m_getpages": None if lru is None else lru.profile(),
        "lru_only_machine_cores_busy": None if lru is None else round(lru.machine_cores(), 2),
        "live_generator_getpages_per_s": None if live is None else round(live.rate()),
        "live_generator_cpu_s_per_m_getpages": None if live is None else live.profile(),
    }
    print(
        f"flat out: produced {flat.produced:,} getpages in {flat.generator_seconds:.1f} s "
        f"({result['generator_getpages_per_s']:,}/s); {flat.visible:,} visible in Trino after "
        f"{flat.wall_seconds:.1f} s: {round(flat.rate()):,} getpages/s end to end "
        f"(freshness while saturated p50 {flat.pct(50)} s, p95 {flat.pct(95)} s)"
    )
    print(
        "  the stream cut mid-pane (--cut-mid-pane): its last pane closed by the job's idle flush, in the window"
        if a.cut_mid_pane
        else "  whole panes of event time: the last closed by the generator's progress mark, as a stream going on "
        "closes it (--cut-mid-pane: by the idle flush)"
    )
    if a.rounds > 1:
        print(
            f"  {result['pipeline_getpages_per_s']:,} getpages/s, the median of {a.rounds} rounds"
            f"{' after a warm-up' if a.warmup else ''} (by round: "
            + "; ".join(f"{k} {', '.join(f'{x:,}' for x in v)}" for k, v in result["getpages_per_s_by_round"].items())
            + "); the line above and the CPU table below are the median round's (the lower middle of an even count)"
        )
    if flat.send_seconds is not None:
        print(
            f"  generated ahead ({result['recorded_mb']:,} MB encoded) and sent from memory in "
            f"{flat.send_seconds:.1f} s ({result['sender_getpages_per_s']:,}/s): the generator's CPU is outside "
            "the measured window"
        )
    print(
        f"paced at {paced_rate:,.0f} getpages/s: {paced.visible:,} of {paced.produced:,} visible; "
        f"freshness p50 {paced.pct(50)} s, p95 {paced.pct(95)} s over {len(paced.freshness)} panes"
    )
    print("  where a pane's seconds went (paced), p50 / p95:")
    for name, q in paced.stage_pcts().items():
        print(f"    {name:16} {q['p50']} / {q['p95']} s")
    print(
        f"  (commit's parts over the {len(paced.stages['checkpoint'])} panes whose checkpoint the JobManager "
        f"still listed; checkpoints every {a.checkpoint_seconds:g} s, Python bundles of {a.bundle_ms} ms)"
    )
    print(
        f"  the poller asked Trino {flat.trino_polls} times flat out and {paced.trino_polls} times paced "
        f"(after each commit of pool_pane, else every {QUIET_SECONDS:g} s)"
    )
    per_round = " (the median of the rounds' own ratios)" if a.rounds > 1 else ""
    print(f"\nwhere the CPU went, flat out (kernel decoding), over {flat.wall_seconds:.1f} s:")
    print(flat.cpu_table())
    if relaxed is not None:
        print(
            f"\nthe job relaxed for throughput ({RELAXED}): {relaxed.visible:,} of {relaxed.produced:,} visible "
            f"after {relaxed.wall_seconds:.1f} s: {result['relaxed_getpages_per_s']:,} getpages/s; this run's "
            f"settings (checkpoints every {a.checkpoint_seconds:g} s, {a.bundle_ms} ms bundles) run flat out at "
            f"{result['latency_settings_throughput_ratio']:.2f}x of that{per_round}"
        )
    if fastavro is not None:
        print(
            f"\nfastavro decoding (--no-kernel-decode, the job before the kernel decoded batches): "
            f"{fastavro.visible:,} of {fastavro.produced:,} visible after {fastavro.wall_seconds:.1f} s: "
            f"{result['fastavro_getpages_per_s']:,} getpages/s; the kernel's decoding runs at "
            f"{result['kernel_decode_throughput_ratio']:.2f}x of that{per_round}. Where the CPU went:"
        )
        print(fastavro.cpu_table())
    if lru is not None:
        print(
            f"LRU stack only (--no-pool-policy): {lru.visible:,} of {lru.produced:,} visible after "
            f"{lru.wall_seconds:.1f} s: {result['lru_only_getpages_per_s']:,} getpages/s; with each pool's "
            f"own policy the pipeline runs at {result['pool_policy_throughput_ratio']:.2f}x of that{per_round}. "
            "Where the CPU went:"
        )
        print(lru.cpu_table())
    if cut is not None:
        print(
            f"the stream cut mid-pane (--cut-mid-pane, the measure before: its last pane closed by the job's idle "
            f"flush inside the window): {cut.visible:,} visible after {cut.wall_seconds:.1f} s: "
            f"{result['cut_mid_pane_getpages_per_s']:,} getpages/s; whole panes measure "
            f"{result['whole_panes_throughput_ratio']:.2f}x that{per_round}"
        )
    if live is not None:
        print(
            f"generator live in the window (--live-generator, as before): {live.visible:,} visible after "
            f"{live.wall_seconds:.1f} s: {result['live_generator_getpages_per_s']:,} getpages/s, generated at "
            f"{round(live.produced / live.generator_seconds):,}/s. Where the CPU went:"
        )
        print(live.cpu_table())
    if grouped is not None:
        print(
            f"with the group simulation ({len(sc.members)} members and their GBPs, --data-sharing-group; timed until "
            f"the group's last pane is in gbp_curve too): "
            f"{grouped.visible:,} of {grouped.produced:,} visible after {grouped.wall_seconds:.1f} s: "
            f"{result['group_getpages_per_s']:,} getpages/s, {result['group_throughput_ratio']:.2f}x of the run "
            f"without it. Where the CPU went:"
        )
        print(grouped.cpu_table())
    if other is not None:
        print(
            f"Kafka with SASL_SSL (TLS, SCRAM-SHA-512) against plaintext, the same flat-out phase minutes apart: "
            f"{result['sasl_ssl_getpages_per_s']:,} against {result['plaintext_getpages_per_s']:,} getpages/s, "
            f"{result['sasl_ssl_throughput_ratio']:.2f}x (this run's stack: {secured}). Where the CPU went "
            f"with {'plaintext' if secured == 'sasl_ssl' else 'sasl_ssl'}:"
        )
        print(other.cpu_table())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
