"""The simulation job: getpage batches from Kafka, one PoolTracker per (source, pool) in
Flink keyed state, panes into the Iceberg tables pool_pane, object_pane, sim_curve,
working_set, reuse_distance; undecodable records into dead_letter. Getpages that come
after their pane was written are simulated in the pane still open and counted in its
late_getpages (tracker.py): nothing usable is turned away.

A pool's pane closes on the pool's own time: a getpage of a later pane, its progress mark,
or, once it is quiet and the job caught up, the idle flush. Never on the watermark: the job
has one for all sources, so a live source's later event time would close the panes of a
trace replayed beside it while their getpages still come (those would count as late).

State: the tracker lives in the Python worker's memory while the job runs; keyed
state holds its latest snapshot plus the raw records fed since (with where to
resume inside the last one), each compressed (compressed.py `Records`). A snapshot is taken whenever a pane is emitted
(so replaying the records since never emits a pane twice) and when the records
since reach `snapshot_getpages`. After a failure the worker rebuilds the tracker
from that state, and Kafka offsets and the Iceberg commits of the same checkpoint
make the tables exactly once. A pool's first attributes record read after getpages of its
time (the two topics are read together) starts the pool again from it while no pane has been
emitted and no snapshot taken (tracker.py `starts_over`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pyflink.common.typeinfo import Types
from pyflink.datastream import KeyedProcessFunction, OutputTag, RuntimeContext, TimeDomain
from pyflink.datastream.state import ListStateDescriptor, ValueStateDescriptor

from poolsight.flink_jobs import group_simulate as group
from poolsight.flink_jobs.bundle_timing import untimed_bundles
from poolsight.flink_jobs.caught_up import CaughtUp, ConsumerGroup, Offsets
from poolsight.flink_jobs.common import (
    Keyed,
    dead_letter,
    environment,
    feed_row,
    kafka_source,
    keyed_feed_type,
    main,
    row_type,
    run_keyed,
    to_row,
)
from poolsight.flink_jobs.compressed import Records
from poolsight.flink_jobs.group_routes import GroupRoutes
from poolsight.flink_jobs.group_simulate import GroupSimulate
from poolsight.flink_jobs.heap_trim import HeapTrim
from poolsight.flink_jobs.options import JobOptions, SimulationOptions
from poolsight.flink_jobs.quiet_keys import forget_quiet, restore_for_timer
from poolsight.flink_jobs.timers import Registered
from poolsight.flink_jobs.tracker import Emission, PoolTracker
from poolsight.infra.kafka_access import kafka_access
from poolsight.names import ATTRIBUTES_TOPIC, GETPAGE_TOPIC
from poolsight.schemas.getpage import GetpageBatch
from poolsight.schemas.tables import BY_NAME
from poolsight.schemas.wire import AvroDecoder, DecodeError, UnusableBatch

OUTPUTS = (
    "pool_pane",
    "object_pane",
    "sim_curve",
    "working_set",
    "reuse_distance",
    "sim_accuracy_pane",
    "prediction_check",
    "dead_letter",
)
COLLECTOR = "flink-simulation"
GETPAGE = "poolsight.v1.GetpageBatch"
ATTRIBUTES = "poolsight.v1.PoolAttributes"
CATALOG = "poolsight.v1.ObjectCatalog"
# pool_pane is the main output; every other table is a side output.
TAGS = {name: OutputTag(name, row_type(BY_NAME[name])) for name in OUTPUTS if name != "pool_pane"}
# A data-sharing member's records, keyed group|pool, for the group operator (group_simulate.py).
GROUP_FEED = OutputTag("group_feed", keyed_feed_type())

RECHECK_SECONDS = 2.0  # a quiet pool's pane waiting for the job to catch up asks again this often
WAIT_LOG_SECONDS = 30.0  # how often a pane that keeps waiting says so in the TaskManager's log
LOG = logging.getLogger(__name__)
Record = GetpageBatch | dict[str, Any]  # a getpage batch, or a PoolAttributes record


class Simulate(KeyedProcessFunction):  # type: ignore[misc]
    """One PoolTracker per (source, pool) key; see the module's doc for its state.

    It also routes the data-sharing members' records to the group operator (GROUP_FEED, keyed
    group|pool): a source's group is the settings' (`jobs submit --data-sharing-group`, [groups])
    or, with `discover_groups`, the group_name its pool attributes carry (kept in keyed state).
    Object catalog records go with them when their source's group is known in this worker."""

    def __init__(self, options: SimulationOptions, reads: ConsumerGroup | None = None) -> None:
        super().__init__()
        self.o = options
        self.reads = reads  # None: quiet panes close on wall-clock time alone (no broker to ask)

    def open(self, runtime_context: RuntimeContext) -> None:
        self.decoder = AvroDecoder(self.o.registry, kernel=self.o.kernel_decode)
        self.snap = runtime_context.get_state(ValueStateDescriptor("tracker", Types.PICKLED_BYTE_ARRAY()))
        self.pending = runtime_context.get_list_state(ListStateDescriptor("since_snapshot", Types.PICKLED_BYTE_ARRAY()))
        self.kept = Records()  # what `pending` holds of each record: compressed.py
        self.trackers: dict[str, PoolTracker] = {}
        self.since: dict[str, int] = {}  # getpages fed since the key's snapshot
        self.last_seen: dict[str, float] = {}
        self.caught_up = CaughtUp(self.reads) if self.reads is not None else None
        if self.caught_up is not None:
            self.caught_up.open()
        self.targets: dict[str, Offsets] = {}  # a quiet key's: the end offsets the job must reach first
        self.waits_logged: dict[str, float] = {}
        self.asked = Registered()  # timers.py: a timer asked for again is not sent again
        self.trim = HeapTrim()
        untimed_bundles()  # bundle_timing.py: a bundle ends with its work
        self.group_state = runtime_context.get_state(ValueStateDescriptor("group", Types.STRING()))
        self.key_group: dict[str, str | None] = {}  # the key's group, read from group_state once
        # A discovering key's getpages from before its first attributes record (_to_group),
        # kept until that record or the key's first snapshot.
        self.unrouted = runtime_context.get_list_state(ListStateDescriptor("unrouted", Types.PICKLED_BYTE_ARRAY()))
        self.young: dict[str, bool] = {}  # keys with no snapshot yet: what waits in `unrouted` is theirs
        self.routes = GroupRoutes.of(self.o.groups, self.o.discover_groups)

    def close(self) -> None:
        if self.caught_up is not None:
            self.caught_up.close()

    # -------------------------------------------------------- state

    def _read(self, raw: bytes | None) -> tuple[str, Record]:
        """Decode a Kafka record; a getpage batch becomes its typed value (by the compiled kernel
        when its writer schema has the v1 layout). Raises DecodeError or UnusableBatch (a ValueError)."""
        return self.decoder.read(raw)

    def _tracker(self, key: str) -> PoolTracker:
        tr = self.trackers.get(key)
        if tr is not None:
            return tr
        data = self.snap.value()
        if data is not None:
            tr = PoolTracker.restore(data)
        else:
            source, _, pool = key.partition("|")
            tr = PoolTracker(
                source, pool, self.o.config_for(pool), self.o.costs(), self.o.check_panes, self.o.pool_policy
            )
        replayed = 0
        for kept, start in self.pending.get():
            _, rec = self._read(self.kept.unpack(kept))
            replayed += self._apply(tr, rec, start, self._no_emission)
        self.trackers[key] = tr
        self.young[key] = data is None
        self.since[key] = replayed
        self.last_seen.setdefault(key, time.time())  # kept while evicted (_quiet): the TTL counts from it
        return tr

    @staticmethod
    def _no_emission(_e: Emission, _i: int) -> None:
        raise RuntimeError("replaying the records since the snapshot emitted a pane")

    @staticmethod
    def _apply(tr: PoolTracker, rec: Record, start: int, on_emit: Any) -> int:
        if isinstance(rec, GetpageBatch):
            return tr.feed(rec, on_emit, start)
        tr.set_attributes(rec)  # PoolAttributes
        return 0

    def _save(self, key: str, tr: PoolTracker) -> None:
        self.snap.update(tr.snapshot())
        self.pending.clear()
        self.since[key] = 0
        if self.young.get(key):
            self.unrouted.clear()  # kept only until the key's first snapshot: a group learned later starts there
        self.young[key] = False

    # -------------------------------------------------------- input

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.trim.maybe()
        key = ctx.get_current_key()
        raw = bytes(value[1]) if value[1] is not None else None
        try:
            full, item = self._read(raw)
        except DecodeError as exc:
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, str(exc), raw, value, key)
            return
        except UnusableBatch as exc:  # only getpage batches are checked
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, f"unusable {GETPAGE}: {exc}", raw, value, key)
            return
        if full == CATALOG:  # shares the attributes topic; only the group operator reads it
            yield from self._to_group(key, raw, full, item)
            return
        if full not in (GETPAGE, ATTRIBUTES):
            return
        tr = self._tracker(key)
        self.last_seen[key] = time.time()
        self.targets.pop(key, None)
        if isinstance(item, GetpageBatch) and tr.is_duplicate(item):
            return  # sent again by a producer restarted after its last checkpoint: fed before
        out: list[tuple[Emission, int]] = []

        def emitted(e: Emission, resume: int) -> None:
            out.append((e, resume))
            self._save(key, tr)

        try:
            again = not isinstance(item, GetpageBatch) and self.snap.value() is None and tr.starts_over(item)
            if again:
                self._start_over(key, raw)  # the record is in `pending` and applied
            fed = 0 if again else self._apply(tr, item, 0, emitted)
        except (ValueError, KeyError, TypeError) as exc:
            yield TAGS["dead_letter"], dead_letter(COLLECTOR, f"unusable {full}: {exc}", raw, value, key)
            return
        yield from self._to_group(key, raw, full, item)
        if again:
            return
        resume = out[-1][1] if out else 0
        n = item.events if isinstance(item, GetpageBatch) else 1
        if resume < n:
            self.pending.add((self.kept.pack(raw), resume))
        self.since[key] = self.since.get(key, 0) + fed
        if self.since[key] >= self.o.snapshot_getpages:
            self._save(key, tr)
        self._idle_timer(key, ctx)
        for e, _ in out:
            yield from self._rows(e)

    def _start_over(self, key: str, raw: bytes | None) -> None:
        """The pool's first attributes record came after getpages of its time (tracker.starts_over):
        with no snapshot taken, the records since the key began are all in `pending`. The record
        goes before them there, and the tracker is built again from them in that order, as a
        failover would rebuild it."""
        since = list(self.pending.get())
        old, replayed = self.trackers.pop(key), self.since.get(key, 0)
        self._pending([(self.kept.pack(raw), 0), *since])
        try:
            self._tracker(key)
        except (ValueError, KeyError, TypeError):  # the record goes to dead_letter; the pool as it was
            self._pending(since)
            self.trackers[key], self.since[key] = old, replayed
            raise

    def _pending(self, records: list[tuple[bytes | None, int]]) -> None:
        self.pending.clear()
        for r in records:
            self.pending.add(r)

    def _to_group(self, key: str, raw: bytes | None, full: str, item: Any) -> Any:
        """The record to the group operator when its source is a data-sharing member (group_routes.py).
        A discovering key's getpages read before its first attributes record and its first
        snapshot wait in `unrouted`; when that record names a group, they follow it there (the
        group buffers a member's getpages until every member has passed them). A source that
        sends no attributes (a trace alone) so keeps one pane's records twice, then none."""
        source, _, rest = key.partition("|")
        pool = rest.partition("|")[0]
        early: list[bytes] = []
        if full == CATALOG:
            group = self.routes.of_source(source)
        else:
            seen = self._key_group(key)  # None: no attributes record yet; "": in no group
            stored = seen or None
            learning = seen is None and self.routes.learns(source)
            if full == ATTRIBUTES:
                new = self.routes.attributes(source, item.get("group_name"), stored)
                if learning:
                    early = list(self.unrouted.get()) if self.young.get(key) else []
                    self.unrouted.clear()
                if new != stored or learning:
                    self.group_state.update(new or "")
                    self.key_group[key] = new or ""
                    stored = new
            elif learning and raw is not None and self.young.get(key) and not item.is_mark:
                self.unrouted.add(raw)  # a progress mark is not kept: the records after it pass that time too
            group = self.routes.of_key(source, stored)
        if group and pool and raw is not None:
            for r in (raw, *early):
                yield GROUP_FEED, feed_row(f"{group}|{pool}", r)

    def _key_group(self, key: str) -> str | None:
        """The key's group as kept: None before its first attributes record, "" for none."""
        if key not in self.key_group:
            self.key_group[key] = self.group_state.value()
        return self.key_group[key]

    def _idle_timer(self, key: str, ctx: Any, due: float | None = None) -> None:
        # Whole seconds, so a burst of records shares one timer per key.
        if due is None:
            due = self.last_seen.get(key, time.time()) + self.o.idle_flush_seconds
        self.asked.wake_at(ctx, key, due)

    def _read_all(self, key: str) -> bool:
        """Whether the job has read every record produced up to some moment after the key went
        quiet (caught_up.py): only then may wall-clock quiet close its pane."""
        if self.caught_up is None:
            return True
        done, target = self.caught_up.passed(self.targets.get(key), self.last_seen.get(key, time.time()))
        if target is None:
            return False  # no answer since the key went quiet: a pause is not the end of its stream
        self.targets[key] = target
        if done:
            return True
        if time.time() - self.waits_logged.get(key, 0.0) >= WAIT_LOG_SECONDS:  # why a pane waits, now and then
            self.waits_logged[key] = time.time()
            LOG.info("%s: its quiet pane waits for the group to commit %s", key, self.caught_up.behind(target))
        return False

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key = ctx.get_current_key()
        self.asked.fired(key)
        if ctx.time_domain() == TimeDomain.EVENT_TIME:
            return  # a savepoint's from when the watermark closed panes (the module's doc): no longer
        if key not in self.trackers and self._gone(key, ctx):
            return
        tr = self._tracker(key)
        out: list[Emission] = []

        def emitted(e: Emission, _resume: int) -> None:
            out.append(e)
            self._save(key, tr)

        quiet = time.time() - self.last_seen.get(key, 0.0) >= self.o.idle_flush_seconds - 1e-3
        if quiet:
            if tr.open_pane is not None:
                if self._read_all(key):
                    self.targets.pop(key, None)
                    tr.flush(tr.open_pane + 1, emitted)
                else:  # behind, or the broker away: ask again in a while (a checkpoint commits offsets)
                    self._idle_timer(key, ctx, time.time() + RECHECK_SECONDS)
            if tr.open_pane is None:
                self._quiet(key, ctx)
        elif tr.open_pane is not None:
            # Not idle long enough: records came since, or the tracker was just restored
            # after a failover (its timers fire at once, and no record may follow).
            self._idle_timer(key, ctx)
        for e in out:
            yield from self._rows(e)

    def _gone(self, key: str, ctx: Any) -> bool:
        """A processing-time timer for a key out of memory with nothing to do (quiet_keys.py)."""
        restore = restore_for_timer(key, self.last_seen, self.snap, self.pending)
        if restore is None:
            self._quiet(key, ctx)
        return not restore

    def _quiet(self, key: str, ctx: Any) -> None:
        """A quiet pool with no open pane leaves memory; its state goes after the TTL (quiet_keys.py)."""
        forget_quiet(
            key,
            ctx,
            self.o.state_ttl_seconds,
            self.last_seen,
            (self.snap, self.pending, self.group_state, self.unrouted),
            (self.trackers, self.since, self.targets, self.key_group, self.waits_logged, self.young, self.asked.keys),
        )

    @staticmethod
    def _rows(e: Emission) -> Any:
        for name, rows in e.rows().items():
            table = BY_NAME[name]
            for r in rows:
                if name == "pool_pane":
                    yield to_row(table, r)
                else:
                    yield TAGS[name], to_row(table, r)


def submit(settings: Any, job: JobOptions, o: SimulationOptions, name: str = "poolsight-simulation") -> str:
    """Build the job and submit it to the session cluster; return its job id."""
    env, t_env = environment(settings, name, job)
    topics = (GETPAGE_TOPIC.name, ATTRIBUTES_TOPIC.name)
    kafka_source(t_env, settings, "getpage_source", list(topics), job)
    reads = ConsumerGroup(kafka_access(settings), job.group, topics, job.start_from)
    ops = [Keyed(Simulate(o, reads), "pool_pane", TAGS, "simulate")]
    if o.groups or o.discover_groups:  # the members' records, merged per (group, pool): group_simulate.py
        ops.append(
            Keyed(GroupSimulate(o, reads), group.MAIN, group.TAGS, "simulate-groups", upstream=("simulate", GROUP_FEED))
        )
    return run_keyed(env, t_env, "getpage_source", name, *ops)


def _main() -> None:
    main(submit, SimulationOptions, "poolsight-simulation")


if __name__ == "__main__":
    _main()
