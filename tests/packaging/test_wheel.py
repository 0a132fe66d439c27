"""A non-editable install works anywhere: the wheel carries the compiled kernel, and the
installed command keeps its state in the poolsight home, never in site-packages.

The wheel is built from a copy of the source tree (so nothing of the checkout's own
build output can leak in), installed into a fresh virtualenv outside the checkout,
and run from an empty directory. Its dependencies come from the development venv
through a .pth file (a second copy of PyFlink would cost minutes and prove nothing
about this package).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT

SKIP = {
    ".venv",
    ".cache",
    "var",
    ".git",
    "build",
    "target",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
}


def _copy_sources(dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP or n.endswith((".so", ".egg-info"))}

    shutil.copytree(ROOT, dest, ignore=ignore)


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POOLSIGHT_") and k != "PYTHONPATH"}
    env.update(HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "xdg"))
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the fresh venv, its site-packages) with the wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    _copy_sources(src)
    # The checkout's cargo target folder: the kernel is not compiled again when unchanged.
    env = {**os.environ, "CARGO_TARGET_DIR": str(ROOT / "simulator" / "kernel" / "target")}
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = (tmp / "dist").glob("poolsight-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "poolsight-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    r = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return venv, site


def test_the_installed_package_is_the_wheels_with_its_kernel(installed: tuple[Path, Path], tmp_path: Path) -> None:
    venv, site = installed
    r = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import json, poolsight, poolsight._kernel as k, poolsight.flink_jobs, poolsight.schemas.wire;"
            "import poolsight.sql.named as n, poolsight.sql.views as v;"
            "assert len(n.queries()) > 50 and dict(v.view_statements())['sim_curve_latest'];"  # the .sql files
            "print(json.dumps([poolsight.__file__, k.__file__, poolsight.flink_jobs.__file__, n.__file__]))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    for path in json.loads(r.stdout):
        assert Path(path).is_relative_to(site), path


def test_simulate_from_an_empty_directory_gives_the_checkouts_curve(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    venv, _ = installed
    rng = np.random.default_rng(11)
    n = 40_000
    pages = np.where(rng.random(n) < 0.7, rng.zipf(1.3, n) % 3_000, rng.integers(0, 20_000, n))
    trace = tmp_path / "blocks.csv"
    trace.write_text("t,blk\n" + "".join(f"{i * 0.001:.3f},{p}\n" for i, p in enumerate(pages)))
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [
        "simulate",
        str(trace),
        "--page-column",
        "blk",
        "--time-column",
        "t",
        "--pool-size",
        "1500",
        "--sizes",
        "500,1000,1500,3000,6000",
    ]
    out = {}
    for name, cmd in (
        ("installed", [str(venv / "bin" / "poolsight")]),
        ("checkout", [sys.executable, "-m", "poolsight.cli"]),
    ):
        r = subprocess.run(
            [*cmd, *args, "--json", str(tmp_path / f"{name}.json")],
            capture_output=True,
            text=True,
            cwd=empty if name == "installed" else ROOT,
            env=_clean_env(tmp_path),
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert out["installed"] == out["checkout"]
    assert "1500" in json.dumps(out["installed"])  # the curve holds the asked sizes
    assert list(empty.iterdir()) == []  # simulate keeps no state


def test_the_installed_command_keeps_its_state_outside_site_packages(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    venv, site = installed
    before = _files(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    r = subprocess.run(
        [str(venv / "bin" / "poolsight"), "status", "--json"],
        capture_output=True,
        text=True,
        cwd=empty,
        env=_clean_env(tmp_path),
        timeout=120,
    )
    assert r.returncode in (0, 3), r.stderr  # 3: services not running, as expected here
    services = json.loads(r.stdout)["services"]
    assert {s["name"] for s in services} >= {"kafka", "trino"}
    assert _files(site) == before
    assert list(empty.iterdir()) == []
    r = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from poolsight.infra.config import load_settings as s; print(s().home, s().cache_dir)",
        ],
        capture_output=True,
        text=True,
        cwd=empty,
        env=_clean_env(tmp_path),
    )
    home = tmp_path / "xdg" / "poolsight"
    assert r.stdout.split() == [str(home), str(home / ".cache")], r.stderr


def test_the_wheel_holds_what_a_user_runs_and_declares_what_it_imports(installed: tuple[Path, Path]) -> None:
    """No benchmark, chaos or profiling module and no GPL peer in the wheel; the typing marker
    ships; numpy and pyarrow, imported directly, are declared with the pins of pyproject.toml."""
    _, site = installed
    files = _files(site / "poolsight")
    assert "py.typed" in files and "_kernel.pyi" in files
    tools = sorted(f for f in files if Path(f).stem in {"bench", "chaos", "cpu_profile", "bench_history"})
    assert tools == []
    assert not (site / "bench").exists()
    for f in files:
        if f.endswith(".py"):
            text = (site / "poolsight" / f).read_text()
            assert "libcachesim" not in text and "playwright" not in text, f
    (meta,) = site.glob("poolsight-*.dist-info/METADATA")
    requires = {line.split(": ", 1)[1] for line in meta.read_text().splitlines() if line.startswith("Requires-Dist")}
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for name in ("numpy", "pyarrow"):
        (pin,) = [p for p in pins if p.startswith(name + "==")]
        assert pin in requires, (pin, requires)
