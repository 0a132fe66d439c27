"""Every address comes from the settings: no module but infra/endpoints.py (the default bind
host) and infra/config.py (what a container binds) spells a host.

A string literal naming loopback in code (docstrings and comments may say it) would be an
address that [endpoints] and [bind] cannot change."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {Path("infra/endpoints.py"), Path("infra/config.py")}  # DEFAULT_BIND_HOST, CONTAINER_BIND_HOST
LITERALS = ("127.0.0.1", "localhost", "0.0.0.0", "[::1]")


def _sources() -> list[Path]:
    dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return sorted(p for folder in set(dirs.values()) for p in (ROOT / folder).rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _fixed_addresses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [f"{node.lineno}: {lit}" for lit in LITERALS if lit in node.value]
        elif isinstance(node, ast.Name) and node.id == "HOST":
            found.append(f"{node.lineno}: HOST")
        elif isinstance(node, ast.ImportFrom):
            found += [f"{node.lineno}: import HOST" for alias in node.names if alias.name == "HOST"]
    return found


def test_the_scan_sees_the_sources() -> None:
    names = {p.relative_to(ROOT) for p in _sources()}
    assert {Path("infra/services.py"), Path("flink-jobs/common.py"), Path("dashboards/server.py")} <= names


def test_no_module_fixes_an_address() -> None:
    offenders = {
        str(p.relative_to(ROOT)): hits
        for p in _sources()
        if p.relative_to(ROOT) not in ALLOWED and (hits := _fixed_addresses(p))
    }
    assert offenders == {}, "use the Settings properties (kafka_bootstrap, trino_url, bind_host, ...)"


def test_the_scan_finds_a_fixed_address(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Binds 127.0.0.1 (a docstring may say so)."""\n'
        "from poolsight.infra.config import HOST\n"
        'URL = f"http://127.0.0.1:{8080}"\n'
    )
    assert _fixed_addresses(bad) == ["2: import HOST", "3: 127.0.0.1"]
