"""Long work of a cell on a worker thread, while the cell's main thread draws its progress.

The notebook's stop button raises ``KeyboardInterrupt`` in the main thread, wherever it is. Work
that blocks the main thread inside a library (a ZeroMQ poll, a lock, a tool's wrapper) unwinds
through it: a long traceback, and state left half-done (an execution reported as failed, a tool
call never reported finished). So ``%%ws py`` and ``%ws call`` run their work on a thread that
takes an abort event, and keep the main thread in a loop that only draws (``pump``): a press of
the stop button sets the event, and the loop goes on until the work reports how it ended — the
kernel interrupted, the command killed, the tool call finished as cancelled.

A ``KeyboardInterrupt`` is not safe even in that loop: it lands at any bytecode — in
``Thread.start()`` before the loop is entered, half-way through a ``display()`` whose handle is
then lost (the next update draws a second output). So for the whole of such a magic a
``StopButton`` takes SIGINT: a press is counted, never raised, and the loop reads the count
between two draws.
"""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Generic, TypeVar

__all__ = ["Foreground", "StopButton", "drain", "events_queue", "run_in_foreground"]

T = TypeVar("T")

_POLL = 0.1


class StopButton:
    """SIGINT — the notebook's stop button, Ctrl-C in a terminal — counted while a magic runs.

    ``with StopButton() as stop:`` around everything the magic does once its arguments are
    evaluated (an argument is the user's own Python, which the stop button must still break).
    The handler is put in place of Python's own (``signal.default_int_handler``, which ipykernel
    and IPython install while a cell runs) or of an enclosing ``StopButton``'s, in the main
    thread (the only one that gets signals); any other handler is kept (SIG_IGN: no press can
    come), and whoever catches its ``KeyboardInterrupt`` calls ``press()``. Leaving restores the
    previous handler: a press does not outlive the magic.
    """

    def __init__(self) -> None:
        self.presses = 0
        self._previous: Any = None
        self._installed = False

    def press(self) -> None:
        self.presses += 1

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.presses += 1

    def __enter__(self) -> StopButton:
        if threading.current_thread() is threading.main_thread():
            current = signal.getsignal(signal.SIGINT)
            enclosing = isinstance(getattr(current, "__self__", None), StopButton)
            if current is signal.default_int_handler or enclosing:
                self._previous = signal.signal(signal.SIGINT, self._on_signal)
                self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False


@dataclass(frozen=True)
class Foreground(Generic[T]):
    """How the work ended: its ``value`` or ``error``; ``interrupted`` when stop was pressed;
    ``abandoned`` when it was pressed again and the cell stopped waiting (the work goes on);
    not ``started`` when it was pressed before the work began (then it never did)."""

    value: T | None
    error: BaseException | None
    interrupted: bool
    abandoned: bool
    started: bool = True


def run_in_foreground(
    work: Callable[[threading.Event], T],
    pump: Callable[[float], None],
    *,
    name: str,
    stop: StopButton | None = None,
    abandon_on_second_interrupt: bool = False,
    on_interrupt: Callable[[], None] | None = None,
) -> Foreground[T]:
    """Runs ``work(abort)`` on a thread; the calling (main) thread runs ``pump(timeout)`` until it ends.

    ``stop``: the magic's ``StopButton`` (without one, a button for this call alone). A press
    before the work starts keeps it from starting. The first press while it runs sets ``abort``
    (then calls ``on_interrupt``) and the wait goes on: the work stops and says so. With
    ``abandon_on_second_interrupt``, a second one stops waiting: for work that may not look at
    the event (a tool call), so the notebook is never stuck behind it.
    """
    if stop is None:
        with StopButton() as button:
            return run_in_foreground(
                work,
                pump,
                name=name,
                stop=button,
                abandon_on_second_interrupt=abandon_on_second_interrupt,
                on_interrupt=on_interrupt,
            )
    if stop.presses:
        return Foreground(value=None, error=None, interrupted=True, abandoned=False, started=False)
    abort = threading.Event()
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work(abort)
        except BaseException as exc:  # handed to the main thread, which raises or shows it
            box["error"] = exc

    worker = threading.Thread(target=target, name=name, daemon=True)
    handled: int = 0  # presses acted on (none were made before the work started)
    interrupted = abandoned = False
    try:
        worker.start()
    except KeyboardInterrupt:  # a SIGINT handler the button could not replace; the thread runs
        stop.press()
    while True:
        alive = worker.is_alive()
        while alive and handled < stop.presses and not abandoned:
            handled += 1
            if interrupted and abandon_on_second_interrupt:
                abandoned = True
            else:
                interrupted = True
                abort.set()
                if on_interrupt is not None:
                    on_interrupt()
        if abandoned:
            break
        try:
            pump(_POLL if alive else 0)
        except KeyboardInterrupt:  # likewise
            stop.press()
            continue
        if not alive:
            break
    error = box.get("error")
    return Foreground(
        value=box.get("value"),  # type: ignore[arg-type]
        error=error if isinstance(error, BaseException) else None,
        interrupted=interrupted,
        abandoned=abandoned,
    )


def events_queue() -> queue.Queue[Any]:
    """The queue the work's threads fill and the main thread ``drain``s.

    Not a ``queue.SimpleQueue``: before Python 3.13 its ``get(timeout=...)`` waits forever when
    a signal handler that does not raise (the ``StopButton``'s) runs as the timeout runs out —
    the cell would then wait for an event that the work, never told to stop, does not send.
    ``queue.Queue`` waits on a ``threading.Condition``, which recomputes its timeout.
    """
    return queue.Queue()


def drain(events: queue.Queue[Any], handle: Callable[[Any], None], timeout: float) -> bool:
    """Hands what the work queued to ``handle``, waiting up to ``timeout`` for the first item; False
    when nothing came. Each item leaves the queue only as it is handled, so an interrupt between
    two loses none (the next ``pump`` goes on from there)."""
    try:
        item = events.get(timeout=timeout)
    except queue.Empty:
        return False
    while True:
        handle(item)
        try:
            item = events.get_nowait()
        except queue.Empty:
            return True
