"""The Iceberg tables the jobs and the evaluators write, defined once: names, columns with
docs, partitioning, sort order and key. The contract between the writers (flink_jobs, advice,
alerts) and every reader, as the Avro schemas are between collectors and jobs.

Trino creates them (`sql/catalog.py`, run by the launcher) so that hidden day partitioning and
sort orders are part of the table; the Flink jobs write into them by column name
(`flink_jobs/common.py`); a table created before a column was defined gets it added at its end.
Columns of the statistics tables come from the Avro schemas, with the Avro docs as column
comments. The rollup tables (`sql/rollups.py`) are derived from these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from poolsight import schemas
from poolsight.names import NAMESPACE, TRINO_CATALOG

# Logical column types and what they are in Trino.
TRINO_TYPES = {
    "string": "varchar",
    "bigint": "bigint",
    "int": "integer",
    "double": "double",
    "boolean": "boolean",
    "timestamp": "timestamp(6) with time zone",
    "binary": "varbinary",
}


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a key of TRINO_TYPES; timestamps travel from the jobs as epoch milliseconds
    doc: str
    # SQL over the row's other columns giving the value rows written before the column existed
    # get: a key column must not be null (Iceberg identifier fields are required).
    backfill: str | None = None


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]
    time_column: str  # partitioned by day of it
    sort: tuple[str, ...]
    # The columns that identify a row. The jobs upsert on them (Iceberg equality deletes), so a
    # row written again (a replay, a restarted or second job) replaces the first instead of
    # adding to it. Empty: append-only. Must hold time_column (the partition's source).
    key: tuple[str, ...] = ()
    partition: str = "day"  # Iceberg transform of time_column: day, month or year

    @property
    def qualified(self) -> str:
        return f"{TRINO_CATALOG}.{NAMESPACE}.{self.name}"

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def C(name: str, type_: str, doc: str, backfill: str | None = None) -> Column:
    if type_ not in TRINO_TYPES:
        raise ValueError(f"column {name}: unknown type {type_}")
    return Column(name, type_, doc, backfill)


def _avro_columns(schema: str, skip: tuple[str, ...] = ()) -> list[Column]:
    """Primitive fields of a record schema as columns, with their Avro docs."""
    out: list[Column] = []
    for f in json.loads(schemas.text(schema))["fields"]:
        if f["name"] in skip:
            continue
        t: Any = f["type"]
        if isinstance(t, list):
            t = next(x for x in t if x != "null")
        if isinstance(t, dict):
            t = (
                "timestamp"
                if t.get("logicalType", "").startswith("timestamp")
                else ("string" if t.get("type") == "enum" else t.get("type"))
            )
        kind = {
            "string": "string",
            "long": "bigint",
            "int": "int",
            "double": "double",
            "float": "double",
            "boolean": "boolean",
            "timestamp": "timestamp",
            "bytes": "binary",
        }.get(str(t))
        if kind is None:
            raise ValueError(f"{schema}.{f['name']}: no column type for Avro {t}")
        out.append(C(f["name"], kind, f.get("doc", "")))
    return out


# Values of the key columns sim_curve.curve and working_set.scope: the jobs write them, and the
# backfill gives them to rows written before the columns existed.
SIZES_CURVE = "sizes"
POOL_SCOPE = "pool"
OBJECT_SCOPE_PREFIX = "object:"
VPSEQT_CURVE_SQL = "'vpseqt:' || format('%s', vpseqt)"


def vpseqt_curve_name(vpseqt: float) -> str:
    """sim_curve.curve of a what-if VPSEQT row (VPSEQT_CURVE_SQL spells it in Trino)."""
    return f"vpseqt:{float(vpseqt)!r}"


def object_scope(name: str) -> str:
    """working_set.scope of an object's row."""
    return OBJECT_SCOPE_PREFIX + name


