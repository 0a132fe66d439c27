"""untimed_bundles: Beam's per-bundle sampler keeps its bookkeeping and starts no thread, so a
bundle's end does not wait out the thread's sleep. Each case runs in a process of its own (the
change is to Beam's class, for the whole process)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

BUNDLE = """
import json, threading, time
from apache_beam.runners.worker import statesampler
from apache_beam.utils.counters import CounterFactory, CounterName
from poolsight.flink_jobs.bundle_timing import untimed_bundles

patched = untimed_bundles() if {patch} else None
again = untimed_bundles() if {patch} else None
sampler = statesampler.StateSampler("step", CounterFactory())
out = {{"patched": patched, "again": again, "bundles": []}}
for _ in range(2):  # a bundle processor's sampler is reset and started again for each bundle
    before = threading.active_count()
    sampler.start()
    during = threading.active_count() - before
    with sampler.scoped_state(CounterName("process"), "process"):
        inside = str(sampler.current_state().name)
        busy = time.perf_counter()
        while time.perf_counter() - busy < 0.05:
            pass
    tracked = statesampler.get_current_tracker() is sampler
    sampler.stop_if_still_running()
    out["bundles"].append({{
        "threads": during, "inside": inside, "tracked": tracked,
        "after": statesampler.get_current_tracker() is None,
        "finished": sampler.finished, "left": threading.active_count() - before,
    }})
    sampler.reset()
print(json.dumps(out))
"""


def _bundles(patch: bool) -> dict[str, object]:
    r = subprocess.run(
        [sys.executable, "-c", BUNDLE.format(patch=patch)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def test_beams_sampler_starts_a_thread_per_bundle_that_its_end_joins() -> None:
    """The premise, on the pinned Beam: without the change each bundle starts a sampling thread."""
    got = _bundles(False)
    assert [b["threads"] for b in got["bundles"]] == [1, 1]  # type: ignore[attr-defined]
    assert [b["left"] for b in got["bundles"]] == [0, 0]  # type: ignore[attr-defined]


def test_untimed_bundles_start_no_thread_and_keep_the_samplers_bookkeeping() -> None:
    got, plain = _bundles(True), _bundles(False)
    assert (got["patched"], got["again"]) == (True, True)
    inside = "step-None-None-process-process-msecs"  # the step's state, as the threaded sampler names it
    assert [b["inside"] for b in plain["bundles"]] == [inside, inside]  # type: ignore[attr-defined]
    expected = {"threads": 0, "inside": inside, "tracked": True, "after": True, "finished": True, "left": 0}
    assert got["bundles"] == [expected, expected]
