"""The GBP's own rules on the simulated grid: a RATIO with no directory reclaims, a size where no
write fails for lack of storage, and seed 004's pureScale sizing shown beside as a check.

Both rules lean on the invariant DATA-SHARING.md states and the simulation checks: reclaims and
failed writes fall as the GBP grows. So a grid point with zero reclaims whose structure fits in
today's proves its RATIO at today's size (same RATIO, at least as many directory and data entries).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from poolsight.advice.group_model import GridPoint, GroupSurface
from poolsight.simulator.group_grid import data_entries_for

SAME = 1e-9  # relative: a structure this close to today's is today's


@dataclass(frozen=True)
class RatioChoice:
    ratio: float
    evidence: GridPoint  # the zero-reclaim grid point the choice rests on
    structure_mb: float  # the structure the RATIO is for: today's, or the smallest that reaches zero
    grows: bool  # today's structure has no RATIO without reclaims: the structure must grow too

    def data_entries(self, page_size: int) -> int:
        return data_entries_for(self.structure_mb, self.ratio, page_size)


def zero_reclaim_ratio(surface: GroupSurface) -> RatioChoice | None:
    """The smallest grid RATIO with zero directory reclaims at today's structure size (a point of
    that RATIO no larger than today's has none); else the smallest structure that has none (its
    smallest RATIO). None: no grid point is free of reclaims."""
    now = surface.current.structure_mb
    zero = [p for p in surface.points if p.total.directory_reclaims == 0]
    fits = [p for p in zero if p.structure_mb <= now * (1 + SAME)]
    if fits:
        ratio = min(p.ratio for p in fits)
        evidence = max((p for p in fits if p.ratio == ratio), key=lambda p: p.structure_mb)
        return RatioChoice(ratio, evidence, now, False)
    if not zero:
        return None
    p = min(zero, key=lambda p: (p.structure_mb, p.ratio))
    return RatioChoice(p.ratio, p, p.structure_mb, True)


def safe_size(surface: GroupSurface) -> GridPoint | None:
    """The smallest grid point with no write failed for lack of storage and no more castout pages
    than today's (castout keeps under its thresholds as today), at today's RATIO when the grid has
    one there, else at any RATIO."""
    cur = surface.current
    ok = [
        p
        for p in surface.points
        if p.total.writes_failed_no_storage == 0 and p.total.castout_pages <= cur.total.castout_pages * (1 + SAME)
    ]
    same = [p for p in ok if math.isclose(p.ratio, cur.ratio)]
    return min(same or ok, key=lambda p: (p.structure_mb, p.ratio), default=None)


@dataclass(frozen=True)
class Seed004:
    """Seed 004's rules of thumb (pureScale): GBP = 40-50 % of the sum of the LBPs for two members,
    35-40 % for three or more, at least 25 %; one GBP page per 16 LBP pages added."""

    members: int
    gbp_mb: float  # one copy: the rule compares the GBP with the LBPs, not the duplexed cost
    lbp_mb: float
    added_lbp_pages: int = 0
    added_gbp_pages: int = 0

    @property
    def share(self) -> float:
        return self.gbp_mb / self.lbp_mb if self.lbp_mb > 0 else math.inf

    @property
    def band(self) -> tuple[float, float]:
        return (0.40, 0.50) if self.members == 2 else (0.35, 0.40)

    @property
    def verdict(self) -> str:
        lo, hi = self.band
        return "below" if self.share < lo else "above" if self.share > hi else "within"

    @property
    def text(self) -> str:
        lo, hi = self.band
        who = "two members" if self.members == 2 else f"{self.members} members"
        out = (
            f"GBP is {round(self.share * 100)} % of the members' LBPs: {self.verdict} the "
            f"{round(lo * 100)}-{round(hi * 100)} % seed 004 suggests for {who}"
        )
        if self.share < 0.25:
            out += " (and below its 25 % minimum)"
        if self.added_lbp_pages > 0:
            out += (
                f"; {self.added_lbp_pages:,} LBP pages added: seed 004 adds one GBP page per 16, "
                f"{self.added_lbp_pages // 16:,}, the budget adds {self.added_gbp_pages:,}"
            )
        return out

    def as_dict(self) -> dict[str, object]:
        lo, hi = self.band
        return {
            "gbp_mb": self.gbp_mb,
            "lbp_mb": self.lbp_mb,
            "share": self.share,
            "suggested": [lo, hi],
            "minimum": 0.25,
            "verdict": self.verdict,
            "added_lbp_pages": self.added_lbp_pages,
            "added_gbp_pages": self.added_gbp_pages,
            "gbp_pages_per_16_lbp_pages": self.added_lbp_pages // 16,
            "text": self.text,
            "source": "seed 004 (pureScale rules of thumb), shown as a check: the advice follows the simulation",
        }