KEY = (
    C("source", "string", "DB2 subsystem or data-sharing member (LUW: instance/database) the data came from."),
    C("pool", "string", "Buffer pool name, e.g. BP2."),
)
PANE = (
    C("pane_start", "timestamp", "Start of the pane (event time, inclusive)."),
    C("pane_end", "timestamp", "End of the pane (event time, exclusive)."),
    C("seconds", "double", "Seconds of the pane covered by getpages (the first and last panes may be partial)."),
)
GETPAGES = (
    C("getpages", "bigint", "Getpage requests in the pane (all access types)."),
    C("getpages_random", "bigint", "Random getpages."),
    C("getpages_sequential", "bigint", "Sequential (prefetch-driven) getpages."),
    C("getpages_rid", "bigint", "RID-list (list prefetch) getpages."),
    C("updates", "bigint", "Set-write-intent requests (buffer updates)."),
    C("observed_hits", "bigint", "Getpages the source reported as found in the pool (null if not reported)."),
    C("observed_misses", "bigint", "Getpages the source reported as not found in the pool (null if not reported)."),
    C("distinct_pages", "bigint", "Distinct pages referenced in the pane (estimated under SHARDS)."),
)
COST_COLUMN = C(
    "cpu_us_per_sync_read",
    "double",
    "CPU microseconds per sync read the job's cost model used (jobs submit --cpu-us-per-sync-read).",
)
AT_CURRENT = (
    C("current_size", "bigint", "The pool's size in buffers (VPSIZE) from its attributes; null if not yet known."),
    C("sim_hit_ratio", "double", "Simulated hit ratio at the current size (the pool's own policy, see model)."),
    C("sim_sync_reads", "double", "Simulated synchronous reads (random misses) at the current size."),
    C("sim_sync_reads_per_s", "double", "Simulated synchronous reads per second at the current size."),
    C("hit_ratio_2x", "double", "Simulated hit ratio at twice the current size."),
    C("sync_reads_per_s_2x", "double", "Simulated synchronous reads per second at twice the current size."),
    C("avoided_sync_reads_per_s_2x", "double", "Synchronous reads per second doubling the pool would avoid."),
    C("cpu_seconds_saved_per_s_2x", "double", "CPU seconds per second doubling the pool would save (cost model)."),
    C(
        "elapsed_seconds_saved_per_s_2x",
        "double",
        "I/O wait seconds per second doubling the pool would save (null without a sync I/O time).",
    ),
)

POOL_PANE = Table(
    "pool_pane",
    "One row per pool and pane from the simulation job.",
    (
        *KEY,
        *PANE,
        *GETPAGES,
        C("working_set_pages", "bigint", "Pages whose latest reference is within the window ending at this pane."),
        C("window_panes", "int", "Panes in that window."),
        *AT_CURRENT,
        C(
            "late_getpages",
            "bigint",
            "Getpages counted here that belong to an earlier pane: they came after it was written, "
            "or after a later pane's getpages (out of order).",
        ),
        C("warmup", "boolean", "True while the window reaches back to the first pane ever seen."),
        C("mode", "string", "Simulation mode: exact, shards or shards-fixed-size."),
        C("sampling_rate", "double", "SHARDS sampling rate (1 in exact mode)."),
        C("batches", "bigint", "Getpage batches that made up the pane."),
        C("emitted_at", "timestamp", "Wall-clock time the job emitted the row."),
        C(
            "model",
            "string",
            "Model of the sim_ columns: the pool's policy in miniature caches (lru-vpseqt, fifo, lru) once its "
            "attributes are known, else the LRU stack (lru-stack, lru-shards).",
        ),
        C("model_sampling_rate", "double", "Spatial sampling rate of that model (1: every page)."),
        C(
            "observed_sync_reads",
            "bigint",
            "Random getpages the source reported as misses: the pool's measured sync reads (null if not reported).",
        ),
        COST_COLUMN,
        C("vpseqt", "double", "The pool's VPSEQT (sequential steal threshold, %) during the pane."),
    ),
    "pane_start",
    ("source", "pool", "pane_start"),
    key=("source", "pool", "pane_start"),
)

OBJECT_PANE = Table(
    "object_pane",
    "One row per object (table or index space) and pane.",
    (
        *KEY,
        C("object", "string", "Object name (database.space)."),
        *PANE,
        *GETPAGES,
        C("working_set_pages", "bigint", "Pages of the object whose latest reference is within the window."),
        C("sequential_share", "double", "Share of sequential and RID-list getpages."),
        C("access_class", "string", "SAMOS (mostly sequential) or RAMOS (mostly random)."),
        *AT_CURRENT,
        COST_COLUMN,
    ),
    "pane_start",
    ("source", "pool", "pane_start", "object"),
    key=("source", "pool", "pane_start", "object"),
)

