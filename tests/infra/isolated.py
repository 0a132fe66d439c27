"""Settings tests without the machine's own POOLSIGHT_* variables: each test in a folder of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from poolsight.infra.config import Settings, load_settings


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Import it into a test module to use it there (autouse in that module only)."""
    for key in list(os.environ):
        if key.startswith("POOLSIGHT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POOLSIGHT_HOME", str(tmp_path / "home"))


def settings_with(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    """The settings with POOLSIGHT_<key>=value for each keyword."""
    for key, value in env.items():
        monkeypatch.setenv(f"POOLSIGHT_{key}", value)
    return load_settings()
