"""The rollup tables, defined once: hourly and daily sums of the pane-grain tables.

A rollup keeps counters, never ratios: a ratio over an hour or a day is recomputed from the
summed counters (the views do), so a long range weighs every getpage the same. A simulated
curve is merged the same way: hits and misses per candidate size are added pane by pane,
which is what merging the panes' reuse-distance histograms gives. An hour rolls up the
panes (`Measure.expr` over a pane row); a day rolls up the hours (`Measure.agg` again).

sql/rollup.py keeps them up to date (its progress in ROLLUP_STATE); sql/catalog.py adds them to
the tables the launcher creates.
"""

from __future__ import annotations

from dataclasses import dataclass

from poolsight.schemas.tables import (
    IO_PANE,
    OBJECT_PANE,
    POOL_PANE,
    POOL_STATS,
    REUSE_DISTANCE,
    SIM_CURVE,
    C,
    Column,
    Table,
)

GRAINS = ("hour", "day")
PERIOD = (
    C("period_start", "timestamp", "Start of the hour or day (UTC, inclusive)."),
    C("period_end", "timestamp", "End of the hour or day (exclusive)."),
)


@dataclass(frozen=True)
class Measure:
    name: str
    type: str  # a schemas/tables.py column type
    agg: str  # sum, max, min or last (the value of the latest row)
    doc: str
    expr: str | None = None  # SQL over a pane row (default: the column of the same name)

    def over_panes(self, time_column: str) -> str:
        return self._agg(self.expr or self.name, time_column)

    def over_hours(self, order: str = "period_start") -> str:
        """Over rows of the rollup's own columns (hours, or parts of one period ordered by `order`)."""
        return self._agg(self.name, order)

    def _agg(self, expr: str, order: str) -> str:
        if self.agg == "last":
            return f"max_by({expr}, {order})"
        return f"{self.agg}({expr})"


def S(name: str, doc: str, expr: str | None = None, type_: str = "bigint") -> Measure:
    return Measure(name, type_, "sum", doc, expr)


def D(name: str, doc: str, expr: str | None = None) -> Measure:
    return Measure(name, "double", "sum", doc, expr)


@dataclass(frozen=True)
class Rollup:
    stem: str  # the tables are <stem>_hour and <stem>_day
    source: Table  # the pane-grain table rolled up
    group: tuple[str, ...]  # besides the period
    measures: tuple[Measure, ...]
    doc: str

    def table(self, grain: str) -> Table:
        return self._table(
            f"{self.stem}_{grain}",
            grain,
            f"{self.doc} Per {grain} (sql/rollups.py; ratios: divide the summed counters).",
        )

    def retired(self, grain: str) -> Table:
        """What the rows retention removed from the grain below had added to each period of
        `grain`: a period of `grain` is this plus what the grain below still holds (sql/rollup.py)."""
        below = self.source.name if grain == "hour" else self.table("hour").name
        return self._table(
            f"{self.stem}_{grain}_retired",
            grain,
            f"The part of {self.stem}_{grain} made of {below} rows retention has removed (sql/retention.py).",
        )

    def _table(self, name: str, grain: str, doc: str) -> Table:
        cols: list[Column] = [c for name in self.group for c in self.source.columns if c.name == name]
        cols += [
            *PERIOD,
            C(
                "source_rows",
                "bigint",
                f"{self.source.name} rows added up (hourly) or their sum over the hours (daily).",
            ),
            *(C(m.name, m.type, m.doc) for m in self.measures),
            C("rolled_at", "timestamp", "Wall-clock time this row was last computed."),
        ]
        key = (*self.group, "period_start")
        return Table(
            name,
            doc,
            tuple(cols),
            "period_start",
            key,
            key=key,
            # Few rows a day: one file a month (a year of days) keeps a year's query to a few files.
            partition="month" if grain == "hour" else "year",
        )


def present(value: str, then: str) -> str:
    """`then` for a pane whose `value` is known (the denominator of a ratio of sums of `value`:
    a pane without it, e.g. simulated before the pool's size was known, must not count)."""
    return f"CASE WHEN {value} IS NOT NULL THEN {then} END"


CPU_US = "coalesce(cpu_us_per_sync_read, 30e0)"  # 30 µs: rows written before the column (as the views)
# The getpage counts a pool's and an object's panes both carry.
GETPAGE_COUNTS = (
    S("getpages", "Getpages."),
    S("getpages_random", "Random getpages."),
    S("getpages_sequential", "Sequential getpages."),
    S("getpages_rid", "RID-list getpages."),
    S("updates", "Set-write-intent requests."),
    S("observed_hits", "Getpages the source reported as hits."),
    S("observed_misses", "Getpages the source reported as misses."),
)

