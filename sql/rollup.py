"""Keeping the rollup tables (sql/rollups.py) up to date, incrementally, through Trino.

Each run asks Iceberg which files each pane table gained since the last run (its `$entries`
with a data sequence number above the one rollup_state holds) and the event-time range their
column bounds span; it recomputes the hours of that range from the panes and the days of
it from the hours (MERGE: a recomputed period replaces the row, so a run repeated or a pane
rewritten by a replay never counts twice), then records the sequence number it read up to.

When Trino cannot list a table's `$entries` (Trino 476 fails on every entry once a file holds
statistics for a column the table has since dropped), the run falls back to recomputing every
day the table holds, with the newest sequence number from `$metadata_log_entries`, and says so.

A period is what the grain below still holds plus what retention removed from it
(`<stem>_<grain>_retired`, written by sql/retention.py before it removes rows): a replayed pane
replaces its earlier version, a late pane of a period whose other panes are gone adds to it,
and nothing retention removed is recomputed away. Periods whose rows below retention is
removing (a step logged in `retirement`, not done) are left to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from poolsight.infra.trino import QueryError, fetch
from poolsight.schemas.tables import Table
from poolsight.sql.rollups import RETIREMENT, ROLLUP_STATE, ROLLUPS, Rollup

STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
# At most this much event time per MERGE: a first run over months of panes (an upgrade, a
# backlog) would hold every group of the range in one query's memory.
PIECE = timedelta(days=7)


def floor_to(t: datetime, grain: str) -> datetime:
    t = t.astimezone(UTC)
    return (
        t.replace(minute=0, second=0, microsecond=0)
        if grain == "hour"
        else t.replace(hour=0, minute=0, second=0, microsecond=0)
    )


def metadata_table(t: Table, suffix: str) -> str:
    """The quoted name of a table's Iceberg metadata table, e.g. "pool_pane$entries"."""
    schema, _, name = t.qualified.rpartition(".")
    return f'{schema}."{name}${suffix}"'


def changes_sql(t: Table) -> str:
    """Each file added to `t` after a data sequence number (parameter): the event-time range its
    bounds span and its sequence number. A file without bounds on the time column (a
    position-delete file) spans its day partition."""
    tc = t.time_column

    def bound(which: str, day_offset: int) -> str:
        day = f"data_file.partition.{tc}_day + INTERVAL '{day_offset}' DAY"
        part = f"with_timezone(CAST({day} AS timestamp(6)), 'UTC')"  # the date's midnight in UTC, any session zone
        return (
            f"coalesce(from_iso8601_timestamp_nanos(json_extract_scalar(readable_metrics, '$.{tc}.{which}_bound'))"
            f", {part})"
        )

    # EXISTING (0) as well as ADDED (1): a commit that merges manifests rewrites the entries of
    # earlier commits as EXISTING, keeping their data sequence numbers.
    return (
        f"SELECT {bound('lower', 0)} AS lo, {bound('upper', 1)} AS hi, sequence_number "
        f"FROM {metadata_table(t, 'entries')} WHERE status IN (0, 1) AND sequence_number > ?"
    )


@dataclass(frozen=True)
class Changes:
    """What a table gained after a sequence number: the event-time spans, the newest sequence
    number, how many files; `note` says when `$entries` could not be read (spans are then every
    day the table holds, and `files` is 0)."""

    spans: list[tuple[datetime, datetime]]
    sequence_number: int
    files: int
    note: str = ""

    @property
    def exact(self) -> bool:
        """False: the spans are every day the table holds, not what changed."""
        return not self.note


def entries_unlistable(exc: QueryError) -> bool:
    """Trino 476's failure on every `$entries` row once a live file holds statistics for a
    column the table has since dropped (its EntriesTable renders each bound with the current
    schema's type of the id: none). Anything else is an error to report, not to work around."""
    return exc.error_name == "GENERIC_INTERNAL_ERROR" and "Type.typeId()" in (exc.message or "")


