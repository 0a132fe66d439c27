"""The `poolsight` command: one entry point for the user's whole path."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence

from poolsight.advice.cli import add_arguments as add_advise_arguments
from poolsight.argtypes import UsageParser
from poolsight.dashboards.alerts import add_arguments as add_alerts_arguments
from poolsight.demo import add_arguments as add_demo_arguments
from poolsight.flink_jobs.cli import add_arguments as add_jobs_arguments
from poolsight.flink_jobs.resume import resume_forgotten
from poolsight.infra.config import ConfigError, Unreachable, load_settings
from poolsight.infra.download import DownloadError
from poolsight.infra.install import install_all
from poolsight.infra.java import JavaNotFound
from poolsight.infra.trino import unreachable as trino_unreachable
from poolsight.ingest.cli import add_generate_arguments, add_stats_arguments, add_trace_arguments
from poolsight.ingest.tracefiles import add_format_arguments
from poolsight.launcher import LaunchError, down, format_status, status, status_dicts, up
from poolsight.simulator.cli import add_arguments
from poolsight.sql.compare import add_arguments as add_compare_arguments
from poolsight.sql.history import add_arguments as add_history_arguments
from poolsight.sql.maintain import add_arguments as add_maintain_arguments
from poolsight.sql.report import add_arguments as add_report_arguments


def _cmd_install(args: argparse.Namespace) -> int:
    inst = install_all(load_settings())
    for key, value in vars(inst).items():
        print(f"{key:14} {value or 'external: not installed'}")
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    s = load_settings()
    rows = up(s, args.services or None)
    print(format_status(rows))
    healthy = {r.name for r in rows if r.state == "healthy"}
    not_resumed: list[str] = []
    if args.resume_jobs and {"flink-jobmanager", "flink-taskmanager"} <= healthy:
        _, not_resumed = resume_forgotten(s)  # what a restarted JobManager forgot
    ok = all(r.state == "healthy" for r in rows if not args.services or r.name in args.services)
    return 0 if ok and not not_resumed else 1


def _cmd_down(args: argparse.Namespace) -> int:
    stopped = down(load_settings())
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    rows = status(load_settings())
    if args.json:
        print(json.dumps({"services": status_dicts(rows)}, indent=2))
    else:
        print(format_status(rows))
    return 0 if all(r.state == "healthy" for r in rows) else 3


def _lazy(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A command whose module is imported only when it runs (numpy, pyarrow and PyFlink are slow to load)."""

    def run(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), function)(args))

    return run


def build_parser() -> argparse.ArgumentParser:
    # Every sub-command's parser is a UsageParser too: add_subparsers takes the parent's class.
    parser = UsageParser(prog="poolsight", description="Continuous buffer pool analysis.")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
        "install": ("download and install every service (cached; a second run downloads nothing)", _cmd_install),
        "up": ("start the stack (or the named services) and wait until healthy", _cmd_up),
        "down": ("stop what `up` started", _cmd_down),
        "status": ("show each service: state, address, PID, memory, health", _cmd_status),
        "simulate": (
            "simulate other pool sizes and policies from a getpage trace, offline",
            _lazy("poolsight.ingest.tracefiles", "simulate"),
        ),
    }
    for name, (help_text, func) in commands.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        if name == "up":
            p.add_argument(
                "services", nargs="*", help="only these services and their dependencies (a cluster's nodes together)"
            )
            p.add_argument(
                "--no-resume-jobs",
                dest="resume_jobs",
                action="store_false",
                help="do not submit again the jobs a restarted JobManager forgot (see flink-jobs/resume.py)",
            )
        if name == "status":
            p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        if name == "simulate":
            add_arguments(p)
            add_format_arguments(p)
    ingest = sub.add_parser("ingest", help="collectors: traces and statistics into Kafka")
    ingest_sub = ingest.add_subparsers(dest="what", required=True)
    trace = ingest_sub.add_parser("trace", help="getpage trace files into Kafka (replay, follow, dead letters)")
    add_trace_arguments(trace)
    trace.set_defaults(func=_lazy("poolsight.ingest.cli", "run_trace"))
    stats = ingest_sub.add_parser("stats", help="statistics reports into Kafka (or JSON lines)")
    add_stats_arguments(stats)
    stats.set_defaults(func=_lazy("poolsight.ingest.cli", "run_stats"))
    gen = sub.add_parser("generate", help="a DB2-like workload from a scenario, to Kafka or to files")
    add_generate_arguments(gen)
    gen.set_defaults(func=_lazy("poolsight.ingest.cli", "run_generate"))
    jobs = sub.add_parser("jobs", help="the streaming jobs: submit, list, cancel")
    add_jobs_arguments(jobs)
    jobs.set_defaults(func=_lazy("poolsight.flink_jobs.cli", "run"))
    demo = sub.add_parser("demo", help="the main job live: stack, jobs, generator, a Trino summary every 10 s")
    add_demo_arguments(demo)
    demo.set_defaults(func=_lazy("poolsight.demo", "run"))
    maint = sub.add_parser("maintain", help="Iceberg upkeep: compaction, snapshot expiry, orphan files")
    add_maintain_arguments(maint)
    maint.set_defaults(func=_lazy("poolsight.sql.maintain", "run_cli"))
    hist = sub.add_parser("history", help="rollups and retention: one cycle now (the maintenance service loops)")
    add_history_arguments(hist)
    hist.set_defaults(func=_lazy("poolsight.sql.history", "run_cli"))
    comp = sub.add_parser("compare", help="one pool over two time ranges, side by side (from Trino)")
    add_compare_arguments(comp)
    comp.set_defaults(func=_lazy("poolsight.sql.compare", "run_cli"))
    report = sub.add_parser(
        "report", help="the subsystem and its pools over one statistics interval, hour or day (from Trino)"
    )
    add_report_arguments(report)
    report.set_defaults(func=_lazy("poolsight.sql.report", "run_cli"))
    alerts = sub.add_parser("alerts", help="alerts on regressions: evaluate the rules once or for ever, list alerts")
    add_alerts_arguments(alerts)
    alerts.set_defaults(func=_lazy("poolsight.dashboards.alerts", "run_cli"))
    advise = sub.add_parser(
        "advise", help="advice with evidence: memory budget, object placement, thresholds, commands to run"
    )
    add_advise_arguments(advise)
    advise.set_defaults(func=_lazy("poolsight.advice.cli", "run"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    # Settings that do not hold, and a stack that cannot be set up as configured (a port taken,
    # no Java, a refused download, a service that exits at start-up): fix the setup, run again.
    except (ConfigError, DownloadError, JavaNotFound, LaunchError) as exc:
        print(f"poolsight {args.command}: {exc}", file=sys.stderr)
        return 2
    # A service the command needs did not answer within [endpoints] connect_timeout: one line
    # naming it and its address, no client traceback.
    except Unreachable as exc:
        print(f"poolsight {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if (line := trino_unreachable(load_settings(), exc)) is None:
            raise
        print(f"poolsight {args.command}: {line}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