SIM_CURVE = Table(
    "sim_curve",
    "The simulated curve per pool and pane over candidate sizes.",
    (
        *KEY,
        *PANE,
        C("size_pages", "bigint", "Candidate pool size in buffers."),
        C("size_factor", "double", "Candidate size over the current size (null if the current size is unknown)."),
        C("is_current", "boolean", "True for the pool's current size."),
        C("refs", "bigint", "Getpages simulated in the pane."),
        C("hits", "double", "Simulated LRU hits at this size."),
        C("misses", "double", "Simulated misses at this size."),
        C("hit_ratio", "double", "hits / refs."),
        C("miss_ratio", "double", "misses / refs."),
        C("hit_ratio_random", "double", "Hit ratio of random getpages."),
        C("hit_ratio_sequential", "double", "Hit ratio of sequential getpages."),
        C("sync_reads", "double", "Random misses: synchronous reads."),
        C("prefetch_pages", "double", "Sequential and RID-list misses: pages prefetch must bring in."),
        C("sync_reads_per_s", "double", "Synchronous reads per second."),
        C("prefetch_pages_per_s", "double", "Prefetched pages per second."),
        C("avoided_sync_reads_per_s", "double", "Synchronous reads per second avoided compared with the current size."),
        C("cpu_seconds_saved_per_s", "double", "CPU seconds per second saved compared with the current size."),
        C("elapsed_seconds_saved_per_s", "double", "I/O wait seconds per second saved (null without a sync I/O time)."),
        C("model", "string", "lru-stack / lru-shards (stack distances) or the miniature caches' policy."),
        C("model_sampling_rate", "double", "Spatial sampling rate of the model (1: every page)."),
        C("pool_policy", "boolean", "True for the model of the pool's own policy (the one pool_pane reports)."),
        COST_COLUMN,
        C(
            "vpseqt",
            "double",
            "VPSEQT the lru-vpseqt row simulates: the pool's own on pool_policy rows; another value on rows of "
            "the current size that show what an -ALTER of VPSEQT would do (pool_policy false). Null for other models.",
        ),
        C(
            "curve",
            "string",
            "Which curve the row is on: 'sizes' (the model over candidate sizes) or 'vpseqt:<value>' (the current "
            "size at another VPSEQT, a what-if row). With model and size_pages it names the row.",
            backfill=f"CASE WHEN NOT pool_policy AND vpseqt IS NOT NULL THEN {VPSEQT_CURVE_SQL} "
            f"ELSE '{SIZES_CURVE}' END",
        ),
    ),
    "pane_start",
    ("source", "pool", "pane_start", "model", "size_pages"),
    # vpseqt cannot be in the key (null for models without one): curve tells what-if rows apart.
    key=("source", "pool", "pane_start", "model", "curve", "size_pages"),
)

SIM_ACCURACY_PANE = Table(
    "sim_accuracy_pane",
    "The simulation at the pool's current setting against the sync reads the pool measured, per pane, over "
    "the panes since the setting last changed (at most the simulation window).",
    (
        *KEY,
        C("window_start", "timestamp", "Start of the first pane of the window."),
        C("window_end", "timestamp", "End of this pane: the window ends here."),
        C("panes", "int", "Panes in the window."),
        C("whole_panes", "int", "Of those, panes that ran at one setting from start to end."),
        C("size_pages", "bigint", "The pool's size (VPSIZE) in the window."),
        C("model", "string", "The model simulated (the pool's policy, or the LRU stack before attributes)."),
        C("sampling_rate", "double", "Its spatial sampling rate."),
        C("getpages", "bigint", "Getpages in the window."),
        C("simulated_sync_reads", "double", "Sync reads (random misses) the model gives at the current size."),
        C("measured_sync_reads", "bigint", "Random getpages the trace reported as misses."),
        C("simulated_sync_reads_per_s", "double", "simulated_sync_reads per second of the window."),
        C("measured_sync_reads_per_s", "double", "measured_sync_reads per second of the window."),
        C("error_ratio", "double", "simulated / measured - 1."),
        C("pane_simulated_sync_reads", "double", "Simulated sync reads of this pane alone."),
        C("pane_measured_sync_reads", "bigint", "Measured sync reads of this pane alone."),
        C("measured_from", "string", "trace: the getpage trace's hit flags."),
    ),
    "window_end",
    ("source", "pool", "window_end"),
    key=("source", "pool", "window_end"),
)

