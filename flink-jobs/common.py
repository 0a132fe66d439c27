"""What both jobs share: the Kafka source table, row types of the Iceberg tables, the
sinks, dead-letter rows and the submission of a job to the session cluster."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from poolsight.flink_jobs.options import JobOptions
from poolsight.flink_jobs.start_offsets import pin_latest
from poolsight.infra.config import CATALOG_NAME, METADATA_FILE_PROPERTIES, Settings, load_settings
from poolsight.infra.flinksql import iceberg_catalog_ddl, kafka_client_options, sql_literal
from poolsight.infra.kafka_access import kafka_access
from poolsight.names import EVENT_TIME_HEADER, NAMESPACE
from poolsight.schemas.tables import BY_NAME, Table
from poolsight.schemas.wire import MAX_RAW

if TYPE_CHECKING:
    from pyflink.common import Row
    from pyflink.common.typeinfo import TypeInformation
    from pyflink.datastream import DataStream, KeyedStream, StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment


def environment(s: Settings, name: str, opts: JobOptions) -> tuple[StreamExecutionEnvironment, StreamTableEnvironment]:
    """A streaming environment aimed at the session cluster, checkpointing exactly once."""
    # lazy: PyFlink loads only in the job's own client process (seconds); options and tests import this module
    from pyflink.common import Configuration
    from pyflink.datastream import CheckpointingMode, ExternalizedCheckpointRetention, StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment

    conf = Configuration()
    conf.set_string("execution.target", "remote")
    address, port = s.flink_rest_address  # the embedded JobManager's, or an external cluster's
    conf.set_string("rest.address", address)
    conf.set_string("rest.port", str(port))
    conf.set_string("pipeline.name", name)
    conf.set_string("python.fn-execution.bundle.time", str(opts.bundle_ms))
    if opts.restore_from:  # Kafka offsets, keyed state and the sinks' pending commits, together
        conf.set_string("execution.state-recovery.path", opts.restore_from)
    # The Python workers run inside the TaskManager ("process"), not in this short-lived
    # client (PyFlink's "loopback" mode, which it picks when it thinks it runs locally).
    os.environ["_python_worker_execution_mode"] = "process"
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(opts.parallelism)
    env.enable_checkpointing(int(opts.checkpoint_seconds * 1000), CheckpointingMode.EXACTLY_ONCE)
    # The job's own setting (the client's default would override the cluster's): a cancelled or
    # crashed job's last checkpoint stays for the next submission to resume from (restore.py).
    env.get_checkpoint_config().set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    )
    t_env = StreamTableEnvironment.create(env)
    tconf = t_env.get_config()
    for k in (
        "execution.target",
        "rest.address",
        "rest.port",
        "pipeline.name",
        "python.fn-execution.bundle.time",
        "execution.state-recovery.path",
    ):
        if conf.contains_key(k):
            tconf.set(k, conf.get_string(k, ""))
    if opts.idle_source_seconds > 0:
        tconf.set("table.exec.source.idle-timeout", f"{int(opts.idle_source_seconds * 1000)} ms")
    t_env.execute_sql(iceberg_catalog_ddl(s))
    return env, t_env


def kafka_source(
    t_env: StreamTableEnvironment, s: Settings, view: str, topics: Sequence[str], opts: JobOptions
) -> None:
    """A table of raw Kafka records (key, value, position) with event time from the header.

    A record without the header gets time 0: it must not move the partition's watermark
    (its produce time could be months ahead of a replayed trace sharing the partition).
    A job started at `latest` has its group's start committed first (start_offsets.py)."""
    ooo = int(opts.out_of_orderness_seconds * 1000)
    if opts.start_from == "latest" and opts.restore_from is None:  # a restore keeps the first run's start
        pin_latest(kafka_access(s), opts.group, topics)
    security = "".join(f"\n          {sql_literal(k)} = {sql_literal(v)}," for k, v in kafka_client_options(s).items())
    t_env.execute_sql(f"""
        CREATE TEMPORARY TABLE `{view}` (
          `k` BYTES,
          `v` BYTES,
          `topic` STRING METADATA VIRTUAL,
          `part` INT METADATA FROM 'partition' VIRTUAL,
          `off` BIGINT METADATA FROM 'offset' VIRTUAL,
          `headers` MAP<STRING, BYTES> METADATA VIRTUAL,
          `et` AS COALESCE(TO_TIMESTAMP_LTZ(
                  TRY_CAST(CAST(`headers`['{EVENT_TIME_HEADER}'] AS STRING) AS BIGINT), 3),
                  TO_TIMESTAMP_LTZ(0, 3)),
          WATERMARK FOR `et` AS `et` - INTERVAL '{ooo / 1000:.3f}' SECOND(3)
        ) WITH (
          'connector' = 'kafka',
          'topic' = '{";".join(topics)}',
          'properties.bootstrap.servers' = '{s.kafka_bootstrap}',{security}
          'properties.group.id' = '{opts.group}',
          'properties.auto.offset.reset' = '{opts.start_from}',
          'properties.isolation.level' = 'read_committed',
          'scan.startup.mode' = 'group-offsets',
          'key.format' = 'raw',
          'key.fields' = 'k',
          'value.format' = 'raw',
          'value.fields-include' = 'EXCEPT_KEY'
        )""")


