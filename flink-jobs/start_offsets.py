"""Where a job started at `latest` begins, pinned before it runs.

The jobs read with `scan.startup.mode = group-offsets`: a partition starts at the consumer
group's committed offset, and one the group never committed starts where
`auto.offset.reset` says. Flink commits a partition only once the job has read from it, and a
checkpoint taken before that stores no offset for it, only "the group's". So a job started
at `latest` that is restored before it read a partition (a JobManager killed seconds after
the submission, a cancel and a resubmission) asks for `latest` again there, and what was
produced in between is never read (seen in the chaos test: a whole trial's stream lost).
Committing each such partition's end offset before the first run makes `latest` mean the
end at submission, whatever restores follow.
"""

from __future__ import annotations

from collections.abc import Sequence

from confluent_kafka import Consumer, TopicPartition

from poolsight.infra.kafka_access import KafkaAccess

Offsets = dict[tuple[str, int], int]


def pin_latest(kafka: KafkaAccess, group: str, topics: Sequence[str], timeout: float = 10.0) -> Offsets:
    """Commit, for `group`, the end offset of every partition of `topics` it has no commit
    for; return what was committed (nothing for a group that has read them all before). It
    never joins the group (no subscription): a running job of the group is not disturbed."""
    c = Consumer(kafka.client_config(**{"group.id": group, "enable.auto.commit": False}))
    try:
        meta = c.list_topics(timeout=timeout)
        partitions = []
        for name in topics:
            topic = meta.topics.get(name)
            if topic is None or topic.error is not None:
                raise RuntimeError(f"pinning group {group}: topic {name}: {getattr(topic, 'error', 'missing')}")
            partitions += [TopicPartition(name, p) for p in sorted(topic.partitions)]
        committed = c.committed(partitions, timeout=timeout)
        for tp in committed:
            if tp.error is not None:
                raise RuntimeError(f"pinning group {group}: {tp.topic}/{tp.partition}: {tp.error}")
        missing = [tp for tp in committed if tp.offset < 0]  # OFFSET_INVALID: never committed
        pins = [
            TopicPartition(tp.topic, tp.partition, c.get_watermark_offsets(tp, timeout=timeout)[1]) for tp in missing
        ]
        if pins:
            for tp in c.commit(offsets=pins, asynchronous=False) or []:
                if tp.error is not None:
                    raise RuntimeError(f"pinning group {group}: {tp.topic}/{tp.partition}: {tp.error}")
        return {(tp.topic, tp.partition): int(tp.offset) for tp in pins}
    finally:
        c.close()
