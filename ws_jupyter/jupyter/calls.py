"""One tool call run as an agent would, and what the activity feed said about it.

``%ws call`` and the ``ToolCallPanel`` show a call's outcome. The tool's output alone does not say
how long the call itself took (a wait for approval is not run time), that a ``before_tool_call``
hook stopped it (a hook's refusal may read like a normal output) or that it was cancelled, so
these come from the call's ``finished`` event in the workspace's activity feed.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["CallOutcome", "new_call_tag", "run_observed"]

_tags = itertools.count(1)


def new_call_tag() -> str:
    """A ``tool_call_id`` that picks this call's events out of the feed."""
    return f"ws-call-{next(_tags)}"


@dataclass(frozen=True)
class CallOutcome:
    output: Any  # what Tool.run returned
    seconds: float  # the call's own time (without a wait for approval)
    blocked: bool  # a before_tool_call hook stopped it
    cancelled: bool = False  # its abort event was set (the stop button) before it ended


def run_observed(
    workspace: Any,
    tool: Any,
    arguments: dict[str, Any],
    *,
    tag: str | None = None,
    approved: bool | None = None,
    abort: threading.Event | None = None,
) -> CallOutcome:
    """Runs ``tool`` (``Tool.run``) and reads its ``finished`` event; ``tag``: its ``tool_call_id``;
    ``abort``: set, it cancels the call (kills its command, interrupts its kernel code)."""
    from .. import ToolCallContext, tool_activity

    tag = tag or new_call_tag()
    finished: list[Any] = []
    lock = threading.Lock()

    def on_event(event: Any) -> None:
        if event.kind == "finished" and event.tool_call_id == tag:
            with lock:
                finished.append(event)

    unsubscribe = tool_activity(workspace).subscribe(on_event)
    started = time.perf_counter()
    try:
        output = tool.run(arguments, ToolCallContext(tool_call_id=tag, abort=abort), approved=approved)
    finally:
        elapsed = time.perf_counter() - started
        unsubscribe()
    with lock:
        event = finished[-1] if finished else None
    if event is None or event.duration_ms is None:  # a tool outside the workspace's runner
        return CallOutcome(output, elapsed, False, abort is not None and abort.is_set())
    return CallOutcome(output, event.duration_ms / 1000, bool(event.blocked), bool(event.cancelled))
