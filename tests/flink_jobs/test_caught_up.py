"""CaughtUp without a broker to ask: no answer is never "caught up", and the client that got no
answer is dropped so the next question starts on a new one (the stack tests ask a real broker)."""

from __future__ import annotations

import logging
import socket

import pytest

from poolsight.flink_jobs.caught_up import CaughtUp, ConsumerGroup


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again on return: nothing listens there


def test_no_broker_gives_no_target_no_answer_and_a_new_client_each_time(caplog: pytest.LogCaptureFixture) -> None:
    where = ConsumerGroup(f"127.0.0.1:{_closed_port()}", "g", ("t",))
    c = CaughtUp(where, timeout=0.5)
    with caplog.at_level(logging.WARNING, logger="poolsight.flink_jobs.caught_up"):
        assert c.target() is None
        assert c._consumer is None  # dropped after the failure
        assert c.reached({("t", 0): 5}) is False
        assert c._consumer is None
        assert c.target() is None
    assert c._failures == 3
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1 and "_ends of group g: no answer (1 in a row)" in logged[0]  # once per 30 s


def test_a_partition_never_committed_counts_as_read_only_for_a_group_started_at_latest() -> None:
    committed = {("t", 0): 10}
    latest = CaughtUp(ConsumerGroup("unused:1", "g", ("t",), "latest"))
    latest._baseline = {("t", 0): 10, ("t", 1): 7}
    assert latest._committed_past(("t", 1), 7, committed)  # nothing new since the reader started
    assert not latest._committed_past(("t", 1), 8, committed)  # one record came: wait for it
    earliest = CaughtUp(ConsumerGroup("unused:1", "g", ("t",), "earliest"))
    earliest._baseline = {("t", 1): 7}
    assert not earliest._committed_past(("t", 1), 7, committed)
    assert latest._committed_past(("t", 0), 10, committed) and not latest._committed_past(("t", 0), 11, committed)