PREDICTION_CHECK = Table(
    "prediction_check",
    "After a pool was altered: what the simulation predicted for the new setting before the change against "
    "what the pool measured after it, per getpage (so a change in load is no error), with workload similarity.",
    (
        *KEY,
        C("changed_at", "timestamp", "Event time the setting changed (the attribute record's time)."),
        C("setting", "string", "VPSIZE, VPSEQT or PGSTEAL."),
        C("old_value", "double", "The value before (null for PGSTEAL)."),
        C("new_value", "double", "The value after."),
        C(
            "predicted_sync_reads_per_s",
            "double",
            "Predicted sync reads per getpage at the new setting (from the pool-policy curve of the panes before "
            "the change) times the getpage rate measured after it; null where the model has no prediction.",
        ),
        C("measured_sync_reads_per_s", "double", "Sync reads per second the pool measured after the change."),
        C("error_ratio", "double", "predicted / measured - 1."),
        C("similarity", "double", "Workload similarity of the two ranges (docs/architecture.md), 1 = same mix."),
        C("predicted_sync_reads_per_getpage", "double", "The prediction per getpage."),
        C("measured_sync_reads_per_getpage", "double", "The measurement per getpage."),
        C("panes_after", "int", "Whole panes measured after the change."),
        C("measured_until", "timestamp", "End of the last of them."),
        C("getpages_per_s_before", "double", "Getpage rate before the change."),
        C("getpages_per_s_after", "double", "Getpage rate after it."),
        C("objects_new", "string", "Objects referenced after the change only (comma-separated)."),
        C("objects_gone", "string", "Objects referenced before it only."),
        C("model", "string", "The model that made the prediction."),
    ),
    "changed_at",
    ("source", "pool", "changed_at"),
    key=("source", "pool", "changed_at", "setting"),
)

WORKING_SET = Table(
    "working_set",
    "Working sets per pool (object null) and per object, per pane.",
    (
        *KEY,
        C("object", "string", "Object name; null for the whole pool."),
        *PANE,
        C("pane_pages", "bigint", "Distinct pages referenced in the pane."),
        C("window_pages", "bigint", "Distinct pages referenced in the window ending at this pane."),
        C("window_panes", "int", "Panes in the window."),
        C(
            "change_pages",
            "bigint",
            "Change of pane_pages from the previous pane (an object it did not touch had 0); NULL at first.",
        ),
        C(
            "scope",
            "string",
            "'pool' on the whole pool's row, 'object:<name>' on an object's: the row's key (object is null on the "
            "pool's row, which an Iceberg identifier field cannot be).",
            backfill=f"CASE WHEN object IS NULL THEN '{POOL_SCOPE}' ELSE '{OBJECT_SCOPE_PREFIX}' || object END",
        ),
    ),
    "pane_start",
    ("source", "pool", "pane_start"),
    key=("source", "pool", "pane_start", "scope"),
)

REUSE_DISTANCE = Table(
    "reuse_distance",
    "Reuse-distance histogram per pool and pane, in power-of-two buckets.",
    (
        *KEY,
        *PANE,
        C("access", "string", "random, sequential or rid."),
        C("distance_lo", "bigint", "Smallest LRU stack distance in the bucket (a power of two)."),
        C("distance_hi", "bigint", "Largest LRU stack distance in the bucket."),
        C("getpages", "double", "Getpages whose reuse distance falls in the bucket."),
    ),
    "pane_start",
    ("source", "pool", "pane_start"),
    key=("source", "pool", "pane_start", "access", "distance_lo"),
)

_INTERVAL = ("interval_start",)
POOL_STATS = Table(
    "pool_stats",
    "Statistics intervals per pool (IFCID 2, statistics reports), derived metrics.",
    (
        *_avro_columns("pool_stats"),
        C("getpages", "bigint", "Random plus sequential getpages."),
        C("application_hit_ratio", "double", "(getpages - sync reads) / getpages."),
        C("system_hit_ratio", "double", "(getpages - pages read) / getpages; may be negative (seed 000)."),
        C("read_ios_per_second", "double", "Sync reads plus prefetch read I/Os, per second."),
        C("sync_reads_per_second", "double", "Synchronous reads per second."),
        C("pages_read_per_second", "double", "Pages read (sync plus prefetched) per second."),
        C("pages_per_write", "double", "Pages written per write I/O (below 10 suggests lowering VDWQT)."),
        C("io_intensity", "double", "(Pages read + pages written) / VPSIZE."),
        C("luw_hit_ratio", "double", "Db2 LUW hit ratio: (l_reads - (p_reads - async reads)) / l_reads."),
        C("luw_lbp_hit_ratio", "double", "pureScale LBP hit ratio: (LBP pages found - async found) / l_reads."),
        C("flags", "string", "Findings, semicolon-separated."),
        C("vpsize", "bigint", "VPSIZE from the latest pool attributes (null if none seen)."),
        C("vpseqt", "double", "VPSEQT % from the latest pool attributes."),
        C("dwqt", "double", "DWQT % from the latest pool attributes."),
        C("vdwqt", "double", "VDWQT % from the latest pool attributes."),
        C("page_size", "int", "Page size in bytes from the latest pool attributes."),
        C("pgsteal", "string", "PGSTEAL (LRU, FIFO or NONE) from the latest pool attributes."),
        C("pgfix", "boolean", "PGFIX from the latest pool attributes."),
        C("frame_size", "int", "Frame size in bytes (4096, 1048576 or 2147483648) from the latest pool attributes."),
        C(
            "spsize",
            "bigint",
            "SPSIZE from the latest pool attributes: the buffers DB2's simulated pool adds to VPSIZE for the "
            "sim_ columns (DSNB431I); null without a simulated pool.",
        ),
        C("spseqt", "double", "SPSEQT % (the simulated pool's sequential threshold) from the latest pool attributes."),
    ),
    "interval_start",
    ("source", "pool", "interval_start"),
    key=("source", "pool", "interval_start", "origin"),
)

