"""One VPSIZE per pool when the budget, a placement and the shrink rule meet (advice/combine.py)."""

from __future__ import annotations

from typing import Any

from poolsight.advice.combine import combine, vpsizes
from poolsight.advice.model import Advice


def _advice(kind: str, pool: str, command: list[str], predicted: dict[str, Any] | None = None) -> Advice:
    return Advice(kind, "DB2A", pool, [], {}, predicted or {}, {}, command, f"{kind} {pool}")


def _placement(today: int, rest: int, new: int, before: float, after: float) -> Advice:
    a = _advice(
        "placement",
        "BP1",
        [f"-ALTER BUFFERPOOL(BP1) VPSIZE({rest})", f"-ALTER BUFFERPOOL(BP3) VPSIZE({new})"],
        {
            "pools": {
                "BP1": {"size_before": today, "size_after": rest, "sync_reads_per_s_before": before},
                "BP3": {"size_before": 0, "size_after": new},
            },
            "sync_reads_per_s_before": before,
            "sync_reads_per_s_after": after,
            "avoided_sync_reads_per_s": before - after,
            "cpu_seconds_per_24h": (before - after) * 2.0,
            "elapsed_seconds_per_24h": (before - after) * 3.0,
        },
    )
    a.objects = ["APP.HISTORY"]
    return a


def test_a_budget_and_a_placement_on_one_pool_become_the_placement_on_the_budgets_size() -> None:
    budget = _advice("budget", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(40000)"])
    shrink = _advice("shrink", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(20000)"])
    other = _advice("budget", "BP2", ["-ALTER BUFFERPOOL(BP2) VPSIZE(9000)"])
    first = _placement(30000, 28000, 2000, 100.0, 80.0)
    asked: list[int] = []

    def again(a: Advice, size: int) -> Advice | None:
        asked.append(size)
        assert a is first
        return _placement(size, size - 2500, 2500, 70.0, 50.0)  # at 40,000: 70 with the budget alone

    out = combine([budget, first, shrink, other], again)
    assert asked == [40000]
    assert [a.kind for a in out] == ["placement", "budget"] and out[1] is other
    p = out[0]
    assert vpsizes(out) == {("DB2A", "BP1"): [37500], ("DB2A", "BP3"): [2500], ("DB2A", "BP2"): [9000]}
    # Told from today: 100 sync reads/s at 30,000 buffers, 50 with the budget's 40,000 split.
    assert p.predicted["sync_reads_per_s_before"] == 100.0 and p.predicted["sync_reads_per_s_after"] == 50.0
    assert p.predicted["sync_reads_per_s_at_budget_size"] == 70.0
    assert p.predicted["avoided_sync_reads_per_s"] == 50.0 and p.predicted["cpu_seconds_per_24h"] == 100.0
    assert p.predicted["pools"]["BP1"]["size_before"] == 30000 and p.predicted["pools"]["BP1"]["size_after"] == 37500
    assert p.evidence["budget"]["vpsize"] == 40000 and "one VPSIZE for BP1" in p.evidence["combined"]
    assert "40,000 buffers" in p.summary and "100.0 -> 50.0" in p.summary


def test_a_placement_that_no_longer_saves_at_the_budgets_size_goes_and_the_budget_says_so() -> None:
    budget = _advice("budget", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(40000)"])
    shrink = _advice("shrink", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(20000)"])
    out = combine([budget, _placement(30000, 28000, 2000, 100.0, 80.0), shrink], lambda a, size: None)
    assert out == [budget]
    assert "no longer saves enough at 40,000 buffers" in budget.evidence["placement_dropped"]
    assert "shrink BP1" in budget.evidence["shrink_dropped"]


def test_a_placement_without_a_budget_stands_and_the_shrink_rule_gives_way() -> None:
    first = _placement(30000, 28000, 2000, 100.0, 80.0)
    shrink = _advice("shrink", "BP1", ["-ALTER BUFFERPOOL(BP1) VPSIZE(20000)"])
    lone = _advice("shrink", "BP4", ["-ALTER BUFFERPOOL(BP4) VPSIZE(4000)"])
    out = combine([first, shrink, lone], None)
    assert out == [first, lone] and "shrink_dropped" in first.evidence
    assert vpsizes(out) == {("DB2A", "BP1"): [28000], ("DB2A", "BP3"): [2000], ("DB2A", "BP4"): [4000]}
