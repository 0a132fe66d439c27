"""import-linter over the package as Python imports it (`make lint`): the layers, the absence of
cycles and the one road to Trino, as pyproject.toml's [tool.importlinter] declares them. Like
mypy, import-linter cannot read the package-dir table, so it reads a tree of hard links laid out
as the imports are (tests/typecheck.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.typecheck import ROOT, build_tree, package_dirs

TREE = ROOT / ".venv" / "importcheck-tree"


def check(root: Path = ROOT, tree: Path = TREE) -> subprocess.CompletedProcess[str]:
    """lint-imports over the checkout at `root` (its own pyproject.toml)."""
    build_tree(package_dirs(root), root, tree)
    # The compiled kernel imports no Python of ours; a module in its place puts it in the graph.
    (tree / "poolsight" / "_kernel.py").write_text('"""Stands for the compiled kernel."""\n')
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [str(Path(sys.executable).parent / "lint-imports"), str(root / "pyproject.toml"), "--no-cache"]
    return subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)


def main() -> int:
    r = check()
    print(r.stdout[r.stdout.find("Contracts") :] if "Contracts" in r.stdout else r.stdout, r.stderr, sep="")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
