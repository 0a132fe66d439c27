"""How long each grain is kept, and removing what is older.

Defaults: panes 14 days, hourly rollups 13 months, daily rollups for ever. Configured in
poolsight.toml's `[history]` (pane_days, hour_months, day_months) or POOLSIGHT_HISTORY_PANE_DAYS,
_HOUR_MONTHS, _DAY_MONTHS; `keep` or 0 keeps a grain for ever. Cutoffs fall on UTC day (panes)
and month (rollups) boundaries, the tables' partitions, so a removal drops whole files.

Panes are removed only once the rollups have read every file that holds them (rollup_state):
a day of panes is never lost before its hours exist.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.infra.trino import fetch
from poolsight.schemas.tables import Table
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.rollup import changes, metadata_table
from poolsight.sql.rollups import ROLLUPS

# Pane-grain tables the pane retention applies to: the rollups' sources, the working sets
# (their maxima are in the pool and object rollups) and the group simulation's panes.
PANE_TABLES: tuple[Table, ...] = (
    *(r.source for r in ROLLUPS),
    *(BY_NAME[name] for name in ("working_set", "gbp_curve", "gbp_member", "lbp_curve")),
)
DEFAULTS: dict[str, int | None] = {"pane_days": 14, "hour_months": 13, "day_months": None}


class RetentionError(ValueError):
    """A retention setting that is not a whole number, 0 or keep."""


@dataclass(frozen=True)
class Retention:
    pane_days: int | None = 14
    hour_months: int | None = 13
    day_months: int | None = None  # None: kept

    def cutoffs(self, now: datetime) -> dict[str, datetime | None]:
        """Per grain, the oldest time kept (None: everything)."""
        today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        return {
            "pane": None if self.pane_days is None else today - timedelta(days=self.pane_days),
            "hour": None if self.hour_months is None else months_before(today, self.hour_months),
            "day": None if self.day_months is None else months_before(today, self.day_months),
        }


def months_before(t: datetime, months: int) -> datetime:
    """The first of the month `months` before t's month."""
    index = t.year * 12 + (t.month - 1) - months
    return t.replace(year=index // 12, month=index % 12 + 1, day=1, hour=0, minute=0, second=0, microsecond=0)


def retention_from(conf: dict[str, Any], env: dict[str, str] | None = None) -> Retention:
    """[history] of the config file, overridden by POOLSIGHT_HISTORY_* variables."""
    env = dict(os.environ) if env is None else env
    values: dict[str, int | None] = {}
    for key, default in DEFAULTS.items():
        var = f"POOLSIGHT_HISTORY_{key.upper()}"
        raw: Any = env.get(var, conf.get(key, "keep" if default is None else default))
        text = str(raw).strip().lower()
        if text in ("keep", "0"):
            values[key] = None
            continue
        if isinstance(raw, bool) or not text.isdigit():
            raise RetentionError(f"{var} / [history].{key}: {raw!r} is not a whole number, 0 or keep")
        values[key] = int(text)
    return Retention(**values)


def _delete(cur: Any, t: Table, column: str, cutoff: datetime) -> int:
    rows = fetch(cur, f"DELETE FROM {t.qualified} WHERE {column} < ?", (cutoff,))
    return int(rows[0][0]) if rows and rows[0] and rows[0][0] is not None else 0


def unrolled_before(cur: Any, t: Table, rolled: int, cutoff: datetime) -> bool:
    """Whether `t` may hold rows before `cutoff` its rollup has not read (it has read up to data
    sequence number `rolled`): a file added since with rows that old, or, where Trino cannot list
    `$entries` (sql/rollup.py), rows before the cutoff other than at the snapshot it read."""
    got = changes(cur, t, rolled)
    if got.exact:
        return any(lo < cutoff for lo, _ in got.spans)
    found = fetch(
        cur,
        f"SELECT latest_snapshot_id FROM {metadata_table(t, 'metadata_log_entries')} "
        "WHERE latest_sequence_number = ? ORDER BY timestamp DESC LIMIT 1",
        (rolled,),
    )
    if not found or found[0][0] is None:
        return True  # that snapshot has left the metadata log: keep the rows this time
    old = f"SELECT count(*), checksum({t.time_column}) FROM {t.qualified}{{}} WHERE {t.time_column} < ?"
    then = fetch(cur, old.format(f" FOR VERSION AS OF {int(found[0][0])}"), (cutoff,))
    return fetch(cur, old.format(""), (cutoff,)) != then


def apply_retention(cur: Any, r: Retention, now: datetime, rolled: dict[str, int]) -> list[dict[str, Any]]:
    """Remove what each grain keeps no longer. `rolled`: per pane table rolled up, the data
    sequence number its rollup has read up to; a table with newer files holding rows before
    the cutoff is left as it is this time (the next rollup reads them first)."""
    cut = r.cutoffs(now)
    report: list[dict[str, Any]] = []
    if cut["pane"] is not None:
        for t in PANE_TABLES:
            if t.name in rolled and unrolled_before(cur, t, rolled[t.name], cut["pane"]):
                report.append({"table": t.name, "cutoff": cut["pane"].isoformat(), "skipped": "not rolled up"})
                continue
            report.append(
                {
                    "table": t.name,
                    "cutoff": cut["pane"].isoformat(),
                    "rows": _delete(cur, t, t.time_column, cut["pane"]),
                }
            )
    for grain in ("hour", "day"):
        cutoff = cut[grain]
        if cutoff is None:
            continue
        for rollup in ROLLUPS:
            t = rollup.table(grain)
            report.append(
                {"table": t.name, "cutoff": cutoff.isoformat(), "rows": _delete(cur, t, "period_start", cutoff)}
            )
    return report
