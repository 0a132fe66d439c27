"""One pool's live simulation, pane by pane: the logic of the simulation job without Flink.

A PoolTracker takes GetpageBatch records of one (source, pool) in order, feeds
the simulator, and closes panes: a pane is emitted when a getpage of a later
pane arrives (so its content depends on the data only), when the pool's progress
mark passes it, or when the job says the pool has gone quiet. Getpages of a
pane already emitted are late: they are simulated in the pane still open (or the
one after the last emitted) at its start, and counted in its late_getpages, so
totals stay whole and the cache state follows every getpage. A batch
whose sequence number and end time are both at or below the last batch fed is
a duplicate (a collector or generator restarted after its last checkpoint sends
what followed it again, with the same numbers) and is skipped; a producer that
starts its numbers again with later times (a new run) is fed.

Each pool runs with its own settings, from its attribute records: beside the
LRU stack curve, miniature caches of its page-steal policy and VPSEQT on the
ladder around its VPSIZE (`Simulator.set_pool_policy`), and at VPSIZE + SPSIZE when DB2
simulates a pool of its own (SPSIZE). An attribute record that
alters the pool takes effect at its event time, inside a batch if need be, and
starts a prediction check (checks.py).

Emitted rows are plain dicts whose keys are the columns of the tables in
poolsight.schemas.tables (timestamps as epoch milliseconds).
"""

from __future__ import annotations

import itertools
import json
import math
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.flink_jobs import compressed
from poolsight.flink_jobs.checks import Checks, PaneFacts
from poolsight.schemas.getpage import ACCESS_NAMES, Access, Function, GetpageBatch, micros
from poolsight.schemas.tables import POOL_SCOPE, SIZES_CURVE, object_scope, vpseqt_curve_name
from poolsight.simulator import CostModel, SimConfig, Simulator
from poolsight.simulator.result import CurvePoint, ObjectResult, PoolResult
from poolsight.simulator.setting import Setting

MAGIC = b"PSTRK001"  # header and simulator snapshot as they are: snapshots taken before compression
ZMAGIC = b"PSTRK002"  # the same bytes in a zstd frame (compressed.py)


@dataclass
class Emission:
    pane: int
    pool_pane: dict[str, Any]
    object_panes: list[dict[str, Any]] = field(default_factory=list)
    sim_curve: list[dict[str, Any]] = field(default_factory=list)
    working_set: list[dict[str, Any]] = field(default_factory=list)
    reuse_distance: list[dict[str, Any]] = field(default_factory=list)
    sim_accuracy_pane: list[dict[str, Any]] = field(default_factory=list)
    prediction_check: list[dict[str, Any]] = field(default_factory=list)

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "pool_pane": [self.pool_pane],
            "object_pane": self.object_panes,
            "sim_curve": self.sim_curve,
            "working_set": self.working_set,
            "reuse_distance": self.reuse_distance,
            "sim_accuracy_pane": self.sim_accuracy_pane,
            "prediction_check": self.prediction_check,
        }


def stack_model(mode: str, rate: float = 1.0) -> str:
    """The name of the LRU stack curve's model in sim_curve.model: lru-stack when every page is
    simulated (exact mode, or SHARDS while its rate is 1: the same curve), else the sampled mode's."""
    return "lru-stack" if mode == "exact" or rate >= 1.0 else f"lru-{mode}"


OnEmit = Callable[[Emission, int], None]  # (emission, index of the first getpage not yet fed)


