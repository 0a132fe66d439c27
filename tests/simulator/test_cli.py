"""`poolsight simulate`'s options that name pools: a trace keyed by source, names that match
nothing, and a policy that cannot apply."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two pools of one member: pools are keyed DB2A/BP1 and DB2A/BP2."""
    rng = random.Random(5)
    path = tmp_path_factory.mktemp("cli") / "trace.csv"
    rows = ["time,pool,object,page,access,function,source"]
    for i in range(6000):
        pool = "BP1" if i % 3 else "BP2"
        rows.append(f"{i * 0.01:.2f},{pool},DB.TS{i % 4},{int(rng.paretovariate(1.1)) % 2000},R,GP,DB2A")
    path.write_text("\n".join(rows) + "\n")
    return path


def _simulate(trace: Path, tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp / "out.json"
    r = subprocess.run(
        [sys.executable, "-m", "poolsight.cli", "simulate", str(trace), "--json", str(out), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    return r, (json.loads(out.read_text()) if r.returncode == 0 else {})


def test_a_pool_is_named_within_its_source_or_in_full(trace: Path, tmp_path: Path) -> None:
    r, res = _simulate(trace, tmp_path, "--pool-size", "BP1=300", "--pool-size", "DB2A/BP2=150")
    assert r.returncode == 0, r.stderr
    pools = res["pools"]
    assert isinstance(pools, dict)
    assert pools["DB2A/BP1"]["current_size"] == 300 and pools["DB2A/BP2"]["current_size"] == 150
    current = [c["size_pages"] for c in pools["DB2A/BP1"]["curve"] if c["avoided_sync_reads"] == 0]
    assert 300 in current


def test_a_name_that_matches_no_pool_is_refused(trace: Path, tmp_path: Path) -> None:
    r, _ = _simulate(trace, tmp_path, "--pool-size", "BP9=300")
    assert r.returncode == 2
    assert "--pool-size BP9: no such pool in the trace" in r.stderr and "DB2A/BP1" in r.stderr


def test_a_policy_applies_to_the_pool_named_within_its_source(trace: Path, tmp_path: Path) -> None:
    r, res = _simulate(trace, tmp_path, "--policy", "fifo", "--pool-size", "300")
    assert r.returncode == 0, r.stderr
    pools = res["pools"]
    assert isinstance(pools, dict)
    assert {p["policy"] for p in pools.values()} == {"fifo"}
    r, res = _simulate(trace, tmp_path, "--policy", "fifo", "--pool-size", "BP1=300")
    assert r.returncode == 2
    assert "--policy fifo cannot apply to DB2A/BP2" in r.stderr
