"""How alike two workloads are (two pools, or an object and a pool): the gate a merge or a move
into an existing pool must pass before it is replayed (advice/consolidation.py).

A workload is profiled from what `PoolState` / `ObjectState` carry, getpage-weighted over its
objects: the getpage rate, the sequential share (sequential + RID-list getpages), the pages it
touches in the window (distinct pages, working set) and its re-reference, getpages per distinct
page over the window (1: every page read once, as a scan; 10: each page asked for ten times).

The rule, and where it comes from:
- Seed 001 (IBM, large memory with SAP, section 4.3): "Objects with similar access patterns are also
  separated and grouped into specific buffer pools", and its consolidation of 33 pools into 9 by
  page size and table / index cost "little to none" with the memory kept constant (section 11:
  "The cost of consolidating or reducing the number of buffer pools, while keeping the total amount
  of memory used for them constant, was little to none in a single system environment").
- Seed 000 (Responsive Systems, "Sim Cluster Analysis"): "The general methodology, is Ramos/Samos –
  (randomly accessed, mostly), and (sequentially accessed mostly); then within those criteria, very
  large working set objects from the rest. The goal is to separate objects that monopolize a
  pool." Summary: "Moving objects into *other* or **NEW** pools", "Proper object grouping is the key
  to performance", "3 or 4 monster pools won't cut the mustard".
- Seed 001, Night Balancing: "sequential in nature with little re-reference of the data": pages read
  once gain nothing from memory, and beside re-referenced pages they push those out.

So two workloads are alike when (1) they are of the same class, RAMOS or SAMOS (sequential share
below or from 50 %, the class boundary placement uses), (2) their sequential shares differ by at
most `sequential_gap` (0.25), (3) their re-references differ by at most a factor
`rereference_ratio` (4) and (4) their largest objects' working sets (distinct pages per pane, the
largest) differ by at most a factor `working_set_ratio` (4): seed 000's "very large working set
objects from the rest". The numbers of (2)-(4) are ours: the seeds give none. 0.25 is half a class
wide, so a pool at 0 % and one at 40 % sequential (both RAMOS) are not alike; 4 keeps a pool whose
pages are each read once or twice (a scan, re-reference 1-2) apart from one whose pages are read 8
times and more, and lets workloads of the same kind at different rates (seed 001's day posting
tables) group; for working sets, 4 spans about two of the clusters seed 000 shows for BP2 (1-945,
1,049-2,216, 2,729-4,244, 4,734-6,487 pages). An object moved into a pool must also not monopolise
it (`monopolist`, placement's rule: pages that could fill half the pool with 20-90 % of the
getpages). The score, 1 at identical profiles and 0 at any limit, orders candidates; the replay
decides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from poolsight.advice.model import ObjectState, PoolState


@dataclass(frozen=True)
class Profile:
    """One workload's access pattern (a pool's objects, or one object)."""

    name: str
    getpages_per_s: float
    sequential_share: float
    distinct_pages: int  # over the window
    working_set_max: float  # distinct pages per pane, the largest, summed over the objects
    largest_working_set: float  # the largest object's (working_set_max)
    rereference: float  # getpages per distinct page over the window

    @property
    def klass(self) -> str:
        return "SAMOS" if self.sequential_share >= 0.5 else "RAMOS"


def profile(name: str, objects: Sequence[ObjectState], seconds: float) -> Profile:
    """The getpage-weighted profile of some objects over a window of `seconds`."""
    gp = sum(o.getpages_per_s for o in objects)
    pages = sum(o.distinct_pages for o in objects)
    seq = sum(o.getpages_per_s * o.sequential_share for o in objects) / gp if gp > 0 else 0.0
    return Profile(
        name=name,
        getpages_per_s=gp,
        sequential_share=seq,
        distinct_pages=pages,
        working_set_max=sum(o.working_set_max for o in objects),
        largest_working_set=max((o.working_set_max for o in objects), default=0.0),
        rereference=gp * seconds / pages if pages > 0 else 0.0,
    )


def of_pool(p: PoolState, without: str | None = None) -> Profile:
    """A pool's profile (without one of its objects: what stays when that object leaves)."""
    return profile(p.pool, [o for o in p.objects if o.name != without], p.seconds)


def of_object(o: ObjectState, seconds: float) -> Profile:
    return profile(o.name, [o], seconds)


@dataclass(frozen=True)
class AlikeRules:
    sequential_gap: float = 0.25  # ours: half a class (RAMOS / SAMOS) wide
    rereference_ratio: float = 4.0  # ours: a scan's 1-2 apart from 8 and more
    working_set_ratio: float = 4.0  # ours: the largest objects' working sets, two of seed 000's clusters apart
    monopoly_pages: float = 0.5  # placement's monopoliser: pages that could fill half the pool ...
    monopoly_share: tuple[float, float] = (0.2, 0.9)  # ... with this share of the getpages


