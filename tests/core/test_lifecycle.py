"""Coalesced status transitions."""

from __future__ import annotations

import threading
import time

import pytest

from ws_jupyter.lifecycle import Lifecycle


class Refused(Exception):
    pass


def run(lc: Lifecycle, target="ready", action=lambda: None, allowed=("pending", "error")):
    return lc.transition(target, "working", action, allowed_from=allowed, refuse=lambda s: Refused(s))


def test_basic_transition_and_idempotence():
    lc = Lifecycle("pending")
    assert run(lc) is True and lc.status == "ready"
    assert run(lc) is False


def test_refused_from_wrong_status():
    lc = Lifecycle("destroyed")
    with pytest.raises(Refused):
        run(lc)


def test_failure_sets_error_and_waiters_see_it():
    lc = Lifecycle("pending")
    started = threading.Event()

    def failing():
        started.set()
        time.sleep(0.1)
        raise ValueError("nope")

    seen = []

    def waiter():
        started.wait()
        try:
            run(lc)
        except ValueError as exc:
            seen.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    with pytest.raises(ValueError):
        run(lc, action=failing)
    t.join()
    assert lc.status == "error" and len(seen) == 1
    assert run(lc) is True  # retry from error


def test_concurrent_calls_run_action_once():
    lc = Lifecycle("pending")
    count = []

    def slow():
        time.sleep(0.1)
        count.append(1)

    threads = [threading.Thread(target=run, args=(lc, "ready", slow)) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count == [1] and lc.status == "ready"


def test_different_transition_waits_for_running_one():
    lc = Lifecycle("pending")
    order = []

    def slow_init():
        time.sleep(0.1)
        order.append("init")

    t = threading.Thread(target=run, args=(lc, "ready", slow_init))
    t.start()
    time.sleep(0.02)
    run(lc, target="destroyed", action=lambda: order.append("destroy"), allowed=("pending", "ready"))
    t.join()
    assert order == ["init", "destroy"] and lc.status == "destroyed"


def test_reentrant_request_is_refused_not_deadlocked():
    lc = Lifecycle("pending")

    def nested():
        run(lc, target="destroyed", allowed=("ready",))

    with pytest.raises(Refused):
        run(lc, action=nested)
