"""The offline inputs of advice, as `poolsight generate --output DIR` writes them: JSON lines of
attributes, catalog, pool statistics, I/O events and system memory (or system_memory.csv).
A bad line is named (file, line, field), skipped and counted; the rest is used."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from poolsight.advice.model import Memory

MEMORY_FIELDS = (
    "real_storage_mb",
    "real_storage_available_mb",
    "db2_real_storage_mb",
    "pageins_per_second",
    "aux_slots_used",
)


@dataclass
class Inputs:
    directory: Path
    attributes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # latest per source, pool
    kinds: dict[str, str] = field(default_factory=dict)  # object -> TABLESPACE / INDEXSPACE
    stats: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)  # summed counters
    origins: dict[str, str] = field(default_factory=dict)  # source -> statistics origin
    sync_io: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)  # (sum of s, count)
    memory: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # source -> records
    errors: list[str] = field(default_factory=list)
    rejected: int = 0

    def reject(self, where: str, why: str) -> None:
        self.rejected += 1
        if len(self.errors) < 100:
            self.errors.append(f"{where}: {why}")

    def memory_of(self, source: str) -> Memory | None:
        recs = self.memory.get(source) or self.memory.get("*")
        if not recs:
            return None

        def values(key: str) -> list[float]:
            return [float(r[key]) for r in recs if r.get(key) is not None]

        pageins, avail, real = (
            values("pageins_per_second"),
            values("real_storage_available_mb"),
            values("real_storage_mb"),
        )
        return Memory(
            len(recs), max(pageins) if pageins else None, min(avail) if avail else None, max(real) if real else None
        )


def _lines(path: Path, inputs: Inputs) -> Iterator[tuple[str, dict[str, Any]]]:
    if not path.exists():
        return
    with path.open() as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                inputs.reject(where, f"not JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(rec, dict):
                inputs.reject(where, "not a JSON object")
                continue
            yield where, rec


def _need(rec: dict[str, Any], key: str, kind: type, where: str) -> Any:
    v = rec.get(key)
    if v is None or (kind is float and not isinstance(v, int | float)) or (kind is str and not isinstance(v, str)):
        raise ValueError(f"field {key}: {v!r} is not a {kind.__name__}")
    return v


STAT_KEYS = (
    "interval_seconds",
    "getpages_random",
    "getpages_sequential",
    "sync_reads_random",
    "sync_reads_sequential",
    "seq_prefetch_pages",
    "list_prefetch_pages",
    "dyn_prefetch_pages",
    "pages_written",
    "sync_writes",
    "async_writes",
    "dwqt_reached",
    "vdwqt_reached",
    "write_engine_not_available",
    "seq_prefetch_reads",
    "list_prefetch_reads",
    "dyn_prefetch_reads",
)


def read(directory: Path) -> Inputs:
    inputs = Inputs(directory)
    for where, rec in _lines(directory / "attributes.jsonl", inputs):
        try:
            key = (_need(rec, "source", str, where), _need(rec, "pool", str, where))
            _need(rec, "vpsize", float, where)
        except ValueError as exc:
            inputs.reject(where, str(exc))
            continue
        old = inputs.attributes.get(key)
        if old is None or (rec.get("event_time") or 0) >= (old.get("event_time") or 0):
            inputs.attributes[key] = rec
    for where, rec in _lines(directory / "catalog.jsonl", inputs):
        if isinstance(rec.get("object"), str):
            inputs.kinds[rec["object"]] = str(rec.get("type") or "TABLESPACE")
        else:
            inputs.reject(where, f"field object: {rec.get('object')!r} is not a name")
    for where, rec in _lines(directory / "pool_stats.jsonl", inputs):
        try:
            key = (_need(rec, "source", str, where), _need(rec, "pool", str, where))
            _need(rec, "interval_seconds", float, where)
        except ValueError as exc:
            inputs.reject(where, str(exc))
            continue
        acc = inputs.stats.setdefault(key, dict.fromkeys(STAT_KEYS, 0.0))
        for k in STAT_KEYS:
            acc[k] += float(rec.get(k) or 0)
        inputs.origins.setdefault(key[0], str(rec.get("origin") or ""))
    for where, rec in _lines(directory / "io.jsonl", inputs):
        if rec.get("kind") != "read" or rec.get("io_type") != 0:
            continue
        try:
            key = (_need(rec, "source", str, where), _need(rec, "pool", str, where))
            us = float(_need(rec, "elapsed_us", float, where))
        except ValueError as exc:
            inputs.reject(where, str(exc))
            continue
        total, n = inputs.sync_io.get(key, (0.0, 0))
        inputs.sync_io[key] = (total + us / 1e6, n + 1)
    for where, rec in _lines(directory / "system_memory.jsonl", inputs):
        _memory_record(inputs, where, rec)
    csv_path = directory / "system_memory.csv"
    if csv_path.exists():
        with csv_path.open(newline="") as fh:
            for n, row in enumerate(csv.DictReader(fh), 2):
                _memory_record(inputs, f"{csv_path}:{n}", dict(row))
    return inputs


def _time(v: Any) -> float:
    if isinstance(v, int | float):
        return float(v) / 1e6 if v > 1e12 else float(v)  # µs (the Avro form) or seconds
    s = str(v).strip()
    try:
        return float(s) / 1e6 if float(s) > 1e12 else float(s)
    except ValueError:
        return datetime.fromisoformat(s).timestamp()


def _memory_record(inputs: Inputs, where: str, rec: dict[str, Any]) -> None:
    """One system_memory record (the Avro schema's fields; times as µs, seconds or ISO 8601)."""
    try:
        source = rec.get("source") or "*"
        if not isinstance(source, str):
            raise ValueError(f"field source: {source!r} is not a name")
        out: dict[str, Any] = {"source": source}
        for k in ("interval_start", "interval_end"):
            if rec.get(k) in (None, ""):
                raise ValueError(f"field {k}: missing")
            try:
                out[k] = _time(rec[k])
            except ValueError:
                raise ValueError(f"field {k}: {rec[k]!r} is not a time") from None
        for k in MEMORY_FIELDS:
            v = rec.get(k)
            if v in (None, ""):
                out[k] = None
                continue
            try:
                out[k] = float(v)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise ValueError(f"field {k}: {v!r} is not a number") from None
            if out[k] < 0:
                raise ValueError(f"field {k}: {v!r} is negative")
    except ValueError as exc:
        inputs.reject(where, str(exc))
        return
    inputs.memory.setdefault(source, []).append(out)