class PoolTracker:
    def __init__(
        self,
        source: str,
        pool: str,
        config: SimConfig | None = None,
        costs: CostModel | None = None,
        check_panes: int | None = None,
        pool_policy: bool = True,
    ) -> None:
        self.source = source
        self.pool = pool
        self.pool_policy = pool_policy  # False: the LRU stack only, no miniature caches of the pool's policy
        self.sim = Simulator(config, costs)
        # The kernel runs a batch while the worker decodes the next and its bundle ends.
        self.sim.set_background()
        wp = self.sim.config.window_panes
        self.checks = Checks(wp, check_panes or wp)
        self.setting: Setting | None = None
        self.pending_settings: list[tuple[int, Setting]] = []  # (event time us, setting) not yet reached
        self.fed_until_us: int | None = None  # latest getpage time fed
        self.first_fed_us: int | None = None  # earliest, while no snapshot was taken (not kept in one)
        self.observed_sync = 0  # random misses the trace reported in the open pane
        self.pane_seconds = self.sim.config.pane_seconds
        self.open_pane: int | None = None
        self.emitted_through: int | None = None
        self.current_size: int | None = None
        self.batches = 0  # in the open pane
        self.prev_pane_pages: int | None = None
        self.prev_object_pages: dict[str, int] | None = None  # per object, of the last pane emitted
        self.observed: dict[str, list[int]] = {}  # object -> [hits, misses] of the open pane
        self.observed_reported = False
        self.last_sequence: int | None = None  # of the last batch fed whole, and its end (epoch us)
        self.last_end_us: int | None = None
        self.duplicates = 0
        self.late_getpages = 0  # in the open pane: getpages of panes already emitted

    # ------------------------------------------------------------ input

    def set_size(self, vpsize: int) -> None:
        """The size alone, LRU (no attributes beyond VPSIZE)."""
        self.current_size = int(vpsize)
        self.sim.set_pool_size(self.pool, int(vpsize))

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        """A pool attributes record: the pool's setting from its event time on. One for a time
        not yet reached waits for the getpages; one for a time passed applies now."""
        new = Setting.of(attributes)
        at = micros(attributes["event_time"]) if attributes.get("event_time") is not None else 0
        if self.setting is None or self.fed_until_us is None or at <= self.fed_until_us:
            self._apply_setting(new, at)
        else:
            self.pending_settings.append((at, new))
            self.pending_settings.sort(key=lambda x: x[0])

    def starts_over(self, attributes: dict[str, Any]) -> bool:
        """Whether this first attributes record of the pool should have come before the getpages
        fed so far: nothing emitted yet, and its event time at or before the first of them. The
        job reads the attributes and getpage topics together, and a getpage partition's fetch can
        come first; the job then starts the pool again from the record (simulation_job.py), so the
        miniature caches see every getpage, as `poolsight simulate` does."""
        if not self.pool_policy or self.setting is not None or self.emitted_through is not None:
            return False
        if self.first_fed_us is None:
            return False
        Setting.of(attributes)  # a record set_attributes would refuse raises here, before anything moves
        at = micros(attributes["event_time"]) if attributes.get("event_time") is not None else 0
        return at <= self.first_fed_us

    def _apply_setting(self, new: Setting, at_us: int) -> None:
        old = self.setting
        if old == new:
            return
        if old is not None:
            pane = self.open_pane if self.open_pane is not None else int(at_us / 1e6 // self.pane_seconds)
            for name, a, b in (("VPSIZE", old.size, new.size), ("VPSEQT", old.vpseqt, new.vpseqt)):
                if a != b:
                    self.checks.change(at_us, pane, name, float(a), float(b))
            if old.policy != new.policy and old.size == new.size and old.vpseqt == new.vpseqt:
                self.checks.change(at_us, pane, "PGSTEAL", None, 0.0)
        self.setting = new
        self.current_size = new.size
        if self.pool_policy:
            # DB2's simulated pool (SPSIZE) is checked at its exact size (the view spsize_check).
            also = [new.simulated_size] if new.simulated_size else []
            self.sim.set_pool_policy(self.pool, new.size, new.policy, new.vpseqt, also=also)

    def _ordered(self, b: GetpageBatch) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], Any]:
        """Times and panes in feeding order: the batch's order, or (if its panes go back and
        forth) stably sorted by pane. Positions (`start`) count in this order."""
        t = b.times()
        panes = np.floor(t / self.pane_seconds).astype(np.int64)
        if len(panes) > 1 and np.any(panes[1:] < panes[:-1]):
            order = np.argsort(panes, kind="stable")
            return t[order], panes[order], order
        return t, panes, None

    def _floor(self) -> int | None:
        """The earliest pane a getpage may still count in: the open one, else the one after the last emitted."""
        if self.open_pane is not None:
            return self.open_pane
        return None if self.emitted_through is None else self.emitted_through + 1

    def _late_into_open(
        self, t: npt.NDArray[np.float64], panes: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.bool_] | None]:
        """Getpages of panes already emitted move to the start of the earliest pane still open
        (the batch stays in pane order: they were sorted first). Returns the mask of those moved."""
        floor = self._floor()
        if floor is None or len(panes) == 0 or int(panes.min()) >= floor:
            return t, panes, None
        late = panes < floor
        t = np.where(late, floor * self.pane_seconds, t)
        return t, np.where(late, floor, panes), late

    def is_duplicate(self, b: GetpageBatch) -> bool:
        return (
            self.last_sequence is not None
            and self.last_end_us is not None
            and b.sequence <= self.last_sequence
            and b.end_time <= self.last_end_us
        )

    def feed(self, b: GetpageBatch, on_emit: OnEmit, start: int = 0) -> int:
        """Feed a GetpageBatch from position `start`; emit the panes it closes. Returns getpages fed.
        A duplicate is skipped (0); `start` > 0 resumes a batch begun before a snapshot."""
        if start == 0 and self.is_duplicate(b):
            self.duplicates += 1
            return 0
        fed = self._feed(b, on_emit, start)
        # A late batch's earlier end must not lower the mark a producer's resend is judged by.
        self.last_sequence, self.last_end_us = b.sequence, max(self.last_end_us or 0, b.end_time)
        if b.is_mark:  # the source sent every getpage before end_time: a pane ended by then is whole
            self.flush(math.floor(b.end_time / 1e6 / self.pane_seconds), on_emit)
        return fed

    def _feed(self, batch: GetpageBatch, on_emit: OnEmit, start: int) -> int:
        t, panes, order = self._ordered(batch)
        t, panes = t[start:], panes[start:]
        t, panes, late = self._late_into_open(t, panes)
        n = len(t)
        if n == 0:
            return 0
        cols = self._columns(batch, order, start)
        if late is not None:  # all in the first pane fed below: it is the floor
            self.late_getpages += int((late & (cols["function"] == Function.GETPAGE)).sum())
        cuts = set((np.flatnonzero(panes[1:] != panes[:-1]) + 1).tolist())
        for at_us, _ in self.pending_settings:  # a setting takes effect at the first getpage at its time
            i = int(np.searchsorted(t, at_us / 1e6, side="left"))
            if 0 < i < n:
                cuts.add(i)
        bounds = [0, *sorted(cuts), n]
        for a, b in itertools.pairwise(bounds):
            pane = int(panes[a])
            if self.open_pane is not None and pane > self.open_pane:
                # The state handed to on_emit is complete up to this getpage: a restore from
                # it continues at start + a without emitting the pane again.
                on_emit(self._emit(), start + a)
            self.open_pane = pane
            while self.pending_settings and self.pending_settings[0][0] <= t[a] * 1e6:
                at_us, setting = self.pending_settings.pop(0)
                self._apply_setting(setting, at_us)
            self.batches += 1
            seg = slice(a, b)
            self.sim.feed_coded(
                t[seg],
                self.pool,
                batch.object_names,
                cols["object"][seg],
                cols["page"][seg],
                cols["access"][seg],
                cols["function"][seg],
            )
            self._observe(batch.object_names, cols, seg)
        self.fed_until_us = max(self.fed_until_us or 0, int(t.max() * 1e6))
        first = round(float(t.min()) * 1e6)  # a late batch may go back before the first fed
        self.first_fed_us = first if self.first_fed_us is None else min(self.first_fed_us, first)
        return int((cols["function"] == Function.GETPAGE).sum())

    def _columns(self, b: GetpageBatch, order: Any, start: int) -> dict[str, Any]:
        # Column lengths were checked when the batch was built (GetpageBatch.from_record).
        cols: dict[str, Any] = {
            "object": b.objects.astype(np.int64, copy=False),
            "page": b.pages,
            "access": b.access_codes(),
            "function": b.function_codes(),
            "hit": b.hits(),
        }
        return {k: (None if v is None else (v if order is None else v[order])[start:]) for k, v in cols.items()}

    def _observe(self, names: list[str], cols: dict[str, Any], seg: slice) -> None:
        hit = cols["hit"]
        if hit is None:
            return
        self.observed_reported = True
        fun = cols["function"][seg]
        obj, h, acc = cols["object"][seg], hit[seg], cols["access"][seg]
        if not (fun == Function.GETPAGE).all():  # most batches are getpages only: no copies for them
            gp = fun == Function.GETPAGE
            obj, h, acc = obj[gp], h[gp], acc[gp]
        missed = h == 0
        self.observed_sync += int(np.count_nonzero(missed & (acc == Access.RANDOM)))
        # One count per (object, missed): the batch's few objects' hits and misses in one pass.
        counts = np.bincount(obj * 2 + missed, minlength=2 * len(names)).reshape(-1, 2)
        for i, (hits, misses) in enumerate(counts.tolist()):
            if hits or misses:
                o = self.observed.setdefault(names[i], [0, 0])
                o[0] += hits
                o[1] += misses

    # ------------------------------------------------------------ output

    def flush(self, before_pane: int, on_emit: OnEmit) -> bool:
        """Emit the open pane if it is earlier than `before_pane` (event time has passed it)."""
        if self.open_pane is None or self.open_pane >= before_pane:
            return False
        on_emit(self._emit(), 0)
        return True

    def _emit(self) -> Emission:
        pane = self.open_pane
        assert pane is not None
        sim, pool = self.sim, self.pool
        r = sim.result(pool, None, panes=1)
        if r.window.last_pane != pane:
            raise RuntimeError(f"{self.source}/{pool}: simulator's last pane {r.window.last_pane} is not {pane}")
        ws_pool, ws_obj, kept = sim.window_working_sets(pool)
        pane_start, pane_end = round(pane * self.pane_seconds * 1000), round((pane + 1) * self.pane_seconds * 1000)
        key: dict[str, Any] = {
            "source": self.source,
            "pool": pool,
            "pane_start": pane_start,
            "pane_end": pane_end,
            "seconds": r.window.seconds,
        }
        cur = self.current_size
        obs_h = sum(v[0] for v in self.observed.values())
        obs_m = sum(v[1] for v in self.observed.values())
        stack = stack_model(r.mode, float(r.sampling_rate))
        # The pool's own policy when its attributes gave it (miniature caches), else the stack.
        model = r.policy if r.pool_policy else stack
        model_rate = float(r.sampling_rate if r.policy_sampling_rate is None else r.policy_sampling_rate)
        cpu_us = self.sim.costs.cpu_seconds_per_sync_read * 1e6
        at_cur = _at_current(r.curve, cur)
        pool_row = {
            **key,
            **_getpages(r),
            **_observed(self.observed_reported, obs_h, obs_m),
            "working_set_pages": ws_pool,
            "window_panes": kept,
            **at_cur,
            "late_getpages": r.late_getpages + self.late_getpages,
            "warmup": bool(r.window.warmup),
            "mode": r.mode,
            "sampling_rate": float(r.sampling_rate),
            "batches": self.batches,
            "emitted_at": round(time.time() * 1000),
            "model": model,
            "model_sampling_rate": model_rate,
            "observed_sync_reads": self.observed_sync if self.observed_reported else None,
            "cpu_us_per_sync_read": cpu_us,
            "vpseqt": None if self.setting is None else self.setting.vpseqt,
        }
        em = Emission(pane, pool_row)
        pane_pages = r.working_set.pane_pages[-1] if r.working_set.pane_pages else 0
        em.working_set.append(
            {
                **key,
                "object": None,
                "scope": POOL_SCOPE,
                "pane_pages": pane_pages,
                "window_pages": ws_pool,
                "window_panes": kept,
                "change_pages": None if self.prev_pane_pages is None else pane_pages - self.prev_pane_pages,
            }
        )
        self.prev_pane_pages = pane_pages
        prev_objects, self.prev_object_pages = self.prev_object_pages, {}
        for name, o in r.objects.items():
            h, m = self.observed.get(name, [0, 0])
            em.object_panes.append(
                {
                    **key,
                    "object": name,
                    **_getpages(o),
                    **_observed(self.observed_reported, h, m),
                    "working_set_pages": ws_obj.get(name, 0),
                    "sequential_share": o.sequential_share,
                    "access_class": o.access_class,
                    **_at_current(o.curve, cur),
                    "cpu_us_per_sync_read": cpu_us,
                }
            )
            obj_pages = o.working_set.pane_pages[-1]
            self.prev_object_pages[name] = obj_pages
            em.working_set.append(
                {
                    **key,
                    "object": name,
                    "scope": object_scope(name),
                    "pane_pages": obj_pages,
                    "window_pages": ws_obj.get(name, 0),
                    "window_panes": kept,
                    # An object the last pane did not touch had no pages in it.
                    "change_pages": None if prev_objects is None else obj_pages - prev_objects.get(name, 0),
                }
            )
        own_vpseqt = r.vpseqt  # lru-vpseqt only
        curves: list[tuple[Sequence[CurvePoint], str, float, bool, float | None]] = [
            (r.curve, model, model_rate, True, own_vpseqt)
        ]
        if r.lru_curve is not None:
            curves.append((r.lru_curve, stack, float(r.sampling_rate), False, None))
        for curve, name, rate, own, pct in curves:
            em.sim_curve.extend(self._curve_rows(key, r, curve, name, rate, own, cpu_us, pct))
        # The current size at other VPSEQT values: not the pool's setting, what an -ALTER would do.
        for c in r.vpseqt_curve:
            em.sim_curve.extend(
                self._curve_rows(key, r, [c], model, model_rate, False, cpu_us, c.vpseqt, vpseqt_curve_name(c.vpseqt))
            )
        vpseqt_curve = {float(c.vpseqt): float(c.sync_reads) for c in r.vpseqt_curve}
        if vpseqt_curve and own_vpseqt is not None and at_cur["sim_sync_reads"] is not None:
            vpseqt_curve[float(own_vpseqt)] = float(at_cur["sim_sync_reads"])
        em.reuse_distance = self._reuse_rows(key, r)
        mix = {
            f"{name}|{kind}": float(n) for name, o in r.objects.items() for kind, n in o.getpages.by_name().items() if n
        }
        facts = PaneFacts(
            pane=pane,
            start_ms=pane_start,
            end_ms=pane_end,
            seconds=float(r.window.seconds),
            getpages=int(r.refs),
            size=cur,
            model=model,
            sampling_rate=model_rate,
            simulated=at_cur["sim_sync_reads"],
            measured=self.observed_sync if self.observed_reported else None,
            curve={int(c.size_pages): float(c.sync_reads) for c in r.curve},
            mix=mix,
            epoch=self.checks.epoch,
            whole=True,
            vpseqt_curve=vpseqt_curve,
        )
        accuracy, checks = self.checks.pane(facts)
        ident = {"source": self.source, "pool": pool}
        if accuracy is not None:
            em.sim_accuracy_pane.append({**ident, **accuracy, "measured_from": "trace"})
        em.prediction_check = [{**ident, **c, "model": model} for c in checks]
        self.emitted_through = pane
        self.open_pane = None
        self.batches = 0
        self.observed = {}
        self.observed_sync = 0
        self.late_getpages = 0
        return em

    def _curve_rows(
        self,
        key: dict[str, Any],
        r: PoolResult,
        curve: Sequence[CurvePoint],
        model: str,
        rate: float,
        own: bool,
        cpu_us: float,
        vpseqt: float | None = None,
        curve_name: str = SIZES_CURVE,
    ) -> list[dict[str, Any]]:
        cur = self.current_size
        rows = []
        for c in curve:
            rows.append(
                {
                    **key,
                    "size_pages": c.size_pages,
                    "size_factor": c.size_pages / cur if cur else None,
                    "is_current": cur is not None and c.size_pages == cur,
                    "refs": r.refs,
                    "hits": c.hits,
                    "misses": c.misses,
                    "hit_ratio": c.hit_ratio,
                    "miss_ratio": c.miss_ratio,
                    "hit_ratio_random": c.hit_ratio_random,
                    "hit_ratio_sequential": c.hit_ratio_sequential,
                    "sync_reads": c.sync_reads,
                    "prefetch_pages": c.prefetch_pages,
                    "sync_reads_per_s": c.sync_reads_per_s,
                    "prefetch_pages_per_s": c.prefetch_pages_per_s,
                    "avoided_sync_reads_per_s": c.avoided_sync_reads_per_s,
                    "cpu_seconds_saved_per_s": c.cpu_seconds_saved_per_s,
                    "elapsed_seconds_saved_per_s": c.elapsed_seconds_saved_per_s,
                    "model": model,
                    "model_sampling_rate": rate,
                    "pool_policy": own,
                    "cpu_us_per_sync_read": cpu_us,
                    "vpseqt": vpseqt,
                    "curve": curve_name,
                }
            )
        return rows

    def _reuse_rows(self, key: dict[str, Any], r: PoolResult) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        getpages = r.getpages.by_name()
        for a, name in enumerate(ACCESS_NAMES):
            if getpages[name] == 0:
                continue
            log2: dict[int, float] = {}
            for lo, _hi, count in self.sim.histogram(self.pool, a, 1):
                k = int(lo).bit_length() - 1
                log2[k] = log2.get(k, 0.0) + count
            for k, count in sorted(log2.items()):
                rows.append(
                    {**key, "access": name, "distance_lo": 2**k, "distance_hi": 2 ** (k + 1) - 1, "getpages": count}
                )
        return rows

    # ------------------------------------------------------------ state

    def snapshot(self) -> bytes:
        header = json.dumps(
            {
                "source": self.source,
                "pool": self.pool,
                "open_pane": self.open_pane,
                "emitted_through": self.emitted_through,
                "current_size": self.current_size,
                "batches": self.batches,
                "prev_pane_pages": self.prev_pane_pages,
                "prev_object_pages": self.prev_object_pages,
                "observed": self.observed,
                "observed_reported": self.observed_reported,
                "last_sequence": self.last_sequence,
                "last_end_us": self.last_end_us,
                "setting": None if self.setting is None else asdict(self.setting),
                "pending_settings": [[at, asdict(st)] for at, st in self.pending_settings],
                "fed_until_us": self.fed_until_us,
                "observed_sync": self.observed_sync,
                "late_getpages": self.late_getpages,
                "checks": self.checks.to_dict(),
                "check_panes": self.checks.check_panes,
                "pool_policy": self.pool_policy,
            }
        ).encode()
        return compressed.pack(ZMAGIC, [struct.pack("<I", len(header)), header, *self.sim.snapshot_parts()])

    @classmethod
    def restore(cls, data: bytes) -> PoolTracker:
        body = compressed.unpack(ZMAGIC, data)
        if body is None:
            if data[:8] != MAGIC:
                raise ValueError("not a poolsight tracker snapshot")
            body = data[8:]
        (n,) = struct.unpack("<I", body[:4])
        h = json.loads(body[4 : 4 + n])
        sim = Simulator.restore(body[4 + n :])
        tr = cls(h["source"], h["pool"], sim.config, sim.costs, h.get("check_panes"), h.get("pool_policy", True))
        tr.sim = sim
        sim.set_background()
        tr.pane_seconds = tr.sim.config.pane_seconds
        st = h.get("setting")  # the keys below are absent in snapshots before prediction checks
        tr.setting = None if st is None else Setting(**st)
        tr.pending_settings = [(int(at), Setting(**x)) for at, x in h.get("pending_settings", [])]
        tr.fed_until_us = h.get("fed_until_us")
        tr.observed_sync = h.get("observed_sync", 0)
        tr.late_getpages = h.get("late_getpages", 0)  # absent before late getpages were kept
        tr.checks.load(h.get("checks"))
        for k in (
            "open_pane",
            "emitted_through",
            "current_size",
            "batches",
            "prev_pane_pages",
            "observed",
            "observed_reported",
        ):
            setattr(tr, k, h[k])
        tr.last_sequence, tr.last_end_us = h.get("last_sequence"), h.get("last_end_us")  # absent before 0.1
        tr.prev_object_pages = h.get("prev_object_pages")  # absent in older snapshots
        return tr