POOL = Rollup(
    "pool",
    POOL_PANE,
    ("source", "pool"),
    (
        D("seconds", "Seconds covered by getpages."),
        *GETPAGE_COUNTS,
        S("observed_sync_reads", "Random getpages the source reported as misses: measured sync reads."),
        S("late_getpages", "Getpages counted in a later pane than their own."),
        S("batches", "Getpage batches."),
        D(
            "observed_seconds",
            "Seconds of the panes with measured sync reads.",
            present("observed_sync_reads", "seconds"),
        ),
        S(
            "observed_getpages_random",
            "Random getpages of the panes with measured sync reads.",
            present("observed_sync_reads", "getpages_random"),
        ),
        D("sim_sync_reads", "Simulated sync reads at the current size."),
        D("sim_seconds", "Seconds of the panes with a simulated figure.", present("sim_sync_reads", "seconds")),
        S(
            "sim_getpages_random",
            "Random getpages of the panes with a simulated figure.",
            present("sim_sync_reads", "getpages_random"),
        ),
        D("sim_hits", "Simulated hits at the current size.", "sim_hit_ratio * getpages"),
        S("sim_getpages", "Getpages of the panes with a simulated hit ratio.", present("sim_hit_ratio", "getpages")),
        D("sim_hits_2x", "Simulated hits at twice the current size.", "hit_ratio_2x * getpages"),
        S("getpages_2x", "Getpages of the panes with a figure at twice the size.", present("hit_ratio_2x", "getpages")),
        D("seconds_2x", "Seconds of the panes with a figure at twice the size.", present("hit_ratio_2x", "seconds")),
        D("sync_reads_2x", "Simulated sync reads at twice the current size.", "sync_reads_per_s_2x * seconds"),
        D(
            "avoided_sync_reads_2x",
            "Sync reads doubling the pool would avoid.",
            "avoided_sync_reads_per_s_2x * seconds",
        ),
        D("cpu_seconds_saved_2x", "CPU seconds doubling the pool would save.", "cpu_seconds_saved_per_s_2x * seconds"),
        D(
            "sim_cpu_seconds",
            "CPU seconds of the simulated sync reads.",
            f"sim_sync_reads * {CPU_US} * 1e-6",
        ),
        D(
            "working_set_page_seconds",
            "Working set pages x seconds (/ seconds: the average working set).",
            "working_set_pages * seconds",
        ),
        Measure("max_working_set_pages", "bigint", "max", "Largest working set of a pane.", "working_set_pages"),
        Measure("max_distinct_pages", "bigint", "max", "Most distinct pages of one pane.", "distinct_pages"),
        Measure("min_size", "bigint", "min", "Smallest VPSIZE in the period.", "current_size"),
        Measure("max_size", "bigint", "max", "Largest VPSIZE in the period.", "current_size"),
        Measure("current_size", "bigint", "last", "VPSIZE at the end of the period."),
        Measure("vpseqt", "double", "last", "VPSEQT at the end of the period."),
        Measure("model", "string", "last", "Model of the sim_ columns at the end of the period."),
    ),
    "Pools.",
)

OBJECT = Rollup(
    "object",
    OBJECT_PANE,
    ("source", "pool", "object"),
    (
        D("seconds", "Seconds of the object's panes covered by getpages."),
        *GETPAGE_COUNTS,
        D("sim_sync_reads", "Simulated sync reads at the pool's current size."),
        D("sim_seconds", "Seconds of the panes with a simulated figure.", present("sim_sync_reads", "seconds")),
        D("sim_hits", "Simulated hits at the pool's current size.", "sim_hit_ratio * getpages"),
        S("sim_getpages", "Getpages of the panes with a simulated hit ratio.", present("sim_hit_ratio", "getpages")),
        D(
            "avoided_sync_reads_2x",
            "Sync reads doubling the pool would avoid.",
            "avoided_sync_reads_per_s_2x * seconds",
        ),
        D(
            "sim_cpu_seconds",
            "CPU seconds of the simulated sync reads.",
            f"sim_sync_reads * {CPU_US} * 1e-6",
        ),
        Measure("max_working_set_pages", "bigint", "max", "Largest working set of a pane.", "working_set_pages"),
        Measure("access_class", "string", "last", "SAMOS or RAMOS at the end of the period."),
    ),
    "Objects (table and index spaces).",
)

