"""`make soak`: the whole stack flat out for a while, every process's resident memory sampled.

The generator (this process: the collector's part, generator and producer) sends the scenario
flat out for `--minutes` (default 20; `ARGS='--minutes 5'` for a shorter one) into the
simulation and statistics jobs; the evaluator services run every minute or two meanwhile
(restarted with POOLSIGHT_ALERTS_EVERY=60, _ADVICE_EVERY=120, _MAINTENANCE_EVERY=120), so the
advice replays, alert scans and rollups run under the load too. Every `--every` seconds (10)
each process's RSS is read from /proc: each service with its child processes, each page once
(as `poolsight status` counts it: infra/process.py rss_bytes), except that the TaskManager's
Python worker (the jobs' Python functions) is shown on its own and the TaskManager without it.

Prints per process: its ceiling (infra/memory.py), peak RSS, and growth per 10 minutes after
`--warmup` minutes (least-squares slope of the samples, in MB and as a share of their mean;
and between the peaks of the two halves, which a cycling process's slope hides or inflates);
the target is no more than 2 % per 10 minutes, and every process under its ceiling. JSON last
line: `peak_rss_mb` and `growth_mb_per_10min` per process, `growth_share_per_10min`,
`peak_growth_mb_per_10min`, `peak_growth_share_per_10min`,
`ceiling_mb`, `getpages`, `minutes`. Exits 1 if a process went over its ceiling.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np

from bench.cpu_profile import RULES
from poolsight.flink_jobs import submit as jobs
from poolsight.flink_jobs.options import JobOptions, SimulationOptions, StatisticsOptions
from poolsight.infra.config import Settings, load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.memory import ceilings
from poolsight.infra.process import alive, descendants, own_rss_bytes, read_started, rss_bytes, stop_many
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.generator import Generator, KafkaSink
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.scenario import load
from poolsight.launcher import embedded_services, up

EVALUATORS = {"alerts": "60", "advice": "120", "maintenance": "120"}
WORKER = "python worker"
OWN = "benchmark (generator, producer)"
MB = 2**20


def _is_worker(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return False
    return RULES[0][1](cmd)  # cpu_profile's rule for the jobs' Python worker


def sample(s: Settings) -> dict[str, float]:
    """MB per process now (services with their children; the Python worker apart)."""
    out: dict[str, float] = {OWN: own_rss_bytes(os.getpid()) / MB}
    for svc in embedded_services(s):  # from the pid files: no health check (a Trino query) per sample
        started = read_started(s.run_dir, svc.name)
        if not alive(started) or started is None:
            continue
        total = rss_bytes(started.pid)
        if svc.name.startswith("flink-taskmanager"):
            worker = sum(own_rss_bytes(p) for p in descendants(started.pid) if _is_worker(p))  # each once
            out[f"{WORKER} ({svc.name})"] = worker / MB
            total -= worker
        out[svc.name] = total / MB
    return out


def growth(times: list[float], values: list[float]) -> float:
    """MB per 10 minutes: the least-squares slope."""
    if len(times) < 3:
        return 0.0
    return float(np.polyfit(np.array(times), np.array(values), 1)[0]) * 600.0


def peak_growth(times: list[float], values: list[float]) -> float:
    """MB per 10 minutes between the peaks of the two halves: a process that cycles (advice
    replays every two minutes, a JVM between collections) has a slope that depends on where the
    run stops in its cycle; its peaks grow only if it does."""
    if len(times) < 4:
        return 0.0
    half = len(times) // 2
    span = (float(np.mean(times[half:])) - float(np.mean(times[:half]))) or 1.0
    return (max(values[half:]) - max(values[:half])) / span * 600.0


def _restart_evaluators(s: Settings) -> None:
    os.environ.update({f"POOLSIGHT_{k.upper()}_EVERY": v for k, v in EVALUATORS.items()})
    stop_many(s.run_dir, list(EVALUATORS))
    up(s, list(EVALUATORS))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=20.0, help="minutes the stack runs flat out")
    p.add_argument("--warmup", type=float, default=None, help="minutes before growth counts (default: a quarter)")
    p.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    p.add_argument("--scenario", default="day-posting")
    p.add_argument("--event-rate", type=float, default=100_000.0, help="getpages per second of event time")
    a = p.parse_args(argv)
    warmup = a.warmup if a.warmup is not None else a.minutes / 4
    s = load_settings()
    up(s)
    _restart_evaluators(s)
    jobs.cancel_all(s)
    job = JobOptions(group=f"soak-{uuid.uuid4().hex[:8]}", checkpoint_seconds=5.0, start_from="latest")
    jobs.submit(s, "simulation", job, SimulationOptions(registry_access(s), idle_flush_seconds=5.0), fresh=True)
    jobs.submit(s, "statistics", job, StatisticsOptions(registry_access(s)), fresh=True)
    producer = AvroProducer(kafka_access(s), registry_access(s), client_id="soak")
    gen = Generator(load(a.scenario), seed=13, event_rate=a.event_rate, start_time=float(int(time.time()) // 60 * 60))
    sent: list[int] = []
    seconds = a.minutes * 60
    runner = threading.Thread(
        target=lambda: sent.append(gen.run(KafkaSink(producer), duration=seconds * 1e6, wall_limit=seconds).getpages),
        daemon=True,
    )
    samples: list[tuple[float, dict[str, float]]] = []
    t0 = time.monotonic()
    runner.start()
    while runner.is_alive():
        samples.append((time.monotonic() - t0, sample(s)))
        last = samples[-1][1]
        print(
            f"{samples[-1][0] / 60:5.1f} min  "
            + "  ".join(f"{k.split(' (')[0]} {v:,.0f}" for k, v in sorted(last.items())),
            flush=True,
        )
        runner.join(a.every)
    jobs.cancel_all(s, savepoint=False)
    limit = ceilings(s)
    names = sorted({k for _, x in samples for k in x})
    peak = {n: round(max(x.get(n, 0.0) for _, x in samples), 1) for n in names}
    late = [(t, x) for t, x in samples if t >= warmup * 60]
    grown = {n: round(growth([t for t, x in late if n in x], [x[n] for t, x in late if n in x]), 1) for n in names}
    peaks = {n: round(peak_growth([t for t, x in late if n in x], [x[n] for t, x in late if n in x]), 1) for n in names}
    mean = {n: float(np.mean([x[n] for _, x in late if n in x] or [0.0])) for n in names}
    share = {n: round(grown[n] / mean[n], 4) if mean[n] else 0.0 for n in names}
    peak_share = {n: round(peaks[n] / mean[n], 4) if mean[n] else 0.0 for n in names}
    ceiling = {n: limit.get(n) for n in names}
    # The TaskManager's ceiling covers it with its worker.
    over = []
    for n in names:
        if n.startswith(WORKER):
            continue
        used = peak[n] + sum(peak[w] for w in names if w.startswith(WORKER) and n in w)
        if ceiling[n] is not None and used > (ceiling[n] or 0):
            over.append(n)
    print(
        f"\n{'process':44} {'ceiling MB':>10} {'peak MB':>9} {'MB/10 min':>10} {'%/10 min':>9} {'peaks %/10 min':>14}"
        f"  after {warmup:.0f} min"
    )
    for n in names:
        c = "-" if ceiling[n] is None else f"{ceiling[n]:,}"
        flag = "  OVER" if n in over else ("  grows" if share[n] > 0.02 else "")
        print(f"{n:44} {c:>10} {peak[n]:9,.0f} {grown[n]:10,.1f} {share[n]:9.1%} {peak_share[n]:14.1%}{flag}")
    print(f"getpages sent: {sum(sent):,} in {a.minutes:g} min")
    print(
        json.dumps(
            {
                "minutes": a.minutes,
                "warmup_minutes": warmup,
                "getpages": sum(sent),
                "peak_rss_mb": peak,
                "growth_mb_per_10min": grown,
                "growth_share_per_10min": share,
                "peak_growth_mb_per_10min": peaks,
                "peak_growth_share_per_10min": peak_share,
                "ceiling_mb": ceiling,
                "over_ceiling": over,
            }
        )
    )
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
