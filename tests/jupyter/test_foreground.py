"""``run_in_foreground``: the stop button (SIGINT in the main thread) stops the work, not the wait.

The stop button reaches a running cell as SIGINT with Python's handler installed (ipykernel
installs it while a cell runs); a test process started as a background job may have SIGINT
ignored, so the tests install the handler as the kernel does.
"""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ws_jupyter.jupyter.commands._foreground import StopButton, drain, events_queue, run_in_foreground
from ws_jupyter.jupyter.commands._stream import CellStream
from ws_jupyter.jupyter.commands.py import NativeOutput


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


def _press() -> None:
    """A real SIGINT to this process; its handler runs in the main thread at the next bytecode."""
    os.kill(os.getpid(), signal.SIGINT)


def test_a_press_never_lands_in_the_middle_of_a_draw() -> None:
    # a KeyboardInterrupt half-way through a draw loses what the draw did (a display's handle)
    steps: list[str] = []

    def pump(timeout: float) -> None:
        steps.append("draw")
        if steps.count("draw") == 3:
            _press()
        sum(range(10_000))  # bytecodes for the signal's handler to run between
        steps.append("drawn")
        time.sleep(timeout)

    done = run_in_foreground(
        lambda abort: "stopped" if abort.wait(30) else "ran out", pump, name="test-foreground"
    )
    assert (done.value, done.error, done.interrupted, done.started) == ("stopped", None, True, True)
    assert steps == ["draw", "drawn"] * (len(steps) // 2)


def test_a_press_before_the_work_starts_keeps_it_from_starting_and_one_after_it_ended_is_ignored() -> None:
    ran: list[bool] = []
    with StopButton() as stop:
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        _press()  # during the magic's setup
        sum(range(10_000))
        done = run_in_foreground(
            lambda abort: ran.append(True), time.sleep, name="test-foreground", stop=stop
        )
        assert not done.started and done.interrupted and done.value is None and ran == []
    with StopButton() as stop:
        done = run_in_foreground(lambda abort: "done", time.sleep, name="test-foreground", stop=stop)
        _press()  # while the cell draws the result
        sum(range(10_000))
        assert (done.value, done.interrupted, stop.presses) == ("done", False, 1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the magic's end restores it
    with pytest.raises(KeyboardInterrupt):
        _press()
        sum(range(10_000))


def test_a_button_keeps_a_handler_it_does_not_know_and_counts_the_interrupts_it_raises() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with StopButton():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    raised: list[int] = []

    def handler(signum: int, frame: object) -> None:
        raised.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    _interrupt_after(0.3)
    done = run_in_foreground(
        lambda abort: "stopped" if abort.wait(30) else "ran out", time.sleep, name="test-foreground"
    )
    assert (done.value, done.interrupted, raised) == ("stopped", True, [signal.SIGINT])


@pytest.mark.parametrize("make", [events_queue, lambda: NativeOutput().queue, lambda: CellStream().queue])
def test_a_signal_handled_as_the_wait_for_events_times_out_does_not_make_it_unbounded(make: Any) -> None:
    # Before Python 3.13 queue.SimpleQueue.get(timeout=...) waited forever when a handler that does
    # not raise ran after the timeout had run out (a loaded kernel: the GIL came back late; here: a
    # slow handler). The cell then waited for events that the work, never told to stop, did not send.
    events = make()
    rescue = threading.Timer(5, lambda: events.put("rescue"))
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: time.sleep(0.05))
    main = threading.main_thread().ident
    assert main is not None
    threading.Timer(0.2, lambda: signal.pthread_kill(main, signal.SIGUSR1)).start()
    rescue.start()
    try:
        waits = []
        started = time.monotonic()
        while time.monotonic() - started < 1:
            begun = time.monotonic()
            drain(events, lambda item: None, 0.01)
            waits.append(time.monotonic() - begun)
        assert max(waits) < 0.5, max(waits)
    finally:
        rescue.cancel()
        signal.signal(signal.SIGUSR1, previous)