def _found(files: list[tuple[datetime, datetime, int]], last: int) -> Changes:
    return Changes([(lo, hi) for lo, hi, _ in files], max((int(f[2]) for f in files), default=last), len(files))


def changes(cur: Any, t: Table, last: int) -> Changes:
    """The files `t` gained after data sequence number `last` (see `changes_sql`), or, where
    Trino cannot list its `$entries`, every day it holds if it has had a commit since."""
    rows = partial(fetch, cur)
    try:
        return _found([(lo, hi, int(n)) for lo, hi, n in rows(changes_sql(t), (last,))], last)
    except QueryError as exc:
        if not entries_unlistable(exc):
            raise
        note = (
            f"{t.name}: Trino cannot read its $entries ({exc.message}): every day it holds is recomputed "
            "at each commit until no live file has statistics on a dropped column (compaction rewrites them)"
        )
    newest = rows(f"SELECT max(latest_sequence_number) FROM {metadata_table(t, 'metadata_log_entries')}")[0][0]
    if newest is None or int(newest) <= last:
        return Changes([], last, 0)  # no commit since: nothing changed, exactly
    tc = t.time_column
    days = rows(f"SELECT min({tc}), max({tc}) FROM {t.qualified} GROUP BY date_trunc('day', {tc})")
    return Changes([(lo, hi) for lo, hi in days], int(newest), 0, note)


def changes_of(cur: Any, wanted: list[tuple[Table, int]]) -> dict[str, Changes]:
    """`changes` of several tables, in one statement: Trino spends 0.3-0.5 s planning each one,
    and a maintenance cycle asks every pane table. Where a table's `$entries` cannot be listed
    (`entries_unlistable`), each table is asked on its own."""
    union = " UNION ALL ".join(f"SELECT '{t.name}', lo, hi, sequence_number FROM ({changes_sql(t)})" for t, _ in wanted)
    try:
        rows = fetch(cur, union, tuple(last for _, last in wanted)) if wanted else []
    except QueryError as exc:
        if not entries_unlistable(exc):
            raise
        return {t.name: changes(cur, t, last) for t, last in wanted}
    files: dict[str, list[tuple[datetime, datetime, int]]] = {t.name: [] for t, _ in wanted}
    for name, lo, hi, n in rows:
        files[str(name)].append((lo, hi, int(n)))
    return {t.name: _found(files[t.name], last) for t, last in wanted}


