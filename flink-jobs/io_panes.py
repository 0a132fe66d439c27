"""Measured I/O per pool, object and pane: read and write I/O events (ReadIoBatch,
WriteIoBatch records) added up into io_pane rows. Plain Python and numpy, without PyFlink.

A pane's rows are written once its pool's event time has passed its end (plus the
lateness) or after `idle_seconds` of wall-clock quiet. Rows are additive (counts, sums,
maxima): I/O events that arrive for a pane already written make another row for the
same key instead of being turned away, and readers add the rows of a key up (the views
do). So an outage or a replay delays these rows, never drops them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poolsight.schemas.getpage import micros

READ_TYPES = ("sync", "sequential", "list", "dynamic")  # ReadIoBatch.io_type 0..3
WRITE_TYPES = ("sync", "async")  # WriteIoBatch.io_type 0..1
KINDS = {"poolsight.v1.ReadIoBatch": ("read", READ_TYPES), "poolsight.v1.WriteIoBatch": ("write", WRITE_TYPES)}

# (pane, object, direction, io_type) -> [ios, pages, elapsed_us, max_elapsed_us]
Cell = tuple[int, str, str, str]


@dataclass
class IoPanes:
    """The open panes of one (source, pool)."""

    source: str
    pool: str
    pane_seconds: float
    cpu_us_per_sync_read: float
    cells: dict[Cell, list[int]] = field(default_factory=dict)
    max_event_us: int | None = None  # the latest I/O start seen
    last_batch: dict[str, tuple[int, int]] = field(default_factory=dict)  # direction -> (sequence, start µs)
    last_wall: float = 0.0  # wall-clock time of the latest batch (the job's idle flush)

    def add(self, kind: str, rec: dict[str, Any]) -> int:
        """Add one decoded batch (`kind`: its full record name); returns the I/Os added (0 for a
        batch sent again by a producer restarted after its checkpoint). Raises ValueError or
        KeyError naming the field for a malformed one."""
        direction, types = KINDS[kind]
        start = micros(rec["start_time"])
        seq = int(rec["sequence"])
        last = self.last_batch.get(direction)
        if last is not None and seq <= last[0] and start <= last[1]:
            return 0
        offsets = _ints(rec["time_offset"])
        cols = {f: _ints(rec[f]) for f in ("object", "io_type", "pages", "elapsed")}
        n = len(offsets)
        for f, a in cols.items():
            if len(a) != n:
                raise ValueError(f"field {f}: {len(a)} values for {n} I/Os (time_offset)")
        names = list(rec["object_names"])
        if n and (cols["object"].min() < 0 or cols["object"].max() >= len(names)):
            raise ValueError(f"field object: index outside object_names ({len(names)} names)")
        if n and (cols["io_type"].min() < 0 or cols["io_type"].max() >= len(types)):
            raise ValueError(f"field io_type: {direction} I/O types are 0..{len(types) - 1}")
        for f in ("pages", "elapsed"):
            if n and cols[f].min() < 0:
                raise ValueError(f"field {f}: negative value")
        times = (start + offsets) / 1e6
        panes = np.floor(times / self.pane_seconds).astype(np.int64)
        keys = np.stack([panes, cols["object"], cols["io_type"]], axis=1)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        ios = np.bincount(inv, minlength=len(uniq))
        pages = np.bincount(inv, weights=cols["pages"], minlength=len(uniq))
        elapsed = np.bincount(inv, weights=cols["elapsed"], minlength=len(uniq))
        longest = np.zeros(len(uniq), dtype=np.int64)
        np.maximum.at(longest, inv, cols["elapsed"])
        for i, (pane, obj, io_type) in enumerate(uniq.tolist()):
            cell = self.cells.setdefault((pane, names[obj], direction, types[io_type]), [0, 0, 0, 0])
            cell[0] += int(ios[i])
            cell[1] += int(pages[i])
            cell[2] += int(elapsed[i])
            cell[3] = max(cell[3], int(longest[i]))
        self.last_batch[direction] = (seq, start)
        if n:
            top = start + int(offsets.max())
            self.max_event_us = top if self.max_event_us is None else max(self.max_event_us, top)
        return n

    def due(self, lateness_seconds: float) -> list[dict[str, Any]]:
        """Rows of the panes this pool's event time has passed (plus the lateness)."""
        if self.max_event_us is None:
            return []
        before = int(np.floor((self.max_event_us / 1e6 - lateness_seconds) / self.pane_seconds))
        return self.take(before)

    def take(self, before: int | None = None) -> list[dict[str, Any]]:
        """Rows of the panes before `before` (all when None), removed from the open panes."""
        out: list[dict[str, Any]] = []
        for cell in sorted(c for c in self.cells if before is None or c[0] < before):
            ios, pages, elapsed, longest = self.cells.pop(cell)
            pane, obj, direction, io_type = cell
            out.append(
                {
                    "source": self.source,
                    "pool": self.pool,
                    "object": obj,
                    "pane_start": round(pane * self.pane_seconds * 1000),
                    "pane_end": round((pane + 1) * self.pane_seconds * 1000),
                    "direction": direction,
                    "io_type": io_type,
                    "ios": ios,
                    "pages": pages,
                    "elapsed_us": elapsed,
                    "max_elapsed_us": longest,
                    "cpu_us_per_sync_read": self.cpu_us_per_sync_read,
                }
            )
        return out


def _ints(v: Any) -> np.ndarray[Any, np.dtype[np.int64]]:
    """An int array field as decoded (a list), or as the generator hands it over (bytes)."""
    if isinstance(v, bytes | bytearray):
        return np.frombuffer(v, dtype=np.uint8).astype(np.int64)
    return np.asarray(v, dtype=np.int64)
