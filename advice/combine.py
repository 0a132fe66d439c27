"""One answer per pool: the pieces of one evaluation's advice decided together.

The memory budget, object placement and the shrink rule may each size a pool. They are
combined so that each pool gets at most one VPSIZE:
- a pool the budget resizes and a placement splits: the placement is verified again on the
  budget's size (the new pool's buffers come out of what the pool will have), and replaces the
  budget's advice for that pool; its evidence says what the budget gave. Where the placement no
  longer saves enough at that size, the budget's advice stands and says why the placement went;
- a pool the budget resizes is not also shrunk by the shrink rule (the budget weighed it);
- a pool a placement splits is not shrunk either (the split is verified at today's size).
Placements are memory-neutral (advice/placement.py), so the budget's frames pay for nothing else.

Merges and moves into existing pools (advice/consolidation.py) are replayed at today's sizes of
the pools they touch and are not verified again at another size: they are exclusive with the budget
and placement advice. One that touches a pool the budget or a placement sizes (after the above) is
left out, and that advice's evidence says so (`consolidation_dropped`); one that stands takes the
place of the shrink rule for its pools (`shrink_dropped`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from poolsight.advice.model import Advice

# Verifies a placement again with the pool at another size: the new advice, or None (no saving).
Reverify = Callable[[Advice, int], Advice | None]

_VPSIZE = re.compile(r"VPSIZE\((\d+)\)|(?:ALTER BUFFERPOOL \S+ (?:MEMBER \d+ )?SIZE (\d+))")


def budget_size(a: Advice) -> int:
    """The size a budget advice gives its pool (its command's VPSIZE)."""
    for cmd in a.command:
        m = _VPSIZE.search(cmd)
        if m:
            return int(m.group(1) or m.group(2))
    raise ValueError(f"{a.pool}: budget advice without a size: {a.command}")


def combine(advice: list[Advice], reverify: Reverify | None) -> list[Advice]:
    """The advice with at most one VPSIZE per (source, pool) (see the module's doc)."""
    by_pool: dict[tuple[str, str], dict[str, Advice]] = {}
    for a in advice:
        if a.kind in ("budget", "placement", "shrink"):
            by_pool.setdefault((a.source, a.pool), {})[a.kind] = a
    drop: set[int] = set()
    replace: dict[int, Advice] = {}
    for kinds in by_pool.values():
        budget, placement, shrink = kinds.get("budget"), kinds.get("placement"), kinds.get("shrink")
        if budget is not None and placement is not None:
            size = budget_size(budget)
            again = reverify(placement, size) if reverify is not None else None
            if again is not None:
                replace[id(placement)] = _joined(placement, again, budget, size)
                drop.add(id(budget))
            else:
                budget.evidence["placement_dropped"] = (
                    f"moving {', '.join(placement.objects)} out of {budget.pool} no longer saves enough at "
                    f"{size:,} buffers (replayed again at that size)"
                )
                drop.add(id(placement))
        sized_by = budget if budget is not None and id(budget) not in drop else None
        if shrink is not None and (sized_by is not None or placement is not None):
            kept = replace.get(id(placement)) if placement is not None else None
            owner = sized_by or kept or placement
            assert owner is not None
            owner.evidence["shrink_dropped"] = (
                f"the shrink rule's {shrink.summary!r} is left out: the {owner.kind} advice sizes {shrink.pool}"
            )
            drop.add(id(shrink))
    out = [replace.get(id(a), a) for a in advice if id(a) not in drop]
    return _exclusive(out)


CONSOLIDATION = ("merge", "move")


def touched(a: Advice) -> set[str]:
    """The pools a piece of advice changes: its predicted pools (a placement's, a merge's, a move's), else its own."""
    pools = a.predicted.get("pools")
    return set(pools) if isinstance(pools, dict) and pools else {a.pool}


def _exclusive(advice: list[Advice]) -> list[Advice]:
    """Merges and moves only on pools no budget or placement advice sizes; they replace the shrink rule."""
    sized: dict[tuple[str, str], Advice] = {}
    for a in advice:
        if a.kind in ("budget", "placement"):
            for pool in touched(a):
                sized.setdefault((a.source, pool), a)
    drop: set[int] = set()
    for a in advice:
        if a.kind not in CONSOLIDATION:
            continue
        clash = sorted({pool for pool in touched(a) if (a.source, pool) in sized})
        if clash:
            for pool in clash:
                owner = sized[(a.source, pool)]
                owner.evidence.setdefault("consolidation_dropped", []).append(
                    f"the {a.kind} advice {a.summary!r} is left out: the {owner.kind} advice sizes {pool} (a merge or "
                    "move is replayed at today's sizes and is exclusive with budget and placement advice)"
                )
            drop.add(id(a))
            continue
        for other in advice:
            if other.kind == "shrink" and other.source == a.source and other.pool in touched(a):
                a.evidence["shrink_dropped"] = (
                    f"the shrink rule's {other.summary!r} is left out: the {a.kind} advice sizes {other.pool}"
                )
                drop.add(id(other))
    return [a for a in advice if id(a) not in drop]


def _joined(first: Advice, again: Advice, budget: Advice, size: int) -> Advice:
    """The placement verified again at the budget's size, told from the pool as it runs today:
    before is today's (the first replay's), after the split of the budget's buffers."""
    pool = first.pool
    now = float(first.predicted["sync_reads_per_s_before"])
    at_budget = float(again.predicted["sync_reads_per_s_before"])
    after = float(again.predicted["sync_reads_per_s_after"])
    saved_first = float(first.predicted["avoided_sync_reads_per_s"])
    pools = again.predicted["pools"]
    pools[pool] |= {k: first.predicted["pools"][pool][k] for k in ("size_before", "sync_reads_per_s_before")}
    new_pool = next(p for p in pools if p != pool)
    # The effect's figures are linear in the sync reads saved: the first replay's, per read saved.
    effect = {k: float(first.predicted[k]) / saved_first * (now - after) for k in EFFECT}
    again.predicted |= {"sync_reads_per_s_before": now, "sync_reads_per_s_at_budget_size": at_budget, **effect}
    today = pools[pool]["size_before"]
    again.summary = (
        f"move {', '.join(first.objects)} from {pool} to {new_pool} within the {size:,} buffers the memory "
        f"budget gives {pool} ({today:,} today; {new_pool} gets {pools[new_pool]['size_after']:,}): "
        f"{now:,.1f} -> {after:,.1f} sync reads/s"
    )
    again.evidence["budget"] = {"vpsize": size, "summary": budget.summary, "predicted": budget.predicted}
    # The placement as first verified, at today's size: what a replay of the same getpages without
    # the budget gives (`poolsight advise DIR` with no budget).
    again.evidence["at_todays_size"] = {"command": first.command, "predicted": first.predicted}
    again.evidence["combined"] = (
        f"one VPSIZE for {pool}: the memory budget sizes it {size:,} (from the curve, {budget.summary}); the "
        f"placement splits those buffers, replayed again at that size: {at_budget:,.1f} sync reads/s with the "
        f"budget alone, {after:,.1f} with the placement too, {now:,.1f} today"
    )
    return again


EFFECT = ("avoided_sync_reads_per_s", "cpu_seconds_per_24h", "elapsed_seconds_per_24h")


def vpsizes(advice: list[Advice]) -> dict[tuple[str, str], list[int]]:
    """Every VPSIZE the advice's commands set, per (source, pool) named in the command."""
    out: dict[tuple[str, str], list[int]] = {}
    for a in advice:
        for cmd in a.command:
            m = re.search(r"BUFFERPOOL\s*\(?\s*(\w+)\)?.*?(?:VPSIZE\((\d+)\)|\bSIZE (\d+))", cmd)
            if m:
                out.setdefault((a.source, m.group(1)), []).append(int(m.group(2) or m.group(3)))
    return out
