"""Workload similarity, against hand-worked mixes."""

from __future__ import annotations

import pytest

from poolsight.simulator.similarity import similarity


def test_the_same_mix_at_another_rate_is_fully_similar() -> None:
    a = {("A", "random"): 300.0, ("B", "sequential"): 100.0}
    b = {("A", "random"): 600.0, ("B", "sequential"): 200.0}
    s = similarity(a, b, 10.0, 10.0)
    assert s.score == pytest.approx(1.0)
    assert (s.getpages_per_s_a, s.getpages_per_s_b) == (40.0, 80.0)
    assert s.rate_change == pytest.approx(1.0)
    assert (s.objects_new, s.objects_gone) == ([], [])
    assert s.sequential_share_a == pytest.approx(0.25)
    assert s.mix_a == pytest.approx({"random": 0.75, "sequential": 0.25}) and s.mix_b == s.mix_a


def test_new_and_gone_objects_and_a_changed_mix() -> None:
    # a: A random 50 %, B sequential 50 %; b: A random 50 %, C random 25 %, A sequential 25 %.
    a = {("A", "random"): 50.0, ("B", "sequential"): 50.0}
    b = {("A", "random"): 50.0, ("C", "random"): 25.0, ("A", "sequential"): 25.0}
    s = similarity(a, b)
    # |.5-.5| + |.5-0| + |0-.25| + |0-.25| = 1.0, halved: 0.5 overlap.
    assert s.score == pytest.approx(0.5)
    assert s.objects_new == ["C"]
    assert s.objects_gone == ["B"]
    assert s.getpages_per_s_a is None and s.rate_change is None
    assert s.mix_b == pytest.approx({"random": 0.75, "sequential": 0.25})


def test_nothing_in_common_and_empty_ranges() -> None:
    assert similarity({("A", "random"): 1.0}, {("B", "random"): 5.0}).score == pytest.approx(0.0)
    assert similarity({}, {("B", "random"): 5.0}).score is None
