"""Ctrl-C held back while librdkafka runs: confluent-kafka's flush loses a KeyboardInterrupt
raised inside it ("returned NULL without setting an exception"), so the handler only notes the
signal there and the interrupt is raised once the call has returned."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Run the block with SIGINT noted, not raised; raise KeyboardInterrupt after it if one came."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield  # someone else (a worker ignoring Ctrl-C, a test) owns the signal
        return
    came: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        raise KeyboardInterrupt
