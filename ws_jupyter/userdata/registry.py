"""Which workspace sees which user namespace.

A workspace knows nothing of notebooks: the ``%ws`` extension (or ``Workspace.share``) attaches a
:class:`~.shares.SharedNamespace` here, and ``Workspace.tools()`` lists the ``user_variable_*``
tools while one is attached. A weak mapping: a namespace never keeps a destroyed workspace alive.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from .shares import SharedNamespace

__all__ = ["attach", "detach", "shared_namespace"]

_lock = threading.Lock()
_spaces: weakref.WeakKeyDictionary[Any, SharedNamespace] = weakref.WeakKeyDictionary()


def attach(workspace: Any, shared: SharedNamespace) -> SharedNamespace:
    """Makes ``shared`` what ``workspace``'s tools see (replacing another); returns it."""
    if not isinstance(shared, SharedNamespace):
        raise TypeError(f"attach() needs a SharedNamespace, not {type(shared).__name__}")
    with _lock:
        _spaces[workspace] = shared
    return shared


def detach(workspace: Any) -> None:
    with _lock:
        _spaces.pop(workspace, None)


def shared_namespace(workspace: Any, *, create: bool = False) -> SharedNamespace | None:
    """The namespace attached to ``workspace`` (a new, empty one when ``create``), or None."""
    with _lock:
        found = _spaces.get(workspace)
        if found is None and create:
            found = _spaces[workspace] = SharedNamespace()
        return found
