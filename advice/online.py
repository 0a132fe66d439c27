"""Advice from the running system: pool states read from Trino (the simulation's curves at each
pool's policy, its VPSEQT alternatives, statistics, objects, the host's memory), the rules and the
budget applied, one row per piece of advice written to the `advice` table (`advice_latest` shows
each source's latest evaluation). Run by the launcher as the `advice` service, or once with
`poolsight advise --evaluate`.

Placements and PGSTEAL FIFO need the objects' reference streams in other pools: the pools that
call for one have their recent getpages read back from Kafka (advice/recent.py) and replayed in
the proposed pools, as `poolsight advise DIR` replays a trace."""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.advice import replay
from poolsight.advice.advisor import Budget, budget_advice, pool_advice, stats_advice
from poolsight.advice.budget import frames_for
from poolsight.advice.combine import Reverify, combine
from poolsight.advice.commands import free_pool_name, page_size_of
from poolsight.advice.consolidation import ConsolidationRules, Consolidator, candidates
from poolsight.advice.group_advice import group_advice
from poolsight.advice.group_tables import surface_from_rows
from poolsight.advice.model import (
    Advice,
    Costs,
    Curve,
    Memory,
    ObjectState,
    PoolState,
    StatsPool,
    workload_similarity,
)
from poolsight.advice.placement import Rules, Verifier, propose
from poolsight.advice.recent import RecentGetpages
from poolsight.advice.settings import Thresholds
from poolsight.advice.table import ADVICE, COLUMNS, LATEST
from poolsight.infra.config import Settings, load_settings
from poolsight.infra.evaluator import Report
from poolsight.infra.trino import trino_rows
from poolsight.names import TRINO_READER_USER
from poolsight.simulator.group import pool_page_size
from poolsight.simulator.setting import Setting
from poolsight.sql.curve import WINDOW_MINUTES  # the window sim_curve_latest shows
from poolsight.sql.named import query

log = logging.getLogger("poolsight.advice")


def _rows(s: Settings, name: str, source: str | None) -> list[list[Any]]:
    """The rows of a named query of sql/queries/advice.sql for one source (None: every source)."""
    q = query(name)
    return trino_rows(s, q.sql, q.bind({"source": source} if "source" in q.params else {}))[1]


