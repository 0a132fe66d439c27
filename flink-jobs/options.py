"""What the streaming jobs take: options as plain dataclasses, without PyFlink.

`poolsight jobs submit` builds them from its command line and hands them to the
job module as JSON (see submit.py); the jobs' stream functions are constructed
with them. Nothing here imports PyFlink, so they can be built, tested and
documented without a cluster.
"""

from __future__ import annotations

from argparse import ArgumentTypeError
from dataclasses import dataclass, field
from typing import Any

from poolsight.argtypes import POSITIVE_COUNT, RATE
from poolsight.infra.registry_access import RegistryAccess
from poolsight.simulator import CostModel, SimConfig
from poolsight.simulator.engine import AUTO_SAMPLES

# The job's simulation when none is given: exact below AUTO_SAMPLES pages of footprint, sampled above.
AUTO_SIM: dict[str, Any] = {"mode": "shards", "max_samples": AUTO_SAMPLES}


@dataclass(frozen=True)
class JobOptions:
    """What every job takes on the command line."""

    group: str  # Kafka consumer group; a new one starts at start_from
    # Results become queryable at each checkpoint: a pane waits a second for the next on average
    # (bench-pipeline's freshness p50: 4.8 s with 5 s, 3.6-3.7 s with 2 s; bench/README.md).
    checkpoint_seconds: float = 2.0
    out_of_orderness_seconds: float = 5.0  # watermark delay, seconds of event time
    idle_source_seconds: float = 0.0  # 0: no partition is ever idle (see `jobs submit --idle-source`)
    start_from: str = "earliest"  # where a new consumer group starts: earliest or latest
    parallelism: int = 1  # the simulation is keyed by (source, pool): more slots help with many pools
    restore_from: str | None = None  # a savepoint or retained checkpoint of the job this one replaces
    # Records wait at most this long for the Python operators (PyFlink's bundle, 1 s by default):
    # a pane's next batch reaches the tracker that much sooner; each bundle costs a round trip.
    bundle_ms: int = 100


@dataclass(frozen=True)
class SimulationOptions:
    """The simulation job: how each pool is simulated and when its panes close."""

    registry: RegistryAccess
    sim: dict[str, Any] = field(default_factory=lambda: dict(AUTO_SIM))  # SimConfig fields, all pools
    pool_sim: dict[str, dict[str, Any]] = field(default_factory=dict)  # per pool name: SimConfig fields
    cpu_us_per_sync_read: float = 30.0
    sync_io_ms: float | None = None  # average sync read I/O time, for elapsed-time savings
    idle_flush_seconds: float = 10.0  # a pool's open pane is emitted after this much wall-clock quiet
    snapshot_getpages: int = 2_000_000  # a tracker snapshot at least this often, in getpages fed
    check_panes: int | None = None  # whole panes measured after a pool is altered (default: the window)
    pool_policy: bool = True  # False: LRU stack only, without miniature caches of each pool's own policy
    kernel_decode: bool = True  # False: getpage batches decoded by fastavro (schemas/wire.py AvroDecoder.read)
    groups: dict[str, list[str]] = field(default_factory=dict)  # data-sharing group -> members (their sources)
    group_sample: float | None = None  # the group simulation's spatial sampling rate; None: auto (group_grid)
    discover_groups: bool = True  # also the groups the members' pool attributes name (group_name)
    # A pool not seen for this long (wall clock) has its keyed state dropped; 0: kept for ever.
    state_ttl_seconds: float = 7 * 86400.0

    def __post_init__(self) -> None:
        _registry_from_json(self)

    def config_for(self, pool: str) -> SimConfig:
        """The pool's simulator settings: the job's, overridden by the pool's own."""
        return SimConfig(**{**self.sim, **self.pool_sim.get(pool, {})})

    def costs(self) -> CostModel:
        return CostModel(self.cpu_us_per_sync_read * 1e-6, None if self.sync_io_ms is None else self.sync_io_ms / 1000)


@dataclass(frozen=True)
class StatisticsOptions:
    """The statistics job: statistics intervals, and the I/O events added up per pane."""

    registry: RegistryAccess
    cpu_us_per_sync_read: float = 30.0
    pane_seconds: float = 60.0  # I/O panes: the simulation's, so the tables join pane by pane
    lateness_seconds: float = 0.0  # an I/O pane is written once its pool's I/O events pass its end by this
    idle_flush_seconds: float = 10.0  # or after this much wall-clock quiet of its pool

    def __post_init__(self) -> None:
        _registry_from_json(self)


def _registry_from_json(options: SimulationOptions | StatisticsOptions) -> None:
    """The job's options arrive as JSON (submit.py): the registry's access as a dict again."""
    if isinstance(options.registry, dict):
        object.__setattr__(options, "registry", RegistryAccess(**options.registry))


def pool_mode(spec: str) -> tuple[str, dict[str, Any]]:
    """POOL=auto | POOL=exact | POOL=shards:RATE | POOL=fixed:SAMPLES to (pool, SimConfig fields);
    raises ValueError saying why it is none of them."""
    pool, sep, mode = spec.partition("=")
    kind, _, arg = mode.partition(":")
    if not sep or not pool:
        raise ValueError(f"{spec!r}: expected POOL=MODE")
    try:
        if kind == "auto":
            return pool, dict(AUTO_SIM)
        if kind == "exact":
            return pool, {"mode": "exact"}
        if kind == "shards":
            return pool, {"mode": "shards", "rate": RATE(arg or "0.01"), "max_samples": 0}
        if kind == "fixed":
            return pool, {"mode": "shards", "max_samples": POSITIVE_COUNT(arg or "32768")}
    except ArgumentTypeError as exc:
        raise ValueError(f"{spec!r}: {exc}") from None
    raise ValueError(f"{spec!r}: mode is auto, exact, shards:RATE or fixed:SAMPLES")


def pool_modes(specs: list[str]) -> dict[str, dict[str, Any]]:
    """--pool-mode specs (pool_mode) to SimConfig fields per pool."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        try:
            pool, sim = pool_mode(spec)
        except ValueError as exc:
            raise ValueError(f"--pool-mode {exc}") from None
        out[pool] = sim
    return out
