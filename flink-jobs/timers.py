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


class Registered:
    """The timers a worker has asked for, per key, since a timer of that key last fired. Flink
    keeps one timer per (key, time) however often it is asked, but each asking is a timer row
    through the worker's output and a look into the TaskManager's timer queue (in RocksDB): flat
    out, asked at every record, they were 5 % of the worker's thread (then three a record: the
    pane's end too), for timers asked for already. A key's timer firing forgets all of that
    key's (asking again is harmless); a new worker starts with none (a restored job's timers
    are its state)."""

    LIMIT = 64  # times kept per key before they are forgotten and asked for again

    def __init__(self) -> None:
        self.keys: dict[str, set[int]] = {}

    def wake_at(self, ctx: Any, key: str, due: float) -> None:
        """As the module's wake_at, asking only for the timers not asked for yet."""
        timers = ctx.timer_service()
        for ms in (math.ceil(due) * 1000, (math.floor(due / BACKSTOP_SECONDS) + 2) * BACKSTOP_SECONDS * 1000):
            if self._new(key, ms):
                timers.register_processing_time_timer(ms)

    def fired(self, key: str) -> None:
        self.keys.pop(key, None)

    def _new(self, key: str, timer: int) -> bool:
        asked = self.keys.setdefault(key, set())
        if timer in asked:
            return False
        if len(asked) >= self.LIMIT:
            asked.clear()
        asked.add(timer)
        return True
