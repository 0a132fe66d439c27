"""`make bench-pipeline`: generator -> Kafka -> Flink -> Iceberg -> Trino, every service running.

The generator runs in this process as fast as it can for --seconds of wall time; a
sink wrapper notes when the last batch of each (pool, pane) left. A poller asks
Trino every second which panes are visible. Throughput: getpages visible in
Iceberg over the wall time from the first send to the last pane visible.
Freshness of a pane: first seen in Trino minus its last batch sent.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from typing import Any

import numpy as np

from poolsight.flink_jobs import submit as jobs
from poolsight.flink_jobs.common import JobOptions
from poolsight.flink_jobs.simulation_job import SimulationOptions
from poolsight.infra.config import load_settings
from poolsight.infra.launcher import up
from poolsight.infra.services import trino_connection
from poolsight.ingest.generator import Chunk, Generator, KafkaSink
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.scenario import load


class TimedSink(KafkaSink):
    """KafkaSink noting the wall time each (pool, pane) was last sent."""

    def __init__(self, producer: AvroProducer, pane_seconds: float) -> None:
        super().__init__(producer)
        self.pane_seconds = pane_seconds
        self.sent: dict[tuple[str, int], float] = {}
        self.first_send: float | None = None

    def getpages(self, source: str, pool: str, c: Chunk, sel: Any, names: list[str]) -> None:
        super().getpages(source, pool, c, sel, names)
        now = time.time()
        self.first_send = self.first_send or now
        for pane in np.unique(np.floor(c.times[sel] / self.pane_seconds)).astype(np.int64).tolist():
            self.sent[(pool, pane)] = now


def _visible(member: str) -> dict[tuple[str, int], int]:
    with trino_connection(load_settings()) as conn:
        cur = conn.cursor()
        cur.execute("SELECT pool, to_unixtime(pane_start), getpages FROM iceberg.poolsight.pool_pane "
                    "WHERE source = ?", (member,))
        return {(str(p), round(float(t)) // 60): int(n) for p, t, n in cur.fetchall()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=75.0, help="wall seconds the generator runs")
    p.add_argument("--scenario", default="day-posting")
    p.add_argument("--event-rate", type=float, default=100_000.0)
    p.add_argument("--checkpoint-seconds", type=float, default=5.0)
    p.add_argument("--rate", type=float, help="pace the generator (getpages/s); default as fast as possible")
    a = p.parse_args()
    s = load_settings()
    up(s)
    jobs.cancel_all(s)
    member = f"B{uuid.uuid4().hex[:6].upper()}"
    pane_seconds = 60.0
    job = JobOptions(group=f"bench-{member}", checkpoint_seconds=a.checkpoint_seconds, start_from="latest")
    jid = jobs.submit(s, "simulation", job, SimulationOptions(s.registry_url, idle_flush_seconds=5.0))
    sc = load(a.scenario)
    sc = type(sc)(**{**sc.__dict__, "members": [member]})
    producer = AvroProducer(s.kafka_bootstrap, s.registry_url, client_id="bench-pipeline")
    sink = TimedSink(producer, pane_seconds)
    gen = Generator(sc, seed=11, event_rate=a.event_rate, start_time=float(int(time.time()) // 60 * 60))
    seen: dict[tuple[str, int], float] = {}
    counts: dict[tuple[str, int], int] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            try:
                vis = _visible(member)
            except Exception:  # Trino busy: try again next second
                vis = {}
            now = time.time()
            for k, n in vis.items():
                seen.setdefault(k, now)
                counts[k] = n
            stop.wait(1.0)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    t0 = time.time()
    # Whole minutes of event time until the wall-clock budget is spent.
    totals = gen.run(sink, duration=a.seconds * 100, rate=a.rate, wall_limit=a.seconds)
    produced = totals.getpages
    deadline = time.time() + 600
    while time.time() < deadline and sum(counts.values()) < produced:
        time.sleep(1)
    stop.set()
    poller.join()
    jobs.cancel(s, jid)
    visible = sum(counts.values())
    last = max(seen.values()) if seen else time.time()
    fresh = sorted(seen[k] - sink.sent[k] for k in seen if k in sink.sent)
    result = {
        "scenario": a.scenario, "produced_getpages": produced, "visible_getpages": visible,
        "generator_seconds": round(totals.seconds, 1), "wall_seconds": round(last - (sink.first_send or t0), 1),
        "generator_getpages_per_s": round(produced / totals.seconds),
        "pipeline_getpages_per_s": round(visible / max(last - (sink.first_send or t0), 1e-9)),
        "panes": len(seen),
        "freshness_p50_s": round(float(np.percentile(fresh, 50)), 1) if fresh else None,
        "freshness_p95_s": round(float(np.percentile(fresh, 95)), 1) if fresh else None,
    }
    print(f"produced {produced:,} getpages in {totals.seconds:.1f} s; {visible:,} visible in Trino "
          f"after {result['wall_seconds']} s: {result['pipeline_getpages_per_s']:,} getpages/s end to end; "
          f"freshness p50 {result['freshness_p50_s']} s, p95 {result['freshness_p95_s']} s over {len(fresh)} panes")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
