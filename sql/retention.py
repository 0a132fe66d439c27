"""How long each grain is kept, and removing what is older.

Defaults: panes 14 days, hourly rollups 13 months, daily rollups for ever. Configured in
poolsight.toml's `[history]` (pane_days, hour_months, day_months) or POOLSIGHT_HISTORY_PANE_DAYS,
_HOUR_MONTHS, _DAY_MONTHS; `keep` or 0 keeps a grain for ever. Cutoffs fall on UTC day (panes)
and month (rollups) boundaries, the tables' partitions, so a removal drops whole files.

A row goes when both its event time and its arrival are older than its grain's retention: an
imported trace from last month keeps its panes for 14 days after the import. A pane's arrival
is its file's commit, read from the file's data sequence number and TABLE_CLOCK (where each
table's sequence number stood at each maintenance cycle); an hour's is when it was last
computed (`rolled_at`). Panes go only once the rollups have read them; a month of hours only
once its panes are gone.

What removed rows added to the grain above is kept first in that grain's `_retired` table
(`retire`), so a later recomputation of the period (a late pane, a replay) adds the rows still
there to it and loses nothing; the steps are logged in RETIREMENT and a pass that dies half way
is finished by the next. A pane written again after its first version was removed (more than
the pane retention after it was first written: longer than Kafka keeps the getpages, so not by
a replay) counts twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.infra.trino import QueryError, fetch
from poolsight.schemas.tables import Table
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.rollup import (
    entries_unlistable,
    metadata_table,
    recompute,
    same_group,
    unfinished_steps,
    upsert_sql,
)
from poolsight.sql.rollups import RETIREMENT, ROLLUPS, TABLE_CLOCK, Rollup

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


ROLLED = {r.source.name: r for r in ROLLUPS}
HOURLY = {r.table("hour").name: r for r in ROLLUPS}
CLOCK_MARGIN = timedelta(days=7)  # clock rows kept before the cutoff: one a cycle is enough


def _delete(cur: Any, t: Table, where: str, params: tuple[Any, ...]) -> int:
    """DELETE the rows of `t` matching `where`; how many, counted before. The count DELETE
    returns is not used: when whole files go (a metadata delete) it comes from the commit's
    summary, and it said -18 for two days of pool_pane holding 4 rows (with delete files) in one
    run of the stack tests (test_history), where the same steps alone said 4."""
    rows = fetch(cur, f"SELECT count(*) FROM {t.qualified} WHERE {where}", params)
    fetch(cur, f"DELETE FROM {t.qualified} WHERE {where}", params)
    return int(rows[0][0]) if rows and rows[0] and rows[0][0] is not None else 0


def _delete_range(cur: Any, t: Table, column: str, lo: datetime, hi: datetime) -> int:
    return _delete(cur, t, f"{column} >= ? AND {column} < ?", (lo, hi))


def _day_sequences_sql(t: Table) -> str:
    day = f"data_file.partition.{t.time_column}_day"
    return (
        f"SELECT '{t.name}', with_timezone(CAST({day} AS timestamp(6)), 'UTC'), max(sequence_number) "
        f"FROM {metadata_table(t, 'entries')} WHERE status IN (0, 1) AND {day} IS NOT NULL GROUP BY 2"
    )


def day_sequences(cur: Any, tables: tuple[Table, ...]) -> dict[str, dict[datetime, int] | None]:
    """Per pane-grain table, per day partition, the newest data sequence number of its live
    files (data and deletes); None where Trino cannot list its `$entries` (sql/rollup.py). One
    statement for all (Trino plans each in 0.3-0.5 s), each table alone if one cannot be listed."""

    def read(ts: tuple[Table, ...]) -> dict[str, dict[datetime, int] | None]:
        out: dict[str, dict[datetime, int] | None] = {t.name: {} for t in ts}
        for name, d, n in fetch(cur, " UNION ALL ".join(_day_sequences_sql(t) for t in ts)):
            got = out[str(name)]
            assert got is not None
            got[d] = int(n)
        return out

    try:
        return read(tables) if tables else {}
    except QueryError as exc:
        if not entries_unlistable(exc):
            raise
    out: dict[str, dict[datetime, int] | None] = {}
    for t in tables:
        try:
            out.update(read((t,)))
        except QueryError as exc:
            if not entries_unlistable(exc):
                raise
            out[t.name] = None
    return out


def read_clock(cur: Any, at: datetime) -> dict[str, int]:
    """Per table, the data sequence number it had reached by `at` (TABLE_CLOCK): every file
    up to it was committed by then."""
    sql = f"SELECT table_name, max(sequence_number) FROM {TABLE_CLOCK.qualified} WHERE observed_at <= ? GROUP BY 1"
    return {str(t): int(n) for t, n in fetch(cur, sql, (at,))}


def record_clock(cur: Any, seen: dict[str, int], now: datetime) -> None:
    """Note where each table is now."""
    if seen:
        values = ", ".join("(?, ?, ?)" for _ in seen)
        params = tuple(x for name, seq in sorted(seen.items()) for x in (name, seq, now))
        cols = "table_name, sequence_number, observed_at"
        fetch(cur, f"INSERT INTO {TABLE_CLOCK.qualified} ({cols}) VALUES {values}", params)


def log_step(cur: Any, table: str, lo: datetime, hi: datetime, state: str) -> None:
    fetch(
        cur,
        f"INSERT INTO {RETIREMENT.qualified} (table_name, period_start, period_end, state, logged_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (table, lo, hi, state, datetime.now(UTC)),
    )


def keep_sql(r: Rollup, grain: str) -> str:
    """MERGE making `r.retired(grain)` hold, for the periods in [?, ?) (twice), what
    `r.table(grain)` holds: what the grain below is about to lose is then kept."""
    src = r.table(grain)
    cols = ", ".join(c.name for c in src.columns)
    return upsert_sql(
        r, r.retired(grain), f"SELECT {cols} FROM {src.qualified} WHERE period_start >= ? AND period_start < ?"
    )


def adopt_sql(r: Rollup, grain: str) -> str:
    """INSERT into `r.retired(grain)` every period of `r.table(grain)` of which the grain below
    holds nothing: what an earlier version's retention removed without keeping it (run once,
    when the `_retired` table is new, by the launcher's bootstrap)."""
    src = r.table(grain)
    below, tc = (r.source, r.source.time_column) if grain == "hour" else (r.table("hour"), "period_start")
    cols = ", ".join(c.name for c in src.columns)
    return (
        f"INSERT INTO {r.retired(grain).qualified} ({cols}) SELECT {cols} FROM {src.qualified} a WHERE NOT EXISTS "
        f"(SELECT 1 FROM {below.qualified} b WHERE b.{tc} >= a.period_start AND b.{tc} < a.period_end "
        f"AND {same_group(r, 'b', 'a')})"
    )