def _getpages(r: PoolResult | ObjectResult) -> dict[str, Any]:
    g = r.getpages
    return {
        "getpages": r.refs,
        "getpages_random": g.random,
        "getpages_sequential": g.sequential,
        "getpages_rid": g.rid,
        "updates": r.updates,
        "distinct_pages": r.distinct_pages,
    }


def _observed(reported: bool, hits: int, misses: int) -> dict[str, Any]:
    return {"observed_hits": hits if reported else None, "observed_misses": misses if reported else None}


def _at_current(curve: Sequence[CurvePoint], current: int | None) -> dict[str, Any]:
    """The pool_pane and object_pane columns read off the curve at the current size and twice it."""
    by_size = {c.size_pages: c for c in curve}
    cur = by_size.get(current) if current else None
    two = by_size.get(2 * current) if current else None
    return {
        "current_size": current,
        "sim_hit_ratio": None if cur is None else cur.hit_ratio,
        "sim_sync_reads": None if cur is None else cur.sync_reads,
        "sim_sync_reads_per_s": None if cur is None else cur.sync_reads_per_s,
        "hit_ratio_2x": None if two is None else two.hit_ratio,
        "sync_reads_per_s_2x": None if two is None else two.sync_reads_per_s,
        "avoided_sync_reads_per_s_2x": None if two is None else two.avoided_sync_reads_per_s,
        "cpu_seconds_saved_per_s_2x": None if two is None else two.cpu_seconds_saved_per_s,
        "elapsed_seconds_saved_per_s_2x": None if two is None else two.elapsed_seconds_saved_per_s,
    }
