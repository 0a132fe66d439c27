"""The advice service is alive before its first evaluation ends (which can take minutes)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from poolsight.advice.online import AdviceEvaluator
from poolsight.infra.config import Settings
from poolsight.infra.evaluator import run_loop
from poolsight.infra.services import health_advice


def test_a_heartbeat_before_the_first_evaluation(tmp_path: Path) -> None:
    s = cast(Settings, SimpleNamespace(run_dir=tmp_path))
    run_loop(AdviceEvaluator(s), s, 300, cycles=0)  # started, no evaluation finished yet
    assert health_advice(s).startswith("first evaluation running, started ")