def keyed_raw(t_env: StreamTableEnvironment, view: str) -> KeyedStream:
    """The raw records (k, v, topic, part, off) keyed by their Kafka key read as UTF-8 ("" for
    none). Flink 2.0's CAST is Java's decoding: U+FFFD for invalid bytes, never an error; the
    same string as Python's decode(..., "replace") but for encoded surrogates (fewer U+FFFD).
    The planner adds a ConstraintEnforcer (the key is NOT NULL) where key_by had its Python
    operator: the graph keeps its shape, so the source's and sinks' generated operator ids, and
    a savepoint of the jobs before this change, still map (a job resumed from one: checked).
    Those ids are positions in the graph: an operator more or fewer here moves them, and Flink
    then refuses such a savepoint (it drops no state silently)."""
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types

    rows = t_env.to_data_stream(
        t_env.sql_query(
            f"SELECT COALESCE(CAST(`k` AS STRING), '') AS `key`, ROW(`k`, `v`, `topic`, `part`, `off`) AS `rec` "
            f"FROM `{view}`"
        )
    )
    # Typed as key_by's rows are (a RowTypeInfo): PyFlink's keyed operator takes no other.
    record = raw_type()
    rows._j_data_stream.getTransformation().setOutputType(Types.ROW([Types.STRING(), record]).get_java_type_info())
    return keyed(rows, record)


def keyed(rows: DataStream, value_type: TypeInformation) -> KeyedStream:
    """A stream of (key, value) rows keyed by the key in the JVM, the keyed operator receiving the
    value. PyFlink's `key_by` takes a Python function: it sends every record through the Python
    worker and back only to read its key (its CPU and its wait: bench/README.md, "keyed in the
    JVM"); its rows had this same shape."""
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types
    from pyflink.datastream.data_stream import KeyedStream
    from pyflink.java_gateway import get_gateway

    selector = get_gateway().jvm.KeyByKeySelector()  # the row's first field, as key_by's own
    j_keyed = rows._j_data_stream.keyBy(selector, Types.ROW([Types.STRING()]).get_java_type_info())
    return KeyedStream(j_keyed, value_type, rows)


def raw_type() -> TypeInformation:
    """A raw record as the keyed operators receive it."""
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types

    raw = Types.PRIMITIVE_ARRAY(Types.BYTE())
    return Types.ROW_NAMED(["k", "v", "topic", "part", "off"], [raw, raw, Types.STRING(), Types.INT(), Types.LONG()])


def row_type(table: Table) -> TypeInformation:
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types

    kinds = {
        "string": Types.STRING(),
        "bigint": Types.LONG(),
        "int": Types.INT(),
        "double": Types.DOUBLE(),
        "boolean": Types.BOOLEAN(),
        "timestamp": Types.LONG(),
        "binary": Types.PRIMITIVE_ARRAY(Types.BYTE()),
    }
    return Types.ROW_NAMED(table.column_names(), [kinds[c.type] for c in table.columns])


