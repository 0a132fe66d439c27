"""A data-sharing group's pool in the simulation job: the members' getpage batches merged in
one event-time order and fed to one GroupSimulator (simulator/group.py), its panes written as
rows of gbp_curve, gbp_member and lbp_curve.

Members' batches arrive on their own Kafka partitions, each in its own time order, so events
wait in a buffer until every member of the group has passed them (`add`: a later getpage or the
member's progress mark), until the members that have not are quiet (`member_quiet`: silent for
the idle flush with the job caught up, GroupSimulate) or the whole stream went quiet (`flush`),
and until every member's VPSIZE came (the attributes topic may be read behind the getpages');
they are then sorted by (time, member order, arrival) and fed. Never on the job's watermark: it
is one for every source, so a live source's later event time would feed a group replayed beside
it before its members had sent (simulation_job.py's panes close on their own time likewise).
The buffer is bounded by that wait: the members' skew, not the pane. An event older than what
was already fed (a member far behind, a replay) is fed at once and counted in the open pane's
late_getpages. The buffer holds object codes into the tracker's own name table (about 21 bytes
an event), and at most `max_buffer` events: when one member's partition runs far ahead of
another's (a Kafka source reads its partitions unevenly under load), the oldest half is fed, and
what the lagging member then sends before that time is late.

A large group is simulated on a spatial sample of its pages (`sample`; None: `auto_sample`,
which bounds the pages holding state to GROUP_AUTO_PAGES), as the pools' miniature caches are;
the rows carry the rate in sampling_rate.

Which objects use the GBP: those the object catalog marks GBP-dependent; without a catalog,
those two members use and one updates (inter-DB2 read/write interest, inferred as it happens).

The grid: the GBP's current data entries and RATIO (the members' pool attributes) times
0.25 .. 4 and RATIO halved and doubled, the current point first; the members' LBPs at their
VPSIZE. A change takes effect at its event time (a later attributes record waits for the feed
to get there; a pane that holds a change is labelled with the setting at its end). A change of
VPSIZE, or of the GBP to a setting off the grid, restarts the simulation at that time (its rows
say warmup until a whole pane has run since).
"""

from __future__ import annotations

import math
import pickle
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.flink_jobs import compressed
from poolsight.schemas.getpage import GetpageBatch, micros
from poolsight.simulator.engine import default_ladder
from poolsight.simulator.group import (
    COUNTERS,
    GbpCounters,
    GbpPoint,
    GbpSetting,
    GroupOptions,
    GroupSimulator,
    gbp_name,
)
from poolsight.simulator.group_grid import DEFAULT_RATIO, assumed_setting, auto_sample, gbp_grid
from poolsight.simulator.trace import Names

ZMAGIC = b"PSGRPZ01"  # a snapshot's pickle in a zstd frame (compressed.py); a plain pickle is older
MAX_BUFFER = 500_000  # events waiting for the other members (about 11 MB)
MEMBER_NAME = re.compile(r"^[A-Za-z0-9@#$_.-]{1,64}$")


