"""The live link's channel in a Jupyter kernel: a comm between the ``%ws`` extension and the page.

The kernel opens the comm (``ws_jupyter.live``): a ``comm_open`` travels on IOPub, which the kernel
publishes from any thread, so it reaches the page even while a cell runs. The ws-jupyter JupyterLab
extension accepts it and answers through a *kernel subshell* (ipykernel 7 and JupyterLab 4.4+):
its messages are handled in the subshell's own thread, so they arrive while the main thread runs
a cell — an agent loop waiting in a cell for the page's answer gets it. A kernel without subshells
takes page messages only between cells; the link then says so instead of waiting forever.

ipykernel 7 routes a page's answer on a comm to the subshell that last *sent* on that comm (for
widgets that reply to their own requests); sends from the main thread would so route the page's
answers to the busy main shell. This channel keeps the subshell the page chose
(``_reply_subshell_for``).

:func:`start` makes the link when the extension loads in a kernel, attaches it to the session's
workspace (``%ws init`` / ``%ws use``), and the session's close stops it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..live.link import FrontEndLink
from ..live.registry import attach, detach

if TYPE_CHECKING:
    from .session import WsSession

__all__ = ["TARGET", "CommTransport", "link_of_session", "start"]

TARGET = "ws_jupyter.live"
_NO_SUBSHELLS = (
    "this kernel has no subshells (ipykernel 7 has them), so messages from the notebook wait until "
    "the running cell ends: call the tool outside a running cell, or upgrade ipykernel"
)


def _route_to_sender(data: Any, default: Any) -> Any:
    """Keep the subshell the page sent on (see the module docstring)."""
    return default


class CommTransport:
    """:class:`~ws_jupyter.live.link.Transport` over a kernel comm (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._comm: Any = None
        self.link: FrontEndLink | None = None

    def announce(self, data: Mapping[str, Any]) -> None:
        from comm import create_comm

        comm: Any = create_comm(target_name=TARGET, data=dict(data))
        comm._reply_subshell_for = _route_to_sender
        comm.on_msg(self._on_msg)

        def closed(msg: Any) -> None:
            self._on_close(comm, msg)

        comm.on_close(closed)
        with self._lock:
            old, self._comm = self._comm, comm
        if old is not None:
            try:
                old.close()
            except Exception:
                pass

    def send(self, message: Mapping[str, Any]) -> None:
        with self._lock:
            comm = self._comm
        if comm is not None:
            comm.send(dict(message))

    def replies_blocked(self) -> str | None:
        # without subshells the page's messages are read by the main thread, between cells
        return _NO_SUBSHELLS if threading.current_thread() is threading.main_thread() else None

    def close(self) -> None:
        with self._lock:
            comm, self._comm = self._comm, None
        if comm is not None:
            try:
                comm.close()
            except Exception:
                pass

    def _on_msg(self, msg: Mapping[str, Any]) -> None:
        link = self.link
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if link is not None and isinstance(content, Mapping):
            link.receive(content.get("data"))

    def _on_close(self, comm: Any, msg: Any) -> None:
        with self._lock:
            current = comm is self._comm
            if current:
                self._comm = None
        if current and self.link is not None:
            self.link.channel_closed(
                "the notebook page closed the channel (is the ws-jupyter JupyterLab extension installed "
                "and enabled? `jupyter labextension list` shows it)"
            )


def start(session: WsSession, shell: Any) -> FrontEndLink | None:
    """The session's live link (None outside a Jupyter kernel): made once, announced at once,
    attached to the session workspace as it changes, closed with the session."""
    if getattr(shell, "kernel", None) is None:
        return None
    transport = CommTransport()
    link = FrontEndLink(transport)
    transport.link = link
    session.live = link

    def follow(previous: Any, current: Any) -> None:
        if previous is not None:
            detach(previous, link)
        if current is not None:
            attach(current, link)
            if not link.status().connected:
                link.announce()

    session.on_change(follow)
    if session.workspace is not None:
        follow(None, session.workspace)
    session.track(link.close)
    link.announce()
    return link


def link_of_session(session: WsSession) -> FrontEndLink | None:
    """The live link the extension made for this session (None outside a kernel)."""
    link = getattr(session, "live", None)
    return link if isinstance(link, FrontEndLink) else None
