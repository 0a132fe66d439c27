"""The simulated curve's one definition (curve.sql), in its two windows.

`latest` is the body of the view sim_curve_latest (views.sql: `AS ${curve_latest}`): every pool
over its latest 15 minutes of panes. `window` is the pool page's curve (queries/dashboard.sql
`pool_curve`: `${curve_window}`): one source and pool over a window the page gives (it knows the
pool's newest pane), with named parameters :source, :pool, :window_start, :window_end. The page
does not read the view with a filter: the view's `win` finds every pool's newest pane over the
whole of pool_pane before any filter applies (sql/README.md: the curve through sim_curve_latest
was the slow part of the page), so the page's variant gives the window as constants and adds the
source, pool and time filters to each scan itself, keeping partition pruning to the window.
`recent` is the body of the page table curve_page (queries/maintenance.sql refresh_curve_page,
`${curve_recent}`; sql/pages.py): every pool with a pane since :since, over the window before its
newest pane since then (the pool page's window when the page reads from :since), each scan
filtered on its time so that Iceberg reads the days since :since only.
The variants run the same CTEs and the same arithmetic, so they cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

CURVE_SQL = Path(__file__).resolve().parent / "curve.sql"
WINDOW_MINUTES = 15  # the window of sim_curve_latest and of the pool page's curve

_FILLS: dict[str, dict[str, str]] = {
    "latest": {
        "window": (
            f"SELECT source, pool, max(pane_end) - INTERVAL '{WINDOW_MINUTES}' MINUTE AS window_start, "
            "max(pane_end) AS window_end\n  FROM ${schema}.pool_pane GROUP BY source, pool"
        ),
        "io_only": "",
        "stats_only": "",
        "curve_only": "",
    },
    "recent": {
        "window": (
            f"SELECT source, pool, max(pane_end) - INTERVAL '{WINDOW_MINUTES}' MINUTE AS window_start, "
            "max(pane_end) AS window_end\n  FROM ${schema}.pool_pane WHERE pane_start >= :since GROUP BY source, pool"
        ),
        # the windows start at most WINDOW_MINUTES before :since (a newest pane just after it)
        "io_only": f"\n    AND i.pane_end > :since - INTERVAL '{WINDOW_MINUTES}' MINUTE",
        "stats_only": f"\n    AND s.interval_end > :since - INTERVAL '{WINDOW_MINUTES}' MINUTE",
        # and no pane after the window's end (a sim_curve commit before pool_pane's: the page's does too)
        "curve_only": (
            f"\n    AND c.pane_end > :since - INTERVAL '{WINDOW_MINUTES}' MINUTE AND c.pane_start < w.window_end"
        ),
    },
    "window": {
        "window": (
            "SELECT CAST(:source AS varchar) AS source, CAST(:pool AS varchar) AS pool,\n"
            "         CAST(:window_start AS timestamp(6) with time zone) AS window_start,\n"
            "         CAST(:window_end AS timestamp(6) with time zone) AS window_end"
        ),
        "io_only": (
            "\n    AND i.source = :source AND i.pool = :pool"
            " AND i.pane_end > :window_start AND i.pane_start < :window_end"
        ),
        "stats_only": (
            "\n    AND s.source = :source AND s.pool = :pool"
            " AND s.interval_end > :window_start AND s.interval_start < :window_end"
        ),
        "curve_only": (
            "\n    AND c.source = :source AND c.pool = :pool"
            " AND c.pane_end > :window_start AND c.pane_start < :window_end"
        ),
    },
}


def curve_sql(kind: Literal["latest", "window", "recent"]) -> str:
    """curve.sql's statement for one window, without its comment lines; `${schema}` left for the
    caller (views.py, named.py) to fill."""
    text = "\n".join(line for line in CURVE_SQL.read_text().splitlines() if not line.lstrip().startswith("--"))
    for key, value in _FILLS[kind].items():
        text = text.replace("${" + key + "}", value)
    return text.strip()
