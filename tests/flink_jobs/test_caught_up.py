"""CaughtUp without a broker to ask: no answer is never "caught up", the client that got no
answer is dropped so the next question starts on a new one, and the operator never waits
(the stack tests ask a real broker)."""

from __future__ import annotations

import logging
import time

import pytest

from poolsight.flink_jobs.caught_up import CaughtUp, ConsumerGroup
from poolsight.infra.kafka_access import KafkaAccess
from tests.conftest import free_port


def test_no_broker_gives_no_target_and_no_answer_without_blocking(caplog: pytest.LogCaptureFixture) -> None:
    where = ConsumerGroup(KafkaAccess(f"127.0.0.1:{free_port()}"), "g", ("t",))
    c = CaughtUp(where, timeout=0.3, every=0.1)
    with caplog.at_level(logging.WARNING, logger="poolsight.flink_jobs.caught_up"):
        c.open()
        try:
            deadline = time.monotonic() + 10
            while c._failures < 3:
                assert time.monotonic() < deadline
                started = time.monotonic()
                assert c.target(since=0.0) is None
                assert c.reached({("t", 0): 5}) is False
                assert time.monotonic() - started < 0.05  # answered from memory, never from the broker
                time.sleep(0.1)
        finally:
            c.close()
    assert c._consumer is None and c._thread is None
    logged = [r.getMessage() for r in caplog.records]
    assert logged and "_end_offsets of group g: no answer (1 in a row)" in logged[0]
    assert len(logged) == 1  # at most once per 30 s


def test_a_refresh_without_an_answer_forgets_the_last_one() -> None:
    """A pool that goes quiet while the broker is away must wait, not close on offsets from before."""
    c = CaughtUp(ConsumerGroup(KafkaAccess(f"127.0.0.1:{free_port()}"), "g", ("t",)), timeout=0.3)
    c._ends, c._committed = (time.time(), {("t", 0): 7}), {("t", 0): 7}
    assert c.target(since=0.0) is not None and c.reached({("t", 0): 7})
    c._refresh_once()
    assert c.target(since=0.0) is None and not c.reached({("t", 0): 7})
    c.close()
    assert c._consumer is None


def test_a_target_must_have_been_asked_after_the_pool_went_quiet() -> None:
    c = CaughtUp(ConsumerGroup(KafkaAccess("unused:1"), "g", ("t",)))
    c._ends = (100.0, {("t", 0): 7})
    assert c.target(since=99.0) == {("t", 0): 7}
    assert c.target(since=100.5) is None  # asked before the pool's last record: wait for a newer answer
    assert c.reached({("t", 0): 7}) is False  # no committed answer yet
    c._committed = {("t", 0): 7}
    assert c.reached({("t", 0): 7}) and not c.reached({("t", 0): 8})


def test_a_partition_never_committed_counts_as_read_only_for_a_group_started_at_latest() -> None:
    committed = {("t", 0): 10}
    latest = CaughtUp(ConsumerGroup(KafkaAccess("unused:1"), "g", ("t",), "latest"))
    latest._baseline = {("t", 0): 10, ("t", 1): 7}
    assert latest._committed_past(("t", 1), 7, committed)  # nothing new since the reader started
    assert not latest._committed_past(("t", 1), 8, committed)  # one record came: wait for it
    earliest = CaughtUp(ConsumerGroup(KafkaAccess("unused:1"), "g", ("t",), "earliest"))
    earliest._baseline = {("t", 1): 7}
    assert not earliest._committed_past(("t", 1), 7, committed)
    assert latest._committed_past(("t", 0), 10, committed) and not latest._committed_past(("t", 0), 11, committed)


def test_passed_keeps_the_target_it_was_given_or_asks_for_one_after_since() -> None:
    """A kept target is judged as it is (the later answer's higher end offsets do not move it);
    without one, only an answer asked at or after `since` gives one, and none yet is not passed."""
    c = CaughtUp(ConsumerGroup(KafkaAccess("unused:1"), "g", ("t",)))
    assert c.passed(None, since=0.0) == (False, None)  # no answer yet
    c._ends, c._committed = (100.0, {("t", 0): 9}), {("t", 0): 7}
    assert c.passed(None, since=100.5) == (False, None)  # asked before `since`: no target
    assert c.passed(None, since=99.0) == (False, {("t", 0): 9})  # a target, not reached
    assert c.passed({("t", 0): 7}, since=100.5) == (True, {("t", 0): 7})  # the kept one, reached
    c._committed = {("t", 0): 9}
    assert c.passed({("t", 0): 9}, since=0.0) == (True, {("t", 0): 9})