def read_states(s: Settings, source: str | None = None) -> tuple[list[PoolState], dict[str, Memory], dict[str, Any]]:
    """Each pool's state over its latest window, each source's memory, and the windows' ends."""
    curves: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    io_ms: dict[tuple[str, str], float] = {}
    for src, pool, size, per_s, ms in _rows(s, "advice_curves", source):
        curves[(src, pool)].append((int(size), float(per_s or 0.0)))
        if ms is not None:
            io_ms[(src, pool)] = float(ms)
    vpseqts: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
    for src, pool, v, per_s in _rows(s, "advice_vpseqt", source):
        if per_s is not None:
            vpseqts[(src, pool)][float(v)] = float(per_s)
    stats = {(r[0], r[1]): r[2:] for r in _rows(s, "advice_stats", source)}
    objects: dict[tuple[str, str], list[list[Any]]] = defaultdict(list)
    for r in _rows(s, "advice_objects", source):
        objects[(r[0], r[1])].append(r[2:])
    memory = {r[0]: Memory(int(r[1]), _f(r[2]), _f(r[3]), _f(r[4])) for r in _rows(s, "advice_memory", source)}
    mixes: dict[tuple[str, str], tuple[dict[Any, float], dict[Any, float], list[float]]] = {}
    for src, pool, obj, first, rnd, seq, rid, secs in _rows(s, "advice_halves", source):
        a, b, seconds = mixes.setdefault((src, pool), ({}, {}, [0.0, 0.0]))
        for name, v in (("random", rnd), ("sequential", seq), ("rid", rid)):
            if v:
                (a if first else b)[(obj, name)] = float(v)
        i = 0 if first else 1
        seconds[i] = max(seconds[i], float(secs or 0.0))  # the half's panes: the object seen longest
    states: list[PoolState] = []
    ends: dict[str, Any] = {}
    for src, pool, end, getpages, seconds, observed, n_obs, n, model, size, vpseqt, warmup in _rows(
        s, "advice_pools", source
    ):
        key = (src, pool)
        if size is None or int(size) <= 0 or not curves.get(key) or not seconds:
            continue  # no VPSIZE known yet, or no curve: nothing to advise from
        secs = float(seconds)
        st = stats.get(key)
        ssecs = float(st[0]) if st and st[0] else None
        pts = sorted(curves[key])
        ends[src] = max(ends.get(src, end), end)
        states.append(
            PoolState(
                source=src,
                pool=pool,
                vpsize=int(size),
                curve=Curve(tuple(p for p, _ in pts), tuple(r for _, r in pts)),
                seconds=secs,
                platform="luw" if st and str(st[13] or "").startswith("luw") else "zos",
                page_size=int(st[7]) if st and st[7] else page_size_of(pool),
                vpseqt=float(vpseqt) if vpseqt is not None else 80.0,
                dwqt=_f(st[8]) if st else None,
                vdwqt=_f(st[9]) if st else None,
                pgsteal=str(st[10] or ("FIFO" if model == "fifo" else "LRU")).upper() if st else "LRU",
                pgfix=bool(st[11]) if st else False,
                frame_size=int(st[12]) if st and st[12] else None,
                policy=str(model or "lru"),
                getpages_per_s=float(getpages) / secs,
                # The trace's own miss flags when every pane has them, else the statistics.
                measured_sync_reads_per_s=(
                    float(observed) / secs
                    if n_obs == n and observed is not None
                    else (float(st[1]) / ssecs if st and ssecs else None)
                ),
                sync_io_seconds=io_ms[key] / 1e3 if key in io_ms else None,
                pages_read_per_s=float(st[2]) / ssecs if st and ssecs else None,
                pages_written_per_s=float(st[3]) / ssecs if st and ssecs else None,
                read_ios_per_s=float(st[15]) / ssecs if st and ssecs else None,
                write_ios_per_s=float(st[4]) / ssecs if st and ssecs else None,
                dwqt_reached=int(st[5]) if st else None,
                vdwqt_reached=int(st[6]) if st else None,
                write_engine_not_available=int(st[14]) if st else None,
                vpseqt_alternatives=vpseqts.get(key, {}),
                objects=[
                    ObjectState(
                        name,
                        "TABLESPACE",
                        float(gp) / secs,
                        float(seq or 0.0),
                        float(ws_avg or 0.0),
                        float(ws_max or 0.0),
                        int(window_pages or 0),
                        float(sim or 0.0) / secs,
                        float(updates) / secs if updates is not None else None,
                    )
                    for name, gp, seq, ws_avg, ws_max, window_pages, sim, updates in objects.get(key, [])
                ],
                warmup=bool(warmup),
                window_start=end - timedelta(minutes=WINDOW_MINUTES),
                window_end=end,
                similarity=(
                    workload_similarity(mixes[key][0], mixes[key][1], (mixes[key][2][0], mixes[key][2][1]))
                    if key in mixes
                    else None
                ),
            )
        )
    return states, memory, ends


