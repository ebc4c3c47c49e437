"""Which workspace reaches which open notebook.

The ``%ws`` extension in a notebook's kernel attaches its :class:`~ws_jupyter.live.FrontEndLink`
to the session workspace (``%ws init``, ``%ws use``); ``Workspace.tools()`` then lists the
``open_notebook_*`` tools while a page is connected. Any other :class:`LiveNotebook` can be
attached the same way. Kept apart from the workspace (a weak mapping) so a workspace knows
nothing of front ends and a link never keeps a destroyed workspace alive.
"""

from __future__ import annotations

from typing import Any

from .._per_workspace import PerWorkspace
from .protocol import LiveNotebook

__all__ = ["attach", "detach", "live_notebook"]

_links: PerWorkspace[LiveNotebook] = PerWorkspace()


def attach(workspace: Any, link: LiveNotebook) -> None:
    """Makes ``link`` the open notebook ``workspace``'s tools reach (replacing another)."""
    if not isinstance(link, LiveNotebook):
        raise TypeError(f"attach() needs a LiveNotebook, not {type(link).__name__}")
    _links.set(workspace, link)


def detach(workspace: Any, link: LiveNotebook | None = None) -> None:
    """Forgets ``workspace``'s link (only ``link``, when given)."""
    _links.discard(workspace, link)


def live_notebook(workspace: Any) -> LiveNotebook | None:
    """The open notebook attached to ``workspace``, or None."""
    return _links.get(workspace)
