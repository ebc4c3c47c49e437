"""Per-request data handed to resolvers, tool configuration functions and hooks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

__all__ = ["RequestContext", "client_context", "client_label"]

#: Keys naming an outside client (an MCP client over HTTP) and its session: the activity feed,
#: ``%ws ps`` and job listings show them.
CLIENT_KEY = "mcp_client"
SESSION_KEY = "mcp_session"


class RequestContext(MutableMapping[str, Any]):
    """A small mapping describing one request (user id, thread id, tenant...).

    It is hashable *by identity*: two contexts with equal contents are still two requests, so
    per-request memoisation (resolved sandboxes, read records) never leaks between them.

    >>> ctx = RequestContext({"user-id": "alice"})
    >>> ctx["user-id"]
    'alice'
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self._data: dict[str, Any] = dict(data or {}, **kwargs)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def to_dict(self) -> dict[str, Any]:
        return dict(self._data)

    def __repr__(self) -> str:
        return f"RequestContext({self._data!r})"


def client_context(name: str, session: str = "") -> RequestContext:
    """The request context of an outside client's calls: ``user_id`` is the client (its jobs),
    ``thread_id`` its session (its read records are its own)."""
    return RequestContext(
        {"user_id": f"mcp:{name}", "thread_id": session or "-", CLIENT_KEY: name, SESSION_KEY: session}
    )


def client_label(request_context: Any) -> str | None:
    """``"claude-code (session 1a2b3c4d)"`` for a call of an outside client, else None."""
    try:
        name = request_context.get(CLIENT_KEY) if request_context is not None else None
    except (AttributeError, TypeError):
        return None
    if not name:
        return None
    session = request_context.get(SESSION_KEY) or ""
    return f"{name} (session {str(session)[:8]})" if session else str(name)
