"""A quiet key in a keyed operator (a pool in Simulate, a group in GroupSimulate): its live
tracker leaves the Python worker's memory once it has nothing open (its keyed state holds it;
its next record restores it), and after the state TTL its keyed state goes too (application-
level, so savepoints stay compatible)."""

from __future__ import annotations

import math
import time
from typing import Any


def forget_quiet(
    key: str, ctx: Any, ttl: float, last_seen: dict[str, float], states: tuple[Any, ...], caches: tuple[Any, ...]
) -> None:
    """Drop `key` from the in-memory `caches`; with a TTL (seconds, 0: none), clear its keyed
    `states` once it has been quiet that long, else set a timer for when it will have been."""
    seen = last_seen.get(key, time.time())
    if ttl > 0 and time.time() - seen >= ttl - 1e-3:
        for state in states:
            state.clear()
        last_seen.pop(key, None)
    elif ttl > 0:
        ctx.timer_service().register_processing_time_timer(math.ceil(seen + ttl) * 1000)
    for cache in caches:
        cache.pop(key, None)


def restore_for_timer(key: str, last_seen: dict[str, float], snap: Any, pending: Any) -> bool | None:
    """What a processing-time timer (a backstop, the TTL) of a key out of memory should do: None
    when the key left quiet with nothing open (only its TTL counts: the caller forgets it again),
    False when its state is already gone (nothing to restore, no empty tracker), True otherwise
    (a restored job's timer: restore the key from its state)."""
    if key in last_seen:  # evicted by forget_quiet in this worker: nothing was open
        return None
    return not (snap.value() is None and not list(pending.get()))