def retire(cur: Any, t: Table, lo: datetime, hi: datetime, state: str = "") -> int:
    """Remove [lo, hi) from `t` (a day of a pane table, a month of an hourly rollup) without
    losing what it adds to the grain above. Each step is logged in RETIREMENT, so a pass that
    dies half way is finished by the next (`state`: the last step logged; "" starts afresh):
    the grain above is recomputed, its periods copied into the `_retired` table, the rows
    removed, and the grain above recomputed again (rows that came meanwhile). Rows removed."""
    r, grain = (ROLLED[t.name], "hour") if t.name in ROLLED else (HOURLY[t.name], "day")
    if state == "":
        log_step(cur, t.name, lo, hi, "pending")
    if state in ("", "pending"):
        recompute(cur, r, grain, lo, hi)  # every row below counted: nothing the copy could miss
        fetch(cur, keep_sql(r, grain), (lo, hi, lo, hi))
        log_step(cur, t.name, lo, hi, "based")
    if grain == "day":
        _delete_range(cur, r.retired("hour"), "period_start", lo, hi)  # first: a hole, never a double
    removed = _delete_range(cur, t, t.time_column, lo, hi)
    log_step(cur, t.name, lo, hi, "done")
    recompute(cur, r, grain, lo, hi)
    if grain == "hour":
        recompute(cur, r, "day", lo, hi)
    return removed


def _has_rows(cur: Any, t: Table, lo: datetime, hi: datetime) -> bool:
    tc = t.time_column
    return bool(fetch(cur, f"SELECT 1 FROM {t.qualified} WHERE {tc} >= ? AND {tc} < ? LIMIT 1", (lo, hi)))