OBJECT_IO_STATS = Table(
    "object_io_stats",
    "I/O statistics per object and interval (IFCID 199).",
    (
        *_avro_columns("object_io_stats"),
        C("seconds", "double", "Interval length in seconds."),
        C("sync_reads_per_second", "double", "Synchronous reads per second."),
        C(
            "sync_io_seconds_per_second",
            "double",
            "Seconds of synchronous read wait per second (sync reads x average).",
        ),
        C(
            "cpu_seconds_per_second",
            "double",
            "CPU seconds per second spent on sync reads (jobs submit --cpu-us-per-sync-read, 30 µs by default).",
        ),
    ),
    "interval_start",
    ("source", "pool", "interval_start", "object"),
    key=("source", "pool", "interval_start", "object", "partition"),
)

IO_PANE = Table(
    "io_pane",
    "Measured I/O per pool, object, pane and I/O type, from the I/O events (IFCID 6/7, 8/9/10). "
    "Additive: I/O events that came after a pane was written add another row for the same key, so "
    "sum the rows of a key (the views do).",
    (
        *KEY,
        C("object", "string", "Object name (database.space)."),
        C("pane_start", "timestamp", "Start of the pane (event time of the I/O start, inclusive)."),
        C("pane_end", "timestamp", "End of the pane (exclusive); panes are the simulation's (--pane-seconds)."),
        C("direction", "string", "read or write."),
        C("io_type", "string", "Reads: sync, sequential, list or dynamic (prefetch). Writes: sync or async."),
        C("ios", "bigint", "I/O operations."),
        C("pages", "bigint", "Pages they read or wrote."),
        C("elapsed_us", "bigint", "Sum of their elapsed times, microseconds."),
        C("max_elapsed_us", "bigint", "The longest of them, microseconds."),
        COST_COLUMN,
    ),
    "pane_start",
    ("source", "pool", "pane_start", "object"),
    # No key: a pane flushed on quiet gets another row for the same key when its events come
    # later, and those rows add up (io_panes.py), so an upsert would lose counts.
)

GBP_STATS = Table(
    "gbp_stats",
    "Group buffer pool statistics per member (scope member) or structure (scope group) and interval.",
    (
        *_avro_columns("gbp_stats"),
        C("gbp_hit_ratio", "double", "z/OS: reads with data returned over all XI and NF reads."),
        C("luw_gbp_hit_ratio", "double", "pureScale: (GBP logical - physical) / logical."),
        C("gbp_full_per_10k_commits", "double", "pureScale: 10,000 x GBP-full conditions / commits (seed 004)."),
        C("cf_wait_us_per_call", "double", "pureScale: microseconds waited for the CF per request."),
        C(
            "disk_sync_reads_per_second",
            "double",
            "z/OS member: XI and NF reads without data (read from disk) per second.",
        ),
        C(
            "xi_reads_per_1000_getpages",
            "double",
            "z/OS member: reads after cross-invalidation per 1000 GBP-dependent getpages.",
        ),
        C("castout_pages_per_second", "double", "z/OS: pages cast out per second."),
        C(
            "group_read_hit_ratio",
            "double",
            "z/OS group (GDETAIL): reads with data returned over all the structure's reads.",
        ),
        C("directory_reclaims_per_second", "double", "z/OS group: directory entries reclaimed per second."),
        C(
            "xi_due_to_reclaims_per_second",
            "double",
            "z/OS group: cross-invalidations due to directory reclaims per second.",
        ),
        C("changed_pages_share", "double", "z/OS group: changed pages held (snapshot) over data entries; vs GBPOOLT."),
    ),
    "interval_start",
    ("source", "gbp", "interval_start"),
    # No key: LUW's member-wide exports (GBP, commits, CF waits) are rows of their own with
    # gbp 'GBP' for the same interval, which purescale_summary adds up.
)