def to_row(table: Table, values: dict[str, Any]) -> Row:
    # lazy: PyFlink, as above
    from pyflink.common import Row

    return Row(*[_cast(c.type, values.get(c.name)) for c in table.columns])


def _cast(kind: str, v: Any) -> Any:
    if v is None:
        return None
    if kind in ("bigint", "int", "timestamp"):
        return round(v) if isinstance(v, float) else int(v)
    if kind == "double":
        return float(v)
    if kind == "boolean":
        return bool(v)
    if kind == "string":
        return str(v)
    return v


def dead_letter(
    collector: str, reason: str, raw: bytes | None, row: Row, source: str = "", field: str | None = None
) -> Row:
    """The dead_letter table's row for a Kafka record the job could not use."""
    return to_row(
        BY_NAME["dead_letter"],
        {
            "source": source or "unknown",
            "position": f"{row[2]}/{row[3]}@{row[4]}",
            "field": field,
            "reason": reason,
            "raw": (raw or b"")[:MAX_RAW],
            "detected_at": int(time.time() * 1000),
            "collector": collector,
            "topic": row[2],
        },
    )


@dataclass(frozen=True)
class Keyed:
    """One keyed operator over a job's raw records (keyed_raw: by their Kafka key); main output
    rows of main_table, side outputs of `tags` (table name -> OutputTag). With `upstream` (an
    earlier operator's name and an OutputTag of feed rows, keyed_feed_type) it reads that side
    output instead, keyed by the rows' key."""

    function: Any
    main_table: str
    tags: dict[str, Any]
    operator: str  # its name and uid: its keyed state maps to the same operator in a resubmitted job
    upstream: tuple[str, Any] | None = None


def feed_type() -> TypeInformation:
    """(key, raw record) rows one operator hands another (Keyed.upstream)."""
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types

    return Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.PRIMITIVE_ARRAY(Types.BYTE())])


def keyed_feed_type() -> TypeInformation:
    """The side output carrying feed rows: (key, feed row), for `keyed`."""
    # lazy: PyFlink, as above
    from pyflink.common.typeinfo import Types

    return Types.ROW([Types.STRING(), feed_type()])


def feed_row(key: str, raw: bytes) -> Row:
    """A record for the operator keyed by `key` (keyed_feed_type)."""
    # lazy: PyFlink, as above
    from pyflink.common import Row

    return Row(key, Row(key, raw))


def run_keyed(env: StreamExecutionEnvironment, t_env: StreamTableEnvironment, view: str, name: str, *ops: Keyed) -> str:
    """Run each keyed operator over the raw records of `view` (one source, read once), insert
    every output into its table, and submit the job; returns its id."""
    raw = keyed_raw(t_env, view)
    statements = t_env.create_statement_set()
    seconds = env.get_checkpoint_config().get_checkpoint_interval() / 1000
    built: dict[str, DataStream] = {}
    for op in ops:
        if op.upstream is not None:
            records = keyed(built[op.upstream[0]].get_side_output(op.upstream[1]), feed_type())
        else:
            records = raw
        out = (
            records.process(op.function, output_type=row_type(BY_NAME[op.main_table]))
            .name(op.operator)
            .uid(op.operator)
        )
        built[op.operator] = out
        sink(t_env, statements, out, op.main_table, seconds)
        for table, tag in op.tags.items():
            sink(t_env, statements, out.get_side_output(tag), table, seconds)
    statements.attach_as_datastream()
    return str(env.execute_async(name).get_job_id())


def main(submit: Any, options: type, default_name: str) -> None:
    """The job module's entry point: `--job` and `--options` as JSON (see submit.py)."""

    p = argparse.ArgumentParser()
    p.add_argument("--job", required=True, help="JobOptions as JSON")
    p.add_argument("--options", required=True, help="the job's options as JSON")
    p.add_argument("--name", default=default_name)
    a = p.parse_args()
    job_id = submit(load_settings(), JobOptions(**json.loads(a.job)), options(**json.loads(a.options)), a.name)
    print(json.dumps({"job_id": job_id, "name": a.name}))


