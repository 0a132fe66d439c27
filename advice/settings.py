"""Thresholds and settings, each from the numbers behind it (seed 000, seed 002, DOMAIN.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poolsight.advice.commands import alter_bufferpool
from poolsight.advice.model import (
    Advice,
    Costs,
    Measured,
    Memory,
    PoolState,
    StatsPool,
    confidence,
    effect,
    stats_confidence,
)


@dataclass(frozen=True)
class Thresholds:
    pages_per_write_low: float = 10.0  # seed 000: below 10, lower VDWQT
    min_write_ios_per_s: float = 1.0  # too few writes say nothing about the write thresholds
    vpseqt_min_gain: float = 0.05  # a VPSEQT change must save 5 % of the pool's sync reads ...
    min_saving_per_s: float = 0.5  # ... and at least this many sync reads/s
    pgfix_io_per_s: float = 500.0  # read + write I/Os per second that make page fixing pay (seed 000: "500+ IO/Sec")
    pgfix_cpu_share: float = 0.08  # seed 000: about 8 % of the I/O's CPU saved
    cpu_seconds_per_io: float = 30e-6
    large_frame_min_buffers: int = 6656  # seed 002: 1 MB frames need at least this many buffers
    fifo_tolerance: float = 0.0  # FIFO only where it costs no more sync reads than the pool's policy
    shrink_max_loss: float = 0.02  # flat curve: shrinking costs at most 2 % more sync reads ...
    shrink_max_loss_per_s: float = 0.5  # ... or this many per second, whichever is larger
    pageins_limit: float = 1.0  # page-ins per second above which the system pages
    free_reserve_share: float = 0.05  # real storage kept free when memory is given to pools
    # VDWQT(0,n2): seed 000, "set vdwt=(0,40) or (0,80) or (0,128) depending upon number of objects in the pool"
    vdwqt_ladder: tuple[int, ...] = (128, 80, 40)
    many_objects: int = 100  # seed 000: "When a pool has a lot of objects, hundreds or thousands, lower is better"
    dwqt_default: float = 30.0  # Db2's DWQT % when the attributes do not say (IBM, buffer pool thresholds)


@dataclass(frozen=True)
class VdwqtChoice:
    """VDWQT(0, buffers) for one pool, and the rule and inputs that chose it (the advice's evidence)."""

    buffers: int  # the second VDWQT value: updated buffers per data set before it is written
    objects: int | None  # objects written in the pool (None: unknown)
    objects_from: str  # where that count comes from, or why it is unknown
    dwqt: float  # DWQT %: the pool's, or Db2's default when the attributes do not say
    dwqt_assumed: bool
    dwqt_buffers: int  # DWQT as buffers: DWQT % x VPSIZE
    rule: str  # the rule applied, in words, with its numbers
    basis: str  # the same, short (the summary's)

    @property
    def data_sets_under_dwqt(self) -> int:
        """How many data sets may each hold `buffers` updated pages before together they reach DWQT."""
        return self.dwqt_buffers // self.buffers

    def as_dict(self) -> dict[str, object]:
        return {
            "advised_vdwqt_buffers": self.buffers,
            "objects": self.objects,
            "objects_from": self.objects_from,
            "dwqt_percent": self.dwqt,
            "dwqt_assumed": self.dwqt_assumed,
            "dwqt_buffers": self.dwqt_buffers,
            "data_sets_under_dwqt": self.data_sets_under_dwqt,
            "rule": self.rule,
        }


def objects_written(p: Measured) -> tuple[int | None, str]:
    """How many objects (data sets) are written in the pool, and where the count comes from: the
    trace's objects (object_pane), those it shows updated when it shows updates; statistics alone
    do not name objects."""
    if isinstance(p, StatsPool):
        return None, "statistics only: no trace names the pool's objects"
    if not p.objects:
        return None, "the trace names no object of the pool"
    updated = [o for o in p.objects if o.updates_per_s]
    if updated:
        return len(updated), "objects the trace shows updated in the window"
    return len(p.objects), "objects the trace shows in the pool (it shows no updates in the window: all counted)"


def vdwqt_buffers(
    objects: int | None, objects_from: str, vpsize: int, dwqt: float | None, t: Thresholds
) -> VdwqtChoice:
    """The n2 of VDWQT(0,n2) (docs/advice.md, "VDWQT"): seed 000's 40, 80 or 128 "depending upon number
    of objects in the pool". Hundreds of objects or more: the lowest ("lower is better"). Fewer: the
    largest with objects x n2 within DWQT's buffers, so that the pages the objects hold updated reach
    their own (vertical) threshold before together they reach the pool's (DWQT); none fits: the
    lowest. Objects unknown: the seed's default, the largest."""
    ladder = sorted(set(t.vdwqt_ladder), reverse=True)
    pct = float(dwqt) if dwqt is not None else t.dwqt_default
    limit = int(pct * vpsize / 100)
    dwqt_text = f"DWQT's {limit:,} buffers ({pct:g} % of {vpsize:,}{', Db2 default' if dwqt is None else ''})"
    if objects is None:
        n = ladder[0]
        basis = "objects unknown: seed 000's default"
        rule = (
            f"objects unknown ({objects_from}): seed 000's VDWQT(0,{n}); it keeps VDWQT, not DWQT, the trigger "
            f"while at most {limit // n:,} data sets hold updated pages at once ({dwqt_text})"
        )
    elif objects >= t.many_objects:
        n = ladder[-1]
        basis = f"{objects:,} objects: the lowest"
        rule = (
            f'{objects:,} objects, {t.many_objects:,} or more (seed 000: "hundreds or thousands, lower is better"): '
            f"the lowest, {n}"
        )
    else:
        fits = [v for v in ladder if objects * v <= limit]
        n = fits[0] if fits else ladder[-1]
        basis = f"{objects:,} objects x {n} {'within' if fits else 'above'} DWQT's {limit:,} buffers"
        if fits:
            rule = (
                f"{objects:,} objects x {n} buffers = {objects * n:,}, within {dwqt_text}: the largest of "
                f"{', '.join(map(str, ladder))} that keeps VDWQT, not DWQT, the trigger"
            )
        else:
            rule = (
                f"{objects:,} objects x {n} buffers = {objects * n:,}, more than {dwqt_text}: the lowest, {n}; "
                "DWQT is still reached when all of them hold updated pages at once"
            )
    return VdwqtChoice(n, objects, objects_from, pct, dwqt is None, limit, rule, basis)


def write_thresholds(p: Measured, t: Thresholds) -> list[Advice]:
    """The write pattern says whether: pages per write below 10, DWQT reached more often than VDWQT,
    or write engine not available (seed 000); the objects written and DWQT's buffers say how low:
    VDWQT(0,n2), n2 from `vdwqt_buffers`."""
    if p.platform != "zos" or p.pages_written_per_s is None or not p.write_ios_per_s:
        return []
    if p.write_ios_per_s < t.min_write_ios_per_s:
        return []
    ppw = p.pages_written_per_s / p.write_ios_per_s
    dwqt_hits, vdwqt_hits = p.dwqt_reached or 0, p.vdwqt_reached or 0
    reasons = []
    if ppw < t.pages_per_write_low:
        reasons.append(f"{ppw:.1f} pages per write (below {t.pages_per_write_low:g})")
    if dwqt_hits > vdwqt_hits:
        reasons.append(f"DWQT reached {dwqt_hits:,} times, VDWQT {vdwqt_hits:,} (DWQT should be the rare one)")
    if p.write_engine_not_available:
        reasons.append(
            f"write engine not available {p.write_engine_not_available:,} times (writes come in bursts the engines "
            "cannot take)"
        )
    if not reasons or (p.vdwqt == 0 and ppw >= t.pages_per_write_low):
        return []
    objects, objects_from = objects_written(p)
    choice = vdwqt_buffers(objects, objects_from, p.vpsize, p.dwqt, t)
    if p.vdwqt and p.vdwqt * p.vpsize / 100 <= choice.buffers:
        return []  # the pool's VDWQT % is already that few buffers per data set: not raised
    return [
        Advice(
            kind="vdwqt",
            source=p.source,
            pool=p.pool,
            objects=[],
            summary=f"{p.pool}: lower VDWQT to 0 % with {choice.buffers} buffers ({choice.basis}): "
            + "; ".join(reasons),
            evidence={
                "pages_per_write": ppw,
                "pages_written_per_s": p.pages_written_per_s,
                "write_ios_per_s": p.write_ios_per_s,
                "dwqt_reached": dwqt_hits,
                "vdwqt_reached": vdwqt_hits,
                "write_engine_not_available": p.write_engine_not_available,
                "dwqt": p.dwqt,
                "vdwqt": p.vdwqt,
                "vpsize": p.vpsize,
                **choice.as_dict(),
                "from": "pool_stats" if objects is None else "pool_stats; the objects from the trace",
            },
            predicted={
                "avoided_sync_reads_per_s": 0.0,
                "note": "writes trickle out per data set instead of in DWQT bursts; read I/O is unchanged "
                "(write effects are not simulated)",
            },
            confidence=_confidence(p),
            command=[alter_bufferpool(p.platform, p.pool, VDWQT=(0, choice.buffers))],
        )
    ]


def _confidence(p: Measured, note: str | None = None, caveat: str | None = None) -> dict[str, Any]:
    """A pool with a curve: the simulation's confidence (`note`: the rule's own note instead); a pool
    known from statistics alone: says so, with the rule's `caveat`."""
    if isinstance(p, StatsPool):
        return stats_confidence(p, caveat)
    return {"note": note} if note else confidence(p)


def vpseqt(p: PoolState, t: Thresholds, costs: Costs) -> list[Advice]:
    """The VPSEQT the simulation of the current size at other thresholds finds best."""
    if p.platform != "zos" or not p.vpseqt_alternatives:
        return []
    now = p.simulated_sync_reads_per_s
    best_v, best = min(p.vpseqt_alternatives.items(), key=lambda kv: (kv[1], abs(kv[0] - p.vpseqt)))
    saved = now - best
    if saved < max(t.min_saving_per_s, t.vpseqt_min_gain * now):
        return []
    io = p.sync_io_seconds or costs.default_sync_io_seconds
    return [
        Advice(
            kind="vpseqt",
            source=p.source,
            pool=p.pool,
            objects=[],
            summary=f"{p.pool}: VPSEQT {p.vpseqt:g} -> {best_v:g} saves {saved:,.1f} sync reads/s",
            evidence={
                "vpseqt": p.vpseqt,
                "sync_reads_per_s_by_vpseqt": {f"{k:g}": v for k, v in sorted(p.vpseqt_alternatives.items())}
                | {f"{p.vpseqt:g}": now},
                "sequential_share": _seq_share(p),
                "from": "sim_curve (the current size at other VPSEQT values)",
            },
            predicted={
                "sync_reads_per_s_before": now,
                "sync_reads_per_s_after": best,
                **effect(saved, io, costs),
            },
            confidence=confidence(p),
            command=[alter_bufferpool(p.platform, p.pool, VPSEQT=best_v)],
        )
    ]


def page_fix(p: Measured, t: Thresholds, memory: Memory | None, paging: str | None) -> list[Advice]:
    """PGFIX(YES) for pools with high I/O rates when memory allows (seed 000, seed 002), and 1 MB
    frames for page-fixed pools of at least 6,656 buffers."""
    if p.platform != "zos":
        return []
    out: list[Advice] = []
    pages = (p.pages_read_per_s or 0.0) + (p.pages_written_per_s or 0.0)
    intensity = pages / p.vpsize if p.vpsize else 0.0  # seed 002: (pages read + written) / buffers
    io = (p.read_ios_per_s or 0.0) + (p.write_ios_per_s or 0.0)
    pool_mb = p.vpsize * p.page_size / 2**20
    fixed = p.pgfix
    if not p.pgfix and io >= t.pgfix_io_per_s and paging is None:
        free = memory.min_available_mb if memory else None
        if free is None or free >= pool_mb:
            cpu = io * t.cpu_seconds_per_io * t.pgfix_cpu_share * 86_400.0
            out.append(
                Advice(
                    kind="pgfix",
                    source=p.source,
                    pool=p.pool,
                    objects=[],
                    summary=f"{p.pool}: page-fix ({io:,.0f} read and write I/Os per s, "
                    f"I/O intensity {intensity:.3f} pages/buffer/s)",
                    evidence={
                        "read_ios_per_s": p.read_ios_per_s,
                        "write_ios_per_s": p.write_ios_per_s,
                        "pages_read_per_s": p.pages_read_per_s,
                        "pages_written_per_s": p.pages_written_per_s,
                        "io_intensity_per_s": intensity,
                        "pool_mb": pool_mb,
                        "min_available_mb": free,
                        "from": "pool_stats, system_memory",
                    },
                    predicted={
                        "avoided_sync_reads_per_s": 0.0,
                        "cpu_seconds_per_24h": cpu,
                        "note": f"about {t.pgfix_cpu_share:.0%} of the I/O's CPU (seed 000); the pool's "
                        f"{pool_mb:,.0f} MB stay fixed in real storage",
                    },
                    confidence=_confidence(
                        p,
                        "from measured statistics; the CPU share varies by workload (seed 000)",
                        "the CPU share varies by workload (seed 000)",
                    ),
                    command=[alter_bufferpool(p.platform, p.pool, PGFIX="YES")],
                )
            )
            fixed = True
    if fixed and p.vpsize >= t.large_frame_min_buffers and (p.frame_size or 4096) < 1 << 20:
        out.append(
            Advice(
                kind="framesize",
                source=p.source,
                pool=p.pool,
                objects=[],
                summary=f"{p.pool}: 1 MB frames (page-fixed, {p.vpsize:,} buffers >= {t.large_frame_min_buffers:,})",
                evidence={
                    "vpsize": p.vpsize,
                    "pgfix": True,
                    "frame_size": p.frame_size,
                    "from": "pool_attributes",
                },
                predicted={
                    "avoided_sync_reads_per_s": 0.0,
                    "note": "fewer TLB misses (seed 002); needs LFAREA in IEASYSnn (changed only by IPL)",
                },
                confidence=_confidence(p, "a rule of the platform, not a simulation", "a rule of the platform"),
                command=[alter_bufferpool(p.platform, p.pool, PGFIX="YES", FRAMESIZE="1M")],
            )
        )
    return out


def fifo(p: PoolState, t: Thresholds, costs: Costs) -> list[Advice]:
    """PGSTEAL(FIFO) only where the FIFO simulation at the current size shows no more sync reads."""
    if p.platform != "zos" or p.pgsteal.upper() != "LRU" or p.fifo_sync_reads_per_s is None:
        return []
    now = p.fifo_baseline_sync_reads_per_s
    if now is None:
        now = p.simulated_sync_reads_per_s
    if p.fifo_sync_reads_per_s > now * (1 + t.fifo_tolerance) + 1e-9:
        return []
    io = p.sync_io_seconds or costs.default_sync_io_seconds
    return [
        Advice(
            kind="pgsteal",
            source=p.source,
            pool=p.pool,
            objects=[o.name for o in p.objects],
            summary=f"{p.pool}: PGSTEAL(FIFO): its simulation shows {p.fifo_sync_reads_per_s:,.2f} sync reads/s "
            f"against {now:,.2f} with {p.policy.upper()}, without LRU chain upkeep",
            evidence={
                "sync_reads_per_s_lru": now,
                "sync_reads_per_s_fifo": p.fifo_sync_reads_per_s,
                "distinct_pages": sum(o.distinct_pages for o in p.objects),
                "vpsize": p.vpsize,
                "from": "sim_curve (the pool's policy and FIFO at the current size)",
            },
            predicted={
                "sync_reads_per_s_before": now,
                "sync_reads_per_s_after": p.fifo_sync_reads_per_s,
                **effect(now - p.fifo_sync_reads_per_s, io, costs),
            },
            confidence=confidence(p),
            command=[alter_bufferpool(p.platform, p.pool, PGSTEAL="FIFO")],
        )
    ]


def shrink(p: PoolState, t: Thresholds, costs: Costs) -> list[Advice]:
    """A pool whose curve is flat at its size gives memory back: the smallest simulated size that
    costs at most a little more sync I/O."""
    now = p.simulated_sync_reads_per_s
    allowed = max(t.shrink_max_loss * now, t.shrink_max_loss_per_s)
    smaller = [s for s in p.curve.sizes if s < p.vpsize and p.curve.at(s) - now <= allowed]
    if not smaller:
        return []
    size = min(smaller)
    freed_mb = (p.vpsize - size) * p.page_size / 2**20
    io = p.sync_io_seconds or costs.default_sync_io_seconds
    loss = p.curve.at(size) - now
    return [
        Advice(
            kind="shrink",
            source=p.source,
            pool=p.pool,
            objects=[],
            summary=f"{p.pool}: the curve is flat at {p.vpsize:,} buffers: {size:,} cost {loss:,.2f} sync reads/s "
            f"more and free {freed_mb:,.0f} MB",
            evidence={
                "curve": {str(s): p.curve.at(s) for s in p.curve.sizes},
                "vpsize": p.vpsize,
                "from": "sim_curve",
            },
            predicted={
                "sync_reads_per_s_before": now,
                "sync_reads_per_s_after": p.curve.at(size),
                "freed_mb": freed_mb,
                **effect(-loss, io, costs),
            },
            confidence=confidence(p),
            command=[alter_bufferpool(p.platform, p.pool, VPSIZE=size)],
        )
    ]


def paging_guard(memory: Memory | None, t: Thresholds) -> str | None:
    """Why no pool may grow now, or None: the system pages (seed 000: "Pool increases might hurt")."""
    if memory is None or memory.intervals == 0:
        return None
    if memory.max_pageins_per_second is not None and memory.max_pageins_per_second > t.pageins_limit:
        return (
            f"the system pages: up to {memory.max_pageins_per_second:,.1f} page-ins/s over "
            f"{memory.intervals} intervals (limit {t.pageins_limit:g}/s); growing pools would make it worse"
        )
    if memory.min_available_mb is not None and memory.real_storage_mb:
        if memory.min_available_mb < t.free_reserve_share * memory.real_storage_mb:
            return (
                f"only {memory.min_available_mb:,.0f} MB of {memory.real_storage_mb:,.0f} MB real storage "
                f"available at the lowest (reserve {t.free_reserve_share:.0%})"
            )
    return None


def _seq_share(p: PoolState) -> float | None:
    total = sum(o.getpages_per_s for o in p.objects)
    if total <= 0:
        return None
    return sum(o.getpages_per_s * o.sequential_share for o in p.objects) / total
