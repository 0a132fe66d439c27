"""The warnings a pool's statistics carry (IFCID 2 counters, as seed 000 reads them), as alert kinds.

Each kind reads counters of pool_stats (the named query `alert_pool_stats_counters` gives, per pool and
counter, the newest statistics interval that states it, so the two halves of a report, each with
half the counters, both count). A counter is its own subject (`pool_stats/<counter>`): a pool
short of buffers and of read engines has two alerts. Each message gives the count and the interval,
the cause in one sentence, and the advice that addresses it (docs/advice.md, "Warnings from the
statistics").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

SUBJECT = "pool_stats"


@dataclass(frozen=True)
class Counter:
    """A counter an alert kind judges: what it means and which advice addresses it."""

    name: str  # pool_stats column
    what: str  # the count, in words: "{n} <what>"
    cause: str  # why it happens, one clause
    advice: str  # the advice (docs/advice.md) that addresses it


@dataclass(frozen=True)
class Reading:
    """A counter's newest statement for one pool."""

    count: float
    seconds: float | None  # the interval's length
    other: float | None  # the count it is compared with (async writes, VDWQT reached), if any
    interval_end: datetime

    @property
    def per_second(self) -> float | None:
        return self.count / self.seconds if self.seconds else None


C = Counter
COUNTERS: dict[str, tuple[Counter, ...]] = {
    "prefetch_disabled": (
        C(
            "prefetch_disabled_no_buffer",
            "prefetches disabled for lack of buffers (SPTH: 90 % of the pool unavailable)",
            "the pool is too small for the pages in use, updated and prefetched at once",
            "VPSIZE (the pool's curve) or VPSEQT",
        ),
        C(
            "prefetch_disabled_no_read_engine",
            "prefetches disabled for lack of a read engine",
            "every prefetch read engine was busy: prefetch I/O is slow or too many prefetch streams ran at once",
            "the prefetch quantity and the I/O response time of the pool's data sets",
        ),
    ),
    "write_engine_not_available": (
        C(
            "write_engine_not_available",
            "writes found no write engine",
            "deferred writes came in bursts the write engines could not take (DWQT reached rather than VDWQT)",
            "VDWQT/DWQT (lower VDWQT so that pages trickle out per data set)",
        ),
    ),
    "dm_threshold_reached": (
        C(
            "dm_threshold_reached",
            "times the data manager threshold was reached (DMTH: 95 % of the pool unavailable)",
            "getpages then go row by row and CPU climbs",
            "VPSIZE (the pool's curve) and DWQT",
        ),
    ),
    "vpool_full": (
        C(
            "vpool_full",
            "buffer requests found the virtual pool full",
            "every buffer was in use or held updated pages, and the request failed",
            "VPSIZE (the pool's curve) and DWQT",
        ),
    ),
    "dwqt_over_vdwqt": (
        C(
            "dwqt_reached",
            "times the deferred write threshold (DWQT) was reached",
            "deferred writes start for the whole pool in bursts instead of per data set (seed 000: reverse "
            "this relationship)",
            "VDWQT/DWQT (lower VDWQT)",
        ),
    ),
    "sync_writes_high": (
        C(
            "sync_writes",
            "synchronous write I/Os",
            "applications waited for their own writes (the immediate write threshold, 97.5 % of the buffers "
            "unavailable; pages unwritten over two checkpoints; no write engine)",
            "VDWQT/DWQT (earlier deferred writes) and VPSIZE",
        ),
    ),
    "pageins": (
        C(
            "pageins_read",
            "page-ins required for read",
            "the LPAR's real storage is short and the pool pages (seed 000: paging impacts the entire LPAR)",
            "memory (no pool may grow while the system pages; PGFIX only with free real storage)",
        ),
        C(
            "pageins_write",
            "page-ins required for write",
            "the LPAR's real storage is short and the pool pages (seed 000: paging impacts the entire LPAR)",
            "memory (no pool may grow while the system pages; PGFIX only with free real storage)",
        ),
    ),
    "dataset_opens": (
        C(
            "dataset_opens",
            "data set opens",
            "data sets were closed and opened again (DSMAX reached, or CLOSE YES on busy objects), each open "
            "costing CPU and elapsed time (seed 000)",
            "DSMAX and the objects' CLOSE attribute",
        ),
    ),
}
KINDS = tuple(COUNTERS)
COUNTER_NAMES = tuple(c.name for cs in COUNTERS.values() for c in cs)
_BY_NAME = {c.name: (kind, c) for kind, cs in COUNTERS.items() for c in cs}


def kind_of(subject: str) -> str | None:
    """The alert kind a `pool_stats/<counter>` subject belongs to."""
    found = _BY_NAME.get(subject.removeprefix(f"{SUBJECT}/"))
    return found[0] if found else None


def subject(counter: str) -> str:
    return f"{SUBJECT}/{counter}"


def _interval(end: datetime) -> str:
    return f"in the statistics interval ending {end.astimezone(UTC):%Y-%m-%d %H:%M:%S}Z"


def verdict(kind: str, counter: str, r: Reading, p: dict[str, float]) -> tuple[float, float, str] | None:
    """(value, threshold, message without the pool) when the reading fires the kind, else None."""
    c = _BY_NAME[counter][1]
    n = f"{r.count:,.0f} {c.what}"
    tail = f": {c.cause}. Advice: {c.advice}"
    rate = r.per_second

    def over_count() -> tuple[float, float, str] | None:
        if r.count <= p["max_count"]:
            return None
        return r.count, p["max_count"], f"{n} {_interval(r.interval_end)}{tail}"

    def over_rate() -> tuple[float, float, str] | None:
        if rate is None or rate <= p["max_per_second"]:
            return None
        return rate, p["max_per_second"], f"{rate:,.3g}/s ({n}) {_interval(r.interval_end)}{tail}"

    def dwqt() -> tuple[float, float, str] | None:
        vdwqt = r.other or 0.0
        if r.count < p["min_count"] or r.count <= vdwqt:
            return None
        return r.count, vdwqt, f"{n}, VDWQT only {vdwqt:,.0f} {_interval(r.interval_end)}{tail}"

    def sync_share() -> tuple[float, float, str] | None:
        writes = r.count + (r.other or 0.0)
        if not writes or rate is None or rate < p["min_per_second"]:
            return None
        share, limit = r.count / writes, p["max_share_pct"] / 100
        if share <= limit:
            return None
        text = f"{share:.1%} of write I/Os synchronous ({n} of {writes:,.0f}, {rate:,.3g}/s)"
        return share, limit, f"{text} {_interval(r.interval_end)}{tail}"

    judges = {"dwqt_over_vdwqt": dwqt, "sync_writes_high": sync_share, "pageins": over_rate, "dataset_opens": over_rate}
    return judges.get(kind, over_count)()
