"""The pool page's anchor's one definition (anchor.sql), for one pool, for every pool, or for one
pool through its page table row.

`pool` is the body of the page's `pool_anchor` (queries/dashboard.sql, `${anchor_pool}`): one
source and pool, named parameters :source, :pool, :since, :window_s, one row even for a pool with
no pane. `all` is the body of the page table pool_page (queries/maintenance.sql refresh_pool_page,
`${anchor_all}`): a row per source and pool with a pane since twice the window before :since,
each led by its source, pool and the :since it was read from (the page uses a row only for its
own :since) and when it was read. Both run the same CTEs and the same arithmetic, so the page
table cannot drift from what the page would ask itself (tests/stack/test_dashboard.py compares
them).

`row` is the body of the page's `pool_page_row` (`${anchor_row}`): one pool's anchor with what
its panes and its accuracy give read now (the CTEs `a` and `acc`, one scan each), and what its
rollups and statistics intervals give (`h`, `st`: two more tables, about a third of the anchor's
CPU, sql/README.md) taken from its pool_page row, which the maintenance service refreshes seconds
after any of their commits; beside them the row's own newest pane, pane count and refresh time
(`page_`), which say whether curve_page holds the curve of the pool's newest window. No row for
the pool and :since: no row (the page asks pool_anchor)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

ANCHOR_SQL = Path(__file__).resolve().parent / "anchor.sql"


def _text() -> str:
    """anchor.sql without its comment lines."""
    return "\n".join(line for line in ANCHOR_SQL.read_text().splitlines() if not line.lstrip().startswith("--"))


def _selected(cte: str) -> tuple[str, ...]:
    """The columns a CTE of anchor.sql selects (the names after AS at the end of each select item)."""
    m = re.search(rf"\b{cte} AS \(\n  SELECT (.*?)\n  FROM ", _text(), re.S)
    if m is None:
        raise ValueError(f"{ANCHOR_SQL}: no CTE {cte}")
    return tuple(re.findall(r"\bAS (\w+)(?=,|$)", m.group(1), re.M))


# What pool_page_row takes from the pool_page row: the rollups' and the statistics' CTEs.
FROM_ROW = (*_selected("h"), *_selected("st"))

_FILLS: dict[str, dict[str, str]] = {
    "pool": {
        "of_pool": "source = :source AND pool = :pool",
        "partition": "",
        "group": "",
        "key_a": "",
        "key_h": "",
        "key_st": "",
        "key_acc": "",
        "top_accuracy": "\n  ORDER BY window_end DESC\n  LIMIT 1",
        "joined": "SELECT a.*, h.*, st.*, acc.* FROM a CROSS JOIN h CROSS JOIN st LEFT JOIN acc ON true",
    },
    "all": {
        "of_pool": "true",
        "partition": "PARTITION BY source, pool",
        "group": "\n  GROUP BY source, pool",
        "key_a": (
            "source, pool, CAST(:since AS timestamp(6) with time zone) AS since,\n"
            "         current_timestamp AS refreshed_at,\n         "
        ),
        "key_h": "source AS h_source, pool AS h_pool, ",
        "key_st": "source AS st_source, pool AS st_pool, ",
        "key_acc": (
            "source AS acc_source, pool AS acc_pool,\n"
            "         row_number() OVER (PARTITION BY source, pool ORDER BY window_end DESC) AS acc_rank,\n         "
        ),
        "top_accuracy": "",
        "joined": (
            "SELECT a.*, h.*, st.*, acc.*\nFROM a\n"
            "LEFT JOIN h ON h.h_source = a.source AND h.h_pool = a.pool\n"
            "LEFT JOIN st ON st.st_source = a.source AND st.st_pool = a.pool\n"
            "LEFT JOIN acc ON acc.acc_source = a.source AND acc.acc_pool = a.pool AND acc.acc_rank = 1"
        ),
    },
}
_FILLS["row"] = _FILLS["pool"] | {
    "joined": (
        f"SELECT a.*, {', '.join('g.' + c for c in FROM_ROW)}, acc.*,\n"
        "       g.latest_pane_end AS page_pane_end, g.panes AS page_panes, g.refreshed_at AS page_refreshed_at\n"
        "FROM a\nCROSS JOIN ${schema}.pool_page g\nLEFT JOIN acc ON true\n"
        "WHERE g.source = :source AND g.pool = :pool AND g.since = :since"
    ),
}


def anchor_sql(kind: Literal["pool", "all", "row"]) -> str:
    """anchor.sql's statement for one pool, all, or one through its row, without its comment
    lines; `${schema}` left for named.py to fill."""
    text = _text()
    for key, value in _FILLS[kind].items():
        text = text.replace("${" + key + "}", value)
    return text.strip()