def stats_pool(row: Sequence[Any]) -> StatsPool | None:
    """One row of `advice_stats_pools` as a pool known from its statistics alone, or None when its
    VPSIZE is unknown (neither attributes nor BUFFERS ALLOCATED) or no interval states reads or writes."""
    (src, pool, end, intervals, read_s, sync_random, pages_read, read_ios, write_s, written, write_ios, dwqt_hits,
     vdwqt_hits, wena, vpsize, from_attributes, page_size, dwqt, vdwqt, pgsteal, pgfix, frame_size, origin,
     start) = row  # fmt: skip
    rs, ws = _f(read_s) or None, _f(write_s) or None
    if vpsize is None or int(vpsize) <= 0 or (rs is None and ws is None):
        return None
    return StatsPool(
        source=str(src),
        pool=str(pool),
        vpsize=int(vpsize),
        vpsize_from="pool attributes" if from_attributes else "statistics (BUFFERS ALLOCATED)",
        seconds=max(rs or 0.0, ws or 0.0),
        intervals=int(intervals),
        platform="luw" if str(origin or "").startswith("luw") else "zos",
        page_size=int(page_size) if page_size else page_size_of(str(pool)),
        dwqt=_f(dwqt),
        vdwqt=_f(vdwqt),
        pgsteal=str(pgsteal or "LRU").upper(),
        pgfix=bool(pgfix),
        frame_size=int(frame_size) if frame_size else None,
        measured_sync_reads_per_s=float(sync_random or 0) / rs if rs else None,
        pages_read_per_s=float(pages_read or 0) / rs if rs else None,
        read_ios_per_s=float(read_ios or 0) / rs if rs else None,
        pages_written_per_s=float(written or 0) / ws if ws else None,
        write_ios_per_s=float(write_ios or 0) / ws if ws else None,
        dwqt_reached=int(dwqt_hits or 0) if ws else None,
        vdwqt_reached=int(vdwqt_hits or 0) if ws else None,
        write_engine_not_available=int(wena or 0) if ws else None,
        window_start=start,
        window_end=end,
    )


def stats_only(rows: Iterable[Sequence[Any]], simulated: Collection[str]) -> list[StatsPool]:
    """The pools of `advice_stats_pools` rows that have no simulated curve (`simulated`: the keys,
    SOURCE/POOL, of the pools read_states found one for) and a known VPSIZE."""
    out = [p for r in rows if (p := stats_pool(r)) is not None and p.key not in simulated]
    return sorted(out, key=lambda p: (p.source, p.pool))


def read_stats_only(
    s: Settings, simulated: Collection[str], source: str | None = None
) -> tuple[list[StatsPool], dict[str, Memory]]:
    """The pools known from their statistics alone (no simulated curve), and their sources' memory
    over the same windows."""
    pools = stats_only(_rows(s, "advice_stats_pools", source), simulated)
    if not pools:
        return [], {}
    memory = {r[0]: Memory(int(r[1]), _f(r[2]), _f(r[3]), _f(r[4])) for r in _rows(s, "advice_stats_memory", source)}
    return pools, memory


def advise_sources(
    states: Sequence[PoolState],
    stats_pools: Sequence[StatsPool],
    memory: Mapping[str, Memory],
    budget: Budget,
    t: Thresholds,
    c: Costs,
    placements: Mapping[str, list[Advice]] | None = None,
    again: Reverify | None = None,
) -> dict[str, tuple[dict[str, Any], list[Advice]]]:
    """Each source's budget document and advice: the budget and every rule over the pools with a
    simulated curve (`states`), the placements replayed for them, one VPSIZE per pool; the pools
    known from statistics alone (`stats_pools`) get only the rules statistics support (VDWQT, PGFIX,
    1 MB frames): the budget, shrink, VPSEQT, FIFO and placement rules never see them."""
    out: dict[str, tuple[dict[str, Any], list[Advice]]] = {}
    for src in sorted({p.source for p in states} | {p.source for p in stats_pools}):
        mine = [p for p in states if p.source == src]
        doc, advice = budget_advice(mine, memory.get(src), budget, t, c)
        for p in mine:
            advice += pool_advice(p, memory.get(src), t, c)
            advice += (placements or {}).get(p.key, [])
        advice = combine(advice, again)
        stats = [p for p in stats_pools if p.source == src]
        for sp in stats:
            advice += stats_advice(sp, memory.get(src), t)
        if stats:
            doc["statistics_only"] = {
                "pools": [p.pool for p in stats],
                "note": "no simulated curve (no trace yet): advised from statistics alone (VDWQT, PGFIX, 1 MB "
                "frames), outside the budget",
            }
        out[src] = (doc, advice)
    return out


def _fifo_candidate(p: PoolState) -> bool:
    """DOMAIN.md: FIFO can match LRU for pool-resident objects, or huge and purely random ones;
    only those pools are replayed at FIFO (a replay costs a pass over the pool's recent getpages)."""
    if p.pgsteal != "LRU" or not p.objects:
        return False
    pages = sum(o.distinct_pages for o in p.objects)
    random = sum(o.getpages_per_s * (1 - o.sequential_share) for o in p.objects) / max(p.getpages_per_s, 1e-9)
    return pages <= p.vpsize or (random >= 0.95 and pages >= 4 * p.vpsize)


