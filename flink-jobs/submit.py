"""Submit, list and cancel the poolsight jobs on the launcher's session cluster.

Submitting runs the job module in its own Python process (PyFlink's client JVM
needs the cluster's jars and configuration in its environment); listing and
cancelling use Flink's REST API.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict
from typing import Any

from poolsight.infra.config import HOST, Settings
from poolsight.infra.install import flink_lib, pyflink_home
from poolsight.infra.services import flink_env

from .options import JobOptions, SimulationOptions, StatisticsOptions

JOBS = {
    "simulation": ("poolsight.flink_jobs.simulation_job", "poolsight-simulation"),
    "statistics": ("poolsight.flink_jobs.statistics_job", "poolsight-statistics"),
}


def _rest(s: Settings, path: str, method: str = "GET") -> Any:
    req = urllib.request.Request(f"http://{HOST}:{s.ports['flink_rest']}{path}", method=method)
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 (our own http:// URL)
        body = resp.read()
    return json.loads(body) if body else None


def submit(
    s: Settings, kind: str, job: JobOptions, options: SimulationOptions | StatisticsOptions, *, timeout: float = 300
) -> str:
    """Submit one job; returns the Flink job id once the cluster has it running."""
    module, name = JOBS[kind]
    running = [j for j in list_jobs(s) if j["name"] == name and j["state"] in ("RUNNING", "CREATED", "RESTARTING")]
    if running:
        raise RuntimeError(f"{name} is already running as {running[0]['jid']}; cancel it first")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            module,
            "--job",
            json.dumps(asdict(job)),
            "--options",
            json.dumps(asdict(options)),
            "--name",
            name,
        ],
        capture_output=True,
        text=True,
        env=flink_env(s, pyflink_home(), flink_lib(s)),
        timeout=timeout,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"submitting {name} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-4000:]}"
        )
    job_id = str(json.loads(lines[-1])["job_id"])
    wait_running(s, job_id)
    return job_id


def wait_running(s: Settings, job_id: str, timeout: float = 120) -> None:
    """Until every task of the job is running (sources reading); raises if the job fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = _rest(s, f"/jobs/{job_id}")
        if info["state"] in ("FAILED", "CANCELED", "FINISHED"):
            raise RuntimeError(f"job {job_id} is {info['state']}: {exceptions(s, job_id)}")
        if info["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in info["vertices"]):
            return
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} not running after {timeout:.0f} s")


def exceptions(s: Settings, job_id: str) -> str:
    try:
        info = _rest(s, f"/jobs/{job_id}/exceptions")
    except OSError as exc:
        return str(exc)
    root = (info.get("exceptionHistory") or {}).get("entries") or []
    return root[0]["stacktrace"][:3000] if root else "no exception recorded"


def list_jobs(s: Settings) -> list[dict[str, Any]]:
    """Jobs the cluster knows: jid, name, state, start-time, duration (ms)."""
    return list(_rest(s, "/jobs/overview")["jobs"])


def cancel(s: Settings, job_id: str, timeout: float = 60) -> None:
    _rest(s, f"/jobs/{job_id}?mode=cancel", method="PATCH")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _rest(s, f"/jobs/{job_id}")["state"] in ("CANCELED", "FAILED", "FINISHED"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} still running {timeout:.0f} s after cancel")


def cancel_all(s: Settings) -> list[str]:
    """Cancel every running poolsight job; returns their ids."""
    names = {name for _, name in JOBS.values()}
    ids = [j["jid"] for j in list_jobs(s) if j["name"] in names and j["state"] in ("RUNNING", "CREATED", "RESTARTING")]
    for jid in ids:
        cancel(s, jid)
    return ids
