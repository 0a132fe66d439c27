"""`poolsight jobs submit|list|cancel`: the streaming jobs on the session cluster."""

from __future__ import annotations

import argparse
import json
import sys

from poolsight.argtypes import (
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_COUNT,
    RATE,
    SECONDS,
    SECONDS_OR_ZERO,
    Checked,
    Keyword,
    real,
    whole,
)
from poolsight.flink_jobs import submit as jobs
from poolsight.flink_jobs.group_tracker import parse_groups, settings_groups
from poolsight.flink_jobs.options import (
    AUTO_SIM,
    JobOptions,
    SimulationOptions,
    StatisticsOptions,
    pool_mode,
    pool_modes,
)
from poolsight.infra.config import load_settings
from poolsight.infra.registry_access import registry_access
from poolsight.simulator.group_grid import GROUP_AUTO_PAGES


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="jobs_command", required=True)
    s = sub.add_parser("submit", help="submit the simulation and/or statistics job")
    s.add_argument("which", nargs="?", choices=["all", "simulation", "statistics"], default="all")
    s.add_argument(
        "--checkpoint-seconds",
        type=real(0.01, noun="a number of seconds"),  # Flink's shortest checkpoint interval: 10 ms
        default=JobOptions.checkpoint_seconds,
        help="checkpoint interval: results become queryable at each checkpoint",
    )
    s.add_argument(
        "--out-of-orderness",
        type=SECONDS_OR_ZERO,
        default=5.0,
        help="watermark delay, seconds of event time (the sources' watermarks, as Flink's web UI shows them; "
        "no pane waits on the watermark: a pool's and a data-sharing group's close on their own time)",
    )
    s.add_argument(
        "--bundle-ms",
        type=whole(1, noun="a number of milliseconds"),
        default=JobOptions.bundle_ms,
        help="longest wait of a record for the Python operators (PyFlink's bundle time): lower shows a "
        "closed pane sooner, each bundle costs a round trip to the Python worker",
    )
    s.add_argument(
        "--idle-source",
        type=SECONDS_OR_ZERO,
        default=0.0,
        help="mark a Kafka partition idle after this many wall-clock seconds without records, so an "
        "empty one does not hold the watermark back (0: never). No pane waits on the watermark: a "
        "pool's close on its next pane's getpages, its progress mark or --idle-flush, a data-sharing "
        "group's on its members' progress or --idle-flush",
    )
    s.add_argument(
        "--from",
        dest="start_from",
        choices=["earliest", "latest"],
        default="earliest",
        help="where a new consumer group starts reading",
    )
    s.add_argument("--parallelism", type=POSITIVE_COUNT, default=1)
    s.add_argument(
        "--group",
        default="poolsight",
        help="consumer group prefix (<prefix>-simulation, <prefix>-statistics): a new one starts at --from",
    )
    s.add_argument(
        "--fresh",
        action="store_true",
        help="start over: do not resume from the savepoint or last checkpoint of the job this one replaces "
        "(the consumer group's committed offsets still apply; what the old job held open is dropped)",
    )
    m = s.add_argument_group("simulation")
    m.add_argument(
        "--mode",
        choices=["auto", "exact", "shards"],
        default="auto",
        help="auto (default): exact for a pool whose footprint stays under the sample budget (--max-samples, "
        "default 65,536 pages), fixed-size SHARDS above it; exact: every pool exact, whatever its footprint; "
        "shards: --rate, or --max-samples",
    )
    m.add_argument("--rate", type=RATE, default=0.01, help="SHARDS sampling rate")
    m.add_argument("--max-samples", type=COUNT, default=0, help="SHARDS fixed size: at most this many pages")
    m.add_argument(
        "--pool-mode",
        action="append",
        type=Checked(pool_mode),  # pool_modes reads it again at submission
        default=[],
        metavar="POOL=MODE",
        help="per pool: auto, exact, shards:RATE or fixed:SAMPLES (repeatable)",
    )
    m.add_argument(
        "--pane-seconds", type=SECONDS, default=60.0, help="pane length: of the simulation and of the I/O events"
    )
    m.add_argument("--window-panes", type=POSITIVE_COUNT, default=15)
    m.add_argument(
        "--lateness",
        type=SECONDS_OR_ZERO,
        default=0.0,
        help="seconds an I/O pane waits after the pool's latest I/O event passes its end; a pool's or a "
        "data-sharing group's pane closes on its own getpages, progress marks or --idle-flush",
    )
    m.add_argument(
        "--idle-flush",
        type=SECONDS,
        default=10.0,
        help="emit a pool's open pane after this many wall-clock seconds without its getpages, once the job "
        "has read everything produced until then (I/O panes: I/O events)",
    )
    m.add_argument(
        "--state-ttl",
        type=SECONDS_OR_ZERO,
        default=7 * 86400.0,
        help="seconds (wall clock) after which a pool that sent nothing has its state dropped; 0 keeps it "
        "(simulation job; a quiet pool's simulator leaves the worker's memory once its pane is written)",
    )
    m.add_argument(
        "--check-panes",
        type=POSITIVE_COUNT,
        help="whole panes measured after a pool is altered before its prediction check (default: --window-panes)",
    )
    m.add_argument(
        "--no-pool-policy",
        dest="pool_policy",
        action="store_false",
        help="simulate plain LRU only (the stack curve), without miniature caches of each pool's own policy "
        "(PGSTEAL, VPSEQT): faster, but the current size is then not simulated as the pool runs",
    )
    m.add_argument(
        "--no-kernel-decode",
        dest="kernel_decode",
        action="store_false",
        help="decode getpage batches with fastavro instead of the compiled kernel (slower; for comparison "
        "and as a fallback)",
    )
    m.add_argument(
        "--cpu-us-per-sync-read",
        type=NON_NEGATIVE,
        default=30.0,
        help="CPU µs a sync read costs (seed 001: 20-40), carried with every row the jobs write",
    )
    m.add_argument("--sync-io-ms", type=POSITIVE, help="average sync read I/O time, for elapsed-time savings")
    m.add_argument(
        "--data-sharing-group",
        action="append",
        default=[],
        metavar="NAME=MEMBER,MEMBER",
        help="simulate these members' pools together with their group buffer pools (repeatable; adds to "
        "[groups] in poolsight.toml); members are the sources their getpages carry",
    )
    m.add_argument(
        "--no-group-discovery",
        dest="discover_groups",
        action="store_false",
        help="simulate only the groups given (--data-sharing-group, [groups]), not also those the members' "
        "pool attributes name (their group_name field: the generator sets it; -DISPLAY BUFFERPOOL does not show "
        "it, so name a DB2 shop's groups in [groups])",
    )
    m.add_argument(
        "--group-sample",
        type=Keyword("auto", RATE, None),
        default=None,
        metavar="auto|RATE",
        help="the group simulation's spatial sampling rate: auto (default) keeps a group exact while its LBPs "
        f"plus its largest simulated GBP directory hold at most {GROUP_AUTO_PAGES:,} pages, and samples larger "
        "ones down to that; or a rate in (0, 1] (1: exact)",
    )
    sub.add_parser("list", help="jobs on the cluster")
    c = sub.add_parser(
        "cancel", help="stop a job by id, or every poolsight job, with a savepoint the next submit resumes from"
    )
    c.add_argument("job_id", nargs="?")
    c.add_argument("--all", action="store_true")
    c.add_argument(
        "--no-savepoint",
        dest="savepoint",
        action="store_false",
        help="cancel at once; the next submit resumes from the job's last checkpoint instead of a savepoint",
    )


