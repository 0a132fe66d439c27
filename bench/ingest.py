"""`make bench-ingest`: getpages per second into and out of Kafka, with the stack running.

Measures, in one run and against the launcher's Kafka and registry:
- the generator (day-posting, buffer-pool models included) producing to Kafka as fast as possible;
- the trace collector sending a project-format CSV trace as fast as possible;
- the registry-aware consumer decoding the getpage batches back;
- the trace readers alone (no Kafka): the same getpages as the project's CSV, SMF type 102 and
  GTF (IFCID 198 records, `ingest/zos/`), each against the CSV reader in the same run;
- and, as the peer, librdkafka producing the same workload's encoded records with no work in between
  (what Kafka itself allows here), so each figure has a ratio beside it.
Each producing measurement runs --repeat times (default 3), after an untimed warm-up, and the
median is reported with every run beside it: these machines are noisy. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Message, Producer

from poolsight.infra.config import Settings, load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.generator import FileSink, Generator, KafkaSink, Totals
from poolsight.ingest.kafka_io import AvroProducer, consume
from poolsight.ingest.producer_process import ProducerProcess
from poolsight.ingest.scenario import Scenario, load
from poolsight.ingest.trace_collector import PositionStore, TraceCollector
from poolsight.ingest.tracefiles import open_trace
from poolsight.ingest.zos.catalog import Catalog
from poolsight.launcher import up
from poolsight.names import GETPAGE_TOPIC
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroDecoder, AvroEncoder


class KeepingProducer:
    """Encodes the getpage batches of a run like the real producer and keeps them, for the
    peer to send raw; sends nothing itself."""

    def __init__(self, encoder: AvroEncoder, keep: int = 2000) -> None:
        self.encoder = encoder
        self.keep = keep
        self.kept: list[tuple[bytes, bytes]] = []

    def send(self, schema_name: str, key: str, record: dict[str, Any], *, getpages: int = 0) -> None:
        pass

    def send_batches(self, batches: list[GetpageBatch]) -> None:
        for b in batches[: self.keep - len(self.kept)]:
            self.kept.append((b.key.encode(), self.encoder.encode("getpage_batch", b.record())))

    def flush(self) -> None:
        pass


def _generate(s: Settings, sc: Scenario, getpages: int) -> tuple[float, Totals, int]:
    """The command's setup: pool models here, encoding and sending in a producer process
    started before the clock runs, as `poolsight generate` does. (getpages/s, totals, records)"""
    producer = ProducerProcess(kafka_access(s), registry_access(s), client_id="bench-generate")
    totals = Generator(sc, seed=11, event_rate=1_000_000).run(KafkaSink(producer), getpages=getpages)
    producer.close()
    return totals.getpages / totals.seconds, totals, producer.metrics.records.get("getpage_batch", 1)


def _raw(s: Settings, kept: list[tuple[bytes, bytes]], records: int) -> float:
    """Seconds librdkafka alone takes to produce `records` of the kept records."""
    raw = Producer(
        kafka_access(s).client_config(
            **{
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 20,
                "compression.type": "lz4",
                "batch.size": 1 << 20,
                "queue.buffering.max.kbytes": 512 * 1024,
            }
        )
    )
    t0 = time.perf_counter()
    sent = 0
    while sent < records:
        k, v = kept[sent % len(kept)]
        try:
            raw.produce(GETPAGE_TOPIC.name, key=k, value=v)
            sent += 1
        except BufferError:
            raw.poll(0.05)
        raw.poll(0)
    raw.flush(60)
    return time.perf_counter() - t0


def _collect(s: Settings, trace: Path, state: Path) -> tuple[float, int]:
    """The trace collector over the whole file as fast as possible (the time includes
    starting its reader process). (getpages/s, rows)"""
    coll = TraceCollector(
        AvroProducer(kafka_access(s), registry_access(s), client_id="bench-trace"),
        PositionStore(state),
        source=f"BENCH{uuid.uuid4().hex[:6]}",
    )
    summary = coll.run([trace])
    coll.close()
    return summary.getpages / summary.seconds, summary.getpages


def _read_all(path: Path, catalog: Catalog) -> tuple[float, int]:
    """(getpages/s, getpages) of one reader over a whole file, nothing sent."""
    t0 = time.perf_counter()
    n = sum(len(b) for b in open_trace(path, catalog=catalog).batches())
    return n / (time.perf_counter() - t0), n


def _readers(sc: Scenario, getpages: int, repeat: int) -> dict[str, list[float]]:
    """Each format's reader over the same workload, runs interleaved so drift hits all alike."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace"
        Generator(sc, seed=13, event_rate=1_000_000).run(FileSink(out, ("csv", "smf", "gtf")), getpages=getpages)
        os.sync()
        catalog = Catalog.load([out / "catalog.csv"])
        runs: dict[str, list[float]] = {f: [] for f in ("csv", "smf", "gtf")}
        counts: dict[str, int] = {}
        for _ in range(repeat):
            for f in runs:
                rate, counts[f] = _read_all(out / f"trace.{f}", catalog)
                runs[f].append(rate)
        if len(set(counts.values())) != 1:
            raise SystemExit(f"the readers disagree on the events read: {counts}")
        for f, r in runs.items():
            size = (out / f"trace.{f}").stat().st_size
            ratio = statistics.median(r) / statistics.median(runs["csv"])
            print(
                f"{'read ' + f:<20} {statistics.median(r) / 1e6:6.2f} M events/s median "
                f"(runs {', '.join(f'{x / 1e6:.2f}' for x in r)})  {size / 2**20:,.0f} MiB, "
                f"{ratio:.2f}x the CSV reader"
            )
        return runs


