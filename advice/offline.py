"""`poolsight advise DIR`: advice from a trace and statistics, with no service running."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from poolsight.advice import replay
from poolsight.advice.advisor import Budget, budget_advice, pool_advice, report
from poolsight.advice.combine import combine
from poolsight.advice.commands import free_pool_name, page_size_of
from poolsight.advice.consolidation import ConsolidationRules, Consolidator
from poolsight.advice.group_advice import group_advice
from poolsight.advice.group_offline import GroupSimulate, group_specs
from poolsight.advice.inputs import Inputs, read
from poolsight.advice.model import Advice, Costs, Curve, ObjectState, PoolState, workload_similarity
from poolsight.advice.placement import Rules, Verifier, propose
from poolsight.advice.settings import Thresholds
from poolsight.simulator.result import CurvePoint
from poolsight.simulator.setting import Setting


def _split(trace_pool: str) -> tuple[str, str]:
    source, _, pool = trace_pool.rpartition("/")
    return source or "TRACE", pool


def _at(rows: Sequence[CurvePoint], size: int) -> float:
    sizes = [float(r.size_pages) for r in rows]
    return float(np.interp(size, sizes, [float(r.sync_reads_per_s or 0.0) for r in rows]))


def pool_states(inputs: Inputs, trace: replay.Trace) -> tuple[dict[str, PoolState], list[str]]:
    """One state per trace pool with attributes (trace pool name -> state), and what was skipped."""
    runs: dict[str, replay.PoolRun] = {}
    attrs: dict[str, dict[str, Any]] = {}
    skipped = []
    for tp in trace.pools:
        a = inputs.attributes.get(_split(tp))
        if a is None:
            skipped.append(f"{tp}: no pool attributes (VPSIZE unknown): not advised")
            continue
        s = Setting.of(a)
        if s.size <= 0:
            skipped.append(f"{tp}: VPSIZE {s.size}: not advised")
            continue
        runs[tp], attrs[tp] = replay.PoolRun(s.size, s.policy, s.vpseqt), a
    results = replay.analyse(trace, runs) if runs else {}
    lru_runs = {tp: r for tp, r in runs.items() if str(attrs[tp].get("pgsteal") or "LRU").upper() == "LRU"}
    fifo = replay.fifo_at_size(trace, lru_runs) if lru_runs else {}
    states: dict[str, PoolState] = {}
    for tp, res in results.items():
        source, pool = _split(tp)
        a, run = attrs[tp], runs[tp]
        seconds = float(res.window.seconds) or 1.0
        curve = res.curve
        st = inputs.stats.get((source, pool))
        secs = st["interval_seconds"] if st and st["interval_seconds"] > 0 else None
        io = inputs.sync_io.get((source, pool))
        objects = [
            ObjectState(
                name,
                inputs.kinds.get(name, "TABLESPACE"),
                o.refs / seconds,
                o.sequential_share,
                o.working_set.avg_pages,
                o.working_set.max_pages,
                o.distinct_pages,
                _at(o.curve, run.size),
                o.updates / seconds,
            )
            for name, o in res.objects.items()
        ]
        states[tp] = PoolState(
            source=source,
            pool=pool,
            vpsize=run.size,
            curve=Curve(tuple(int(r.size_pages) for r in curve), tuple(float(r.sync_reads_per_s or 0) for r in curve)),
            seconds=seconds,
            platform="luw" if inputs.origins.get(source, "").startswith("luw") else "zos",
            page_size=int(a.get("page_size") or page_size_of(pool)),
            vpseqt=run.vpseqt,
            dwqt=a.get("dwqt"),
            vdwqt=a.get("vdwqt"),
            pgsteal=str(a.get("pgsteal") or "LRU").upper(),
            pgfix=bool(a.get("pgfix")),
            frame_size=int(a["frame_size"]) if a.get("frame_size") else None,
            policy=run.policy,
            getpages_per_s=res.refs / seconds,
            measured_sync_reads_per_s=st["sync_reads_random"] / secs if st and secs else None,
            sync_io_seconds=io[0] / io[1] if io and io[1] else None,
            pages_read_per_s=(
                (
                    st["sync_reads_random"]
                    + st["sync_reads_sequential"]
                    + st["seq_prefetch_pages"]
                    + st["list_prefetch_pages"]
                    + st["dyn_prefetch_pages"]
                )
                / secs
                if st and secs
                else None
            ),
            pages_written_per_s=st["pages_written"] / secs if st and secs else None,
            read_ios_per_s=(
                st["sync_reads_random"]
                + st["sync_reads_sequential"]
                + st["seq_prefetch_reads"]
                + st["list_prefetch_reads"]
                + st["dyn_prefetch_reads"]
            )
            / secs
            if st and secs
            else None,
            write_ios_per_s=(st["sync_writes"] + st["async_writes"]) / secs if st and secs else None,
            dwqt_reached=int(st["dwqt_reached"]) if st else None,
            vdwqt_reached=int(st["vdwqt_reached"]) if st else None,
            write_engine_not_available=int(st["write_engine_not_available"]) if st else None,
            fifo_sync_reads_per_s=fifo.get(tp),
            lru_sync_reads_per_s=_at(curve if res.lru_curve is None else res.lru_curve, run.size),
            vpseqt_alternatives={float(r.vpseqt): float(r.sync_reads_per_s or 0.0) for r in res.vpseqt_curve},
            objects=objects,
            warmup=bool(res.window.warmup),
            similarity=workload_similarity(*replay.halves(trace, tp)),
        )
    return states, skipped


def advise_dir(
    directory: Path,
    budget: Budget,
    thresholds: Thresholds | None = None,
    rules: Rules | None = None,
    costs: Costs | None = None,
    simulate_group: GroupSimulate | None = None,
    consolidation: ConsolidationRules | None = None,
) -> tuple[dict[str, Any], Inputs]:
    """The advice document for a directory, and the inputs read (with their rejects). A pool whose
    members share a GBP (attributes' group_name) is advised with its group when `simulate_group`
    gives the group's surfaces: the group's budget replaces the members' own for that pool. Merges and
    moves into existing pools (advice/consolidation.py) are proposed for the pools outside a group."""
    t, r, c = thresholds or Thresholds(), rules or Rules(), costs or Costs()
    inputs = read(directory)
    path = replay.trace_file(directory)
    if path is None:
        raise replay.TraceError(f"{directory}: no trace ({', '.join(replay.TRACE_NAMES)})")
    trace = replay.load(path)
    states, skipped = pool_states(inputs, trace)
    if not states:
        raise replay.TraceError(f"{directory}: no pool of the trace has attributes ({'; '.join(skipped)})")
    sources = sorted({p.source for p in states.values()})
    memory = {s: inputs.memory_of(s) for s in sources}
    budgets: dict[str, Any] = {}
    advice: list[Advice] = []
    groups, grouped, group_rows = _groups(inputs, trace, budget, c, simulate_group)
    advice += group_rows
    for s in sources:
        mine = [p for p in states.values() if p.source == s and (s, p.pool) not in grouped]
        budgets[s], sized = budget_advice(mine, memory[s], budget, t, c)
        advice += sized
        for p in mine:
            advice += pool_advice(p, memory[s], t, c)
    considered: list[dict[str, Any]] = []
    verifier = Verifier(trace, r, c, inputs.kinds)
    # Every pool the source has (attributes), and each new pool once: two placements never share one.
    taken = {src: {pool for (s2, pool) in inputs.attributes if s2 == src} for src in sources}
    for tp, p in states.items():
        verified: list[tuple[Advice, dict[str, Any]]] = []
        new_pool = free_pool_name(p.page_size, taken[p.source])
        if new_pool is not None:
            taken[p.source].add(new_pool)
        for prop in propose(p, new_pool, r):
            placed, record = verifier.verify(tp, prop)
            considered.append(record)
            if placed is not None:
                verified.append((placed, record))
        # Proposals for one pool are alternatives (each starts from the pool as it is): the best one.
        verified.sort(key=lambda x: -float(x[0].predicted["avoided_sync_reads_per_s"]))
        for _, record in verified[1:]:
            record["why_not"] = f"an alternative to moving {', '.join(verified[0][0].objects)}, which saves more"
        if verified:
            advice.append(verified[0][0])
    consolidator = Consolidator(trace, c, consolidation or ConsolidationRules(), inputs.kinds)
    alone = {tp: p for tp, p in states.items() if (p.source, p.pool) not in grouped}
    consolidated, consolidations = consolidator.advise(alone)
    advice += consolidated
    advice = combine(advice, verifier.again)
    # One source: its budget is the document's; several: by source, summed.
    budget_doc = budgets[sources[0]] if len(sources) == 1 else _merge(budgets)
    doc = report(
        budget_doc,
        advice,
        {
            "placements_considered": considered,
            "consolidations_considered": consolidations,
            "groups": groups,
            "memory": {s: (m.__dict__ if m else None) for s, m in memory.items()},
            "input": {
                "directory": str(directory),
                "getpages": len(trace.times),
                "trace_rejected": trace.rejected,
                "rejected": inputs.rejected,
                "skipped": skipped,
            },
        },
    )
    return doc, inputs


def _groups(
    inputs: Inputs, trace: replay.Trace, budget: Budget, costs: Costs, simulate: GroupSimulate | None
) -> tuple[dict[str, Any], set[tuple[str, str]], list[Advice]]:
    """Each group's GBPs: their section of the document ({group: {gbp: ...}}), the (member, pool)
    pairs the group's budget covers, and the group's advice."""
    doc: dict[str, Any] = {}
    grouped: set[tuple[str, str]] = set()
    rows: list[Advice] = []
    for spec in group_specs(inputs, trace):
        surface = simulate(spec, trace) if simulate is not None else None
        if surface is None:
            doc.setdefault(spec.group, {})[spec.gbp] = {
                "members": spec.members,
                "data_entries": spec.data_entries,
                "ratio": spec.ratio,
                "note": "no group simulation: each member's pool is advised alone, as if the GBP were infinite",
            }
            continue
        try:
            section, advised = group_advice(surface, budget, costs)
        except ValueError as exc:  # a surface advice cannot use (the grid lacks today's setting): say so
            doc.setdefault(spec.group, {})[spec.gbp] = {"members": spec.members, "note": f"not advised: {exc}"}
            continue
        doc.setdefault(spec.group, {})[spec.gbp] = section
        rows += advised
        grouped |= {(m, spec.pool) for m in spec.members}
    return doc, grouped, rows


def _merge(budgets: dict[str, Any]) -> dict[str, Any]:
    """Several sources: allocations keyed SOURCE/POOL (data-sharing members share pool names)."""
    alloc = {f"{s}/{k}": v for s, b in budgets.items() for k, v in b.get("allocation", {}).items()}
    return {
        "allocation": alloc,
        "avoided_sync_reads_per_s": sum(b.get("avoided_sync_reads_per_s", 0.0) for b in budgets.values()),
        "avoided_sync_io_seconds_per_s": sum(b.get("avoided_sync_io_seconds_per_s", 0.0) for b in budgets.values()),
        "by_source": budgets,
    }
