"""`poolsight ingest trace ...`: collectors from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from poolsight.argtypes import (
    COUNT,
    POSITIVE,
    POSITIVE_COUNT,
    SECONDS,
    SECONDS_OR_ZERO,
    InputFile,
    Keyword,
    OutputDir,
    OutputFile,
    real,
)
from poolsight.infra.config import load_settings
from poolsight.infra.kafka_access import kafka_access
from poolsight.infra.registry_access import registry_access
from poolsight.ingest.kafka_io import AvroProducer, check_services
from poolsight.ingest.scenario import ScenarioError, load, names
from poolsight.ingest.trace_collector import PositionStore, TraceCollector
from poolsight.ingest.tracefiles import add_format_arguments, catalog_from_args
from poolsight.simulator.trace import TraceFormatError, add_column_arguments, columns_from_args


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        type=InputFile(awaited_with="follow"),
        metavar="FILE",
        help="trace files: the project format (CSV/Parquet), any CSV with --page-column, or a DB2 for z/OS "
        "trace (SMF type 102, GTF, OMEGAMON record-trace text; docs/zos-traces.md)",
    )
    add_format_arguments(p)
    add_column_arguments(p)
    r = p.add_argument_group("replay")
    r.add_argument("--source", default="TRACE", help="source (subsystem/member) when the trace has no source column")
    r.add_argument(
        "--speed",
        type=real(0.0),
        default=0.0,
        help="1: recorded speed; 10: ten times faster; 0 (default): as fast as possible",
    )
    r.add_argument("--follow", action="store_true", help="keep tailing the files as they grow")
    r.add_argument(
        "--idle-stop", type=SECONDS_OR_ZERO, help="with --follow: stop after this many seconds without growth"
    )
    r.add_argument("--batch-getpages", type=POSITIVE_COUNT, default=4096, help="getpages per Kafka record")
    r.add_argument("--linger-ms", type=COUNT, default=20)
    r.add_argument(
        "--checkpoint-seconds",
        type=SECONDS_OR_ZERO,
        default=1.0,
        help="flush and remember the position at most this often (a crash repeats what was sent "
        "since, with the same sequence numbers); always at the end of a file",
    )
    r.add_argument("--state-dir", type=OutputDir(), help="where positions are remembered (default: <data>/ingest)")


def run_trace(a: argparse.Namespace) -> int:
    s = load_settings()
    columns = columns_from_args(a)
    try:
        catalog_from_args(a)  # a catalog that cannot be used stops here, before anything is sent
    except TraceFormatError as exc:
        print(f"poolsight ingest trace: --catalog: {exc}", file=sys.stderr)
        return 2
    check_services(kafka_access(s), registry_access(s), s.connect_timeout)
    producer = AvroProducer(kafka_access(s), registry_access(s), linger_ms=a.linger_ms, client_id="poolsight-trace")
    collector = TraceCollector(
        producer,
        PositionStore(a.state_dir or s.data_dir / "ingest" / "trace"),
        columns=columns,
        fmt=a.format,
        catalog=tuple(a.catalog),
        source=a.source,
        speed=a.speed,
        max_getpages=a.batch_getpages,
        checkpoint_seconds=a.checkpoint_seconds,
    )
    try:
        summary = collector.run(a.files, follow=a.follow, idle_stop_seconds=a.idle_stop)
    except TraceFormatError as exc:
        print(f"poolsight ingest trace: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        producer.flush()
        summary = collector.summary
    finally:
        collector.close()
    print(
        f"accepted {summary.accepted:,} rows, rejected {summary.rejected:,} (to the dead-letter topic); "
        f"sent {summary.getpages:,} getpages in {summary.records:,} records"
        + (f", {summary.read_ios:,} read I/Os" if summary.read_ios else ""),
        file=sys.stderr,
    )
    print(json.dumps(summary.as_dict()))
    for path, why in collector.unread.items():
        print(f"poolsight ingest trace: {path}: nothing could be read ({why})", file=sys.stderr)
    return 1 if collector.unread else 0


def add_generate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", help=f"a scenario name ({', '.join(names())}) or a YAML file")
    p.add_argument("--seed", type=COUNT, default=1)  # numpy's generators take no negative seed
    p.add_argument(
        "--rate",
        type=Keyword("max", POSITIVE, "max"),
        default="max",
        help="getpages per second on the wall clock, or max (default)",
    )
    p.add_argument(
        "--event-rate",
        type=POSITIVE,
        default=100_000.0,
        help="events (getpages and set-write-intents) per second of event time: the subsystem's load",
    )
    p.add_argument("--duration", type=SECONDS, help="seconds of event time to generate")
    p.add_argument("--getpages", type=POSITIVE_COUNT, help="getpages to generate")
    p.add_argument("--start-time", type=real(0.0), default=1_767_225_600.0, help="event time of the start, epoch s")
    p.add_argument(
        "--output",
        type=Keyword("kafka", OutputDir(), "kafka"),
        default="kafka",
        help="kafka (default) or a directory for trace.csv, JSON lines and statistics-report.txt",
    )
    p.add_argument(
        "--trace-format",
        default="csv",
        help="with --output DIR: the trace as csv (trace.csv), smf (trace.smf, SMF type 102) and/or gtf "
        "(trace.gtf), comma-separated; smf/gtf also write catalog.csv (DBID/OBID to names)",
    )
    p.add_argument("--batch-getpages", type=POSITIVE_COUNT, default=4096, help="getpages per Kafka record")
    p.add_argument("--linger-ms", type=COUNT, default=20, help="how long the producer waits to fill a Kafka batch")
    p.add_argument("--members", help="comma-separated source names replacing the scenario's members, in order")
    p.add_argument("--group", help="the data-sharing group's name replacing the scenario's (two or more members)")
    p.add_argument(
        "--alter",
        action="append",
        default=[],
        metavar="POOL:SETTING=VALUE@SECONDS",
        help="change a pool during the run as -ALTER BUFFERPOOL does (VPSIZE or VPSEQT, at SECONDS of event time "
        "from the start; repeatable), e.g. BP1:VPSIZE=60000@600: new attributes are published then; in a "
        "data-sharing scenario also a group buffer pool: GBP1:SIZE=MB@SECONDS (the CF structure's size in MB) or "
        "GBP1:RATIO=R@SECONDS (rebuilt at the same size), shown in the next gbp_stats rows",
    )
    p.add_argument(
        "--start",
        choices=["fixed", "now"],
        default="fixed",
        help="now: event time starts at the current minute (live demos); fixed: --start-time",
    )


def run_generate(a: argparse.Namespace) -> int:
    # lazy: the parser imports this module for every command; numpy, the kernel and Kafka load only when generating
    from poolsight.ingest.generator import Alter, FileSink, Generator, KafkaSink, Sink
    from poolsight.ingest.producer_process import ProducerProcess

    try:
        sc = load(a.scenario)
    except ScenarioError as exc:
        print(f"poolsight generate: {exc}", file=sys.stderr)
        return 2
    if a.duration is None and a.getpages is None:
        print("poolsight generate: give --duration or --getpages", file=sys.stderr)
        return 2
    if a.members:
        members = [m.strip() for m in a.members.split(",")]
        if len(members) != len(sc.members):
            print(f"poolsight generate: --members needs {len(sc.members)} names (scenario {sc.name})", file=sys.stderr)
            return 2
        sc = dataclasses.replace(sc, members=members)
    if a.group:
        if len(sc.members) < 2:
            print(f"poolsight generate: --group needs a data-sharing scenario (scenario {sc.name})", file=sys.stderr)
            return 2
        sc = dataclasses.replace(sc, group=a.group.strip())
    start_time = a.start_time if a.start == "fixed" else float(int(time.time()) // 60 * 60)
    rate = None if a.rate == "max" else float(a.rate)
    try:
        alters = [Alter.parse(x) for x in a.alter]
        gen = Generator(sc, seed=a.seed, event_rate=a.event_rate, start_time=start_time, alters=alters)
    except ValueError as exc:
        print(f"poolsight generate: {exc}", file=sys.stderr)
        return 2
    sink: Sink
    producer = None
    if a.output == "kafka":
        s = load_settings()
        check_services(kafka_access(s), registry_access(s), s.connect_timeout)
        # Encoding and sending in a second process: the generator keeps this one's core.
        producer = ProducerProcess(
            kafka_access(s), registry_access(s), client_id="poolsight-generate", linger_ms=a.linger_ms
        )
        sink = KafkaSink(producer, a.batch_getpages)
    else:
        formats = tuple(f.strip() for f in a.trace_format.split(",") if f.strip())
        unknown = sorted(set(formats) - {"csv", "smf", "gtf"})
        if unknown or not formats:
            print(f"poolsight generate: --trace-format {a.trace_format}: use csv, smf and/or gtf", file=sys.stderr)
            return 2
        sink = FileSink(Path(a.output), formats)
    try:
        totals = gen.run(sink, getpages=a.getpages, duration=a.duration, rate=rate)
    except KeyboardInterrupt:  # what was generated so far is delivered (or written) before stopping
        sink.close()
        totals = gen.totals
    except RuntimeError as exc:  # Kafka or the registry failed in the producer process: it says which
        print(f"poolsight generate: {exc}", file=sys.stderr)
        return 1
    finally:
        if producer is not None:
            producer.close()
    out = {k: v for k, v in totals.__dict__.items() if k != "outcomes"}  # outcomes: gbp_outcomes.csv
    out["getpages_per_s"] = totals.getpages / totals.seconds if totals.seconds else None
    if producer is not None:
        out["kafka"] = producer.metrics.as_dict()
    print(
        f"generated {totals.getpages:,} getpages ({totals.events:,} events), {totals.reads:,} read and "
        f"{totals.writes:,} write I/Os, {totals.intervals} statistics intervals in {totals.seconds:.1f} s",
        file=sys.stderr,
    )
    print(json.dumps(out))
    return 0


def add_stats_arguments(p: argparse.ArgumentParser) -> None:
    # lazy: the parsers load only for `ingest stats`
    from poolsight.ingest.stats_formats import FORMATS

    p.add_argument("files", nargs="+", type=InputFile(awaited_with="follow"), metavar="FILE")
    p.add_argument(
        "--format",
        choices=list(FORMATS),
        help="default: each file's format from its content. "
        + "; ".join(f"{f.name}: {f.reads}" for f in FORMATS.values()),
    )
    p.add_argument("--source", help="source when the input names no subsystem or member")
    p.add_argument(
        "--pool",
        help="display: the buffer pool, when the output names none (no DSNB401I or command line); "
        "gbp-display: the group buffer pool (no DSNB750I or command line)",
    )
    p.add_argument(
        "--at",
        help="when the input was produced, if it says not (ISO time, UTC): display, gbp-display: when the command ran; "
        "omegamon: when an interval the report does not state ended",
    )
    p.add_argument(
        "--interval",
        type=SECONDS,
        help="omegamon: seconds an interval the report does not state lasted (default: QUANTITY / (/SECOND))",
    )
    p.add_argument(
        "--columns",
        help="luw-bufferpool: column names of a DEL export (it has no header line), "
        "comma-separated, e.g. SNAPSHOT_TIME,BP_NAME,MEMBER,POOL_DATA_L_READS,...",
    )
    p.add_argument(
        "--output",
        type=Keyword("-", OutputFile(), "-"),
        help="write JSON lines to this file (- for standard output) instead of Kafka",
    )
    p.add_argument("--follow", action="store_true", help="keep reading the files as they grow")
    p.add_argument("--idle-stop", type=SECONDS_OR_ZERO, help="with --follow: stop after this many seconds without news")
    p.add_argument(
        "--state-dir", type=OutputDir(), help="where positions are remembered (default: <data>/ingest/stats)"
    )


def run_stats(a: argparse.Namespace) -> int:

    # lazy: the parsers and the producer load only for `ingest stats`
    from poolsight.ingest.stats_collector import StatsCollector, with_metrics
    from poolsight.ingest.stats_common import ParseOptions, Rejected
    from poolsight.ingest.stats_formats import detect, parser

    at = None
    if a.at:
        try:
            at = datetime.fromisoformat(a.at).replace(tzinfo=UTC).timestamp()
        except ValueError:
            print(f"poolsight ingest stats: --at {a.at!r} is not an ISO time", file=sys.stderr)
            return 2

    counts = {"blocks": 0}

    def note_reject(r: Rejected) -> None:
        print(f"rejected {r}", file=sys.stderr)

    with tempfile.TemporaryDirectory() as scratch:
        if a.output:
            try:
                fh = sys.stdout if a.output == "-" else open(a.output, "w")
            except OSError as exc:
                print(f"poolsight ingest stats: --output {a.output}: {exc.strerror}", file=sys.stderr)
                return 2

            def send(schema: str, rec: dict[str, Any]) -> None:
                fh.write(json.dumps(with_metrics(schema, rec)) + "\n")
                counts["blocks"] += schema != "pool_attributes"

            reject = note_reject
            flush = fh.flush
            state = a.state_dir or Path(scratch)
        else:
            s = load_settings()
            check_services(kafka_access(s), registry_access(s), s.connect_timeout)
            producer = AvroProducer(kafka_access(s), registry_access(s), client_id="poolsight-stats")

            def send(schema: str, rec: dict[str, Any]) -> None:
                producer.send(schema, f"{rec['source']}|{rec.get('pool', rec.get('gbp', ''))}", rec)
                counts["blocks"] += schema != "pool_attributes"

            def reject(r: Rejected) -> None:
                note_reject(r)
                producer.dead_letter(
                    r.file, f"line {r.line}", r.reason, r.raw.encode(), collector="ingest-stats", field_name=r.field
                )

            flush = producer.flush
            state = a.state_dir or s.data_dir / "ingest" / "stats"
        columns = [c.strip() for c in a.columns.split(",")] if a.columns else None
        parse = parser(a.format, ParseOptions(a.source, at, columns, a.pool, a.interval))
        collector = StatsCollector(parse, send, reject, flush, state)
        try:
            collector.run(a.files, follow=a.follow, idle_stop_seconds=a.idle_stop)
        except KeyboardInterrupt:
            pass
        finally:
            if a.output and a.output != "-":
                fh.close()
    print(f"accepted {counts['blocks']} blocks, rejected {collector.rejected}", file=sys.stderr)
    if a.follow:
        return 0  # a followed file may still be empty: nothing read is no error there
    unread = [p for p in a.files if collector.found.get(str(p), 0) == 0]
    for p in unread:
        why = collector.first_rejection.get(str(p))
        text = p.read_bytes()[: 1 << 20].decode("utf-8", errors="replace")
        hint = [f.name for f in detect(text) if f.name != a.format]
        print(
            f"poolsight ingest stats: {p}: nothing could be read"
            + (f" as {a.format}" if a.format else "")
            + (f" ({why.field}, line {why.line}: {why.reason})" if why else " (empty, or no statistics blocks in it)")
            + (f"; its content looks like {hint[0]}: try --format {hint[0]}" if hint and a.format else ""),
            file=sys.stderr,
        )
    return 1 if unread else 0