def _consume(s: Settings, limit: int) -> tuple[float, int]:
    """Decode getpage batches from the start of the topic, up to `limit` getpages. (getpages/s, getpages)"""
    dec = AvroDecoder(registry_access(s))
    decoded = 0
    first = last = 0.0

    def handle(msg: Message) -> bool:  # timed from the first message to the last: fetch + decode
        nonlocal decoded, first, last
        if not first:
            first = time.perf_counter()
        _, rec = dec.decode(msg.value())
        decoded += len(rec["page"])
        last = time.perf_counter()
        return decoded < limit

    consume(kafka_access(s), [GETPAGE_TOPIC.name], f"bench-{uuid.uuid4()}", handle, idle_seconds=3)
    return decoded / max(last - first, 1e-9), decoded


def _line(label: str, runs: list[float], detail: str, peer: float | None = None) -> str:
    m = statistics.median(runs)
    spread = f"(runs {', '.join(f'{r / 1e6:.2f}' for r in runs)})"
    ratio = f"  {m / peer:5.2f}x raw Kafka" if peer else ""
    return f"{label:<20} {m / 1e6:6.2f} M getpages/s median {spread}  {detail}{ratio}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--getpages", type=int, default=3_000_000, help="getpages per run")
    p.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is reported")
    p.add_argument("--warmup", type=int, default=1, help="untimed generator runs (1 M getpages) before the first")
    p.add_argument("--readers-only", action="store_true", help="only the trace readers (no stack needed)")
    a = p.parse_args()
    readers = _readers(load("day-posting"), a.getpages, a.repeat)
    reader_json = {f"read_{f}_events_per_s": statistics.median(r) for f, r in readers.items()}
    reader_json |= {
        f"read_{f}_vs_csv": reader_json[f"read_{f}_events_per_s"] / reader_json["read_csv_events_per_s"]
        for f in ("smf", "gtf")
    }
    if a.readers_only:
        print(json.dumps(reader_json | {f"read_{f}_runs": r for f, r in readers.items()}))
        return
    s = load_settings()
    up(s)  # the whole stack, as it runs in use (Flink and Trino take CPU too)
    sc = load("day-posting")

    for _ in range(a.warmup):  # untimed: a broker just started runs its produce path interpreted at first
        _generate(s, sc, 1_000_000)
    gen_runs: list[float] = []
    for _ in range(a.repeat):
        rps, totals, records = _generate(s, sc, a.getpages)
        gen_runs.append(rps)
    events_per_record = totals.events / max(1, records)

    # Peer: encoded getpage records of the same workload (encoded before the clock runs), as many
    # as the generator sent, produced raw.
    keeper = KeepingProducer(AvroEncoder(registry_access(s)))
    Generator(sc, seed=11, event_rate=1_000_000).run(KafkaSink(keeper), getpages=min(a.getpages, 2_000_000))
    raw_runs = [records * events_per_record / _raw(s, keeper.kept, records) for _ in range(a.repeat)]
    raw_rps = statistics.median(raw_runs)

    # Trace collector: a CSV trace of the same workload, written (and synced, so that writeback
    # does not run inside the clock) before the runs.
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace"
        Generator(sc, seed=12, event_rate=1_000_000).run(FileSink(out), getpages=a.getpages)
        os.sync()
        coll = [_collect(s, out / "trace.csv", Path(tmp) / f"state{i}") for i in range(a.repeat)]
    coll_runs = [r for r, _ in coll]

    cons_runs, decoded = _consume(s, limit=3 * a.getpages)

    gen_rps, coll_rps = statistics.median(gen_runs), statistics.median(coll_runs)
    print(
        _line(
            "generator -> Kafka",
            gen_runs,
            f"({totals.getpages:,} getpages, {totals.reads:,} reads, {totals.writes:,} writes)",
            raw_rps,
        )
    )
    print(_line("trace collector", coll_runs, f"({coll[0][1]:,} rows)", raw_rps))
    print(_line("consumer (decode)", [cons_runs], f"({decoded:,} getpages)"))
    print(_line("raw Kafka (peer)", raw_runs, "(the same workload's encoded records, no work between)"))
    print(
        json.dumps(
            {
                "generator_getpages_per_s": gen_rps,
                "collector_getpages_per_s": coll_rps,
                "consumer_getpages_per_s": cons_runs,
                "raw_kafka_getpages_per_s": raw_rps,
                "generator_vs_raw_kafka": gen_rps / raw_rps,
                "collector_vs_raw_kafka": coll_rps / raw_rps,
                "generator_runs": gen_runs,
                "collector_runs": coll_runs,
                "raw_kafka_runs": raw_runs,
                **reader_json,
            }
        )
    )


if __name__ == "__main__":
    main()
