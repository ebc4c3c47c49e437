"""Thread-safe status transitions shared by the workspace and its providers.

Notebook users call ``init()``/``destroy()`` from cells while widgets and agent threads may do the
same; concurrent requests for the same transition must coalesce (run once, everyone waits for
that one run and sees its outcome), and a failed transition must leave a clear status.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection

__all__ = ["Lifecycle"]


class Lifecycle:
    """Holds a status string and runs coalesced transitions between statuses.

    ``transition(target, during, action, allowed_from=...)``:
      * returns at once when the status already is ``target``;
      * waits when another thread runs the same transition, then returns (or re-raises its error);
      * waits for any other running transition to finish first;
      * raises ``refuse(status)`` when the current status is not in ``allowed_from``;
      * otherwise sets ``during``, runs ``action`` (outside the lock), and sets ``target`` — or
        ``error_status`` (re-raising) when the action fails.
    """

    def __init__(self, initial: str) -> None:
        self._status = initial
        self._cond = threading.Condition(threading.RLock())
        self._running: str | None = None
        self._runner: int | None = None
        self._generation = 0
        self._failures: dict[int, BaseException] = {}

    @property
    def status(self) -> str:
        return self._status

    def set(self, status: str) -> None:
        """Force a status (e.g. ``error`` discovered outside a transition)."""
        with self._cond:
            self._status = status
            self._cond.notify_all()

    def transition(
        self,
        target: str,
        during: str,
        action: Callable[[], None],
        *,
        allowed_from: Collection[str],
        refuse: Callable[[str], BaseException],
        error_status: str = "error",
        skip_if: Collection[str] = (),
    ) -> bool:
        """Run one transition; returns True when this call ran ``action``."""
        me = threading.get_ident()
        with self._cond:
            while True:
                if self._status == target or self._status in skip_if:
                    return False
                if self._running is not None:
                    if self._runner == me:
                        # Re-entrant request from inside an action: refuse rather than deadlock.
                        raise refuse(self._status)
                    same = self._running == target
                    generation = self._generation
                    while self._running is not None and self._generation == generation:
                        self._cond.wait()
                    if same:
                        failure = self._failures.get(generation)
                        if failure is not None:
                            raise failure
                        return False
                    continue
                if self._status not in allowed_from:
                    raise refuse(self._status)
                self._running = target
                self._runner = me
                self._status = during
                self._generation += 1
                generation = self._generation
                break
        try:
            action()
        except BaseException as exc:
            with self._cond:
                self._status = error_status
                self._failures = {generation: exc}
                self._running = None
                self._runner = None
                self._cond.notify_all()
            raise
        with self._cond:
            self._status = target
            self._failures = {}
            self._running = None
            self._runner = None
            self._cond.notify_all()
        return True
