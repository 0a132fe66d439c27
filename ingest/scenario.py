"""Workload scenarios for `poolsight generate`: plain YAML a user can copy and edit.

A scenario names the subsystem's members, its pools (sizes and thresholds, and
the devices behind them: `sync_read_us`, `write_us`, `page_transfer_us`,
`io_sigma` give the I/O events' elapsed times),
its objects (table and index spaces with sizes and index levels) and access
patterns, each taking a share of the getpages:

- random: a probe of a table through its index (root, a non-leaf page, a
  leaf page, then the data page), pages drawn with a skew (0 uniform, up to
  0.99 strongly skewed: hot keys), an update (set write intent) on a share of
  the data pages;
- sequential: a scan of `run_pages` consecutive pages (dynamic prefetch);
- list: a RID-list access of `list_pages` sorted random pages (list prefetch).

A pool with `spsize` (and optionally `spseqt`, default the pool's VPSEQT) also has DB2's
simulated pool (-ALTER BUFFERPOOL SPSIZE, DB2 11+): the generator runs a second pool model of
VPSIZE + SPSIZE buffers over the same getpages and reports what DB2 reports in DSNB432I and
IFCID 2, the sync reads the bigger pool would have avoided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


class ScenarioError(Exception):
    pass


@dataclass(frozen=True)
class PoolSpec:
    name: str
    vpsize: int
    page_size: int = 4096
    vpseqt: float = 80.0
    dwqt: float = 30.0
    vdwqt: float = 5.0
    prefetch_quantity: int = 32
    pgsteal: str = "LRU"
    pgfix: bool = False
    # The devices behind the pool, for the I/O events' elapsed times (IFCID 6/7, 8/9):
    # median of a one-page read and of a write, plus a transfer time per further page;
    # each I/O varies around its median (lognormal, this sigma).
    sync_read_us: float = 250.0
    write_us: float = 400.0
    page_transfer_us: float = 10.0
    io_sigma: float = 0.5
    # DB2's simulated pool (SPSIZE buffers beyond VPSIZE; 0: none) and its sequential threshold
    # (SPSEQT %, None: the pool's VPSEQT, so the simulated pool differs from the real one in size only).
    spsize: int = 0
    spseqt: float | None = None


@dataclass(frozen=True)
class ObjectSpec:
    name: str
    pool: str
    pages: int
    type: str = "TABLESPACE"
    index_levels: int = 0
    partitions: int = 0
    gbp_dependent: bool = False


@dataclass(frozen=True)
class PatternSpec:
    name: str
    kind: str
    share: float
    objects: dict[str, float]
    skew: float = 0.0
    index: str | None = None
    update_ratio: float = 0.0
    run_pages: int = 64
    list_pages: int = 8


@dataclass(frozen=True)
class MemorySpec:
    """The host's memory, reported each interval as a system_memory record (the paging guard's input)."""

    real_storage_mb: float
    real_storage_available_mb: float
    pageins_per_second: float = 0.0
    db2_real_storage_mb: float | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    members: list[str]
    pools: dict[str, PoolSpec]
    objects: dict[str, ObjectSpec]
    patterns: list[PatternSpec]
    interval_seconds: float = 60.0
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    memory: MemorySpec | None = None


def _build(cls: type, raw: dict[str, Any], where: str) -> Any:
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def load(name_or_path: str | Path) -> Scenario:
    """A scenario by name (the files in ingest/scenarios/) or by path."""
    path = Path(name_or_path)
    if not path.exists():
        path = SCENARIO_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml")))
        raise ScenarioError(f"no scenario {name_or_path!r} (known: {known})")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected a mapping at the top")
    pools = {p["name"]: _build(PoolSpec, p, f"{path}: pool {p.get('name')}") for p in raw.get("pools", [])}
    objects = {o["name"]: _build(ObjectSpec, o, f"{path}: object {o.get('name')}") for o in raw.get("objects", [])}
    patterns = [_build(PatternSpec, p, f"{path}: pattern {p.get('name')}") for p in raw.get("patterns", [])]
    sc = Scenario(
        name=str(raw.get("name", path.stem)),
        members=list(raw.get("members", ["DB2A"])),
        pools=pools,
        objects=objects,
        patterns=patterns,
        interval_seconds=float(raw.get("interval_seconds", 60)),
        description=str(raw.get("description", "")),
        memory=_build(MemorySpec, raw["memory"], f"{path}: memory") if raw.get("memory") else None,
    )
    validate(sc, str(path))
    return sc


def validate(sc: Scenario, where: str) -> None:
    if not sc.pools or not sc.objects or not sc.patterns:
        raise ScenarioError(f"{where}: needs pools, objects and patterns")
    for pool in sc.pools.values():
        if min(pool.sync_read_us, pool.write_us, pool.page_transfer_us, pool.io_sigma) < 0:
            raise ScenarioError(f"{where}: pool {pool.name}: I/O times and io_sigma must be >= 0")
        if pool.spsize < 0 or (pool.spseqt is not None and not 0 <= pool.spseqt <= 100):
            raise ScenarioError(f"{where}: pool {pool.name}: spsize must be >= 0 and spseqt in [0, 100]")
        if pool.spsize and pool.pgsteal.upper() != "LRU":
            # DB2 sets SPSIZE to 0 for such a pool (DSNB614I): a simulated pool needs PGSTEAL LRU.
            raise ScenarioError(f"{where}: pool {pool.name}: a simulated pool (spsize) needs pgsteal LRU")
    for o in sc.objects.values():
        if o.pool not in sc.pools:
            raise ScenarioError(f"{where}: object {o.name} is in unknown pool {o.pool}")
        if o.pages < 1:
            raise ScenarioError(f"{where}: object {o.name} has no pages")
    total = sum(p.share for p in sc.patterns)
    if not 0.999 <= total <= 1.001:
        raise ScenarioError(f"{where}: pattern shares add up to {total}, not 1")
    for p in sc.patterns:
        if p.kind not in ("random", "sequential", "list"):
            raise ScenarioError(f"{where}: pattern {p.name}: kind {p.kind!r} (random, sequential or list)")
        if not 0 <= p.skew < 1:
            raise ScenarioError(f"{where}: pattern {p.name}: skew must be in [0, 1)")
        for used in [*p.objects, *([p.index] if p.index else [])]:
            if used not in sc.objects:
                raise ScenarioError(f"{where}: pattern {p.name} uses unknown object {used}")
    if sc.interval_seconds <= 0:
        raise ScenarioError(f"{where}: interval_seconds must be > 0")
