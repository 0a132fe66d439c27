"""Whether a job has read everything its topics held at some moment: the condition for
closing a quiet pool's pane on wall-clock time.

A pane closes on event time when a later getpage of its pool or the pool's progress mark
passes it. When a pool simply stops, neither comes, so a quiet pool's pane is closed on wall-clock time;
but a pool looks quiet too while the broker is down or unreachable, while the job is
behind on a backlog, or while it restores after a failover. Closing then would turn
what follows away as late. So the quiet pane waits until the job is known to be caught
up: the end offsets of every partition of its topics are taken (the target), and the
pane closes once the job's consumer group has committed offsets at or past them. Flink
commits the group's offsets when a checkpoint completes, after every record before the
checkpoint's barrier has been processed, so "committed past the target" means every
record produced before the target was taken has been through the job. A broker that
cannot be reached gives no target and no answer: the pane waits. The questions are asked
by a thread of the reader's own, never by the operator, so a slow or stalled broker never
stalls the job's processing.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from poolsight.infra.kafka_access import KafkaAccess

Offsets = dict[tuple[str, int], int]
LOG = logging.getLogger(__name__)  # a Python worker's log lands in the TaskManager's


@dataclass(frozen=True)
class ConsumerGroup:
    """Where a job reads: the brokers, its consumer group, its topics, and where a new group
    starts (earliest or latest)."""

    kafka: KafkaAccess
    group: str
    topics: tuple[str, ...]
    start_from: str = "earliest"


class CaughtUp:
    """End offsets and the group's committed offsets, asked by a thread of its own every
    `every` seconds, so the operator never waits on the broker (many pools wait together;
    one answer serves them all). Each answer carries the wall-clock time it was asked."""

    def __init__(self, where: ConsumerGroup, timeout: float = 5.0, every: float = 1.0) -> None:
        self.where = where
        self.timeout = timeout
        self.every = every
        self._consumer: Any = None
        self._failures = 0  # questions in a row without an answer
        self._logged = 0.0  # when a failure was last logged
        self._lock = threading.Lock()
        self._ends: tuple[float, Offsets] | None = None  # (wall time asked, answer)
        self._committed: Offsets | None = None  # the latest answer: committed offsets only grow
        self._baseline: Offsets | None = None  # end offsets at this reader's first answer
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> None:
        """Start asking. A group started at `latest` never reads what is there before its first
        record: that is asked here, before the reader reads anything."""
        if self.where.start_from == "latest":
            self._baseline = self._ask(self._end_offsets)
        self._stop.clear()
        self._thread = threading.Thread(target=self._refresh, name="caught-up", daemon=True)
        self._thread.start()

    def target(self, since: float) -> Offsets | None:
        """The end offset of every partition, as asked at or after wall time `since` (when the
        pool went quiet: a target from before a pause would let its pane close before what was
        held back arrives); None until such an answer exists (the broker away: the pane waits)."""
        with self._lock:
            hit = self._ends
        return dict(hit[1]) if hit is not None and hit[0] >= since else None

    def reached(self, target: Offsets) -> bool:
        """Whether the group has committed at or past `target` on every partition."""
        with self._lock:
            committed = self._committed
        if committed is None:
            return False
        return all(self._committed_past(tp, end, committed) for tp, end in target.items())

    def passed(self, target: Offsets | None, since: float) -> tuple[bool, Offsets | None]:
        """Whether the group has committed everything produced up to some moment at or after wall
        time `since`, with the target to keep for the next ask: `target` if given (kept from an
        earlier ask), else a new one; (False, None) while no answer since then exists."""
        if target is None:
            target = self.target(since)
            if target is None:
                return False, None
        return self.reached(target), target

    def behind(self, target: Offsets) -> dict[str, tuple[int | None, int]]:
        """The partitions the group has not committed up to `target`: "topic/partition" ->
        (committed or None, target), for the log line of a pane that waits."""
        with self._lock:
            committed = self._committed or {}
        return {
            f"{t}/{p}": (committed.get((t, p)), end)
            for (t, p), end in target.items()
            if not self._committed_past((t, p), end, committed)
        }

    def _refresh(self) -> None:
        """The thread's loop. It alone uses the client once started, and lets it go at its end."""
        try:
            while not self._stop.is_set():
                try:
                    self._refresh_once()
                except Exception:  # never die silently: frozen answers would hold panes for ever
                    LOG.exception("caught_up: refreshing the offsets of group %s", self.where.group)
                    self._forget()
                self._stop.wait(self.every)
        finally:
            self._drop_client()

    def _refresh_once(self) -> None:
        asked = time.time()
        ends = self._ask(self._end_offsets)
        committed = self._ask(self._committed_offsets) if ends is not None else None
        if ends is None or committed is None:
            # No answer now: forget the last one, so a pool that goes quiet while the broker is
            # away waits for it instead of closing on offsets from before the outage.
            self._forget()
            return
        with self._lock:
            self._ends = (asked, ends)
            self._committed = committed
            if self._baseline is None and self.where.start_from == "latest":
                self._baseline = ends  # open() could not ask: the first answer instead

    def _forget(self) -> None:
        with self._lock:
            self._ends = None
            self._committed = None

    def _committed_past(self, tp: tuple[str, int], end: int, committed: Offsets) -> bool:
        if tp in committed:
            return committed[tp] >= end
        # Never committed. Flink commits a partition only once it has read from it, so a group
        # started at `latest` leaves one that got nothing new uncommitted: nothing to wait for
        # as long as it holds no more than when this reader first asked.
        return self.where.start_from == "latest" and self._baseline is not None and self._baseline.get(tp, 0) >= end

    def close(self) -> None:
        """Stop asking; the thread lets its client go when its current question ends."""
        self._stop.set()
        if self._thread is None:
            self._drop_client()  # never started: open() alone may have used the client
        elif self._thread is not threading.current_thread():
            self._thread.join(timeout=3 * self.timeout + self.every)
            self._thread = None

    def _drop_client(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    # ------------------------------------------------------------ the broker

    def _ask(self, question: Any) -> Offsets | None:
        try:
            answer: Offsets = question()
        except Exception as exc:  # the broker down or unreachable, a timeout: no answer, the pane waits
            self._failures += 1
            if time.monotonic() - self._logged >= 30:
                self._logged = time.monotonic()
                LOG.warning(
                    "caught_up: %s of group %s: no answer (%d in a row): %s",
                    question.__name__,
                    self.where.group,
                    self._failures,
                    exc,
                )
            # A new client next time. Suspected: one whose broker stalled kept failing after the
            # broker was back (CI: panes never closed after a SIGSTOP, the group's lag at 0).
            self._drop_client()
            return None
        if self._failures:
            LOG.warning("caught_up: group %s answers again after %d failures", self.where.group, self._failures)
            self._failures = 0
        return answer

    def _client(self) -> Any:
        if self._consumer is None:
            # Never subscribes: it only asks for offsets, so it never joins the group.
            self._consumer = Consumer(
                self.where.kafka.client_config(
                    **{
                        "group.id": self.where.group,
                        "enable.auto.commit": False,
                        "socket.timeout.ms": int(self.timeout * 1000),
                    }
                )
            )
        return self._consumer

    def _partitions(self) -> list[Any]:
        meta = self._client().list_topics(timeout=self.timeout)
        out = []
        for name in self.where.topics:
            topic = meta.topics.get(name)
            if topic is None or topic.error is not None:
                raise RuntimeError(f"topic {name}: {getattr(topic, 'error', 'missing')}")
            out += [TopicPartition(name, p) for p in sorted(topic.partitions)]
        return out

    def _end_offsets(self) -> Offsets:
        c = self._client()
        ends: Offsets = {}
        for tp in self._partitions():
            low, high = c.get_watermark_offsets(tp, timeout=self.timeout)
            if high > low:  # an empty partition holds nothing to wait for
                ends[(tp.topic, tp.partition)] = int(high)
        return ends

    def _committed_offsets(self) -> Offsets:
        got = self._client().committed(self._partitions(), timeout=self.timeout)
        out: Offsets = {}
        for tp in got:
            if tp.error is not None:
                raise RuntimeError(f"{tp.topic}/{tp.partition}: {tp.error}")
            if tp.offset >= 0:  # no commit yet: OFFSET_INVALID (< 0), left out
                out[(tp.topic, tp.partition)] = int(tp.offset)
        return out
