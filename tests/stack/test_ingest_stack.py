"""Trace files into the real Kafka and registry, read back and counted exactly."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Message

from poolsight.infra.config import load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.ingest.kafka_io import consume
from poolsight.names import DEADLETTER_TOPIC, GETPAGE_TOPIC
from poolsight.schemas.wire import AvroDecoder, DecodeError
from tests.conftest import ROOT, poolsight

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

HEADER = "time,pool,object,page,access,function\n"


def _rows(start: int, n: int) -> str:
    out = []
    for i in range(start, start + n):
        pool = "BP1" if i % 3 else "BP2"
        out.append(
            f"{1_700_000_000 + i * 0.001:.6f},{pool},DB1.TS{i % 5},{(i * 7919) % 1000},"
            f"{'RSL'[i % 3]},{'GP' if i % 10 else 'SWI'}\n"
        )
    return "".join(out)


def _decode(dec: AvroDecoder, msg: Message, owner: str) -> tuple[str, dict[str, Any]] | None:
    """None for a getpage record of another source that does not decode: the stack's topics
    outlive tests, and the pipeline tests produce one on purpose."""
    try:
        return dec.decode(msg.value())
    except DecodeError:
        if msg.topic() == GETPAGE_TOPIC.name and not (msg.key() or b"").startswith(f"{owner}|".encode()):
            return None
        raise


def _read_back(source: str, file: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    s = load_settings()
    dec = AvroDecoder(s.registry_url)
    batches: list[dict[str, Any]] = []
    dead: list[dict[str, Any]] = []

    def handle(msg: Message) -> bool:
        got = _decode(dec, msg, source)
        if got is None:
            return True
        name, rec = got
        if name.endswith("GetpageBatch") and rec["source"] == source:
            batches.append(rec)
        elif name.endswith("DeadLetter") and rec["source"] == str(file):
            dead.append(rec)
        return True

    consume(kafka_access(s), [GETPAGE_TOPIC.name, DEADLETTER_TOPIC.name], f"t-{uuid.uuid4()}", handle, idle_seconds=4)
    return batches, dead


def _check_sequences(batches: list[dict[str, Any]]) -> None:
    by_pool: dict[str, list[int]] = {}
    for b in batches:
        by_pool.setdefault(b["pool"], []).append(b["sequence"])
    for pool, seqs in by_pool.items():
        assert seqs == list(range(len(seqs))), f"{pool}: sequences {seqs[:10]}... have gaps or repeats"


def _ingest(file: Path, source: str, state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return poolsight(
        "ingest",
        "trace",
        str(file),
        "--source",
        source,
        "--state-dir",
        str(state),
        "--batch-getpages",
        "100",
        *extra,
        timeout=300,
    )


def test_trace_file_into_kafka_counts_exactly_and_restarts_without_repeats(tmp_path: Path) -> None:
    source = f"T{uuid.uuid4().hex[:8]}"
    file = tmp_path / "trace.csv"
    bad = "1700000001.0,BP1,DB1.TS1,notapage,R,GP\n1700000001.1,BP1,DB1.TS1,12,Q,GP\n1700000001.2,BP1,DB1.TS1\n"
    file.write_text(HEADER + _rows(0, 1000) + bad + _rows(1000, 500))
    r = _ingest(file, source, tmp_path / "state")
    assert r.returncode == 0, r.stderr
    assert "accepted 1,500 rows, rejected 3" in r.stderr

    # A restart after more rows were appended sends only the new rows.
    with file.open("a") as fh:
        fh.write(_rows(1500, 700))
    r = _ingest(file, source, tmp_path / "state")
    assert r.returncode == 0, r.stderr
    assert "accepted 700 rows, rejected 0" in r.stderr

    batches, dead = _read_back(source, file)
    events = sum(len(b["page"]) for b in batches)
    assert events == 2200
    assert sum(b["function"].count(0) for b in batches) == sum(1 for i in range(2200) if i % 10)
    _check_sequences(batches)
    assert sorted((d["position"], d["field"]) for d in dead) == [
        ("line 1002", "page"),
        ("line 1003", "access"),
        ("line 1004", "row"),
    ]
    assert all(d["collector"] == "ingest-trace" for d in dead)
    assert dead[0]["raw"].startswith(b"1700000001")
    # Pages and objects survive the trip: compare with the file, row by row, per pool.
    sent = {(b["pool"], b["object_names"][o], p) for b in batches for o, p in zip(b["object"], b["page"], strict=True)}
    want = set()
    for i in range(2200):
        want.add(("BP1" if i % 3 else "BP2", f"DB1.TS{i % 5}", (i * 7919) % 1000))
    assert sent == want


def test_follow_tails_a_growing_file(tmp_path: Path) -> None:
    source = f"F{uuid.uuid4().hex[:8]}"
    file = tmp_path / "live.csv"
    file.write_text(HEADER + _rows(0, 300))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "trace",
            str(file),
            "--source",
            source,
            "--state-dir",
            str(tmp_path / "state"),
            "--follow",
            "--idle-stop",
            "6",
            "--batch-getpages",
            "64",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    more = _rows(300, 200)
    with file.open("a") as fh:  # a row written in two pieces must be read once, whole
        fh.write(more[:-20])
        fh.flush()
        time.sleep(1.5)
        fh.write(more[-20:])
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    batches, dead = _read_back(source, file)
    assert sum(len(b["page"]) for b in batches) == 500
    assert dead == []
    _check_sequences(batches)


def test_an_interrupted_collector_resumes_at_its_last_checkpoint(tmp_path: Path) -> None:
    """Ctrl-C mid-file: what was sent is delivered and its position kept; the restart sends the
    rest, repeating at most the chunk in flight with the same sequence numbers (which consumers
    drop), never starting over and never skipping."""
    import signal

    source = f"I{uuid.uuid4().hex[:8]}"
    file = tmp_path / "trace.csv"
    rows = 300_000  # 300 s of event time: about five reader chunks
    file.write_text(HEADER + _rows(0, rows))
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "trace",
            str(file),
            "--source",
            source,
            "--state-dir",
            str(state),
            "--speed",
            "10",
            "--checkpoint-seconds",
            "3600",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(12)  # paced at 10x: the first 65,536-row chunk is sent after about 6.6 s
    assert proc.poll() is None, "the collector finished before the interrupt"
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    r = _ingest(file, source, state, "--batch-getpages", "4096")
    assert r.returncode == 0, r.stderr

    batches, dead = _read_back(source, file)
    assert dead == []
    first: dict[tuple[str, int], dict[str, Any]] = {}
    repeated = 0
    for b in batches:
        k = (b["pool"], b["sequence"])
        if k in first:
            assert b == first[k], f"{k} sent twice with different content"
            repeated += len(b["page"])
        first.setdefault(k, b)
    _check_sequences(list(first.values()))
    assert sum(len(b["page"]) for b in first.values()) == rows
    assert 0 < len(batches) - len(first) and repeated < 65_536 + 4096, "the restart did not resume mid-file"


def test_generated_workload_into_kafka_counts_exactly(tmp_path: Path) -> None:
    import yaml

    from poolsight.ingest.scenario import SCENARIO_DIR

    member = f"G{uuid.uuid4().hex[:6]}"
    raw = yaml.safe_load((SCENARIO_DIR / "day-posting.yaml").read_text())
    raw["members"] = [member]
    scenario = tmp_path / "mine.yaml"
    scenario.write_text(yaml.safe_dump(raw))
    r = poolsight(
        "generate", str(scenario), "--getpages", "150000", "--seed", "3", "--event-rate", "20000", timeout=300
    )
    assert r.returncode == 0, r.stderr
    totals = __import__("json").loads(r.stdout.strip().splitlines()[-1])

    s = load_settings()
    dec = AvroDecoder(s.registry_url)
    seen: dict[str, list[dict[str, Any]]] = {}

    def handle(msg: Message) -> bool:
        got = _decode(dec, msg, member)
        if got is None:
            return True
        name, rec = got
        if rec.get("source") == member:
            seen.setdefault(name.rsplit(".", 1)[1], []).append(rec)
        return True

    from poolsight.names import ATTRIBUTES_TOPIC, IO_TOPIC, STATS_TOPIC

    consume(
        kafka_access(s),
        [GETPAGE_TOPIC.name, IO_TOPIC.name, STATS_TOPIC.name, ATTRIBUTES_TOPIC.name],
        f"t-{uuid.uuid4()}",
        handle,
        idle_seconds=5,
    )
    batches = seen["GetpageBatch"]
    assert sum(b["function"].count(0) for b in batches) == totals["getpages"]
    assert sum(len(b["page"]) for b in batches) == totals["events"]
    assert totals["kafka"]["getpages"] == totals["getpages"]
    _check_sequences(batches)
    assert sum(len(b["pages"]) for b in seen["ReadIoBatch"]) == totals["reads"]
    assert sum(len(b["pages"]) for b in seen.get("WriteIoBatch", [])) == totals["writes"]
    stats = seen["PoolStats"]
    assert {x["pool"] for x in stats} == {"BP1", "BP2"}
    assert sum(x["getpages_random"] + x["getpages_sequential"] for x in stats) == totals["getpages"]
    misses = sum(b["hit"].count(0) for b in batches if b["hit"] is not None)
    assert misses > 0
    assert len(seen["PoolAttributes"]) == 2 and len(seen["ObjectCatalog"]) == 7


def test_producer_process_keeps_a_keys_order_when_the_caller_encodes_too() -> None:
    """With a short queue the caller encodes batches itself while the child is behind: both kinds
    go through one queue, so a key's batches arrive whole and in order, and are all counted."""
    import numpy as np

    from poolsight.ingest.batching import make_batch
    from poolsight.ingest.producer_process import ProducerProcess

    s = load_settings()
    source = f"P{uuid.uuid4().hex[:8]}"
    pp = ProducerProcess(kafka_access(s), s.registry_url, depth=2)
    n = 500
    sent = []
    for seq in range(400):
        t = 1_700_000_000 + seq + np.arange(n) / n
        b = make_batch(
            source,
            "BP1",
            seq,
            t,
            np.arange(n) % 3,
            (np.arange(n) + seq).astype(np.uint64),
            np.zeros(n, np.uint8),
            (np.arange(n) % 7 == 0).astype(np.uint8),
            names=["A", "B", "C"],
        )
        sent.append(b)
    for i in range(0, len(sent), 4):
        pp.send_batches(sent[i : i + 4])
    pp.close()
    assert pp.encoded_here > 0, "the caller never encoded: the test did not test that path"
    assert pp.metrics.records["getpage_batch"] == 400 and pp.metrics.getpages == sum(b.getpages for b in sent)
    got, _ = _read_back(source, Path("none"))
    assert [g["sequence"] for g in got] == list(range(400))
    assert all(g["page"] == b.record()["page"] and g["function"] == b.function for g, b in zip(got, sent, strict=True))


