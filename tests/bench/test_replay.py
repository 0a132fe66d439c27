"""bench-pipeline's records generated ahead: replayed, the producer is asked to send exactly what
the live generator would have sent (same records, keys, event times and getpages, in order), and
each pane's send time is stamped when its last batch goes out, not when it was generated."""

from __future__ import annotations

import pickle
from typing import Any

from bench.pipeline import TimedSink
from bench.replay import Recorder, replay
from poolsight.ingest.generator import Generator
from poolsight.ingest.kafka_io import AvroProducer
from poolsight.ingest.scenario import load
from poolsight.schemas.getpage import GetpageBatch

Sent = tuple[str, str, bytes, int | None, int]


class _Encoder:
    """Deterministic bytes per record: enough to tell records apart, no registry."""

    def encode(self, schema_name: str, record: dict[str, Any]) -> bytes:
        return pickle.dumps((schema_name, sorted(record.items(), key=lambda kv: kv[0])))

    def encode_batch(self, batch: GetpageBatch) -> bytes:
        return pickle.dumps(batch)


class _ListProducer(AvroProducer):
    """AvroProducer's own send/send_batch paths, with the Kafka client replaced by a list."""

    def __init__(self) -> None:  # no Kafka client, no registry
        self.encoder = _Encoder()  # type: ignore[assignment]
        self.sent: list[Sent] = []

    def send_encoded(self, schema_name: str, key: str, value: bytes, et: int | None, *, getpages: int = 0) -> None:
        self.sent.append((schema_name, key, value, et, getpages))

    def flush(self, timeout: float = 0.0) -> None:
        pass


def _generate(producer: AvroProducer | Recorder) -> TimedSink:
    sink = TimedSink(producer, 60.0)
    gen = Generator(load("day-posting"), seed=3, event_rate=5_000.0, start_time=1_700_000_040.0)
    gen.run(sink, getpages=40_000)
    return sink


def test_replay_sends_what_the_live_generator_sends_in_order_and_stamps_panes_when_sent() -> None:
    live = _ListProducer()
    live_sink = _generate(live)
    rec = Recorder(live)  # the live producer's encoder
    ahead_sink = _generate(rec)
    assert ahead_sink.sent == {} and ahead_sink.first_send is None  # nothing stamped while recording

    out = _ListProducer()
    calls: list[tuple[int, float]] = []  # records sent when each stamp came

    def stamp(panes: list[tuple[str, int]], now: float) -> None:
        calls.append((len(out.sent), now))
        ahead_sink.mark_sent(panes, now)

    replay(rec, out, stamp)
    assert out.sent == live.sent
    assert len(out.sent) > 20 and sum(s[4] for s in out.sent) >= 40_000
    assert rec.getpages == sum(s[4] for s in live.sent) and rec.bytes == sum(len(s[2]) for s in live.sent)
    # The same panes, each stamped right after the batch carrying its getpages went out.
    assert set(ahead_sink.sent) == set(live_sink.sent) and len(ahead_sink.sent) >= 2
    assert len(calls) == len(rec.notes)
    for (i, panes), (sent_before, _) in zip(sorted(rec.notes.items()), calls, strict=True):
        assert out.sent[i][0] == "getpage_batch"
        assert sent_before == i + 1, f"record {i}'s panes stamped with {sent_before} records sent"
        for source_pool, _ in panes:
            assert out.sent[i][1] == source_pool.replace("/", "|")
    assert [t for _, t in calls] == sorted(t for _, t in calls)
    assert ahead_sink.first_send == calls[0][1]
