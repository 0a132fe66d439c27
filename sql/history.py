"""The maintenance service: rollups, retention and Iceberg upkeep on a schedule.

The launcher starts it (service `maintenance`); `poolsight history` runs one cycle by hand.
Every cycle rolls up what the pane tables gained (sql/rollup.py) and then removes what each
grain keeps no longer (sql/retention.py); every `compact_every` seconds it also compacts,
expires snapshots and removes orphan files (sql/maintain.py, guarded by sql/guard.py), and every
`manifests_every` seconds it rewrites the manifests the commits since have added, where a
writer did not merge them itself (sql/maintain.py rewrite_manifests). Beside the cycles, a
thread keeps the page tables the pool pages read first (sql/pages.py), refreshed within seconds
of a commit, POOLSIGHT_PAGE_REFRESH_EVERY seconds after the last at the soonest (0: not kept; a
page then finds its pool's row behind its panes and older than sql/pages.py ROW_FRESH, and asks
the panes). After each cycle
it writes a heartbeat that `poolsight status` reads, the page tables' refreshes in it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from poolsight.argtypes import SECONDS, UsageParser
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.evaluator import MIN_EVERY, JSONValue, Report, run_loop
from poolsight.infra.trino import fetch, trino_connection
from poolsight.sql.catalog import TABLES
from poolsight.sql.maintain import maintain, tidy_manifests
from poolsight.sql.named import query
from poolsight.sql.pages import REFRESH_EVERY, PageKeeper
from poolsight.sql.retention import Retention, apply_retention, retention_from
from poolsight.sql.rollup import rollup_of, run_rollups

COMPACT_EVERY = 6 * 3600.0
# The jobs commit a manifest per table about every pane; a query opens each one its days may need.
MANIFESTS_EVERY = 15 * 60.0
SNAPSHOT_RETENTION = "1d"
ORPHAN_AGE = "3d"


def cycle(s: Settings, r: Retention, now: datetime | None = None, *, retain: bool = True) -> dict[str, Any]:
    """One rollup pass, then retention (unless `retain` is False)."""
    now = now or datetime.now(UTC)
    with trino_connection(s) as conn:
        cur = conn.cursor()
        runs = run_rollups(cur)
        sources = {rollup_of(run.rollup).source.name: run.sequence_number for run in runs}
        removed = apply_retention(cur, r, now, sources) if retain else []
        checks = copy_gbp_checks(cur)
    return {"rollups": [x.as_dict() for x in runs], "retention": removed, "gbp_checks": checks}


def copy_gbp_checks(cur: Any) -> int:
    """New GBP prediction checks (view gbp_prediction_check) into prediction_check; how many."""
    q = query("copy_gbp_prediction_checks")
    rows = fetch(cur, q.sql, q.bind({}))
    return int(rows[0][0]) if rows and rows[0] else 0


class MaintenanceEvaluator:
    """The maintenance service's evaluator (run by infra/evaluator.py's loop): rollups and
    retention each cycle, compaction, expiry and orphans every `compact_every` seconds, the
    manifests every `manifests_every` seconds."""

    name = "maintenance"

    def __init__(
        self, settings: Settings, compact_every: float = COMPACT_EVERY, manifests_every: float = MANIFESTS_EVERY
    ) -> None:
        self.settings = settings
        self.retention = retention_from(settings.history)
        self.compact_every = compact_every
        self.manifests_every = manifests_every
        self.last_compact = time.monotonic()  # not at start: a restart loop must not compact again and again
        self.last_manifests = time.monotonic()
        every = page_refresh_every()
        self.pages = PageKeeper(settings, every) if every > 0 else None
        if self.pages is not None:
            self.pages.start()

    def evaluate(self) -> Report:
        out = cycle(self.settings, self.retention)
        summary: dict[str, JSONValue] = {
            "files": sum(x["files"] for x in out["rollups"]),
            "removed_rows": sum(x.get("rows", 0) for x in out["retention"]),
            "gbp_checks": out["gbp_checks"],
        }
        if self.pages is not None:
            kept = self.pages.state
            summary["page_refreshes"] = kept.refreshes
            summary["page_refresh_s"] = kept.last_refresh_s
            summary["page_refreshed_at"] = kept.last_refresh_at
            if kept.error:
                summary["page_error"] = kept.error
        warnings = sorted({x["note"] for x in out["rollups"] if x["note"]})
        if warnings:  # a degraded rollup (sql/rollup.py Changes): working, but slower
            summary["warnings"] = list(warnings)
            for w in warnings:
                print(f"poolsight maintenance: warning: {w}", file=sys.stderr, flush=True)
        tables = [t.name for t in TABLES]
        if time.monotonic() - self.last_compact >= self.compact_every:
            summary["compacted"] = len(maintain(tables, SNAPSHOT_RETENTION, "100MB", ORPHAN_AGE))
            self.last_compact = self.last_manifests = time.monotonic()  # maintain rewrites them too
        elif time.monotonic() - self.last_manifests >= self.manifests_every:
            tidied = tidy_manifests(tables)
            summary["manifests_rewritten"] = sum(
                1 for x in tidied if x.get("manifests_after", 0) < x.get("manifests_before", 0)
            )
            refused: list[JSONValue] = sorted(x["table"] for x in tidied if "error" in x)
            if refused:  # tried again next round
                summary["manifests_refused"] = refused
            self.last_manifests = time.monotonic()
        return Report(summary)


def page_refresh_every() -> float:
    """POOLSIGHT_PAGE_REFRESH_EVERY: seconds from the end of one refresh of the page tables to the
    next at the soonest, at least MIN_EVERY (0: not kept; the pages then find the rows `up` made
    behind their pools' panes and older than ROW_FRESH, and ask the panes)."""
    raw = os.environ.get("POOLSIGHT_PAGE_REFRESH_EVERY", "")
    try:
        value = float(raw) if raw else REFRESH_EVERY
        return 0.0 if value <= 0 else max(MIN_EVERY, value)
    except ValueError:
        raise ConfigError(f"POOLSIGHT_PAGE_REFRESH_EVERY={raw!r} is not a number of seconds") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--every", type=SECONDS, help="run for ever, a cycle every this many seconds")
    p.add_argument("--compact-every", type=SECONDS, default=COMPACT_EVERY, help="seconds between compactions (loop)")
    p.add_argument(
        "--manifests-every", type=SECONDS, default=MANIFESTS_EVERY, help="seconds between manifest rewrites (loop)"
    )
    p.add_argument("--no-retention", action="store_true", help="roll up only; remove nothing")


def run_cli(a: argparse.Namespace) -> int:
    s = load_settings()
    if a.every:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        run_loop(MaintenanceEvaluator(s, a.compact_every, a.manifests_every), s, a.every)
        return 0
    out = cycle(s, retention_from(s.history), retain=not a.no_retention)
    for row in out["rollups"] + out["retention"]:
        print(json.dumps(row))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = UsageParser(prog="poolsight history", description=__doc__)
    add_arguments(p)
    return run_cli(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
