"""`poolsight advise` on input it cannot use: a clear error and a non-zero exit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import POOLSIGHT, ROOT


def _advise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*POOLSIGHT, "advise", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_nothing_readable_exits_non_zero_and_says_where(tmp_path: Path) -> None:
    r = _advise(str(tmp_path))
    assert r.returncode == 2 and f"{tmp_path}/trace.csv: no such file" in r.stderr
    (tmp_path / "trace.csv").write_text("time,source,pool,object,page,access,function,hit\nnoon,X,BP1,A.B,1,R,G,N\n")
    r = _advise(str(tmp_path))
    assert r.returncode == 2
    assert "no readable getpages" in r.stderr and "trace.csv:2: time: time 'noon' is not a finite number" in r.stderr


def test_bad_limits_are_refused(tmp_path: Path) -> None:
    r = _advise(str(tmp_path), "--min", "BP1")
    assert r.returncode == 2 and "--min 'BP1': use POOL=BUFFERS" in r.stderr
