"""Which workspace sees which user namespace.

A workspace knows nothing of notebooks: the ``%ws`` extension (or ``Workspace.share``) attaches a
:class:`~.shares.SharedNamespace` here, and ``Workspace.tools()`` lists the ``user_variable_*``
tools while one is attached. A weak mapping: a namespace never keeps a destroyed workspace alive.
"""

from __future__ import annotations

from typing import Any

from .._per_workspace import PerWorkspace
from .shares import SharedNamespace

__all__ = ["attach", "detach", "shared_namespace"]

_spaces: PerWorkspace[SharedNamespace] = PerWorkspace()


def attach(workspace: Any, shared: SharedNamespace) -> SharedNamespace:
    """Makes ``shared`` what ``workspace``'s tools see (replacing another); returns it."""
    if not isinstance(shared, SharedNamespace):
        raise TypeError(f"attach() needs a SharedNamespace, not {type(shared).__name__}")
    _spaces.set(workspace, shared)
    return shared


def detach(workspace: Any) -> None:
    _spaces.discard(workspace)


def shared_namespace(workspace: Any, *, create: bool = False) -> SharedNamespace | None:
    """The namespace attached to ``workspace`` (a new, empty one when ``create``), or None."""
    if create:
        return _spaces.get_or_make(workspace, SharedNamespace)
    return _spaces.get(workspace)