def run(a: argparse.Namespace) -> int:

    s = load_settings()
    if a.jobs_command == "list":
        for j in jobs.list_jobs(s):
            print(f"{j['jid']}  {j['state']:<11} {j['name']:<24} {j['duration'] / 1000:9.0f} s")
        return 0
    if a.jobs_command == "cancel":
        if not (a.all or a.job_id):
            print("poolsight jobs cancel: give a job id or --all", file=sys.stderr)
            return 2
        try:
            if a.all:
                ids = jobs.cancel_all(s, savepoint=a.savepoint)
            else:
                (jobs.stop if a.savepoint else jobs.cancel)(s, a.job_id)
                ids = [a.job_id]
        except (OSError, RuntimeError, TimeoutError) as exc:
            print(f"poolsight jobs cancel: {exc}", file=sys.stderr)
            return 1
        print(json.dumps({"cancelled": ids}))
        return 0
    try:
        per_pool = pool_modes(a.pool_mode)
        groups = parse_groups([*settings_groups(s.groups), *a.data_sharing_group])
    except ValueError as exc:
        print(f"poolsight jobs submit: {exc}", file=sys.stderr)
        return 2
    subs: list[jobs.Submission] = []
    for kind in ["simulation", "statistics"] if a.which == "all" else [a.which]:
        job = JobOptions(
            group=f"{a.group}-{kind}",
            checkpoint_seconds=a.checkpoint_seconds,
            out_of_orderness_seconds=a.out_of_orderness,
            idle_source_seconds=a.idle_source,
            start_from=a.start_from,
            parallelism=a.parallelism,
            bundle_ms=a.bundle_ms,
        )
        options: SimulationOptions | StatisticsOptions
        if kind == "simulation":
            sim = {
                "mode": "shards" if a.mode == "auto" else a.mode,
                "rate": a.rate,
                "max_samples": (a.max_samples or AUTO_SIM["max_samples"]) if a.mode == "auto" else a.max_samples,
                "pane_seconds": a.pane_seconds,
                "window_panes": a.window_panes,
            }
            options = SimulationOptions(
                registry_access(s),
                sim=sim,
                pool_sim=per_pool,
                cpu_us_per_sync_read=a.cpu_us_per_sync_read,
                sync_io_ms=a.sync_io_ms,
                idle_flush_seconds=a.idle_flush,
                check_panes=a.check_panes,
                pool_policy=a.pool_policy,
                kernel_decode=a.kernel_decode,
                groups={g: list(ms) for g, ms in groups.items()},
                group_sample=a.group_sample,
                discover_groups=a.discover_groups,
                state_ttl_seconds=a.state_ttl,
            )
        else:
            options = StatisticsOptions(
                registry_access(s),
                cpu_us_per_sync_read=a.cpu_us_per_sync_read,
                pane_seconds=a.pane_seconds,
                lateness_seconds=a.lateness,
                idle_flush_seconds=a.idle_flush,
            )
        subs.append(jobs.Submission(kind, job, options, fresh=a.fresh))
    out, errors = jobs.submit_all(s, subs)
    for sub in subs:
        if sub.kind in out:
            print(f"{sub.kind}: job {out[sub.kind]} running", file=sys.stderr)
        else:
            print(f"poolsight jobs submit {sub.kind}: {errors[sub.kind]}", file=sys.stderr)
    if out or not errors:
        print(json.dumps(out))  # the jobs running, also when another failed
    return 1 if errors else 0