def replayed(
    s: Settings, states: list[PoolState], t: Thresholds, c: Costs, recent: RecentGetpages | None = None
) -> tuple[dict[str, list[Advice]], Reverify | None]:
    """Placements, merges and moves into existing pools, and FIFO, verified on the pools' recent
    getpages read back from Kafka (advice/recent.py): the same replay as `poolsight advise DIR`.
    Sets the FIFO numbers on the states; returns the placement advice per pool (the best verified
    proposal) and the merges and moves (advice/consolidation.py, keyed by the pool the advice is
    for), and how to verify a placement again at another size (advice/combine.py). `recent`: the getpages
    kept from the evaluation before (the advice service's), else read afresh."""
    rules = Rules()
    merging = ConsolidationRules()
    proposals = {}
    # Every pool each source has had statistics or a curve for, and each new pool once.
    taken: dict[str, set[str]] = defaultdict(set)
    for src, pool in _rows(s, "advice_known_pools", None):
        taken[src].add(pool)
    for p in states:
        taken[p.source].add(p.pool)
    for p in states:
        new_pool = free_pool_name(p.page_size, taken[p.source])
        props = propose(p, new_pool, rules)
        if props and new_pool is not None:
            taken[p.source].add(new_pool)
        fifo = _fifo_candidate(p)
        if props or fifo:
            proposals[p.key] = (p, props, fifo)
    by_key = {p.key: p for p in states}
    merge_pools = candidates(by_key, merging)
    if not proposals and not merge_pools:
        return {}, None
    wanted = [p for p, _, _ in proposals.values()] + [by_key[k] for k in sorted(merge_pools) if k not in proposals]
    windows = {(p.source, p.pool): (p.window_start, p.window_end) for p in wanted}
    trace = (recent or RecentGetpages(s)).trace(windows, replay_lookback())
    out: dict[str, list[Advice]] = {}
    if trace is None:
        return out, None
    verifier = Verifier(trace, rules, c, source=FROM_KAFKA)
    for key, (p, props, fifo) in proposals.items():
        if key not in trace.pools:
            continue
        own = Setting.of({"vpsize": p.vpsize, "pgsteal": p.pgsteal, "vpseqt": p.vpseqt})
        if fifo:
            run = replay.PoolRun(p.vpsize, own.policy, own.vpseqt)
            p.fifo_baseline_sync_reads_per_s = replay.at_size(trace, {key: run})[key].sync_reads_per_s
            p.fifo_sync_reads_per_s = replay.fifo_at_size(trace, {key: run})[key]
        best: Advice | None = None
        for prop in props:
            adv, _ = verifier.verify(key, prop)
            if adv is not None and (
                best is None or adv.predicted["avoided_sync_reads_per_s"] > best.predicted["avoided_sync_reads_per_s"]
            ):
                best = adv
        if best is not None:
            out[key] = [best]
    if merge_pools:
        consolidated, _ = Consolidator(trace, c, merging, source=FROM_KAFKA).advise({k: by_key[k] for k in merge_pools})
        for a in consolidated:
            out.setdefault(f"{a.source}/{a.pool}", []).append(a)
    return out, verifier.again


FROM_KAFKA = "the pool's recent getpages read back from Kafka and replayed in the proposed pools"


def replay_lookback() -> float:
    """Seconds of Kafka broker time read back for a replay (POOLSIGHT_ADVICE_LOOKBACK): the 15-minute
    window and some slack for a live source, whose records reach Kafka at about their event time. A
    replay of old traces needs a longer one. Every record in it is read (and the wanted pools'
    decoded): on a busy topic this is the evaluation's main cost."""
    return float(os.environ.get("POOLSIGHT_ADVICE_LOOKBACK") or 1200)


def _f(v: Any) -> float | None:
    return None if v is None else float(v)


