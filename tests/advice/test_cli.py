"""`poolsight advise` on input it cannot use: a clear error and a non-zero exit."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import POOLSIGHT, ROOT


def _advise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POOLSIGHT, "advise", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_nothing_readable_exits_non_zero_and_says_where(tmp_path: Path) -> None:
    r = _advise(str(tmp_path))
    assert r.returncode == 2 and f"{tmp_path}: no trace (trace.csv, trace.smf, trace.gtf" in r.stderr
    (tmp_path / "trace.csv").write_text("time,source,pool,object,page,access,function,hit\nnoon,X,BP1,A.B,1,R,G,N\n")
    r = _advise(str(tmp_path))
    assert r.returncode == 2
    assert "no readable getpages" in r.stderr and "trace.csv:2: time: time 'noon' is not a finite number" in r.stderr


def test_bad_limits_are_refused(tmp_path: Path) -> None:
    r = _advise(str(tmp_path), "--min", "BP1")
    assert r.returncode == 2 and r.stderr == "poolsight advise: argument --min: BP1: use POOL=BUFFERS\n"


def test_an_smf_trace_advises_as_its_csv_does(tmp_path: Path) -> None:
    """A shop's SMF trace (with its catalog unload) gives the advice the same workload's CSV gives."""
    csv_dir, smf_dir = tmp_path / "csv", tmp_path / "smf"
    g = subprocess.run(
        [*POOLSIGHT, "generate", "mixed", "--output", str(csv_dir), "--getpages", "80000", "--trace-format", "csv,smf"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert g.returncode == 0, g.stderr
    shutil.copytree(csv_dir, smf_dir)
    (smf_dir / "trace.csv").unlink()
    (csv_dir / "trace.smf").unlink()
    docs = []
    for d in (csv_dir, smf_dir):
        r = _advise(str(d), "--budget-gb", "1", "--json", str(d / "advice.json"))
        assert r.returncode == 0, r.stderr
        docs.append(json.loads((d / "advice.json").read_text()))
    for d in docs:
        d["input"].pop("directory")
    assert docs[0] == docs[1]
    assert docs[0]["input"]["getpages"] > 80_000
