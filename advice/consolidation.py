"""Placement into existing pools: merging two pools whose objects behave alike (`merge`), and moving
an object into another existing pool whose objects behave like it (`move`). Each proposal passes
the likeness gate (advice/alike.py) and is then replayed on the trace in the proposed layout, as
placement's are (advice/placement.py, advice/replay.py); it is shown only when the replay says so:

- a merge: the freed pool's objects replayed into the kept pool at the sum of the two sizes, and at
  smaller sizes (7/8 down to 1/2 of the sum) in the same pass; advised at the smallest size whose
  sync reads stay within the tolerance of the two pools' today (2 % or 0.5/s, the shrink rule's:
  seed 001 measured the cost of consolidating 33 pools into 9 at constant memory as "little to
  none", and ITR "less than 3 %" at the largest size). Memory freed: the sum less the merged size
  (0 at the sum);
- a move: the object replayed into the other pool, both pools at today's sizes (no memory moves
  with it); advised when it saves at least 0.5 sync reads/s and 2 % of the two pools' (placement's
  thresholds).

Catalog pools (BP0, BP8K0, BP16K0, BP32K) are never merged nor moved into: the catalog and
directory always use them, and IBM advises keeping user data out of them (Db2 13 installation,
DSNTIP1: "It is best to separate the buffer pools for Db2 catalog and directory from the buffer
pools for user data"). A pool takes part in at most one merge or move per evaluation; merges first
(they free memory), then moves. Merges and moves are exclusive with the budget and placement
advice for the pools they touch (advice/combine.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from poolsight.advice.alike import AlikeRules, Likeness, alike, monopolist, of_object, of_pool
from poolsight.advice.commands import OBJECT_MOVE_NOTE, alter_bufferpool, move_object, zos_min_vpsize
from poolsight.advice.model import Advice, Costs, ObjectState, PoolState, confidence, effect
from poolsight.advice.replay import PoolRun, Trace, at_size, at_sizes
from poolsight.simulator.setting import Setting

CATALOG_POOLS = frozenset({"BP0", "BP8K0", "BP16K0", "BP32K"})
MB = 2**20


@dataclass(frozen=True)
class ConsolidationRules:
    alike: AlikeRules = field(default_factory=AlikeRules)
    merge_tolerance_share: float = 0.02  # a merge may cost at most 2 % more sync reads ...
    merge_tolerance_per_s: float = 0.5  # ... or 0.5/s (the shrink rule's tolerance)
    merge_sizes: tuple[float, ...] = (1.0, 7 / 8, 3 / 4, 5 / 8, 1 / 2)  # shares of the summed size tried
    min_saving_per_s: float = 0.5  # a move saves at least this many sync reads/s ...
    min_saving_share: float = 0.02  # ... and this share of the two pools' (placement's thresholds)
    max_merges_tried: int = 6  # replays per source, the most alike pairs first
    max_moves_tried: int = 6


EXCLUSIVE = (
    "replayed at today's sizes of the pools it touches: advised only where no budget or placement advice sizes "
    "those pools (one VPSIZE per pool: a merge or move is exclusive with them, advice/combine.py)"
)


@dataclass
class Merge:
    keep: PoolState
    free: PoolState
    keep_key: str  # the pools' names in the trace
    free_key: str
    likeness: Likeness


@dataclass
class Move:
    obj: ObjectState
    home: PoolState
    to: PoolState
    home_key: str
    to_key: str
    likeness: Likeness  # the object against the pool it goes to
    at_home: Likeness  # the object against what stays in its pool


def _run(p: PoolState, size: int | None = None) -> PoolRun:
    s = Setting.of({"vpsize": p.vpsize if size is None else size, "pgsteal": p.pgsteal, "vpseqt": p.vpseqt})
    return PoolRun(s.size, s.policy, s.vpseqt)


def _eligible(p: PoolState) -> bool:
    return bool(p.objects) and p.pool.upper() not in CATALOG_POOLS and p.getpages_per_s > 0


def propose(states: Mapping[str, PoolState], rules: ConsolidationRules) -> tuple[list[Merge], list[Move]]:
    """Merges and moves worth replaying (states keyed by the pools' trace names), most alike first."""
    keys = sorted(k for k, p in states.items() if _eligible(p))
    merges: list[Merge] = []
    moves: list[Move] = []
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            pa, pb = states[a], states[b]
            if pa.source != pb.source or pa.page_size != pb.page_size or pa.platform != pb.platform:
                continue
            like = alike(of_pool(pa), of_pool(pb), rules.alike)
            if not like.alike:
                continue
            # The larger pool stays (its settings run the merged pool); ties: the busier, then the name.
            (keep, kk), (free, fk) = sorted(
                ((pa, a), (pb, b)), key=lambda x: (-x[0].vpsize, -x[0].getpages_per_s, x[0].pool)
            )
            merges.append(Merge(keep, free, kk, fk, like))
    for home_key in keys:
        home = states[home_key]
        if len(home.objects) < 2:  # a pool's only object moving is a merge
            continue
        for o in home.objects:
            mine = of_object(o, home.seconds)
            at_home = alike(mine, of_pool(home, without=o.name), rules.alike)
            if at_home.alike:
                continue
            best: Move | None = None
            for to_key in keys:
                to = states[to_key]
                if to_key == home_key or (to.source, to.page_size, to.platform) != (
                    home.source,
                    home.page_size,
                    home.platform,
                ):
                    continue
                like = alike(mine, of_pool(to), rules.alike)
                if not like.alike or monopolist([*to.objects, o], to.vpsize, rules.alike, only=o.name):
                    continue
                if best is None or like.score > best.likeness.score:
                    best = Move(o, home, to, home_key, to_key, like, at_home)
            if best is not None:
                moves.append(best)
    merges.sort(key=lambda m: -m.likeness.score)
    moves.sort(key=lambda m: (-m.obj.getpages_per_s, -m.likeness.score))
    return merges, moves


def _tolerance(before: float, rules: ConsolidationRules) -> float:
    return max(rules.merge_tolerance_share * before, rules.merge_tolerance_per_s)


def _freed_pool(p: PoolState) -> tuple[int, str | None, str]:
    """What is left of the freed pool (buffers), the command that frees it (None: left for the DBA)
    and a note. z/OS: VPSIZE(0) deletes a 4K pool other than BP0 (Db2 12 Command Reference,
    -ALTER BUFFERPOOL: 0 for 4K pools other than BP0; 8K, 16K and 32K pools have minimums of 1,000,
    500 and 250 buffers: docs/advice.md); LUW: DROP BUFFERPOOL once no table space uses it."""
    if p.platform == "luw":
        return 0, None, f"drop {p.pool} (DROP BUFFERPOOL {p.pool}) once no table space uses it: left for the DBA"
    low = zos_min_vpsize(p.pool, p.page_size)
    if p.page_size == 4096 and low <= 1:
        return (
            0,
            alter_bufferpool(p.platform, p.pool, VPSIZE=0),
            f"VPSIZE(0) deletes {p.pool}: issue it only after every moved object has been stopped and started in its "
            "new pool (a later use of an object still assigned to a deleted pool fails)",
        )
    return (
        low,
        alter_bufferpool(p.platform, p.pool, VPSIZE=low),
        f"{p.pool} is shrunk to the z/OS minimum for its page size ({low:,} buffers); deleting it is left for the DBA",
    )


def verify_merge(
    trace: Trace, m: Merge, rules: ConsolidationRules, costs: Costs, kinds: Mapping[str, str]
) -> tuple[Advice | None, dict[str, Any]]:
    """Replay the two pools as they run and merged (at the sum of their sizes and smaller ones in the
    same pass): the merge as advice at the smallest size within the tolerance, else None."""
    keep, free = m.keep, m.free
    runs = {m.keep_key: _run(keep), m.free_key: _run(free)}
    before = at_size(trace, runs)
    b_keep, b_free = before[m.keep_key].sync_reads_per_s, before[m.free_key].sync_reads_per_s
    total_before = b_keep + b_free
    summed = keep.vpsize + free.vpsize
    low = zos_min_vpsize(keep.pool, keep.page_size) if keep.platform == "zos" else 1
    sizes = sorted({max(low, round(summed * f)) for f in rules.merge_sizes}, reverse=True)
    moved = {f"{m.free_key} {o}": m.keep_key for o in trace.objects_of(m.free_key)} if m.free_key in trace.pools else {}
    after = at_sizes(trace, {m.keep_key: _run(keep, summed)}, moved, {m.keep_key, m.free_key}, {m.keep_key: sizes})[
        m.keep_key
    ]
    tol = _tolerance(total_before, rules)
    tried = [{"size": s, "sync_reads_per_s": after[s].sync_reads_per_s} for s in sizes]
    record: dict[str, Any] = {
        "kind": "merge",
        "source": keep.source,
        "pool": keep.pool,
        "freed_pool": free.pool,
        "likeness": m.likeness.evidence(rules.alike),
        "sync_reads_per_s_before": total_before,
        "tolerance_per_s": tol,
        "tried": tried,
    }
    ok = [s for s in sizes if after[s].sync_reads_per_s <= total_before + tol]
    if summed not in ok:
        record["why_not"] = (
            f"merged at {summed:,} buffers the replay gives {after[summed].sync_reads_per_s:,.2f} sync reads/s against "
            f"{total_before:,.2f} today (tolerance {tol:,.2f})"
        )
        return None, record
    size = min(ok)
    left, free_cmd, free_note = _freed_pool(free)
    objects = sorted(o.name for o in free.objects)
    try:
        grow = [alter_bufferpool(keep.platform, keep.pool, VPSIZE=size)] if size != keep.vpsize else []
        moves = [move_object(keep.platform, o, kinds.get(o, "TABLESPACE"), keep.pool) for o in objects]
        commands = (grow + moves if size >= keep.vpsize else moves + grow) + ([free_cmd] if free_cmd else [])
    except ValueError as exc:  # a name no command can carry (e.g. DBID/OBID)
        record["why_not"] = f"no command for it: {exc}"
        return None, record
    total_after = after[size].sync_reads_per_s
    freed_buffers = summed - size - left
    freed_mb = freed_buffers * keep.page_size / MB
    io = keep.sync_io_seconds or free.sync_io_seconds or costs.default_sync_io_seconds
    unknown = sorted(o for o in objects if kinds.get(o, "TABLESPACE") == "UNKNOWN")
    advice = Advice(
        kind="merge",
        source=keep.source,
        pool=keep.pool,
        objects=objects,
        summary=f"merge {free.pool} into {keep.pool} (VPSIZE {keep.vpsize:,} + {free.vpsize:,} -> {size:,}): "
        f"{total_before:,.1f} -> {total_after:,.1f} sync reads/s, {freed_mb:,.1f} MB freed",
        evidence={
            "reason": f"{free.pool} and {keep.pool} behave alike (score {m.likeness.score:.2f}): "
            + ", ".join(
                f"{p.name} {p.klass} {p.sequential_share:.0%} sequential, {p.rereference:,.1f} getpages per page"
                for p in (m.likeness.a, m.likeness.b)
            ),
            "likeness": m.likeness.evidence(rules.alike),
            "rule": f"merged at the smallest size tried ({', '.join(f'{f:g}' for f in rules.merge_sizes)} of the sum) "
            f"whose replayed sync reads stay within {rules.merge_tolerance_share:.0%} or "
            f"{rules.merge_tolerance_per_s:g}/s of the two pools' today (ours, the shrink rule's tolerance; seed 001: "
            "consolidating 33 pools into 9 at constant memory cost 'little to none')",
            "kept_settings": {"vpseqt": keep.vpseqt, "pgsteal": keep.pgsteal},
            "tried": tried,
            "freed_pool": free_note,
            "exclusive": EXCLUSIVE,
            "note": OBJECT_MOVE_NOTE
            + (
                f"; the type of {', '.join(unknown)} is not known here: for an index space use ALTER INDEX "
                "creator.name BUFFERPOOL instead"
                if unknown
                else ""
            ),
            "from": "the trace's getpages replayed in the proposed pools at their policies",
        },
        predicted={
            "pools": {
                keep.pool: {
                    "size_before": keep.vpsize,
                    "size_after": size,
                    "sync_reads_per_s_before": b_keep,
                    "sync_reads_per_s_after": total_after,
                },
                free.pool: {
                    "size_before": free.vpsize,
                    "size_after": left,
                    "sync_reads_per_s_before": b_free,
                    "sync_reads_per_s_after": 0.0,
                },
            },
            "sync_reads_per_s_before": total_before,
            "sync_reads_per_s_after": total_after,
            "sync_reads_per_s_at_summed_size": after[summed].sync_reads_per_s,
            "freed_buffers": freed_buffers,
            "freed_mb": freed_mb,
            **effect(total_before - total_after, io, costs),
        },
        confidence=confidence(keep),
        command=commands,
    )
    return advice, record


def verify_move(
    trace: Trace, mv: Move, rules: ConsolidationRules, costs: Costs, kinds: Mapping[str, str]
) -> tuple[Advice | None, dict[str, Any]]:
    """Replay the two pools as they run and with the object in the other pool (sizes unchanged): the
    move as advice when it saves enough sync reads, else None."""
    home, to, o = mv.home, mv.to, mv.obj
    runs = {mv.home_key: _run(home), mv.to_key: _run(to)}
    before = at_size(trace, runs)
    after = at_size(trace, runs, {f"{mv.home_key} {o.name}": mv.to_key}, {mv.home_key, mv.to_key})
    total_before = sum(r.sync_reads_per_s for r in before.values())
    total_after = sum(r.sync_reads_per_s for r in after.values())
    saved = total_before - total_after
    need = max(rules.min_saving_per_s, rules.min_saving_share * total_before)
    record: dict[str, Any] = {
        "kind": "move",
        "source": home.source,
        "pool": home.pool,
        "to_pool": to.pool,
        "objects": [o.name],
        "likeness": mv.likeness.evidence(rules.alike),
        "likeness_at_home": mv.at_home.evidence(rules.alike),
        "sync_reads_per_s_before": total_before,
        "sync_reads_per_s_after": total_after,
    }
    if saved < need:
        record["why_not"] = f"the replay saves {saved:,.2f} sync reads/s (needs {need:,.2f})"
        return None, record
    kind = kinds.get(o.name, "TABLESPACE")
    try:
        commands = [move_object(home.platform, o.name, kind, to.pool)]
    except ValueError as exc:
        record["why_not"] = f"no command for it: {exc}"
        return None, record
    io = home.sync_io_seconds or to.sync_io_seconds or costs.default_sync_io_seconds
    mine, there = mv.likeness.a, mv.likeness.b
    advice = Advice(
        kind="move",
        source=home.source,
        pool=home.pool,
        objects=[o.name],
        summary=f"move {o.name} from {home.pool} to {to.pool} (sizes unchanged): {total_before:,.1f} -> "
        f"{total_after:,.1f} sync reads/s",
        evidence={
            "reason": f"{o.name} ({mine.klass}, {mine.sequential_share:.0%} sequential, {mine.rereference:,.1f} "
            f"getpages per page) behaves like {to.pool} ({there.klass}, {there.sequential_share:.0%}, "
            f"{there.rereference:,.1f}) and unlike the rest of {home.pool}: " + "; ".join(mv.at_home.why_not),
            "likeness": mv.likeness.evidence(rules.alike),
            "likeness_at_home": mv.at_home.evidence(rules.alike),
            "rule": f"advised when the replay saves at least {rules.min_saving_per_s:g} sync reads/s and "
            f"{rules.min_saving_share:.0%} of the two pools' (placement's thresholds); sizes unchanged: no memory "
            "moves with the object",
            "exclusive": EXCLUSIVE,
            "note": OBJECT_MOVE_NOTE
            + (
                " ; its type is not known here: for an index space use ALTER INDEX creator.name BUFFERPOOL instead"
                if kind == "UNKNOWN"
                else ""
            ),
            "from": "the trace's getpages replayed in the proposed pools at their policies",
        },
        predicted={
            "pools": {
                p.pool: {
                    "size_before": p.vpsize,
                    "size_after": p.vpsize,
                    "sync_reads_per_s_before": before[k].sync_reads_per_s,
                    "sync_reads_per_s_after": after[k].sync_reads_per_s,
                }
                for p, k in ((home, mv.home_key), (to, mv.to_key))
            },
            "sync_reads_per_s_before": total_before,
            "sync_reads_per_s_after": total_after,
            "freed_buffers": 0,
            "freed_mb": 0.0,
            **effect(saved, io, costs),
        },
        confidence=confidence(home),
        command=commands,
    )
    return advice, record


@dataclass
class Consolidator:
    """Merges and moves for the pools of one trace, verified and chosen (a pool in at most one)."""

    trace: Trace
    costs: Costs
    rules: ConsolidationRules = field(default_factory=ConsolidationRules)
    kinds: Mapping[str, str] | None = None  # object -> TABLESPACE or INDEXSPACE; None: not known here
    source: str | None = None  # what the advice's evidence says the getpages came from

    def advise(self, states: Mapping[str, PoolState]) -> tuple[list[Advice], list[dict[str, Any]]]:
        """The advice (merges, then moves) and a record of every proposal replayed."""
        present = {k: p for k, p in states.items() if k in self.trace.pools}
        merges, moves = propose(present, self.rules)
        considered: list[dict[str, Any]] = []
        taken: set[str] = set()
        out: list[Advice] = []
        verified: list[tuple[Advice, Merge]] = []
        tried: dict[str, int] = {}
        for m in merges:
            if tried.get(m.keep.source, 0) >= self.rules.max_merges_tried:
                continue
            tried[m.keep.source] = tried.get(m.keep.source, 0) + 1
            kinds = self.kinds if self.kinds is not None else {o.name: "UNKNOWN" for o in m.free.objects}
            adv, record = verify_merge(self.trace, m, self.rules, self.costs, kinds)
            considered.append(record)
            if adv is not None:
                verified.append((adv, m))
        verified.sort(
            key=lambda x: (-float(x[0].predicted["freed_mb"]), -float(x[0].predicted["avoided_sync_reads_per_s"]))
        )
        for adv, m in verified:
            if {m.keep_key, m.free_key} & taken:
                continue
            taken |= {m.keep_key, m.free_key}
            out.append(self._from(adv))
        tried = {}
        good: list[tuple[Advice, Move]] = []
        for mv in moves:
            if {mv.home_key, mv.to_key} & taken or tried.get(mv.home.source, 0) >= self.rules.max_moves_tried:
                continue
            tried[mv.home.source] = tried.get(mv.home.source, 0) + 1
            kinds = self.kinds if self.kinds is not None else {mv.obj.name: "UNKNOWN"}
            adv, record = verify_move(self.trace, mv, self.rules, self.costs, kinds)
            considered.append(record)
            if adv is not None:
                good.append((adv, mv))
        good.sort(key=lambda x: -float(x[0].predicted["avoided_sync_reads_per_s"]))
        for adv, mv in good:
            if {mv.home_key, mv.to_key} & taken:
                continue
            taken |= {mv.home_key, mv.to_key}
            out.append(self._from(adv))
        return out, considered

    def _from(self, a: Advice) -> Advice:
        if self.source:
            a.evidence["from"] = self.source
        return a


def candidates(states: Mapping[str, PoolState], rules: ConsolidationRules) -> set[str]:
    """The pools (keys of `states`) whose getpages the proposals would replay, within the per-source
    limits: what the online service reads back from Kafka for them."""
    merges, moves = propose(states, rules)
    out: set[str] = set()
    count: dict[str, int] = {}
    for m in merges:
        if count.get(m.keep.source, 0) < rules.max_merges_tried:
            count[m.keep.source] = count.get(m.keep.source, 0) + 1
            out |= {m.keep_key, m.free_key}
    count = {}
    for mv in moves:
        if count.get(mv.home.source, 0) < rules.max_moves_tried:
            count[mv.home.source] = count.get(mv.home.source, 0) + 1
            out |= {mv.home_key, mv.to_key}
    return out
