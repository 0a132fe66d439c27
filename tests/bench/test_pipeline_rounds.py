"""bench-pipeline's rounds: each round's phases in a rotated order, the median round's figures,
and ratios as the median of each round's own."""

from __future__ import annotations

import pytest

from bench.pipeline import Phase, median_phase, median_rate, median_ratio, rotated


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
    assert median_rate(runs) == pytest.approx(900.0)


def test_an_even_count_reports_the_mean_of_the_middle_two_and_the_lower_round() -> None:
    runs = [_phase(800, 1.0), _phase(1000, 1.0), _phase(600, 1.0), _phase(1200, 1.0)]
    assert median_rate(runs) == pytest.approx(900.0)
    assert median_phase(runs) is runs[0]  # 800: the lower of the middle two


def test_a_ratio_pairs_the_runs_of_one_round() -> None:
    # Round by round 1.0x, 2.0x, 1.2x: the median ratio is 1.2; the ratio of the median rates
    # (1,000 over 700) would be 1.43.
    configured = [_phase(1000, 1.0), _phase(1200, 1.0), _phase(600, 1.0)]
    lru = [_phase(1000, 1.0), _phase(600, 1.0), _phase(500, 1.0)]
    assert median_ratio(configured, lru) == pytest.approx(1.2)
    with pytest.raises(ValueError):
        median_ratio(configured, lru[:2])