def sink(
    t_env: StreamTableEnvironment, statements: Any, stream: DataStream, table_name: str, checkpoint_seconds: float
) -> None:
    """Insert a stream of rows (typed by row_type) into the Iceberg table of that name."""

    table = BY_NAME[table_name]
    view = f"rows_{table_name}"
    t_env.create_temporary_view(view, t_env.from_data_stream(stream))
    ensure_table(t_env, table, table_properties(checkpoint_seconds))
    target = f"`{CATALOG_NAME}`.`{NAMESPACE}`.`{table.name}`"
    statements.add_insert_sql(flink_insert(table, target, view))


# Iceberg's Flink committer commits at each checkpoint with rows for the table, and empty at
# every 10th without: at 2 s checkpoints an empty commit every 20 s per job and table, each a
# snapshot kept until expiry in a metadata file that every commit writes again and every Trino
# query after it reads. So the jobs' tables commit empty only every EMPTY_COMMIT_SECONDS (a quiet
# table's commits still carry the job's checkpoint forward for sql/guard.py and the committer's
# restore), and delete the metadata files their commits replace (METADATA_FILE_PROPERTIES).
EMPTY_COMMIT_SECONDS = 300.0
METADATA_FILES_KEPT = int(METADATA_FILE_PROPERTIES["write.metadata.previous-versions-max"])


def table_properties(checkpoint_seconds: float) -> dict[str, str]:
    """The Iceberg table properties a job sets on each table it writes (see above)."""
    empty_every = max(10, round(EMPTY_COMMIT_SECONDS / checkpoint_seconds))
    return {**METADATA_FILE_PROPERTIES, "flink.max-continuous-empty-commits": str(empty_every)}


def ensure_table(t_env: StreamTableEnvironment, table: Table, properties: dict[str, str]) -> None:
    """Make the table's key its Iceberg identifier fields (required columns), which the upsert
    sink deletes on, and set `properties`; each only where it differs. Trino cannot set
    identifier fields, and Iceberg's Flink connector drops a Flink table's primary key, so this
    goes through the Iceberg API. A table without a key gets none: with identifier fields,
    Iceberg's Flink writer keeps only the last row per key within a checkpoint even when not in
    upsert mode."""
    # lazy: PyFlink, as above
    from pyflink.java_gateway import get_gateway

    jvm = get_gateway().jvm
    catalog = t_env._j_tenv.getCatalog(CATALOG_NAME).get().getCatalogLoader().loadCatalog()
    iceberg = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"{NAMESPACE}.{table.name}"))
    if set(iceberg.schema().identifierFieldNames()) != set(table.key):
        update = iceberg.updateSchema().allowIncompatibleChanges()
        names = jvm.java.util.ArrayList()
        for column in table.key:
            update = update.requireColumn(column)
            names.add(column)
        update.setIdentifierFields(names).commit()
    current = iceberg.properties()
    changed = {k: v for k, v in properties.items() if current.get(k) != v}
    if changed:
        props = iceberg.updateProperties()
        for k, v in changed.items():
            props = props.set(k, v)
        props.commit()


def flink_insert(t: Table, target: str, view: str) -> str:
    """INSERT from a Flink view whose columns are the table's, timestamps as epoch ms. Columns
    are named, so a table that gained columns at its end (add_column_ddl) is written right.
    A keyed table is written in upsert mode: Iceberg's Flink sink then writes an equality delete
    on the table's identifier fields (its key, see the jobs' ensure_table) with every row."""
    names = ", ".join(f"`{c.name}`" for c in t.columns)
    exprs = [f"TO_TIMESTAMP_LTZ(`{c.name}`, 3)" if c.type == "timestamp" else f"`{c.name}`" for c in t.columns]
    hint = " /*+ OPTIONS('upsert-enabled'='true') */" if t.key else ""
    return f"INSERT INTO {target}{hint} ({names}) SELECT {', '.join(exprs)} FROM `{view}`"