BACKUP_STATS = Table(
    "backup_stats",
    "Db2 LUW backup and restore statistics (db2diag.log), analysed.",
    (
        *_avro_columns("backup_stats", skip=("threads",)),
        C("bm_threads", "int", "Buffer manipulator threads."),
        C("mc_threads", "int", "Media controller threads."),
        C("bm_io_share", "double", "Average share of BM thread time in I/O."),
        C("bm_msgq_share", "double", "Average share of BM thread time waiting for a buffer (MsgQ)."),
        C("bm_waitq_share", "double", "Average share of BM thread time waiting for a message (WaitQ)."),
        C("mc_io_share", "double", "Average share of MC thread time in I/O."),
        C("mc_msgq_share", "double", "Average share of MC thread time waiting for a buffer (MsgQ)."),
        C("mc_waitq_share", "double", "Average share of MC thread time waiting for a message (WaitQ)."),
        C("mbytes", "double", "Megabytes processed by the MC threads."),
        C("bottleneck", "string", "BM or MC: the side that spends the larger share in I/O."),
        C("bottleneck_means", "string", "What the bottleneck means for this operation."),
        C("findings", "string", "Seed 003's reading: bottleneck, BMs waiting for buffers, idle BMs ('; '-separated)."),
    ),
    "event_time",
    ("source", "event_time"),
    key=("source", "event_time", "operation"),
)

BACKUP_THREAD = Table(
    "backup_thread",
    "Db2 LUW backup and restore statistics per thread (seed 003's spreadsheet): where each BM and MC "
    "thread spent its time.",
    (
        C("source", "string", "Instance/database the operation ran on."),
        C("event_time", "timestamp", "When the operation's statistics record was written (its end)."),
        C("operation", "string", "BACKUP, RESTORE or UNKNOWN."),
        C("database", "string", "Database name."),
        C("position", "string", "Where the statistics record was read: file and line."),
        C("kind", "string", "BM (buffer manipulator: table spaces) or MC (media controller: backup media)."),
        C("thread", "int", "Thread number within its kind."),
        C("total_seconds", "double", "Total time of the thread."),
        C("io_seconds", "double", "Time in I/O."),
        C("msgq_seconds", "double", "Time waiting for a buffer (MsgQ)."),
        C("waitq_seconds", "double", "Time waiting for a control message (WaitQ)."),
        C("io_share", "double", "I/O / total."),
        C("msgq_share", "double", "MsgQ / total: waiting for buffers."),
        C("waitq_share", "double", "WaitQ / total: waiting for work."),
        C("buffers", "bigint", "Buffers processed."),
        C("mbytes", "double", "Megabytes processed."),
        C("finding", "string", "What the shares mean for this thread (idle, waiting for buffers, media-bound)."),
    ),
    "event_time",
    ("source", "event_time", "kind", "thread"),
    key=("source", "event_time", "kind", "thread"),
)

DEAD_LETTER = Table(
    "dead_letter",
    "Records that could not be parsed, decoded or placed in time, with the reason.",
    (
        *_avro_columns("dead_letter"),
        C("topic", "string", "Kafka topic the record came from (jobs), or the dead-letter topic (collectors)."),
    ),
    "detected_at",
    ("collector", "detected_at"),
)

ALERT = Table(
    "alert",
    "Alerts on regressions (dashboards/alerts.py, rules in dashboards/alert_rules.yaml): one row per alert, "
    "opened when its rule fires for a subject and updated in place when it resolves.",
    (
        C("alert_id", "string", "Identifier of the alert (stable from opening to resolution)."),
        C("rule", "string", "Name of the rule that fired (alert_rules.yaml)."),
        C("severity", "string", "warning or critical, from the rule."),
        C("source", "string", "Subsystem, member or collector source the alert is about (null: the whole system)."),
        C("pool", "string", "Buffer pool the alert is about (null when the rule is not per pool)."),
        C("subject", "string", "What the rule looked at, e.g. a pool, a table or a collector."),
        C("state", "string", "open or resolved."),
        C("opened_at", "timestamp", "Wall-clock time the evaluator opened the alert."),
        C("resolved_at", "timestamp", "Wall-clock time it saw the rule stop firing (null while open)."),
        C("updated_at", "timestamp", "Wall-clock time of the latest evaluation that saw the rule firing."),
        C("event_time", "timestamp", "Event time of the data the rule fired on (the end of the window it read)."),
        C("value", "double", "The measured value that crossed the threshold (latest while open)."),
        C("baseline", "double", "What it was compared with (e.g. the same hour a week earlier), if any."),
        C("threshold", "double", "The threshold of the rule."),
        C("message", "string", "The alert in words: rule, subject, value, baseline and threshold."),
    ),
    "opened_at",
    ("rule", "source", "pool", "opened_at"),
)