def test_statistics_files_into_kafka(tmp_path: Path) -> None:
    """One sample of each statistics format through the real registry and Kafka: exactly the
    records parsed (with their values), and the broken blocks in the dead-letter topic."""
    import shutil

    corpus = Path(__file__).parent.parent / "ingest" / "corpus"
    tag = uuid.uuid4().hex[:6]
    om = tmp_path / f"om-{tag}.txt"
    shutil.copy(corpus / "omegamon" / "highlights_and_broken.txt", om)
    disp = tmp_path / f"disp-{tag}.txt"
    disp.write_text((corpus / "display" / "broken.txt").read_text().replace("+ ", f"-K{tag} "))
    r = poolsight("ingest", "stats", str(om), "--format", "omegamon", timeout=120)
    assert r.returncode == 0, r.stderr
    r = poolsight("ingest", "stats", str(disp), "--format", "display", "--at", "2026-11-22T10:00:00", timeout=120)
    assert r.returncode == 0, r.stderr
    diag = tmp_path / f"db2diag-{tag}.log"
    shutil.copy(corpus / "db2diag" / "db2diag.log", diag)
    r = poolsight("ingest", "stats", str(diag), "--format", "db2diag-backup", timeout=120)
    assert r.returncode == 0, r.stderr
    backups: list[dict[str, Any]] = []
    mgb = tmp_path / f"mgb-{tag}.csv"
    shutil.copy(corpus / "luw" / "mon_get_bufferpool.csv", mgb)
    r = poolsight("ingest", "stats", str(mgb), "--format", "luw-bufferpool", "--source", f"L{tag}", timeout=120)
    assert r.returncode == 0, r.stderr
    gbps: list[dict[str, Any]] = []

    s = load_settings()
    dec = AvroDecoder(s.registry_url)
    stats: list[dict[str, Any]] = []
    attrs: list[dict[str, Any]] = []
    dead: list[dict[str, Any]] = []

    def handle(msg: Message) -> bool:
        name, rec = dec.decode(msg.value())
        if name.endswith("PoolStats"):
            stats.append(rec)
        elif name.endswith("PoolAttributes") and rec["source"] == f"K{tag}":
            attrs.append(rec)
        elif name.endswith("BackupStats") and rec["position"].startswith(str(diag)):
            backups.append(rec)
        elif name.endswith("GbpStats") and rec["source"] == f"L{tag}/0":
            gbps.append(rec)
        elif name.endswith("DeadLetter") and rec["source"] in (str(om), str(disp)):
            dead.append(rec)
        return True

    from poolsight.names import ATTRIBUTES_TOPIC, STATS_TOPIC

    consume(
        kafka_access(s),
        [STATS_TOPIC.name, ATTRIBUTES_TOPIC.name, DEADLETTER_TOPIC.name],
        f"t-{uuid.uuid4()}",
        handle,
        idle_seconds=4,
    )
    mine = [x for x in stats if x["source"] == f"K{tag}"]
    assert [(x["pool"], x["getpages_random"], x["interval_seconds"]) for x in mine] == [("BP6", 100, 600.0)]
    assert any(
        x["source"] == "DB2A"
        and x["pool"] == "BP4"
        and x["getpages_random"] == 45_600
        and x["interval_start"] == datetime(2026, 11, 21, 14, tzinfo=UTC)  # timestamp-micros, decoded
        and x["origin"] == "omegamon"
        for x in stats
    )
    assert sorted(a["pool"] for a in attrs) == ["BP5", "BP6"]
    assert sorted((d["source"] == str(om), d["position"]) for d in dead) == [
        (False, "line 4"),
        (False, "line 8"),
        (False, "line 9"),
        (True, "line 11"),
        (True, "line 22"),
    ]
    assert all(d["collector"] == "ingest-stats" for d in dead)
    assert [(b["operation"], len(b["threads"])) for b in backups] == [("BACKUP", 11), ("RESTORE", 21)]
    # Derived values, computed from what came back through Kafka.
    from poolsight.simulator.metrics import backup_analysis, gbp_metrics, pool_metrics

    bp4 = next(x for x in stats if x["source"] == "DB2A" and x["pool"] == "BP4")
    assert pool_metrics(bp4)["application_hit_ratio"] == pytest.approx((45_600 - 912) / 45_600)
    assert round(100 * backup_analysis(backups[0])["sides"]["BM"]["msgq"], 2) == 89.63
    luw = sorted((x["pool"], x["lbp_logical_reads"]) for x in stats if x["source"] == f"L{tag}/0")
    assert luw == [("BP32K", 14), ("IBMDEFAULTBP", 180_000)]
    assert [(g["gbp"], g["gbp_logical_reads"]) for g in gbps] == [("IBMDEFAULTBP", 4_000)]
    assert gbp_metrics(gbps[0])["luw_gbp_hit_ratio"] == pytest.approx(3_400 / 4_000)


