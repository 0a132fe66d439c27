"""mypy over the package as Python imports it (`make lint`).

The import names `poolsight.*` are mapped from the top-level folders by
`[tool.setuptools.package-dir]` in pyproject.toml, a table mypy cannot read (nor can
it follow the import hook of an editable install). So this builds, from that table,
a tree of hard links laid out as the imports are (`poolsight/flink_jobs/...`), runs
mypy there with the project's settings, and reports every path in its source folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / ".venv" / "typecheck-tree"
SUFFIXES = (".py", ".pyi")


def package_dirs(root: Path = ROOT) -> dict[str, str]:
    """Import path (poolsight/flink_jobs) -> source folder (flink-jobs), from pyproject.toml."""
    conf = tomllib.loads((root / "pyproject.toml").read_text())
    mapping: dict[str, str] = conf["tool"]["setuptools"]["package-dir"]
    out = {name.replace(".", "/"): folder for name, folder in mapping.items()}
    out["tests"] = "tests"
    out["bench"] = "bench"
    return out


def build_tree(dirs: dict[str, str], root: Path = ROOT, tree: Path = TREE) -> None:
    shutil.rmtree(tree, ignore_errors=True)
    for target, folder in dirs.items():
        src = root / folder
        # Subpackages listed in the table are linked by their own entry.
        nested = {root / f for t, f in dirs.items() if t != target and t.startswith(target + "/")}
        for path in src.rglob("*"):
            if path.suffix not in SUFFIXES or any(n == path or n in path.parents for n in nested):
                continue
            if "__pycache__" in path.parts:
                continue
            dest = tree / target / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, dest)


def main() -> int:
    dirs = package_dirs()
    build_tree(dirs)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "poolsight",
            "tests",
            "bench",
            *sys.argv[1:],
        ],
        cwd=TREE,
        capture_output=True,
        text=True,
    )
    prefixes = sorted(dirs.items(), key=lambda kv: -len(kv[0]))
    pattern = re.compile(r"^(" + "|".join(re.escape(t) for t, _ in prefixes) + r")/")
    lookup = dict(prefixes)
    for line in (r.stdout + r.stderr).splitlines():
        print(pattern.sub(lambda m: lookup[m.group(1)] + "/", line))
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
