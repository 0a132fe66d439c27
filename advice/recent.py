"""The recent getpages of some pools, read back from Kafka into a trace: how online advice
replays an object placement (and FIFO) on the reference stream the simulation job saw.

The getpage topic is read from `lookback` seconds of broker time ago to its end, keeping the
batches of the pools asked for and the getpages in the event-time window [start, end). The cost
grows with the topic's traffic over the lookback: keep it short, and a pool whose window holds more
than `max_getpages` keeps its latest getpages only."""

from __future__ import annotations

import time
from collections import defaultdict
from datetime import datetime
from typing import Any

import numpy as np

from poolsight.advice.replay import Trace
from poolsight.infra.config import Settings
from poolsight.ingest.kafka_io import read_since
from poolsight.names import GETPAGE_TOPIC
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.wire import AvroDecoder, DecodeError


def recent_trace(
    s: Settings,
    windows: dict[tuple[str, str], tuple[datetime | None, datetime | None]],
    lookback: float,
    max_getpages: int = 5_000_000,
) -> Trace | None:
    """A trace of the pools' getpages in their windows ((source, pool) -> (start, end)); None if none."""
    keys = {f"{src}|{pool}": (src, pool) for src, pool in windows}
    bounds = {
        k: (w[0].timestamp() if w[0] else -np.inf, w[1].timestamp() if w[1] else np.inf)
        for k, w in ((k, windows[v]) for k, v in keys.items())
    }
    decoder = AvroDecoder(s.registry_url)
    parts: dict[str, list[tuple[Any, ...]]] = defaultdict(list)

    def handle(msg: Any) -> None:
        key = (msg.key() or b"").decode(errors="replace")
        if key not in keys:
            return
        try:
            name, rec = decoder.decode(msg.value())
        except DecodeError:
            return  # the simulation job sent it to dead_letter: it is not in the curves either
        if not name.endswith("GetpageBatch"):
            return
        try:
            b = GetpageBatch.from_record(rec)
        except (KeyError, TypeError, ValueError):
            return  # unusable: in dead_letter, not in the curves

        t = b.times()
        lo, hi = bounds[key]
        keep = (t >= lo) & (t < hi)
        if keep.any():
            names = np.array(b.object_names)
            parts[key].append(
                (
                    t[keep],
                    names[b.objects[keep]],
                    b.pages[keep].astype(np.uint64),
                    b.access_codes()[keep],
                    b.function_codes()[keep],
                )
            )

    read_since(s.kafka_bootstrap, GETPAGE_TOPIC.name, int((time.time() - lookback) * 1000), handle)
    if not parts:
        return None
    pools: list[str] = []
    objects: dict[str, int] = {}
    cols: dict[str, list[Any]] = defaultdict(list)
    for key, chunks in parts.items():
        src, pool = keys[key]
        code = len(pools)
        pools.append(f"{src}/{pool}")
        t = np.concatenate([c[0] for c in chunks])
        order = np.argsort(t, kind="stable")[-max_getpages:]  # the latest, in time order
        order.sort()
        obj = np.concatenate([c[1] for c in chunks])[order]
        uniq, inv = np.unique(obj, return_inverse=True)
        lut = np.array([objects.setdefault(str(u), len(objects)) for u in uniq], dtype=np.int32)
        cols["t"].append(t[order])
        cols["p"].append(np.full(len(order), code, dtype=np.int32))
        cols["o"].append(lut[inv.reshape(-1)])
        cols["pg"].append(np.concatenate([c[2] for c in chunks])[order])
        cols["a"].append(np.concatenate([c[3] for c in chunks])[order])
        cols["f"].append(np.concatenate([c[4] for c in chunks])[order])
    t = np.concatenate(cols["t"])
    order = np.argsort(t, kind="stable")
    return Trace(
        t[order],
        np.concatenate(cols["p"])[order],
        np.concatenate(cols["o"])[order],
        np.concatenate(cols["pg"])[order],
        np.concatenate(cols["a"])[order],
        np.concatenate(cols["f"])[order],
        pools,
        list(objects),
    )
