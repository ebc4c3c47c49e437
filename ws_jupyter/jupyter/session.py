"""What the extension owns inside one IPython shell: the session workspace and the live parts.

``%ws init`` creates a workspace the session *owns* (destroyed when it is replaced or the extension
is unloaded: its background processes die, its files stay). ``%ws use VAR`` adopts a workspace the
user built; the session never destroys one it did not create. Widgets and background watchers
register a ``close`` callable here so ``%unload_ext ws_jupyter`` stops every thread it started.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..workspace import Workspace

__all__ = ["WsSession"]


class WsSession:
    """The session workspace plus everything to stop on unload."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._workspace: Workspace | None = None
        self._owned = False
        self._closers: list[Callable[[], Any]] = []
        self._listeners: list[Callable[[Any, Any], Any]] = []
        #: the live link to the notebook's page (``ws_jupyter.jupyter.live``), when in a kernel
        self.live: Any = None

    @property
    def workspace(self) -> Workspace | None:
        return self._workspace

    @property
    def owned(self) -> bool:
        """True when the session created the workspace (and so destroys it)."""
        return self._owned

    def set_workspace(self, workspace: Workspace, *, owned: bool) -> None:
        """Makes ``workspace`` the session workspace, destroying a previous one the session owned."""
        with self._lock:
            previous, previous_owned = self._workspace, self._owned
            if previous is workspace:
                owned = owned or previous_owned  # `%ws use ws` on the session's own workspace
            self._workspace, self._owned = workspace, owned
        if previous is not workspace:
            self._changed(previous, workspace)
        if previous is not None and previous is not workspace and previous_owned:
            previous.destroy()

    def on_change(self, listener: Callable[[Any, Any], Any]) -> None:
        """Calls ``listener(previous, current)`` whenever the session workspace changes."""
        with self._lock:
            self._listeners.append(listener)

    def _changed(self, previous: Any, current: Any) -> None:
        for listener in list(self._listeners):
            try:
                listener(previous, current)
            except Exception:
                pass  # a listener must not stop the workspace from changing

    def require(self) -> Workspace:
        """The session workspace, or a one-line ``UsageError`` saying how to get one."""
        ws = self._workspace
        if ws is None:
            raise UsageError(
                "No workspace yet: run `%ws init [DIR]` to create one, or `%ws use VAR` to adopt a Workspace"
            )
        return ws

    def track(self, close: Callable[[], Any]) -> Callable[[], Any]:
        """Registers something to stop on unload; returns ``close`` for chaining."""
        with self._lock:
            self._closers.append(close)
        return close

    def untrack(self, close: Callable[[], Any]) -> None:
        with self._lock:
            try:
                self._closers.remove(close)
            except ValueError:
                pass

    def close(self) -> None:
        """Stops tracked widgets/threads (newest first), then destroys an owned workspace."""
        with self._lock:
            closers, self._closers = self._closers[::-1], []
            ws, owned = self._workspace, self._owned
            self._workspace, self._owned = None, False
        for close in closers:
            try:
                close()
            except Exception:
                pass  # one broken widget must not keep the others (or the processes) alive
        if ws is not None:
            self._changed(ws, None)
        if ws is not None and owned:
            ws.destroy()
