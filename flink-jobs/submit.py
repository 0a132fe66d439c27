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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from poolsight.infra.config import Settings
from poolsight.infra.flink_service import client_env
from poolsight.infra.install import flink_lib, pyflink_home

from . import restore
from .options import JobOptions, SimulationOptions, StatisticsOptions

JOBS = {
    "simulation": ("poolsight.flink_jobs.simulation_job", "poolsight-simulation"),
    "statistics": ("poolsight.flink_jobs.statistics_job", "poolsight-statistics"),
}


def _rest(s: Settings, path: str, method: str = "GET", body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(  # noqa: S310 (flink_rest_url is checked to be http://)
        f"{s.flink_rest_url}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"} if data else {},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 (see above)
        answer = resp.read()
    return json.loads(answer) if answer else None


@dataclass(frozen=True)
class Submission:
    """One job to submit: its kind (a key of JOBS), group options, job options."""

    kind: str
    job: JobOptions
    options: SimulationOptions | StatisticsOptions
    fresh: bool = False


@dataclass(frozen=True)
class _Ready:
    """A submission checked and placed: its job resumes from `start` (None: fresh)."""

    module: str
    name: str
    job: JobOptions
    options: SimulationOptions | StatisticsOptions
    old: dict[str, Any]
    start: Path | None


def submit(
    s: Settings,
    kind: str,
    job: JobOptions,
    options: SimulationOptions | StatisticsOptions,
    *,
    timeout: float = 300,
    fresh: bool = False,
) -> str:
    """Submit one job; returns the Flink job id once the cluster has it running. It resumes
    from the state of the job it replaces (restore.py) unless `fresh`."""
    ready = _ready(s, Submission(kind, job, options, fresh))
    return _launch(s, ready, client_env(s, pyflink_home(), flink_lib(s)), timeout)


def submit_all(
    s: Settings, subs: list[Submission], *, all_or_none: bool = True
) -> tuple[dict[str, str], dict[str, Exception]]:
    """Submit the jobs side by side; returns the job id per kind that runs, and the error per
    kind that did not. Each submission is a client JVM of its own that spends most of its time
    starting and building the job graph, so two together take little longer than one. The
    checks (already running, where to resume) come first, for every job: with `all_or_none` a
    job refused there keeps the others from starting."""
    ready: dict[str, _Ready] = {}
    errors: dict[str, Exception] = {}
    for sub in subs:
        try:
            ready[sub.kind] = _ready(s, sub)
        except Exception as exc:  # refused (running, options changed), or the cluster not answering
            errors[sub.kind] = exc
    if errors and all_or_none:
        return {}, errors
    env = client_env(s, pyflink_home(), flink_lib(s))  # once: it may lay out the jars and configuration
    with ThreadPoolExecutor(max_workers=max(len(ready), 1), thread_name_prefix="submit") as pool:
        futures = {kind: pool.submit(_launch, s, r, env, 300) for kind, r in ready.items()}
    ids: dict[str, str] = {}
    for kind, f in futures.items():
        why = f.exception()
        if why is None:
            ids[kind] = f.result()
        elif isinstance(why, Exception):
            errors[kind] = why
        else:
            raise why  # KeyboardInterrupt and the like
    return ids, errors


def _ready(s: Settings, sub: Submission) -> _Ready:
    module, name = JOBS[sub.kind]
    running = [j for j in list_jobs(s) if j["name"] == name and j["state"] in ("RUNNING", "CREATED", "RESTARTING")]
    if running:
        raise RuntimeError(f"{name} is already running as {running[0]['jid']}; cancel it first")
    old = restore.read_record(s, name, sub.job.group)
    opts = asdict(sub.options)
    start = (
        None if sub.fresh else restore.resume_point(s, name, sub.job.group, opts, _checkpoints(s, old.get("job_id")))
    )
    job = replace(sub.job, restore_from=None if start is None else str(start))
    return _Ready(module, name, job, sub.options, old, start)


def _launch(s: Settings, r: _Ready, env: dict[str, str], timeout: float) -> str:
    """The job's client process, then its record, and its old snapshots gone once it runs."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            r.module,
            "--job",
            json.dumps(asdict(r.job)),
            "--options",
            json.dumps(asdict(r.options)),
            "--name",
            r.name,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"submitting {r.name} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-4000:]}"
        )
    job_id = str(json.loads(lines[-1])["job_id"])
    # What `up` needs to submit it again if a restarted JobManager forgets it (resume.py).
    restore.write_record(
        s,
        r.name,
        r.job.group,
        job_id=job_id,
        options=asdict(r.options),
        savepoint=None,
        restored_from=r.job.restore_from,
        job={**asdict(r.job), "restore_from": None},
        running=True,
        submitted=time.time(),
    )
    wait_running(s, job_id)
    restore.prune(s, r.old, r.start)
    return job_id


def _checkpoints(s: Settings, job_id: str | None) -> dict[str, Any] | None:
    """What the JobManager says of a job's checkpoints (completed count, latest locations);
    None when it no longer knows the job (restarted since) or cannot be asked."""
    if not job_id:
        return None
    try:
        info = _rest(s, f"/jobs/{job_id}/checkpoints")
    except (OSError, ValueError):
        return None
    latest = info.get("latest") or {}
    completed, savepoint = ((latest.get(k) or {}).get("external_path") for k in ("completed", "savepoint"))
    return {
        "completed": (info.get("counts") or {}).get("completed"),
        "paths": [p for p in (completed, savepoint) if p],
        "savepoint": savepoint,
    }


def completed_checkpoints(s: Settings, job_id: str) -> dict[int, tuple[float, float]]:
    """The job's recent completed checkpoints (the JobManager keeps the last few): id -> (when
    triggered, when the last task acknowledged it), epoch seconds."""
    history = _rest(s, f"/jobs/{job_id}/checkpoints").get("history") or []
    return {
        int(h["id"]): (h["trigger_timestamp"] / 1000, (h["trigger_timestamp"] + h["end_to_end_duration"]) / 1000)
        for h in history
        if h.get("status") == "COMPLETED" and not h.get("is_savepoint")
    }


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
    raise TimeoutError(f"job {job_id} not running after {timeout:.0f} s: {_why_not_running(s, job_id)}")


def _why_not_running(s: Settings, job_id: str) -> str:
    """What holds a job back: its tasks' states, the cluster's TaskManagers and free slots, and
    the job's last exception (a TaskManager gone or its slots still held shows here)."""
    try:
        info = _rest(s, f"/jobs/{job_id}")
        cluster = _rest(s, "/overview")
    except (OSError, ValueError) as exc:
        return f"the JobManager does not answer ({exc})"
    states: dict[str, int] = {}
    for v in info.get("vertices", []):
        states[v["status"]] = states.get(v["status"], 0) + 1
    tasks = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    return (
        f"job {info['state']} (tasks: {tasks or 'none'}); TaskManagers {cluster.get('taskmanagers')}, "
        f"free slots {cluster.get('slots-available')} of {cluster.get('slots-total')}; "
        f"last exception: {exceptions(s, job_id)[:1500]}"
    )


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


