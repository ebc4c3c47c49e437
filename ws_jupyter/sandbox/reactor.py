"""One I/O thread per process manager: reads every pipe, notices exits, runs timers.

A thread per stream would mean 300 threads for 100 background processes; one ``selectors``
loop (epoll on Linux) serves them all, and exits are seen through pidfds, which become readable
when a process dies *without reaping it* — so the tree can still be cleaned up while the pid
cannot be reused. Where pidfds are missing (macOS, old kernels) a small waiter thread per process
takes their place.

Everything that touches the selector or the timer heap runs on the loop thread (``call_soon``),
so no locking is needed around them.

A foreground command does not need a background thread at all: ``Reactor(threaded=False)`` is
driven by the waiting caller itself (``run_until``), which saves two thread hand-offs per command
— most of the overhead on a busy two-core machine.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
import selectors
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Reactor", "TimerHandle"]

log = logging.getLogger(__name__)
T = TypeVar("T")


def _nothing() -> None:
    pass


class TimerHandle:
    """Returned by ``call_later``; ``cancel()`` is safe from any thread."""

    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        # A cancelled timer stays in the heap until it is due (an hour for a long timeout): it
        # must not keep its callback, and what that holds (a process with its output), alive.
        self.cancelled = True
        self.callback = _nothing


class Reactor:
    """A selector loop: on its own daemon thread (started on first use), or driven inline.

    ``close()`` stops it; calls scheduled afterwards raise ``RuntimeError``.
    """

    def __init__(self, name: str = "ws-sandbox-io", *, threaded: bool = True) -> None:
        self._name = name
        self._threaded = threaded
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._calls: deque[Callable[[], None]] = deque()
        self._timers: list[tuple[float, int, TimerHandle]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    # --- scheduling (any thread) ------------------------------------------------------------

    def in_loop(self) -> bool:
        return threading.current_thread() is self._thread

    def call_soon(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("reactor closed")
            self._calls.append(fn)
            if self._thread is None and self._threaded:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        self._wake()

    def call_later(self, delay: float, fn: Callable[[], None]) -> TimerHandle:
        handle = TimerHandle(time.monotonic() + max(0.0, delay), fn)
        if self.in_loop():
            heapq.heappush(self._timers, (handle.when, next(self._seq), handle))
        else:
            self.call_soon(lambda: heapq.heappush(self._timers, (handle.when, next(self._seq), handle)))
        return handle

    def run_sync(self, fn: Callable[[], T]) -> T:
        """Runs ``fn`` on the loop thread and returns its result (or raises its exception)."""
        if self.in_loop():
            return fn()
        done = threading.Event()
        box: list[Any] = [None, None]

        def call() -> None:
            try:
                box[0] = fn()
            except BaseException as exc:
                box[1] = exc
            finally:
                done.set()

        self.call_soon(call)
        done.wait()
        if box[1] is not None:
            raise box[1]
        return box[0]

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"\0")

    # --- loop-thread only ---------------------------------------------------------------------

    def add_reader(self, fd: int, callback: Callable[[], None]) -> None:
        self._sel.register(fd, selectors.EVENT_READ, callback)

    def remove_reader(self, fd: int) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._sel.unregister(fd)

    def _run(self) -> None:
        while not self._run_once(None):
            pass
        self._release()

    def run_until(
        self,
        predicate: Callable[[], bool],
        timeout: float | None = None,
        setup: Callable[[], None] | None = None,
    ) -> bool:
        """Inline mode: drive the loop in this thread until ``predicate()`` (or ``timeout``).

        ``setup`` runs first, already inside the loop (so it can add readers and timers directly).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self._thread = threading.current_thread()
        try:
            if setup is not None:
                setup()
            while not predicate():
                limit = None if deadline is None else deadline - time.monotonic()
                if limit is not None and limit <= 0:
                    return False
                if self._run_once(limit):
                    break
            return predicate()
        finally:
            self._thread = None

    def _run_once(self, max_wait: float | None) -> bool:
        """One iteration: wait for I/O (or a timer), dispatch, run queued calls. True when closed."""
        timeout = max_wait
        if self._timers:
            until_timer = max(0.0, self._timers[0][0] - time.monotonic())
            timeout = until_timer if timeout is None else min(timeout, until_timer)
        if self._calls:
            timeout = 0.0
        try:
            events = self._sel.select(timeout)
        except OSError:  # pragma: no cover - EBADF after a concurrent close
            events = []
        for key, _mask in events:
            if key.data is None:
                with contextlib.suppress(BlockingIOError, OSError):
                    while os.read(self._wake_r, 4096):
                        pass
                continue
            self._guarded(key.data)
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            _when, _seq, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                self._guarded(timer.callback)
        while True:
            with self._lock:
                if not self._calls:
                    return self._closed
                fn = self._calls.popleft()
            self._guarded(fn)

    def _release(self) -> None:
        self._sel.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    @staticmethod
    def _guarded(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:  # a failing callback must not stop the output of every other process
            log.exception("error in sandbox I/O callback")

    def close(self, timeout: float = 5.0) -> None:
        """Stops the loop after the calls already queued; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is None or not self._threaded:
            # Inline loop (or thread never started): run what was queued before the close, e.g.
            # a late subscriber's replay, on the closing thread.
            while True:
                with self._lock:
                    if not self._calls:
                        break
                    fn = self._calls.popleft()
                self._guarded(fn)
            self._release()
            return
        self._wake()
        if thread is not threading.current_thread():
            thread.join(timeout)
