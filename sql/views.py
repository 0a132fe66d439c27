"""The Trino views of sql/views.sql, with the catalog and namespace of poolsight.names."""

from __future__ import annotations

import re
from pathlib import Path

from poolsight.names import NAMESPACE, TRINO_CATALOG
from poolsight.sql.curve import curve_sql

VIEWS_SQL = Path(__file__).resolve().parent / "views.sql"
SCHEMA = f"{TRINO_CATALOG}.{NAMESPACE}"
# A statement naming ${grain} is one view per rollup grain (sql/rollups.py): ${grainly} names it.
GRAIN_VIEWS = {"hour": "hourly", "day": "daily"}


def view_statements() -> list[tuple[str, str]]:
    """(view name, CREATE OR REPLACE VIEW statement) in file order."""
    text = "\n".join(line for line in VIEWS_SQL.read_text().splitlines() if not line.lstrip().startswith("--"))
    # sim_curve_latest's body is the curve's one definition (curve.sql), shared with the pool page.
    text = text.replace("${curve_latest}", curve_sql("latest"))
    out: list[tuple[str, str]] = []
    stmts: list[str] = []
    for stmt in (s.strip() for s in text.split(";")):
        if "${grain}" in stmt:
            stmts += [stmt.replace("${grainly}", ly).replace("${grain}", g) for g, ly in GRAIN_VIEWS.items()]
        elif stmt:
            stmts.append(stmt)
    for stmt in stmts:
        m = re.search(r"VIEW\s+\$\{schema\}\.(\w+)", stmt)
        if m is None:
            raise ValueError(f"{VIEWS_SQL}: not a view statement: {stmt[:60]}")
        out.append((m.group(1), stmt.replace("${schema}", SCHEMA)))
    return out


VIEWS = tuple(name for name, _ in view_statements())
