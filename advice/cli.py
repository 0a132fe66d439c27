"""`poolsight advise`: offline from a directory, or the latest advice from Trino."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from poolsight.advice.budget import frames_for
from poolsight.advice.group_simulate import simulate_group
from poolsight.argtypes import COUNT, NON_NEGATIVE, Assignment, InputDir, Keyword, OutputFile


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "directory",
        nargs="?",
        type=InputDir(),
        help="offline: a directory as `poolsight generate --output DIR` writes it (trace.csv, or trace.smf / "
        "trace.gtf with catalog.csv; statistics, "
        "attributes, catalog, system_memory.jsonl or .csv); without it, the latest advice from Trino",
    )
    b = p.add_mutually_exclusive_group()
    # A budget is memory to add: --redistribute moves memory instead.
    b.add_argument("--budget-buffers", type=COUNT, help="memory to add, in 4K buffers (a 32K buffer counts eight)")
    b.add_argument("--budget-gb", type=NON_NEGATIVE, help="memory to add, in GB")
    p.add_argument(
        "--redistribute", action="store_true", help="pools may also shrink: memory moves to where it saves most"
    )
    p.add_argument("--objective", choices=["time", "reads"], default="time", help="maximise avoided sync I/O time "
                   "(default) or avoided sync reads")  # fmt: skip
    limit = Assignment(COUNT, form="POOL=BUFFERS")
    p.add_argument(
        "--min", action="append", type=limit, default=[], metavar="POOL=BUFFERS", help="a pool's smallest size"
    )
    p.add_argument(
        "--max", action="append", type=limit, default=[], metavar="POOL=BUFFERS", help="a pool's largest size"
    )
    p.add_argument("--source", help="online: only this source")
    p.add_argument(
        "--evaluate",
        action="store_true",
        help="online: evaluate now from the tables and write the advice table (the advice service does this "
        "every 5 minutes), then print it",
    )
    p.add_argument(
        "--json",
        type=Keyword("-", OutputFile(), "-"),
        metavar="FILE",
        help="also write the advice as JSON (- for standard output)",
    )


def format_text(doc: dict[str, Any]) -> str:
    lines = []
    b = doc.get("budget") or {}
    for source, one in sorted(b["by_source"].items()) if "by_source" in b else [(None, b)]:
        who = f"{source}: " if source else ""
        if one.get("frames_4k") or one.get("redistribute"):
            lines.append(
                f"{who}budget: {one.get('frames_4k', 0):,} 4K frames ({one.get('gb', 0):.2f} GB), objective "
                f"{one.get('objective')}: avoids {one.get('avoided_sync_reads_per_s', 0):,.1f} sync reads/s"
            )
            for pool, added in sorted((one.get("allocation") or {}).items()):
                lines.append(f"  {pool:10} {added:+,} buffers")
        if one.get("paging_guard"):
            lines.append(f"{who}no growth: {one['paging_guard']}")
        if one.get("error"):
            lines.append(f"{who}no budget: {one['error']}")
    for group, gbps in sorted((doc.get("groups") or {}).items()):
        for gbp, one in sorted(gbps.items()):
            said = (one.get("note"), (one.get("budget") or {}).get("error"), (one.get("seed004") or {}).get("text"))
            for line in said:
                if line:
                    lines.append(f"{group} {gbp}: {line}")
    for a in doc.get("advice", []):
        lines.append(f"\n[{a['kind']}] {a['source']} {a['summary']}")
        conf = a.get("confidence", {}).get("note")
        if conf:
            lines.append(f"  confidence: {conf}")
        for c in a["command"]:
            lines.append(f"  {c}")
    if not doc.get("advice"):
        lines.append("no advice: nothing the rules and simulations found worth changing")
    return "\n".join(lines)


def _online(a: argparse.Namespace, budget: Any) -> int:
    # lazy: the parser imports this module for every command; Trino and Kafka clients load only for --online
    from poolsight.advice.online import budget_from_env, evaluate, latest
    from poolsight.infra.config import load_settings
    from poolsight.infra.trino import service_errors, unreachable

    try:
        if a.evaluate:
            # No budget given: the service's (POOLSIGHT_ADVICE_BUDGET_GB, else redistribution), so the
            # advice table does not alternate between two budgets.
            rows, pools = evaluate(budget=budget if budget.asked else budget_from_env(), source=a.source)
            print(f"evaluated {pools} pools: {len(rows)} rows written to the advice table", file=sys.stderr)
            if pools == 0:
                print(
                    "poolsight advise: no pool with a known VPSIZE and a curve or statistics to advise on",
                    file=sys.stderr,
                )
                return 1
        doc = latest(a.source)
    except service_errors() as exc:
        print(f"poolsight advise: {unreachable(load_settings(), exc) or f'Trino: {exc}'}", file=sys.stderr)
        return 1
    _print(doc, a.json)
    return 0


def _print(doc: dict[str, Any], path: Path | str | None) -> None:
    """path: a file, or - for standard output."""
    print(format_text(doc))
    if path is not None:
        text = json.dumps(doc, indent=1, default=str)
        if isinstance(path, Path):
            path.write_text(text)
        else:
            print(text)


def run(a: argparse.Namespace) -> int:
    # lazy: the advisor loads only when a budget is asked
    from poolsight.advice.advisor import Budget

    budget = Budget(frames_for(a.budget_buffers, a.budget_gb), a.objective, a.redistribute, dict(a.min), dict(a.max))
    if a.directory is None:
        return _online(a, budget)
    # lazy: the offline advisor and its replays load only for a directory
    from poolsight.advice.offline import advise_dir
    from poolsight.advice.replay import TraceError

    try:
        doc, inputs = advise_dir(a.directory, budget, simulate_group=simulate_group)
    except TraceError as exc:
        print(f"poolsight advise: {exc}", file=sys.stderr)
        return 2
    for e in inputs.errors[:10]:
        print(f"rejected {e}", file=sys.stderr)
    if inputs.rejected > 10:
        print(f"... and {inputs.rejected - 10} more rejected records", file=sys.stderr)
    _print(doc, a.json)
    return 0
