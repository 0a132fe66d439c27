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

With two or more members the scenario is a data-sharing group (`group`, default DSG1): each
pool name has a group buffer pool (BP1 -> GBP1, BP8K0 -> GBP8K0) shared by the members' pools
and used by the objects marked `gbp_dependent`. `gbps` sets them (`GbpSpec`: `data_entries`
or `size_mb`, `ratio`, `gbpoolt`, `classt`, `checkpoint_seconds`, `commit_every`,
`commit_seconds`, `prefetch`); a pool without one gets data entries for 40 % of its members'
buffers together (seed 004's rule of thumb for two members). `member_affinity` (0 to 1) sends
that share of each object's units of work to its `home` member (default: objects dealt to the
members in turn), the rest to any member; 0, the default, spreads them evenly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# The GBP's name, a directory entry's size and the sizing rule are the simulator's (one definition).
from poolsight.simulator.group import DIRECTORY_ENTRY_BYTES, gbp_name
from poolsight.simulator.group_grid import data_entries_for

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
    home: str | None = None  # data sharing: the member its units of work favour (member_affinity)


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


# A pool without a `gbps` entry: data entries for this share of its members' buffers together.
DEFAULT_GBP_SHARE = 0.4
PREFETCH_MODES = ("getpages", "page-list")


@dataclass(frozen=True)
class GbpSpec:
    """A group buffer pool of the data-sharing group. Its size is `data_entries` or `size_mb` (the
    CF structure's size: data entries = size / (RATIO x 400 + page size), directory entries =
    RATIO x data entries). `gbpoolt` and `classt` are the castout thresholds (% of the data
    entries; classt None: none), `checkpoint_seconds` the GBP checkpoint interval (0: none),
    `commit_every` / `commit_seconds` a commit delay (changed pages written to the GBP every N
    updates of a member or T seconds after its first uncommitted one; 0: at once, the reference
    model), `prefetch` how sequential and RID-list getpages of GBP-dependent objects read:
    "getpages" (each is a getpage of the reference model, read synchronously) or "page-list"
    (prefetch registering the page list, pages the GBP holds read from it)."""

    name: str
    data_entries: int | None = None
    size_mb: float | None = None
    ratio: float = 5.0
    gbpoolt: float = 30.0
    classt: float | None = None
    checkpoint_seconds: float = 0.0
    commit_every: int = 0
    commit_seconds: float = 0.0
    prefetch: str = "getpages"


def structure_mb(data_entries: int, directory_entries: int, page_size: int) -> float:
    return (data_entries * page_size + directory_entries * DIRECTORY_ENTRY_BYTES) / 2**20


@dataclass(frozen=True)
class MemorySpec:
    """The host's memory, reported each interval as a system_memory record (the paging guard's input).
    `paged_out_pct`: the share of each pool's buffers (not page-fixed) whose frames the OS has paged
    out on a host short of real storage; DB2 counts a page-in for read when it reads a page into such
    a buffer and one for write when it writes a page from one (PAGE-INS REQUIRED FOR READ/WRITE)."""

    real_storage_mb: float
    real_storage_available_mb: float
    pageins_per_second: float = 0.0
    db2_real_storage_mb: float | None = None
    paged_out_pct: float = 0.0


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
    group: str | None = None  # the data-sharing group (two or more members)
    gbps: dict[str, GbpSpec] = field(default_factory=dict)  # by GBP name, as given
    member_affinity: float = 0.0

    def gbp(self, pool: str) -> GbpSpec:
        """The group buffer pool of `pool`: as given, else data entries for DEFAULT_GBP_SHARE of
        the members' buffers of that pool."""
        name = gbp_name(pool)
        if name in self.gbps:
            return self.gbps[name]
        buffers = self.pools[pool].vpsize * len(self.members)
        return GbpSpec(name, data_entries=max(1, round(DEFAULT_GBP_SHARE * buffers)))

    def gbp_data_entries(self, pool: str) -> int:
        g = self.gbp(pool)
        if g.data_entries is not None:
            return g.data_entries
        assert g.size_mb is not None
        return data_entries_for(g.size_mb, g.ratio, self.pools[pool].page_size)

    def home(self, obj: str) -> str:
        """The member an object's units of work favour (member_affinity)."""
        o = self.objects[obj]
        return o.home if o.home is not None else self.members[list(self.objects).index(obj) % len(self.members)]


