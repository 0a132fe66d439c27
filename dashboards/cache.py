"""Query results kept while the data they read has not changed.

A pool's page reads the same curve, series and statistics every few seconds, and they change
only when the jobs write a pane. Results are keyed by the query, its parameters and a version
of the data (the pool's newest pane and its pane count, and when its page table row was
refreshed), and kept at most `max_age` seconds, so rows that arrive without a new pane
(statistics intervals, late I/O events) show within that.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

Run = Callable[[str, tuple[Any, ...]], list[dict[str, Any]]]


class ResultCache:
    def __init__(self, max_entries: int = 512, max_age: float = 60.0) -> None:
        self.max_entries = max_entries
        self.max_age = max_age
        self._entries: OrderedDict[Hashable, tuple[float, list[dict[str, Any]]]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def bind(self, run: Run, version: Hashable) -> Run:
        """`run`, answering from the cache for this version of the data."""

        def cached(sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
            key = (sql, params, version)
            now = time.monotonic()
            with self._lock:
                hit = self._entries.get(key)
                if hit is not None and now - hit[0] <= self.max_age:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return [dict(r) for r in hit[1]]  # copies: callers add keys
                self.misses += 1
            rows = run(sql, params)
            with self._lock:
                self._entries[key] = (now, [dict(r) for r in rows])
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            return rows

        return cached
