"""The groups of an offline directory: which trace pools are members' LBPs of one GBP, and the
settings a group simulation starts from (pool attributes: group_name, VPSIZE, gbp_data_entries,
gbp_ratio, gbp_gbpoolt). The simulation itself is passed in (`GroupSimulate`): advice does not run
the group simulator, whose output it reads as a `GroupSurface`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from poolsight.advice.commands import gbp_of, page_size_of
from poolsight.advice.group_model import GroupSurface
from poolsight.advice.inputs import Inputs
from poolsight.advice.replay import Trace

DEFAULT_RATIO = 10.0  # Db2 13 (and Db2 12 with PH13045)
DEFAULT_GBPOOLT = 30.0


@dataclass(frozen=True)
class GroupSpec:
    """One GBP of one group as the directory describes it: what to simulate."""

    group: str
    gbp: str  # GBP1
    pool: str  # BP1
    page_size: int
    members: dict[str, int]  # member (source) -> current VPSIZE of the pool
    trace_pools: dict[str, str]  # member -> its trace pool name ("DB2A/BP1")
    data_entries: int | None  # the GBP's current data entries (None: not in the attributes)
    ratio: float
    gbpoolt: float
    platform: str = "zos"


GroupSimulate = Callable[[GroupSpec, Trace], GroupSurface | None]


def _first(recs: list[dict[str, Any]], key: str) -> Any:
    return next((r[key] for r in recs if r.get(key) is not None), None)


def group_specs(inputs: Inputs, trace: Trace) -> list[GroupSpec]:
    """Every (group, pool) with at least two members in the trace: members are the sources whose
    attributes for the pool name the same group_name."""
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for tp in trace.pools:
        source, _, pool = tp.rpartition("/")
        a = inputs.attributes.get((source, pool)) if source else None
        if a is None or not a.get("group_name") or not a.get("vpsize"):
            continue
        found.setdefault((str(a["group_name"]), pool), {})[source] = a
    out = []
    for (group, pool), members in sorted(found.items()):
        if len(members) < 2:
            continue
        recs = list(members.values())
        entries = _first(recs, "gbp_data_entries")
        out.append(
            GroupSpec(
                group,
                gbp_of(pool),
                pool,
                int(_first(recs, "page_size") or page_size_of(pool)),
                {m: int(a["vpsize"]) for m, a in sorted(members.items())},
                {m: f"{m}/{pool}" for m in sorted(members)},
                int(entries) if entries is not None else None,
                float(_first(recs, "gbp_ratio") or DEFAULT_RATIO),
                float(_first(recs, "gbp_gbpoolt") or DEFAULT_GBPOOLT),
                "luw" if any(inputs.origins.get(m, "").startswith("luw") for m in members) else "zos",
            )
        )
    return out