def evaluate(
    s: Settings | None = None,
    budget: Budget | None = None,
    source: str | None = None,
    thresholds: Thresholds | None = None,
    costs: Costs | None = None,
    write: bool = True,
    recent: RecentGetpages | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """One evaluation: the rows written to `advice` (one per piece of advice; a source with none gets
    a `none` row, so advice_latest never shows advice that no longer holds), and the pools read."""
    s = s or load_settings()
    t, c = thresholds or Thresholds(), costs or Costs()
    budget = budget or Budget()
    states, memory, ends = read_states(s, source)
    stats_pools, stats_memory = read_stats_only(s, {p.key for p in states}, source)
    simulated = set(ends)
    for sp in stats_pools:  # a source with no curve at all: its window ends at its newest statistics
        if sp.window_end is not None and sp.source not in simulated:
            ends[sp.source] = max(ends.get(sp.source, sp.window_end), sp.window_end)
    placements: dict[str, list[Advice]] = {}
    again: Reverify | None = None
    try:
        if states:
            placements, again = replayed(s, states, t, c, recent)
    except Exception as exc:  # Kafka or the registry unreachable: the rest of the advice still holds
        log.warning("placements and FIFO not replayed: %s: %s", type(exc).__name__, exc)
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    advised = advise_sources(states, stats_pools, {**stats_memory, **memory}, budget, t, c, placements, again)
    for src, (doc, advice) in advised.items():
        if not advice:
            rows.append(_row(now, ends[src], src, None, doc))
        rows += [_row(now, ends[src], src, a, doc) for a in advice]
    if source is None:
        rows += group_rows(s, budget, c, now)
    if write:
        marks = "(" + ", ".join("?" * len(COLUMNS)) + ")"
        for part in statement_parts(rows):
            sql = f"INSERT INTO {ADVICE.qualified} ({', '.join(COLUMNS)}) VALUES " + ", ".join([marks] * len(part))
            trino_rows(s, sql, tuple(r[k] for r in part for k in COLUMNS))
    return rows, len(states) + len(stats_pools)


# Trino refuses a statement longer than 1,000,000 characters (query.max-length), and the client
# puts the parameters' values into the text: an evaluation of many sources is written in parts
# well under it, each source's rows in one part.
STATEMENT_CHARS = 400_000


def statement_parts(rows: list[dict[str, Any]], limit: int = STATEMENT_CHARS) -> list[list[dict[str, Any]]]:
    """`rows` in parts of whole sources whose values come to at most `limit` characters (a
    source larger than that alone in its part)."""
    parts: list[list[dict[str, Any]]] = []
    size = limit
    for _, group in itertools.groupby(rows, key=lambda r: r["source"]):
        block = list(group)
        chars = sum(len(str(v)) + 8 for r in block for v in r.values())
        if size + chars > limit:
            parts.append([])
            size = 0
        parts[-1] += block
        size += chars
    return parts


def _dicts(s: Settings, name: str) -> list[dict[str, Any]]:
    q = query(name)
    names, rows = trino_rows(s, q.sql, q.bind({}))
    cols = [n for n, _ in names]
    return [dict(zip(cols, r, strict=True)) for r in rows]


def group_rows(s: Settings, budget: Budget, c: Costs, now: datetime) -> list[dict[str, Any]]:
    """The data-sharing groups' advice (advice/group_advice.py) from the group simulation's tables:
    one surface per (group, GBP); source = the group, pool = the GBP."""
    curve = _dicts(s, "advice_gbp_curve")
    if not curve:
        return []
    members, lbp = _dicts(s, "advice_gbp_member"), _dicts(s, "advice_lbp_curve")
    out: list[dict[str, Any]] = []
    for group, gbp in sorted({(r["group_name"], r["gbp"]) for r in curve}):
        mine = [r for r in curve if (r["group_name"], r["gbp"]) == (group, gbp)]
        curves = [r for r in lbp if (r["group_name"], r["gbp"]) == (group, gbp)]
        try:
            surface = surface_from_rows(
                mine,
                [r for r in members if (r["group_name"], r["gbp"]) == (group, gbp)],
                curves,
                pool=str(curves[0]["pool"]) if curves else gbp[1:],
                page_size=pool_page_size(gbp),
            )
            doc, advice = group_advice(surface, budget, c)
        except ValueError as exc:  # a grid without today's setting, a member without its curve
            log.warning("group %s %s not advised: %s", group, gbp, exc)
            continue
        end = max(r["window_end"] for r in mine)
        out += [_row(now, end, group, a, {"groups": {group: {gbp: doc}}}) for a in advice]
    return out


def _row(now: datetime, end: Any, source: str, a: Advice | None, budget: dict[str, Any]) -> dict[str, Any]:
    if a is None:
        return dict.fromkeys(COLUMNS) | {
            "evaluated_at": now,
            "window_end": end,
            "source": source,
            "kind": "none",
            "summary": "no advice: nothing the rules and simulations found worth changing",
            "budget": json.dumps(budget, default=str),
        }
    p = a.predicted
    return {
        "evaluated_at": now,
        "window_end": end,
        "source": source,
        "pool": a.pool,
        "kind": a.kind,
        "objects": ", ".join(a.objects) or None,
        "summary": a.summary,
        "avoided_sync_reads_per_s": _f(p.get("avoided_sync_reads_per_s")),
        "cpu_seconds_per_24h": _f(p.get("cpu_seconds_per_24h")),
        "elapsed_seconds_per_24h": _f(p.get("elapsed_seconds_per_24h")),
        "sim_error": _f(a.confidence.get("sim_error")),
        "command": "\n".join(a.command),
        "evidence": json.dumps(a.evidence, default=str),
        "predicted": json.dumps(a.predicted, default=str),
        "confidence": json.dumps(a.confidence, default=str),
        "budget": json.dumps(budget, default=str),
    }


def latest(source: str | None = None, s: Settings | None = None) -> dict[str, Any]:
    """The latest advice of each source as the offline JSON document, read as the read-only user."""
    s = s or load_settings()
    names, rows = trino_rows(s, LATEST.sql, LATEST.bind(source=source), user=TRINO_READER_USER)
    cols = [n for n, _ in names]
    advice, budgets = [], {}
    for r in rows:
        d = dict(zip(cols, r, strict=True))
        if d["budget"]:
            budgets[d["source"]] = json.loads(d["budget"])
        if d["kind"] == "none":
            continue
        advice.append(
            {
                "kind": d["kind"],
                "source": d["source"],
                "pool": d["pool"],
                "objects": d["objects"].split(", ") if d["objects"] else [],
                "summary": d["summary"],
                "evidence": json.loads(d["evidence"]),
                "predicted": json.loads(d["predicted"]),
                "confidence": json.loads(d["confidence"]),
                "command": d["command"].split("\n"),
                "evaluated_at": str(d["evaluated_at"]),
                "window_end": str(d["window_end"]),
            }
        )
    budget = next(iter(budgets.values())) if len(budgets) == 1 else {"by_source": budgets}
    return {"budget": budget, "advice": advice}


def budget_from_env() -> Budget:
    """The service's budget: POOLSIGHT_ADVICE_BUDGET_GB to add memory; without it, memory is only
    moved between pools (redistribution), never added."""
    gb = os.environ.get("POOLSIGHT_ADVICE_BUDGET_GB")
    if gb:
        return Budget(frames=frames_for(budget_gb=float(gb)))
    return Budget(redistribute=True)


class AdviceEvaluator:
    """The advice service's evaluator (run by infra/evaluator.py's loop): every pool's advice,
    from Trino and the recent getpages, into the advice table."""

    name = "advice"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Kept between evaluations: each reads back only the getpages written since the last.
        self.recent = RecentGetpages(settings)

    def evaluate(self) -> Report:
        before = self.recent.reads
        rows, pools = evaluate(self.settings, budget_from_env(), recent=self.recent)
        log.info("%d pools, %d rows of advice", pools, len(rows))
        read = self.recent.reads - before
        return Report({"pools": pools, "advice": sum(r["kind"] != "none" for r in rows), "getpage_records_read": read})
