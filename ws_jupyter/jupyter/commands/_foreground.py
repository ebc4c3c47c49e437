"""Long work of a cell on a worker thread, while the cell's main thread draws its progress.

The notebook's stop button raises ``KeyboardInterrupt`` in the main thread, wherever it is. Work
that blocks the main thread inside a library (a ZeroMQ poll, a lock, a tool's wrapper) unwinds
through it: a long traceback, and state left half-done (an execution reported as failed, a tool
call never reported finished). So ``%%ws py`` and ``%ws call`` run their work on a thread that
takes an abort event, and keep the main thread in a loop that only draws (``pump``): the
interrupt lands in that loop, sets the event, and the loop goes on until the work reports how it
ended — the kernel interrupted, the command killed, the tool call finished as cancelled.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Foreground", "drain", "run_in_foreground"]

T = TypeVar("T")

_POLL = 0.1


@dataclass(frozen=True)
class Foreground(Generic[T]):
    """How the work ended: its ``value`` or ``error``; ``interrupted`` when stop was pressed;
    ``abandoned`` when it was pressed again and the cell stopped waiting (the work goes on)."""

    value: T | None
    error: BaseException | None
    interrupted: bool
    abandoned: bool


def run_in_foreground(
    work: Callable[[threading.Event], T],
    pump: Callable[[float], None],
    *,
    name: str,
    abandon_on_second_interrupt: bool = False,
    on_interrupt: Callable[[], None] | None = None,
) -> Foreground[T]:
    """Runs ``work(abort)`` on a thread; the calling (main) thread runs ``pump(timeout)`` until it ends.

    The first interrupt sets ``abort`` (then calls ``on_interrupt``) and the wait goes on: the
    work stops and says so. With ``abandon_on_second_interrupt``, a second one stops waiting: for
    work that may not look at the event (a tool call), so the notebook is never stuck behind it.
    """
    abort = threading.Event()
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work(abort)
        except BaseException as exc:  # handed to the main thread, which raises or shows it
            box["error"] = exc

    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    interrupted = abandoned = False
    while True:
        try:
            while worker.is_alive():
                pump(_POLL)
            pump(0)
            break
        except KeyboardInterrupt:
            if interrupted and abandon_on_second_interrupt:
                abandoned = True
                break
            interrupted = True
            abort.set()
            if on_interrupt is not None:
                on_interrupt()
    error = box.get("error")
    return Foreground(
        value=box.get("value"),  # type: ignore[arg-type]
        error=error if isinstance(error, BaseException) else None,
        interrupted=interrupted,
        abandoned=abandoned,
    )


def drain(events: queue.SimpleQueue[Any], handle: Callable[[Any], None], timeout: float) -> bool:
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
