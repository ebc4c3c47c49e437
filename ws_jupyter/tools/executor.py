"""Where async tool calls run: a bounded thread pool of their own, never the event loop's default.

``Tool.arun`` (and the MCP server, and the framework adapters) run the blocking ``Tool.run`` in
this pool. The event loop's default executor is small (``min(32, cpus + 4)`` threads: 6 on two
cores) and is what the application's own code uses — DNS lookups of its LLM client
(``loop.getaddrinfo``), ``asyncio.to_thread`` — so tool calls that wait for a command must not
fill it. The pool has ``WS_JUPYTER_TOOL_THREADS`` threads (default 32): ten concurrent
``sleep 1`` commands take about a second, and calls beyond the limit wait their turn.

Cancelling the awaiting task sets the call's ``abort`` event, which kills a foreground command;
the await then gives the tool a few seconds to finish (so the command is gone when the
cancellation completes) before it re-raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["CANCEL_GRACE", "run_abortable", "tool_executor", "tool_threads"]

T = TypeVar("T")

#: Seconds a cancelled call waits for the tool to stop what it started before re-raising.
CANCEL_GRACE = 5.0

_lock = threading.Lock()
_executor: list[ThreadPoolExecutor] = []


def tool_threads() -> int:
    """The pool size: ``WS_JUPYTER_TOOL_THREADS`` (a positive integer), else 32."""
    raw = os.environ.get("WS_JUPYTER_TOOL_THREADS", "")
    try:
        n = int(raw)
    except ValueError:
        return 32
    return n if n > 0 else 32


def tool_executor() -> ThreadPoolExecutor:
    """The process-wide pool for tool calls (created on first use)."""
    with _lock:
        if not _executor:
            _executor.append(ThreadPoolExecutor(max_workers=tool_threads(), thread_name_prefix="ws-tool"))
        return _executor[0]


async def run_abortable(fn: Callable[[], T], abort: threading.Event, *, grace: float = CANCEL_GRACE) -> T:
    """Run ``fn()`` in the tool pool; when the awaiting task is cancelled, set ``abort``, wait up to
    ``grace`` seconds for ``fn`` to return, then re-raise the cancellation."""
    loop = asyncio.get_running_loop()
    future = asyncio.wrap_future(tool_executor().submit(fn), loop=loop)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        abort.set()
        await _settle(future, grace)
        raise


async def _settle(future: asyncio.Future[Any], grace: float) -> None:
    """Wait for an aborted call to end, in a shielded scope: anyio (the MCP server's runtime)
    re-delivers a cancellation until the task leaves the cancelled scope."""
    import anyio  # a dependency of mcp

    with contextlib.suppress(Exception), anyio.move_on_after(grace, shield=True):
        await asyncio.shield(future)
