"""``TurnLock``: a lock handed out in arrival order, with a way to jump the queue.

Executions on one kernel must run one at a time *in the order they were asked for* (an agent
that fires two calls expects them to run as sent); ``threading.Lock`` promises no order.
Restart and shutdown must not wait behind queued executions: they take the next turn.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque

__all__ = ["TurnLock"]


class TurnLock:
    """FIFO mutual exclusion; ``acquire(urgent=True)`` is served before every waiting normal turn."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._queue: deque[int] = deque()
        self._urgent: deque[int] = deque()
        self._tickets = itertools.count()

    def acquire(self, *, urgent: bool = False, timeout: float | None = None) -> bool:
        ticket = next(self._tickets)
        line = self._urgent if urgent else self._queue
        with self._cond:
            line.append(ticket)
            try:
                ok = self._cond.wait_for(lambda: not self._held and self._next() == ticket, timeout)
            except BaseException:
                line.remove(ticket)
                self._cond.notify_all()
                raise
            if not ok:
                line.remove(ticket)
                self._cond.notify_all()
                return False
            line.popleft()
            self._held = True
            return True

    def _next(self) -> int | None:
        if self._urgent:
            return self._urgent[0]
        return self._queue[0] if self._queue else None

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    @property
    def waiting(self) -> int:
        """How many turns are queued (not counting the holder)."""
        with self._cond:
            return len(self._queue) + len(self._urgent)

    @property
    def held(self) -> bool:
        return self._held

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
