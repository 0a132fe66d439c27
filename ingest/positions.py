"""Where collectors remember how far they got: one small JSON file per input file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def state_file(state_dir: Path, path: Path) -> Path:
    """The state file of an input file (named by a hash of its absolute path)."""
    return state_dir / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".json")


def read_state(state_dir: Path, path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(state_file(state_dir, path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_state(state_dir: Path, path: Path, state: dict[str, Any]) -> None:
    """Atomically: a crash leaves the old state or the new one, never half of one."""
    state_dir.mkdir(parents=True, exist_ok=True)
    target = state_file(state_dir, path)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, target)
