"""A Python worker's bundles end when their work does, not when Beam's sampling thread wakes.

PyFlink runs each bundle of a Python operator through Beam's BundleProcessor, which starts a
StateSampler for it: a thread that times which step runs, sleeping 2 ms, then 1.2x longer at
each wake up to 200 ms. The bundle's end stops the sampler and joins that thread, so it waits
out the sleep in progress: 18-21 ms after a 100 ms bundle (`jobs submit --bundle-ms`), the
TaskManager's operator blocked on the bundle's results meanwhile, and the worker idle. Nothing
reads those timings: they feed Beam's per-step msecs counters, which Flink's side drops (its
metric container keeps only beam:metric:user URNs), and Beam's lull log, which PyFlink's
process mode does not run.

`untimed_bundles()` keeps the sampler's bookkeeping (the current tracker, the steps' scoped
states, started and finished) and drops its thread. Called from an operator's `open`, which
PyFlink runs while it builds the bundle processor, before that processor's first bundle. The
methods are the class's: a processor made earlier takes them from its next bundle on (every
Python operator of the jobs calls this, so none runs a bundle under the old ones).
"""

from __future__ import annotations

import threading
from typing import Any

PATCHED = "_poolsight_untimed"


def untimed_bundles() -> bool:
    """Replace the sampler's start and stop (the same functions whoever calls first); False when Beam has no such
    sampler (another version's layout), in which case its bundles keep the thread."""
    try:
        # lazy: Beam comes with PyFlink; only the Python worker, which runs the operators, needs it
        from apache_beam.runners.worker import statesampler
    except ImportError:
        return False
    cls: Any = getattr(statesampler, "StateSampler", None)
    setter = getattr(statesampler, "set_current_tracker", None)
    if cls is None or setter is None:
        return False
    if getattr(cls, PATCHED, False):
        return True

    def start(self: Any) -> None:
        self.tracked_thread = threading.current_thread()
        setter(self)
        self.started = True

    def stop(self: Any) -> None:
        setter(None)
        self.finished = True

    cls.start, cls.stop = start, stop
    setattr(cls, PATCHED, True)
    return True
