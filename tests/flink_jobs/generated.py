"""Records of a generated subsystem, in the order a collector sends them, captured in-process
(the generator's own Kafka sink over a recorder), and trackers run over them as the job does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from poolsight.flink_jobs.tracker import Emission, PoolTracker
from poolsight.ingest.generator import Alter, Generator, KafkaSink
from poolsight.ingest.scenario import load
from poolsight.schemas.getpage import GetpageBatch
from poolsight.simulator import SimConfig


class Recorder:
    """Takes what KafkaSink would produce: (schema, record) in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    def send(self, schema: str, _key: str, record: Any, **_kw: Any) -> None:
        self.items.append((schema, record))

    def send_batches(self, batches: list[Any]) -> None:
        self.items.extend(("getpage_batch", b) for b in batches)

    def flush(self) -> None:
        pass


def generate(scenario: str, seconds: float, alters: list[str] = (), event_rate: float = 50_000.0) -> Recorder:  # type: ignore[assignment]
    rec = Recorder()
    gen = Generator(load(scenario), seed=3, event_rate=event_rate, alters=[Alter.parse(a) for a in alters])
    gen.run(KafkaSink(rec), duration=seconds)
    return rec


def track(
    rec: Recorder, config: SimConfig, check_panes: int = 3
) -> tuple[dict[tuple[str, str], PoolTracker], list[Emission]]:
    """Run one PoolTracker per (source, pool) over the records; close every pane at the end."""
    trackers: dict[tuple[str, str], PoolTracker] = {}
    out: list[Emission] = []

    def emit(e: Emission, _i: int) -> None:
        out.append(e)

    for schema, r in rec.items:
        if schema == "pool_attributes":
            key = (r["source"], r["pool"])
            if key not in trackers:
                trackers[key] = PoolTracker(*key, config, check_panes=check_panes)
            # As the job's decoder gives it: timestamps as datetimes.
            trackers[key].set_attributes({**r, "event_time": datetime.fromtimestamp(r["event_time"] / 1e6, UTC)})
        elif schema == "getpage_batch":
            b = GetpageBatch.from_record(r.record())
            trackers[(b.source, b.pool)].feed(b, emit)
    for t in trackers.values():
        t.flush(2**62, emit)
    return trackers, out