SYSTEM_MEMORY = Table(
    "system_memory",
    "Real storage and paging of the host per interval: growth of pools is never advised while it pages.",
    tuple(_avro_columns("system_memory")),
    "interval_start",
    ("source", "interval_start"),
    key=("source", "interval_start"),
)

ADVICE = Table(
    "advice",
    "Advice with evidence (advice/): one row per piece of advice and evaluation; advice_latest shows the "
    "latest evaluation of each source.",
    (
        C("evaluated_at", "timestamp", "Wall-clock time of the evaluation that gave the advice."),
        C("window_end", "timestamp", "Event time the evaluation's data ends at (the pool's latest pane)."),
        C("source", "string", "Subsystem or member."),
        C("pool", "string", "The pool the advice is about."),
        C("kind", "string", "budget, placement, vdwqt, vpseqt, pgfix, framesize, pgsteal or shrink."),
        C("objects", "string", "Objects concerned, comma-separated (null if none)."),
        C("summary", "string", "The advice in one line."),
        C("avoided_sync_reads_per_s", "double", "Predicted sync reads per second avoided (negative: added)."),
        C("cpu_seconds_per_24h", "double", "Predicted CPU seconds saved per 24 hours."),
        C("elapsed_seconds_per_24h", "double", "Predicted elapsed (I/O wait) seconds saved per 24 hours."),
        C("sim_error", "double", "Simulated / measured sync reads - 1 at the current size (confidence)."),
        C("command", "string", "The commands to run, one per line."),
        C("evidence", "string", "The numbers behind the advice and the tables they come from (JSON)."),
        C("predicted", "string", "The predicted effect (JSON)."),
        C("confidence", "string", "Simulation accuracy and window (JSON)."),
        C("budget", "string", "The budget allocation of the evaluation for the source, on each of its rows (JSON)."),
    ),
    "evaluated_at",
    ("source", "evaluated_at", "pool", "kind"),
)

# The group simulation (simulator/group.py, flink-jobs/group_job.py): a data-sharing group's
# members' LBPs and its GBP fed in one event-time order. `group_name`, not `group` (an SQL word).
GROUP_KEY = (
    C("group_name", "string", "Data-sharing group (z/OS) or pureScale instance."),
    C("gbp", "string", "Group buffer pool, e.g. GBP1 (the pools of that number in every member)."),
)
GBP_POINT = (
    C("data_entries", "bigint", "GBP data entries (page images) simulated."),
    C("ratio", "double", "RATIO simulated: directory entries per data entry."),
    C("directory_entries", "bigint", "Directory entries: floor(ratio x data entries)."),
    C("structure_mb", "double", "Structure size: data x page size + directory x 400 bytes (DATA-SHARING.md), MB."),
    C("is_current", "boolean", "True for the GBP's current size and RATIO (from gbp_stats, else the settings)."),
)
GBP_COUNTERS = (
    C("getpages", "double", "Getpages of the members simulated (scaled back when sampled)."),
    C("lbp_hits", "double", "Getpages that found a valid buffer in the member's LBP."),
    C("sync_reads_xi", "double", "Sync reads of a buffer invalidated by XI (SYN.READ(XI))."),
    C("xi_data_returned", "double", "Of those, the GBP returned the page."),
    C("xi_no_data", "double", "Of those, the GBP had no data: a disk read."),
    C("sync_reads_nf", "double", "Sync reads of a page not in the LBP (SYN.READ(NF))."),
    C("nf_data_returned", "double", "Of those, the GBP returned the page."),
    C("nf_no_data", "double", "Of those, the GBP had no data: a disk read."),
    C("disk_sync_reads", "double", "xi_no_data + nf_no_data: synchronous reads from disk."),
    C("gbp_hit_ratio", "double", "(xi_data_returned + nf_data_returned) / (sync_reads_xi + sync_reads_nf)."),
    C("directory_reclaims", "double", "Directory entries reclaimed (each cross-invalidates its registered members)."),
    C("xi_due_to_reclaims", "double", "Cross-invalidations due to directory reclaims."),
    C("xi_due_to_writes", "double", "Cross-invalidations due to writes of changed pages."),
    C("changed_pages_written", "double", "Changed pages written to the GBP."),
    C("data_entry_reclaims", "double", "Data entries reclaimed (clean page images dropped)."),
    C("writes_failed_no_storage", "double", "Writes that failed: every data entry held changed data."),
    C("castout_pages", "double", "Pages cast out to disk (GBPOOLT, or after a failed write)."),
)
GROUP_RUN = (
    C("sampling_rate", "double", "Spatial sampling rate of the group simulation (1: every page)."),
    C("late_getpages", "bigint", "Getpages that came after events of a later time had been simulated."),
    C("model", "string", "reference (DATA-SHARING.md's rules) or the options the job ran with."),
    C("emitted_at", "timestamp", "Wall-clock time the job emitted the row."),
    C("warmup", "boolean", "True until a whole pane has run since the group simulation (re)started."),
)

