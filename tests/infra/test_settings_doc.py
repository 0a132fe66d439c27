"""docs/settings.md holds the table the schema generates, and the README sends readers there and
states the config file's search order as `_config_file` follows it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from poolsight.infra import settings_doc
from poolsight.infra.config import ConfigError, load_settings
from poolsight.infra.settings_schema import SETTINGS
from tests.conftest import ROOT
from tests.infra.isolated import isolated_env  # noqa: F401 (autouse here)


def test_the_page_holds_the_generated_table() -> None:
    page = settings_doc.PAGE.read_text()
    assert settings_doc.with_generated(page) == page, "stale: run `python -m poolsight.infra.settings_doc`"


def test_the_table_has_a_row_per_setting() -> None:
    rows = [ln for ln in settings_doc.table().splitlines() if ln.startswith("| ")][2:]
    assert len(rows) == len(SETTINGS)
    assert all(ln.count(" | ") == len(settings_doc.HEADER) - 1 for ln in rows)


def test_the_readme_links_the_reference() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "(docs/settings.md)" in readme


def _search_order(text: str) -> list[str]:
    """The three places a text names, in the order it names them."""
    marks = {"POOLSIGHT_CONFIG": "named", "./poolsight.toml": "cwd", "<home>/poolsight.toml": "home"}
    found = sorted((text.find(mark), where) for mark, where in marks.items() if mark in text)
    return [where for _, where in found]


def test_the_search_order_documented_is_the_codes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = Path(os.environ["POOLSIGHT_HOME"])
    home.mkdir()
    named, cwd = tmp_path / "named.toml", tmp_path / "poolsight.toml"
    for path, port in ((home / "poolsight.toml", 1001), (cwd, 1002), (named, 1003)):
        path.write_text(f"[ports]\ndashboard = {port}\n")
    monkeypatch.setenv("POOLSIGHT_CONFIG", str(named))
    order = [("named", load_settings().ports["dashboard"])]
    monkeypatch.delenv("POOLSIGHT_CONFIG")
    order.append(("cwd", load_settings().ports["dashboard"]))
    cwd.unlink()
    order.append(("home", load_settings().ports["dashboard"]))
    assert order == [("named", 1003), ("cwd", 1002), ("home", 1001)]
    named.unlink()  # named, it must exist
    monkeypatch.setenv("POOLSIGHT_CONFIG", str(named))
    with pytest.raises(ConfigError, match="file not found"):
        load_settings()
    readme = (ROOT / "README.md").read_text()
    config_part = readme[readme.index("### Configuration") :]
    sentence = re.split(r"\n\n", config_part)[1]
    assert _search_order(sentence) == [where for where, _ in order]
    assert _search_order(settings_doc.PAGE.read_text()) == [where for where, _ in order]
