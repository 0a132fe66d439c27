"""The layers of docs/architecture.md hold, and `make lint` would catch a break: an upward
import and a cycle, each added to a scratch copy of the sources, fail import-linter; every
import inside a function says why it is there."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from tests.importcheck import check
from tests.typecheck import package_dirs

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = sorted(set(package_dirs().values()) - {"tests", "bench"})
LAZY = re.compile(r"#\s*lazy:\s*\S")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package folders and pyproject.toml, copied."""
    dest = tmp_path_factory.mktemp("layers")
    for folder in PACKAGE_FOLDERS:
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so", "kernel"))
    shutil.copy(ROOT / "pyproject.toml", dest)
    return dest


def _lint(root: Path, tmp_path: Path) -> tuple[int, str]:
    r = check(root, tmp_path / "tree")
    return r.returncode, r.stdout + r.stderr


def test_the_checkout_keeps_every_contract(tmp_path: Path) -> None:
    code, out = _lint(ROOT, tmp_path)
    assert code == 0, out
    assert re.search(r"Contracts: (\d+) kept, 0 broken", out), out


def _lint_with(scratch: Path, tmp_path: Path, module: str, line: str) -> tuple[int, str]:
    """Lint the scratch copy with `line` added to `module` (a path under it), then undo it."""
    path = scratch / module
    before = path.read_text()
    future = "from __future__ import annotations\n"
    path.write_text(before.replace(future, f"{future}{line}\n", 1))
    try:
        return _lint(scratch, tmp_path)
    finally:
        path.write_text(before)


def test_an_upward_import_fails(scratch: Path, tmp_path: Path) -> None:
    code, out = _lint_with(
        scratch, tmp_path, "simulator/engine.py", "from poolsight.dashboards import timerange  # noqa"
    )
    assert code != 0
    assert "Folders import only the folders below them BROKEN" in out
    assert "poolsight.simulator.engine -> poolsight.dashboards.timerange" in out


def test_a_cycle_between_modules_fails(scratch: Path, tmp_path: Path) -> None:
    # grain.py imports retention.py (the pane retention bounds a grain); the reverse closes a cycle.
    assert "poolsight.sql.retention" in (scratch / "sql" / "grain.py").read_text()
    code, out = _lint_with(scratch, tmp_path, "sql/retention.py", "from poolsight.sql import grain  # noqa")
    assert code != 0
    assert "No import cycles between the modules of any package BROKEN" in out


def test_a_second_road_to_trino_fails(scratch: Path, tmp_path: Path) -> None:
    code, out = _lint_with(scratch, tmp_path, "dashboards/server.py", "import trino  # noqa")
    assert code != 0
    assert "One road to Trino: only infra.trino imports the Trino client BROKEN" in out


def _function_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return sorted(
        node.lineno
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Import | ast.ImportFrom)
    )


def test_every_import_inside_a_function_says_why() -> None:
    """Only where start-up time needs it (a command that must not load PyFlink, Kafka or pyarrow
    before it knows it will use them), with a `# lazy: why` comment on the line or above its
    block of imports."""
    missing = []
    for folder in PACKAGE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = path.read_text().splitlines()
            for n in _function_imports(path):
                i = n - 1
                said = bool(LAZY.search(lines[i]))
                while not said and i > 0 and re.match(r"\s*(from \S+ )?import |\s*#", lines[i - 1]):
                    i -= 1
                    said = bool(LAZY.search(lines[i]))
                if not said:
                    missing.append(f"{path.relative_to(ROOT)}:{n}: {lines[n - 1].strip()}")
    assert missing == []
