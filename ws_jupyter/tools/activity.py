"""Tool activity: a live feed of agent tool calls, and the approval broker.

Each workspace has one :class:`ToolActivity` (``tool_activity(workspace)``). Tool runs publish
events to it; anything may subscribe — the notebook's ``ToolActivity`` widget does, and so can a
logger or a test. It has no Jupyter dependency: events are plain frozen values and callbacks run
on the thread of the tool call (keep them short; hand heavy work to another thread).

Events (``ToolActivityEvent.kind``):

* ``"started"`` — a call began (after argument validation);
* ``"approval_requested"`` — the call waits for a human: ``approve(call_id)`` or ``deny(call_id)``;
  ``details`` says what the call would touch, when its tool says (a shared variable's type
  and size, and the agent's reason, for ``user_variable_request``);
* ``"approval_resolved"`` — ``approved`` is True or False;
* ``"finished"`` — ``output`` (the text the model sees), ``is_error``, ``duration_ms`` (the call's
  own time: a wait for approval is not counted), ``blocked`` (a ``before_tool_call`` hook stopped
  the call; ``output`` is what the hook said), ``cancelled`` (the call's abort event was set — the
  user pressed stop, an MCP client cancelled — or the calling thread was interrupted: every call
  that started gets its ``finished``, however it ended).

Approval: when a call needs approval and the tools config has no ``approver`` function, the call
is put on hold here *if an interactive approver is attached* (``attach_approver()``, e.g. by the
widget while it is displayed); it then waits until ``approve``/``deny`` (or ``approval_timeout``,
or the call's abort event) — a timeout or abort counts as a refusal. With neither an approver
function nor an attached approver, the call is refused at once with a message saying how to
configure one. How the widget uses it::

    activity = tool_activity(ws)
    detach = activity.attach_approver()          # while the Approve/Deny panel is shown
    unsubscribe = activity.subscribe(on_event)   # on_event(ToolActivityEvent) updates the log
    ...                                          # button handlers:
    activity.approve(event.call_id)              # or activity.deny(event.call_id)
    detach(); unsubscribe()                      # when the widget closes

``recent()`` returns the last events (bounded history) so a widget opened later can show them.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from .._per_workspace import PerWorkspace

if TYPE_CHECKING:
    from ..request_context import RequestContext
    from ..workspace import Workspace

__all__ = ["PendingApproval", "ToolActivity", "ToolActivityEvent", "tool_activity"]

log = logging.getLogger(__name__)

EventKind = Literal["started", "approval_requested", "approval_resolved", "finished"]
_HISTORY = 500
_ids = itertools.count(1)


@dataclass(frozen=True)
class ToolActivityEvent:
    kind: EventKind
    call_id: str
    tool_name: str
    workspace_tool_name: str
    input: Mapping[str, Any]
    timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    tool_call_id: str | None = None
    output: str | None = None
    is_error: bool = False
    duration_ms: float | None = None
    approved: bool | None = None
    blocked: bool = False
    cancelled: bool = False
    details: str | None = None
    #: The request context the call came with (which conversation and turn: automatic
    #: checkpoints tell agent turns apart by it), or None.
    request_context: RequestContext | None = field(default=None, compare=False, repr=False)


@dataclass
class PendingApproval:
    """A call on hold until someone approves or denies it."""

    call_id: str
    tool_name: str
    workspace_tool_name: str
    input: Mapping[str, Any]
    created_at: datetime
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    decision: bool | None = None
    details: str | None = None


class ToolActivity:
    """Publish/subscribe of tool call events plus pending approvals (thread-safe)."""

    def __init__(self, history: int = _HISTORY) -> None:
        self._lock = threading.Lock()
        self._subscribers: tuple[Callable[[ToolActivityEvent], object], ...] = ()
        self._approvers = 0
        self._pending: dict[str, PendingApproval] = {}
        self._history: deque[ToolActivityEvent] = deque(maxlen=history)

    # --- feed -----------------------------------------------------------------------------------

    @staticmethod
    def new_call_id() -> str:
        return f"call-{next(_ids)}"

    def subscribe(self, callback: Callable[[ToolActivityEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event from now on; returns an unsubscribe function."""
        if not callable(callback):
            raise TypeError("callback must be callable")
        with self._lock:
            self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            with self._lock:
                subs = list(self._subscribers)
                with contextlib.suppress(ValueError):
                    subs.remove(callback)
                self._subscribers = tuple(subs)

        return unsubscribe

    def publish(self, event: ToolActivityEvent) -> None:
        with self._lock:
            self._history.append(event)
            subscribers = self._subscribers
        for callback in subscribers:
            try:
                callback(event)
            except Exception:  # a broken subscriber must not break the agent
                log.exception("tool activity subscriber failed")

    def recent(self, n: int | None = None) -> list[ToolActivityEvent]:
        """The most recent events, oldest first."""
        with self._lock:
            items = list(self._history)
        return items if n is None else items[-n:]

    # --- approvals --------------------------------------------------------------------------------

    def attach_approver(self) -> Callable[[], None]:
        """Announce an interactive approver (calls needing approval will wait for it).

        Returns ``detach()``; when the last approver detaches, waiting calls are refused.
        """
        with self._lock:
            self._approvers += 1
        detached = False

        def detach() -> None:
            nonlocal detached
            with self._lock:
                if detached:
                    return
                detached = True
                self._approvers -= 1
                orphaned = list(self._pending.values()) if self._approvers == 0 else []
            for pending in orphaned:
                self._resolve(pending.call_id, False)

        return detach

    @property
    def has_approver(self) -> bool:
        return self._approvers > 0

    def pending(self) -> list[PendingApproval]:
        with self._lock:
            return list(self._pending.values())

    def approve(self, call_id: str) -> bool:
        """Let a waiting call run. False when no such call is waiting."""
        return self._resolve(call_id, True)

    def deny(self, call_id: str) -> bool:
        """Refuse a waiting call (the model sees ``Tool call refused by user.``)."""
        return self._resolve(call_id, False)

    def _resolve(self, call_id: str, decision: bool) -> bool:
        with self._lock:
            pending = self._pending.get(call_id)
            if pending is None or pending.decision is not None:
                return False
            pending.decision = decision
        pending._done.set()
        return True

    def request_approval(
        self,
        call_id: str,
        tool_name: str,
        workspace_tool_name: str,
        args: Mapping[str, Any],
        *,
        tool_call_id: str | None = None,
        timeout: float | None = None,
        abort: threading.Event | None = None,
        details: str | None = None,
    ) -> bool:
        """Block until the call is approved (True) or denied/timed out/aborted (False)."""
        pending = PendingApproval(
            call_id, tool_name, workspace_tool_name, dict(args), datetime.now(timezone.utc), details=details
        )
        with self._lock:
            self._pending[call_id] = pending
        self.publish(
            ToolActivityEvent(
                "approval_requested",
                call_id,
                tool_name,
                workspace_tool_name,
                dict(args),
                tool_call_id=tool_call_id,
                details=details,
            )
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not pending._done.is_set():
                if abort is not None and abort.is_set():
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                if not self.has_approver:
                    break
                pending._done.wait(0.05 if abort is not None or deadline is not None else 0.25)
        finally:
            with self._lock:
                self._pending.pop(call_id, None)
                decision = bool(pending.decision)
        self.publish(
            ToolActivityEvent(
                "approval_resolved",
                call_id,
                tool_name,
                workspace_tool_name,
                dict(args),
                tool_call_id=tool_call_id,
                approved=decision,
            )
        )
        return decision


_registry: PerWorkspace[ToolActivity] = PerWorkspace()


def tool_activity(workspace: Workspace) -> ToolActivity:
    """The activity feed of ``workspace`` (created on first use, lives as long as the workspace)."""
    return _registry.get_or_make(workspace, ToolActivity)