def periods(spans: list[tuple[datetime, datetime]], grain: str) -> list[tuple[datetime, datetime]]:
    """The whole periods of a grain the spans touch, as few ranges as possible: only where data
    changed (a history with a pane in 2000 and the rest today is two ranges, not 26 years)."""
    out: list[tuple[datetime, datetime]] = []
    for lo, hi in sorted((floor_to(a, grain), floor_to(b, grain) + STEP[grain]) for a, b in spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


# What a missing group value compares as (never one a row holds), by column type: `=` on
# coalesced keys lets Trino hash-join the MERGE (IS NOT DISTINCT FROM would not).
_NULL_AS = {"string": "''", "bigint": "-1", "int": "-1", "double": "-1e0", "boolean": "false", "timestamp": "NULL"}


def same_group(r: Rollup, left: str, right: str) -> str:
    """SQL: rows `left` and `right` (aliases) of the rollup's tables have the same group."""
    types = {c.name: c.type for c in r.table("hour").columns}
    return " AND ".join(
        f"coalesce({left}.{g}, {_NULL_AS[types[g]]}) = coalesce({right}.{g}, {_NULL_AS[types[g]]})" for g in r.group
    )


def upsert_sql(r: Rollup, target: Table, using: str) -> str:
    """MERGE of `using` (rows of the rollup's columns) into `target` for the periods in [?, ?):
    a period's row replaced, or inserted."""
    cols = [c.name for c in target.columns]
    on = f"{same_group(r, 't', 's')} AND t.period_start = s.period_start AND t.period_start >= ? AND t.period_start < ?"
    sets = ", ".join(f"{c} = s.{c}" for c in cols if c not in (*r.group, "period_start"))
    return (
        f"MERGE INTO {target.qualified} t USING ({using}) s ON {on} WHEN MATCHED THEN UPDATE SET {sets} "
        f"WHEN NOT MATCHED THEN INSERT ({', '.join(cols)}) VALUES ({', '.join('s.' + c for c in cols)})"
    )


def merge_sql(r: Rollup, grain: str) -> str:
    """MERGE recomputing the rollup's periods of one grain in [?, ?) (given three times: the
    retired rows' range, the source's and the target's): each period is what retention removed
    from the grain below (`r.retired(grain)`, most often nothing) combined with what the grain
    below still holds, the two added up as the day adds up hours."""
    target, retired = r.table(grain), r.retired(grain)
    if grain == "hour":
        src, tc = r.source.qualified, r.source.time_column
        count, measures = "count(*)", [f"{m.over_panes(tc)} AS {m.name}" for m in r.measures]
    else:
        src, tc = r.table("hour").qualified, "period_start"
        count, measures = "sum(source_rows)", [f"{m.over_hours()} AS {m.name}" for m in r.measures]
    period = f"date_trunc('{grain}', {tc})"
    group = ", ".join(r.group)
    names = [m.name for m in r.measures]
    # `at` orders the two parts for a `last` measure: the rows still below are the newer ones.
    below = (
        f"SELECT {group}, {period} AS period_start, {period} + INTERVAL '1' {grain.upper()} AS period_end, "
        f"{count} AS source_rows, {', '.join(measures)}, max({tc}) AS at "
        f"FROM {src} WHERE {tc} >= ? AND {tc} < ? GROUP BY {group}, {period}"
    )
    gone = (
        f"SELECT {group}, period_start, period_end, source_rows, {', '.join(names)}, "
        f"period_start - INTERVAL '0.001' SECOND AS at "
        f"FROM {retired.qualified} WHERE period_start >= ? AND period_start < ?"
    )
    combined = [f"{m.over_hours('at')} AS {m.name}" for m in r.measures]
    using = (
        f"SELECT {group}, period_start, period_end, sum(source_rows) AS source_rows, {', '.join(combined)}, "
        f"current_timestamp AS rolled_at FROM ({gone} UNION ALL {below}) "
        f"GROUP BY {group}, period_start, period_end"
    )
    return upsert_sql(r, target, using)


def recompute(cur: Any, r: Rollup, grain: str, lo: datetime, hi: datetime) -> None:
    """The rollup's periods of `grain` in [lo, hi) (whole periods) computed again, a piece of at
    most PIECE at a time."""
    a = lo
    while a < hi:
        b = min(a + PIECE, hi)
        fetch(cur, merge_sql(r, grain), (a, b, a, b, a, b))
        a = b


STATE_SQL = (
    "SELECT rollup_table, max_by(sequence_number, updated_at) AS seq "
    f"FROM {ROLLUP_STATE.qualified} GROUP BY rollup_table"
)
RECORD_SQL = (
    f"INSERT INTO {ROLLUP_STATE.qualified} "
    "(rollup_table, source_table, sequence_number, updated_at, period_from, period_to) VALUES (?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class RollupRun:
    rollup: str  # the hourly table
    files: int  # files of the source added since the last run
    period_from: datetime | None  # the hours recomputed (None: nothing to do)
    period_to: datetime | None
    sequence_number: int
    skipped: int  # periods left to retention, which is removing the rows below them (sql/retention.py)
    seconds: float
    note: str = ""  # why the range is every day the source holds (Changes.note)

    def as_dict(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in self.__dict__.items()}


def _without(
    ranges: list[tuple[datetime, datetime]], holes: list[tuple[datetime, datetime]]
) -> list[tuple[datetime, datetime]]:
    """`ranges` less every hole (holes are whole periods of the ranges' grain or coarser)."""
    out = []
    for lo, hi in ranges:
        parts = [(lo, hi)]
        for a, b in holes:
            parts = [p for x, y in parts for p in ((x, min(y, a)), (max(x, b), y)) if p[0] < p[1]]
        out += parts
    return out


def _length(ranges: list[tuple[datetime, datetime]]) -> timedelta:
    return sum((b - a for a, b in ranges), timedelta())


UNFINISHED_SQL = (
    f"SELECT table_name, period_start, period_end, max_by(state, logged_at) FROM {RETIREMENT.qualified} "
    "GROUP BY table_name, period_start, period_end HAVING max_by(state, logged_at) <> 'done'"
)


def unfinished_steps(cur: Any) -> list[tuple[str, datetime, datetime, str]]:
    """(table, start, end, last step logged) of each removal retention began and did not finish."""
    return [(str(t), lo, hi, str(state)) for t, lo, hi, state in fetch(cur, UNFINISHED_SQL)]


def unfinished(cur: Any) -> dict[str, list[tuple[datetime, datetime]]]:
    """Per table, the periods retention has begun to remove and not finished (sql/retention.py)."""
    out: dict[str, list[tuple[datetime, datetime]]] = {}
    for table, lo, hi, _ in unfinished_steps(cur):
        out.setdefault(table, []).append((lo, hi))
    return out


def run_rollups(cur: Any, rollups: tuple[Rollup, ...] = ROLLUPS) -> list[RollupRun]:
    """One pass over every rollup (see the module's doc). Periods whose rows below retention is
    removing (sql/retention.py, a step not finished) are left to it: it recomputes them when done."""
    rows = partial(fetch, cur)
    state = {name: int(seq) for name, seq in rows(STATE_SQL)}
    busy = unfinished(cur)
    found = changes_of(cur, [(r.source, state.get(r.table("hour").name, -1)) for r in rollups])
    out: list[RollupRun] = []
    record: list[tuple[str, str, int, datetime, datetime, datetime]] = []
    for r in rollups:
        start = time.monotonic()
        hour_table = r.table("hour").name
        last = state.get(hour_table, -1)
        got = found[r.source.name]
        if not got.spans:
            out.append(RollupRun(hour_table, 0, None, None, last, 0, round(time.monotonic() - start, 2)))
            continue
        seq = got.sequence_number
        hours = periods(got.spans, "hour")
        h0, h1 = hours[0][0], hours[-1][1]
        holes_hour = busy.get(r.source.name, []) + busy.get(hour_table, [])
        holes_day = busy.get(hour_table, [])
        todo = _without(hours, holes_hour)
        for lo, hi in todo:
            recompute(cur, r, "hour", lo, hi)
        days = periods([(a, b - timedelta(microseconds=1)) for a, b in todo], "day") if todo else []
        for lo, hi in _without(days, holes_day):
            recompute(cur, r, "day", lo, hi)
        now = datetime.now(UTC)
        record += [(r.table(grain).name, r.source.name, int(seq), now, h0, h1) for grain in ("hour", "day")]
        seconds = round(time.monotonic() - start, 2)
        skipped = round((_length(hours) - _length(todo)) / STEP["hour"])
        out.append(RollupRun(hour_table, got.files, h0, h1, seq, skipped, seconds, got.note))
    if record:  # one statement for all: a pass that dies before it recomputes the same periods again
        rows(RECORD_SQL + ", (?, ?, ?, ?, ?, ?)" * (len(record) - 1), tuple(x for row in record for x in row))
    return out


def rollup_of(table: str) -> Rollup:
    """The rollup whose hourly or daily table this is."""
    for r in ROLLUPS:
        if table in (r.table(g).name for g in ("hour", "day")):
            return r
    raise KeyError(table)