def finish(cur: Any) -> list[dict[str, Any]]:
    """Finish every removal an earlier pass began (RETIREMENT), from its last logged step."""
    out = []
    for name, lo, hi, state in unfinished_steps(cur):
        rows = retire(cur, BY_NAME[name], lo, hi, state)
        out.append({"table": name, "period_start": lo.isoformat(), "rows": rows, "finished": state})
    return out


def _retire_panes(cur: Any, cutoff: datetime, now: datetime, rolled: dict[str, int]) -> list[dict[str, Any]]:
    """Remove each day of panes older than `cutoff` whose every file was committed before it
    (TABLE_CLOCK) and, for a table a rollup reads, rolled up; note the tables' sequence numbers."""
    report: list[dict[str, Any]] = []
    fetch(cur, f"DELETE FROM {TABLE_CLOCK.qualified} WHERE observed_at < ?", (cutoff - CLOCK_MARGIN,))
    arrived = read_clock(cur, cutoff)
    seen: dict[str, int] = {}
    sequences = day_sequences(cur, PANE_TABLES)
    for t in PANE_TABLES:
        days = sequences[t.name]
        if days is None:
            report.append({"table": t.name, "cutoff": cutoff.isoformat(), "skipped": "$entries unreadable"})
            continue
        if days:
            seen[t.name] = max(days.values())
        removed, kept = 0, {"written since the cutoff": 0, "not rolled up": 0}
        for day, seq in sorted(days.items()):
            if day + timedelta(days=1) > cutoff:
                continue
            if seq > arrived.get(t.name, -1):
                kept["written since the cutoff"] += 1
            elif t.name in ROLLED and seq > rolled.get(t.name, -1):
                kept["not rolled up"] += 1
            elif t.name in ROLLED:
                removed += retire(cur, t, day, day + timedelta(days=1))
            else:
                removed += _delete_range(cur, t, t.time_column, day, day + timedelta(days=1))
        row: dict[str, Any] = {"table": t.name, "cutoff": cutoff.isoformat(), "rows": removed}
        row.update({f"days kept, {why}": n for why, n in kept.items() if n})
        report.append(row)
    record_clock(cur, seen, now)
    return report


def _retire_hours(cur: Any, cutoff: datetime) -> list[dict[str, Any]]:
    """Remove each month of hourly rollups before `cutoff` none of whose rows was computed since
    and whose panes are all gone, its days kept (`retire`)."""
    report = []
    per_table = " UNION ALL ".join(
        f"SELECT '{r.table('hour').name}', date_trunc('month', period_start), max(rolled_at) "
        f"FROM {r.table('hour').qualified} WHERE period_start < ? GROUP BY 2"
        for r in ROLLUPS
    )
    months: dict[str, list[tuple[datetime, datetime]]] = {r.table("hour").name: [] for r in ROLLUPS}
    for name, month, newest in fetch(cur, per_table, (cutoff,) * len(ROLLUPS)):  # one statement: see day_sequences
        months[str(name)].append((month, newest))
    for r in ROLLUPS:
        t = r.table("hour")
        removed, kept = 0, 0
        for month, newest in sorted(months[t.name]):
            end = months_before(month, -1)
            if end > cutoff:
                continue
            if newest >= cutoff or _has_rows(cur, r.source, month, end):
                kept += 1
                continue
            removed += retire(cur, t, month, end)
        row: dict[str, Any] = {"table": t.name, "cutoff": cutoff.isoformat(), "rows": removed}
        if kept:
            row["months kept, computed since the cutoff or panes left"] = kept
        report.append(row)
    return report


def apply_retention(cur: Any, r: Retention, now: datetime, rolled: dict[str, int]) -> list[dict[str, Any]]:
    """Remove what each grain keeps no longer (see the module's doc). `rolled`: per pane table
    rolled up, the data sequence number its rollup has read up to."""
    cut = r.cutoffs(now)
    report = finish(cur)
    if cut["pane"] is not None:
        report += _retire_panes(cur, cut["pane"], now, rolled)
    if cut["hour"] is not None:
        report += _retire_hours(cur, cut["hour"])
    if cut["day"] is not None:
        for rollup in ROLLUPS:
            for t in (rollup.table("day"), rollup.retired("day")):
                n = _delete(cur, t, "period_start < ? AND rolled_at < ?", (cut["day"], cut["day"]))
                report.append({"table": t.name, "cutoff": cut["day"].isoformat(), "rows": n})
    return report
