"""The simulation checked against the pool, pane by pane: accuracy at the current setting
(sim_accuracy_pane) and, after a pool is altered, the prediction made before the change
against what was measured after it (prediction_check). No Flink: the tracker calls it.

Measured sync reads are the trace's random getpages the pool reported as misses (a
random miss is a synchronous read; sequential and list misses are prefetch). The
accuracy window is the latest panes (at most the simulation window) that ran whole
at the current setting: a pane in which the pool was altered starts a new window.

A prediction for a new VPSIZE is read off the pool-policy curves of the panes before
the change, per getpage (sum of sync reads at that size, linearly interpolated between
ladder sizes, over the sum of getpages); for a new VPSEQT, off the miniature caches that
ran the current size at other thresholds (simulator.engine.VPSEQT_ALTERNATIVES) the
same way. Either is compared with the measured sync reads per getpage over the first
`check_panes` whole panes after the change, so a change in load does not count as
error. The predicted rate is that ratio times the measured getpages per second after
the change. The two ranges' workload similarity goes beside it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from poolsight.simulator.similarity import similarity

Mix = dict[str, float]  # "object|access type" -> getpages


@dataclass(kw_only=True)
class PaneFacts:
    """What the checks need of one emitted pane (built by keyword: many fields share a type)."""

    pane: int
    start_ms: int
    end_ms: int
    seconds: float
    getpages: int
    size: int | None
    model: str
    sampling_rate: float
    simulated: float | None  # sync reads simulated at the current size with the pool's policy
    measured: int | None  # random misses the trace reported (None: no hit flags)
    curve: dict[int, float]  # size -> simulated sync reads (the pool-policy model)
    mix: Mix
    epoch: int  # number of changes applied before the pane ended
    whole: bool  # ran at one setting from its start (no change inside it)
    vpseqt_curve: dict[float, float] = field(default_factory=dict)  # VPSEQT -> sync reads at the current size

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PaneFacts:
        d = dict(d)
        d["curve"] = {int(k): float(v) for k, v in d["curve"].items()}
        d["vpseqt_curve"] = {float(k): float(v) for k, v in d.get("vpseqt_curve", {}).items()}
        return cls(**d)


@dataclass(kw_only=True)
class Pending:
    """A change waiting for its panes after."""

    changed_at_us: int
    setting: str
    old_value: float | None
    new_value: float
    change_pane: int
    predicted_per_getpage: float | None
    before_getpages: int
    before_seconds: float
    before_mix: Mix
    after_panes: int = 0
    after_getpages: int = 0
    after_seconds: float = 0.0
    after_measured: int | None = 0
    after_mix: Mix = field(default_factory=dict)


def _add(into: Mix, mix: Mix) -> None:
    for k, v in mix.items():
        into[k] = into.get(k, 0.0) + v


def _pairs(mix: Mix) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for k, v in mix.items():
        obj, _, kind = k.rpartition("|")
        out[(obj, kind)] = v
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b - 1.0


def _at(curve: Mapping[Any, float], x: float) -> float | None:
    """The curve (size or VPSEQT -> sync reads) at x, linear between its points."""
    if not curve:
        return None
    xs = sorted(curve)
    if x < xs[0] or x > xs[-1]:
        return None  # off the simulated points: no prediction rather than an extrapolated one
    return float(np.interp(x, xs, [curve[k] for k in xs]))


class Checks:
    def __init__(self, window_panes: int, check_panes: int) -> None:
        self.window_panes = window_panes
        self.check_panes = check_panes
        self.history: deque[PaneFacts] = deque(maxlen=max(window_panes, 1))
        self.pending: list[Pending] = []
        self.epoch = 0
        self.changed_in: int | None = None  # the pane of the latest change

    def change(self, at_us: int, pane: int, setting: str, old: float | None, new: float) -> None:
        """The pool was altered at `at_us` (in pane `pane`): VPSIZE, VPSEQT or PGSTEAL."""
        self.epoch += 1
        self.changed_in = pane
        before = [f for f in self.history if f.pane < pane]
        predicted: float | None = None
        if setting in ("VPSIZE", "VPSEQT") and before:
            at = [_at(f.curve if setting == "VPSIZE" else f.vpseqt_curve, new) for f in before]
            gp = sum(f.getpages for f in before)
            if gp > 0 and all(v is not None for v in at):
                predicted = sum(v for v in at if v is not None) / gp
        mix: Mix = {}
        for f in before:
            _add(mix, f.mix)
        # A later change supersedes a check still waiting: its "after" would mix two settings.
        self.pending = [
            Pending(
                changed_at_us=at_us,
                setting=setting,
                old_value=old,
                new_value=new,
                change_pane=pane,
                predicted_per_getpage=predicted,
                before_getpages=sum(f.getpages for f in before),
                before_seconds=sum(f.seconds for f in before),
                before_mix=mix,
            )
        ]

    def pane(self, f: PaneFacts) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Record an emitted pane; return its accuracy row (None without a size or a model) and
        the prediction checks it completes."""
        f.whole = f.whole and self.changed_in != f.pane
        self.history.append(f)
        accuracy = self._accuracy(f)
        done: list[dict[str, Any]] = []
        for p in self.pending:
            if f.pane <= p.change_pane:
                continue
            p.after_panes += 1
            p.after_getpages += f.getpages
            p.after_seconds += f.seconds
            p.after_measured = None if p.after_measured is None or f.measured is None else p.after_measured + f.measured
            _add(p.after_mix, f.mix)
            if p.after_panes >= self.check_panes:
                done.append(self._check_row(p, f))
        self.pending = [p for p in self.pending if p.after_panes < self.check_panes]
        return accuracy, done

    def _accuracy(self, f: PaneFacts) -> dict[str, Any] | None:
        if f.size is None or f.simulated is None:
            return None
        window: list[PaneFacts] = []
        for g in reversed(self.history):
            if g.epoch != f.epoch or g.size != f.size or g.model != f.model:
                break
            window.append(g)
            if not g.whole:
                break  # the pane the setting changed in opens the window
        window.reverse()
        seconds = sum(g.seconds for g in window)
        sim = sum(g.simulated or 0.0 for g in window)
        meas = None if any(g.measured is None for g in window) else sum(g.measured or 0 for g in window)
        return {
            "window_start": window[0].start_ms,
            "window_end": f.end_ms,
            "panes": len(window),
            "whole_panes": sum(1 for g in window if g.whole),
            "size_pages": f.size,
            "model": f.model,
            "sampling_rate": f.sampling_rate,
            "getpages": sum(g.getpages for g in window),
            "simulated_sync_reads": sim,
            "measured_sync_reads": meas,
            "simulated_sync_reads_per_s": sim / seconds if seconds > 0 else None,
            "measured_sync_reads_per_s": None if meas is None or seconds <= 0 else meas / seconds,
            "error_ratio": _ratio(sim, meas),
            "pane_simulated_sync_reads": f.simulated,
            "pane_measured_sync_reads": f.measured,
        }

    def _check_row(self, p: Pending, last: PaneFacts) -> dict[str, Any]:
        after_rate = p.after_getpages / p.after_seconds if p.after_seconds > 0 else None
        predicted_per_s = (
            None if p.predicted_per_getpage is None or after_rate is None else p.predicted_per_getpage * after_rate
        )
        measured_per_s = (
            None if p.after_measured is None or p.after_seconds <= 0 else p.after_measured / p.after_seconds
        )
        s = similarity(_pairs(p.before_mix), _pairs(p.after_mix), p.before_seconds, p.after_seconds)
        return {
            "changed_at": p.changed_at_us // 1000,
            "setting": p.setting,
            "old_value": p.old_value,
            "new_value": p.new_value,
            "predicted_sync_reads_per_s": predicted_per_s,
            "measured_sync_reads_per_s": measured_per_s,
            "error_ratio": _ratio(predicted_per_s, measured_per_s),
            "similarity": s.score,
            "predicted_sync_reads_per_getpage": p.predicted_per_getpage,
            "measured_sync_reads_per_getpage": None
            if p.after_measured is None or p.after_getpages == 0
            else p.after_measured / p.after_getpages,
            "panes_after": p.after_panes,
            "measured_until": last.end_ms,
            "getpages_per_s_before": s.getpages_per_s_a,
            "getpages_per_s_after": s.getpages_per_s_b,
            "objects_new": ",".join(s.objects_new) or None,
            "objects_gone": ",".join(s.objects_gone) or None,
        }

    # ------------------------------------------------------------ state

    def to_dict(self) -> dict[str, Any]:
        return {
            "history": [asdict(f) for f in self.history],
            "pending": [asdict(p) for p in self.pending],
            "epoch": self.epoch,
            "changed_in": self.changed_in,
        }

    def load(self, d: dict[str, Any] | None) -> None:
        if not d:
            return
        self.history.extend(PaneFacts.from_dict(f) for f in d["history"])
        self.pending = [Pending(**p) for p in d["pending"]]
        self.epoch, self.changed_in = d["epoch"], d["changed_in"]
