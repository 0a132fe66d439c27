"""I/O panes against a brute-force count of the generator's own I/O events (its file output,
same seed), with batches out of order, late and sent twice; bad batches name their field."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from poolsight.flink_jobs.io_panes import READ_TYPES, WRITE_TYPES, IoPanes
from poolsight.ingest.generator import FileSink, Generator
from poolsight.ingest.scenario import load
from tests.flink_jobs.generated import generate

PANE = 10.0
KIND = {"read_io_batch": "poolsight.v1.ReadIoBatch", "write_io_batch": "poolsight.v1.WriteIoBatch"}


def _truth(path: Path) -> dict[tuple[Any, ...], list[int]]:
    """(source, pool, pane, object, direction, type) -> [ios, pages, elapsed, max] from io.jsonl."""
    out: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    with path.open() as f:
        for line in f:
            e = json.loads(line)
            types = READ_TYPES if e["kind"] == "read" else WRITE_TYPES
            # The batch carries whole microseconds: the pane of the rounded time, as the job sees it.
            pane = math.floor(round(e["time"] * 1e6) / 1e6 / PANE)
            c = out[(e["source"], e["pool"], pane, e["object"], e["kind"], types[e["io_type"]])]
            c[0] += 1
            c[1] += e["pages"]
            c[2] += e["elapsed_us"]
            c[3] = max(c[3], e["elapsed_us"])
    return out


def _rows(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[int]]:
    out: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        assert r["pane_end"] - r["pane_start"] == PANE * 1000
        c = out[
            (r["source"], r["pool"], r["pane_start"] // int(PANE * 1000), r["object"], r["direction"], r["io_type"])
        ]
        c[0] += r["ios"]
        c[1] += r["pages"]
        c[2] += r["elapsed_us"]
        c[3] = max(c[3], r["max_elapsed_us"])
    return out


def test_io_panes_equal_the_events_counted_one_by_one(tmp_path: Path) -> None:
    Generator(load("mixed"), seed=3, event_rate=50_000.0).run(FileSink(tmp_path), duration=30)
    truth = _truth(tmp_path / "io.jsonl")
    rec = generate("mixed", 30)
    batches = [(s, r) for s, r in rec.items if s in KIND]
    assert len(batches) > 20
    # A producer restarted after its checkpoint sends its last batches again (in order, as
    # one Kafka partition keeps them); an idle flush mid-stream writes open panes early.
    replay = len(batches) // 2
    stream = batches[:replay] + batches[replay - 6 : replay] + batches[replay:]
    panes: dict[tuple[str, str], IoPanes] = {}
    rows: list[dict[str, Any]] = []
    added = 0
    for i, (schema, r) in enumerate(stream):
        key = (r["source"], r["pool"])
        p = panes.setdefault(key, IoPanes(*key, PANE, 25.0))
        added += p.add(KIND[schema], r)
        rows += p.due(0.0) if i % 50 else p.take()
    for p in panes.values():
        rows += p.take()
    assert added == sum(c[0] for c in truth.values())
    assert _rows(rows) == truth
    assert {r["cpu_us_per_sync_read"] for r in rows} == {25.0}
    # Events after an early flush made second rows for panes already written; summed, each key is right.
    assert len(rows) > len(truth)


def _batch(**over: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "source": "DB2P",
        "pool": "BP1",
        "sequence": 0,
        "start_time": 1_000_000_000,
        "object_names": ["DB.TS1", "DB.IX1"],
        "time_offset": [0, 5_000_000, 12_000_000],
        "object": [0, 1, 0],
        "io_type": [0, 0, 1],
        "first_page": [1, 2, 3],
        "pages": [1, 1, 32],
        "elapsed": [800, 1200, 2500],
    }
    return {**b, **over}


def test_a_pane_is_written_once_the_pools_events_pass_its_end() -> None:
    p = IoPanes("DB2P", "BP1", PANE, 30.0)
    assert p.add("poolsight.v1.ReadIoBatch", _batch()) == 3
    rows = p.due(0.0)  # events at 1000 s, 1005 s, 1012 s: pane 100 is done, 101 still open
    assert [(r["object"], r["io_type"], r["ios"], r["elapsed_us"]) for r in rows] == [
        ("DB.IX1", "sync", 1, 1200),
        ("DB.TS1", "sync", 1, 800),
    ]
    assert p.due(0.0) == []
    assert p.due(5.0) == []  # lateness holds pane 101 back as well
    assert [(r["io_type"], r["pages"]) for r in p.take()] == [("sequential", 32)]
    # The same batch again (same sequence and start): skipped.
    assert p.add("poolsight.v1.ReadIoBatch", _batch()) == 0


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"elapsed": [1, 2]}, "elapsed"),
        ({"object": [0, 2, 0]}, "object"),
        ({"io_type": [0, 4, 0]}, "io_type"),
        ({"pages": [1, -1, 3]}, "pages"),
    ],
)
def test_a_bad_batch_names_its_field_and_changes_nothing(over: dict[str, Any], field: str) -> None:
    p = IoPanes("DB2P", "BP1", PANE, 30.0)
    p.add("poolsight.v1.ReadIoBatch", _batch(sequence=0, start_time=0))
    before = {k: list(v) for k, v in p.cells.items()}
    with pytest.raises(ValueError, match=f"field {field}"):
        p.add("poolsight.v1.ReadIoBatch", _batch(sequence=1, **over))
    assert p.cells == before
