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


def test_with_its_checkpoint_the_commit_splits_at_the_trigger_and_the_completion() -> None:
    # Emitted at 101.5; checkpoints (triggered, completed) (100, 100.4) before it, (102, 102.8) its own,
    # (104, 104.3) after; commits at 103.1 (its checkpoint's) and 104.4; seen at 104.5.
    cps = [(100.0, 100.4), (102.0, 102.8), (104.0, 104.3)]
    got = stages(100.0, 101.5, 104.5, [99.0, 103.1, 104.4], cps)
    assert got == pytest.approx(
        {
            "close": 1.5,
            "commit": 1.6,
            "visible": 1.4,
            "checkpoint_wait": 0.5,
            "checkpoint": 0.8,
            "iceberg_commit": 0.3,
        }
    )
    assert got is not None and got["checkpoint_wait"] + got["checkpoint"] + got["iceberg_commit"] == pytest.approx(
        got["commit"]
    )


def test_a_checkpoint_the_jobmanager_forgot_falls_back_to_the_last_commit_before_sight() -> None:
    got = stages(100.0, 101.5, 104.5, [99.0, 103.0, 104.0], [(90.0, 90.5)])
    assert got == pytest.approx({"close": 1.5, "commit": 2.5, "visible": 0.5})
