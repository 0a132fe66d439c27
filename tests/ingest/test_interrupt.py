"""Ctrl-C inside a deferred block is raised after it, not inside it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from poolsight.ingest.interrupt import deferred_interrupt


def test_an_interrupt_inside_is_raised_after_the_block() -> None:
    finished = False
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler has run by now: it did not raise here
                pass
            finished = True
    assert finished
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_no_interrupt_no_exception_and_the_handler_is_restored() -> None:
    with deferred_interrupt():
        value = 1
    assert value == 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_custom_handler_is_left_alone() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda s, _f: seen.append(s))
    try:
        with deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_it_is_a_plain_block() -> None:
    ran: list[bool] = []

    def work() -> None:
        with deferred_interrupt():
            ran.append(True)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert ran == [True]
