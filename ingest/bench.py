"""`make bench-ingest`: getpages per second into and out of Kafka, with the stack running.

Measures, in one run and against the launcher's Kafka and registry:
- the generator (day-posting, buffer-pool models included) producing to Kafka as fast as possible;
- the trace collector sending a project-format CSV trace as fast as possible;
- the registry-aware consumer decoding the getpage batches back;
- and, as the peer, librdkafka producing the same workload's encoded records with no work in between
  (what Kafka itself allows here), so each figure has a ratio beside it.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Message, Producer

from poolsight.infra.config import load_settings
from poolsight.infra.launcher import up
from poolsight.ingest.batching import Batch
from poolsight.ingest.generator import FileSink, Generator, KafkaSink
from poolsight.ingest.kafka_io import AvroDecoder, AvroProducer, consume
from poolsight.ingest.producer_process import ProducerProcess
from poolsight.ingest.scenario import load
from poolsight.ingest.trace_collector import PositionStore, TraceCollector
from poolsight.names import GETPAGE_TOPIC


class KeepingProducer:
    """Encodes the getpage batches of a run like the real producer and keeps them, for the
    peer to send raw; sends nothing itself."""

    def __init__(self, encoder: AvroProducer, keep: int = 2000) -> None:
        self.encoder = encoder
        self.keep = keep
        self.kept: list[tuple[bytes, bytes]] = []

    def send(self, schema_name: str, key: str, record: dict[str, Any], *, getpages: int = 0) -> None:
        pass

    def send_batches(self, batches: list[Batch]) -> None:
        for b in batches[: self.keep - len(self.kept)]:
            self.kept.append((b.key.encode(), self.encoder.encode("getpage_batch", b.record)))

    def flush(self) -> None:
        pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--getpages", type=int, default=3_000_000)
    a = p.parse_args()
    s = load_settings()
    up(s, ["registry"])
    sc = load("day-posting")

    # Generator -> Kafka: the command's setup (pool models here, encoding and sending in a
    # producer process started before the clock runs, as `poolsight generate` does).
    producer = ProducerProcess(s.kafka_bootstrap, s.registry_url, client_id="bench-generate")
    gen = Generator(sc, seed=11, event_rate=1_000_000)
    totals = gen.run(KafkaSink(producer), getpages=a.getpages)
    producer.close()
    gen_rps = totals.getpages / totals.seconds
    records = producer.metrics.records.get("getpage_batch", 1)
    events_per_record = totals.events / max(1, records)

    # Peer: encoded getpage records of the same workload, produced raw (encoded before the clock runs).
    keeper = KeepingProducer(AvroProducer(s.kafka_bootstrap, s.registry_url))
    Generator(sc, seed=11, event_rate=1_000_000).run(KafkaSink(keeper), getpages=min(a.getpages, 2_000_000))
    kept = keeper.kept
    raw = Producer({"bootstrap.servers": s.kafka_bootstrap, "enable.idempotence": True, "acks": "all",
                    "linger.ms": 20, "compression.type": "lz4", "batch.size": 1 << 20,
                    "queue.buffering.max.kbytes": 512 * 1024})
    t0 = time.perf_counter()
    sent = 0
    while sent < records:  # as many records as the generator sent
        k, v = kept[sent % len(kept)]
        try:
            raw.produce(GETPAGE_TOPIC.name, key=k, value=v)
            sent += 1
        except BufferError:
            raw.poll(0.05)
        raw.poll(0)
    raw.flush(60)
    raw_rps = sent * events_per_record / (time.perf_counter() - t0)

    # Trace collector: a CSV trace of the same workload, as fast as possible (the time
    # includes starting its reader process).
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace"
        Generator(sc, seed=12, event_rate=1_000_000).run(FileSink(out), getpages=a.getpages)
        coll = TraceCollector(AvroProducer(s.kafka_bootstrap, s.registry_url, client_id="bench-trace"),
                              PositionStore(Path(tmp) / "state"), source=f"BENCH{uuid.uuid4().hex[:6]}")
        summary = coll.run([out / "trace.csv"])
        coll.close()
        coll_rps = summary.getpages / summary.seconds

    # Consumer: decode every getpage batch on the topic.
    dec = AvroDecoder(s.registry_url)
    decoded = 0
    first = last = 0.0

    def handle(msg: Message) -> bool:  # timed from the first message to the last: fetch + decode
        nonlocal decoded, first, last
        if not first:
            first = time.perf_counter()
        _, rec = dec.decode(msg.value())
        decoded += len(rec["page"])
        last = time.perf_counter()
        return True

    consume(s.kafka_bootstrap, [GETPAGE_TOPIC.name], f"bench-{uuid.uuid4()}", handle, idle_seconds=3)
    cons_rps = decoded / max(last - first, 1e-9)

    print(f"generator -> Kafka   {gen_rps / 1e6:6.2f} M getpages/s  ({totals.getpages:,} getpages, "
          f"{totals.reads:,} reads, {totals.writes:,} writes)  {gen_rps / raw_rps:5.2f}x raw Kafka")
    print(f"trace collector      {coll_rps / 1e6:6.2f} M getpages/s  ({summary.getpages:,} rows)  "
          f"{coll_rps / raw_rps:5.2f}x raw Kafka")
    print(f"consumer (decode)    {cons_rps / 1e6:6.2f} M getpages/s  ({decoded:,} getpages)")
    print(f"raw Kafka (peer)     {raw_rps / 1e6:6.2f} M getpages/s  (same encoded records, no work between)")
    print(json.dumps({
        "generator_getpages_per_s": gen_rps, "collector_getpages_per_s": coll_rps,
        "consumer_getpages_per_s": cons_rps, "raw_kafka_getpages_per_s": raw_rps,
        "generator_vs_raw_kafka": gen_rps / raw_rps, "collector_vs_raw_kafka": coll_rps / raw_rps,
    }))


if __name__ == "__main__":
    main()
