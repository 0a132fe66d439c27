"""How alike two ranges of a pool's workload are, so a change in the numbers can be told
from a change in the work (seed 000: 27 objects new since the baseline).

A workload is its getpages per (object, access type). The similarity of two is the
overlap of their shares: 1 - ½ Σ |p_i - q_i| over every (object, type) in either,
where p and q are each range's getpages as shares of its total. 1 is the same mix of
objects and random / sequential / list work; 0 is nothing in common. The getpage
rate is reported beside it, not in it: more of the same work is still the same work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Similarity:
    score: float | None  # None when a range has no getpages
    objects_new: list[str]  # in the second range only
    objects_gone: list[str]  # in the first range only
    getpages_per_s_a: float | None
    getpages_per_s_b: float | None
    sequential_share_a: float | None  # sequential and list getpages over all
    sequential_share_b: float | None
    mix_a: dict[str, float]  # share of each access type (random, sequential, list) in the first range
    mix_b: dict[str, float]

    @property
    def rate_change(self) -> float | None:
        """Second range's getpage rate over the first's, minus 1."""
        a, b = self.getpages_per_s_a, self.getpages_per_s_b
        return None if not a or b is None else b / a - 1.0


def _shares(mix: Mapping[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    total = sum(mix.values())
    return {k: v / total for k, v in mix.items() if v} if total > 0 else {}


def _sequential(mix: Mapping[tuple[str, str], float]) -> float | None:
    total = sum(mix.values())
    return sum(v for (_, t), v in mix.items() if t != "random") / total if total > 0 else None


def _mix(mix: Mapping[tuple[str, str], float]) -> dict[str, float]:
    total = sum(mix.values())
    out: dict[str, float] = {}
    for (_, t), v in mix.items():
        out[t] = out.get(t, 0.0) + v / total
    return out if total > 0 else {}


def similarity(
    a: Mapping[tuple[str, str], float],
    b: Mapping[tuple[str, str], float],
    seconds_a: float = 0.0,
    seconds_b: float = 0.0,
) -> Similarity:
    """a, b: getpages per (object, access type name) of each range; seconds: each range's length."""
    pa, pb = _shares(a), _shares(b)
    score = None if not pa or not pb else 1.0 - 0.5 * sum(abs(pa.get(k, 0.0) - pb.get(k, 0.0)) for k in {*pa, *pb})
    objs_a = {o for (o, _), v in a.items() if v}
    objs_b = {o for (o, _), v in b.items() if v}
    return Similarity(
        score=score,
        objects_new=sorted(objs_b - objs_a),
        objects_gone=sorted(objs_a - objs_b),
        getpages_per_s_a=sum(a.values()) / seconds_a if seconds_a > 0 else None,
        getpages_per_s_b=sum(b.values()) / seconds_b if seconds_b > 0 else None,
        sequential_share_a=_sequential(a),
        sequential_share_b=_sequential(b),
        mix_a=_mix(a),
        mix_b=_mix(b),
    )
