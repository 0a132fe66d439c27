"""Statistics files once and followed: nothing repeated on a restart, nothing skipped as files grow."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from poolsight.ingest.stats_collector import StatsCollector
from poolsight.ingest.stats_common import ParseOptions, Rejected
from poolsight.ingest.stats_formats import FORMATS

CORPUS = Path(__file__).parent / "corpus"


def _collector(
    fmt: str, state: Path, sent: list[tuple[str, dict[str, Any]]], rejected: list[Rejected]
) -> StatsCollector:
    return StatsCollector(
        lambda text, name: FORMATS[fmt].parse(text, name, ParseOptions()),
        lambda s, r: sent.append((s, r)),
        rejected.append,
        lambda: None,
        state,
    )


def test_restart_neither_repeats_nor_skips(tmp_path: Path) -> None:
    report = tmp_path / "stats.txt"
    text = (CORPUS / "omegamon" / "fixed_width.txt").read_text()
    report.write_text(text)
    sent: list[tuple[str, dict[str, Any]]] = []
    rejected: list[Rejected] = []
    _collector("omegamon", tmp_path / "state", sent, rejected).run([report])
    assert sorted(r["pool"] for _, r in sent) == ["BP0", "BP2"]
    _collector("omegamon", tmp_path / "state", sent, rejected).run([report])  # a restart: nothing new
    assert len(sent) == 2
    # The next hour is appended: only its blocks are sent, by a third process.
    with report.open("a") as fh:
        fh.write(
            text.replace("INTERVAL FROM: 11/20/26 09:00:00.00", "INTERVAL FROM: 11/20/26 10:00:00.00").replace(
                "TO: 11/20/26 10:00:00.00", "TO: 11/20/26 11:00:00.00"
            )
        )
    _collector("omegamon", tmp_path / "state", sent, rejected).run([report])
    assert [(r["pool"], r["interval_seconds"]) for _, r in sent[2:]] == [("BP0", 3600), ("BP2", 3600)]
    assert sent[2][1]["interval_start"] == sent[0][1]["interval_end"]
    assert rejected == []


def test_follow_reads_each_block_once_when_it_has_settled(tmp_path: Path) -> None:
    log = tmp_path / "db2diag.log"
    records = (CORPUS / "db2diag" / "db2diag.log").read_text()
    half = records.index("2016-01-21-09.00.00")  # before the restore's records
    log.write_text(records[:half])
    sent: list[tuple[str, dict[str, Any]]] = []
    rejected: list[Rejected] = []
    col = _collector("db2diag-backup", tmp_path / "state", sent, rejected)

    def grow() -> None:
        time.sleep(1.5)
        with log.open("a") as fh:
            fh.write(records[half:])

    t = threading.Thread(target=grow)
    t.start()
    col.run([log], follow=True, poll_seconds=0.1, settle_seconds=0.5, idle_stop_seconds=2.5)
    t.join()
    assert [r["operation"] for _, r in sent] == ["BACKUP", "RESTORE"]
    assert rejected == []
