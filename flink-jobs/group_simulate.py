"""The simulation job's group operator: one GroupTracker per (data-sharing group, pool) in
Flink keyed state, fed by the per-(source, pool) Simulate of simulation_job.py, which hands on
the members' records (getpages, pool attributes, object catalog) keyed group|pool. Its rows go
to gbp_curve, gbp_member and lbp_curve. A group's members are the settings' (`jobs submit
--data-sharing-group`, [groups]) in their order, else those whose records came, in the order
they came (a member that joins restarts the group's simulation: its rows say warmup).

Its panes close on the members' own time, as Simulate's do, never on the job's watermark (one
for every source: a live source's later event time would close the panes of a group replayed
beside it while its members still sent). The group is fed as far as every member has passed
(a later getpage or the member's progress mark); a member silent for `--idle-flush` s, once the
job is caught up (caught_up.py), is quiet and holds the group back no more until its next record
(a member stopped or down while the others run); the whole group silent is flushed. An
event-time timer left in a savepoint from before does nothing.

State as Simulate keeps it: the tracker's snapshot (at every emission, and when the records
since reach `snapshot_getpages`) plus the raw records since, replayed into a restored tracker;
the Iceberg commits and the Kafka offsets of one checkpoint make the rows exactly once (the
tables are keyed, so a pane written again replaces itself).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pyflink.common.typeinfo import Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, TimeDomain
from pyflink.datastream.state import ListStateDescriptor, ValueStateDescriptor

from poolsight.flink_jobs.bundle_timing import untimed_bundles
from poolsight.flink_jobs.caught_up import CaughtUp, ConsumerGroup, Offsets
from poolsight.flink_jobs.common import row_type, to_row
from poolsight.flink_jobs.compressed import Records
from poolsight.flink_jobs.group_tracker import GroupEmission, GroupTracker
from poolsight.flink_jobs.heap_trim import HeapTrim
from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.quiet_keys import forget_quiet, restore_for_timer
from poolsight.flink_jobs.timers import Registered, wake_at
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.tables import BY_NAME
from poolsight.schemas.wire import AvroDecoder, DecodeError, UnusableBatch

COLLECTOR = "flink-group-simulation"
GETPAGE = "poolsight.v1.GetpageBatch"
ATTRIBUTES = "poolsight.v1.PoolAttributes"
CATALOG = "poolsight.v1.ObjectCatalog"
MAIN = "gbp_curve"
TAGS = {name: OutputTag(f"group_{name}", row_type(BY_NAME[name])) for name in ("gbp_member", "lbp_curve")}
RECHECK_SECONDS = 2.0
LOG = logging.getLogger(__name__)


class GroupSimulate(KeyedProcessFunction):  # type: ignore[misc]
    def __init__(self, options: SimulationOptions, reads: ConsumerGroup | None = None) -> None:
        super().__init__()
        self.o = options
        self.reads = reads

    def open(self, runtime_context: RuntimeContext) -> None:
        self.decoder = AvroDecoder(self.o.registry, kernel=self.o.kernel_decode)
        self.snap = runtime_context.get_state(ValueStateDescriptor("group_tracker", Types.PICKLED_BYTE_ARRAY()))
        self.pending = runtime_context.get_list_state(ListStateDescriptor("group_since", Types.PICKLED_BYTE_ARRAY()))
        self.kept = Records()  # what `pending` holds of each record: compressed.py
        self.trackers: dict[str, GroupTracker] = {}
        self.trim = HeapTrim()
        untimed_bundles()  # bundle_timing.py: a bundle ends with its work
        self.since: dict[str, int] = {}
        self.last_seen: dict[str, float] = {}
        self.caught_up = CaughtUp(self.reads) if self.reads is not None else None
        if self.caught_up is not None:
            self.caught_up.open()
        self.targets: dict[str, Offsets] = {}
        # Per key, when each member's last getpage batch came (wall time; a member not heard from
        # counts from when this worker first saw the key), and the caught-up target a silent
        # member waits for (`_members_quiet`).
        self.member_seen: dict[str, dict[str, float]] = {}
        self.member_targets: dict[str, tuple[tuple[str, ...], Offsets]] = {}
        self.lone_since: dict[str, float] = {}  # a learned group with one member: since when (go_alone)
        self.asked = Registered()  # the member timers asked for (one a second at most while a member sends)

    def close(self) -> None:
        if self.caught_up is not None:
            self.caught_up.close()

    def _tracker(self, key: str) -> GroupTracker:
        tr = self.trackers.get(key)
        if tr is not None:
            return tr
        data = self.snap.value()
        if data is not None:
            tr = GroupTracker.restore(data)
            tr.set_sample(self.o.group_sample)
        else:
            group, _, pool = key.partition("|")
            pane = float(self.o.config_for(pool).pane_seconds)
            members = tuple(self.o.groups.get(group, ()))
            tr = GroupTracker(group, members, pool, pane, sample=self.o.group_sample)
        replay: list[GroupEmission] = []
        for kept in self.pending.get():
            full, rec = self.decoder.read(self.kept.unpack(kept))
            self._apply(tr, full, rec, replay)
        if replay:
            raise RuntimeError("replaying the records since the group snapshot emitted a pane")
        self.trackers[key] = tr
        self.since[key] = 0
        self.last_seen.setdefault(key, time.time())  # kept while evicted (_quiet): the TTL counts from it
        return tr

    @staticmethod
    def _apply(tr: GroupTracker, full: str, rec: Any, out: list[GroupEmission]) -> int:
        if full == GETPAGE and isinstance(rec, GetpageBatch):
            tr.add(rec.source, rec, out)
            return rec.getpages
        if full == ATTRIBUTES and isinstance(rec, dict):
            tr.set_attributes(str(rec["source"]), rec)
        elif full == CATALOG and isinstance(rec, dict):
            tr.set_catalog(rec)
        return 0

    def _save(self, key: str, tr: GroupTracker) -> None:
        self.snap.update(tr.snapshot())
        self.pending.clear()
        self.since[key] = 0

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.trim.maybe()
        key = ctx.get_current_key()
        raw = bytes(value[1]) if value[1] is not None else None
        try:
            full, item = self.decoder.read(raw)
        except (DecodeError, UnusableBatch):
            return  # Simulate reads the same record and dead-letters it, once
        tr = self._tracker(key)
        now = self.last_seen[key] = time.time()
        self.targets.pop(key, None)
        if full == GETPAGE and isinstance(item, GetpageBatch):
            self._seen(key, tr)[item.source] = now
            self.lone_since.setdefault(key, now)
        out: list[GroupEmission] = []
        try:
            fed = self._apply(tr, full, item, out)
        except (ValueError, KeyError, TypeError) as exc:  # Simulate dead-letters what it cannot use
            LOG.warning("%s: %s not usable for group %s: %s", COLLECTOR, full, key, exc)
            return
        if out:
            self._save(key, tr)  # the snapshot holds this record: nothing to replay
        else:
            self.pending.add(self.kept.pack(raw))
            self.since[key] = self.since.get(key, 0) + fed
            if self.since[key] >= self.o.snapshot_getpages:
                self._save(key, tr)
        self._idle_timer(key, ctx)
        self._member_timer(key, tr, ctx)
        yield from _rows(out)

    def _seen(self, key: str, tr: GroupTracker) -> dict[str, float]:
        seen = self.member_seen.setdefault(key, {})
        for m in tr.members:
            seen.setdefault(m, time.time())
        return seen

    @staticmethod
    def _lone(tr: GroupTracker) -> bool:
        """A learned group that has heard from one member only, not yet fed alone."""
        return not tr.configured and not tr.alone and len(tr.members) == 1

    def _silent(self, key: str, tr: GroupTracker) -> list[str]:
        """The members not quiet yet that have sent nothing for the idle flush."""
        seen, now = self._seen(key, tr), time.time()
        return [
            m for m in tr.members if not tr.member_state[m].quiet and now - seen[m] >= self.o.idle_flush_seconds - 1e-3
        ]

    def _member_timer(self, key: str, tr: GroupTracker, ctx: Any) -> None:
        """While events wait for a member, a timer for when the first of those not quiet will
        have been silent for the idle flush (the key's own idle timer is later while another
        member sends)."""
        if not tr.buffer:
            return
        if self._lone(tr):
            self.asked.wake_at(ctx, key, self.lone_since.get(key, time.time()) + self.o.idle_flush_seconds)
            return
        seen = self._seen(key, tr)
        waits = [seen[m] for m in tr.members if not tr.member_state[m].quiet]
        if waits:
            self.asked.wake_at(ctx, key, min(waits) + self.o.idle_flush_seconds)

    def _members_quiet(self, key: str, tr: GroupTracker, out: list[GroupEmission], ctx: Any) -> None:
        """Members silent for the idle flush while another sends: quiet once the job has read
        everything produced since the last of them was heard (else asked again shortly)."""
        if self._lone(tr) and tr.buffer:
            if time.time() - self.lone_since.setdefault(key, time.time()) >= self.o.idle_flush_seconds - 1e-3:
                tr.go_alone(out)
            return
        silent = self._silent(key, tr)
        if not silent or not tr.buffer:
            return
        if self.caught_up is not None:
            waiting, kept = self.member_targets.get(key, ((), None))
            kept = kept if waiting == tuple(silent) else None  # the same members wait for the same target
            done, target = self.caught_up.passed(kept, max(self._seen(key, tr)[m] for m in silent))
            if not done:
                if target is not None:
                    self.member_targets[key] = (tuple(silent), target)
                self._idle_timer(key, ctx, time.time() + RECHECK_SECONDS)
                return
            self.member_targets.pop(key, None)
        for m in silent:
            tr.member_quiet(m, out)

    def _idle_timer(self, key: str, ctx: Any, due: float | None = None) -> None:
        if due is None:
            due = self.last_seen.get(key, time.time()) + self.o.idle_flush_seconds
        wake_at(ctx, due)

    def _read_all(self, key: str) -> bool:
        if self.caught_up is None:
            return True
        done, target = self.caught_up.passed(self.targets.get(key), self.last_seen.get(key, time.time()))
        if target is not None:
            self.targets[key] = target
        return done

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        if ctx.time_domain() == TimeDomain.EVENT_TIME:
            return  # a savepoint's from before panes stopped closing on the watermark
        key = ctx.get_current_key()
        self.asked.fired(key)
        if key not in self.trackers and self._gone(key, ctx):
            return
        tr = self._tracker(key)
        out: list[GroupEmission] = []
        quiet = time.time() - self.last_seen.get(key, 0.0) >= self.o.idle_flush_seconds - 1e-3
        if quiet:
            if tr.open_pane is not None or tr.buffer:
                if self._read_all(key):
                    self.targets.pop(key, None)
                    tr.flush(out)
                else:
                    self._idle_timer(key, ctx, time.time() + RECHECK_SECONDS)
        else:
            self._members_quiet(key, tr, out, ctx)
            if tr.open_pane is not None or tr.buffer:
                self._idle_timer(key, ctx)
                self._member_timer(key, tr, ctx)
        if out:
            self._save(key, tr)
        if quiet and tr.open_pane is None and not tr.buffer:  # also after a timer restored it
            self._quiet(key, ctx)
        yield from _rows(out)

    def _gone(self, key: str, ctx: Any) -> bool:
        """A processing-time timer for a key out of memory with nothing to do (quiet_keys.py)."""
        restore = restore_for_timer(key, self.last_seen, self.snap, self.pending)
        if restore is None:
            self._quiet(key, ctx)
        return not restore

    def _quiet(self, key: str, ctx: Any) -> None:
        """As Simulate._quiet: a quiet group leaves memory, and its state after the TTL."""
        forget_quiet(
            key,
            ctx,
            self.o.state_ttl_seconds,
            self.last_seen,
            (self.snap, self.pending),
            (
                self.trackers,
                self.since,
                self.targets,
                self.member_seen,
                self.member_targets,
                self.lone_since,
                self.asked.keys,
            ),
        )


def _rows(out: list[GroupEmission]) -> Any:
    for e in out:
        for name, rows in e.rows.items():
            table = BY_NAME[name]
            for r in rows:
                yield (to_row(table, r) if name == MAIN else (TAGS[name], to_row(table, r)))
