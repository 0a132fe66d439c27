"""Object placement, proposed from the objects' classes and working sets, advised only when a
replay of the objects' getpages in the proposed pools lowers the total sync I/O time.

Proposals are memory-neutral: the new pool's buffers come out of the pool the objects leave,
so a placement is never a disguised budget increase."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from poolsight.advice.commands import OBJECT_MOVE_NOTE, alter_bufferpool, create_pool, move_object
from poolsight.advice.model import Advice, Costs, PoolState, confidence, effect
from poolsight.advice.replay import PoolRun, ReplayRates, Trace, at_size
from poolsight.simulator.setting import Setting


@dataclass(frozen=True)
class Rules:
    scan_share_min: float = 0.05  # SAMOS getpages at least this share of a mixed pool ...
    scan_share_max: float = 0.95  # ... and RAMOS work beside them
    scan_splits: tuple[float, ...] = (1 / 16, 1 / 8, 1 / 4)  # the scan pool's share of the buffers
    scan_vpseqt: float = 100.0  # a pool of scans only: the whole pool may hold sequential pages
    monopoly_pages: float = 0.5  # a random object whose pages could fill half the pool ...
    monopoly_share: tuple[float, float] = (0.2, 0.9)  # ... with this share of the getpages
    monopoly_splits: tuple[float, ...] = (1 / 4, 1 / 2, 3 / 4)
    min_saving_per_s: float = 0.5  # an advised placement saves at least this many sync reads/s ...
    min_saving_share: float = 0.02  # ... and this share of the pools' sync I/O time


@dataclass
class Proposal:
    kind: str  # separate-scans or own-pool
    pool: PoolState
    moves: list[str]
    new_pool: str
    splits: tuple[float, ...]  # the new pool's share of the pool's buffers, each tried
    new_vpseqt: float
    reason: str
    tried: list[dict[str, Any]] = field(default_factory=list)


def propose(p: PoolState, new_pool: str | None, rules: Rules) -> list[Proposal]:
    """Placements worth simulating for one pool (new_pool: a free pool name of its page size)."""
    if new_pool is None or not p.objects:
        return []
    total = sum(o.getpages_per_s for o in p.objects)
    if total <= 0:
        return []
    out: list[Proposal] = []
    samos = [o for o in p.objects if o.klass == "SAMOS"]
    share = sum(o.getpages_per_s for o in samos) / total
    if samos and rules.scan_share_min <= share <= rules.scan_share_max:
        out.append(
            Proposal(
                "separate-scans",
                p,
                sorted(o.name for o in samos),
                new_pool,
                rules.scan_splits,
                rules.scan_vpseqt,
                f"{share:.0%} of {p.pool}'s getpages are sequential objects (SAMOS) sharing the pool with random "
                "work (RAMOS): scans push random pages out",
            )
        )
    lo, hi = rules.monopoly_share
    for o in p.objects:
        s = o.getpages_per_s / total
        if o.klass == "RAMOS" and o.distinct_pages >= rules.monopoly_pages * p.vpsize and lo <= s <= hi:
            out.append(
                Proposal(
                    "own-pool",
                    p,
                    [o.name],
                    new_pool,
                    rules.monopoly_splits,
                    p.vpseqt,
                    f"{o.name} touches {o.distinct_pages:,} pages ({o.distinct_pages / p.vpsize:.0%} of the pool) "
                    f"with {s:.0%} of the getpages: it monopolises {p.pool}",
                )
            )
    return out


def at_size_of(prop: Proposal, size: int) -> Proposal:
    """The same proposal for the pool at another size (the memory budget's: advice/combine.py)."""
    pool = replace(prop.pool, vpsize=size)
    return Proposal(prop.kind, pool, prop.moves, prop.new_pool, prop.splits, prop.new_vpseqt, prop.reason)


@dataclass
class Verifier:
    """Placements verified on one trace, each remembered so that it can be verified again with
    its pool at another size (`again`: advice/combine.py's Reverify)."""

    trace: Trace
    rules: Rules
    costs: Costs
    kinds: dict[str, str] | None = None  # object -> TABLESPACE or INDEXSPACE; None: not known here
    source: str | None = None  # what the advice's evidence says the getpages came from
    made: dict[int, tuple[str, Proposal]] = field(default_factory=dict)

    def verify(self, trace_pool: str, prop: Proposal) -> tuple[Advice | None, dict[str, Any]]:
        kinds = self.kinds if self.kinds is not None else {o: "UNKNOWN" for o in prop.moves}
        adv, record = verify(self.trace, trace_pool, prop, self.rules, self.costs, kinds)
        if adv is not None:
            self.made[id(adv)] = (trace_pool, prop)
            if self.source:
                adv.evidence["from"] = self.source
        return adv, record

    def again(self, a: Advice, size: int) -> Advice | None:
        if id(a) not in self.made:
            return None
        trace_pool, prop = self.made[id(a)]
        return self.verify(trace_pool, at_size_of(prop, size))[0]


def verify(
    trace: Trace, trace_pool: str, prop: Proposal, rules: Rules, costs: Costs, kinds: dict[str, str]
) -> tuple[Advice | None, dict[str, Any]]:
    """Replay the pool's getpages as it runs and as proposed (each split); the best split as advice
    when it lowers the sync I/O time enough, else None. Also a record of what was tried."""
    p = prop.pool
    own = Setting.of({"vpsize": p.vpsize, "pgsteal": p.pgsteal, "vpseqt": p.vpseqt})
    before = at_size(trace, {trace_pool: PoolRun(p.vpsize, own.policy, own.vpseqt)})[trace_pool]
    new_key = f"{trace_pool.rpartition('/')[0]}/{prop.new_pool}" if "/" in trace_pool else prop.new_pool
    new_setting = Setting.of({"vpsize": 1, "pgsteal": "LRU", "vpseqt": prop.new_vpseqt})
    best: tuple[float, int, int, dict[str, ReplayRates]] | None = None
    for f in prop.splits:
        new_size = max(1, round(p.vpsize * f))
        rest = p.vpsize - new_size
        runs = {
            trace_pool: PoolRun(rest, own.policy, own.vpseqt),
            new_key: PoolRun(new_size, new_setting.policy, new_setting.vpseqt),
        }
        after = at_size(trace, runs, {o: new_key for o in prop.moves}, {trace_pool})
        total = after[trace_pool].sync_reads_per_s + after[new_key].sync_reads_per_s
        prop.tried.append({"new_pool_size": new_size, "pool_size": rest, "sync_reads_per_s": total})
        if best is None or total < best[0]:
            best = (total, rest, new_size, after)
    record = {
        "kind": prop.kind,
        "source": p.source,
        "pool": p.pool,
        "objects": prop.moves,
        "sync_reads_per_s_before": before.sync_reads_per_s,
        "tried": prop.tried,
    }
    assert best is not None
    total, rest, new_size, after = best
    saved = before.sync_reads_per_s - total
    if saved < max(rules.min_saving_per_s, rules.min_saving_share * before.sync_reads_per_s):
        record["why_not"] = (
            f"the best layout tried saves {saved:,.2f} sync reads/s (needs "
            f"{max(rules.min_saving_per_s, rules.min_saving_share * before.sync_reads_per_s):,.2f})"
        )
        return None, record
    io = p.sync_io_seconds or costs.default_sync_io_seconds
    try:
        commands = [
            alter_bufferpool(p.platform, p.pool, VPSIZE=rest),
            create_pool(p.platform, prop.new_pool, new_size, p.page_size)
            + ("" if p.platform == "luw" or prop.new_vpseqt == 80 else f" VPSEQT({round(prop.new_vpseqt)})"),
            *(move_object(p.platform, o, kinds.get(o, "TABLESPACE"), prop.new_pool) for o in prop.moves),
        ]
    except ValueError as exc:  # a name no command can carry (e.g. DBID/OBID): say so, advise nothing
        record["why_not"] = f"no command for it: {exc}"
        return None, record
    unknown = sorted(o for o in prop.moves if kinds.get(o, "TABLESPACE") == "UNKNOWN")
    advice = Advice(
        kind="placement",
        source=p.source,
        pool=p.pool,
        objects=prop.moves,
        summary=f"move {', '.join(prop.moves)} from {p.pool} to {prop.new_pool} ({new_size:,} of {p.pool}'s "
        f"{p.vpsize:,} buffers): {before.sync_reads_per_s:,.1f} -> {total:,.1f} sync reads/s",
        evidence={
            "reason": prop.reason,
            "note": OBJECT_MOVE_NOTE
            + (
                f"; the type of {', '.join(unknown)} is not known here: for an index space use "
                "ALTER INDEX creator.name BUFFERPOOL instead"
                if unknown
                else ""
            ),
            "objects": [
                {
                    "object": o.name,
                    "class": o.klass,
                    "sequential_share": o.sequential_share,
                    "getpages_per_s": o.getpages_per_s,
                    "working_set_avg": o.working_set_avg,
                    "working_set_max": o.working_set_max,
                    "distinct_pages": o.distinct_pages,
                    "sync_reads_per_s": o.sync_reads_per_s,
                }
                for o in p.objects
            ],
            "tried": prop.tried,
            "from": "the trace's getpages replayed in the proposed pools at their policies",
        },
        predicted={
            "pools": {
                p.pool: {
                    "size_before": p.vpsize,
                    "size_after": rest,
                    "sync_reads_per_s_before": before.sync_reads_per_s,
                    "sync_reads_per_s_after": after[trace_pool].sync_reads_per_s,
                },
                prop.new_pool: {
                    "size_before": 0,
                    "size_after": new_size,
                    "vpseqt": prop.new_vpseqt,
                    "sync_reads_per_s_before": 0.0,
                    "sync_reads_per_s_after": after[new_key].sync_reads_per_s,
                },
            },
            "sync_reads_per_s_before": before.sync_reads_per_s,
            "sync_reads_per_s_after": total,
            **effect(saved, io, costs),
        },
        confidence=confidence(p),
        command=commands,
    )
    return advice, record
