"""`make chaos`'s own logic: the truth it counts and its refusal of an unknown fault (the fault
runs themselves need the stack: `make chaos`)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.chaos import CountingSink, Trial, _table, main
from poolsight.ingest.generator import Generator
from poolsight.ingest.scenario import load


class _Batches:
    """Keeps what the sink would send: the getpage batches, one pool each."""

    def __init__(self) -> None:
        self.by_pool: dict[str, int] = {}

    def send(self, schema_name: str, key: str, record: dict[str, Any], *, getpages: int = 0) -> None:
        pass

    def send_batches(self, batches: list[Any]) -> None:
        for b in batches:
            self.by_pool[b.pool] = self.by_pool.get(b.pool, 0) + b.getpages

    def flush(self) -> None:
        pass


def test_the_counting_sink_counts_per_pool_what_its_batches_carry() -> None:
    sc = load("day-posting")
    sent = _Batches()
    sink = CountingSink(sent)  # type: ignore[arg-type]
    totals = Generator(sc, seed=3, event_rate=20_000).run(sink, getpages=50_000)
    assert dict(sink.sent) == sent.by_pool
    assert sum(sink.sent.values()) == totals.getpages >= 50_000
    assert set(sink.sent) == set(sc.pools)


def test_a_trial_is_exact_only_with_every_pool_exact_nothing_dead_lettered_and_no_failure() -> None:
    sent = {"BP1": 6, "BP2": 4}
    rolled = {"in_hours_by_pool": dict(sent), "in_days_by_pool": dict(sent), "cycles": ["ok", "ok"]}
    ok = Trial("kafka", 0, sent, dict(sent), 0, 4.2, 12.0, [], **rolled)  # type: ignore[arg-type]
    assert ok.ok() and ok.produced == ok.in_iceberg == 10
    assert not Trial("kafka", 0, sent, {"BP1": 5, "BP2": 4}, 0, 4.2, None, []).ok()  # lost
    assert not Trial("kafka", 0, sent, {"BP1": 7, "BP2": 3}, 0, 4.2, 3.0, []).ok()  # same total, wrong pools
    assert not Trial("kafka", 0, sent, dict(sent), 1, 4.2, 3.0, []).ok()  # dead-lettered
    assert not Trial("kafka", 0, sent, dict(sent), 0, 4.2, 3.0, [], error="KafkaException: x").ok()
    doubled = {"BP1": 12, "BP2": 4}  # a pane rolled up twice
    assert not Trial("kafka", 0, sent, dict(sent), 0, 4.2, 3.0, [], dict(sent), doubled).ok()
    assert not Trial("kafka", 0, sent, dict(sent), 0, 4.2, 3.0, [], doubled, dict(sent)).ok()
    table = _table([ok, Trial("flink-jobmanager", 1, sent, {"BP1": 6}, 0, 8.0, None, ["simulation"])]).splitlines()
    assert table[2].split()[:11] == ["kafka", "0", "10", "10", "10", "10", "0", "4.2", "12.0", "2/2", "ok"]
    assert table[3].split()[2:9] == ["10", "6", "0", "0", "0", "8.0", "never"]
    assert table[3].endswith("(simulation resumed by up)")


def test_an_unknown_fault_is_refused_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--faults", "kafka,disk"])
    assert exc.value.code == 2
    assert "unknown fault(s) disk" in capsys.readouterr().err
