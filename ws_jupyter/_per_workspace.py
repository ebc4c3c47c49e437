"""Values that other rooms attach to a workspace without the workspace knowing of them.

The tools' activity feed, read records and jobs, the notebook user's shared variables and the
link to an open notebook all live beside a workspace rather than in it: a lower floor never has
to import the room that keeps them. The mapping is weak, so nothing kept here holds a destroyed
workspace alive, and thread-safe, so the first two callers on two threads get the same value.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["PerWorkspace"]

T = TypeVar("T")


class PerWorkspace(Generic[T]):
    """One value of type ``T`` per workspace (weakly keyed, behind one lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()

    def get(self, workspace: Any) -> T | None:
        with self._lock:
            return self._values.get(workspace)

    def get_or_make(self, workspace: Any, make: Callable[[], T]) -> T:
        """The value of ``workspace``, made by ``make()`` on first use (once, under the lock)."""
        with self._lock:
            value = self._values.get(workspace)
            if value is None:
                value = self._values[workspace] = make()
            return value

    def set(self, workspace: Any, value: T) -> None:
        with self._lock:
            self._values[workspace] = value

    def discard(self, workspace: Any, value: T | None = None) -> None:
        """Forgets ``workspace``'s value (only when it is ``value``, when that is given)."""
        with self._lock:
            if value is None or self._values.get(workspace) is value:
                self._values.pop(workspace, None)
