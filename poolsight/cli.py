"""The `poolsight` command: one entry point for the user's whole path."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence

from poolsight.argtypes import UsageParser
from poolsight.infra.config import ConfigError, Unreachable, load_settings

# Every command's module is imported inside a function (`# lazy:`): each `poolsight` process
# loads only the one it runs (`status` and `down` no numpy, simulator or Kafka client),
# its arguments added when its parser parses, its work when it runs.


def _cmd_install(args: argparse.Namespace) -> int:
    from poolsight.infra.install import install_all  # lazy: only this command installs

    inst = install_all(load_settings())
    for key, value in vars(inst).items():
        print(f"{key:14} {value or 'external: not installed'}")
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    # lazy: the launcher (and the job client) only for the commands that start or stop services
    from poolsight.flink_jobs.resume import resume_forgotten
    from poolsight.launcher import format_status, up

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
    from poolsight.launcher import down  # lazy: as in _cmd_up

    stopped = down(load_settings())
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from poolsight.launcher import format_status, status, status_dicts  # lazy: as in _cmd_up

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


# What adds each command's arguments, its module imported only when called.


def _simulate_arguments(p: argparse.ArgumentParser) -> None:
    # lazy: numpy, the simulator and the trace readers only for `simulate`
    from poolsight.ingest.tracefiles import add_format_arguments
    from poolsight.simulator.cli import add_arguments

    add_arguments(p)
    add_format_arguments(p)


def _ingest_arguments(p: argparse.ArgumentParser) -> None:
    # lazy: the collectors' module (the Kafka client) only for `ingest`
    from poolsight.ingest.cli import add_stats_arguments, add_trace_arguments

    ingest_sub = p.add_subparsers(dest="what", required=True)
    trace = ingest_sub.add_parser("trace", help="getpage trace files into Kafka (replay, follow, dead letters)")
    add_trace_arguments(trace)
    trace.set_defaults(func=_lazy("poolsight.ingest.cli", "run_trace"))
    stats = ingest_sub.add_parser("stats", help="statistics reports into Kafka (or JSON lines)")
    add_stats_arguments(stats)
    stats.set_defaults(func=_lazy("poolsight.ingest.cli", "run_stats"))


def _adds(module: str, function: str = "add_arguments") -> Callable[[argparse.ArgumentParser], None]:
    """What adds a command's arguments, its module imported only when it is called."""

    def add(p: argparse.ArgumentParser) -> None:
        getattr(importlib.import_module(module), function)(p)

    return add


class _CommandParser(UsageParser):
    """A command's parser whose arguments are added when it first parses (so that a `poolsight`
    process imports only the module of the command it runs), or at once unless `lazy`."""

    _pending: Callable[[argparse.ArgumentParser], None] | None = None

    def arguments_from(self, adds: Callable[[argparse.ArgumentParser], None], *, lazy: bool) -> None:
        self._pending = adds
        if not lazy:
            self._complete()

    def _complete(self) -> None:
        if self._pending is not None:
            adds, self._pending = self._pending, None
            adds(self)

    # UsageParser's one signature for typeshed's two overloads.
    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._complete()
        return super().parse_known_args(args, namespace)


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """Every command's parser; with `lazy` (main), a command's arguments only once it parses."""
    # Every sub-command's parser is a UsageParser too: add_subparsers takes parser_class for them and theirs.
    parser = UsageParser(prog="poolsight", description="Continuous buffer pool analysis.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
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
            p.arguments_from(_simulate_arguments, lazy=lazy)
    ingest = sub.add_parser("ingest", help="collectors: traces and statistics into Kafka")
    ingest.arguments_from(_ingest_arguments, lazy=lazy)
    gen = sub.add_parser("generate", help="a DB2-like workload from a scenario, to Kafka or to files")
    gen.arguments_from(_adds("poolsight.ingest.cli", "add_generate_arguments"), lazy=lazy)
    gen.set_defaults(func=_lazy("poolsight.ingest.cli", "run_generate"))
    jobs = sub.add_parser("jobs", help="the streaming jobs: submit, list, cancel")
    jobs.arguments_from(_adds("poolsight.flink_jobs.cli"), lazy=lazy)
    jobs.set_defaults(func=_lazy("poolsight.flink_jobs.cli", "run"))
    demo = sub.add_parser("demo", help="the main job live: stack, jobs, generator, a Trino summary every 10 s")
    demo.arguments_from(_adds("poolsight.demo"), lazy=lazy)
    demo.set_defaults(func=_lazy("poolsight.demo", "run"))
    maint = sub.add_parser("maintain", help="Iceberg upkeep: compaction, snapshot expiry, orphan files")
    maint.arguments_from(_adds("poolsight.sql.maintain"), lazy=lazy)
    maint.set_defaults(func=_lazy("poolsight.sql.maintain", "run_cli"))
    hist = sub.add_parser("history", help="rollups and retention: one cycle now (the maintenance service loops)")
    hist.arguments_from(_adds("poolsight.sql.history"), lazy=lazy)
    hist.set_defaults(func=_lazy("poolsight.sql.history", "run_cli"))
    comp = sub.add_parser("compare", help="one pool over two time ranges, side by side (from Trino)")
    comp.arguments_from(_adds("poolsight.sql.compare"), lazy=lazy)
    comp.set_defaults(func=_lazy("poolsight.sql.compare", "run_cli"))
    report = sub.add_parser(
        "report", help="the subsystem and its pools over one statistics interval, hour or day (from Trino)"
    )
    report.arguments_from(_adds("poolsight.sql.report"), lazy=lazy)
    report.set_defaults(func=_lazy("poolsight.sql.report", "run_cli"))
    alerts = sub.add_parser("alerts", help="alerts on regressions: evaluate the rules once or for ever, list alerts")
    alerts.arguments_from(_adds("poolsight.dashboards.alerts"), lazy=lazy)
    alerts.set_defaults(func=_lazy("poolsight.dashboards.alerts", "run_cli"))
    advise = sub.add_parser(
        "advise", help="advice with evidence: memory budget, object placement, thresholds, commands to run"
    )
    advise.arguments_from(_adds("poolsight.advice.cli"), lazy=lazy)
    advise.set_defaults(func=_lazy("poolsight.advice.cli", "run"))
    return parser


def _failure(exc: Exception) -> tuple[int, str] | None:
    """(exit code, the one line to print) for an exception main explains, None for any other."""
    # lazy: the modules of these errors (the launcher, the Trino client) load only on an error
    from poolsight.infra.download import DownloadError
    from poolsight.infra.java import JavaNotFound
    from poolsight.infra.trino import unreachable as trino_unreachable
    from poolsight.launcher import LaunchError

    # Settings that do not hold, and a stack that cannot be set up as configured (a port taken,
    # no Java, a refused download, a service that exits at start-up): fix the setup, run again.
    if isinstance(exc, ConfigError | DownloadError | JavaNotFound | LaunchError):
        return 2, f"{exc}"
    # A service the command needs did not answer within [endpoints] connect_timeout: one line
    # naming it and its address, no client traceback.
    if isinstance(exc, Unreachable):
        return 1, f"{exc}"
    line = trino_unreachable(load_settings(), exc)
    return None if line is None else (1, line)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(lazy=True).parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if (failure := _failure(exc)) is None:
            raise
        code, line = failure
        print(f"poolsight {args.command}: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
