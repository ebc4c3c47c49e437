"""``run_in_foreground``: the stop button (SIGINT in the main thread) stops the work, not the wait.

The stop button reaches a running cell as SIGINT with Python's handler installed (ipykernel
installs it while a cell runs); a test process started as a background job may have SIGINT
ignored, so the tests install the handler as the kernel does.
"""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from ws_jupyter.jupyter.commands._foreground import run_in_foreground


@pytest.fixture(autouse=True)
def sigint_handler() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_after(*delays: float) -> None:
    def press() -> None:
        for delay in delays:
            time.sleep(delay)
            _thread.interrupt_main()

    threading.Thread(target=press, daemon=True).start()


def test_an_interrupt_sets_the_abort_event_and_the_work_reports_how_it_ended() -> None:
    pumped: list[float] = []
    told: list[bool] = []
    _interrupt_after(0.3)
    done = run_in_foreground(
        lambda abort: "stopped" if abort.wait(30) else "ran out",
        lambda timeout: (pumped.append(timeout), time.sleep(timeout)),
        name="test-foreground",
        on_interrupt=lambda: told.append(True),
    )
    assert (done.value, done.error, done.interrupted, done.abandoned) == ("stopped", None, True, False)
    assert told == [True] and len(pumped) >= 2  # the main thread drew until the work ended


def test_a_second_interrupt_stops_waiting_for_work_that_ignores_the_event() -> None:
    finished = threading.Event()

    def stubborn(abort: threading.Event) -> str:
        time.sleep(3)
        finished.set()
        return "late"

    _interrupt_after(0.2, 0.2)
    started = time.monotonic()
    done = run_in_foreground(stubborn, time.sleep, name="test-foreground", abandon_on_second_interrupt=True)
    assert done.interrupted and done.abandoned and done.value is None
    assert time.monotonic() - started < 2.5 and not finished.is_set()  # the cell did not wait for it


def test_errors_of_the_work_are_handed_back() -> None:
    def broken(abort: threading.Event) -> None:
        raise ValueError("broken")

    done = run_in_foreground(broken, time.sleep, name="test-foreground")
    assert isinstance(done.error, ValueError) and not done.interrupted
