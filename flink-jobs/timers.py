"""The processing-time timer that closes a quiet pool's panes, with a backstop.

A timer that fires while a stop-with-savepoint is being taken can lose the timer it registers in
turn: seen in `make chaos` (old-trace-resubmit after kafka-outage-60s, 2 of 10 trials), where the
restored job held the pool's whole pane in its state and never closed it, because no timer of that
key was in the savepoint. So each timer comes with a backstop one to two minutes later (on a whole
minute, so a busy key shares one per minute), registered before the savepoint: after a restore it
fires and the key's chain of timers starts again.
"""

from __future__ import annotations

import math
from typing import Any

BACKSTOP_SECONDS = 60


def wake_at(ctx: Any, due: float) -> None:
    """A processing-time timer at `due` (epoch seconds, rounded up to a whole second: a burst of
    records shares one) and its backstop."""
    timers = ctx.timer_service()
    timers.register_processing_time_timer(math.ceil(due) * 1000)
    timers.register_processing_time_timer((math.floor(due / BACKSTOP_SECONDS) + 2) * BACKSTOP_SECONDS * 1000)
