"""A misspelt setting is an error, never a default silently used: each section and key of
poolsight.toml and each POOLSIGHT_* variable must be one of the schema's (settings_schema.py),
and the error names the closest valid one.

Values are not checked here: load_settings and the modules that read each setting do that.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from .endpoints import ConfigError
from .settings_schema import DOCS, PREFIX, SECTIONS, SETTINGS, VARIABLES

_SECTIONS = {s.name: s for s in SECTIONS}


def _keys(section: str) -> frozenset[str] | None:
    """The keys `section` takes; None: any key."""
    out: set[str] = set()
    for s in SETTINGS:
        if s.section == section:
            keys = s.keys()
            if keys is None:
                return None
            out.update(keys)
    return frozenset(out)


def _hint(name: str, known: Iterable[str], show: str, listed: bool = True) -> str:
    """': did you mean X?' with the closest known name, else the known names (or where they are)."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f": did you mean {show.format(close[0])}?"
    if listed:
        return f" (known: {', '.join(show.format(k) for k in known)})"
    return f" (every one is in {DOCS})"


def check_file(conf: Mapping[str, Any], where: str) -> None:
    """Raise ConfigError at the first section or key of `conf` (a parsed poolsight.toml) the
    schema does not know; `where` names the file."""
    top = [name for name in _SECTIONS if "." not in name]
    for name, table in conf.items():
        if name not in _SECTIONS:
            raise ConfigError(f"{where}: unknown section [{name}]{_hint(name, top, '[{}]')}")
        _check_section(name, table, where)


def _check_section(section: str, table: Any, where: str) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [{section}] is a section, not a value")
    keys = _keys(section)
    if keys is None:
        return
    for key, value in table.items():
        dotted = f"{section}.{key}"
        if dotted in _SECTIONS:
            _check_section(dotted, value, where)
        elif isinstance(value, dict):  # a nested section: TOML's [a.b]
            nested = [name for name in _SECTIONS if name.startswith(f"{section}.")]
            raise ConfigError(f"{where}: unknown section [{dotted}]{_hint(dotted, nested or _SECTIONS, '[{}]')}")
        elif key not in keys:
            why = _SECTIONS[section].refused.get(key)
            note = f" ({why})" if why else ""
            raise ConfigError(f"{where}: [{section}] unknown key {key!r}{_hint(key, keys, '{!r}')}{note}")


def check_environment(env: Mapping[str, str]) -> None:
    """Raise ConfigError at the first POOLSIGHT_* variable of `env` the schema does not know."""
    for name in sorted(env):
        if name.startswith(PREFIX) and name not in VARIABLES:
            # Compared without the prefix, which every name shares and would make any two alike.
            rest = [v.removeprefix(PREFIX) for v in VARIABLES]
            hint = _hint(name.removeprefix(PREFIX), rest, PREFIX + "{}", listed=False)
            raise ConfigError(f"environment: unknown variable {name}{hint}")
