"""bench-pipeline's freshness breakdown: a pane's seconds split at its emission and at the
commit that made it visible, and no split when no commit lies in between."""

from __future__ import annotations

import pytest

from bench.pipeline import stages


def test_a_pane_splits_at_its_emission_and_the_last_commit_before_it_was_seen() -> None:
    # Sent at 100, emitted at 101.5; commits at 99 (before: not it), 103 and 104; seen at 104.5.
    got = stages(100.0, 101.5, 104.5, [99.0, 103.0, 104.0, 106.0])
    assert got is not None
    assert got == pytest.approx({"close": 1.5, "commit": 2.5, "visible": 0.5})
    assert sum(got.values()) == pytest.approx(4.5)  # the pane's freshness


def test_no_commit_between_emission_and_sight_gives_no_breakdown() -> None:
    assert stages(100.0, 101.5, 104.5, [99.0, 105.0]) is None