def stop(s: Settings, job_id: str, timeout: float = 180) -> str:
    """Stop a job with a savepoint (no drain: open panes stay open in it); returns its location.
    The job's name records it, so the next submission resumes from it."""
    name = _rest(s, f"/jobs/{job_id}")["name"]
    trigger = _rest(s, f"/jobs/{job_id}/stop", method="POST", body={"drain": False})["request-id"]
    try:
        location = _savepoint_done(s, job_id, trigger, timeout)
    except (OSError, ValueError, RuntimeError, TimeoutError):
        # The savepoint may have completed all the same (and the finished job's checkpoints gone):
        # record it if the cluster names it, so the next submission resumes from it.
        sp = (_checkpoints(s, job_id) or {}).get("savepoint")
        if sp:  # still meant to run unless the stop ended it
            try:
                ended = _rest(s, f"/jobs/{job_id}")["state"] in ("CANCELED", "FAILED", "FINISHED")
            except (OSError, ValueError, KeyError):
                ended = False
            _record_savepoint(s, name, job_id, sp, running=not ended)
        raise
    _record_savepoint(s, name, job_id, location, running=False)
    return location


def _savepoint_done(s: Settings, job_id: str, trigger: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = _rest(s, f"/jobs/{job_id}/savepoints/{trigger}")
        if r["status"]["id"] == "COMPLETED":
            op = r.get("operation") or {}
            if "location" not in op:
                raise RuntimeError(f"stopping job {job_id} with a savepoint failed: {op.get('failure-cause')}")
            return str(op["location"])
        time.sleep(0.5)
    raise TimeoutError(f"no savepoint of job {job_id} after {timeout:.0f} s")


def _record_savepoint(s: Settings, name: str, job_id: str, location: str, running: bool) -> None:
    group = restore.group_of(s, name, job_id)
    if group is not None:  # a job not submitted by poolsight has no record to resume by
        restore.write_record(s, name, group, savepoint=location, running=running)


def _record_cancelled(s: Settings, job_id: str) -> None:
    """A cancelled job is not meant to run: `up` does not submit it again (resume.py)."""
    try:
        name = _rest(s, f"/jobs/{job_id}")["name"]
    except (OSError, ValueError, KeyError):
        return
    group = restore.group_of(s, name, job_id)
    if group is not None:
        restore.write_record(s, name, group, running=False)


def cancel(s: Settings, job_id: str, timeout: float = 60) -> None:
    """Cancel without a savepoint: the next submission resumes from the job's last retained checkpoint."""
    _record_cancelled(s, job_id)
    if _rest(s, f"/jobs/{job_id}")["state"] in ("CANCELED", "FAILED", "FINISHED"):
        return  # e.g. a stop whose answer was lost finished it
    _rest(s, f"/jobs/{job_id}?mode=cancel", method="PATCH")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _rest(s, f"/jobs/{job_id}")["state"] in ("CANCELED", "FAILED", "FINISHED"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} still running {timeout:.0f} s after cancel")


def cancel_all(s: Settings, savepoint: bool = True) -> list[str]:
    """Stop every running poolsight job, with a savepoint unless told not to; returns their ids."""
    names = {name for _, name in JOBS.values()}
    listed = [j for j in list_jobs(s) if j["name"] in names]
    for j in listed:  # failed or suspended ones too: none is meant to come back after a restart
        _record_cancelled(s, str(j["jid"]))
    ids = [j["jid"] for j in listed if j["state"] in ("RUNNING", "CREATED", "RESTARTING")]

    def end(jid: str) -> None:
        if savepoint:
            try:
                stop(s, jid)
                return
            except (OSError, RuntimeError, TimeoutError) as exc:  # e.g. restarting: no savepoint possible
                print(f"job {jid}: no savepoint ({exc}); cancelled: resumes from its last checkpoint", file=sys.stderr)
        cancel(s, jid)

    # Side by side: a savepoint waits mostly on the cluster's checkpoint, not on this process.
    with ThreadPoolExecutor(max_workers=max(len(ids), 1), thread_name_prefix="cancel") as pool:
        futures = [pool.submit(end, jid) for jid in ids]
    failed = [(jid, f.exception()) for jid, f in zip(ids, futures, strict=True) if f.exception() is not None]
    for jid, exc in failed[1:]:  # the first is raised; the others said here
        print(f"job {jid}: not stopped: {exc}", file=sys.stderr)
    if failed:
        raise failed[0][1]  # type: ignore[misc]
    return ids