@dataclass(frozen=True)
class Likeness:
    a: Profile
    b: Profile
    sequential_gap: float
    rereference_ratio: float  # the larger re-reference over the smaller (>= 1)
    working_set_ratio: float  # the larger of the largest objects' working sets over the smaller (>= 1)
    score: float  # 1: the same profile; 0: at a limit (or of different classes)
    alike: bool
    why_not: list[str] = field(default_factory=list)

    def evidence(self, rules: AlikeRules) -> dict[str, object]:
        def one(p: Profile) -> dict[str, object]:
            return {
                "name": p.name,
                "class": p.klass,
                "getpages_per_s": p.getpages_per_s,
                "sequential_share": p.sequential_share,
                "distinct_pages": p.distinct_pages,
                "working_set_max": p.working_set_max,
                "largest_working_set": p.largest_working_set,
                "rereference": p.rereference,
            }

        return {
            "a": one(self.a),
            "b": one(self.b),
            "sequential_gap": self.sequential_gap,
            "rereference_ratio": self.rereference_ratio,
            "working_set_ratio": self.working_set_ratio,
            "score": self.score,
            "alike": self.alike,
            "why_not": self.why_not,
            "rule": RULE.format(gap=rules.sequential_gap, ratio=rules.rereference_ratio, ws=rules.working_set_ratio),
        }


RULE = (
    "alike: the same class (RAMOS/SAMOS at 50 % sequential; seed 000: 'Ramos/Samos ... then within those "
    "criteria, very large working set objects from the rest'), sequential shares within {gap:.0%} and "
    "re-references (getpages per distinct page) within a factor {ratio:g}, the largest objects' working sets within "
    "a factor {ws:g} (the three numbers ours: the seeds give none; seed 001 groups 'objects with similar access "
    "patterns' and finds the cost of consolidating 'little to none'); a moved object must not monopolise its new "
    "pool (placement's rule)"
)


def alike(a: Profile, b: Profile, rules: AlikeRules) -> Likeness:
    gap = abs(a.sequential_share - b.sequential_share)
    lo, hi = sorted((a.rereference, b.rereference))
    ratio = hi / lo if lo > 0 else math.inf
    wlo, whi = sorted((a.largest_working_set, b.largest_working_set))
    ws = whi / wlo if wlo > 0 else math.inf
    why: list[str] = []
    if a.klass != b.klass:
        why.append(f"{a.name} is {a.klass}, {b.name} is {b.klass}")
    if gap > rules.sequential_gap:
        why.append(
            f"sequential shares {a.sequential_share:.0%} and {b.sequential_share:.0%} differ by more than "
            f"{rules.sequential_gap:.0%}"
        )
    if ratio > rules.rereference_ratio:
        why.append(
            f"re-references {a.rereference:,.1f} and {b.rereference:,.1f} getpages per page differ by more "
            f"than a factor {rules.rereference_ratio:g}"
        )
    if ws > rules.working_set_ratio:
        why.append(
            f"the largest working sets, {a.largest_working_set:,.0f} and {b.largest_working_set:,.0f} pages, "
            f"differ by more than a factor {rules.working_set_ratio:g}"
        )
    if a.getpages_per_s <= 0 or b.getpages_per_s <= 0:
        why.append("no getpages to compare")
    worst = max(
        gap / rules.sequential_gap,
        math.log(ratio) / math.log(rules.rereference_ratio),
        math.log(ws) / math.log(rules.working_set_ratio),
    )
    score = 0.0 if a.klass != b.klass or math.isinf(worst) else max(0.0, 1.0 - worst)
    return Likeness(a, b, gap, ratio, ws, score, not why, why)


def monopolist(objects: Sequence[ObjectState], size: int, rules: AlikeRules, only: str | None = None) -> str | None:
    """The object that would monopolise a pool of `size` buffers holding `objects` (seed 000: 'separate
    objects that monopolize a pool'), with why; None when none does. `only`: that object's verdict alone
    (an object moved into a pool that another already monopolises is judged by itself)."""
    total = sum(o.getpages_per_s for o in objects)
    lo, hi = rules.monopoly_share
    for o in sorted(objects, key=lambda o: -o.getpages_per_s):
        if only is not None and o.name != only:
            continue
        share = o.getpages_per_s / total if total > 0 else 0.0
        if o.klass == "RAMOS" and o.distinct_pages >= rules.monopoly_pages * size and lo <= share <= hi:
            return (
                f"{o.name} touches {o.distinct_pages:,} pages ({o.distinct_pages / size:.0%} of {size:,} buffers) "
                f"with {share:.0%} of the getpages: it would monopolise the pool"
            )
    return None
