"""Freed heap given back to the system every half minute, from the jobs' Python worker.

The worker frees and allocates batches, snapshots and curves of many sizes. glibc keeps freed
chunks inside its heaps (only a free top beyond MALLOC_TRIM_THRESHOLD_ goes back by itself), so
the worker's resident size crept up by a few % per 10 minutes in `make soak` while every
structure it keeps was bounded. malloc_trim(0) gives the free pages of every arena back
(madvise); it walks the heap, a few milliseconds, so at most once per `every` seconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from typing import Any

EVERY_SECONDS = 30.0


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return lib if lib is not None and hasattr(lib, "malloc_trim") else None  # glibc only


class HeapTrim:
    """`maybe()` on a hot path: trims when `every` seconds have passed since the last trim."""

    def __init__(self, every: float = EVERY_SECONDS) -> None:
        self.every = every
        self.last = time.monotonic()
        self.trims = 0
        self._libc = _libc()

    def maybe(self) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        if self._libc is not None:
            self._libc.malloc_trim(0)
            self.trims += 1