def test_a_trace_file_where_nothing_could_be_read_is_an_error(tmp_path: Path) -> None:
    state = tmp_path / "state"
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes(range(256)) * 20)
    missing = tmp_path / "missing.csv"
    good = tmp_path / "good.csv"
    good.write_text("time,pool,object,page\n1.0,BP1,DB.TS,1\n")
    for path in (empty, garbage):
        r = poolsight("ingest", "trace", str(path), "--state-dir", str(state), "--source", "NOREAD", timeout=120)
        assert r.returncode != 0, (path, r.stderr)
        assert str(path) in r.stderr, r.stderr
    # A missing file is refused before anything runs (README: exit codes), as in `ingest stats`.
    r = poolsight("ingest", "trace", str(missing), "--state-dir", str(state), timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    why = f"{missing}: no such file (give --follow to wait for it)"
    assert r.stderr == f"poolsight ingest trace: argument FILE: {why}\n"
    r = poolsight("ingest", "trace", str(good), "--state-dir", str(state), "--source", "NOREAD", timeout=120)
    assert r.returncode == 0, r.stderr
    # Read again, the file has nothing new: that is no error.
    r = poolsight("ingest", "trace", str(good), "--state-dir", str(state), "--source", "NOREAD", timeout=120)
    assert r.returncode == 0, r.stderr
