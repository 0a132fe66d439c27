"""bench-pipeline's rounds: each round's phases in a rotated order, the median round's figures,
and ratios as the median of each round's own."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bench.pipeline import Phase, median_phase, median_ratio, play_rounds, rotated


def _phase(visible: int, seconds: float) -> Phase:
    return Phase(visible, visible, 1.0, seconds, [], {}, {}, 0)


def test_every_phase_leads_one_round_in_turn() -> None:
    kinds = ["configured", "relaxed", "lru"]
    orders = [rotated(kinds, r) for r in range(4)]
    assert orders == [
        ["configured", "relaxed", "lru"],
        ["relaxed", "lru", "configured"],
        ["lru", "configured", "relaxed"],
        ["configured", "relaxed", "lru"],
    ]
    assert rotated(["configured"], 5) == ["configured"]


def test_the_median_round_is_the_middle_rate_not_the_middle_run() -> None:
    # Rates 900, 1,000 and 500 getpages/s in that order: the median is the first run.
    runs = [_phase(900, 1.0), _phase(2000, 2.0), _phase(1000, 2.0)]
    assert median_phase(runs) is runs[0]
    assert median_phase(runs).rate() == pytest.approx(900.0)


def test_an_even_count_reports_the_lower_middle_round_whole() -> None:
    # Its rate is the rate of the round whose getpages and seconds are printed beside it.
    runs = [_phase(800, 1.0), _phase(1000, 1.0), _phase(600, 1.0), _phase(1200, 1.0)]
    assert median_phase(runs) is runs[0]  # 800: the lower of the middle two
    assert median_phase(runs).rate() == pytest.approx(800.0)


def test_a_ratio_pairs_the_runs_of_one_round() -> None:
    # Round by round 1.0x, 2.0x, 1.2x: the median ratio is 1.2; the ratio of the median rates
    # (1,000 over 600) would be 1.67.
    configured = [_phase(1000, 1.0), _phase(1200, 1.0), _phase(600, 1.0)]
    lru = [_phase(1000, 1.0), _phase(600, 1.0), _phase(500, 1.0)]
    assert median_ratio(configured, lru) == pytest.approx(1.2)
    with pytest.raises(ValueError):
        median_ratio(configured, lru[:2])


class _Stack:
    """run() as flat_out calls it: each phase on a job of its own, `then` on that job; rates set
    by kind and round, so the paced phase's inputs can be told apart."""

    def __init__(self, rates: dict[str, list[int]]) -> None:
        self.rates = rates
        self.ran: list[str] = []
        self.paced: list[tuple[str, list[float]]] = []

    def run(self, kind: str, then: Callable[[str, Phase], None] | None) -> Phase:
        r = sum(1 for k in self.ran if k == kind)
        self.ran.append(kind)
        phase = _phase(self.rates[kind][r], 1.0)
        if then is not None:
            then(f"job-{len(self.ran)}", phase)
        return phase

    def pace(self, jid: str, configured: list[Phase]) -> None:
        self.paced.append((jid, [x.rate() for x in configured]))


def test_rounds_rotate_and_the_paced_phase_follows_the_last_configured_round_on_its_job() -> None:
    stack = _Stack({"configured": [900, 800, 1000], "lru": [1500, 1400, 1600]})
    runs = play_rounds(["configured", "lru"], 3, stack.run, stack.pace)
    assert stack.ran == ["configured", "lru", "lru", "configured", "configured", "lru"]
    assert [x.rate() for x in runs["configured"]] == [900, 800, 1000]
    assert [x.rate() for x in runs["lru"]] == [1500, 1400, 1600]
    # Once, on the fifth phase's job (round 3's configured one), with all three configured rounds.
    assert stack.paced == [("job-5", [900.0, 800.0, 1000.0])]
    assert median_phase(runs["configured"]).rate() == pytest.approx(900.0)


def test_one_round_paces_on_the_configured_job_whatever_follows() -> None:
    stack = _Stack({"configured": [700], "relaxed": [900], "lru": [1000]})
    runs = play_rounds(["configured", "relaxed", "lru"], 1, stack.run, stack.pace)
    assert stack.ran == ["configured", "relaxed", "lru"]
    assert stack.paced == [("job-1", [700.0])]
    assert {k: len(v) for k, v in runs.items()} == {"configured": 1, "relaxed": 1, "lru": 1}