GBP_CURVE = Table(
    "gbp_curve",
    "The group simulation per GBP and pane over a grid of GBP sizes and RATIOs, the members' LBPs at their "
    "current sizes: group totals.",
    (
        *GROUP_KEY,
        *PANE,
        *GBP_POINT,
        C("members", "string", "The members simulated, comma-separated."),
        *GBP_COUNTERS,
        *GROUP_RUN,
    ),
    "pane_start",
    ("group_name", "gbp", "pane_start", "data_entries", "ratio"),
    # Iceberg refuses a double in a key: the directory entries tell the ratios apart.
    key=("group_name", "gbp", "pane_start", "data_entries", "directory_entries"),
)

GBP_MEMBER = Table(
    "gbp_member",
    "The group simulation's counters per member, GBP point and pane (gbp_curve split by member).",
    (
        *GROUP_KEY,
        C("member", "string", "The member (its source)."),
        *PANE,
        *GBP_POINT,
        *GBP_COUNTERS,
        *GROUP_RUN,
    ),
    "pane_start",
    ("group_name", "gbp", "member", "pane_start", "data_entries", "ratio"),
    key=("group_name", "gbp", "member", "pane_start", "data_entries", "directory_entries"),
)

LBP_CURVE = Table(
    "lbp_curve",
    "Each member's LBP curve with invalidations, per pane: at candidate LBP sizes, hits, XI refreshes and "
    "NF reads, each split into GBP hit and disk read (the GBP at its current setting).",
    (
        *GROUP_KEY,
        C("member", "string", "The member (its source)."),
        C("pool", "string", "The member's pool, e.g. BP1."),
        *PANE,
        C("size_pages", "bigint", "Candidate LBP size in buffers."),
        C("is_current", "boolean", "True for the member's current VPSIZE."),
        C("getpages", "double", "Getpages simulated."),
        C("lbp_hits", "double", "Getpages that found a valid buffer."),
        C("xi_gbp", "double", "XI refreshes the GBP returned."),
        C("xi_disk", "double", "XI refreshes read from disk."),
        C("nf_gbp", "double", "Not-found reads the GBP returned."),
        C("nf_disk", "double", "Not-found reads from disk."),
        C("disk_sync_reads", "double", "xi_disk + nf_disk."),
        C("lbp_hit_ratio", "double", "lbp_hits / getpages."),
        *GROUP_RUN,
    ),
    "pane_start",
    ("group_name", "gbp", "member", "pane_start", "size_pages"),
    key=("group_name", "gbp", "member", "pane_start", "size_pages"),
)

TABLES: tuple[Table, ...] = (
    POOL_PANE,
    OBJECT_PANE,
    SIM_CURVE,
    SIM_ACCURACY_PANE,
    PREDICTION_CHECK,
    WORKING_SET,
    REUSE_DISTANCE,
    POOL_STATS,
    OBJECT_IO_STATS,
    IO_PANE,
    GBP_STATS,
    BACKUP_STATS,
    BACKUP_THREAD,
    DEAD_LETTER,
    ALERT,
    SYSTEM_MEMORY,
    ADVICE,
    GBP_CURVE,
    GBP_MEMBER,
    LBP_CURVE,
)

BY_NAME = {t.name: t for t in TABLES}
