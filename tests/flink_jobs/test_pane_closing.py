"""A pool's panes close on its own time (simulation_job.py): each holds every getpage of its
minute of event time, whatever the job's watermark, which other sources move (Simulate driven
here without Flink: its state and timer service stand-ins)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from pyflink.datastream import TimeDomain

from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import GETPAGE, Simulate
from poolsight.infra.registry_access import RegistryAccess
from poolsight.schemas.getpage import Function
from poolsight.schemas.tables import BY_NAME

from .test_quiet_pools import Runtime
from .test_timers import Asked
from .test_tracker import _batches, _trace


def test_a_replays_panes_hold_their_own_getpages_however_far_the_watermark_runs_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1_800_000_000.0]  # wall time: years past the trace's event time, as a live source's
    monkeypatch.setattr(time, "time", lambda: clock[0])
    trace = _trace(20_000, seed=5)  # 400 s of event time from 1.7e9 s
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(trace, size=500))]
    table = {raw: (GETPAGE, b) for raw, b in batches}
    f = Simulate(SimulationOptions(RegistryAccess("http://127.0.0.1:1"), idle_flush_seconds=10.0))
    f.open(Runtime())
    monkeypatch.setattr(f, "_read", lambda raw: table[raw])
    ctx, out = Asked(), []
    for i, (raw, _) in enumerate(batches):
        ctx.domain = TimeDomain.PROCESSING_TIME
        out += f.process_element(("S|BP1", raw, "topic", 0, i), ctx)
        # After each batch, the watermark a live source moved (an event-time timer, as a savepoint
        # from before may hold) and the idle flush's timer before the pool is quiet.
        for domain in (TimeDomain.EVENT_TIME, TimeDomain.PROCESSING_TIME):
            ctx.domain = domain
            out += f.on_timer(int(clock[0] * 1000), ctx)
        clock[0] += 0.5
    cols = [c.name for c in BY_NAME["pool_pane"].columns]
    start, getpages, late = (cols.index(c) for c in ("pane_start", "getpages", "late_getpages"))
    rows = [(r[start], r[getpages], r[late]) for r in out if not isinstance(r, tuple)]
    # Brute force: the trace's getpages per minute; every minute but the last (still open) written.
    minute = (trace["t"] // 60).astype(np.int64)
    gp = trace["fun"] == Function.GETPAGE
    want = [(int(m) * 60_000, int((gp & (minute == m)).sum()), 0) for m in np.unique(minute)[:-1]]
    assert len(want) == 6 and rows == want
    assert {kind for kind, _ in ctx.asked} == {"processing"}
