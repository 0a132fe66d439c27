"""Names the whole system shares, defined once: Kafka topics and Iceberg namespaces.

The launcher creates every topic and namespace listed here; producers, jobs and
views import the names from here instead of spelling them again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    doc: str
    retention_ms: int = 7 * 24 * 3600 * 1000


GETPAGE_TOPIC = Topic("poolsight.getpage.v1", 8, "getpage batches (IFCID 198), keyed by (source, pool)")
IO_TOPIC = Topic("poolsight.io.v1", 4, "read and write I/O events (IFCID 6/7, 8/9/10)")
STATS_TOPIC = Topic("poolsight.stats.v1", 4, "statistics intervals: pool, object I/O, GBP, backup, memory")
ATTRIBUTES_TOPIC = Topic("poolsight.attributes.v1", 1, "pool attributes and the object catalog")
DEADLETTER_TOPIC = Topic(
    "poolsight.deadletter.v1",
    1,
    "records that could not be parsed or decoded, with the reason",
    retention_ms=30 * 24 * 3600 * 1000,
)

TOPICS: tuple[Topic, ...] = (GETPAGE_TOPIC, IO_TOPIC, STATS_TOPIC, ATTRIBUTES_TOPIC, DEADLETTER_TOPIC)

# Kafka header carrying a record's event time (epoch milliseconds, decimal text):
# the jobs' watermarks follow it without decoding the Avro body. Kafka's own record
# timestamp stays the produce time, so time-based retention works for old traces.
EVENT_TIME_HEADER = "poolsight.event_time_ms"

# Iceberg: the Trino catalog name and the namespace every table lives in.
TRINO_CATALOG = "iceberg"
NAMESPACE = "poolsight"
NAMESPACES: tuple[str, ...] = (NAMESPACE,)

# Trino users (file-based access control, infra/services.py): the writer owns the schema
# (bootstrap, maintenance, the alert evaluator); the reader (dashboard, Grafana) may only
# SELECT from the tables and views of NAMESPACE.
TRINO_WRITER_USER = "poolsight"
TRINO_READER_USER = "poolsight_reader"

# An empty table the launcher scans to know Trino can schedule work on the Iceberg
# catalog (a node can answer SELECT 1 before it serves the catalog).
PROBE_TABLE = "launcher_probe"

# Which topic carries which record (schema name in schemas/). Topics carrying
# several record types register subjects as <topic>-<record full name>.
SCHEMA_TOPICS: dict[str, Topic] = {
    "getpage_batch": GETPAGE_TOPIC,
    "read_io_batch": IO_TOPIC,
    "write_io_batch": IO_TOPIC,
    "pool_attributes": ATTRIBUTES_TOPIC,
    "object_catalog": ATTRIBUTES_TOPIC,
    "pool_stats": STATS_TOPIC,
    "object_io_stats": STATS_TOPIC,
    "gbp_stats": STATS_TOPIC,
    "backup_stats": STATS_TOPIC,
    "system_memory": STATS_TOPIC,
    "dead_letter": DEADLETTER_TOPIC,
}
