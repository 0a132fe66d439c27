"""`make bench-decode`: getpages/s of the simulation job's decoding, in process (no services).

Records: a generated subsystem (the generator's own Kafka sink over a recorder, as in the job's
tests), its getpage batches of 4096 and of 16384 events encoded as the producer encodes them
(fastavro behind the Confluent header). Decoded two ways by `AvroDecoder`, writer schema given
directly: the peer is today's path, fastavro + `GetpageBatch.from_record` (`decode`); the other
is the compiled kernel (`read`). Then the job's whole work per record, decoding and
`PoolTracker.feed` (one tracker per pool, the pool's attributes applied first), both ways, so
decoding's share of it shows; the kernel path again with the LRU stack only (the job's
--no-pool-policy), so the miniature caches of each pool's own policy show as a ratio, with each
pool's tracker snapshot (bytes, ms), which the job writes at every pane. And the producers'
encoding of the same batches, by `AvroEncoder` (schema id given): `encode` of `record()`
(fastavro, the peer) against `encode_batch` (the compiled kernel), after checking they give the
same bytes. Medians of --runs passes; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from poolsight import schemas
from poolsight.flink_jobs.tracker import Emission, PoolTracker
from poolsight.infra.config import load_settings
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.generator import Generator, KafkaSink
from poolsight.ingest.scenario import load
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroDecoder, AvroEncoder
from poolsight.simulator import SimConfig

SCHEMA_ID = 1
Decode = Callable[[bytes], GetpageBatch]
Encode = Callable[[GetpageBatch], bytes]


class Recorder:
    """What KafkaSink would produce: getpage batches and pool attributes, in order."""

    def __init__(self) -> None:
        self.batches: list[GetpageBatch] = []
        self.attributes: list[dict[str, Any]] = []

    def send(self, schema: str, _key: str, record: Any, **_kw: Any) -> None:
        if schema == "pool_attributes":
            self.attributes.append(record)

    def send_batches(self, batches: list[GetpageBatch]) -> None:
        self.batches.extend(batches)

    def flush(self) -> None:
        pass


def corpus(
    scenario: str, getpages: int, batch: int, seed: int
) -> tuple[list[bytes], list[dict[str, Any]], list[GetpageBatch]]:
    """Framed getpage batches of `batch` events at most (as the producer writes them), the pools'
    attributes, and the batches as the generator made them."""
    rec = Recorder()
    Generator(load(scenario), seed=seed).run(KafkaSink(rec, batch_getpages=batch), getpages=getpages)
    fastavro_path, _ = encoders()
    return [fastavro_path(b) for b in rec.batches], rec.attributes, rec.batches


def decoders() -> tuple[Decode, Decode]:
    """(fastavro + from_record, kernel), both through AvroDecoder with the writer schema given."""
    d = AvroDecoder(registry_access(load_settings()), patience=0)  # never asked: the schema id is known
    d.remember(SCHEMA_ID, schemas.text("getpage_batch"))

    def fastavro_path(v: bytes) -> GetpageBatch:
        return GetpageBatch.from_record(d.decode(v)[1])

    def kernel_path(v: bytes) -> GetpageBatch:
        b = d.read(v)[1]
        assert isinstance(b, GetpageBatch)
        return b

    return fastavro_path, kernel_path


class KnownIds(AvroEncoder):
    """An encoder whose schema id is known: no registry."""

    def schema_id(self, schema_name: str) -> int:
        return SCHEMA_ID


def encoders() -> tuple[Encode, Encode]:
    """(fastavro: encode of record(), kernel: encode_batch), as the producers call them."""
    e = KnownIds(registry_access(load_settings()), patience=0)

    def fastavro_path(b: GetpageBatch) -> bytes:
        return e.encode("getpage_batch", b.record())

    return fastavro_path, e.encode_batch


def encode_seconds(encode: Encode, batches: list[GetpageBatch]) -> float:
    t = time.perf_counter()
    for b in batches:
        encode(b)
    return time.perf_counter() - t


def same(a: GetpageBatch, b: GetpageBatch) -> bool:
    arrays = all(np.array_equal(x, y) for x, y in ((a.time_offset, b.time_offset), (a.objects, b.objects)))
    return (
        arrays
        and np.array_equal(a.pages, b.pages)
        and (a.source, a.pool, a.sequence, a.start_time, a.end_time, a.object_names)
        == (b.source, b.pool, b.sequence, b.start_time, b.end_time, b.object_names)
        and (a.access, a.function, a.hit, a.getpages) == (b.access, b.function, b.hit, b.getpages)
    )


def decode_seconds(decode: Decode, values: list[bytes]) -> float:
    t = time.perf_counter()
    for v in values:
        decode(v)
    return time.perf_counter() - t


def job_seconds(
    decode: Decode,
    values: list[bytes],
    attributes: list[dict[str, Any]],
    config: SimConfig,
    pool_policy: bool = True,
    snapshots: dict[str, tuple[int, float]] | None = None,
) -> float:
    """Decode and feed every record as the job does, fresh trackers; the attributes first.
    `snapshots`, when given, gets each pool's tracker snapshot at the end as the job writes it
    at every pane: (bytes, seconds)."""
    trackers: dict[tuple[str, str], PoolTracker] = {}
    for a in attributes:
        key = (a["source"], a["pool"])
        tr = trackers.setdefault(key, PoolTracker(*key, config, pool_policy=pool_policy))
        tr.set_attributes({**a, "event_time": datetime.fromtimestamp(a["event_time"] / 1e6, UTC)})
    out: list[Emission] = []

    def emit(e: Emission, _i: int) -> None:
        out.append(e)

    t = time.perf_counter()
    for v in values:
        b = decode(v)
        key = (b.source, b.pool)
        if key not in trackers:
            trackers[key] = PoolTracker(*key, config, pool_policy=pool_policy)
        trackers[key].feed(b, emit)
    took = time.perf_counter() - t
    if snapshots is not None:
        for (_, pool), tr in sorted(trackers.items()):
            t = time.perf_counter()
            size = len(tr.snapshot())
            snapshots[pool] = (size, time.perf_counter() - t)
    return took


def median_of(runs: int, f: Callable[[], float]) -> float:
    return statistics.median(f() for _ in range(runs))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="mixed")
    p.add_argument("--getpages", type=int, default=1_000_000, help="per batch size (4096 and 16384)")
    p.add_argument("--runs", type=int, default=5, help="passes over the records; the median is reported")
    p.add_argument("--job-runs", type=int, default=3, help="passes of decode + PoolTracker.feed")
    p.add_argument("--mode", choices=["exact", "shards"], default="exact", help="the job's simulation (default exact)")
    a = p.parse_args(argv)

    values: list[bytes] = []
    attributes: list[dict[str, Any]] = []
    made: list[GetpageBatch] = []
    for i, batch in enumerate((4096, 16_384)):
        v, attrs, bs = corpus(a.scenario, a.getpages, batch, seed=3 + i)
        values += v
        made += bs
        attributes = attributes or attrs
    fastavro_path, kernel_path = decoders()
    batches = [fastavro_path(v) for v in values]
    if not all(same(b, kernel_path(v)) for b, v in zip(batches, values, strict=True)):
        raise SystemExit("bench-decode: the kernel decoded a batch differently from fastavro + from_record")
    getpages = sum(b.getpages for b in batches)
    events = sum(b.events for b in batches)
    size = sum(len(v) for v in values)
    print(
        f"{len(values)} records of scenario {a.scenario}: {getpages:,} getpages, {events:,} events "
        f"({events / len(values):,.0f} a record), {size / 2**20:.1f} MiB"
    )

    fast = median_of(a.runs, lambda: decode_seconds(fastavro_path, values))
    kern = median_of(a.runs, lambda: decode_seconds(kernel_path, values))
    print(f"decode  fastavro + from_record {getpages / fast / 1e6:8.2f} M getpages/s  ({fast:.3f} s)")
    print(f"decode  kernel                 {getpages / kern / 1e6:8.2f} M getpages/s  ({kern:.3f} s)")
    print(f"        ratio {fast / kern:.1f}x")

    enc_fast, enc_kern = encoders()
    if [enc_kern(b) for b in made] != values:
        raise SystemExit("bench-decode: the kernel encoded a batch differently from fastavro")
    efast = median_of(a.runs, lambda: encode_seconds(enc_fast, made))
    ekern = median_of(a.runs, lambda: encode_seconds(enc_kern, made))
    print(f"encode  fastavro (record())    {getpages / efast / 1e6:8.2f} M getpages/s  ({efast:.3f} s)")
    print(f"encode  kernel (encode_batch)  {getpages / ekern / 1e6:8.2f} M getpages/s  ({ekern:.3f} s)")
    print(f"        ratio {efast / ekern:.1f}x")

    config = SimConfig(mode=a.mode)
    job_fast = median_of(a.job_runs, lambda: job_seconds(fastavro_path, values, attributes, config))
    snaps: dict[str, dict[str, tuple[int, float]]] = {"policy": {}, "lru": {}}
    job_kern = median_of(
        a.job_runs, lambda: job_seconds(kernel_path, values, attributes, config, True, snaps["policy"])
    )
    print(f"job     fastavro path  {getpages / job_fast / 1e6:8.2f} M getpages/s  decoding {fast / job_fast:.0%} of it")
    print(f"job     kernel path    {getpages / job_kern / 1e6:8.2f} M getpages/s  decoding {kern / job_kern:.0%} of it")
    print(f"        ratio {job_fast / job_kern:.2f}x ({a.mode} simulation)")
    # The kernel path with the miniature caches of each pool's own policy (as above, the job's
    # default) against the LRU stack alone (--no-pool-policy); and the snapshot each pool's
    # tracker writes at every pane.
    job_lru = median_of(a.job_runs, lambda: job_seconds(kernel_path, values, attributes, config, False, snaps["lru"]))
    print(f"job     LRU stack only {getpages / job_lru / 1e6:8.2f} M getpages/s")
    print(f"job     pool's policy  {getpages / job_kern / 1e6:8.2f} M getpages/s  {job_lru / job_kern:.2f}x of that")
    for pool in sorted(snaps["policy"]):
        (ps, pt), (ls, lt) = snaps["policy"][pool], snaps["lru"].get(pool, (0, 0.0))
        lru = f"LRU only {ls / 1e6:.1f} MB, {lt * 1e3:.0f} ms"
        print(f"        {pool} tracker snapshot {ps / 1e6:.1f} MB in {pt * 1e3:.0f} ms ({lru})")
    result = {
        "records": len(values),
        "getpages": getpages,
        "kernel_getpages_per_s": round(getpages / kern),
        "fastavro_getpages_per_s": round(getpages / fast),
        "ratio": round(fast / kern, 2),
        "job_kernel_getpages_per_s": round(getpages / job_kern),
        "job_fastavro_getpages_per_s": round(getpages / job_fast),
        "job_path_ratio": round(job_fast / job_kern, 2),
        "decode_share_kernel": round(kern / job_kern, 3),
        "decode_share_fastavro": round(fast / job_fast, 3),
        "mode": a.mode,
        "encode_kernel_getpages_per_s": round(getpages / ekern),
        "encode_fastavro_getpages_per_s": round(getpages / efast),
        "encode_ratio": round(efast / ekern, 2),
        "job_lru_only_getpages_per_s": round(getpages / job_lru),
        "job_pool_policy_getpages_per_s": round(getpages / job_kern),
        "pool_policy_ratio": round(job_lru / job_kern, 3),
        "snapshot_mb": {p: round(s / 1e6, 2) for p, (s, _) in snaps["policy"].items()},
        "snapshot_ms": {p: round(t * 1e3, 1) for p, (_, t) in snaps["policy"].items()},
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