def _build(cls: type, raw: dict[str, Any], where: str) -> Any:
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def names() -> list[str]:
    """The bundled scenarios' names (the files in ingest/scenarios/)."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))


def load(name_or_path: str | Path) -> Scenario:
    """A scenario by name (the files in ingest/scenarios/) or by path."""
    path = Path(name_or_path)
    if not path.exists():
        path = SCENARIO_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(names())
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
    gbps = {g.get("name"): _build(GbpSpec, g, f"{path}: gbp {g.get('name')}") for g in raw.get("gbps", [])}
    members = list(raw.get("members", ["DB2A"]))
    group = raw.get("group", "DSG1" if len(members) > 1 else None)
    sc = Scenario(
        name=str(raw.get("name", path.stem)),
        members=members,
        pools=pools,
        objects=objects,
        patterns=patterns,
        interval_seconds=float(raw.get("interval_seconds", 60)),
        description=str(raw.get("description", "")),
        memory=_build(MemorySpec, raw["memory"], f"{path}: memory") if raw.get("memory") else None,
        group=None if group is None else str(group),
        gbps=gbps,
        member_affinity=float(raw.get("member_affinity", 0.0)),
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
    if sc.memory is not None and not 0 <= sc.memory.paged_out_pct <= 100:
        raise ScenarioError(f"{where}: memory: paged_out_pct must be in [0, 100]")
    validate_group(sc, where)


def validate_group(sc: Scenario, where: str) -> None:
    if len(set(sc.members)) != len(sc.members) or not sc.members:
        raise ScenarioError(f"{where}: members must be distinct names")
    if (sc.gbps or sc.member_affinity) and len(sc.members) < 2:
        raise ScenarioError(f"{where}: gbps and member_affinity need a data-sharing group (two or more members)")
    if len(sc.members) > 64:
        raise ScenarioError(f"{where}: at most 64 members")
    if not 0 <= sc.member_affinity <= 1:
        raise ScenarioError(f"{where}: member_affinity must be in [0, 1]")
    for o in sc.objects.values():
        if o.home is not None and o.home not in sc.members:
            raise ScenarioError(f"{where}: object {o.name}: home {o.home!r} is not a member")
    known = {gbp_name(p): p for p in sc.pools}
    for name, g in sc.gbps.items():
        if name not in known:
            raise ScenarioError(f"{where}: gbp {name}: no pool {name[1:]} (GBPs: {', '.join(known)})")
        if (g.data_entries is None) == (g.size_mb is None):
            raise ScenarioError(f"{where}: gbp {name}: give data_entries or size_mb (one of them)")
        if (g.data_entries is not None and g.data_entries < 1) or (g.size_mb is not None and g.size_mb <= 0):
            raise ScenarioError(f"{where}: gbp {name}: data_entries and size_mb must be > 0")
        if g.ratio < 1:
            raise ScenarioError(f"{where}: gbp {name}: ratio must be >= 1")
        if not 0 <= g.gbpoolt <= 100 or (g.classt is not None and not 0 <= g.classt <= 100):
            raise ScenarioError(f"{where}: gbp {name}: gbpoolt and classt are percentages, 0 to 100")
        if min(g.checkpoint_seconds, g.commit_every, g.commit_seconds) < 0:
            raise ScenarioError(f"{where}: gbp {name}: checkpoint_seconds, commit_every, commit_seconds must be >= 0")
        if g.prefetch not in PREFETCH_MODES:
            raise ScenarioError(f"{where}: gbp {name}: prefetch {g.prefetch!r} ({' or '.join(PREFETCH_MODES)})")
