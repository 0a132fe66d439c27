"""`poolsight demo` (`make demo`): the whole main job on embedded defaults.

Stack up, both jobs submitted, the generator running a scenario live at the pace of
the clock (event time = wall time, starting now, so the dashboard's freshness and
"now" mean what they say), the dashboard's URL, and every 10 s a summary read from
Trino, until interrupted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Any

from poolsight.argtypes import POSITIVE, SECONDS, Keyword
from poolsight.flink_jobs import submit as jobs
from poolsight.infra.config import load_settings
from poolsight.infra.trino import trino_connection
from poolsight.launcher import up
from poolsight.sql.named import query


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario", default="mixed")
    p.add_argument(
        "--rate",
        type=Keyword("max", POSITIVE, "max"),
        default=20_000.0,
        help="generator getpages/s on the wall clock (or max)",
    )
    p.add_argument(
        "--speedup", type=POSITIVE, default=1.0, help="event time runs this much faster than the wall (1: live)"
    )
    p.add_argument("--every", type=SECONDS, default=10.0, help="seconds between summaries")
    p.add_argument("--member", default="DEMO")


def _table(rows: list[Any]) -> str:
    """The latest pane per pool: sync reads measured (the trace's random misses) beside the
    simulation of the pool's own policy at its current size, and what doubling it saves."""
    head = (
        f"{'POOL':<6}{'VPSIZE':>8}{'MODEL':>11}{'PANES':>6}{'GETPAGES':>12}  {'LATEST PANE END':<20}"
        f"{'MEAS RD/S':>10}{'SIM RD/S':>10}{'ERROR':>8}{'SAVED RD/S@2X':>14}{'CPU S/S@2X':>11}"
        f"{'ELAPSED S/S@2X':>15}{'WORK SET':>10}"
    )
    lines = [head]
    for r in rows:

        def f(v: Any, fmt: str) -> str:
            return "-" if v is None else format(v, fmt)

        lines.append(
            f"{r[1]:<6}{f(r[2], ',d'):>8}{r[13] or '-':>11}{r[3]:>6}{r[4]:>12,}  {r[5]:%Y-%m-%d %H:%M:%S}  "
            f"{f(r[6], ',.0f'):>9}{f(r[7], ',.0f'):>10}{f(r[8], '+.1%'):>8}"
            f"{f(r[9], ',.0f'):>14}{f(r[10], '.4f'):>11}{f(r[11], '.4f'):>15}{f(r[12], ',d'):>10}"
        )
    return "\n".join(lines)


def run(a: argparse.Namespace) -> int:

    s = load_settings()
    up(s)
    names = {j["name"] for j in jobs.list_jobs(s) if j["state"] == "RUNNING"}
    if not {"poolsight-simulation", "poolsight-statistics"} <= names:
        jobs.cancel_all(s)
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "poolsight.cli",
                "jobs",
                "submit",
                "--from",
                "latest",
                "--group",
                f"demo-{int(time.time())}",
                # Live pace: a quiet pool's pane must not be closed by the clock while its next batch fills.
                "--idle-flush",
                "30",
            ],
            check=False,
        )
        if r.returncode != 0:
            return r.returncode
    rate = 200_000.0 if a.rate == "max" else a.rate
    rate_text = "max" if a.rate == "max" else f"{a.rate:g}"
    gen = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "generate",
            a.scenario,
            "--members",
            a.member,
            "--start",
            "now",
            "--duration",
            str(30 * 24 * 3600),
            "--rate",
            rate_text,
            "--event-rate",
            str(rate / a.speedup),
            "--seed",
            str(int(time.time())),
            # Small records at live pace, so each pool's getpages leave within a second or so.
            "--batch-getpages",
            "512",
        ],
        stdout=subprocess.DEVNULL,
    )
    print(
        f"dashboard: {s.dashboard_url}/overview  (pool page: {s.dashboard_url}/pool?source={a.member}&pool=BP1)\n"
        f"generating scenario {a.scenario} as {a.member} at {rate_text} getpages/s; a summary every "
        f"{a.every:.0f} s (Ctrl-C to stop; the stack keeps running, `poolsight down` stops it)",
        flush=True,
    )
    try:
        while gen.poll() is None:
            time.sleep(a.every)
            try:
                with trino_connection(s) as conn:
                    cur = conn.cursor()
                    cur.execute(*query("demo_summary").statement(source=a.member))
                    rows = cur.fetchall()
            except Exception as exc:
                print(f"(Trino: {exc})", flush=True)
                continue
            print(
                f"\n{time.strftime('%H:%M:%S')}  {a.scenario} on {a.member}: simulated at the current size "
                f"and at 2x (latest pane)\n{_table(rows) if rows else '(no pane committed yet)'}",
                flush=True,
            )
    except KeyboardInterrupt:
        pass
    finally:
        gen.terminate()
        gen.wait()
    return 0 if gen.returncode in (0, -15) else 1