def parse_groups(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """NAME=MEMBER,MEMBER[,...] (repeatable) to {group: members}; a member in two groups is an error."""
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for spec in specs:
        name, sep, rest = spec.partition("=")
        members = tuple(m.strip() for m in rest.split(",") if m.strip())
        if not sep or not name.strip() or len(members) < 1:
            raise ValueError(f"group {spec!r}: expected NAME=MEMBER,MEMBER[,...]")
        for n in (name.strip(), *members):
            if not MEMBER_NAME.match(n):
                raise ValueError(f"group {spec!r}: {n!r} is not a group or member name")
        for m in members:
            if m in seen:
                raise ValueError(f"group {spec!r}: member {m} is already in group {seen[m]}")
            seen[m] = name.strip()
        out[name.strip()] = members
    return out


def settings_groups(conf: dict[str, Any]) -> list[str]:
    """[groups] of poolsight.toml (NAME = ["M1", "M2"] or "M1,M2") as NAME=M1,M2 specs."""
    out = []
    for name, members in conf.items():
        listed = members if isinstance(members, list) else str(members).split(",")
        out.append(f"{name}={','.join(str(m).strip() for m in listed)}")
    return out


@dataclass
class _Member:
    vpsize: int | None = None
    page_size: int = 4096
    latest: float | None = None  # the latest event time received (seconds)
    # Silent for the idle flush while the job caught up (member_quiet): it has sent what it has
    # and holds the group back no more, until its next record.
    quiet: bool = False


@dataclass
class _Chunk:
    member: int
    times: npt.NDArray[np.float64]
    objects: npt.NDArray[np.int32]  # codes into GroupTracker.object_names
    pages: npt.NDArray[np.uint64]
    function: npt.NDArray[np.uint8]

    def select(self, sel: npt.NDArray[np.bool_]) -> _Chunk:
        return _Chunk(self.member, self.times[sel], self.objects[sel], self.pages[sel], self.function[sel])


@dataclass
class GroupEmission:
    pane: int
    rows: dict[str, list[dict[str, Any]]]


@dataclass
class GroupTracker:
    group: str
    members: tuple[str, ...]
    pool: str
    pane_seconds: float = 60.0
    model: str = "stream"
    sample: float | None = None  # spatial sampling rate; None: auto_sample at the simulator's start
    max_buffer: int = MAX_BUFFER
    configured: bool | None = None  # members given (the settings); else learned from their records
    alone: bool = False  # learned, one member, no second came for the idle flush: fed alone (go_alone)
    member_state: dict[str, _Member] = field(default_factory=dict)
    gbp: GbpSetting | None = None  # the current setting, from the attributes
    gbpoolt: float = 30.0
    not_dependent: set[str] = field(default_factory=set)
    catalog_seen: bool = False  # the pool's object catalog arrived: it says which objects are GBP-dependent
    buffer: list[_Chunk] = field(default_factory=list)
    object_names: list[str] = field(default_factory=list)  # the buffer's object codes
    object_codes: dict[str, int] = field(default_factory=dict)
    rate: float = 1.0  # the running simulator's sampling rate
    pending: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)  # (time, member, attributes)
    fed_until: float | None = None  # every event before this time has been fed
    open_pane: int | None = None
    pane_first: float | None = None  # first event time fed in the open pane
    pane_last: float | None = None
    late: int = 0
    started_pane: int | None = None  # the pane the current simulation started in
    sim_bytes: bytes | None = None  # the simulator while pickled
    settings: list[GbpSetting] = field(default_factory=list)
    lbp_sizes: dict[str, list[int]] = field(default_factory=dict)
    lbp_before: dict[str, list[tuple[float, ...]]] = field(default_factory=dict)  # cumulative curves at the pane start

    def __post_init__(self) -> None:
        if self.configured is None:
            self.configured = bool(self.members)
        for m in self.members:
            self.member_state.setdefault(m, _Member())
        self._sim: GroupSimulator | None = None

    # -------------------------------------------------------------- input

    def add_member(self, member: str) -> None:
        """A member not known before (the group's members are learned from their records): it
        joins at the end of the member order, and a running simulation restarts with it."""
        if member in self.members:
            return
        self.members = (*self.members, member)
        self.member_state.setdefault(member, _Member())
        self._restart()

    def set_sample(self, sample: float | None) -> None:
        """The job's --group-sample (a resubmitted job may bring another): a new rate restarts
        the simulation at the next event."""
        if sample != self.sample:
            self.sample = sample
            self._restart()

    def _restart(self) -> None:
        """Drop the simulation, running or pickled: rebuilt at the next event."""
        self._sim = None
        self.sim_bytes = None

    @property
    def buffered(self) -> int:
        """Events waiting in the buffer."""
        return sum(len(c.times) for c in self.buffer)

    def set_attributes(self, member: str, rec: dict[str, Any]) -> None:
        """A member's pool attributes: in force from its event time (waits until the feed gets there)."""
        self.add_member(member)
        t = micros(rec["event_time"]) / 1e6 if rec.get("event_time") is not None else 0.0
        first = self.member_state.setdefault(member, _Member()).vpsize is None
        # A member's first attributes hold from the start; a later record waits for the feed to
        # reach its time (the attributes topic runs ahead of the getpages).
        if (first and not any(m == member for _, m, _ in self.pending)) or (
            self.fed_until is not None and t <= self.fed_until
        ):
            self._apply(member, rec)
        else:
            self.pending.append((t, member, rec))
            self.pending.sort(key=lambda x: x[0])

    def set_catalog(self, rec: dict[str, Any]) -> None:
        """An object catalog record: objects not GBP-dependent never touch the GBP."""
        if rec.get("pool") != self.pool or not rec.get("object"):
            return
        if rec.get("gbp_dependent") is not None:
            self.catalog_seen = True
        if rec.get("gbp_dependent") is False:
            self.not_dependent.add(str(rec["object"]))

    def add(self, member: str, b: GetpageBatch, emit: list[GroupEmission]) -> int:
        """Buffer a member's batch; feed what every sending member has passed. Returns late getpages."""
        self.add_member(member)
        mi = self.members.index(member)
        times = b.times()
        if b.is_mark:  # the member sent every getpage before end_time: the group may pass it
            self._passed(member, b.end_time / 1e6, emit)
            return 0
        lut = np.fromiter((self._code(n) for n in b.object_names), dtype=np.int32, count=len(b.object_names))
        chunk = _Chunk(mi, times, lut[b.objects], b.pages.astype(np.uint64), b.function_codes())
        late = 0
        if self.fed_until is not None and times.min() < self.fed_until:
            old = times < self.fed_until
            late = int(((chunk.function == 0) & old).sum())
            self._feed([chunk.select(old)], emit)
            chunk = chunk.select(~old)
            self.late += late
        if len(chunk.times):
            self.buffer.append(chunk)
        self._passed(member, float(times.max()), emit)
        if self.buffered > self.max_buffer:
            self._shed(emit)
        return late

    def _passed(self, member: str, latest: float, emit: list[GroupEmission]) -> None:
        """The member's stream has reached `latest`: feed what every member has passed."""
        ms = self.member_state[member]
        ms.latest = latest if ms.latest is None else max(latest, ms.latest)
        ms.quiet = False
        self._feed_passed(emit)

    def member_quiet(self, member: str, emit: list[GroupEmission]) -> None:
        """The member has sent nothing for the idle flush and the job has read everything produced
        since (GroupSimulate says so): it has sent all it has, and the group goes on without it
        until its next record. What it sends later from before then is late."""
        ms = self.member_state.get(member)
        if ms is None or ms.quiet or member not in self.members:
            return
        ms.quiet = True
        self._feed_passed(emit)

    def go_alone(self, emit: list[GroupEmission]) -> None:
        """A learned group whose one member has sent for the idle flush with no second member:
        fed on that member's progress (a member that joins later restarts the simulation)."""
        if not self.alone:
            self.alone = True
            self._feed_passed(emit)

    def _feed_passed(self, emit: list[GroupEmission]) -> None:
        """Feed what every member not quiet has passed. One not heard from yet holds the group back
        until it is quiet too; a group learned from its records waits for a second member (the
        first alone is no group)."""
        known = [s for m, s in self.member_state.items() if m in self.members]
        if not (self.configured or self.alone or len(known) > 1):
            return
        if any(s.latest is None and not s.quiet for s in known):
            return
        passed = [s.latest for s in known if s.latest is not None and not s.quiet]
        if passed:
            self.advance(min(passed), emit, inclusive=False)

    def _code(self, name: str) -> int:
        code = self.object_codes.get(name)
        if code is None:
            code = self.object_codes[name] = len(self.object_names)
            self.object_names.append(name)
        return code

    def _shed(self, emit: list[GroupEmission]) -> None:
        """The buffer is full: feed its older half (what a lagging member sends before then is late)."""
        times = np.concatenate([c.times for c in self.buffer])
        half = len(times) // 2
        self.advance(float(np.partition(times, half)[half]), emit, inclusive=True, force=True)

    def _ready(self) -> bool:
        """Every member's VPSIZE is known: the simulation can take their getpages."""
        return all(self.member_state[m].vpsize is not None for m in self.members)

    def advance(self, until: float, emit: list[GroupEmission], inclusive: bool = False, force: bool = False) -> None:
        """Feed every buffered event before `until` (through it if inclusive), in one time order,
        and emit each pane all of whose events have been fed. Until every member's attributes
        came (their topic is read beside the getpages' and may lag them), the events wait in the
        buffer unless `force`d (the buffer full, the stream quiet): fed then, they could not be
        simulated."""
        if not force and not self._ready():
            return
        bound = math.nextafter(until, math.inf) if inclusive else until  # the first time not fed
        if self.fed_until is not None and bound <= self.fed_until:
            return
        take: list[_Chunk] = []
        keep: list[_Chunk] = []
        for c in self.buffer:
            sel = c.times <= until if inclusive else c.times < until
            if sel.all():
                take.append(c)
            elif not sel.any():
                keep.append(c)
            else:
                take.append(c.select(sel))
                keep.append(c.select(~sel))
        self.buffer = keep
        self._feed(take, emit)
        self.fed_until = bound
        self._close_panes(emit)

    def flush(self, emit: list[GroupEmission]) -> None:
        """The stream went quiet: feed everything and emit the open pane."""
        last = max((float(c.times.max()) for c in self.buffer), default=self.fed_until or 0.0)
        self.advance(last, emit, inclusive=True, force=True)
        if self.open_pane is not None:
            self._emit(emit)

    # -------------------------------------------------------------- feeding

    def _feed(self, chunks: list[_Chunk], emit: list[GroupEmission]) -> None:
        chunks = [c for c in chunks if len(c.times)]
        if not chunks:
            return
        times = np.concatenate([c.times for c in chunks])
        member = np.concatenate([np.full(len(c.times), c.member, dtype=np.int64) for c in chunks])
        objects = np.concatenate([c.objects for c in chunks])
        pages = np.concatenate([c.pages for c in chunks])
        function = np.concatenate([c.function for c in chunks])
        order = np.lexsort((member, times))  # stable: ties by member order, then arrival
        times, member, objects, pages, function = (a[order] for a in (times, member, objects, pages, function))
        start = 0
        while start < len(times):
            # Settings that change inside this stretch split it at their event time.
            stop = len(times)
            if self.pending:
                at = self.pending[0][0]
                stop = int(np.searchsorted(times, at, side="left"))
                if stop <= start:
                    at, m, rec = self.pending.pop(0)
                    if self.open_pane is not None and at >= (self.open_pane + 1) * self.pane_seconds:
                        self._emit(emit)  # the pane before the change is the old setting's
                    self._apply(m, rec)
                    continue
            self._feed_sorted(
                times[start:stop],
                member[start:stop],
                objects[start:stop],
                pages[start:stop],
                function[start:stop],
                emit,
            )
            start = stop

    def _feed_sorted(
        self, times: Any, member: Any, objects: Any, pages: Any, function: Any, emit: list[GroupEmission]
    ) -> None:
        panes = np.floor(times / self.pane_seconds).astype(np.int64)
        i = 0
        while i < len(times):
            pane = int(panes[i])
            if self.open_pane is not None and pane > self.open_pane:
                self._emit(emit)
            j = int(np.searchsorted(panes, pane, side="right"))
            if self.open_pane is None or pane > self.open_pane:
                self.open_pane = pane
                self.pane_first = float(times[i])
            sim = self._simulator()
            if sim is not None:
                # Only the objects this stretch uses: the simulator looks each table name up.
                used, codes = np.unique(objects[i:j], return_inverse=True)
                table = np.asarray([self.object_names[k] for k in used.tolist()], dtype=np.str_)
                sim.feed(
                    Names(member[i:j].astype(np.int32), np.asarray(self.members, dtype=np.str_)),
                    Names(codes.reshape(-1).astype(np.int32), table),
                    pages[i:j],
                    function[i:j],
                    times[i:j],
                )
            self.pane_last = float(times[j - 1])
            i = j

    def _close_panes(self, emit: list[GroupEmission]) -> None:
        if self.open_pane is not None and self.fed_until is not None:
            if self.fed_until >= (self.open_pane + 1) * self.pane_seconds:
                self._emit(emit)

    # -------------------------------------------------------------- settings

    def _apply(self, member: str, rec: dict[str, Any]) -> None:
        ms = self.member_state.setdefault(member, _Member())
        restart = False
        if rec.get("vpsize") and rec["vpsize"] != ms.vpsize:
            restart = ms.vpsize is not None or self._sim is not None
            ms.vpsize = int(rec["vpsize"])
        if rec.get("page_size"):
            ms.page_size = int(rec["page_size"])
        if rec.get("gbp_gbpoolt") is not None:
            self.gbpoolt = float(rec["gbp_gbpoolt"])
        if rec.get("gbp_data_entries"):
            new = GbpSetting(int(rec["gbp_data_entries"]), float(rec.get("gbp_ratio") or DEFAULT_RATIO))
            if new != self.gbp:
                self.gbp = new
                if self.settings and new not in self.settings:
                    restart = True
        if restart:
            self._restart()  # rebuilt at the next event, at the new setting (also when just restored)

    def _simulator(self) -> GroupSimulator | None:
        if self._sim is None and self.sim_bytes is not None:
            self._sim = GroupSimulator.restore(self.sim_bytes)
            self.sim_bytes = None
        if self._sim is not None:
            return self._sim
        sizes = {m: s.vpsize for m, s in self.member_state.items()}
        if any(v is None for v in sizes.values()):
            return None  # a member's VPSIZE not yet known: its getpages cannot be simulated
        lbp = {m: int(v) for m, v in sizes.items() if v is not None}
        current = self.gbp or assumed_setting(lbp)
        self.settings = gbp_grid(current, max(s.page_size for s in self.member_state.values()))
        self.lbp_sizes = {m: default_ladder(v) for m, v in lbp.items()}
        # The catalog's GBP-dependence when it came; else DB2's own rule, inferred: an object is
        # GBP-dependent once two members use it and one updates it (one member alone: never).
        self.rate = self.sample if self.sample is not None else auto_sample(lbp, self.settings)
        options = GroupOptions(
            reference=False,
            gbpoolt=self.gbpoolt,
            not_gbp_dependent=frozenset(self.not_dependent),
            infer_dependence=not self.catalog_seen,
            sample=self.rate,
        )
        self._sim = GroupSimulator(self.members, lbp, self.settings, options, lbp_curve_sizes=self.lbp_sizes)
        self.started_pane = self.open_pane
        self.lbp_before = {}
        return self._sim

    # -------------------------------------------------------------- output

    def _emit(self, emit: list[GroupEmission]) -> None:
        pane = self.open_pane
        assert pane is not None
        self.open_pane = None
        sim = self._sim
        if sim is None:
            self.late = 0
            return
        start, end = pane * self.pane_seconds, (pane + 1) * self.pane_seconds
        first = self.pane_first if self.pane_first is not None else start
        last = self.pane_last if self.pane_last is not None else end
        page_size = max(s.page_size for s in self.member_state.values())
        run = {
            "group_name": self.group,
            "gbp": gbp_name(self.pool),
            "pane_start": round(start * 1000),  # timestamps as epoch ms (common.flink_insert)
            "pane_end": round(end * 1000),
            "seconds": max(0.0, min(last, end) - max(first, start)),
            "sampling_rate": self.rate,
            "late_getpages": self.late,
            "model": self.model,
            "emitted_at": round(time.time() * 1000),
            "warmup": self.started_pane is None or self.started_pane >= pane,
        }
        self.late = 0
        curve: list[dict[str, Any]] = []
        members: list[dict[str, Any]] = []
        for p in sim.take_points():
            point = _point(p, page_size, self.gbp)
            curve.append({**run, **point, "members": ",".join(self.members), **_counters(p.total)})
            for m, c in p.members.items():
                members.append({**run, **point, "member": m, **_counters(c)})
        lbp: list[dict[str, Any]] = []
        now = sim.lbp_curves()
        for m, pts in now.items():
            before = self.lbp_before.get(m)
            vpsize = self.member_state[m].vpsize
            for k, lp in enumerate(pts):
                vals = np.array([lp.getpages, lp.lbp_hits, lp.xi_gbp, lp.xi_disk, lp.nf_gbp, lp.nf_disk], dtype=float)
                d = vals - np.array(before[k]) if before is not None and k < len(before) else vals
                lbp.append(
                    {
                        **run,
                        "member": m,
                        "pool": self.pool,
                        "size_pages": lp.buffers,
                        "is_current": lp.buffers == vpsize,
                        "getpages": d[0],
                        "lbp_hits": d[1],
                        "xi_gbp": d[2],
                        "xi_disk": d[3],
                        "nf_gbp": d[4],
                        "nf_disk": d[5],
                        "disk_sync_reads": d[3] + d[5],
                        "lbp_hit_ratio": d[1] / d[0] if d[0] else None,
                    }
                )
            self.lbp_before[m] = [
                (lp.getpages, lp.lbp_hits, lp.xi_gbp, lp.xi_disk, lp.nf_gbp, lp.nf_disk) for lp in pts
            ]
        emit.append(GroupEmission(pane, {"gbp_curve": curve, "gbp_member": members, "lbp_curve": lbp}))

    # -------------------------------------------------------------- state

    def snapshot(self) -> bytes:
        sim, self._sim = self._sim, None
        self.sim_bytes = sim.snapshot() if sim is not None else self.sim_bytes
        try:
            return compressed.pack(ZMAGIC, [pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)])
        finally:
            self._sim = sim
            if sim is not None:
                self.sim_bytes = None

    @classmethod
    def restore(cls, data: bytes) -> GroupTracker:
        body = compressed.unpack(ZMAGIC, data)  # None: a plain pickle, from before compression
        tr = pickle.loads(data if body is None else body)  # noqa: S301  # the job's own keyed state (PyFlink pickles state values anyway)
        assert isinstance(tr, cls)
        tr._sim = None
        return tr

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_sim", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("configured", True)  # before groups were learned, every group was configured
        state.setdefault("alone", False)
        if "object_names" not in state:  # a snapshot from before the buffer held codes: same answers
            names: dict[str, int] = {}
            for c in state.get("buffer", []):
                table, codes = np.unique(c.objects, return_inverse=True)
                lut = np.fromiter((names.setdefault(str(n), len(names)) for n in table), dtype=np.int32)
                c.objects = lut[codes.reshape(-1)]
            state.update(object_names=list(names), object_codes=names, sample=1.0, rate=1.0, max_buffer=MAX_BUFFER)
        state.pop("buffered", None)  # a count kept before it was derived
        self.__dict__.update(state)
        self._sim = None


def _point(p: GbpPoint, page_size: int, current: GbpSetting | None) -> dict[str, Any]:
    s = p.setting
    return {
        "data_entries": s.data_entries,
        "ratio": s.ratio,
        "directory_entries": s.directory_entries,
        "structure_mb": s.structure_mb(page_size),
        "is_current": s == current,
    }


def _counters(c: GbpCounters) -> dict[str, Any]:
    out: dict[str, Any] = {name: float(getattr(c, name)) for name in COUNTERS}
    out["getpages"] = float(c.getpages)
    out["gbp_hit_ratio"] = c.gbp_hit_ratio
    return out
