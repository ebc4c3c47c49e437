"""Updating widgets from background threads, safely and at a bounded rate.

Process output arrives on the sandbox's I/O thread, possibly thousands of lines a second. Sending
a widget update per chunk would flood the front-end and the kernel's IOPub channel, and doing
anything slow on the I/O thread would stall every process. So producers only record what changed
(``Throttle.request()``, a few microseconds) and one shared scheduler thread renders each widget
at most once per interval (``WsMagics.update_interval``, never faster than 10 times a second).

Widgets only change their traitlets from that thread; ipywidgets turns those changes into comm
messages, which ipykernel 7 routes by comm id — unlike ``print`` or ``with output:`` from a
thread, which depend on the parent header of whichever cell happens to be running.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_INTERVAL", "TextTail", "Throttle", "on_enter"]

log = logging.getLogger(__name__)

#: Never more than 10 updates a second per widget.
MIN_INTERVAL = 0.1


class _Scheduler:
    """One daemon thread running due callbacks in time order."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def call_at(self, when: float, fn: Callable[[], None]) -> None:
        with self._cond:
            heapq.heappush(self._heap, (when, next(self._seq), fn))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="ws-jupyter-widgets", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                when, _, fn = self._heap[0]
                delay = when - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
            try:
                fn()
            except Exception:  # a broken render must not stop the other widgets
                log.exception("ws-jupyter widget update failed")


_scheduler = _Scheduler()


class Throttle:
    """Runs ``fn`` at most once per ``interval`` seconds, after any number of ``request()`` calls.

    The first request after a quiet period is served at once (on the scheduler thread); later
    ones are coalesced into one call at the end of the interval. ``flush()`` runs ``fn`` now in
    the caller's thread (tests, and a final render when a process exits).
    """

    def __init__(self, fn: Callable[[], None], interval: float = 0.2) -> None:
        self._fn = fn
        self.interval = max(MIN_INTERVAL, float(interval))
        self._lock = threading.Lock()
        self._scheduled = False
        self._polling = False
        self._last = 0.0
        self._closed = False
        self.calls = 0  # how many renders ran (tests check the rate)

    def request(self) -> None:
        with self._lock:
            if self._scheduled or self._closed:
                return
            self._scheduled = True
            when = max(time.monotonic(), self._last + self.interval)
        _scheduler.call_at(when, self._fire)

    def request_after(self, delay: float) -> None:
        """One :meth:`request` ``delay`` seconds from now (a widget polling what sends no events);
        asking again while one waits adds none."""
        with self._lock:
            if self._polling or self._closed:
                return
            self._polling = True
        _scheduler.call_at(time.monotonic() + delay, self._poll)

    def _poll(self) -> None:
        with self._lock:
            self._polling = False
        self.request()

    def _fire(self) -> None:
        with self._lock:
            if self._closed:
                self._scheduled = False
                return
            self._scheduled = False
            self._last = time.monotonic()
        self._call()

    def flush(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._last = time.monotonic()
        self._call()

    def _call(self) -> None:
        self.calls += 1
        self._fn()

    def close(self) -> None:
        with self._lock:
            self._closed = True


class TextTail:
    """The newest ``max_chars`` of a stream of text chunks (thread-safe), with a version counter."""

    def __init__(self, max_chars: int = 64_000) -> None:
        self.max_chars = max_chars
        self._chunks: deque[tuple[str, str]] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self.version = 0
        self.dropped = 0
        self.total = 0

    def append(self, stream: str, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._chunks.append((stream, text))
            self._size += len(text)
            self.total += len(text)
            while self._size > self.max_chars and self._chunks:
                kind, first = self._chunks[0]
                excess = self._size - self.max_chars
                if len(first) <= excess:
                    self._chunks.popleft()
                    self._size -= len(first)
                    self.dropped += len(first)
                else:
                    self._chunks[0] = (kind, first[excess:])
                    self._size -= excess
                    self.dropped += excess
            self.version += 1

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._size = 0
            self.version += 1

    def parts(self) -> list[tuple[str, str]]:
        """``[(stream, text), ...]`` in arrival order (adjacent chunks of one stream merged)."""
        with self._lock:
            chunks = list(self._chunks)
        merged: list[tuple[str, list[str]]] = []
        for stream, text in chunks:
            if merged and merged[-1][0] == stream:
                merged[-1][1].append(text)
            else:
                merged.append((stream, [text]))
        return [(stream, "".join(texts)) for stream, texts in merged]

    def text(self) -> str:
        return "".join(t for _, t in self.parts())


def on_enter(text: Any, callback: Callable[[], Any]) -> None:
    """Calls ``callback`` when Enter is pressed in a ``Text`` widget.

    ipywidgets 8 deprecates ``on_submit`` in favour of ``continuous_update=False``, but that also
    fires when the box merely loses focus — for a command box that would run a half-typed command
    when the user clicks elsewhere. ``on_submit`` is the only Enter-only event, so it is used with
    its deprecation warning silenced.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        text.on_submit(lambda _: callback())
