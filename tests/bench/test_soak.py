"""bench/soak.py's growth measures, against series whose growth is known."""

from __future__ import annotations

import pytest

from bench.soak import growth, peak_growth


def test_a_steady_rise_is_the_same_by_slope_and_by_peaks() -> None:
    times = [10.0 * i for i in range(91)]  # 15 minutes, a sample every 10 s
    values = [500.0 + 0.05 * t for t in times]  # 30 MB per 10 minutes
    assert growth(times, values) == pytest.approx(30.0)
    assert peak_growth(times, values) == pytest.approx(30.0, rel=0.03)


def test_a_bounded_cycle_has_flat_peaks_whatever_its_phase_at_the_end() -> None:
    # A replay every 2 minutes: 200 MB at rest, 560 MB at its height; the run stops mid-rise.
    times = [10.0 * i for i in range(100)]
    values = [200.0 + 30.0 * (i % 12) for i in range(100)]
    assert peak_growth(times, values) == 0.0
    assert abs(growth(times, values)) > 5.0  # what the slope alone made of it