CURVE = Rollup(
    "curve",
    SIM_CURVE,
    ("source", "pool", "model", "curve", "size_pages"),
    (
        D("seconds", "Seconds of the panes."),
        S("refs", "Getpages simulated."),
        D("hits", "Simulated hits at this size."),
        D("misses", "Simulated misses at this size."),
        D("sync_reads", "Simulated sync reads (random misses)."),
        D("prefetch_pages", "Pages prefetch must bring in."),
        D("avoided_sync_reads", "Sync reads avoided against the current size.", "avoided_sync_reads_per_s * seconds"),
        D("cpu_seconds_saved", "CPU seconds saved against the current size.", "cpu_seconds_saved_per_s * seconds"),
        Measure("size_factor", "double", "last", "Size over the current size at the end of the period."),
        Measure("is_current", "boolean", "last", "The pool's current size at the end of the period."),
        Measure("pool_policy", "boolean", "last", "The model of the pool's own policy."),
        Measure("vpseqt", "double", "last", "VPSEQT simulated (lru-vpseqt rows)."),
    ),
    "Simulated curves, merged: hits and misses per size added up over the panes.",
)

REUSE = Rollup(
    "reuse",
    REUSE_DISTANCE,
    ("source", "pool", "access", "distance_lo", "distance_hi"),
    (D("getpages", "Getpages whose reuse distance falls in the bucket."),),
    "Reuse-distance histograms, merged bucket by bucket.",
)

IO = Rollup(
    "io",
    IO_PANE,
    ("source", "pool", "object", "direction", "io_type"),
    (
        S("ios", "I/O operations."),
        S("pages", "Pages read or written."),
        S("elapsed_us", "Sum of their elapsed times, microseconds."),
        Measure("max_elapsed_us", "bigint", "max", "The longest of them, microseconds."),
    ),
    "Measured I/O from the I/O events.",
)

_STATS_COUNTERS = tuple(
    c.name
    for c in POOL_STATS.columns
    if c.type == "bigint"
    and c.name not in ("getpages", "vpsize", "buffers_allocated")  # derived, and gauges (last values below)
    and not c.name.endswith("_per_second")
)
STATS = Rollup(
    "stats",
    POOL_STATS,
    ("source", "pool", "origin"),
    (
        D("interval_seconds", "Seconds of the statistics intervals."),
        *(S(name, next(c.doc for c in POOL_STATS.columns if c.name == name)) for name in _STATS_COUNTERS),
        Measure("vpsize", "bigint", "last", "VPSIZE at the end of the period."),
        Measure("buffers_allocated", "bigint", "last", "Buffers allocated at the end of the period."),
    ),
    "Pool statistics intervals (counters), added up.",
)

ROLLUPS: tuple[Rollup, ...] = (POOL, OBJECT, CURVE, REUSE, IO, STATS)
ROLLUP_TABLES: tuple[Table, ...] = tuple(r.table(g) for r in ROLLUPS for g in GRAINS)
RETIRED_TABLES: tuple[Table, ...] = tuple(r.retired(g) for r in ROLLUPS for g in GRAINS)


ROLLUP_STATE = Table(
    "rollup_state",
    "How far each rollup table has read its source (sql/rollup.py): the source's Iceberg data sequence "
    "number up to which every added file has been rolled up.",
    (
        C("rollup_table", "string", "The rollup table (e.g. pool_hour)."),
        C("source_table", "string", "The table it rolls up."),
        C("sequence_number", "bigint", "Files of the source with a data sequence number up to this are rolled up."),
        C("updated_at", "timestamp", "Wall-clock time of the rollup run."),
        C("period_from", "timestamp", "Start of the periods that run recomputed."),
        C("period_to", "timestamp", "End of the periods that run recomputed."),
    ),
    "updated_at",
    ("rollup_table",),
    key=("rollup_table", "updated_at"),
    partition="year",
)


TABLE_CLOCK = Table(
    "table_clock",
    "When each pane-grain table reached a data sequence number (sql/retention.py): every file with a "
    "sequence number up to it was committed by then, so retention can tell a row's arrival from its event time.",
    (
        C("table_name", "string", "The table (e.g. pool_pane)."),
        C("sequence_number", "bigint", "The newest data sequence number of its live files then."),
        C("observed_at", "timestamp", "Wall-clock time of the observation (a maintenance cycle)."),
    ),
    "observed_at",
    ("table_name",),
    key=("table_name", "observed_at"),
    partition="year",
)

RETIREMENT = Table(
    "retirement",
    "Periods retention removed from a grain whose content a rollup keeps (sql/retention.py), step by "
    "step: `pending` (being folded into the grain above), `based` (its content is in the <rollup>_retired "
    "table; its rows are being removed), `done`. A period not done is neither rolled up nor removed by "
    "anyone else until the next retention pass finishes it.",
    (
        C("table_name", "string", "The table rows are removed from (pool_pane, pool_hour, ...)."),
        C("period_start", "timestamp", "Start of the removed period (a day of panes, a month of hours)."),
        C("period_end", "timestamp", "Its end (exclusive)."),
        C("state", "string", "pending, based or done."),
        C("logged_at", "timestamp", "Wall-clock time of the step."),
    ),
    "period_start",
    ("table_name", "period_start"),
    key=("table_name", "period_start", "state"),
    partition="year",
)
