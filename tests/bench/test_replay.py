"""bench-pipeline's records generated ahead: replayed, the producer is asked to send exactly what
the live generator would have sent (same records, keys, event times and getpages, in order), and
each pane's send time is stamped when its last batch goes out, not when it was generated."""

from __future__ import annotations

import math
import pickle
from typing import Any

from bench.pipeline import TimedSink, flat_out_span
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


class _StampLog(TimedSink):
    """TimedSink logging each stamp with how many records its producer had sent by then."""

    def __init__(self, producer: AvroProducer, counted: _ListProducer) -> None:
        super().__init__(producer, 60.0)
        self.counted = counted
        self.log: list[tuple[int, list[tuple[str, int]]]] = []

    def mark_sent(self, keys: list[tuple[str, int]], now: float) -> None:
        self.log.append((len(self.counted.sent), list(keys)))
        super().mark_sent(keys, now)


def _generate(sink: TimedSink) -> None:
    gen = Generator(load("day-posting"), seed=3, event_rate=5_000.0, start_time=1_700_000_040.0)
    gen.run(sink, getpages=40_000)


def test_replay_sends_what_the_live_generator_sends_in_order_and_stamps_panes_when_sent() -> None:
    live = _ListProducer()
    live_sink = _StampLog(live, live)
    _generate(live_sink)
    rec = Recorder(live)  # the live producer's encoder
    out = _ListProducer()
    ahead_sink = _StampLog(rec, out)
    _generate(ahead_sink)
    assert ahead_sink.sent == {} and ahead_sink.log == []  # nothing stamped while recording

    replay(rec, out, ahead_sink.mark_sent)
    assert out.sent == live.sent
    assert len(out.sent) > 20 and sum(s[4] for s in out.sent) >= 40_000
    assert rec.getpages == sum(s[4] for s in live.sent) and rec.bytes == sum(len(s[2]) for s in live.sent)
    # Each pane stamped right after the record the live path stamped it after (the last batch of
    # the generator's chunk), with the same panes: more than one batch per chunk, so a stamp on
    # the chunk's first batch would differ.
    assert ahead_sink.log == live_sink.log
    assert len(live_sink.log) >= 2 and len(out.sent) > 2 * len(live_sink.log)
    assert set(ahead_sink.sent) == set(live_sink.sent)


def _batches(sent: list[Sent]) -> list[GetpageBatch]:
    return [
        b
        for schema, _, value, _, _ in sent
        if schema == "getpage_batch" and isinstance(b := pickle.loads(value), GetpageBatch)
    ]


def test_a_flat_out_phase_runs_to_its_last_panes_end_so_the_progress_mark_closes_it() -> None:
    """130,000 getpages at 1,000 a second of event time reach into the third pane: the phase
    runs on to its end, and each pool's last progress mark closes its last pane by the tracker's
    rule (a mark at t closes the panes before floor(t / 60)). Stopped at the count, as before,
    the marks leave that pane open for the job's idle flush."""
    start = 1_700_000_040.0  # a pane's start
    span = flat_out_span(130_000, 1_000.0)
    assert span == 180.0 and flat_out_span(0, 1_000.0) is None
    for whole in (True, False):
        out = _ListProducer()
        gen = Generator(load("day-posting"), seed=3, event_rate=1_000.0, start_time=start)
        sink = TimedSink(out, 60.0)
        totals = gen.run(sink, getpages=None, duration=span) if whole else gen.run(sink, getpages=130_000)
        last: dict[str, int] = {}  # each pool's last getpage's pane, and its last progress mark
        marks: dict[str, GetpageBatch] = {}
        for b in _batches(out.sent):
            if b.is_mark:
                marks[b.key] = b
            else:
                last[b.key] = max(last.get(b.key, 0), int(b.times().max() // 60))
        assert last and set(marks) == set(last)
        closed = {k: math.floor(m.end_time / 1e6 / 60) > last[k] for k, m in marks.items()}
        if whole:
            assert totals.getpages > 170_000  # 180 s of events, some of them not getpages
            assert set(last.values()) == {int(start // 60) + 2}  # every pool's last getpage in the third pane
            assert all(closed.values()), closed
        else:
            assert 130_000 <= totals.getpages < 131_000 and not any(closed.values()), closed
